"""blot_env.table: the snapshots every picture of the table is drawn from."""

from __future__ import annotations

import json

import numpy as np
import pytest

from blot_env.engine import apply_action, deal_random, is_terminal, legal_actions
from blot_env.errors import RecordError
from blot_env.record import initial_state, make_record
from blot_env.rules_config import PRESETS, make_rules
from blot_env.table import record_frames, table_snapshot


def _random_record(preset: str, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    s = deal_random(make_rules(preset), rng, seed % make_rules(preset).num_players)
    while not is_terminal(s):
        legal = legal_actions(s)
        s = apply_action(s, legal[int(rng.integers(len(legal)))])
    return make_record(s)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_frames_follow_the_record_and_hide_other_hands(preset):
    rec = _random_record(preset, 3)
    n = make_rules(preset).num_players
    frames = record_frames(rec)
    assert len(frames) == len(rec["actions"]) + 1
    json.dumps(frames)  # JSON types only
    assert frames[-1]["result"] == rec["result"] and frames[-1]["phase"] == "done"
    assert [f["last_action"]["action"] for f in frames[1:]] == rec["actions"]
    assert set(frames[0]["hands"][0]) == set(rec["hands"][0].split())  # every hand is shown
    for seat in range(n):
        for f in record_frames(rec, seat)[::5]:
            assert all((h is None) == (s != seat) for s, h in enumerate(f["hands"]))
            assert f["legal"] == [] or f["to_act"] == seat


def test_trick_and_last_trick():
    rec = _random_record("bazar", 5)
    frames = record_frames(rec)
    plays = [a.split()[1] for a in rec["actions"] if a.startswith("play ")]
    done = frames[-1]
    assert [c["card"] for c in done["last_trick"]["cards"]] == plays[-4:] and done["trick"]["cards"] == []
    assert sum(done["tricks"]) == 8 or rec["result"]["contract"]["bid"].startswith("bid kaput")


def test_bad_observer_and_record():
    rec = _random_record("duel", 1)
    with pytest.raises(ValueError, match=r"observer must be a seat 0\.\.1"):
        table_snapshot(initial_state(rec), 2)
    with pytest.raises(RecordError, match='action 0 "play 7C" by seat'):
        record_frames(rec | {"actions": ["play 7C"]})
