"""RulesConfig validation (blot_env/rules_config.py, rules.md 8): types, ranges, literal sets."""

from __future__ import annotations

import pytest

from blot_env.env import raw_env
from blot_env.errors import ConfigError
from blot_env.rules_config import KNOBS, PRESETS, RulesConfig, make_rules


@pytest.mark.parametrize("knob, value", [
    ("target", "abc"), ("target", 1.5), ("target", True), ("hand_size", True), ("bid_min", "8"),
    ("short_deck", 1), ("allow_nt", "yes"), ("taker_ge", None), ("declarations", 1), ("preset", 3),
    ("declarations", "sometimes"), ("kaput_bid", "maybe"), ("num_players", 3), ("num_players", "4"),
])
def test_wrong_type_or_value_names_the_knob(knob, value):
    with pytest.raises(ConfigError, match=knob):
        RulesConfig(**{knob: value})


@pytest.mark.parametrize("knob, value", [
    ("target", 0), ("target", -151), ("bid_min", 0), ("bid_step", 0), ("hand_size", 0), ("num_tricks", 0),
    ("auction_end_passes", 0), ("contra_end_passes", 0), ("capot_tp", -1),
])
def test_out_of_range_values_are_refused(knob, value):
    with pytest.raises(ConfigError, match=knob):
        make_rules("bazar", **{knob: value})


def test_every_preset_is_valid_and_unknown_knobs_are_refused():
    for name, cfg in PRESETS.items():
        assert cfg.preset == name
        assert RulesConfig(**{k: getattr(cfg, k) for k in KNOBS}) == cfg
    with pytest.raises(ConfigError, match="unknown rules knob") as ei:
        make_rules("bazar", no_such_knob=1)
    msg = str(ei.value)
    assert "'no_such_knob'" in msg
    knobs = msg.split("the knobs are: ")[1].split(" (")[0].split(", ")
    assert knobs == [k for k in KNOBS if k != "preset"]  # the preset is no knob to list
    assert "bazar-app" in msg.split("chosen by name")[1]
    assert make_rules("bazar", capot_tp=0).capot_tp == 0


def test_env_applies_overrides_on_top_of_a_rules_value():
    assert raw_env(rules=PRESETS["bazar"], target=5).cfg.target == 5
    with pytest.raises(ConfigError, match="target"):
        raw_env(rules=PRESETS["bazar"], target="abc")
    with pytest.raises(ConfigError):
        raw_env(rules="bazar")


@pytest.mark.parametrize(("knobs", "shown"), [
    ({"bid_min": 9, "bid_max": 5}, "bid_min=9, bid_max=5"),
    ({"bid_min": 20, "bid_max": 10, "bid_step": 2}, "bid_min=20, bid_max=10, bid_step=2"),
])
def test_a_bad_bid_ladder_names_its_knobs(knobs, shown):
    with pytest.raises(ConfigError, match=f"bad bid ladder: {shown}"):
        make_rules("bazar", **knobs)
