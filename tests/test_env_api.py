"""The PettingZoo AEC env: API conformance for every preset, rewards, errors, determinism, cloning."""

from __future__ import annotations

import copy
import itertools
import random
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, seed_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import blot_env
from blot_env import PRESETS
from blot_env.env import env, env_id, make, parallel_env, raw_env
from blot_env.errors import IllegalActionError
from blot_env.record import replay_record

PRESET_IDS = list(PRESETS)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def play(e, rng: np.random.Generator, max_steps: int = 100_000) -> list[tuple[str, int]]:
    """Random legal play through the AEC loop; returns the (agent, action) list."""
    out = []
    for agent in e.agent_iter(max_steps):
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        out.append((agent, a))
        e.step(a)
    return out


@pytest.mark.parametrize("preset", PRESET_IDS)
@pytest.mark.parametrize("episode", ["deal", "match"])
def test_pettingzoo_api(preset, episode):
    api_test(env(preset, episode=episode), num_cycles=400)
    seed_test(lambda: env(preset, episode=episode), num_cycles=400)
    parallel_api_test(parallel_env(preset, episode=episode), num_cycles=400)


@pytest.mark.parametrize("preset", PRESET_IDS)
@pytest.mark.parametrize("kind", ["information_state", "observation_voids"])
def test_other_observation_kinds_api(preset, kind):
    api_test(env(preset, observation_kind=kind), num_cycles=200)


@pytest.mark.parametrize("preset", PRESET_IDS)
def test_random_deals_rewards_results_records(preset):
    """Many deals: zero-sum score-difference rewards, result in infos, record replays to it."""
    e = raw_env(preset)
    rng = np.random.default_rng(5)
    n = e.cfg.num_players
    for k in range(12):
        e.reset(seed=k)
        total = dict.fromkeys(e.possible_agents, 0.0)
        result = None
        for agent in e.agent_iter():
            obs, rew, term, trunc, info = e.last()
            total[agent] += rew
            if term or trunc:
                result = info["deal_result"]
                # observe works for every agent after the end, masks are all zero
                for a in e.possible_agents:
                    o = e.observe(a)
                    assert o["action_mask"].sum() == 0
                    assert e.observation_space(a).contains(o)
                e.step(None)
                continue
            mask = obs["action_mask"]
            assert mask.sum() > 0
            for other in e.possible_agents:
                if other != agent:
                    assert e.observe(other)["action_mask"].sum() == 0
            e.step(int(rng.choice(np.flatnonzero(mask))))
        diff = result["score"][0] - result["score"][1]
        assert sum(total.values()) == 0
        for a in e.possible_agents:
            assert total[a] == (diff if e.seat_of(a) % 2 == 0 else -diff)
        rec = e.record()
        _, replayed = replay_record(rec)
        assert replayed == result
        assert len(e.possible_agents) == n


def test_reward_scale():
    a, b = raw_env("bazar-app"), raw_env("bazar-app", reward_scale=0.01)
    for e in (a, b):
        e.reset(seed=3)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    ra, rb = {}, {}
    for e, rng, r in ((a, rng_a, ra), (b, rng_b, rb)):
        for agent in e.agent_iter():
            obs, rew, term, trunc, _ = e.last()
            r[agent] = r.get(agent, 0.0) + rew
            e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    for k in ra:
        assert rb[k] == pytest.approx(ra[k] * 0.01)


def test_passed_out_deal_ends_with_zero_reward():
    e = raw_env("bazar")
    e.reset(seed=0)
    for _ in range(4):
        e.step(e.parse("pass"))
    assert all(e.terminations.values())
    assert all(r == 0 for r in e.rewards.values())
    info = e.infos["player_0"]["deal_result"]
    assert info["contract"] is None and info["score"] == [0, 0]


def test_match_episode_sums_deals_and_pays_plus_minus_one():
    e = raw_env("bazar-app", episode="match", deal_rewards=True, reward_scale=0.001)
    e.reset(seed=2)
    rng = np.random.default_rng(2)
    deal_scores, total = [], dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, rew, term, trunc, _info = e.last()
        total[agent] += rew
        if term or trunc:
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if "deal_result" in e.infos.get(agent, {}):
            deal_scores.append(tuple(e.infos[agent]["deal_result"]["score"]))
    m = e.match_state
    assert m.over and len(deal_scores) == m.num_deals
    assert m.totals == tuple(map(sum, zip(*deal_scores)))
    deal_part = 0.001 * sum(a - b for a, b in deal_scores)
    for a in e.possible_agents:
        side = e.seat_of(a) % 2
        expect = (1.0 if side == m.winner else -1.0) + (deal_part if side == 0 else -deal_part)
        assert total[a] == pytest.approx(expect)
    rec = e.match_record()
    assert rec["format"] == "blot-match/1" and len(rec["deals"]) == m.num_deals and rec["winner"] == m.winner
    # dealer rotation: each deal's dealer is the previous one's next seat
    dealers = [d["dealer"] for d in rec["deals"]]
    assert all((b - a) % 4 == 1 for a, b in itertools.pairwise(dealers))


def test_illegal_action_raw_raises_with_rule():
    e = raw_env("bazar")
    e.reset(seed=0)
    seat = e.seat_of(e.agent_selection)
    with pytest.raises(IllegalActionError) as ei:
        e.step(e.parse("play JH"))
    err = ei.value
    assert err.seat == seat and err.action == "play JH" and "rules.md" in str(err)
    with pytest.raises(IllegalActionError):
        e.step(None)
    with pytest.raises(IllegalActionError):
        e.step(10_000)


@pytest.mark.parametrize("bad", [1.5, "play JH", True, np.float64(2.0), np.array([1]), None])
def test_non_integer_actions_are_refused_with_a_pointer_to_parse(bad):
    from blot_env.engine import apply_action

    e = raw_env("bazar")
    e.reset(seed=0)
    before = e.game_state
    with pytest.raises(IllegalActionError) as ei:
        e.step(bad)
    assert e.game_state is before
    if bad is not None:
        assert "env.parse" in str(ei.value)
        with pytest.raises(IllegalActionError, match=r"env\.parse"):
            apply_action(before, bad)
    # numpy integers are ids like any other
    legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
    e.step(np.int64(legal[0]))
    assert e.game_state is not before


@pytest.mark.parametrize("preset", ["bazar", "belote"])
def test_custom_rules_value_plays_a_full_deal_and_its_record_replays(preset):
    from blot_env.rules_config import RulesConfig

    base = PRESETS[preset]
    cfg = RulesConfig(**{f: getattr(base, f) for f in base.__dataclass_fields__} | {"preset": "mine",
                                                                                      "declarations": "auto"})
    e = raw_env(rules=cfg)
    for seed in range(3):
        e.reset(seed=seed)
        play(e, np.random.default_rng(seed))
        rec = e.record()
        assert rec["preset"] == "mine" and rec["rules"]["declarations"] == "auto"
        state, result = replay_record(rec)
        assert state.cfg == cfg and result == rec["result"]
        assert e.match_record()["deals"][-1] == rec


def test_rules_value_with_overrides_applies_them():
    base = PRESETS["bazar"]
    e = raw_env(rules=base, target=301)
    assert e.cfg.target == 301 and e.cfg.declarations == base.declarations
    with pytest.raises(blot_env.errors.ConfigError):
        raw_env(rules=base, no_such_knob=1)


def test_illegal_action_wrapped_terminates_with_penalty():
    e = env("bazar", illegal_reward=-5.0)
    e.reset(seed=0)
    mover = e.agent_selection
    e.step(e.parse("play JH"))
    assert all(e.terminations.values())
    _, _rew, term, _, _ = e.last()
    assert term
    assert e.rewards[mover] == -5.0
    e2 = env("bazar", illegal_reward=None)
    e2.reset(seed=0)
    with pytest.raises(IllegalActionError):
        e2.step(e2.parse("play JH"))


def test_describe_parse_and_ids():
    e = env("bazar")
    assert e.describe(e.parse("bid 9H")) == "bid 9H"
    assert e.parse("play 10S") == e.parse("play TS")
    assert env_id("duel-app") == "duel_app_blot_v0"
    for p in PRESET_IDS:
        m = make(env_id(p))
        m.reset(seed=0)
        assert m.unwrapped.cfg.preset == p
        pz = pettingzoo.make("aec", f"blot/{env_id(p)}")
        assert pz.unwrapped.cfg.preset == p
    with pytest.raises(blot_env.errors.ConfigError):
        make("nope_blot_v0")


def _trajectory(e, seed: int, steps: int):
    rng = np.random.default_rng(seed)
    out = []
    for agent in e.agent_iter(steps):
        obs, rew, term, trunc, info = e.last()
        out.append((agent, obs["observation"].copy(), obs["action_mask"].copy(), rew, term, trunc, repr(info)))
        if term or trunc:
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


def _same(t1, t2):
    assert len(t1) == len(t2)
    for x, y in zip(t1, t2):
        assert x[0] == y[0] and x[3:] == y[3:]
        assert np.array_equal(x[1], y[1]) and np.array_equal(x[2], y[2])


@pytest.mark.parametrize("preset", PRESET_IDS)
def test_determinism_under_global_rng_interference(preset):
    trajs = []
    for g in (1, 2):
        random.seed(g)
        np.random.seed(g)
        e = env(preset, episode="match")
        e.reset(seed=123)
        np.random.random(g * 7)
        random.random()
        trajs.append(_trajectory(e, seed=9, steps=300))
    _same(*trajs)


@pytest.mark.parametrize("preset", PRESET_IDS)
@pytest.mark.parametrize("how", ["deepcopy", "get_state"])
def test_clone_gives_identical_continuation(preset, how):
    e = raw_env(preset, episode="match")
    e.reset(seed=4)
    _trajectory(e, seed=1, steps=37)  # mid-deal (and RNG advanced)
    if how == "deepcopy":
        clone = copy.deepcopy(e)
    else:
        clone = raw_env(preset, episode="match")
        clone.set_state(e.get_state())
    _same(_trajectory(e, seed=2, steps=400), _trajectory(clone, seed=2, steps=400))


def test_deepcopy_of_wrapped_env():
    e = env("bazar", episode="match")
    e.reset(seed=4)
    _trajectory(e, seed=1, steps=20)
    _same(_trajectory(copy.deepcopy(e), seed=3, steps=200), _trajectory(e, seed=3, steps=200))


@pytest.mark.parametrize("preset", PRESET_IDS)
def test_reset_options_deal(preset):
    e = raw_env(preset)
    e.reset(seed=0)
    first = e.record()
    deal = {k: first[k] for k in ("dealer", "hands", "stock")}
    e.reset(seed=99, options={"deal": deal})
    assert e.record() == first


def test_reset_option_dealer_and_order_enforcing():
    e = raw_env("bazar")
    e.reset(options={"dealer": 2})
    assert e.game_state.dealer == 2
    assert e.agent_selection == "player_3"
    w = env("bazar")
    assert isinstance(w, pettingzoo.utils.wrappers.OrderEnforcingWrapper)
    with pytest.raises(AttributeError, match="before reset"):
        _ = w.agents
    w.reset(seed=0)
    assert w.agents == w.unwrapped.agents and w.agent_selection == w.unwrapped.agent_selection


@pytest.mark.parametrize("preset", PRESET_IDS)
def test_state_vector(preset):
    e = raw_env(preset)
    e.reset(seed=1)
    x = e.state()
    assert x.dtype == np.float32 and e.state_space.contains(x)
    _trajectory(e, seed=1, steps=30)
    assert e.state_space.contains(e.state())


def test_render_ansi():
    e = raw_env("bazar", render_mode="ansi", render_all_hands=True)
    e.reset(seed=0)
    text = e.render()
    assert "auction" in text and "hand" in text and "[debug] seat 3" in text
    _trajectory(e, seed=0, steps=400)
    assert "deal score" in e.render()
    quiet = raw_env("bazar", render_mode="ansi")
    quiet.reset(seed=0)
    assert "[debug]" not in quiet.render()


def test_parallel_conversion_plays():
    par = turn_based_aec_to_parallel(env("duel"))
    obs, _ = par.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    while par.agents:
        actions = {}
        for a in par.agents:
            m = obs[a]["action_mask"]
            actions[a] = int(rng.choice(np.flatnonzero(m))) if m.any() else 0
        obs, _rew, _term, _trunc, _infos = par.step(actions)
        steps += 1
    assert steps > 10


def test_unknown_agent_and_step_after_the_episode_give_clear_errors():
    e = raw_env("duel")
    e.reset(seed=0)
    with pytest.raises(KeyError, match=r"unknown agent 'player_9'.*player_0, player_1"):
        e.observe("player_9")
    rng = np.random.default_rng(0)
    while e.agents:
        a = e.agent_selection
        if e.terminations[a] or e.truncations[a]:
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(e.observe(a)["action_mask"]))))
    with pytest.raises(RuntimeError, match="call reset"):
        e.step(0)
    e.reset(seed=1)  # and the env is usable again
    assert e.agents == ["player_0", "player_1"]


@pytest.mark.parametrize("kwargs, needle", [
    ({"dealer": "0"}, "dealer must be a seat 0..3, got '0'"),
    ({"dealer": True}, "dealer must be a seat 0..3, got True"),
    ({"render_seat": 9}, "render_seat must be a seat 0..3, got 9"),
    ({"reward_scale": "1"}, "reward_scale must be a finite number, got '1'"),
    ({"reward_scale": float("nan")}, "reward_scale must be a finite number, got nan"),
    ({"deal_rewards": "no"}, "deal_rewards must be True or False, got 'no'"),
    ({"render_all_hands": "False"}, "render_all_hands must be True or False, got 'False'"),
    ({"max_deals": 0}, "max_deals must be an integer of at least 1, got 0"),
    ({"max_deals": "5"}, "max_deals must be an integer of at least 1, got '5'"),
    ({"illegal_reward": "x"}, "illegal_reward must be a finite number, got 'x'"),
])
def test_bad_constructor_arguments_are_named(kwargs, needle):
    from blot_env.errors import ConfigError

    with pytest.raises(ConfigError) as ei:
        env("bazar", **kwargs)
    assert needle in str(ei.value)
    assert env("bazar", dealer=np.int64(1), render_seat=np.int64(2), reward_scale=np.float32(0.5),
                deal_rewards=np.bool_(True), max_deals=np.int64(3)).unwrapped.fixed_dealer == 1


@pytest.mark.parametrize("seed, options, needle", [
    ("a", None, "seed must be None or a non-negative integer, got 'a'"),
    (-1, None, "seed must be None or a non-negative integer, got -1"),
    (1.5, None, "seed must be None or a non-negative integer, got 1.5"),
    (True, None, "seed must be None or a non-negative integer, got True"),
    (0, [1], "reset options must be a dict with the keys ['dealer', 'deal'] (or None), got list"),
    (0, {"dealer": "1"}, "options[\"dealer\"] must be a seat 0..3, got '1'"),
    (0, {"dealer": 4}, "options[\"dealer\"] must be a seat 0..3, got 4"),
    (0, {"deal": "x"}, "options[\"deal\"] must be a dict {\"dealer\", \"hands\", \"stock\"}"),
    (0, {"deal": {"hands": []}}, "options[\"deal\"][\"dealer\"] must be a seat 0..3, got None"),
    (0, {"deal": {"dealer": 0}}, 'field "hands": expected a list of 4 card strings'),
])
def test_bad_reset_seeds_and_options_are_named(seed, options, needle):
    from blot_env.errors import BlotError

    e = raw_env("bazar")
    with pytest.raises(BlotError) as ei:
        e.reset(seed=seed, options=options)
    assert needle in str(ei.value)
    e.reset(seed=np.int64(3), options={"dealer": np.int64(1)})  # numpy integers are integers
    assert e.game_state.dealer == 1


def test_unknown_agent_spaces_and_use_before_reset_are_clear():
    e = raw_env("duel")
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\): call reset\(\) first"):
        e.step(0)
    with pytest.raises(RuntimeError, match=r"observe\(\) before reset\(\)"):
        e.observe("player_0")
    for space in (e.observation_space, e.action_space):
        with pytest.raises(KeyError, match=r"unknown agent 'player_2'; this env's agents are player_0, player_1"):
            space("player_2")
        with pytest.raises(KeyError, match="unknown agent 0;"):
            space(0)
