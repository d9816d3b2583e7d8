"""The compiled AEC env against the reference path, step by step.

``raw_env(engine="compiled")`` keeps its deal as a compiled row
(:class:`blot_env.batched.deal_row.DealRow`); ``raw_env(engine="reference")`` steps the
reference engine (immutable State, ``seat_view``, ``ObservationEncoder``). Both play the same random deals with the same
actions; at every step the agent to act, every agent's observation and mask, the rewards,
cumulative rewards, terminations, truncations and infos must be identical, and so must the
records, the ``game_state``, ``state()`` and the errors of illegal actions. The wrapped env
(``env()``) is also compared with PettingZoo's own wrapper classes around the reference path.

``BLOT_ENV_FAST_DEALS`` (default 40) sets the deals per preset and observation kind.
"""

from __future__ import annotations

import copy
import os
import warnings

import numpy as np
import pytest
from pettingzoo.utils import wrappers as pzw

from blot_env import PRESETS, make_rules
from blot_env.batched.convert import from_state
from blot_env.env import env, raw_env
from blot_env.errors import IllegalActionError
from blot_env.observation import KINDS

DEALS = int(os.environ.get("BLOT_ENV_FAST_DEALS", "40"))
#: relative weight of an action block (then uniform inside it): reaches contra, recontra,
#: kaput(+N), the declaration protocol and passed-out deals more often than uniform play
WEIGHTS = {"PASS": 3.0, "CONTRA": 1.0, "RECONTRA": 2.0, "BID": 1.5, "KAPUT": 0.2, "KAPUT_PLUS": 0.5,
           "REVEAL": 3.0, "CONCEDE": 1.0}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def choose(e, mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    groups: dict[str, list[int]] = {}
    for a in legal:
        groups.setdefault(e.layout.block_of[int(a)], []).append(int(a))
    names = list(groups)
    w = np.array([WEIGHTS.get(g, 1.0) for g in names])
    g = names[rng.choice(len(names), p=w / w.sum())]
    if g == "ANNOUNCE" and rng.random() < 0.8:
        return groups[g][-1]
    return groups[g][int(rng.integers(len(groups[g])))]


def same_obs(a, b, agent, where) -> None:
    oa, ob = a.observe(agent), b.observe(agent)
    assert oa["observation"].dtype == np.float32 and oa["action_mask"].dtype == np.int8
    assert np.array_equal(oa["observation"], ob["observation"]), (where, agent, np.flatnonzero(
        oa["observation"] != ob["observation"]))
    assert np.array_equal(oa["action_mask"], ob["action_mask"]), (where, agent)


def same_bookkeeping(a, b, where) -> None:
    assert a.agents == b.agents and a.agent_selection == b.agent_selection, where
    assert a.rewards == b.rewards and a._cumulative_rewards == b._cumulative_rewards, where
    assert a.terminations == b.terminations and a.truncations == b.truncations, where
    assert a.infos == b.infos, where


def lockstep(fast, ref, rng: np.random.Generator, where, check_state_every: int = 5) -> int:
    """Play both envs to the end of their episode with the same actions; returns the steps."""
    steps = 0
    for agent in fast.agent_iter(100_000):
        w = (*where, steps)
        same_bookkeeping(fast, ref, w)
        # the acting agent first (as last() does), then the others
        for other in [agent] + [x for x in fast.possible_agents if x != agent]:
            same_obs(fast, ref, other, w)
        if steps % check_state_every == 0:
            assert fast.game_state == ref.game_state, w
            assert np.array_equal(from_state(ref.game_state), fast.deal.row[0]), w
            assert fast.record() == ref.record(), w
        o, rew, term, trunc, info = fast.last()
        assert (rew, term, trunc, info) == ref.last()[1:], w
        if term or trunc:
            fast.step(None)
            ref.step(None)
            continue
        a = choose(fast, o["action_mask"], rng)
        fast.step(a)
        ref.step(a)
        steps += 1
    same_bookkeeping(fast, ref, where)
    assert fast.game_state == ref.game_state
    assert fast.record() == ref.record()
    assert fast.match_record() == ref.match_record()
    assert np.array_equal(fast.state(), ref.state())
    return steps


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("preset", list(PRESETS))
def test_deals_identical_to_reference(preset, kind):
    fast = raw_env(preset, engine="compiled", observation_kind=kind)
    ref = raw_env(preset, engine="reference", observation_kind=kind)
    rng = np.random.default_rng(11)
    ends = set()
    for k in range(DEALS):
        fast.reset(seed=k)
        ref.reset(seed=k)
        lockstep(fast, ref, rng, (preset, kind, k))
        res = fast.match_record()["deals"][-1]["result"]
        ends.add("passed" if res["contract"] is None else res["contract"]["double"])
    if fast.cfg.auction in ("bazar", "belote"):  # the bidding auctions: doubled or passed-out deals too
        assert len(ends) >= 2, ends


@pytest.mark.parametrize("preset", list(PRESETS))
def test_matches_identical_to_reference(preset):
    kw = {"episode": "match", "deal_rewards": True, "reward_scale": 0.01, "max_deals": 8}
    fast, ref = raw_env(preset, engine="compiled", **kw), raw_env(preset, engine="reference", **kw)
    rng = np.random.default_rng(3)
    for k in range(3):
        fast.reset(seed=100 + k)
        ref.reset(seed=100 + k)
        lockstep(fast, ref, rng, (preset, "match", k), check_state_every=11)
        assert len(fast.match_record()["deals"]) >= 1


@pytest.mark.parametrize("preset", ["bazar", "duel-app", "open"])
def test_reset_options_and_clones_identical_to_reference(preset):
    fast = raw_env(preset, engine="compiled", episode="match")
    ref = raw_env(preset, engine="reference", episode="match")
    fast.reset(seed=5)
    deal = {k: fast.record()[k] for k in ("dealer", "hands", "stock")}
    for e in (fast, ref):
        e.reset(seed=9, options={"deal": deal})
    rng = np.random.default_rng(1)
    for _ in range(25):  # mid-deal
        a = choose(fast, fast.observe(fast.agent_selection)["action_mask"], rng)
        fast.step(a)
        ref.step(a)
    # snapshots move between the two paths, and deep copies continue identically
    f2 = raw_env(preset, engine="compiled", episode="match")
    r2 = raw_env(preset, engine="reference", episode="match")
    f2.set_state(ref.get_state())
    r2.set_state(fast.get_state())
    for x, y, seed in ((fast, ref, 1), (f2, r2, 2), (copy.deepcopy(fast), copy.deepcopy(ref), 3)):
        lockstep(x, y, np.random.default_rng(seed), (preset, "clone", seed), check_state_every=13)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_illegal_actions_raise_the_reference_errors(preset):
    fast, ref = raw_env(preset, engine="compiled"), raw_env(preset, engine="reference")
    rng = np.random.default_rng(0)
    for k in range(4):
        fast.reset(seed=k)
        ref.reset(seed=k)
        while not any(fast.terminations.values()):
            mask = fast.observe(fast.agent_selection)["action_mask"]
            bad = [int(a) for a in np.flatnonzero(mask == 0)[:3]] + [fast.layout.num_actions, -1, 10**30]
            for a in bad:
                errs = []
                row = fast.deal.row.copy()
                for e in (fast, ref):
                    before = e.game_state
                    with pytest.raises(IllegalActionError) as ei:
                        e.step(a)
                    assert e.game_state == before
                    errs.append(str(ei.value))
                assert np.array_equal(fast.deal.row, row)  # the compiled row is untouched too
                assert errs[0] == errs[1]
            a = choose(fast, mask, rng)
            fast.step(a)
            ref.step(a)
        same_bookkeeping(fast, ref, (preset, k))


def test_observations_of_earlier_steps_are_not_overwritten():
    e = raw_env("bazar")
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    kept = []
    while not any(e.terminations.values()):
        o = e.observe(e.agent_selection)
        kept.append((o, o["observation"].copy(), o["action_mask"].copy()))
        e.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))  # uniform: rarely passed out
    assert len(kept) > 20
    for o, obs, mask in kept:
        assert np.array_equal(o["observation"], obs) and np.array_equal(o["action_mask"], mask)


def _pz_stack(raw, illegal_reward):
    """PettingZoo's own classic stack (no blot_env.wrappers subclasses)."""
    return pzw.OrderEnforcingWrapper(pzw.AssertOutOfBoundsWrapper(pzw.TerminateIllegalWrapper(raw, illegal_reward)))


@pytest.mark.parametrize("preset", ["bazar", "duel"])
def test_wrapped_env_matches_pettingzoo_wrappers_on_the_reference(preset):
    """``env()`` (fast raw env, fast wrappers) against PettingZoo's wrappers around the reference
    path, with legal moves, an illegal move (the episode ends with the penalty), dead steps and
    out-of-space actions."""
    rng = np.random.default_rng(7)
    penalized = 0
    for k in range(6):
        fast = env(preset, illegal_reward=-3.0)
        ref = _pz_stack(raw_env(preset, engine="reference"), -3.0)
        for e in (fast, ref):
            with pytest.raises(AttributeError, match="before reset"):
                e.last()
            e.reset(seed=k)
        illegal_at = int(rng.integers(5, 40)) if k % 2 else -1
        for i, agent in enumerate(fast.agent_iter(10_000)):
            assert agent == ref.agent_selection
            obs, rew, term, trunc, info = fast.last()
            robs, *rest = ref.last()
            assert (rew, term, trunc, info) == tuple(rest)
            assert np.array_equal(obs["observation"], robs["observation"])
            assert np.array_equal(obs["action_mask"], robs["action_mask"])
            if term or trunc:
                a = None
            elif i == illegal_at:
                a = int(np.flatnonzero(obs["action_mask"] == 0)[0])
            else:
                a = choose(fast.unwrapped, obs["action_mask"], rng)
                if i % 9 == 4:  # out of the action space: refused, the deal untouched (ours with a
                    # clear IllegalActionError, PettingZoo's stack with its bare assertion)
                    for e, err, msg in ((fast, IllegalActionError, r"action id outside 0\.\."),
                                        (ref, AssertionError, "action is not in action space")):
                        with pytest.raises(err, match=msg):
                            e.step(fast.unwrapped.layout.num_actions + 1)
                a = np.int64(a) if i % 3 == 0 else a
            fast.step(a)
            ref.step(a)
            assert fast.agents == ref.agents and fast.agent_selection == ref.agent_selection
            assert fast.rewards == ref.rewards and fast.terminations == ref.terminations
            if i == illegal_at:
                penalized += 1
                assert fast.rewards[agent] == -3.0 and all(fast.terminations.values())
        assert not fast.agents and not ref.agents
    assert penalized >= 2


@pytest.mark.parametrize("preset", list(PRESETS))
def test_deal_random_is_new_deal_of_its_shuffle(preset):
    """``engine.deal_random`` builds the state directly (no checks but Open Blot's): the same
    state, and the same RNG draws, as ``new_deal`` of one shuffle of the deck's card ids."""
    from blot_env.cards import cards_of
    from blot_env.engine import deal_random, deck_mask, new_deal
    from blot_env.variants import has_piles

    cfg = make_rules(preset)
    n, k = cfg.num_players, cfg.hand_size
    for seed in range(25):
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        for dealer in range(n):
            cards = np.array(cards_of(deck_mask(cfg)))
            r1.shuffle(cards)
            chunks = [tuple(int(c) for c in cards[s * k:(s + 1) * k]) for s in range(n)]
            hands = [sum(1 << c for c in ch) for ch in chunks]
            want = new_deal(cfg, dealer, hands, tuple(int(c) for c in cards[n * k:]),
                            tuple(chunks) if has_piles(cfg) else None)
            got = deal_random(cfg, r2, dealer)
            assert got == want and type(got.seat) is type(want.seat)
        assert r1.integers(1 << 40) == r2.integers(1 << 40)
    with pytest.raises(ValueError, match="dealer must be a seat"):
        deal_random(cfg, np.random.default_rng(0), n)


def _pz_stack_of(raw, illegal_reward):
    """PettingZoo's own classic stack, without TerminateIllegalWrapper for ``illegal_reward=None``."""
    inner = raw if illegal_reward is None else pzw.TerminateIllegalWrapper(raw, illegal_reward)
    return pzw.OrderEnforcingWrapper(pzw.AssertOutOfBoundsWrapper(inner))


@pytest.mark.parametrize("illegal_reward", [None, -2.0])
def test_wrapped_short_paths_match_pettingzoo_wrappers(illegal_reward):
    """The short paths of ``blot_env.wrappers.OrderEnforcingWrapper`` (``last``, a legal step,
    a dead step) against PettingZoo's wrapper classes: with and without TerminateIllegal, with
    observations of other agents in between, ``last(observe=False)`` before a step, numpy ids,
    illegal ids (penalty, or the raw env's IllegalActionError) and clones taken mid-episode."""
    rng = np.random.default_rng(11)
    for k in range(4):
        fast = env("bazar", illegal_reward=illegal_reward)
        ref = _pz_stack_of(raw_env("bazar", engine="reference"), illegal_reward)
        assert fast._fused
        fast.reset(seed=k)
        ref.reset(seed=k)
        illegal_at = int(rng.integers(3, 30)) if k % 2 else -1
        clone = None
        for i, agent in enumerate(fast.agent_iter(10_000)):
            assert agent == ref.agent_selection
            if i % 7 == 3:  # an observation of another agent first: not the one the mask check uses
                other = fast.possible_agents[(fast.possible_agents.index(agent) + 1) % 4]
                assert np.array_equal(fast.observe(other)["observation"], ref.observe(other)["observation"])
            if i % 11 == 5:
                assert fast.last(observe=False)[1:] == ref.last(observe=False)[1:]
                obs = fast.unwrapped.observe(agent)
                ref.unwrapped.observe(agent)
                term, trunc = fast.terminations[agent], fast.truncations[agent]
            else:
                obs, rew, term, trunc, info = fast.last()
                robs, *rest = ref.last()
                assert (rew, term, trunc, info) == tuple(rest)
                assert np.array_equal(obs["action_mask"], robs["action_mask"])
            if term or trunc:
                a = None
            elif i == illegal_at:
                a = int(np.flatnonzero(obs["action_mask"] == 0)[0])
                if illegal_reward is None:
                    for e in (fast, ref):
                        with pytest.raises(IllegalActionError):
                            e.step(a)
                    a = choose(fast.unwrapped, obs["action_mask"], rng)
            else:
                a = choose(fast.unwrapped, obs["action_mask"], rng)
                a = np.int64(a) if i % 5 == 0 else a
            if i == 20:
                clone = (copy.deepcopy(fast), i)
            fast.step(a)
            ref.step(a)
            assert fast.agents == ref.agents and fast.agent_selection == ref.agent_selection
            assert fast.rewards == ref.rewards and fast.terminations == ref.terminations
            assert fast._cumulative_rewards == ref._cumulative_rewards and fast.infos == ref.infos
        assert not fast.agents and not ref.agents
        if clone is not None:  # the clone's short paths use the clone's own wrappers
            c = clone[0]
            assert c._fused and c._raw is c.unwrapped is not fast.unwrapped
            if illegal_reward is not None:
                assert c._term is c.env.env is not fast._term
            while c.agents:
                o, _, term, trunc, _ = c.last()
                c.step(None if term or trunc else int(np.flatnonzero(o["action_mask"])[0]))


def test_short_paths_only_around_the_classic_stack():
    """A wrapper of the user's between the inner wrappers (or a subclass) turns the short
    paths off: every call then goes through each wrapper."""
    from blot_env.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper, TerminateIllegalWrapper

    calls = []

    class Spy(pzw.BaseWrapper):
        def step(self, action):
            calls.append(("step", action))
            super().step(action)

        def observe(self, agent):
            calls.append(("observe", agent))
            return super().observe(agent)

    class MyAssert(AssertOutOfBoundsWrapper):
        pass

    assert env("bazar")._fused and env("bazar", illegal_reward=None)._fused
    assert env("bazar")._has_step_live

    class LoggedStep(raw_env):  # a subclass's own step is called, not the raw env's inner one
        def step(self, action):
            calls.append(("raw step", action))
            super().step(action)

    from blot_env.wrappers import classic_stack

    w = classic_stack(LoggedStep("bazar"), -1.0)
    assert w._fused and not w._has_step_live
    w.reset(seed=0)
    a = int(np.flatnonzero(w.last()[0]["action_mask"])[0])
    w.step(a)
    assert calls == [("raw step", a)]
    calls.clear()
    assert not OrderEnforcingWrapper(MyAssert(raw_env("bazar")))._fused
    w = OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(Spy(raw_env("bazar")), -1.0)))
    assert not w._fused
    w.reset(seed=0)
    agent = w.agent_selection
    o = w.last()[0]
    a = int(np.flatnonzero(o["action_mask"])[0])
    w.step(a)
    assert calls == [("observe", agent), ("step", a)]
