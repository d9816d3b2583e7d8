"""Differential test of the batched engine against the reference engine.

Every row of a :class:`BatchedEngine` is mirrored by a reference :class:`State` built from
the same cards (``engine.new_deal`` on the row's dealt hands). At every step, for every
row: the acting seat, the int8 action mask, the observation (every kind), and the whole row
(``convert.from_state``) must equal the reference; when a deal ends, the done flag, the
per-seat rewards and the result (``scoring.score_deal``) must too. Actions are drawn from a
block-weighted random policy that reaches contra, recontra, kaput, kaput+N, the manual
declaration protocol, capots and early kaput stops; for bazar the test asserts that each of
those phases occurred.

``BLOT_DIFF_DEALS`` (default 1000) sets the deals per preset for the observation kind (a quarter
of it for the information state and for each knob variant).
"""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest

from blot_env import PRESETS
from blot_env.batched import _layout as L
from blot_env.batched.convert import from_state
from blot_env.batched.engine import BatchedEngine
from blot_env.engine import apply_action, current_seat, deal_result, is_terminal, legal_mask, new_deal
from blot_env.observation import ObservationEncoder
from blot_env.view import seat_view

DEALS = int(os.environ.get("BLOT_DIFF_DEALS", "1000"))
#: relative weight of choosing an action of each block (then uniform inside the block)
WEIGHTS = {"PASS": 3.0, "CONTRA": 1.0, "RECONTRA": 2.0, "BID": 1.5, "KAPUT": 0.2, "KAPUT_PLUS": 0.5,
           "REVEAL": 3.0, "CONCEDE": 1.0}


def _reference_deal(eng: BatchedEngine, b: int):
    r = eng.S[b]
    cfg = eng.cfg
    n = cfg.num_players
    hands = [int(h) for h in r[L.START_HANDS:L.START_HANDS + n]]
    stock = [int(c) for c in r[L.STOCK:L.STOCK + int(r[L.NSTOCK])]]
    piles = None
    if r[L.HAS_PILES]:
        piles = tuple(tuple(int(c) for c in r[L.PILES + 16 * s:L.PILES + 16 * s + 16]) for s in range(n))
    return new_deal(cfg, int(r[L.DEALER]), hands, stock, piles)


def _choose(eng: BatchedEngine, mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    lay = eng.layout
    groups: dict[str, list[int]] = {}
    for a in legal:
        groups.setdefault(lay.block_of[a], []).append(int(a))
    names = list(groups)
    w = np.array([WEIGHTS.get(g, 1.0) for g in names])
    g = names[rng.choice(len(names), p=w / w.sum())]
    if g == "ANNOUNCE" and rng.random() < 0.8:
        return groups[g][-1]  # announce the highest class held: reaches the height exchange
    return groups[g][rng.integers(len(groups[g]))]


def _run(preset: str, kind: str, deals: int, rows: int = 16, seed: int = 7, **overrides) -> Counter:
    eng = BatchedEngine(preset, num_envs=rows, obs_kind=kind, seed=seed, **overrides)
    enc = ObservationEncoder(eng.cfg, kind)
    lay = eng.layout
    out = eng.reset(seed)
    refs = [_reference_deal(eng, b) for b in range(rows)]
    rng = np.random.default_rng(seed)
    seen: Counter = Counter()
    finished = 0
    while finished < deals:
        actions = np.zeros(rows, dtype=np.int64)
        for b in range(rows):
            s = refs[b]
            seat = current_seat(s)
            assert out.seat[b] == seat, (preset, b, "seat")
            assert np.array_equal(out.action_mask[b], legal_mask(s)), (preset, b, "mask")
            assert np.array_equal(out.obs[b], enc.encode(seat_view(s, seat))), (preset, kind, b, "obs")
            assert np.array_equal(eng.S[b], from_state(s)), (preset, b, _diff_fields(eng.S[b], from_state(s)))
            actions[b] = _choose(eng, out.action_mask[b], rng)
        out = eng.step(actions)
        for b in range(rows):
            a = int(actions[b])
            seen[lay.block_of[a]] += 1
            s = apply_action(refs[b], a)
            assert bool(out.done[b]) == is_terminal(s), (preset, b, "done")
            if is_terminal(s):
                res = deal_result(s)
                got = eng.deal_result(b)
                assert got == res, (preset, b, got, res)
                for seat in range(eng.num_players):
                    t = seat % 2
                    assert out.reward[b, seat] == res.score[t] - res.score[1 - t]
                if res.contract is not None:
                    seen["capot"] += max(res.tricks) == eng.cfg.num_tricks
                    seen["early_stop"] += s.trick_no < eng.cfg.num_tricks
                    seen["made"] += bool(res.made)
                else:
                    seen["passed_out"] += 1
                finished += 1
                s = _reference_deal(eng, b)
            refs[b] = s
    return seen


def _diff_fields(a: np.ndarray, b: np.ndarray) -> list[str]:
    return [name for name, (o, k) in L.FIELDS.items() if not np.array_equal(a[o:o + k], b[o:o + k])]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_batched_matches_reference_observation(preset):
    seen = _run(preset, "observation", DEALS)
    assert seen["PLAY"] > 0
    if preset == "bazar":
        for phase in ("CONTRA", "RECONTRA", "KAPUT", "KAPUT_PLUS", "HEIGHT", "CONCEDE", "REVEAL", "SHOW", "NOSHOW",
                      "capot", "early_stop", "passed_out"):
            assert seen[phase] > 0, f"the random policy never reached {phase}: {seen}"


@pytest.mark.parametrize("preset", list(PRESETS))
def test_batched_matches_reference_information_state(preset):
    _run(preset, "information_state", max(DEALS // 4, 50), seed=11)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_batched_matches_reference_observation_voids(preset):
    _run(preset, "observation_voids", max(DEALS // 4, 50), seed=13)


#: knob combinations outside the presets (rules.md 8): the engine branches on knobs, not names
VARIANTS = [
    ("bazar", {"long_run": "100", "carre_table": "classic", "declaration_tie": "nobody", "undertrump": "forced"}),
    ("bazar", {"kaput_bid": "terminal", "auction_end_passes": 3, "declarations": "auto", "auto_reveal": "end"}),
    ("duel", {"jack_forces_dealer": False, "duel_open_card_choice": False, "taker_ge": True}),
    ("duel-app", {"declarations": "manual", "carre_table": "armenian", "allow_nt": True}),
    ("open", {"declarations": "auto", "open_complement": False}),
    ("belote", {"declaration_tie": "trick1_order", "partner_exemption": False}),
]


@pytest.mark.parametrize(("preset", "overrides"), VARIANTS)
def test_batched_matches_reference_on_knob_variants(preset, overrides):
    seen = _run(preset, "observation", max(DEALS // 4, 50), seed=5, **overrides)
    assert seen["PLAY"] > 0
