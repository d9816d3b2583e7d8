"""TorchRL adapter: ``PettingZooWrapper(blot_env.env(...), use_mask=True)`` with groups per team.

``pip install -e ".[torchrl]"`` (after ``pip install torch==2.13.0``; docs/integrations.md).
Importing this module imports TorchRL; ``import blot_env`` never does.

The wrapped env is TorchRL's own ``torchrl.envs.libs.pettingzoo.PettingZooWrapper`` around the
AEC env, grouped per team (``team_0`` = seats 0 and 2, ``team_1`` = seats 1 and 3; 2-player
presets: one seat per group). Per group ``g`` a step's tensordict holds
``(g, "observation", "observation")`` ``float32[k, D]``, ``(g, "action_mask")`` ``bool[k, A]``
(the acting agent's legal actions; all True for the others), ``(g, "mask")`` ``bool[k]``
(True only for the agent to act, since the env is turn-based), ``(g, "action")`` ``int64[k]``
and, after ``step``, ``("next", g, "reward")`` ``float32[k, 1]``. The action spec's mask is
updated every step, so ``env.rand_action()`` and ``env.rollout(...)`` without a policy play
uniformly random *legal* actions. Every agent receives its reward in the step that ends the
deal (``("next", g, "reward")``; score-sheet units times ``reward_scale``).

Turn-based data need one more step before TorchRL's losses: :func:`acting_transitions` keeps,
for each step, only the agent that acted and attaches its Monte-Carlo return (the sum of its
own rewards to the end of the episode), which is what integrations/torchrl/masked_ppo.py
trains on with TorchRL's ``ClipPPOLoss`` and ``MaskedCategorical``.

:class:`BlotBatchedEnv` is the batched alternative: the batched engine
(:class:`blot_env.batched.BatchedEngine`, through :class:`blot_env.vector.BlotVectorEnv`) as a
TorchRL ``EnvBase`` with ``batch_size=[B]``, one learner side against opponents, an
``"action_mask"`` entry for ``torchrl.modules.MaskedCategorical`` (docs/vector.md "TorchRL").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Binary, Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase
from torchrl.envs.libs.pettingzoo import PettingZooWrapper

from blot_env.env import env as blot_aec_env
from blot_env.vector import BlotVectorEnv


def team_group_map(num_players: int) -> dict[str, list[str]]:
    """``{"team_0": ["player_0", "player_2"], "team_1": ["player_1", "player_3"]}`` (teams are seat % 2)."""
    return {f"team_{t}": [f"player_{s}" for s in range(num_players) if s % 2 == t] for t in (0, 1)}


def make_env(preset: str = "bazar", seed: int | None = None, illegal_reward: float | None = None,
             **env_kwargs: Any) -> PettingZooWrapper:
    """TorchRL env of a preset: ``PettingZooWrapper(blot_env.env(preset, ...), use_mask=True,
    group_map=team_group_map(n))``.

    Args:
        preset: rules preset; ``env_kwargs`` go to :func:`blot_env.env` (``reward_scale``,
            ``episode``, ``observation_kind``, rules overrides ...).
        seed: seed of the first reset (TorchRL's ``env.set_seed`` reseeds later).
        illegal_reward: ``None`` (default): an illegal action raises ``IllegalActionError``;
            a number: PettingZoo's ``TerminateIllegalWrapper`` ends the deal with that reward.
    """
    aec = blot_aec_env(preset=preset, illegal_reward=illegal_reward, **env_kwargs)
    n = len(aec.possible_agents)
    return PettingZooWrapper(aec, use_mask=True, group_map=team_group_map(n), categorical_actions=True, seed=seed)


def acting_agent(td: TensorDictBase, group_map: dict[str, list[str]]) -> tuple[str, int] | None:
    """(group, index in group) of the agent whose ``mask`` is set in a root step ``td``
    (``None`` if no agent is to act, e.g. in a terminal observation)."""
    for g in group_map:
        m = td.get((g, "mask"))
        if bool(m.any()):
            return g, int(m.nonzero()[0, 0])
    return None


def acting_transitions(batch: TensorDictBase, group_map: dict[str, list[str]],
                       extra_keys: tuple[str, ...] = ()) -> TensorDict:
    """Flatten a turn-based rollout ``batch`` (shape ``[T]``, one env) into the acting agents'
    transitions with Monte-Carlo returns.

    For step ``t`` and agent ``(g, i)`` the return is ``G_t = r_t + G_{t+1}`` restarted at
    every ``("next", "done")`` (undiscounted: deals are short and rewards come at the end).
    Steps after the last ``done`` of the batch (an unfinished deal) are dropped.

    Returns a TensorDict ``[N]`` with ``observation`` ``float32[N, D]``, ``action_mask``
    ``bool[N, A]``, ``action`` ``int64[N]``, ``return`` ``float32[N, 1]``, ``group`` (0/1),
    ``index`` (agent within its group), ``step`` (``t``) and any ``extra_keys`` taken per
    group from ``(g, key)`` (e.g. ``"action_log_prob"``).
    """
    if batch.ndim != 1:
        raise ValueError(f"acting_transitions needs a [T] rollout of one env, got batch size {tuple(batch.shape)}")
    done = batch.get(("next", "done")).reshape(-1)
    if not bool(done.any()):
        return TensorDict({}, batch_size=[0])
    last = int(done.nonzero()[-1, 0])
    out: dict[str, list[torch.Tensor]] = {k: [] for k in ("observation", "action_mask", "action", "return",
                                                         "group", "index", "step", *extra_keys)}
    for gi, g in enumerate(group_map):
        rew = batch.get(("next", g, "reward"))[: last + 1, :, 0]  # [T, k]
        ret = torch.zeros_like(rew)
        acc = torch.zeros(rew.shape[1])
        for t in range(last, -1, -1):
            if bool(done[t]):
                acc = torch.zeros_like(acc)
            acc = rew[t] + acc
            ret[t] = acc
        mask = batch.get((g, "mask"))[: last + 1]  # [T, k]
        ts, idx = mask.nonzero(as_tuple=True)
        out["observation"].append(batch.get((g, "observation", "observation"))[ts, idx])
        out["action_mask"].append(batch.get((g, "action_mask"))[ts, idx])
        out["action"].append(batch.get((g, "action"))[ts, idx])
        out["return"].append(ret[ts, idx].unsqueeze(-1))
        out["group"].append(torch.full_like(ts, gi))
        out["index"].append(idx)
        out["step"].append(ts)
        for k in extra_keys:
            out[k].append(batch.get((g, k))[ts, idx])
    cat = {k: torch.cat(v) for k, v in out.items()}
    order = torch.argsort(cat["step"])
    return TensorDict({k: v[order] for k, v in cat.items()}, batch_size=[len(order)])


class BlotBatchedEnv(EnvBase):
    """B deals on :class:`blot_env.batched.BatchedEngine` as a TorchRL ``EnvBase``, ``batch_size=[B]``.

    Runs :class:`blot_env.vector.BlotVectorEnv` (same learner seats, opponents, rewards and
    episodes; docs/vector.md) and speaks TorchRL's protocol: ``step`` returns the last
    observation of an episode that ends (``("next", "done")`` set) and a following
    ``reset`` (``rollout`` and ``step_and_maybe_reset`` pass ``"_reset"``) starts the next
    one, which the vector env has already dealt, so a partial reset costs nothing.

    Args:
        num_envs: B.
        preset: the rules preset.
        seed: seed of the first reset (``set_seed`` sets the next one).
        device: where the tensors are put (the engine runs on the CPU).
        **kwargs: :class:`~blot_env.vector.BlotVectorEnv`'s arguments (``seats``,
            ``opponents``, ``episode``, ``observation_kind``, ``reward_scale`` ...).

    Tensordict entries (B envs, D observation entries, A actions): ``"observation"``
    ``float32[B, D]``, ``"action_mask"`` ``bool[B, A]`` (legal actions of the learner seat
    to act; all False in a final observation), ``"action"`` ``int64[B]`` (an action id,
    ``Categorical(A)`` whose mask follows the legal actions, so ``rand_action`` plays legal
    moves), ``("next", "reward")`` ``float32[B, 1]`` (score-sheet units times
    ``reward_scale``), ``"done"``/``"terminated"``/``"truncated"`` ``bool[B, 1]``.
    ``torchrl.modules.MaskedCategorical(logits=..., mask=td["action_mask"])`` samples legal
    actions.

    Raises:
        ConfigError: a bad argument of the vector env; IllegalActionError (``step``): an
            action that is not legal (env, action, seat, rule).
    """

    def __init__(self, num_envs: int = 64, preset: str = "bazar", seed: int | None = None,
                 device: torch.device | str = "cpu", **kwargs: Any) -> None:
        venv = BlotVectorEnv(num_envs=num_envs, preset=preset, final_obs=True, copy=True, **kwargs)
        B, D, A = venv.num_envs, venv.obs_size, venv.num_actions
        super().__init__(batch_size=torch.Size([B]), device=device)
        self.venv = venv
        hi = torch.as_tensor(venv.single_observation_space["observation"].high).expand(B, D).clone()
        self.observation_spec = Composite(
            observation=Bounded(low=torch.zeros(B, D), high=hi, shape=(B, D), dtype=torch.float32, device=device),
            action_mask=Binary(n=A, shape=(B, A), dtype=torch.bool, device=device),
            shape=(B,), device=device)
        self.action_spec = Categorical(n=A, shape=(B,), dtype=torch.int64, device=device)
        self.reward_spec = Unbounded(shape=(B, 1), dtype=torch.float32, device=device)
        self.done_spec = Composite(
            done=Categorical(n=2, shape=(B, 1), dtype=torch.bool, device=device),
            terminated=Categorical(n=2, shape=(B, 1), dtype=torch.bool, device=device),
            truncated=Categorical(n=2, shape=(B, 1), dtype=torch.bool, device=device),
            shape=(B,), device=device)
        self._seed = seed
        self._started = False
        self._pending = np.zeros(B, dtype=bool)  # envs whose next episode is dealt but not shown yet
        self._obs: dict[str, np.ndarray] | None = None  # the vector env's current observations

    def _tensors(self, obs: np.ndarray, mask: np.ndarray) -> dict[str, torch.Tensor]:
        return {"observation": torch.from_numpy(obs).to(self.device),
                "action_mask": torch.from_numpy(mask).to(self.device)}

    def _flags(self, term: np.ndarray, trunc: np.ndarray) -> dict[str, torch.Tensor]:
        t = torch.from_numpy(term.reshape(-1, 1)).to(self.device)
        u = torch.from_numpy(trunc.reshape(-1, 1)).to(self.device)
        return {"done": t | u, "terminated": t, "truncated": u}

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        B = self.venv.num_envs
        reset = None if tensordict is None else tensordict.get("_reset", None)
        if reset is None or not self._started:
            obs, _ = self.venv.reset(seed=self._seed)
            self._seed = None
            self._started = True
            self._pending[:] = False
            self._obs = obs
        else:
            rows = reset.reshape(B).cpu().numpy()
            fresh = rows & ~self._pending  # mid-episode: abandon it and start another
            if fresh.any():
                self._obs, _ = self.venv.reset(options={"reset_mask": fresh})
            self._pending[rows] = False
        mask = self._obs["action_mask"].astype(bool)
        self.action_spec.update_mask(torch.from_numpy(mask).to(self.device))
        zeros = np.zeros(B, dtype=bool)
        return TensorDict({**self._tensors(self._obs["observation"], mask), **self._flags(zeros, zeros)},
                          batch_size=self.batch_size, device=self.device)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        actions = tensordict.get("action").reshape(-1).cpu().numpy()
        obs, rew, term, trunc, info = self.venv.step(actions)
        self._obs = obs
        done = term | trunc
        shown_obs = obs["observation"]
        shown_mask = obs["action_mask"].astype(bool)
        if done.any():  # show the episodes' last observations; the next ones wait for reset
            shown_obs, shown_mask = shown_obs.copy(), shown_mask.copy()
            for e in np.flatnonzero(done):
                final = info["final_obs"][e]
                shown_obs[e] = final["observation"]
                shown_mask[e] = final["action_mask"].astype(bool)
            self._pending |= done
        self.action_spec.update_mask(torch.from_numpy(shown_mask | done[:, None]).to(self.device))
        out = {**self._tensors(shown_obs, shown_mask), **self._flags(term, trunc),
               "reward": torch.from_numpy(rew.astype(np.float32).reshape(-1, 1)).to(self.device)}
        return TensorDict(out, batch_size=self.batch_size, device=self.device)

    def _set_seed(self, seed: int | None) -> None:
        """The seed of the next full reset (the deals, the random opponents)."""
        self._seed = seed
        self._started = False


__all__ = ["BlotBatchedEnv", "acting_agent", "acting_transitions", "make_env", "team_group_map"]
