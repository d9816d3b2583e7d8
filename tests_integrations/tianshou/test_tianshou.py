"""Tianshou integration (runs in .venv-torchrl; scripts/ci_integrations.sh).

The multi-agent ``PettingZooEnv`` path (masks, reward vector of the final step, masked random
agents through a ``Collector``) and the single-agent DQN example.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from common import ROOT, engine_mask, expected_deal_rewards
from tianshou.data import Collector
from tianshou.env import DummyVectorEnv

from blot_env.integrations.tianshou import (
    dqn_algorithm,
    make_env,
    make_single_agent_env,
    multi_agent,
    random_algorithm,
)


@pytest.mark.parametrize("preset", ["bazar", "duel"])
def test_multi_agent_env_masks_and_final_rewards(preset):
    env = make_env(preset, reward_scale=0.02)
    raw = env.env.unwrapped
    n = len(env.agents)
    rng = np.random.default_rng(0)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        while True:
            assert obs["agent_id"] == raw.agent_selection
            np.testing.assert_array_equal(np.asarray(obs["mask"]), engine_mask(raw))
            obs, rew, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
            if term or trunc:
                break
        want = expected_deal_rewards(env.last_info["deal_result"], n, 0.02)
        assert list(rew) == pytest.approx(want), "the final reward vector pays every seat"


def test_collector_with_masked_random_agents():
    env = make_env("bazar")
    algo = multi_agent(env, [random_algorithm(env) for _ in env.agents])
    collector = Collector(algo, DummyVectorEnv([lambda: make_env("bazar") for _ in range(2)]))
    collector.reset()
    stats = collector.collect(n_episode=12)  # an illegal action would raise in the env
    returns = np.asarray(stats.returns)
    assert returns.shape == (12, 4)
    np.testing.assert_allclose(returns.sum(axis=1), 0.0, atol=1e-9)  # zero-sum
    np.testing.assert_allclose(returns[:, 0], returns[:, 2])  # partners share the reward


def test_single_agent_env_and_dqn_masks():
    env = make_single_agent_env("duel")
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs) and obs["mask"].any()
    algo = dqn_algorithm(env)
    collector = Collector(algo, DummyVectorEnv([lambda: make_single_agent_env("duel")]))
    collector.reset()
    stats = collector.collect(n_episode=5)  # DQN's masked argmax: an illegal action would raise
    assert stats.n_collected_episodes == 5


def test_dqn_example_runs():
    cmd = [sys.executable, str(ROOT / "integrations" / "tianshou" / "dqn_duel.py"), "--epochs", "1",
           "--steps-per-epoch", "200", "--test-episodes", "10"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(x) for x in proc.stdout.strip().splitlines() if x.startswith("{")]
    assert [x["phase"] for x in lines] == ["before", "after"]
    assert all(np.isfinite(x["mean_reward"]) for x in lines)
