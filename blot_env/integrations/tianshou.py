"""Tianshou (2.x) adapter: ``tianshou.env.PettingZooEnv`` and the multi-agent algorithm manager.

``pip install -e ".[tianshou]"`` (after ``pip install torch==2.13.0``; docs/integrations.md).
Importing this module imports Tianshou; ``import blot_env`` never does.

Tianshou's ``PettingZooEnv`` turns the AEC env into a single-stream env whose observation is
``Batch(agent_id, obs float32[D], mask bool[A])`` and whose reward is a vector with one entry
per agent (the env's per-step ``rewards``, so every seat's deal reward is in the vector of the
step that ends the deal). ``MultiAgentOffPolicyAlgorithm`` routes each step to the algorithm of
the agent to act; its masked random algorithm and ``DQN`` (``DiscreteQLearningPolicy`` masks
Q-values with ``obs.mask``) both respect the action mask.

Known limitation (Tianshou's MARL design, not the env): a transition is stored only for the
agent that acted, with that agent's entry of the reward vector; the final reward of the other
seats (who did not make the last move) is not credited to their last transitions, and a
transition's ``obs_next`` is the next agent's observation. So the multi-agent path is fine for
masked rollouts and evaluation, not for learning. To learn with Tianshou, use the
single-agent view (:func:`make_single_agent_env`: one learning seat, the other seats played
inside the env, every reward reaches the learner), as integrations/tianshou/dqn_duel.py does;
for self-play training prefer RLlib, TorchRL or agents/ppo.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.env import PettingZooEnv
from tianshou.utils.net.common import Net

from blot_env.env import env as blot_aec_env


class BlotTianshouEnv(PettingZooEnv):
    """Tianshou's ``PettingZooEnv`` with an empty ``info`` in every step.

    The AEC env's final ``info`` holds the deal record's result (with nulls, e.g. the contract
    of a passed-out deal), which Tianshou's replay buffer would store and read as NaN. The
    info of the last step is kept in :attr:`last_info` instead; the reward vector is copied
    (Tianshou's wrapper returns one list that it mutates in place).
    """

    last_info: dict = {}  # noqa: RUF012 (replaced per step)

    def reset(self, *args: Any, **kwargs: Any) -> tuple[dict, dict]:
        obs, info = super().reset(*args, **kwargs)
        self.last_info = dict(info or {})
        return obs, {}

    def step(self, action: Any) -> tuple[dict, list[float], bool, bool, dict]:
        obs, rew, term, trunc, info = super().step(action)
        self.last_info = dict(info or {})
        return obs, list(rew), term, trunc, {}


def make_env(preset: str = "duel", illegal_reward: float | None = None, **env_kwargs: Any) -> BlotTianshouEnv:
    """:class:`BlotTianshouEnv` (``tianshou.env.PettingZooEnv``) around ``blot_env.env(preset, ...)``.

    ``illegal_reward=None`` (default): an illegal action raises ``IllegalActionError``
    (masking must prevent it). Other keyword arguments go to :func:`blot_env.env`.
    """
    return BlotTianshouEnv(blot_aec_env(preset=preset, illegal_reward=illegal_reward, **env_kwargs))


class MaskedObsEnv(gym.Wrapper):
    """Single-agent :class:`blot_env.BlotGymEnv` with ``Dict(obs=Box(float32, (D,)), mask=Box(bool, (A,)))``
    observations, the form Tianshou's masked policies read (``batch.obs.obs``, ``batch.obs.mask``).

    One seat learns; the other seats are played inside the env by ``opponents`` (see
    :class:`blot_env.gym_env.BlotGymEnv`), so every reward reaches the learner: the setting in
    which Tianshou's single-agent algorithms train correctly. ``info`` is always ``{}`` (see
    :class:`BlotTianshouEnv`); the last one is kept in :attr:`last_info`.
    """

    def __init__(self, env: gym.Env):
        super().__init__(env)
        inner = env.observation_space
        self.observation_space = gym.spaces.Dict({
            "obs": inner, "mask": gym.spaces.Box(0, 1, (int(env.action_space.n),), dtype=bool)})
        self.last_info: dict = {}

    def _wrap(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {"obs": obs, "mask": self.env.unwrapped.action_masks()}

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self.last_info = dict(info)
        return self._wrap(obs), {}

    def step(self, action: Any):
        obs, rew, term, trunc, info = self.env.step(int(action))
        self.last_info = dict(info)
        return self._wrap(obs), rew, term, trunc, {}


def make_single_agent_env(preset: str = "duel", seat: int | str = "random", opponents: Any = "random",
                          **env_kwargs: Any) -> MaskedObsEnv:
    """:class:`MaskedObsEnv` around ``BlotGymEnv(preset, seat, opponents, illegal_reward=None, ...)``
    (an illegal learner action raises)."""
    from blot_env.gym_env import BlotGymEnv

    return MaskedObsEnv(BlotGymEnv(preset, seat=seat, opponents=opponents, illegal_reward=None, **env_kwargs))


def random_algorithm(env: PettingZooEnv) -> MARLRandomDiscreteMaskedOffPolicyAlgorithm:
    """Tianshou's masked uniform-random algorithm for one agent."""
    return MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space)


def dqn_algorithm(env: gym.Env, hidden: tuple[int, ...] = (256, 256), lr: float = 1e-3, gamma: float = 1.0,
                  eps_training: float = 0.1, target_update_freq: int = 100) -> DQN:
    """A masked double-DQN (Q-values of illegal actions are pushed below all others) for the
    single-agent :class:`MaskedObsEnv` or one agent of :class:`BlotTianshouEnv`."""
    space = env.observation_space
    obs_dim = int((space["obs"] if "obs" in space.spaces else space["observation"]).shape[0])
    net = Net(state_shape=obs_dim, action_shape=int(env.action_space.n), hidden_sizes=list(hidden))
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=eps_training,
                                     eps_inference=0.0)
    return DQN(policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=gamma, target_update_freq=target_update_freq)


def multi_agent(env: PettingZooEnv, algorithms: list[Any]) -> MultiAgentOffPolicyAlgorithm:
    """One algorithm per agent (``env.agents`` order: player_0, player_1, ...)."""
    return MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env)


def set_threads(n: int = 1) -> None:
    """Small nets on a laptop: one torch thread is fastest."""
    torch.set_num_threads(n)


__all__ = ["BlotTianshouEnv", "MaskedObsEnv", "dqn_algorithm", "make_env", "make_single_agent_env", "multi_agent",
           "random_algorithm", "set_threads"]
