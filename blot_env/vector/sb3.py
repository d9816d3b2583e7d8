"""``BlotSB3VecEnv``: the batched engine as a Stable-Baselines3 ``VecEnv``.

Runs on :class:`blot_env.batched.BatchedEngine`, through :class:`~blot_env.vector.BlotVectorEnv`
(same learner seats, opponents, rewards and episodes; docs/vector.md). Importing this module
imports Stable-Baselines3 (``pip install stable-baselines3`` or ``sb3-contrib``); ``import
blot_env`` and ``import blot_env.vector`` never do.

sb3-contrib's ``MaskablePPO`` trains on it directly: the env answers
``env_method("action_masks")`` (and ``action_masks()``) with the legal actions of every env::

    from sb3_contrib import MaskablePPO
    from blot_env.vector.sb3 import BlotSB3VecEnv

    venv = BlotSB3VecEnv(num_envs=64, preset="bazar", opponents="random")
    MaskablePPO("MultiInputPolicy", venv, n_steps=64).learn(100_000)
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from .gym_vector import BlotVectorEnv


class BlotSB3VecEnv(VecEnv):
    """B deals as an SB3 ``VecEnv`` on :class:`blot_env.batched.BatchedEngine` (module docstring).

    Args:
        num_envs: B.
        preset: the rules preset.
        seed: seed of the first reset (``VecEnv.seed(s)`` sets the next one; SB3's
            per-env seeds ``s + i`` become one seed, ``s``, for the whole batch).
        dict_observations: observations as the Dict ``{"observation", "action_mask"}``
            (default; SB3's ``MultiInputPolicy``), or ``False``: the observation vector only,
            a ``Box`` (``MlpPolicy``; the masks still come from ``action_masks()``).
        **kwargs: :class:`~blot_env.vector.BlotVectorEnv`'s arguments (``seats``,
            ``opponents``, ``episode``, ``observation_kind``, ``reward_scale``, ``records`` ...).

    Observations: ``{"observation": float32[B, D], "action_mask": int8[B, A]}`` (copies), or
    ``float32[B, D]`` with ``dict_observations=False``.
    ``step_wait`` returns ``(obs, rewards float32[B], dones bool[B], infos)``, SB3's
    convention: a done env's observation is already the next episode's first one, and its
    ``infos[e]`` holds ``"terminal_observation"`` (the last one), ``"episode"`` (``{"r":
    return, "l": learner decisions, "t": seconds since the env was built}``, as SB3's
    ``Monitor`` writes it) and ``"TimeLimit.truncated"`` (match mode after ``max_deals``).
    ``action_masks()`` and ``env_method("action_masks")`` give ``bool`` masks.

    Raises:
        ConfigError: a bad argument of :class:`~blot_env.vector.BlotVectorEnv`;
        IllegalActionError (``step``): an action that is not legal (env, action, seat, rule).
    """

    def __init__(self, num_envs: int = 64, preset: str = "bazar", seed: int | None = None,
                 dict_observations: bool = True, **kwargs: Any) -> None:
        kwargs.setdefault("final_obs", True)
        self.venv = BlotVectorEnv(num_envs=num_envs, preset=preset, copy=True, **kwargs)
        self.render_mode = None
        self.dict_observations = bool(dict_observations)
        space = self.venv.single_observation_space
        super().__init__(self.venv.num_envs, space if self.dict_observations else space["observation"],
                         self.venv.single_action_space)
        self._actions: np.ndarray | None = None
        self._first_seed = seed
        self._t0 = time.perf_counter()

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> Any:
        seed = self._seeds[0] if self._seeds[0] is not None else self._first_seed
        self._first_seed = None
        obs, _ = self.venv.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs if self.dict_observations else obs["observation"]

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        obs, rew, term, trunc, info = self.venv.step(actions)
        dones = term | trunc
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(dones)
        if ended.size:
            fin = info["final_info"]
            final = info.get("final_obs")
            t = round(time.perf_counter() - self._t0, 6)
            for e in ended:
                d = infos[e]
                if final is not None:
                    d["terminal_observation"] = final[e] if self.dict_observations else final[e]["observation"]
                d["episode"] = {"r": float(fin["return"][e]), "l": int(fin["length"][e]), "t": t}
                d["TimeLimit.truncated"] = bool(trunc[e] and not term[e])
        for key in ("deal_record", "deal_result"):
            if key in info:
                for e in np.flatnonzero(info["_" + key]):
                    infos[e][key] = info[key][e]
        return (obs if self.dict_observations else obs["observation"]), rew.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """``bool[B, A]``: the legal actions of every env's learner seat to act."""
        return self.venv.action_masks()

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The vector env's attribute ``attr_name``, once per index (the envs share one engine).

        Raises:
            AttributeError: no such attribute.
        """
        value = getattr(self.venv, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set ``attr_name`` on the vector env (for every env at once: they share one engine)."""
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``"action_masks"``: the ``bool[A]`` mask of each env in ``indices``; another method
        of the vector env is called once and its result repeated per index."""
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.venv.action_masks()
            return [masks[i] for i in idx]
        value = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [value for _ in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


__all__ = ["BlotSB3VecEnv"]
