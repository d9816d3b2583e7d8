"""The light search on top of a PPO network (agents/search/net_search.py)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")


from conftest import play_legal_deal  # noqa: E402

from agents.registry import UnknownAgentError, make_agent  # noqa: E402
from agents.search.net_search import NetSearchAgent  # noqa: E402
from blot_env import make_rules  # noqa: E402
from blot_env.engine import apply_action, current_seat, deal_random, deal_result, is_terminal  # noqa: E402
from blot_env.scoring import side_score_difference  # noqa: E402
from blot_env.view import seat_view  # noqa: E402


def test_search_agent_plays_legal_deals_and_uses_the_critic(policy_file):
    preset, path = policy_file
    agent = make_agent(f"ppo-search-3:{path}", preset)
    assert isinstance(agent, NetSearchAgent) and agent.k == 3
    rules = make_rules(preset)
    rng = np.random.default_rng(0)
    bidder = make_agent("rules", preset)  # the auction by rules, so that the deals reach the card play
    auction_calls = 0
    for d in range(3):
        s = deal_random(rules, rng, d % rules.num_players)
        while not is_terminal(s):
            view = seat_view(s, current_seat(s))
            a = agent.act(view, rng)
            assert a in view.legal
            if s.phase.name != "PLAY" and len(view.legal) > 1:
                # outside the card play the search leaves the choice to the policy
                acts, probs = agent.agent.action_probs(view)
                assert a == int(acts[int(np.argmax(probs))])
                auction_calls += 1
                a = bidder.act(view, rng)
            s = apply_action(s, a)
    assert agent.decisions > 5 and agent.seconds > 0 and auction_calls > 0


def test_search_values_are_exact_at_the_end(policy_file):
    """With every trick solvable, the search's value of each candidate is the solver's value."""
    from agents.search import solver

    preset, path = policy_file
    agent = make_agent(f"ppo-search-2:{path}", preset)
    agent.exact_tricks = 99
    rules = make_rules(preset)
    rng = np.random.default_rng(5)
    s = deal_random(rules, rng, 0)
    checked = 0
    while not is_terminal(s) and checked < 3:
        legal = list(seat_view(s, current_seat(s)).legal)
        if s.phase.name == "PLAY" and not s.pending and len(legal) > 1:
            vals = agent._values(s, current_seat(s), legal)
            _, exact = solver.solve(s)
            for a, v in zip(legal, vals):
                nxt = apply_action(s, a)
                if not is_terminal(nxt) and not nxt.pending:
                    assert v == pytest.approx(exact[a])
            checked += 1
        s = apply_action(s, int(rng.choice(legal)))
    assert checked > 0


def test_search_names_are_checked():
    with pytest.raises(UnknownAgentError, match="ppo-search"):
        make_agent("ppo-search-x", "bazar")
    with pytest.raises(ValueError):
        NetSearchAgent(object(), k=0)


def test_choose_keeps_the_favourite_unless_another_candidate_clearly_beats_it():
    from agents.search.net_search import choose

    rng = np.random.default_rng(0)
    noise = rng.normal(0.0, 5.0, size=(16, 3))
    flat = noise + np.array([0.0, 0.5, 0.3])  # means differ by far less than their error
    assert choose(flat, z=2.0) == 0
    assert choose(flat, z=0.0) == int(np.argmax(flat.mean(axis=0)))  # z=0: the plain argmax
    world = rng.normal(0.0, 20.0, size=(16, 1))  # luck shared by all candidates of one world
    clear = world + np.array([0.0, 1.0, 6.0]) + rng.normal(0.0, 0.5, size=(16, 3))
    assert choose(clear, z=2.0) == 2  # paired: the shared world luck cancels
    worse = world + np.array([0.0, -3.0, -1.0])
    assert choose(worse, z=0.0) == 0 and choose(worse, z=2.0) == 0
    assert choose(np.array([[1.0, 2.0]]), z=2.0) == 0  # one world: no error estimate, the favourite stays
    assert choose(np.array([[1.0, 2.0]]), z=0.0) == 1
    assert choose(np.array([[1.0]]), z=2.0) == 0
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="z finite"):
            NetSearchAgent(object(), z=bad)


def test_search_names_set_worlds_and_z(policy_file):
    preset, path = policy_file
    agent = make_agent(f"ppo-search-4-z0.5:{path}", preset)
    assert agent.k == 4 and agent.z == 0.5 and agent.name == f"ppo-search-4-z0.5:{path}"
    assert make_agent(f"ppo-search:{path}", preset).z == 2.0
    for bad in ("ppo-search-4-z", "ppo-search-4-zx", "ppo-search-4-z-1", "ppo-search-z1-4"):
        with pytest.raises(UnknownAgentError, match="ppo-search-K-zZ"):
            make_agent(bad, preset)


def test_exact_play_solves_every_candidate_in_one_search(policy_file, monkeypatch):
    """``-eE`` with E at the deal's number of tricks: every card of the play is valued by the
    solver, from the position before the move, the same values as solving each candidate's
    position (and the deal's score where the candidate ends it)."""
    from agents.search import solver

    preset, path = policy_file
    rules = make_rules(preset)
    agent = make_agent(f"ppo-search-3-e{rules.num_tricks}:{path}", preset)
    assert agent.exact_tricks == rules.num_tricks and agent.k == 3 and agent.z == 2.0
    assert make_agent(f"ppo-search-3:{path}", preset).exact_tricks == 2  # the default
    rng = np.random.default_rng(11)
    bidder = make_agent("rules", preset)
    checked = 0
    for d in range(4):
        s = deal_random(rules, rng, d % rules.num_players)
        while not is_terminal(s):
            me = current_seat(s)
            legal = list(seat_view(s, me).legal)
            if s.phase.name == "PLAY" and not s.pending and len(legal) > 1:
                calls = []
                with monkeypatch.context() as mp:
                    mp.setattr(solver, "solve", lambda st, _f=solver.solve, _c=calls: _c.append(1) or _f(st))
                    vals = agent._world_values(s, me, legal)
                assert len(calls) == 1  # one search of the position, not one per candidate
                for a, v in zip(legal, vals):
                    nxt = apply_action(s, a)
                    if is_terminal(nxt):
                        want = side_score_difference(deal_result(nxt).score, me)
                    elif nxt.pending:
                        continue
                    else:
                        child, _ = solver.solve(nxt)
                        want = child if current_seat(nxt) % 2 == me % 2 else -child
                    assert v == want, (a, v, want)
                    checked += 1
            s = apply_action(s, int(rng.choice(legal)) if s.phase.name == "PLAY" else bidder.act(seat_view(s, me), rng))
    assert checked > 20


def test_exact_play_and_belief_agents_play_legal_deals(policy_file, monkeypatch):
    from agents.search import net_search

    picks = []
    real_pick = net_search.pick_by_belief

    def spy(worlds, ll, k, power, rng):
        picks.append((len(worlds), k, power))
        return real_pick(worlds, ll, k, power, rng)

    monkeypatch.setattr(net_search, "pick_by_belief", spy)
    preset, path = policy_file
    rules = make_rules(preset)
    agent = make_agent(f"ppo-search-2-e{rules.num_tricks}-z1:{path}", preset)
    assert agent.z == 1.0 and agent.exact_tricks == rules.num_tricks
    belief = make_agent(f"ppo-search-3-e2-b6-p1:{path}", preset)  # worlds kept by the actor's belief
    rng = np.random.default_rng(3)
    for searcher in (agent, belief):
        for d in range(2):
            play_legal_deal(searcher, preset, bidder=make_agent("rules", preset), dealer=d, rng=rng)
    assert agent.decisions > 5 and belief.decisions > 3
    # the belief agent kept 3 of 6 worlds at its searched decisions, the other agent never picked
    assert picks and all(p == (6, 3, 1.0) for p in picks) and len(picks) <= belief.decisions
    for bad in ("ppo-search-4-e", "ppo-search-4-ex", "ppo-search-4-z1-e8", "ppo-search-4-e-1"):
        with pytest.raises(UnknownAgentError, match="ppo-search-K-eE"):
            make_agent(bad, preset)


def test_rollout_search_plays_the_best_mean_rollout_card(policy_file):
    """``ppo-rollout-K``: at a card decision the card played is the one whose rollouts (the network
    in every seat to the end of each sampled world's deal) have the best mean, the favourite on
    ties; outside the card play the policy's own choice."""
    from agents.ppo.demos import rollout_rows
    from agents.search.sampler import sample_worlds
    from blot_env.actions import layout_for

    preset, path = policy_file
    agent = make_agent(f"ppo-rollout-3:{path}", preset)
    assert isinstance(agent, NetSearchAgent) and agent.rollouts and agent.k == 3 and agent.z == 0.0
    rules = make_rules(preset)
    rng = np.random.default_rng(2)
    bidder = make_agent("rules", preset)  # the auction by rules, so that the deals reach the card play
    checked = 0
    for d in range(4):
        s = deal_random(rules, rng, d % rules.num_players)
        while not is_terminal(s):
            view = seat_view(s, current_seat(s))
            seed = int(rng.integers(1 << 30))
            a = agent.act(view, np.random.default_rng(seed))
            assert a in view.legal
            if s.phase.name != "PLAY":
                acts, probs = agent.agent.action_probs(view)
                assert a == int(acts[int(np.argmax(probs))])
                a = bidder.act(view, rng)
            elif not s.pending and len(view.legal) > 1:
                acts, probs = agent.agent.action_probs(view)
                order = [int(acts[i]) for i in np.argsort(-probs, kind="stable")]
                worlds = [w.state for w in sample_worlds(view, 3, np.random.default_rng(seed))]
                best, mean = order[0], None  # where no world can be drawn, the favourite
                if worlds:
                    q = rollout_rows(worlds, agent.net, agent.encoder, layout_for(rules).num_actions)
                    mean = q[:, order].mean(0)
                    best = order[int(np.argmax(mean))] if mean.max() > mean[0] else order[0]
                assert a == best, (a, best, mean)
                checked += 1
            s = apply_action(s, a)
    assert checked > 10 and agent.decisions >= checked and agent.seconds > 0


def test_rollout_search_needs_no_critic_and_checks_its_name(policy_file, tmp_path):
    from blot_env.errors import ConfigError

    preset, path = policy_file
    base = make_agent(str(path), preset)
    base.has_critic = False  # as loaded from a policy file written before the critic was exported
    with pytest.raises(ConfigError, match="no critic weights"):
        NetSearchAgent(base, k=2)
    assert NetSearchAgent(base, k=2, rollouts=True).rollouts
    assert make_agent(f"ppo-rollout-2-z1.5:{path}", preset).z == 1.5
    for bad in ("ppo-rollout-0", "ppo-rollout-x", "ppo-rollout-2-e8", "ppo-rollout-2-z"):
        with pytest.raises(UnknownAgentError, match="ppo-rollout-K"):
            make_agent(bad, preset)
    with pytest.raises(UnknownAgentError, match="not found"):
        make_agent(f"ppo-rollout-2:{tmp_path / 'missing.pt'}", preset)
