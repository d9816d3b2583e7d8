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
