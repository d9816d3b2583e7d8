"""The actor's belief over sampled worlds (agents/search/belief.py) and ``ppo-search-K-bM``."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.registry import UnknownAgentError, make_agent  # noqa: E402
from agents.search.belief import _rows_compiled, _rows_reference, pick_by_belief, policy_log_likelihood  # noqa: E402
from agents.search.net_search import NetSearchAgent  # noqa: E402
from agents.search.sampler import World, sample_worlds  # noqa: E402
from blot_env import make_rules  # noqa: E402
from blot_env.engine import apply_action, current_seat, deal_random, is_terminal, legal_actions, new_deal  # noqa: E402
from blot_env.state import Phase  # noqa: E402
from blot_env.view import seat_view  # noqa: E402


def _midplay(agent, rules, rng, dealer, trick, bidder=None):
    """A deal played by ``agent`` in every seat (the calls by ``bidder`` if given) up to the
    first card of trick ``trick`` (or its end)."""
    s = deal_random(rules, rng, dealer)
    while not is_terminal(s):
        if s.phase == Phase.PLAY and s.trick_no >= trick and not s.pending:
            break
        who = bidder if bidder is not None and s.phase == Phase.AUCTION else agent
        s = apply_action(s, who.act(seat_view(s, current_seat(s)), rng))
    return s


def _direct_loglik(world: World, me: int, agent) -> float:
    """The same sum computed through the agent's own ``action_probs`` on reference-engine views."""
    s = new_deal(world.state.cfg, world.dealer, world.hands, world.stock)
    total = 0.0
    for a in world.state.history:
        seat = current_seat(s)
        if seat != me and len(legal_actions(s)) > 1:
            acts, p = agent.action_probs(seat_view(s, seat))
            total += float(np.log(p[list(acts).index(a)]))
        s = apply_action(s, a)
    return total


def test_likelihood_is_the_actors_probability_of_the_other_seats_actions(policy_file):
    preset, path = policy_file
    base = make_agent(str(path), preset)
    rules = make_rules(preset)
    rng = np.random.default_rng(3)
    checked = 0
    for d in range(3):
        s = _midplay(base, rules, rng, d % rules.num_players, trick=2, bidder=make_agent("rules", preset))
        if is_terminal(s):
            continue
        view = seat_view(s, current_seat(s))
        worlds = sample_worlds(view, 4, rng)
        ll = policy_log_likelihood(worlds, view.seat, base.policy, base.encoder)
        assert ll.shape == (len(worlds),) and np.all(ll <= 0)
        for w, v in zip(worlds, ll):
            assert v == pytest.approx(_direct_loglik(w, view.seat, base), abs=1e-4)
        # one row per decision of another seat that had a choice in that world
        choices = []
        for w in worlds:
            r, n = new_deal(rules, w.dealer, w.hands, w.stock), 0
            for a in s.history:
                n += current_seat(r) != view.seat and len(legal_actions(r)) > 1
                r = apply_action(r, a)
            choices.append(n)
        # the compiled replay and the reference one give the same rows
        a, b = _rows_compiled(worlds, view.seat, base.encoder), _rows_reference(worlds, view.seat, base.encoder)
        assert a[2] == b[2] and a[3] == b[3] and np.bincount(a[3], minlength=len(worlds)).tolist() == choices
        assert sum(choices) > 0
        assert all(np.array_equal(x, y) for x, y in zip(a[0], b[0]))
        assert all(np.array_equal(x, y) for x, y in zip(a[1], b[1]))
        checked += 1
    assert checked >= 2


def test_the_true_deal_is_more_likely_than_nearly_every_sampled_world():
    """Under the shipped bazar policy, in deals it played in every seat, the real hands explain
    the calls and cards better than nearly every uniform world (the belief carries information)."""
    base = make_agent("ppo", "bazar")
    rules = make_rules("bazar")
    rng = np.random.default_rng(11)
    ranks = []
    for d in range(4):
        s = _midplay(base, rules, rng, d, trick=3)
        view = seat_view(s, current_seat(s))
        worlds = sample_worlds(view, 32, rng)
        ll = policy_log_likelihood(worlds, view.seat, base.policy, base.encoder)
        true = World(s.dealer, s.start_hands, s.stock, None, s)
        ranks.append(float(np.mean(ll < policy_log_likelihood([true], view.seat, base.policy, base.encoder)[0])))
    assert min(ranks) >= 0.9, ranks


def test_pick_by_belief_follows_the_weights():
    worlds = list(range(10))  # any items: the pick only orders them
    ll = np.array([0.0, -1, -2, -3, -4, -50, -60, -70, -80, -90])
    rng = np.random.default_rng(0)
    assert sorted(pick_by_belief(worlds, ll, 4, 10.0, rng)) == [0, 1, 2, 3]  # sharp weights: the likeliest
    counts = np.zeros(10)
    for _ in range(2000):
        for i in pick_by_belief(worlds, ll, 1, 0.0, rng):  # power 0: uniform
            counts[i] += 1
    assert counts.min() > 140 and counts.max() < 260
    # a world the actor rules out is kept only when too few others are possible; all ruled out: uniform
    ruled = np.array([0.0, -np.inf, -1.0])
    assert sorted(pick_by_belief([0, 1, 2], ruled, 2, 0.5, rng)) == [0, 2]
    assert sorted(pick_by_belief([0, 1, 2], ruled, 3, 0.0, rng)) == [0, 1, 2]
    hits = np.zeros(3)
    for _ in range(600):
        hits[pick_by_belief([0, 1, 2], np.full(3, -np.inf), 1, 1.0, rng)[0]] += 1
    assert hits.min() > 150
    with pytest.raises(ValueError, match="NaN"):
        pick_by_belief([0, 1], np.array([0.0, np.nan]), 1, 1.0, rng)
    with pytest.raises(ValueError, match="k >= 1"):
        pick_by_belief(worlds, ll, 0, 1.0, rng)
    with pytest.raises(ValueError, match="power"):
        pick_by_belief(worlds, ll, 2, -1.0, rng)
    with pytest.raises(ValueError, match="shape"):
        pick_by_belief(worlds, ll[:3], 2, 1.0, rng)
    with pytest.raises(ValueError, match="no worlds"):
        policy_log_likelihood([], 0, None, None)


def test_belief_search_names_and_arguments_are_checked(policy_file):
    preset, path = policy_file
    agent = make_agent(f"ppo-search-3-e2-b6-p1:{path}", preset)
    assert isinstance(agent, NetSearchAgent) and (agent.k, agent.belief, agent.belief_power) == (3, 6, 1.0)
    assert make_agent(f"ppo-search-3-b6:{path}", preset).belief_power == 0.5
    assert make_agent(f"ppo-search-3:{path}", preset).belief == 0
    for bad, why in (("ppo-search-16-b8", "M must be more than K"), ("ppo-search-4-b4", "M must be more than K"),
                     ("ppo-search-4-p1", "needs -bM"), ("ppo-search-4-b8-p", "ppo-search-K-bM"),
                     ("ppo-search-4-b8-e2", "ppo-search-K-bM")):
        with pytest.raises(UnknownAgentError, match=why):
            make_agent(f"{bad}:{path}", preset)
    for kw in ({"belief": 4}, {"belief": -1}, {"belief": 8, "belief_power": float("nan")}):
        with pytest.raises(ValueError, match="belief"):
            NetSearchAgent(agent.agent, k=4, **kw)
