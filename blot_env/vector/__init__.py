"""Vector environments over the batched engine (docs/vector.md).

* :class:`BlotVectorEnv`: a ``gymnasium.vector.VectorEnv`` of B deals on
  :class:`blot_env.batched.BatchedEngine`; the learner plays some seats, opponents
  (:mod:`blot_env.vector.opponents`) the others, batched. Registered for every preset as
  ``blot_env/<Preset>-v0`` (``gymnasium.make_vec("blot_env/Bazar-v0", num_envs=256)``; ids
  from :func:`vector_id`).
* :class:`blot_env.vector.sb3.BlotSB3VecEnv`: the same as a Stable-Baselines3 ``VecEnv``
  (import that module explicitly; SB3 is optional).
* :class:`SelfPlayVector`: every seat of every env, the seat to act's observation and mask,
  one action per env (the PPO trainer's interface), on the batched or the reference engine.
* :class:`blot_env.integrations.torchrl.BlotBatchedEnv`: TorchRL, ``batch_size=[B]``.
"""

from __future__ import annotations

from ..gym_env import vector_id
from .gym_vector import BlotVectorEnv, learner_seats
from .opponents import (
    ENTRY_POINT_GROUP,
    Opponent,
    OpponentBatch,
    PolicyOpponent,
    RandomOpponent,
    resolve_opponent,
)
from .selfplay import SelfPlayVector, VecStep

__all__ = [
    "ENTRY_POINT_GROUP",
    "BlotVectorEnv",
    "Opponent",
    "OpponentBatch",
    "PolicyOpponent",
    "RandomOpponent",
    "SelfPlayVector",
    "VecStep",
    "learner_seats",
    "resolve_opponent",
    "vector_id",
]
