"""PIMC agents (agents/search/pimc.py): registry names, legal play in every preset, the time
budget, and the auction on the bazar ladder."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

from agents.baselines.random_agent import RandomAgent
from agents.eval.arena import play_table
from agents.registry import UnknownAgentError, make_agent
from agents.search.pimc import PIMCAgent, pick_weighted
from agents.search.sampler import bidding_weight
from blot_env.actions import layout_for
from blot_env.engine import apply_action, current_seat, deal_random, legal_actions
from blot_env.rules_config import PRESETS, make_rules
from blot_env.state import Phase
from blot_env.view import seat_view


def test_registry_names():
    a = make_agent("pimc-64")
    assert isinstance(a, PIMCAgent) and a.k == 64 and not a.weighted and a.name == "pimc-64"
    b = make_agent("pimc-insane")
    assert isinstance(b, PIMCAgent) and b.k == 256 and b.weighted
    c = make_agent("pimc-8:0.25")
    assert c.k == 8 and c.time_budget == 0.25
    for bad in ("pimc-0", "pimc-x", "pimc-8:soon"):
        with pytest.raises(UnknownAgentError):
            make_agent(bad)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_pimc_plays_legal_cards_late_in_deals(preset):
    """From random positions near the end of deals, PIMC picks legal actions to the end."""
    cfg = make_rules(preset)
    rng = np.random.default_rng(31)
    agent = PIMCAgent(k=3)
    done = 0
    while done < 3:
        s = deal_random(cfg, rng, int(rng.integers(cfg.num_players)))
        ra = RandomAgent()
        while s.phase == Phase.AUCTION:
            s = apply_action(s, ra.act(seat_view(s, current_seat(s)), rng))
        if s.phase != Phase.PLAY:
            continue
        while s.phase == Phase.PLAY and s.trick_no < cfg.num_tricks - 3:
            a = legal_actions(s)
            s = apply_action(s, a[rng.integers(len(a))])
        while s.phase == Phase.PLAY:
            view = seat_view(s, current_seat(s))
            a = agent.act(view, rng)
            assert a in view.legal
            s = apply_action(s, a)
        done += 1


def test_pimc_full_bazar_deal_with_time_budget():
    """A whole bazar deal (auction included) with a zero time budget: one world per card."""
    cfg = make_rules("bazar")
    rng = np.random.default_rng(5)
    pimc = PIMCAgent(k=16, time_budget=0.0, bid_worlds=1)
    passer = RandomAgent(pass_prob=1.0)
    agents = [pimc, passer, pimc, passer]
    rngs = [np.random.default_rng(i) for i in range(4)]
    for _ in range(1):
        final, _, _ = play_table(deal_random(cfg, rng), agents, rngs)
        assert final.phase == Phase.DONE


def test_pimc_is_deterministic_given_the_generator():
    cfg = make_rules("bazar-app")
    s = deal_random(cfg, np.random.default_rng(3))
    ra = RandomAgent()
    rng = np.random.default_rng(0)
    while s.phase == Phase.AUCTION or s.trick_no < 5:
        if s.phase == Phase.DONE:
            s = deal_random(cfg, rng)
            continue
        s = apply_action(s, ra.act(seat_view(s, current_seat(s)), rng))
    view = seat_view(s, current_seat(s))
    a1 = PIMCAgent(k=6).act(view, np.random.default_rng(42))
    a2 = PIMCAgent(k=6).act(view, np.random.default_rng(42))
    assert a1 == a2


def test_pick_weighted_draws_in_proportion_to_the_weights():
    w = np.array([0.0, 1.0, 2.0, 5.0])
    rng = np.random.default_rng(5)
    counts = np.zeros(4)
    for _ in range(8000):
        (i,) = pick_weighted(w, rng.random(4), 1)
        counts[i] += 1
    assert counts[0] == 0
    assert chisquare(counts[1:], 8000 * w[1:] / w.sum()).pvalue > 1e-3
    # without replacement: distinct, ascending, zero weights only when positives run out
    for _ in range(200):
        got = pick_weighted(w, rng.random(4), 3)
        assert got == [1, 2, 3]
        got = pick_weighted(np.array([0.0, 3.0, 0.0, 1.0]), rng.random(4), 3)
        assert len(set(got)) == 3 and got == sorted(got) and {1, 3} <= set(got)
    assert pick_weighted(w, rng.random(4), 9) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="non-negative"):
        pick_weighted(np.array([1.0, -1.0]), np.array([0.5, 0.5]), 1)
    with pytest.raises(ValueError, match="one length"):
        pick_weighted(np.ones(3), np.ones(2), 1)
    with pytest.raises(ValueError, match="bid_pool"):
        PIMCAgent(k=8, weighted=True, bid_worlds=8, bid_pool=4)


def test_weighted_auction_evaluates_worlds_picked_from_its_pool():
    """pimc-insane's calls: a pool drawn at the seat's first call, ``bid_worlds`` of it solved
    per strain at each call, picked by the weights the other seats' bids give; the pool, its
    keys and earlier solves are kept for the seat's next call."""
    cfg = make_rules("bazar")
    lay = layout_for(cfg)
    rng = np.random.default_rng(11)
    medium = make_agent("rules-medium", cfg)
    agent = PIMCAgent(k=8, weighted=True, bid_worlds=4, bid_pool=32)
    checked = reused = 0
    for d in range(60):
        s = deal_random(cfg, rng, d % 4)
        agent.reset()
        entry = None
        while s.phase == Phase.AUCTION:
            seat = current_seat(s)
            view = seat_view(s, seat)
            if seat != 1:
                s = apply_action(s, medium.act(view, rng))
                continue
            first = entry is None
            if not first:
                before = {k: id(v) for k, v in entry["codes"].items()}
                keys = entry["keys"].copy()
            a = agent.act(view, rng)
            assert a in view.legal
            if len(view.legal) == 1:
                s = apply_action(s, a)
                continue
            (now,) = agent._cache.values()
            entry_now = now
            assert len(entry_now["worlds"]) == 32
            w = np.array([bidding_weight(view, x.hands) for x in entry_now["worlds"]])
            picked = pick_weighted(w, entry_now["keys"], 4)
            solved = {i for (_, i) in entry_now["codes"]}
            if first:
                others_bid = any(q != 1 and lay.block_of[c] != "PASS" for q, c in view.calls)
                if others_bid and w.min() < w.max():
                    assert sorted(solved) == picked
                    checked += 1
            else:  # the seat's later call: same pool and keys, earlier solves kept, new picks solved
                assert now is entry and np.array_equal(now["keys"], keys)
                assert all(id(now["codes"][k]) == v for k, v in before.items())
                assert set(picked) <= solved
                reused += 1
            entry = entry_now
            s = apply_action(s, a)
        if checked >= 2 and reused >= 1:
            break
    assert checked >= 2 and reused >= 1


# ---------------------------------------------------------------- adaptive early stopping
def _late_positions(n: int, seed: int, tricks_left: int = 3, preset: str = "bazar"):
    """``n`` card decisions (more than one legal card) with ``tricks_left`` tricks or fewer to play."""
    cfg = make_rules(preset)
    lay = layout_for(cfg)
    rng = np.random.default_rng(seed)
    ra = RandomAgent()
    out = []
    while len(out) < n:
        s = deal_random(cfg, rng, int(rng.integers(cfg.num_players)))
        while s.phase == Phase.AUCTION:
            s = apply_action(s, ra.act(seat_view(s, current_seat(s)), rng))
        while s.phase == Phase.PLAY:
            view = seat_view(s, current_seat(s))
            if (s.trick_no >= cfg.num_tricks - tricks_left and len(view.legal) > 1
                    and all(lay.block_of[a] == "PLAY" for a in view.legal)):
                out.append(view)
                break
            a = legal_actions(s)
            s = apply_action(s, a[rng.integers(len(a))])
    return out


def _counting_solver(monkeypatch):
    """Patch the solver PIMC calls so that it counts the worlds solved."""
    from agents.search import pimc

    calls = []
    orig = pimc.solver.card_values_team0

    def count(state):
        calls.append(1)
        return orig(state)

    monkeypatch.setattr(pimc.solver, "card_values_team0", count)
    return calls


def _reference_card(view, k, rng, weighted):
    """pimc's card choice without early stopping, written out: K worlds, best weighted mean, lowest id on ties."""
    from agents.search import solver
    from agents.search.sampler import sample_worlds

    worlds = sample_worlds(view, k, rng, weight=bidding_weight if weighted else None)
    sign = 1 if view.seat % 2 == 0 else -1
    tot: dict[int, float] = {}
    for w in worlds:
        for c, v in solver.card_values_team0(w.state).items():
            tot[c] = tot.get(c, 0.0) + w.weight * sign * v
    return layout_for(view.cfg).play_id(max(sorted(tot), key=lambda c: tot[c]))


def test_stop_z_none_plays_as_before_and_never_stopping_early_is_the_same():
    """stop_z=None is the K-world choice without early stopping; with stop_z but min_worlds >= K the
    batches draw the same worlds in the same order, so the choice is the same too."""
    for view in _late_positions(6, seed=7, tricks_left=5):
        for weighted in (False, True):
            ref = _reference_card(view, 24, np.random.default_rng(9), weighted)
            assert PIMCAgent(k=24, weighted=weighted).act(view, np.random.default_rng(9)) == ref
            full = PIMCAgent(k=24, weighted=weighted, stop_z=2.0, min_worlds=24)
            assert full.act(view, np.random.default_rng(9)) == ref
            # batches of 3 after 5: the same 24 worlds as one draw
            batched = PIMCAgent(k=24, weighted=weighted, stop_z=1e9, min_worlds=5, stop_every=3)
            assert batched.act(view, np.random.default_rng(9)) == ref


def test_early_stop_stops_on_clear_positions_and_never_before_min_worlds(monkeypatch):
    calls = _counting_solver(monkeypatch)
    agent = PIMCAgent(k=64, stop_z=2.0, stop_tol=0.5, min_worlds=8, stop_every=4)
    counts = []
    for view in _late_positions(12, seed=3, tricks_left=2):
        calls.clear()
        a = agent.act(view, np.random.default_rng(1))
        assert a in view.legal
        counts.append(len(calls))
        assert len(calls) >= 8 and (len(calls) - 8) % 4 == 0 and len(calls) <= 64
        a2 = PIMCAgent(k=64, stop_z=2.0, stop_tol=0.5, min_worlds=8, stop_every=4).act(view, np.random.default_rng(1))
        assert a2 == a  # same generator, same decision
    assert sorted(counts)[len(counts) // 2] == 8  # near the end most decisions are clear after the first batch
    # an impossible threshold stops only on ties, else runs to K
    calls.clear()
    strict = PIMCAgent(k=20, stop_z=1e9, min_worlds=8, stop_every=4)
    for view in _late_positions(4, seed=5, tricks_left=4):
        calls.clear()
        strict.act(view, np.random.default_rng(2))
        assert len(calls) in (8, 12, 16, 20)


def test_early_stop_with_a_time_budget_solves_one_world(monkeypatch):
    calls = _counting_solver(monkeypatch)
    (view,) = _late_positions(1, seed=11, tricks_left=6)
    a = PIMCAgent(k=64, time_budget=0.0, stop_z=2.0, min_worlds=8).act(view, np.random.default_rng(0))
    assert a in view.legal and len(calls) == 1


def test_card_decided_separated_equivalent_and_open():
    from agents.search.pimc import card_decided

    # card 3 ahead of card 5 by 10 in every world but one: separated
    rows = [{3: 10, 5: 0}] * 9 + [{3: 0, 5: 0}]
    assert card_decided(rows, [1.0] * 10, 1, 3, 2.0)
    # team 1's seat: the values are negated, so 5 leads
    assert card_decided(rows, [1.0] * 10, -1, 5, 2.0)
    assert not card_decided(rows, [1.0] * 10, -1, 3, 2.0)
    # the same value in every world so far: decided only for cards known to be equivalent
    tied = [{1: 4, 2: 4, 7: -3}] * 5
    assert not card_decided(tied, [1.0] * 5, 1, 1, 2.0)
    assert card_decided(tied, [1.0] * 5, 1, 1, 2.0, equivalent={1, 2})
    assert not card_decided([{1: 4, 2: 3}] + tied, [1.0] * 6, 1, 1, 50.0, equivalent={1, 2})
    # ... or within the tolerance
    assert card_decided(tied, [1.0] * 5, 1, 1, 2.0, stop_tol=0.5)
    # a one-world lead among noise: not separated
    noisy = [{1: 10, 2: 0}, {1: 0, 2: 0}, {1: 0, 2: 0}, {1: 0, 2: 0}]
    assert not card_decided(noisy, [1.0] * 4, 1, 1, 2.0)
    assert card_decided(noisy, [1.0] * 4, 1, 1, 0.5)
    assert card_decided(noisy, [1.0] * 4, 1, 1, 2.0, stop_tol=3.0)
    # the weights: the effective number of worlds shrinks the evidence
    rows = [{1: 2, 2: 0}, {1: 2, 2: 0}, {1: -1, 2: 0}, {1: 2, 2: 0}]
    assert card_decided(rows, [1.0, 1.0, 1.0, 1.0], 1, 1, 1.0)
    assert not card_decided(rows, [1.0, 0.01, 1.0, 0.01], 1, 1, 1.0)
    assert not card_decided(rows, [0.0] * 4, 1, 1, 1.0)
    assert card_decided([{4: 1}] * 3, [1.0] * 3, 1, 4, 2.0)  # one card: nothing to decide


def test_equivalent_cards_have_one_value_in_every_world():
    """Cards equivalent by the view (same suit and points, nothing in play between) score the
    same in every sampled world; at least some such classes occur."""
    from agents.search import solver
    from agents.search.pimc import equivalent_cards
    from agents.search.sampler import sample_worlds

    merged = 0
    for view in _late_positions(25, seed=13, tricks_left=6):
        lay = layout_for(view.cfg)
        cards = [lay.card_of(a) for a in view.legal]
        rep = equivalent_cards(view, cards)
        assert set(rep) == set(cards) and all(rep[c] <= c and rep[rep[c]] == rep[c] for c in cards)
        groups = {}
        for c in cards:
            groups.setdefault(rep[c], []).append(c)
        multi = [g for g in groups.values() if len(g) > 1]
        merged += len(multi)
        for w in sample_worlds(view, 4, np.random.default_rng(0)) if multi else ():
            vals = solver.card_values_team0(w.state)
            for g in multi:
                assert len({vals[c] for c in g}) == 1, (g, vals)
    assert merged >= 3


def test_stop_parameters_are_validated():
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="stop_z must be None or a finite number >= 0"):
            PIMCAgent(k=8, stop_z=bad)
    for bad in (1, 0, 2.5):
        with pytest.raises(ValueError, match="min_worlds must be an integer >= 2"):
            PIMCAgent(k=8, stop_z=2.0, min_worlds=bad)
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="stop_tol must be a finite number >= 0"):
            PIMCAgent(k=8, stop_z=2.0, stop_tol=bad)
    with pytest.raises(ValueError, match="stop_every must be an integer >= 1"):
        PIMCAgent(k=8, stop_z=2.0, stop_every=0)
    a = PIMCAgent(k=8, stop_z=0)
    assert a.stop_z == 0.0 and a.stop_tol == 0.0 and a.min_worlds == 32 and a.stop_every == 16
    assert PIMCAgent(k=8).stop_z is None


def test_insane_stops_early_and_insane_full_does_not():
    from agents.registry import INSANE_STOP

    a = make_agent("pimc-insane")
    assert a.k == 256 and a.weighted and (a.stop_z, a.stop_tol) == INSANE_STOP and a.name == "pimc-insane"
    b = make_agent("pimc-insane-full")
    assert b.k == 256 and b.weighted and b.stop_z is None and b.name == "pimc-insane-full"
    c = make_agent("pimc-insane-full:0.5")
    assert c.time_budget == 0.5 and c.stop_z is None
    assert make_agent("pimc-64").stop_z is None  # L3 unchanged
