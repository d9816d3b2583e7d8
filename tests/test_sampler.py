"""Belief sampling (agents/search/sampler.py): consistency with the observing seat's view in
every phase of every preset, and uniformity over the consistent deals (chi-square)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from agents.baselines.random_agent import RandomAgent
from agents.search.sampler import (
    UniformAssigner,
    World,
    _Replayer,
    bidding_weight,
    play_constraints,
    replay_public,
    sample_worlds,
)
from blot_env.actions import layout_for
from blot_env.cards import cards_of
from blot_env.engine import apply_action, current_seat, deal_random, legal_actions
from blot_env.rules_config import PRESETS, make_rules
from blot_env.state import Phase
from blot_env.view import seat_view


def _check_world(w: World, view) -> None:
    st = w.state
    assert seat_view(st, view.seat) == view
    assert st.plays == view.plays
    assert st.history[:len(view.calls)] == tuple(a for _, a in view.calls)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_worlds_never_contradict_the_view(preset):
    """Sampled worlds give the observer exactly its view, over many states of every phase."""
    cfg = make_rules(preset)
    rng = np.random.default_rng(17)
    ag = RandomAgent(pass_prob=0.6)
    phases = Counter()
    worlds = 0
    for _ in range(15):
        s = deal_random(cfg, rng, int(rng.integers(cfg.num_players)))
        while s.phase != Phase.DONE:
            if rng.random() < 0.3:
                obs = int(rng.integers(cfg.num_players))
                view = seat_view(s, obs)
                ws = sample_worlds(view, 3, rng)
                for w in ws:
                    _check_world(w, view)
                    assert replay_public(view, w.dealer, w.hands, w.stock, w.piles) is not None
                worlds += len(ws)
                phases[view.phase] += 1
            s = apply_action(s, ag.act(seat_view(s, current_seat(s)), rng))
    assert phases[Phase.AUCTION] > 0 and phases[Phase.PLAY] > 0
    assert worlds > 50


def _swap_hidden(w: World, seat: int, rng) -> tuple:
    """The world's deal with two hidden cards swapped (often inconsistent): between two other
    seats (4 players), within the other seat's piles (Open Blot), or between the other
    seat's hand and the stock (duels)."""
    others = [q for q in range(len(w.hands)) if q != seat]
    if w.piles:
        piles = [list(p) for p in w.piles]
        q = others[0]
        i, j = (int(x) for x in rng.choice(len(piles[q]), size=2, replace=False))
        piles[q][i], piles[q][j] = piles[q][j], piles[q][i]
        piles = tuple(tuple(p) for p in piles)
        return tuple(sum(1 << c for c in p) for p in piles), w.stock, piles
    hands, stock = list(w.hands), list(w.stock)
    if len(others) >= 2:
        q1, q2 = (int(x) for x in rng.choice(others, size=2, replace=False))
        c1, c2 = int(rng.choice(cards_of(hands[q1]))), int(rng.choice(cards_of(hands[q2])))
        hands[q1] ^= (1 << c1) | (1 << c2)
        hands[q2] ^= (1 << c1) | (1 << c2)
    elif stock:
        q = others[0]
        c1, i = int(rng.choice(cards_of(hands[q]))), int(rng.integers(len(stock)))
        hands[q] ^= (1 << c1) | (1 << stock[i])
        stock[i] = c1
    return tuple(hands), tuple(stock), None


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_compiled_replay_agrees_with_replay_public(preset):
    """The sampler's compiled replay (after a first accepted world) accepts exactly the deals
    that ``replay_public`` accepts, and gives the same states: on sampled worlds and on
    worlds with two hidden cards swapped."""
    cfg = make_rules(preset)
    rng = np.random.default_rng(5)
    ag = RandomAgent(pass_prob=0.6)
    compared = rejected = 0
    for _ in range(8):
        s = deal_random(cfg, rng, int(rng.integers(cfg.num_players)))
        while s.phase != Phase.DONE:
            if rng.random() < 0.25:
                view = seat_view(s, int(rng.integers(cfg.num_players)))
                ws = sample_worlds(view, 4, rng)
                rep = _Replayer(view)
                for w in ws:
                    for hands, stock, piles in ((w.hands, w.stock, w.piles), _swap_hidden(w, view.seat, rng)):
                        want = replay_public(view, view.dealer, hands, stock, piles)
                        got = rep(hands, stock, piles)
                        assert (got is None) == (want is None)
                        assert got == want
                        compared += 1
                        rejected += want is None
                if ws:
                    assert rep.actions is not None and rep._row is not None  # the compiled replay ran
            s = apply_action(s, ag.act(seat_view(s, current_seat(s)), rng))
    assert compared > 40 and 0 < rejected < compared


def test_sampler_honours_revealed_voids():
    """A seat that did not follow suit never gets a card of that suit."""
    cfg = make_rules("bazar-app")
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(300):
        s = deal_random(cfg, rng)
        while s.phase == Phase.AUCTION:
            s = apply_action(s, RandomAgent().act(seat_view(s, current_seat(s)), rng))
        while s.phase == Phase.PLAY and s.trick_no < 5:
            a = legal_actions(s)
            s = apply_action(s, a[rng.integers(len(a))])
        if s.phase != Phase.PLAY:
            continue
        view = seat_view(s, current_seat(s))
        cons = play_constraints(view)
        if not any(cons.values()):
            continue
        for w in sample_worlds(view, 5, rng):
            for q, forbidden in cons.items():
                assert w.state.hands[q] & forbidden == 0
        checked += 1
        if checked >= 10:
            break
    assert checked >= 5


def test_uniform_assigner_is_uniform():
    cards = list(range(6))
    allowed = [0b011, 0b110, 0b111, 0b101, 0b111, 0b011]
    counts = [2, 2, 2]
    assigner = UniformAssigner(cards, allowed, counts)
    valid = [p for p in itertools.product(range(3), repeat=6)
             if all(allowed[i] >> p[i] & 1 for i in range(6)) and all(p.count(k) == counts[k] for k in range(3))]
    assert assigner.total == len(valid)
    rng = np.random.default_rng(0)
    draws = Counter(tuple(assigner.draw(rng)) for _ in range(40 * len(valid)))
    assert set(draws) <= set(valid)
    obs = [draws[v] for v in valid]
    assert chisquare(obs).pvalue > 1e-3


def _small_play_view(rng):
    """A late bazar-app play view with a revealed void and few consistent deals."""
    cfg = make_rules("bazar-app")
    while True:
        s = deal_random(cfg, rng)
        while s.phase == Phase.AUCTION:
            s = apply_action(s, RandomAgent().act(seat_view(s, current_seat(s)), rng))
        while s.phase == Phase.PLAY and s.trick_no < 6:
            a = legal_actions(s)
            s = apply_action(s, a[rng.integers(len(a))])
        if s.phase != Phase.PLAY:
            continue
        view = seat_view(s, current_seat(s))
        if any(play_constraints(view).values()):
            return view


def test_worlds_are_uniform_over_consistent_deals():
    """Without weights every consistent deal is equally likely (chi-square on a small case)."""
    rng = np.random.default_rng(8)
    view = _small_play_view(rng)
    cfg = view.cfg
    me = view.seat
    played = [0] * 4
    for q, c in view.plays:
        played[q] |= 1 << c
    others = [q for q in range(4) if q != me]
    unseen = cards_of(((1 << 32) - 1) & ~view.dealt_hand & ~sum(played))
    need = [cfg.num_tricks - played[q].bit_count() for q in others]
    consistent = []
    for perm in set(itertools.permutations([i for i, k in enumerate(need) for _ in range(k)])):
        hands = [0] * 4
        hands[me] = view.dealt_hand
        for q in others:
            hands[q] = played[q]
        for c, i in zip(unseen, perm):
            hands[others[i]] |= 1 << c
        if replay_public(view, view.dealer, hands, ()) is not None:
            consistent.append(tuple(hands))
    assert 2 <= len(consistent) <= 400
    worlds = sample_worlds(view, 30 * len(consistent), rng)
    counts = Counter(w.hands for w in worlds)
    assert set(counts) <= set(consistent)
    assert chisquare([counts[h] for h in consistent]).pvalue > 1e-3


def test_bidding_weight_prefers_hands_that_fit_the_bids():
    cfg = make_rules("bazar")
    rng = np.random.default_rng(2)
    for _ in range(200):
        s = deal_random(cfg, rng)
        s = apply_action(s, layout_for(cfg).bid_id(16, int(rng.integers(4))))
        view = seat_view(s, 2)  # seat 1 (the first hand) made the bid
        ws = sample_worlds(view, 20, rng, weight=bidding_weight)
        weights = [w.weight for w in ws]
        assert all(0.0 < x <= 1.0 for x in weights)
        if min(weights) < 1.0:
            return
    pytest.fail("the first bid never down-weighted a world")
