"""Rollouts: N deals stepped in lockstep, per-seat trajectories, an opponent pool, and GAE.

The stepping of the deals sits behind one interface (``reset`` / ``step`` with fixed-shape
arrays): :class:`BatchedVector` over the compiled :class:`blot_env.batched.BatchedEngine`
(``rollout.engine: batched``, the default) or :class:`EngineVector` over a Python list of
reference states (``rollout.engine: reference``).

Trajectories are **per seat**: a learner seat's next state is its own next decision, and
the deal's reward goes to each seat's last decision of the deal. The reward of a seat is
``(own side's deal score - the opponents')`` in score-sheet units (rules.md 2.5; tp for the
Armenian presets) times ``RolloutConfig.reward_scale``. Every rollout ends on deal
boundaries, so no trajectory is ever cut and nothing needs bootstrapping.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import torch

from blot_env.actions import layout_for
from blot_env.engine import apply_action, current_seat, deal_random, deal_result, is_terminal
from blot_env.rules_config import RulesConfig
from blot_env.scoring import DealResult, side_score_difference
from blot_env.state import State
from blot_env.view import SeatView, seat_view

from ..base import reset_agent
from .config import PoolConfig, RolloutConfig
from .distributions import MaskedCategorical
from .network import ActorCritic

LEARNER = -1
"""Controller id of the learning policy in a deal's per-seat controller array."""


def make_encoder(rules: RulesConfig, kind: str):
    """The observation encoder of ``blot_env.observation`` for ``rules`` (``.size``, ``.encode(view)``)."""
    from blot_env.observation import ObservationEncoder

    return ObservationEncoder(rules, kind)


# --------------------------------------------------------------------------- engine vector


class VecStep(NamedTuple):
    """What :class:`BatchedVector` and :class:`EngineVector` return after ``reset``/``step``
    (N = ``num_envs``, n = seats).

    ``obs float32[N, D]`` and ``mask bool[N, A]``: the acting seat's egocentric observation and
    legal actions (stale rows where ``seat == -1``); ``seat int64[N]``: seat to act, -1 for an
    env with no deal in progress; ``rewards float32[N, n]``: per seat, own side's deal score
    minus the opponents' (score-sheet units, unscaled) for deals that ended at this step, else 0;
    ``done bool[N]``: a deal ended at this step.
    """

    obs: np.ndarray
    mask: np.ndarray
    seat: np.ndarray
    rewards: np.ndarray
    done: np.ndarray


class EngineVector:
    """``num_envs`` deals of one rules config stepped in lockstep (a Python list of states).

    An env with a finished deal stays idle (``seat == -1``) until ``reset`` deals it a new
    one, so a caller can stop on deal boundaries. ``views[e]`` is the acting seat's
    :class:`SeatView` (baseline agents read it).
    """

    def __init__(self, rules: RulesConfig, encoder: Any, num_envs: int):
        self.rules, self.encoder, self.num_envs = rules, encoder, num_envs
        self.num_seats = rules.num_players
        self.num_actions = layout_for(rules).num_actions
        self.states: list[State | None] = [None] * num_envs
        self.views: list[SeatView | None] = [None] * num_envs
        self.results: list[Any] = [None] * num_envs
        """Per env: the DealResult of its last finished deal."""
        self.obs = np.zeros((num_envs, encoder.size), dtype=np.float32)
        self.mask = np.zeros((num_envs, self.num_actions), dtype=bool)
        self.seat = np.full(num_envs, -1, dtype=np.int64)

    def _refresh(self, e: int) -> None:
        s = self.states[e]
        seat = current_seat(s)
        v = seat_view(s, seat)
        self.views[e] = v
        self.seat[e] = seat
        self.obs[e] = self.encoder.encode(v)
        self.mask[e] = False
        self.mask[e, list(v.legal)] = True

    def _out(self, rewards: np.ndarray, done: np.ndarray) -> VecStep:
        return VecStep(self.obs, self.mask, self.seat, rewards, done)

    def reset(self, envs: Sequence[int], rng: np.random.Generator) -> VecStep:
        """Deal new random deals (random dealer) in ``envs``, drawing cards from ``rng``."""
        for e in envs:
            dealer = int(rng.integers(self.num_seats))
            self.states[e] = deal_random(self.rules, rng, dealer)
            self._refresh(e)
        return self._out(np.zeros((self.num_envs, self.num_seats), np.float32), np.zeros(self.num_envs, bool))

    def step(self, actions: np.ndarray) -> VecStep:
        """Apply ``actions int64[N]`` in every env with a deal in progress (others are ignored).

        Raises:
            IllegalActionError: an action is not legal for the seat to act.
        """
        rewards = np.zeros((self.num_envs, self.num_seats), np.float32)
        done = np.zeros(self.num_envs, bool)
        for e in np.flatnonzero(self.seat >= 0):
            s = apply_action(self.states[e], int(actions[e]))
            self.states[e] = s
            if is_terminal(s):
                res = deal_result(s)
                self.results[e] = res
                for seat in range(self.num_seats):
                    rewards[e, seat] = side_score_difference(res.score, seat)
                done[e] = True
                self.seat[e] = -1
                self.views[e] = None
            else:
                self._refresh(e)
        return self._out(rewards, done)


class BatchedVector:
    """:class:`EngineVector`'s interface over :class:`blot_env.batched.BatchedEngine` (compiled).

    The engine runs with ``autoreset=False``: a finished row goes idle (``seat == -1``, a
    mask allowing action 0 only) until :meth:`reset` deals it again. Each deal is shuffled
    from a key drawn from the ``rng`` given to :meth:`reset` (so the trainer's generator,
    saved in its checkpoints, stays the only source of randomness and resumes exactly).
    ``views[e]`` and ``results[e]`` are built on demand from the row (only baseline agents
    and statistics read them).
    """

    def __init__(self, rules: RulesConfig, kind: str, num_envs: int) -> None:
        from blot_env.batched import BatchedEngine

        self.rules, self.num_envs = rules, num_envs
        self.num_seats = rules.num_players
        self.eng = BatchedEngine(rules=rules, num_envs=num_envs, obs_kind=kind, seed=0, autoreset=False)
        self.eng.release_rows(np.arange(num_envs))
        self.num_actions = self.eng.num_actions
        self.obs = self.eng.buffers().obs
        self.views = _RowViews(self.eng)
        self.results = _RowResults(self.eng)

    def _out(self, b, rewards: np.ndarray | None = None, done: np.ndarray | None = None) -> VecStep:
        return VecStep(b.obs, b.action_mask.view(np.bool_), b.seat, b.reward if rewards is None else rewards,
                       b.done if done is None else done)

    def reset(self, envs: Sequence[int], rng: np.random.Generator) -> VecStep:
        """Deal new deals in ``envs``, each shuffled from a key drawn from ``rng``; like
        :meth:`EngineVector.reset`, the returned rewards and done flags are zeros."""
        envs = np.asarray(envs, dtype=np.int64)
        keys = rng.integers(0, np.iinfo(np.int64).max, size=envs.size, dtype=np.int64).astype(np.uint64)
        out = self.eng.reset_rows(envs, keys)
        return self._out(out, np.zeros((self.num_envs, self.num_seats), np.float32), np.zeros(self.num_envs, bool))

    def step(self, actions: np.ndarray) -> VecStep:
        """Apply ``actions int64[N]`` in every busy row (idle rows ignore theirs)."""
        return self._out(self.eng.step(actions))


class _RowViews:
    def __init__(self, eng):
        self.eng = eng

    def __getitem__(self, e: int) -> SeatView:
        return seat_view(self.eng.state(int(e)), int(self.eng.buffers().seat[e]))


class _RowResults:
    def __init__(self, eng):
        self.eng = eng

    def __getitem__(self, e: int) -> DealResult | None:
        return self.eng.deal_result(int(e))


def make_vector(rules: RulesConfig, encoder: Any, num_envs: int,
                engine: str = "batched") -> BatchedVector | EngineVector:
    """The deal vector of the collector: :class:`BatchedVector` or :class:`EngineVector`."""
    if engine == "batched":
        return BatchedVector(rules, encoder.kind, num_envs)
    return EngineVector(rules, encoder, num_envs)


# --------------------------------------------------------------------------- opponent pool


@dataclass
class PoolMember:
    """A frozen opponent: a baseline agent (``agent.act(view, rng)``) or a past policy snapshot."""

    name: str
    kind: str
    """"baseline" or "snapshot"."""
    net: ActorCritic | None = None
    seed: int = 0
    """Baselines: seed passed to ``agents.registry.make_agent`` for each per-env instance."""


class OpponentPool:
    """Past snapshots of the learner plus baseline agents from ``agents.registry``.

    Snapshots are deep copies (frozen, eval mode); the pool's snapshot weights are part of
    the trainer's checkpoint so that a resumed run draws the same opponents.
    """

    def __init__(self, cfg: PoolConfig, preset: str, seed: int):
        self.cfg = cfg
        self.preset = preset
        self.baselines = [PoolMember(name, "baseline", seed=seed + 1000 + i) for i, name in enumerate(cfg.baselines)]
        self.snapshots: list[PoolMember] = []
        self._agents: dict[tuple[str, int], Any] = {}
        for b in self.baselines:  # fail early on an unknown baseline name
            self.baseline_agent(b, 0)

    def baseline_agent(self, member: PoolMember, env: int) -> Any:
        """The baseline agent instance of ``member`` for env ``env`` (one per env: agents may cache per deal)."""
        key = (member.name, env)
        if key not in self._agents:
            from agents.registry import make_agent

            self._agents[key] = make_agent(member.name, self.preset, member.seed + 7919 * env)
        return self._agents[key]

    @property
    def members(self) -> list[PoolMember]:
        return self.baselines + self.snapshots

    def add_snapshot(self, name: str, policy: ActorCritic) -> None:
        """Add a frozen copy of ``policy``; drops the oldest beyond ``max_snapshots``."""
        if self.cfg.max_snapshots == 0:
            return
        net = copy.deepcopy(policy).eval()
        for p in net.parameters():
            p.requires_grad_(False)
        self.snapshots.append(PoolMember(name, "snapshot", net=net))
        del self.snapshots[:-self.cfg.max_snapshots]

    def sample(self, rng: np.random.Generator) -> int:
        """Index into ``members`` of an opponent for one deal."""
        nb, ns = len(self.baselines), len(self.snapshots)
        if ns == 0 or (nb > 0 and rng.random() < self.cfg.baseline_weight):
            if self.cfg.baseline_probs:
                w = np.asarray(self.cfg.baseline_probs, dtype=np.float64)
                return int(rng.choice(nb, p=w / w.sum()))
            return int(rng.integers(nb))
        return nb + int(rng.integers(ns))

    def state_dict(self) -> dict:
        return {"snapshots": [(m.name, m.net.state_dict()) for m in self.snapshots]}

    def load_state_dict(self, state: dict, template: ActorCritic) -> None:
        self.snapshots = []
        for name, sd in state["snapshots"]:
            net = copy.deepcopy(template)
            net.load_state_dict(sd)
            net.eval()
            for p in net.parameters():
                p.requires_grad_(False)
            self.snapshots.append(PoolMember(name, "snapshot", net=net))


# --------------------------------------------------------------------------- collection


@dataclass
class Rollout:
    """One batch of learner transitions (T of them), in collection order.

    ``next_idx[t]`` is the index of the same seat's next decision in the same deal (-1 at
    the deal's last decision, where ``dones[t]`` is 1 and ``rewards[t]`` holds the deal reward).
    """

    obs: np.ndarray
    """float32[T, D]"""
    masks: np.ndarray
    """bool[T, A]"""
    actions: np.ndarray
    """int64[T]"""
    logprobs: np.ndarray
    """float32[T]"""
    values: np.ndarray
    """float32[T]"""
    rewards: np.ndarray
    """float32[T] (scaled)"""
    dones: np.ndarray
    """float32[T]"""
    next_idx: np.ndarray
    """int64[T]"""
    stats: dict[str, float] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.actions)


class RolloutCollector:
    """Collects complete deals with the learner in some or all seats (see module docstring)."""

    def __init__(self, rules: RulesConfig, encoder: Any, cfg: RolloutConfig, pool: OpponentPool,
                 pool_cfg: PoolConfig):
        self.rules, self.cfg, self.pool, self.pool_cfg = rules, cfg, pool, pool_cfg
        self.vec = make_vector(rules, encoder, cfg.num_envs, cfg.engine)
        self.n = rules.num_players

    def _controllers(self, env: int, rng: np.random.Generator) -> np.ndarray:
        """Per seat: LEARNER or a pool member index, for one new deal in ``env``."""
        ctrl = np.full(self.n, LEARNER, dtype=np.int64)
        members = self.pool.members
        if members and rng.random() < self.pool_cfg.opponent_prob:
            k = self.pool.sample(rng)
            opp_team = int(rng.integers(2))
            ctrl[[s for s in range(self.n) if s % 2 == opp_team]] = k
            if members[k].kind == "baseline":
                reset_agent(self.pool.baseline_agent(members[k], env))
        return ctrl

    @torch.no_grad()
    def collect(self, policy: ActorCritic, num_deals: int, rng: np.random.Generator,
                gen: torch.Generator) -> Rollout:
        """Play ``num_deals`` complete deals; return the learner's transitions and statistics.

        ``rng`` draws deals, pool opponents and baseline actions; ``gen`` samples policy actions.
        """
        t0 = time.perf_counter()
        vec, N, n = self.vec, self.cfg.num_envs, self.n
        obs_l, mask_l, act_l, logp_l, val_l = [], [], [], [], []
        rew: list[float] = []
        done: list[float] = []
        nxt: list[int] = []
        last = np.full((N, n), -1, dtype=np.int64)  # last learner transition per (env, seat)
        ctrl = np.full((N, n), LEARNER, dtype=np.int64)
        first = list(range(min(N, num_deals)))
        for e in first:
            ctrl[e] = self._controllers(int(e), rng)
        started = len(first)
        out = vec.reset(first, rng)
        members = self.pool.members
        env_steps = 0
        deal_stats: list[tuple[int, float, float]] = []  # (member or -1, learner-side diff, passed out)
        while True:
            active = np.flatnonzero(out.seat >= 0)
            if len(active) == 0:
                break
            who = ctrl[active, out.seat[active]]
            actions = np.zeros(N, dtype=np.int64)
            lrn = active[who == LEARNER]
            if self.cfg.skip_forced and len(lrn):
                forced = out.mask[lrn].sum(axis=1) == 1
                if forced.any():
                    actions[lrn[forced]] = out.mask[lrn[forced]].argmax(axis=1)
                    lrn = lrn[~forced]
            if len(lrn):
                o = torch.from_numpy(out.obs[lrn])
                m = torch.from_numpy(out.mask[lrn])
                logits, value = policy(o)
                dist = MaskedCategorical(logits, m)
                a = dist.sample(gen)
                logp = dist.log_prob(a)
                a_np = a.numpy()
                actions[lrn] = a_np
                base = len(act_l)
                obs_l.append(out.obs[lrn].copy())
                mask_l.append(out.mask[lrn].copy())
                act_l.extend(a_np.tolist())
                logp_l.append(logp.numpy())
                val_l.append(value.numpy())
                for j, e in enumerate(lrn):
                    idx = base + j
                    s = out.seat[e]
                    if last[e, s] >= 0:
                        nxt[last[e, s]] = idx
                    last[e, s] = idx
                    rew.append(0.0)
                    done.append(0.0)
                    nxt.append(-1)
            for k in np.unique(who[who != LEARNER]):
                envs = active[who == k]
                mem = members[k]
                if mem.kind == "snapshot":
                    logits = mem.net.logits(torch.from_numpy(out.obs[envs]))
                    dist = MaskedCategorical(logits, torch.from_numpy(out.mask[envs]))
                    a = dist.mode() if self.pool_cfg.snapshot_greedy else dist.sample(gen)
                    actions[envs] = a.numpy()
                else:
                    for e in envs:
                        actions[e] = self.pool.baseline_agent(mem, int(e)).act(vec.views[e], rng)
            env_steps += len(active)
            out = vec.step(actions)
            ended = np.flatnonzero(out.done)
            for e in ended:
                for s in range(n):
                    if ctrl[e, s] == LEARNER and last[e, s] >= 0:
                        r = float(out.rewards[e, s]) * self.cfg.reward_scale
                        if self.cfg.reward_clip > 0:
                            r = float(np.clip(r, -self.cfg.reward_clip, self.cfg.reward_clip))
                        rew[last[e, s]] = r
                        done[last[e, s]] = 1.0
                    last[e, s] = -1
                opp = ctrl[e][ctrl[e] != LEARNER]
                member = int(opp[0]) if len(opp) else -1
                lteam = next(s % 2 for s in range(n) if ctrl[e, s] == LEARNER)
                res = vec.results[e]
                deal_stats.append((member, float(res.score[lteam] - res.score[1 - lteam]),
                                   float(res.contract is None)))
            refill = []
            for e in ended:
                if started < num_deals:
                    refill.append(int(e))
                    ctrl[e] = self._controllers(int(e), rng)
                    started += 1
            if refill:
                out = vec.reset(refill, rng)
        elapsed = time.perf_counter() - t0
        T = len(act_l)
        stats = {"collect_time": elapsed, "env_steps": float(env_steps), "learner_steps": float(T),
                 "deals": float(len(deal_stats)),
                 "passed_out": float(np.mean([d[2] for d in deal_stats])) if deal_stats else 0.0}
        groups: dict[str, list[float]] = {}
        for member, diff, _ in deal_stats:
            if member >= 0:
                mem = members[member]
                groups.setdefault(mem.name if mem.kind == "baseline" else "snapshots", []).append(diff)
        for name, diffs in groups.items():
            stats[f"vs_{name}_tp"] = float(np.mean(diffs))
            stats[f"vs_{name}_deals"] = float(len(diffs))
        return Rollout(
            obs=np.concatenate(obs_l) if obs_l else np.zeros((0, vec.obs.shape[1]), np.float32),
            masks=np.concatenate(mask_l) if mask_l else np.zeros((0, vec.num_actions), bool),
            actions=np.asarray(act_l, dtype=np.int64),
            logprobs=np.concatenate(logp_l).astype(np.float32) if logp_l else np.zeros(0, np.float32),
            values=np.concatenate(val_l).astype(np.float32) if val_l else np.zeros(0, np.float32),
            rewards=np.asarray(rew, dtype=np.float32),
            dones=np.asarray(done, dtype=np.float32),
            next_idx=np.asarray(nxt, dtype=np.int64),
            stats=stats,
        )


# --------------------------------------------------------------------------- GAE


def compute_gae(rewards: np.ndarray, values: np.ndarray, dones: np.ndarray, gamma: float, lam: float,
                next_idx: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimation over interleaved trajectories.

    Args:
        rewards, values, dones: ``float32[T]``; ``dones[t] = 1`` marks the last step of a
            trajectory (no bootstrap after it).
        next_idx: ``int64[T]``, index of the same trajectory's next step (> t), ignored where
            ``dones[t] = 1``; None means plain sequential order (``t + 1``).

    Returns:
        ``(advantages, returns)``, both ``float32[T]``; ``returns = advantages + values``.

    Raises:
        ValueError: a non-final step has no next step, or points backwards.
    """
    T = len(rewards)
    if next_idx is None:
        next_idx = np.arange(1, T + 1, dtype=np.int64)
    adv = np.zeros(T, dtype=np.float64)
    for t in range(T - 1, -1, -1):
        if dones[t]:
            adv[t] = rewards[t] - values[t]
            continue
        j = int(next_idx[t])
        if not t < j < T:
            raise ValueError(f"step {t} is not final but its next step is {j}")
        delta = rewards[t] + gamma * values[j] - values[t]
        adv[t] = delta + gamma * lam * adv[j]
    adv32 = adv.astype(np.float32)
    return adv32, (adv + values).astype(np.float32)


__all__ = [
    "LEARNER",
    "EngineVector",
    "OpponentPool",
    "PoolMember",
    "Rollout",
    "RolloutCollector",
    "VecStep",
    "compute_gae",
    "make_encoder",
]
