"""What the fuzzer found (tests/oracles/fuzz.py, scripts/fuzz.py), one test per fix: each input
below used to end in a traceback from deep inside, a silent wrong answer, or a different
answer of the two replay engines; now it gets a clear error naming the input."""

from __future__ import annotations

import gzip
import io
import json
import pickle
import re

import numpy as np
import pytest
from conftest import REPO

from blot_env.errors import ConfigError, RecordError
from blot_env.record import load_records, replay_record
from blot_env.replay import CompiledReplay, replay_file
from blot_env.rules_config import make_rules, with_overrides

GOLDEN = REPO / "tests" / "golden" / "a23_10S_failed.json"


def _golden() -> dict:
    return load_records(GOLDEN)[0]


# --------------------------------------------------------------------------- deal records


@pytest.mark.parametrize("actions", ["", {}, "pass pass"])
def test_actions_that_are_no_list_are_refused_by_both_engines(actions, tmp_path):
    """The compiled replay iterated a string or an object as if it were the list of actions."""
    rec = dict(_golden(), actions=actions)
    with pytest.raises(RecordError, match='field "actions": expected a list'):
        replay_record(rec)
    with pytest.raises(RecordError, match='field "actions": expected a list'):
        CompiledReplay().replay(rec)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    errs = []
    for engine in ("compiled", "reference"):
        err = io.StringIO()
        assert replay_file(str(path), io.StringIO(), err, engine=engine) == (1, 1)
        errs.append(err.getvalue())
    assert errs[0] == errs[1] and 'field "actions"' in errs[0]


@pytest.mark.parametrize(("knob", "value"), [("capot_tp", 10 ** 20), ("target", 2 ** 63), ("bid_max", 10 ** 7),
                                             ("auction_end_passes", 10 ** 4)])
def test_huge_knob_values_are_refused(knob, value):
    """A record with capot_tp = 10**20 overflowed the compiled engine's int64 knobs; bid_max =
    10**7 built a layout of tens of millions of actions."""
    with pytest.raises(ConfigError, match=f"rules knob {knob} must be <="):
        make_rules("bazar", **{knob: value})
    rec = dict(_golden(), rules={knob: value})
    for replay in (lambda r: replay_record(r), CompiledReplay().replay):
        with pytest.raises(RecordError, match=f'field "rules": rules knob {knob}'):
            replay(rec)


@pytest.mark.parametrize("overrides", [{1: 2, "x": 3}, {None: 1}, [("target", 301)], "target=301"])
def test_overrides_with_keys_that_are_no_knob_names_are_refused(overrides):
    """Keys of mixed types made sorted() raise TypeError; a non-mapping reached dataclasses.replace."""
    with pytest.raises(ConfigError, match=r"unknown rules knob|must be a mapping"):
        with_overrides(make_rules("bazar"), overrides)


@pytest.mark.parametrize("preset", [["bazar"], {"a": 1}, None, 3])
def test_a_preset_that_is_no_string_is_an_unknown_preset(preset):
    with pytest.raises(ConfigError, match="unknown preset"):
        make_rules(preset)


# --------------------------------------------------------------------------- Gymnasium env


@pytest.mark.parametrize("illegal_reward", [-1.0, None])
def test_gym_step_after_the_end_needs_a_reset(illegal_reward):
    """A step after the episode ended counted as a masked-out action (reward -1 again) instead
    of asking for a reset."""
    import gymnasium

    from blot_env.gym_env import BlotGymEnv

    env = BlotGymEnv("duel", illegal_reward=illegal_reward)
    env.reset(seed=1)
    done = False
    while not done:
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        done = term or trunc
    with pytest.raises(gymnasium.error.ResetNeeded, match="after the episode ended"):
        env.step(0)
    env.reset(seed=2)
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # playable again


def test_gym_masked_out_action_ends_the_episode_then_needs_a_reset():
    import gymnasium

    from blot_env.gym_env import BlotGymEnv

    env = BlotGymEnv("duel", illegal_reward=-1.0)
    env.reset(seed=1)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, term, _, info = env.step(bad)
    assert (reward, term, info) == (-1.0, True, {"illegal_action": True})
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(bad)


# --------------------------------------------------------------------------- training configs


def _config(tmp_path, text: bytes | str):
    path = tmp_path / "c.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_training_config_that_is_no_utf8_names_the_file(tmp_path):
    from agents.ppo.config import load_config

    path = _config(tmp_path, b"preset: bazar\nseed: \xff\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: not UTF-8 text \(byte 0xff"):
        load_config(path)


@pytest.mark.parametrize("text", ['seed: "\\U7fffffff"\n', 'seed: "\\Uffffffff"\n', "preset: [bazar\n"])
def test_training_config_yaml_errors_name_the_file(tmp_path, text):
    """PyYAML raises ValueError or OverflowError (not YAMLError) on an escape beyond Unicode."""
    from agents.ppo.config import load_config

    with pytest.raises(ConfigError, match=r"c\.yaml: not valid YAML"):
        load_config(_config(tmp_path, text))


@pytest.mark.parametrize("override", ["ppo.learning_rate=[1", "seed=@", "eval.split='", "seed=!!python/none",
                                      'seed="\\Uffffffff"'])
def test_override_whose_value_is_no_yaml_names_the_override(tmp_path, override):
    from agents.ppo.config import apply_overrides, load_config

    path = REPO / "configs" / "ppo_tiny.yaml"
    with pytest.raises(ConfigError, match=r"override .*: the value is not valid YAML"):
        load_config(path, [override])
    with pytest.raises(ConfigError, match=r"override .*: the value is not valid YAML"):
        apply_overrides(load_config(path), [override])


@pytest.mark.parametrize(("override", "match"), [
    ("ppo.ent_coef=.nan", r"ppo.ent_coef and ppo.vf_coef must be >= 0"),
    ("ppo.vf_coef=.nan", r"ppo.ent_coef and ppo.vf_coef must be >= 0"),
    ("ppo.ent_coef=.inf", r"ppo.ent_coef and ppo.vf_coef must be >= 0 and finite, got inf"),
    ("ppo.vf_coef=.inf", r"ppo.ent_coef and ppo.vf_coef must be >= 0 and finite, got .* and inf"),
    ("ppo.target_kl=.nan", r"ppo.target_kl must be positive or null, got nan"),
    ("pretrain.value_coef=.nan", r"pretrain.value_coef and pretrain.critic_warmup_updates must be >= 0"),
    (f"ppo.ent_coef={10 ** 400}", "ppo.ent_coef: .* too large for a float"),
    ("network.activation=[tanh]", "network.activation: expected one of"),
    ("network=0", "NetworkConfig: expected a mapping, got int"),
])
def test_bad_values_are_refused_naming_the_key(override, match):
    """NaN was accepted for four coefficients; 10**400 raised OverflowError; a list for a Literal
    knob raised 'unhashable type'; ``network: 0`` silently meant the defaults."""
    from agents.ppo.config import load_config

    with pytest.raises(ConfigError, match=match):
        load_config(REPO / "configs" / "ppo_tiny.yaml", [override])


@pytest.mark.parametrize("overrides", [[5], {1: 2}, {("a",): 1}])
def test_overrides_that_are_no_strings_are_refused(overrides):
    from agents.ppo.config import apply_overrides, load_config

    with pytest.raises(ConfigError, match="expected a 'key=value' string"):
        apply_overrides(load_config(REPO / "configs" / "ppo_tiny.yaml"), overrides)


def test_unknown_keys_of_mixed_types_are_listed(tmp_path):
    from agents.ppo.config import load_config

    with pytest.raises(ConfigError, match=r"unknown key\(s\) \[1, 'x'\]"):
        load_config(_config(tmp_path, "preset: bazar\n1: 2\nx: 3\n"))


# --------------------------------------------------------------------------- deal suites


def _suite_dir(tmp_path, name: str, raw: bytes):
    (tmp_path / name).write_bytes(raw)
    return tmp_path


@pytest.mark.parametrize(("name", "raw", "match"), [
    ("duel_dev.json", b"[{\"dealer\": 0, \xff", "duel_dev.json: not UTF-8 text"),
    ("duel_dev.json", b"[{\"dealer\": 0,", r"duel_dev.json: not valid JSON \(.* line 1 column"),
    ("duel_dev.json.gz", b"\x1f\x8b\x08\x00not gzip", "duel_dev.json.gz: not a readable gzip file"),
    ("duel_dev.json.gz", gzip.compress(b"[]")[:-6], "duel_dev.json.gz: not a readable gzip file"),
    ("duel_dev.json", b"{}", "duel_dev.json: expected a JSON list"),
])
def test_suite_file_errors_name_the_file(tmp_path, name, raw, match):
    from agents.eval.arena import load_suite

    with pytest.raises(ValueError, match=match):
        load_suite("duel", "dev", _suite_dir(tmp_path, name, raw))


@pytest.mark.parametrize(("deal", "field"), [
    ({"dealer": 0}, "hands"), ({"dealer": "0", "hands": []}, "dealer"), ({"dealer": [0], "hands": []}, "dealer"),
    ({"dealer": 0, "hands": "JH 9H"}, "hands"), ({"dealer": 0, "hands": [1, 2]}, "hands[0]"),
    ({"dealer": 1, "hands": ["JH"] * 2, "stock": 5}, "stock"),
])
def test_deal_state_names_the_bad_field(deal, field):
    """deal_state raised KeyError, TypeError or AttributeError (or int("x")'s ValueError)."""
    from agents.eval.arena import deal_state

    with pytest.raises(RecordError, match=re.escape(f'field "{field}')):
        deal_state(make_rules("duel"), deal)
    with pytest.raises(ValueError, match="must be an object"):
        deal_state(make_rules("duel"), ["dealer", 0])


# --------------------------------------------------------------------------- save files of board records


@pytest.fixture(scope="module")
def board_records():
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from oracles.fuzz import board_records

    return board_records()


def test_a_corrupt_record_in_the_middle_is_an_error_not_the_end(tmp_path, board_records):
    """A damaged record used to end the file there: open_save then cut off every record after it."""
    from agents.eval.board_pool import SaveFormatError, open_save, read_records

    first, second = (pickle.dumps(r) for r in board_records[:2])
    bad = bytearray(second)
    bad[2] = 0xFF  # an opcode that is no pickle opcode
    path = tmp_path / "s.pkl"
    path.write_bytes(first + bytes(bad) + first)
    with pytest.raises(SaveFormatError, match=rf"s\.pkl: record 1 \(from byte {len(first)}\) is corrupt"):
        read_records(path)
    with pytest.raises(SaveFormatError):
        open_save(path)
    assert path.read_bytes() == first + bytes(bad) + first  # left as it was


def test_a_record_cut_short_at_the_end_is_still_dropped(tmp_path, board_records):
    from agents.eval.board_pool import append_record, open_save, read_records

    whole = b"".join(pickle.dumps(r) for r in board_records[:2])
    path = tmp_path / "s.pkl"
    for cut in (1, 40, len(pickle.dumps(board_records[2])) - 1):
        path.write_bytes(whole + pickle.dumps(board_records[2])[:cut])
        recs, good = read_records(path)
        assert len(recs) == 2 and good == len(whole)
        f, _ = open_save(path)
        append_record(f, board_records[3])
        f.close()
        assert [r["index"] for r in read_records(path)[0]] == [r["index"] for r in board_records[:2]] + [
            board_records[3]["index"]]


@pytest.mark.parametrize(("field", "value"), [("board", None), ("board", (1, 2)), ("index", -1), ("index", "3"),
                                              ("agent", None), ("seed", True), ("cpu_seconds", "1"),
                                              ("timing", {}), ("weights", ("a",)), ("mixed", "no")])
def test_a_record_with_a_bad_field_names_it(tmp_path, board_records, field, value):
    """The league and eval_long.py read these fields: a record without them raised KeyError or
    AttributeError there, long after the file was read."""
    from agents.eval.board_pool import SaveFormatError, read_records

    path = tmp_path / "s.pkl"
    path.write_bytes(pickle.dumps(board_records[0]) + pickle.dumps(dict(board_records[1], **{field: value})))
    with pytest.raises(SaveFormatError, match=rf"s\.pkl: record 1: field '{field}' must be"):
        read_records(path)


def test_a_board_whose_result_lost_a_field_is_refused(tmp_path, board_records):
    from dataclasses import replace

    from agents.eval.board_pool import SaveFormatError, read_records

    rec = board_records[0]
    table = rec["board"].tables[0]
    broken = object.__new__(type(table.result))
    object.__setattr__(broken, "contract", None)  # no score, tricks, ...
    board = replace(rec["board"], tables=(replace(table, result=broken), *rec["board"].tables[1:]))
    path = tmp_path / "s.pkl"
    path.write_bytes(pickle.dumps(dict(rec, board=board)))
    with pytest.raises(SaveFormatError, match="field 'board' must be a BoardResult"):
        read_records(path)


def test_a_json_write_that_fails_leaves_the_old_file(tmp_path):
    """play's ``Game.save`` and blot-eval's league JSON wrote in place: a stop or an error while
    writing left half a file. agents/files.py writes beside it and renames."""
    from agents.files import write_json_atomic

    out = tmp_path / "sub" / "report.json"
    assert write_json_atomic(out, {"mean": 1.5}) == out
    assert json.loads(out.read_text(encoding="utf-8")) == {"mean": 1.5}
    with pytest.raises(TypeError):
        write_json_atomic(out, {"mean": object()})
    assert json.loads(out.read_text(encoding="utf-8")) == {"mean": 1.5}
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.json"]
    write_json_atomic(out, {"x": {1, 2}}, default=sorted)
    assert json.loads(out.read_text(encoding="utf-8")) == {"x": [1, 2]}
