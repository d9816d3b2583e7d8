#!/usr/bin/env python
"""Tianshou 2.x on a blot preset: a masked DQN learns one seat against random opponents.

    python integrations/tianshou/dqn_duel.py [--preset duel] [--epochs 5] [--steps-per-epoch 2000]

Tianshou pieces: ``DQN`` with ``DiscreteQLearningPolicy`` (Q-values masked by ``obs.mask``),
``Collector``, ``VectorReplayBuffer``, ``DummyVectorEnv`` and ``OffPolicyTrainerParams``, on
:func:`blot_env.integrations.tianshou.make_single_agent_env` (the learner's seat is drawn per
deal; the other seats play uniformly random legal actions inside the env). Prints the
learner's mean deal reward (score-sheet units x ``--reward-scale``) over ``--test-episodes``
deals before and after training, one JSON line each.

Why single-agent: Tianshou's multi-agent dispatcher credits a turn-based terminal reward only
to the agent that made the last move (see :mod:`blot_env.integrations.tianshou`); the
multi-agent ``PettingZooEnv`` path is tested for masked rollouts, not used for learning.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OffPolicyTrainerParams

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from blot_env.integrations.tianshou import dqn_algorithm, make_single_agent_env  # noqa: E402


def mean_reward(collector: Collector, episodes: int, seed: int) -> tuple[float, float]:
    """(mean, standard error) of the learner's episode reward over ``episodes`` deals (greedy)."""
    collector.reset(gym_reset_kwargs={"seed": seed})  # seeds the first deal; later deals follow from it
    stats = collector.collect(n_episode=episodes)
    r = np.asarray(stats.returns, dtype=float).reshape(-1)
    return float(r.mean()), float(r.std(ddof=1) / np.sqrt(len(r)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="duel")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--steps-per-epoch", type=int, default=2000, help="learner steps per epoch")
    ap.add_argument("--test-episodes", type=int, default=300)
    ap.add_argument("--reward-scale", type=float, default=0.02)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--updates-per-step", type=float, default=1.0, help="gradient steps per collected env step")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Tianshou's epsilon-greedy exploration draws from NumPy's global RNG
    torch.set_num_threads(1)

    def env_fn():
        return make_single_agent_env(args.preset, reward_scale=args.reward_scale)

    algo = dqn_algorithm(env_fn(), lr=args.lr, gamma=1.0, eps_training=0.1, target_update_freq=200)
    train_envs = DummyVectorEnv([env_fn for _ in range(4)])
    test_envs = DummyVectorEnv([env_fn])
    buffer = VectorReplayBuffer(20_000, len(train_envs))
    train_collector = Collector(algo, train_envs, buffer, exploration_noise=True)
    test_collector = Collector(algo, test_envs)
    t0 = time.perf_counter()
    m, se = mean_reward(test_collector, args.test_episodes, seed=10_000 + args.seed)
    print(json.dumps({"phase": "before", "mean_reward": round(m, 4), "stderr": round(se, 4)}), flush=True)
    train_collector.reset()
    train_collector.collect(n_step=1000)
    algo.run_training(OffPolicyTrainerParams(
        training_collector=train_collector, test_collector=None, max_epochs=args.epochs,
        epoch_num_steps=args.steps_per_epoch, batch_size=64,
        # 16 env steps per collection: with --updates-per-step <= 1 that is < 20 gradient steps
        # per update step, below which Tianshou draws no progress bar
        collection_step_num_env_steps=16,
        update_step_num_gradient_steps_per_sample=args.updates_per_step, show_progress=False, verbose=False))
    m, se = mean_reward(test_collector, args.test_episodes, seed=10_000 + args.seed)
    print(json.dumps({"phase": "after", "mean_reward": round(m, 4), "stderr": round(se, 4),
                      "learner_steps": args.epochs * args.steps_per_epoch,
                      "wall_s": round(time.perf_counter() - t0, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
