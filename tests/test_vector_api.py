"""BlotVectorEnv's API: errors, partial resets, buffers, opponents from the entry points."""

from __future__ import annotations

import numpy as np
import pytest

from blot_env.errors import ConfigError, IllegalActionError
from blot_env.vector import BlotVectorEnv, OpponentBatch, resolve_opponent
from blot_env.vector.opponents import ENTRY_POINT_GROUP


def _first_legal(mask: np.ndarray) -> np.ndarray:
    return np.asarray(mask, dtype=bool).argmax(axis=1)


def test_an_illegal_learner_action_names_env_action_seat_and_rule():
    env = BlotVectorEnv(num_envs=5, preset="bazar")
    _, info = env.reset(seed=3)
    a = _first_legal(env.action_masks())
    bad = int(np.flatnonzero(~env.action_masks()[3])[-1])
    a[3] = bad
    with pytest.raises(IllegalActionError) as ei:
        env.step(a)
    msg = str(ei.value)
    assert "env 3" in msg and f"seat {int(info['seat'][3])}" in msg and "rules.md" in msg
    assert env.layout.describe(bad) in msg and "legal:" in msg
    a[3] = env.num_actions  # outside the action space
    with pytest.raises(IllegalActionError, match=r"env 3: action id outside 0\.\."):
        env.step(a)
    with pytest.raises(IllegalActionError, match="integer action ids"):
        env.step(a.astype(np.float64))
    with pytest.raises(ValueError, match="one action id per env"):
        env.step(a[:4])
    # the refused steps changed nothing: the same legal step still works
    env.step(_first_legal(env.action_masks()))


def test_bad_arguments_are_named():
    with pytest.raises(RuntimeError, match="reset"):
        BlotVectorEnv(num_envs=2).step(np.zeros(2, np.int64))
    for kwargs, word in [({"num_envs": 0}, "num_envs"), ({"seats": (0, 1)}, "both sides"), ({"seats": 4}, "no seat"),
                         ({"seats": (0, 0)}, "repeats"), ({"episode": "game"}, "episode"),
                         ({"observation_kind": "pixels"}, "observation_kind"), ({"reward_scale": float("nan")},
                                                                                "reward_scale"),
                         ({"dealer": 7}, "dealer"), ({"max_deals": 0}, "max_deals"), ({"copy": 1}, "copy"),
                         ({"opponents": {1: "random"}}, "seat 3"), ({"opponents": ["random"] * 3}, "one per seat"),
                         ({"opponents": 42}, "an opponent must be"),
                         ({"opponents": "no-such-agent"}, "unknown opponent"),
                         ({"preset": "poker"}, "poker")]:
        with pytest.raises(ConfigError, match=word):
            BlotVectorEnv(**{"num_envs": 2, **kwargs})
    env = BlotVectorEnv(num_envs=2)
    with pytest.raises(ConfigError, match="reset_mask"):
        env.reset(options={"reset_mask": [True]})
    with pytest.raises(ConfigError, match="seed"):
        env.reset(seed=-1)


def test_an_opponent_that_returns_an_illegal_action_is_named():
    def stubborn(obs, mask):
        return np.full(len(obs), mask.shape[1] - 1)  # the last id: never legal at the start

    env = BlotVectorEnv(num_envs=3, preset="bazar", opponents=stubborn)
    with pytest.raises(IllegalActionError, match="opponent stubborn"):
        env.reset(seed=0)
        for _ in range(5):
            env.step(_first_legal(env.action_masks()))


def test_reset_mask_restarts_only_those_envs_and_copy_false_shares_buffers():
    env = BlotVectorEnv(num_envs=4, preset="duel", copy=False)
    obs, _ = env.reset(seed=1)
    assert not obs["observation"].flags.writeable
    before = np.array(obs["observation"])
    for _ in range(3):
        obs, *_ = env.step(_first_legal(obs["action_mask"]))
    mid = np.array(obs["observation"])
    obs, _ = env.reset(options={"reset_mask": np.array([True, False, False, False])})
    np.testing.assert_array_equal(obs["observation"][1:], mid[1:])
    assert not np.array_equal(obs["observation"][0], before[0])  # deal 2 of env 0, not deal 1 again
    copied = BlotVectorEnv(num_envs=4, preset="duel")
    o, _ = copied.reset(seed=1)
    assert o["observation"].flags.writeable and o["observation"].dtype == np.float32
    assert o["action_mask"].dtype == np.int8 and copied.action_masks().dtype == bool
    np.testing.assert_array_equal(o["observation"], before)


def test_records_and_final_obs_can_be_left_out():
    env = BlotVectorEnv(num_envs=8, preset="duel-app", final_obs=False)
    obs, _ = env.reset(seed=0)
    ends = 0
    for _ in range(40):
        obs, r, term, _, info = env.step(_first_legal(obs["action_mask"]))
        assert "final_obs" not in info and "deal_record" not in info
        if term.any():
            ends += int(term.sum())
            fin = info["final_info"]
            assert (fin["_score"] == term).all()
            np.testing.assert_array_equal(r[term], (fin["score"][term, 0] - fin["score"][term, 1]).astype(float))
            assert (fin["length"][term] >= 1).all()
    assert ends > 0


def test_names_and_policy_files_come_from_the_entry_point():
    from importlib.metadata import entry_points

    if not any(ep.name == "agents" for ep in entry_points(group=ENTRY_POINT_GROUP)):
        pytest.skip("the project is not installed with its entry points (pip install -e .)")
    from blot_env import make_rules

    rules = make_rules("bazar")
    opp = resolve_opponent("rules", rules)
    assert type(opp).__name__ == "AgentOpponent"
    env = BlotVectorEnv(num_envs=3, preset="bazar", opponents="rules", records=True)
    obs, _ = env.reset(seed=2)
    for _ in range(30):
        obs, *_ = env.step(_first_legal(obs["action_mask"]))
    pytest.importorskip("torch")
    from agents.ppo.agent import load_ppo_agent
    from agents.registry import make_agent

    net = resolve_opponent("ppo", rules, "observation")
    assert type(net).__name__ == "NetworkOpponent"  # acts batched
    # its batched actions are the policy file's agent's, env by env
    env = BlotVectorEnv(num_envs=6, preset="bazar", opponents="ppo")
    env.reset(seed=5)
    seen: list[tuple[OpponentBatch, list]] = []
    real = env.opponents[0].act
    env.opponents[0].act = lambda batch: seen.append((batch, batch.views())) or real(batch)  # views: now
    for _ in range(4):
        env.step(_first_legal(env.action_masks()))
    agent = load_ppo_agent("ppo", rules)
    rng = np.random.default_rng(0)
    for batch, views in seen:
        np.testing.assert_array_equal(net.act(batch), [agent.act(v, rng) for v in views])
    assert type(resolve_opponent("ppo", rules, "information_state")).__name__ == "AgentOpponent"  # other kind
    assert make_agent("rules", rules).name  # the registry itself is untouched


@pytest.mark.parametrize("preset", ["bazar", "duel"])
def test_copy_true_observations_stay_the_caller_s(preset):
    a = BlotVectorEnv(num_envs=16, preset=preset)
    b = BlotVectorEnv(num_envs=16, preset=preset, copy=False)
    oa, _ = a.reset(seed=4)
    ob, _ = b.reset(seed=4)
    kept = []
    for t in range(60):
        np.testing.assert_array_equal(oa["observation"], ob["observation"])
        np.testing.assert_array_equal(oa["action_mask"], ob["action_mask"])
        assert oa["observation"].flags.writeable and not ob["observation"].flags.writeable
        act = a.engine.random_actions().copy()
        b.engine.random_actions()  # the same draws in both engines (the random opponents' stream)
        oa = a.step(act)[0]
        ob = b.step(act)[0]
        kept.append((oa["observation"], oa["observation"].copy()))
        if t == 30:  # a partial reset writes the engine's rows again: not into a returned array
            m = np.zeros(16, dtype=bool)
            m[::3] = True
            oa, _ = a.reset(options={"reset_mask": m})
            ob, _ = b.reset(options={"reset_mask": m})
    for held, snapshot in kept:
        np.testing.assert_array_equal(held, snapshot)
    assert len({id(h) for h, _ in kept}) == len(kept)
