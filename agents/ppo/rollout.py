"""Rollouts: N deals stepped in lockstep, per-seat trajectories, an opponent pool, and GAE.

The deals are stepped by the public multi-agent vector :class:`blot_env.vector.SelfPlayVector`
(``reset`` / ``step`` / ``privileged`` with fixed-shape arrays) over the compiled
:class:`blot_env.batched.BatchedEngine` (``rollout.engine: batched``, the default) or a Python
list of reference states (``rollout.engine: reference``). Both give the observation as
``uint8`` numerators (``ObservationEncoder.quantum``), which the network turns into values.

Trajectories are **per seat**: a learner seat's next state is its own next decision, and
the deal's reward goes to each seat's last decision of the deal. The reward of a seat is
the deal result's own side's score minus the opponents' (rules.md 2.5; table points for the
Armenian presets) times
``RolloutConfig.reward_scale``. Every rollout ends on deal boundaries, so no trajectory is
ever cut and nothing needs bootstrapping. The bookkeeping is vectorised over the envs; only
baseline opponents (Python agents) act env by env; a baseline that is a policy file reading
the learner's encoding acts batched, like a snapshot.

Opponent agents come from a factory the caller passes (``agent_factory(name, preset, seed)``,
for example ``agents.registry.make_agent``), so this module imports no agent registry.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from blot_env.errors import ConfigError
from blot_env.observation import privileged_size
from blot_env.rules_config import RulesConfig
from blot_env.vector import SelfPlayVector

from ..base import reset_agent
from .config import PoolConfig, RolloutConfig
from .network import ActorCritic

LEARNER = -1
"""Controller id of the learning policy in a deal's per-seat controller array."""

AgentFactory = Callable[[str, Any, int], Any]
"""``factory(name, preset_or_rules, seed) -> agent`` with ``act(view, rng)`` (agents.registry.make_agent)."""


# --------------------------------------------------------------------------- opponent pool


@dataclass
class PoolMember:
    """A frozen opponent: a baseline agent (``agent.act(view, rng)``) or a past policy snapshot."""

    name: str
    kind: str
    """"baseline" or "snapshot"."""
    net: ActorCritic | None = None
    """Snapshots: the frozen network. Baselines that are policy files (a clone of a rule agent,
    a past stage): their network when it reads the learner's observation encoding, so that
    they act batched like snapshots (:meth:`OpponentPool.batch_networks`); else None."""
    seed: int = 0
    """Baselines: seed passed to the agent factory for each per-env instance."""
    greedy: bool = True
    """Network baselines: act greedily (as the policy file's agent does)."""


class OpponentPool:
    """Past snapshots of the learner plus baseline agents built by ``agent_factory``.

    Snapshots are deep copies (frozen, eval mode); the pool's snapshot weights are part of
    the trainer's checkpoint so that a resumed run draws the same opponents.

    Raises:
        ConfigError: baselines are configured but no ``agent_factory`` was given.
    """

    def __init__(self, cfg: PoolConfig, preset: str, seed: int, agent_factory: AgentFactory | None = None):
        self.cfg = cfg
        self.preset = preset
        self.factory = agent_factory
        self.baselines = [PoolMember(name, "baseline", seed=seed + 1000 + i) for i, name in enumerate(cfg.baselines)]
        self.snapshots: list[PoolMember] = []
        self._snap = -1  # the rollout's snapshot (begin_rollout)
        self._agents: dict[tuple[str, int], Any] = {}
        if self.baselines and self.uses_baselines:
            if agent_factory is None:
                raise ConfigError("pool.baselines needs an agent factory (agents.registry.make_agent); "
                                  "build the trainer with agents.ppo.build.build_trainer or pass agent_factory")
            for b in self.baselines:  # fail early on an unknown baseline name
                self.baseline_agent(b, 0)

    def batch_networks(self, encoder: Any, device: torch.device | str = "cpu") -> list[str]:
        """Let each baseline that is a network reading ``encoder``'s observations (same kind and
        size; a PPO policy file named in ``pool.baselines``) act on the whole batch of its envs
        in one forward pass instead of env by env; returns their names. A policy trained on
        another encoding keeps acting env by env from its own view.

        Raises:
            ConfigError: an oracle policy (``network.oracle``) trained on another encoding (an
                oracle cannot act from a view).
        """
        from .agent import PPOAgent  # here: agent.py imports this module

        batched = []
        for b in self.baselines if self.uses_baselines else []:
            agent = self.baseline_agent(b, 0)
            if type(agent) is not PPOAgent:  # a subclass may act otherwise than its network's argmax
                continue
            net, enc = agent.policy, agent.encoder
            if (enc.kind, enc.size) == (encoder.kind, encoder.size):
                b.net = copy.deepcopy(net).to(device).eval()
                b.greedy = agent.greedy
                batched.append(b.name)
            elif net.oracle:
                raise ConfigError(f"pool.baselines: {b.name} is an oracle (network.oracle) trained on the "
                                  f"{enc.kind!r} observation ({enc.size} entries); an oracle acts only batched, on "
                                  f"the learner's own encoding ({encoder.kind!r}, {encoder.size})")
        return batched

    def baseline_agent(self, member: PoolMember, env: int) -> Any:
        """The baseline agent instance of ``member`` for env ``env`` (one per env: agents may cache per deal)."""
        key = (member.name, env)
        if key not in self._agents:
            self._agents[key] = self.factory(member.name, self.preset, member.seed + 7919 * env)
        return self._agents[key]

    @property
    def uses_baselines(self) -> bool:
        """Whether any deal can draw a pool member (``opponent_prob`` or ``partner_prob`` above 0)."""
        return max(self.cfg.opponent_prob, self.cfg.partner_prob) > 0

    @property
    def members(self) -> list[PoolMember]:
        return (self.baselines if self.uses_baselines else []) + self.snapshots

    def add_snapshot(self, name: str, policy: ActorCritic) -> None:
        """Add a frozen copy of ``policy``; drops the oldest beyond ``max_snapshots``."""
        if self.cfg.max_snapshots == 0:
            return
        net = copy.deepcopy(policy).eval()
        for p in net.parameters():
            p.requires_grad_(False)
        self.snapshots.append(PoolMember(name, "snapshot", net=net))
        del self.snapshots[:-self.cfg.max_snapshots]

    def begin_rollout(self, rng: np.random.Generator) -> None:
        """Draw the snapshot that this rollout's snapshot deals play against (one per rollout,
        so that each lockstep step needs at most one snapshot forward pass)."""
        self._snap = int(rng.integers(len(self.snapshots))) if self.snapshots else -1

    def sample(self, rng: np.random.Generator) -> int:
        """Index into ``members`` of an opponent for one deal: a baseline (with probability
        ``baseline_weight``, or always before the first snapshot), else the rollout's snapshot
        (:meth:`begin_rollout`)."""
        nb, ns = len(self.members) - len(self.snapshots), len(self.snapshots)
        if ns == 0 or (nb > 0 and rng.random() < self.cfg.baseline_weight):
            if self.cfg.baseline_probs:
                w = np.asarray(self.cfg.baseline_probs, dtype=np.float64)
                return int(rng.choice(nb, p=w / w.sum()))
            return int(rng.integers(nb))
        return nb + (self._snap if 0 <= self._snap < ns else int(rng.integers(ns)))

    def state_dict(self) -> dict:
        """The snapshots' actor weights (snapshots act; they never need their critic)."""
        return {"snapshots": [(m.name, _actor_state(m.net)) for m in self.snapshots]}

    def load_state_dict(self, state: dict, template: ActorCritic) -> None:
        """Rebuild the snapshots from :meth:`state_dict`'s weights, each a frozen copy of ``template``."""
        self.snapshots = []
        for name, sd in state["snapshots"]:
            net = copy.deepcopy(template)
            net.load_state_dict(sd, strict=False)
            net.eval()
            for p in net.parameters():
                p.requires_grad_(False)
            self.snapshots.append(PoolMember(name, "snapshot", net=net))


def check_partner_prob(pool_cfg: PoolConfig, rules: RulesConfig) -> None:
    """Raises ConfigError when ``pool.partner_prob`` is set on a preset without partners."""
    if pool_cfg.partner_prob > 0 and rules.num_players != 4:
        raise ConfigError(f"pool.partner_prob needs a 4-player preset (partners); {rules.preset!r} has "
                          f"{rules.num_players} players: set pool.partner_prob=0")


def _actor_state(net: ActorCritic) -> dict:
    return {k: v for k, v in net.state_dict().items() if k.startswith(("actor_trunk.", "policy_head."))}


# --------------------------------------------------------------------------- collection


@dataclass
class Rollout:
    """One batch of learner transitions (T of them), in collection order.

    ``next_idx[t]`` is the index of the same seat's next decision in the same deal (-1 at
    the deal's last decision, where ``dones[t]`` is 1 and ``rewards[t]`` holds the deal reward).
    """

    obs: np.ndarray
    """uint8[T, D] (numerators; values = obs * quantum)"""
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
    privileged: np.ndarray | None = None
    """uint8[T, P] hidden features for a privileged critic or an oracle actor (None without either)"""
    stats: dict[str, float] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.actions)


class _Growing:
    """A 1-D numpy array that grows by doubling (the per-transition bookkeeping of a rollout)."""

    def __init__(self, dtype, fill) -> None:
        self.a = np.full(1024, fill, dtype=dtype)
        self.fill = fill

    def reserve(self, n: int) -> None:
        if n > self.a.size:
            b = np.full(max(n, 2 * self.a.size), self.fill, dtype=self.a.dtype)
            b[:self.a.size] = self.a
            self.a = b


class RolloutCollector:
    """Collects complete deals with the learner in some or all seats (see module docstring).

    Args:
        rules, encoder: the game and the observation encoder.
        cfg, pool_cfg: rollout and pool settings.
        pool: the opponents.
        privileged: also collect the learner's privileged features (``Rollout.privileged``), for
            a privileged critic or an oracle actor (pool members that are oracles get theirs
            whether or not).
        device: where the policy's forward passes run.
    """

    def __init__(self, rules: RulesConfig, encoder: Any, cfg: RolloutConfig, pool: OpponentPool,
                 pool_cfg: PoolConfig, privileged: bool = False, device: torch.device | str = "cpu"):
        self.rules, self.cfg, self.pool, self.pool_cfg = rules, cfg, pool, pool_cfg
        self.vec = SelfPlayVector(rules, encoder, cfg.num_envs, cfg.engine)
        self.n = rules.num_players
        self.privileged = privileged
        self.device = torch.device(device)
        check_partner_prob(pool_cfg, rules)
        pool.batch_networks(encoder, self.device)
        self.mixed = np.zeros(cfg.num_envs, dtype=bool)
        """Per env: its deal in progress is a mixed-partnership deal."""

    def _controllers(self, env: int, rng: np.random.Generator) -> np.ndarray:
        """Per seat: LEARNER or a pool member index, for one new deal in ``env``: a
        mixed-partnership deal (``partner_prob``: the learner in one seat, the member in the
        other three), else a deal against a pool side (``opponent_prob``), else self-play.
        Sets ``self.mixed[env]``."""
        ctrl = np.full(self.n, LEARNER, dtype=np.int64)
        members = self.pool.members
        self.mixed[env] = False
        if not members:
            return ctrl
        if self.pool_cfg.partner_prob > 0 and rng.random() < self.pool_cfg.partner_prob:
            k = self.pool.sample(rng)
            ctrl[:] = k
            ctrl[int(rng.integers(self.n))] = LEARNER
            self.mixed[env] = True
        elif rng.random() < self.pool_cfg.opponent_prob:
            k = self.pool.sample(rng)
            opp_team = int(rng.integers(2))
            ctrl[[s for s in range(self.n) if s % 2 == opp_team]] = k
        else:
            return ctrl
        if members[k].kind == "baseline" and members[k].net is None:
            reset_agent(self.pool.baseline_agent(members[k], env))
        return ctrl

    def _t(self, a: np.ndarray) -> torch.Tensor:
        t = torch.from_numpy(a)
        return t if self.device.type == "cpu" else t.to(self.device, non_blocking=True)

    @torch.no_grad()
    def collect(self, policy: ActorCritic, num_deals: int, rng: np.random.Generator,
                gen: torch.Generator) -> Rollout:
        """Play ``num_deals`` complete deals; return the learner's transitions and statistics.

        ``rng`` draws deals, pool opponents and baseline actions; ``gen`` samples policy actions
        (a generator on the policy's device).
        """
        t0 = time.perf_counter()
        vec, N, n = self.vec, self.cfg.num_envs, self.n
        obs_l, mask_l, priv_l, act_l, logp_l, val_l = [], [], [], [], [], []
        nxt = _Growing(np.int64, -1)
        rew = _Growing(np.float32, 0.0)
        done = _Growing(np.float32, 0.0)
        T = 0
        last = np.full((N, n), -1, dtype=np.int64)  # last learner transition per (env, seat)
        ctrl = np.full((N, n), LEARNER, dtype=np.int64)
        first = list(range(min(N, num_deals)))
        self.pool.begin_rollout(rng)
        for e in first:
            ctrl[e] = self._controllers(int(e), rng)
        started = len(first)
        out = vec.reset(first, rng)
        members = self.pool.members
        env_steps = 0
        d_member: list[np.ndarray] = []  # per finished deal: pool member (-1 self-play)
        d_diff: list[np.ndarray] = []  # learner side's score difference
        d_passed: list[np.ndarray] = []
        d_mixed: list[np.ndarray] = []  # per finished deal: a mixed-partnership deal
        scale, clip = self.cfg.reward_scale, self.cfg.reward_clip
        while True:
            active = np.flatnonzero(out.seat >= 0)
            if active.size == 0:
                break
            seat_a = out.seat[active]
            who = ctrl[active, seat_a]
            actions = np.zeros(N, dtype=np.int64)
            lrn = active[who == LEARNER]
            if self.cfg.skip_forced and lrn.size:
                m = out.mask[lrn]
                forced = m.sum(axis=1) == 1
                if forced.any():
                    actions[lrn[forced]] = m[forced].argmax(axis=1)
                    lrn = lrn[~forced]
            if lrn.size:
                o = out.obs[lrn]
                m = out.mask[lrn]
                pr = vec.privileged(lrn) if self.privileged or policy.oracle else None
                a, logp, value = policy.act(self._t(o), self._t(m), gen,
                                            privileged=None if pr is None else self._t(pr))
                a_np = a.cpu().numpy()
                actions[lrn] = a_np
                obs_l.append(o)
                mask_l.append(m)
                if pr is not None:
                    priv_l.append(pr)
                act_l.append(a_np)
                logp_l.append(logp.cpu().numpy())
                val_l.append(value.cpu().numpy())
                k = lrn.size
                idx = np.arange(T, T + k)
                s = out.seat[lrn]
                prev = last[lrn, s]
                has = prev >= 0
                nxt.reserve(T + k)
                rew.reserve(T + k)
                done.reserve(T + k)
                nxt.a[prev[has]] = idx[has]
                last[lrn, s] = idx
                T += k
            opp_rows = active[who != LEARNER]
            if opp_rows.size:
                opp_who = ctrl[opp_rows, out.seat[opp_rows]]
                for kk in np.unique(opp_who):
                    envs = opp_rows[opp_who == kk]
                    mem = members[kk]
                    if mem.net is not None:
                        greedy = self.pool_cfg.snapshot_greedy if mem.kind == "snapshot" else mem.greedy
                        pm = self._t(vec.privileged(envs)) if mem.net.oracle else None  # an oracle sees all hands
                        a, _, _ = mem.net.act(self._t(out.obs[envs]), self._t(out.mask[envs]), gen,
                                              greedy=greedy, privileged=pm, with_value=False)
                        actions[envs] = a.cpu().numpy()
                    else:
                        for e in envs:
                            actions[e] = self.pool.baseline_agent(mem, int(e)).act(vec.views[e], rng)
            env_steps += active.size
            out = vec.step(actions)
            ended = np.flatnonzero(out.done)
            if ended.size == 0:
                continue
            for s in range(n):
                sel = ended[(ctrl[ended, s] == LEARNER) & (last[ended, s] >= 0)]
                if sel.size:
                    ids = last[sel, s]
                    r = out.rewards[sel, s] * scale
                    if clip > 0:
                        r = np.clip(r, -clip, clip)
                    rew.a[ids] = r
                    done.a[ids] = 1.0
            last[ended] = -1
            lseat = (ctrl[ended] == LEARNER).argmax(axis=1)  # a learner seat of each ended deal
            opp = np.where(ctrl[ended] == LEARNER, -1, ctrl[ended]).max(axis=1)
            d_member.append(opp)
            d_mixed.append(self.mixed[ended].copy())
            d_diff.append(out.rewards[ended, lseat].astype(np.float64))
            d_passed.append(out.passed_out[ended].astype(np.float64))
            refill = []
            for e in ended:
                if started < num_deals:
                    refill.append(int(e))
                    ctrl[e] = self._controllers(int(e), rng)
                    started += 1
            if refill:
                out = vec.reset(refill, rng)
        elapsed = time.perf_counter() - t0
        member = np.concatenate(d_member) if d_member else np.zeros(0, np.int64)
        diff = np.concatenate(d_diff) if d_diff else np.zeros(0)
        passed = np.concatenate(d_passed) if d_passed else np.zeros(0)
        mixed = np.concatenate(d_mixed) if d_mixed else np.zeros(0, bool)
        stats = {"collect_time": elapsed, "env_steps": float(env_steps), "learner_steps": float(T),
                 "deals": float(member.size), "passed_out": float(passed.mean()) if passed.size else 0.0}
        for k in np.unique(member[member >= 0]):
            mem = members[int(k)]
            name = mem.name if mem.kind == "baseline" else "snapshots"
            for prefix, rows in (("vs", ~mixed), ("mixed", mixed)):
                sel = diff[(member == k) & rows]
                if not sel.size:
                    continue
                prev_n = stats.get(f"{prefix}_{name}_deals", 0.0)
                prev_sum = stats.get(f"{prefix}_{name}_tp", 0.0) * prev_n
                stats[f"{prefix}_{name}_deals"] = prev_n + sel.size
                stats[f"{prefix}_{name}_tp"] = float((prev_sum + sel.sum()) / (prev_n + sel.size))
        D, A = vec.obs.shape[1], vec.num_actions
        return Rollout(
            obs=np.concatenate(obs_l) if obs_l else np.zeros((0, D), np.uint8),
            masks=np.concatenate(mask_l) if mask_l else np.zeros((0, A), bool),
            actions=np.concatenate(act_l).astype(np.int64) if act_l else np.zeros(0, np.int64),
            logprobs=np.concatenate(logp_l).astype(np.float32) if logp_l else np.zeros(0, np.float32),
            values=np.concatenate(val_l).astype(np.float32) if val_l else np.zeros(0, np.float32),
            rewards=rew.a[:T].copy(),
            dones=done.a[:T].copy(),
            next_idx=nxt.a[:T].copy(),
            privileged=self._stack_privileged(priv_l) if self.privileged or policy.oracle else None,
            stats=stats,
        )

    def _stack_privileged(self, parts: list[np.ndarray]) -> np.ndarray:
        if parts:
            return np.concatenate(parts)
        return np.zeros((0, privileged_size(self.rules.num_players)), np.uint8)


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
    nxt = np.asarray(next_idx, dtype=np.int64)
    final = np.asarray(dones) != 0
    bad = np.flatnonzero(~final & ((nxt <= np.arange(T)) | (nxt >= T)))
    if bad.size:
        t = int(bad[-1])
        raise ValueError(f"step {t} is not final but its next step is {int(nxt[t])}")
    adv = _gae_loop(np.asarray(rewards, np.float64), np.asarray(values, np.float64), final, nxt,
                    float(gamma), float(lam))
    return adv.astype(np.float32), (adv + values).astype(np.float32)


def _gae_loop(r: np.ndarray, v: np.ndarray, final: np.ndarray, nxt: np.ndarray, gamma: float,
              lam: float) -> np.ndarray:
    """The backward GAE recursion (compiled when numba is importable)."""
    return _gae_kernel()(r, v, final, nxt, gamma, lam)


def _gae_py(r, v, final, nxt, gamma, lam):
    T = r.shape[0]
    adv = np.zeros(T, dtype=np.float64)
    for t in range(T - 1, -1, -1):
        if final[t]:
            adv[t] = r[t] - v[t]
        else:
            j = nxt[t]
            adv[t] = r[t] + gamma * v[j] - v[t] + gamma * lam * adv[j]
    return adv


_GAE = None


def _gae_kernel():
    global _GAE
    if _GAE is None:
        try:
            import numba

            _GAE = numba.njit(cache=True)(_gae_py)
        except ImportError:  # pragma: no cover - numba is a dependency of blot_env
            _GAE = _gae_py
    return _GAE


__all__ = [
    "LEARNER",
    "AgentFactory",
    "OpponentPool",
    "PoolMember",
    "Rollout",
    "RolloutCollector",
    "compute_gae",
]
