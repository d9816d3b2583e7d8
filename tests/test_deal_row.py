"""The deal interface (blot_env/deal.py): the compiled DealRow against the ReferenceDeal.

Both implementations play the same random deals of every preset: at every step the seat to
act, every seat's observation and mask, the state and the errors of illegal actions must be
identical, and so must the results; copies, snapshots, ``load``, ``apply`` and ``replay``
continue the same deal.
"""

from __future__ import annotations

import numpy as np
import pytest

from blot_env import PRESETS, make_rules
from blot_env.batched.deal_row import DealRow, lay_cards
from blot_env.deal import ReferenceDeal, make_deal
from blot_env.engine import apply_action, deal_random, is_terminal
from blot_env.errors import ConfigError, IllegalActionError


def _pick(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def _same_everywhere(fast: DealRow, ref: ReferenceDeal, n: int, where) -> None:
    assert fast.seat == ref.seat, where
    for s in range(n):
        for with_mask in (True, False):
            fo, fm = fast.observe(s, with_mask)
            ro, rm = ref.observe(s, with_mask)
            assert fo.dtype == np.float32 and fm.dtype == np.int8
            assert np.array_equal(fo, ro), (where, s)
            assert np.array_equal(fm, rm), (where, s, with_mask)


@pytest.mark.parametrize("match", [False, True])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_compiled_deal_matches_the_reference(preset, match):
    cfg = make_rules(preset)
    n = cfg.num_players
    fast, ref = DealRow(cfg, match=match), ReferenceDeal(cfg, match=match)
    rng = np.random.default_rng(5)
    for k in range(4):
        totals = (int(rng.integers(0, 200)), int(rng.integers(0, 200))) if match else None
        state = deal_random(cfg, rng, k % n)
        for d in (fast, ref):
            d.set_match(totals)
            assert d.start(state) >= 0 and d.result() is None
        steps = 0
        while fast.seat >= 0:
            _same_everywhere(fast, ref, n, (preset, k, steps))
            if steps % 7 == 3:
                assert fast.state() == ref.state()
            if steps % 5 == 1:  # an illegal action: the same error, nothing changes
                _, mask = fast.observe(fast.seat)
                bad = int(np.flatnonzero(mask == 0)[0])
                errs = []
                for d in (fast, ref):
                    before = d.state()
                    with pytest.raises(IllegalActionError) as ei:
                        d.step(bad)
                    assert d.state() == before
                    errs.append(str(ei.value))
                assert errs[0] == errs[1]
            a = _pick(fast.observe(fast.seat)[1], rng)
            assert fast.step(a) == ref.step(np.int64(a))
            steps += 1
        assert ref.seat == -1 and fast.over
        assert list(fast.history) == list(ref.history)
        assert fast.state() == ref.state() and is_terminal(fast.state())
        assert fast.result() == ref.result() is not None
        _same_everywhere(fast, ref, n, (preset, k, "end"))


@pytest.mark.parametrize("preset", ["bazar", "duel", "open", "belote"])
def test_copies_snapshots_and_replays_continue_the_same_deal(preset):
    cfg = make_rules(preset)
    rng = np.random.default_rng(2)
    state = deal_random(cfg, rng, 1)
    row = make_deal(cfg, engine="compiled")
    assert isinstance(row, DealRow)
    row.start(state)
    s = state
    for _ in range(12):
        a = _pick(row.observe(row.seat)[1], rng)
        row.step(a)
        s = apply_action(s, a)
    clone = row.copy()
    snap = row.snapshot()
    ref = ReferenceDeal(cfg)
    ref.restore(snap)  # a compiled snapshot restores into the reference deal
    loaded = DealRow(cfg)
    loaded.load(s)
    restored = DealRow(cfg)
    restored.restore(ref.snapshot())  # and a reference snapshot into a compiled one
    replayed = DealRow(cfg)
    cards = lay_cards(state.start_hands, state.stock, state.piles)
    assert replayed.replay(state.dealer, cards, np.array(s.history)) == len(s.history)
    partial = DealRow(cfg)
    partial.start(state)
    assert partial.apply(np.array(s.history)) == len(s.history)
    others = [clone, ref, loaded, restored, replayed, partial]
    for d in others:
        assert d.state() == s and d.seat == row.seat
    while row.seat >= 0:  # the original goes on; the copies follow with the same actions
        a = _pick(row.observe(row.seat)[1], rng)
        seat = row.step(a)
        for d in others:
            assert d.step(a) == seat
            assert np.array_equal(d.observe(max(seat, 0))[0], row.observe(max(seat, 0))[0])
    for d in others:
        assert d.result() == row.result() is not None
    assert clone.history == row.history and clone.row is not row.row


def test_replay_stops_at_the_first_illegal_action():
    cfg = make_rules("bazar")
    rng = np.random.default_rng(0)
    state = deal_random(cfg, rng, 0)
    row = DealRow(cfg)
    row.start(state)
    legal = [_pick(row.observe(row.seat)[1], rng)]
    row.step(legal[0])
    _, mask = row.observe(row.seat)
    illegal = int(np.flatnonzero(mask == 0)[0])
    actions = np.array(legal + [illegal, legal[0]])
    again = DealRow(cfg)
    cards = lay_cards(state.start_hands, state.stock)
    assert again.replay(state.dealer, cards, actions) == 1
    assert again.history == legal and again.state() == row.state()
    assert again.result() is None and not again.over


def test_engine_choice_and_errors():
    cfg = make_rules("bazar")
    assert make_deal(cfg).engine == "compiled"
    assert make_deal(cfg, engine="reference").engine == "reference"
    big = make_rules("bazar", auction_end_passes=10)  # an auction that may outgrow a row
    assert make_deal(big).engine == "reference"
    with pytest.raises(ConfigError, match="compiled deal row cannot hold"):
        make_deal(big, engine="compiled")
    with pytest.raises(ConfigError, match="engine must be one of"):
        make_deal(cfg, engine="fast")
    with pytest.raises(ConfigError, match="obs_kind"):
        DealRow(cfg, obs_kind="pixels")
    row = DealRow(cfg)
    row.start(deal_random(cfg, np.random.default_rng(0), 0))
    with pytest.raises(IllegalActionError, match="an action id is required"):
        row.step(None)
    with pytest.raises(IllegalActionError, match="integer action id"):
        row.step(1.5)
