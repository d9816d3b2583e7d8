"""The PPO trainer: self-play rollouts, clipped-surrogate updates, logs and exact-resume checkpoints.

One update = collect ``rollout.deals_per_rollout`` complete deals (learner in all seats, or in
one side against a pool member), compute GAE over the per-seat trajectories, then
``ppo.update_epochs`` passes of ``ppo.num_minibatches`` minibatches.

Exact resume: a checkpoint holds the policy, the optimizer, every random stream (numpy
Generator for deals/pool/minibatches, torch Generator for action sampling; with
``rollout.overlap`` also the worker's two streams and the rollout in flight: its parameters,
snapshots and stream states), the counters and the pool's snapshots; all are restored,
``torch.set_num_threads(cfg.torch_threads)`` and
``torch.use_deterministic_algorithms(cfg.deterministic)`` are set, and rollouts end on
deal boundaries, so "train k updates, save, resume for m more" gives the same parameters as
"train k + m updates" (tested in tests/test_ppo.py). Both settings are process-wide torch
state, set when a trainer is built.
"""

from __future__ import annotations

import copy
import csv
import logging
import math
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from blot_env.actions import layout_for
from blot_env.errors import ConfigError
from blot_env.observation import ObservationEncoder
from blot_env.rules_config import make_rules

from .async_rollout import AsyncCollector, Submission
from .config import TrainConfig, config_from_saved
from .network import ActorCritic, build_policy, pad_oracle_inputs, trainable_parameters
from .rollout import (
    AgentFactory,
    OpponentPool,
    Rollout,
    RolloutCollector,
    check_partner_prob,
    compute_gae,
)

log = logging.getLogger(__name__)

CHECKPOINT_FORMAT = "blot-ppo-checkpoint/1"
POLICY_FORMAT = "blot-ppo-policy/1"
CHECKPOINT_NAME = "checkpoint.pt"
POLICY_NAME = "policy.pt"


def kept_policies(run_dir: str | Path) -> list[Path]:
    """The ``policy_<update>.pt`` files a run kept (``keep_checkpoints``), by update."""
    return sorted(p for p in Path(run_dir).glob("policy_*.pt") if p.stem[len("policy_"):].isdigit())


METRICS_NAME = "metrics.csv"

#: per-update log columns (besides the pool and evaluation columns that depend on the config)
CORE_COLUMNS = (
    "update", "global_step", "env_steps", "deals", "wall_time", "learning_rate",
    "pg_loss", "v_loss", "entropy", "approx_kl", "old_approx_kl", "clipfrac", "explained_variance",
    "grad_norm", "epochs", "batch_steps", "mean_reward", "passed_out",
    "collect_sps", "update_sps", "env_sps", "collect_time", "update_time",
)


def configure_torch(threads: int, deterministic: bool) -> None:
    """Process-wide torch settings of a run: thread count and deterministic algorithms."""
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(deterministic)


Evaluator = Callable[[Any], dict[str, float]]
"""``evaluator(agent) -> {metric: value}``: the periodic evaluation of the greedy policy (an agent
with ``act(view, rng)``); :func:`agents.ppo.build.build_trainer` makes one from ``cfg.eval``."""


def resolve_device(name: str) -> torch.device:
    """``cpu``, ``cuda`` or ``auto`` (CUDA when torch sees a GPU) as a torch device.

    Raises:
        ConfigError: ``cuda`` asked for but torch sees no GPU.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device=cuda but torch sees no CUDA device (torch.cuda.is_available() is False); "
                          "use device=cpu or auto")
    return torch.device(name)


class PPOTrainer:
    """Trains one shared policy by self-play against itself and an opponent pool.

    Args:
        cfg: the run's configuration.
        out_dir: where checkpoints, ``metrics.csv``, TensorBoard events and ``policy.pt`` go
            (None: nothing is written).
        resume: continue from ``out_dir/checkpoint.pt`` (ConfigError if it is missing, was
            written for a different preset, observation kind or network, or holds another
            ``init_policy`` or ``pretrain`` setting, ``critic_warmup_updates`` aside).
        agent_factory: builds the pool's baseline agents and the cloning teacher
            (``agents.registry.make_agent``); needed when the config names any.
        evaluator: the periodic evaluation (``eval.every > 0``); needed when it is on.

    :func:`agents.ppo.build.build_trainer` passes both from the registry and the arena.
    """

    def __init__(self, cfg: TrainConfig, out_dir: str | Path | None = None, resume: bool = False,
                 agent_factory: AgentFactory | None = None, evaluator: Evaluator | None = None):
        self.cfg = cfg
        configure_torch(cfg.torch_threads, cfg.deterministic)
        self.device = resolve_device(cfg.device)
        if cfg.eval.every and evaluator is None:
            raise ConfigError("eval.every > 0 needs an evaluator (build the trainer with "
                              "agents.ppo.build.build_trainer, or set eval.every=0)")
        if cfg.pretrain.agent and not cfg.pretrain.data and agent_factory is None:
            raise ConfigError("pretrain.agent needs an agent factory (agents.ppo.build.build_trainer)")
        self.agent_factory = agent_factory
        self.evaluator = evaluator
        self.rules = make_rules(cfg.preset)
        self.encoder = ObservationEncoder(self.rules, cfg.obs_kind)
        self.num_actions = layout_for(self.rules).num_actions
        check_partner_prob(cfg.pool, self.rules)  # here too: with overlap the collector is in a worker
        self.policy = build_policy(cfg, self.encoder, layout_for(self.rules)).to(self.device)
        if cfg.init_policy and not resume:
            self._load_init_policy(cfg.init_policy)
        # ppo.frozen / ppo.actor_inputs: what the PPO update moves (everything by default)
        self._trained, self._grad_masks = trainable_parameters(self.policy, cfg.ppo.frozen, cfg.ppo.actor_inputs,
                                                               self.encoder.pieces)
        self.optimizer = torch.optim.Adam(self._trained, lr=cfg.ppo.learning_rate, eps=cfg.ppo.adam_eps)
        self.rng = np.random.default_rng(cfg.seed)
        self.gen = torch.Generator(device=self.device).manual_seed(cfg.seed)
        self.pool = OpponentPool(cfg.pool, cfg.preset, cfg.seed, agent_factory)
        self.overlap = cfg.rollout.overlap
        if self.overlap:
            # the worker's streams: seeded apart from the update's, states kept here (checkpointed)
            self.collector = None
            self._async: AsyncCollector | None = None
            self._col_rng_state = np.random.default_rng([cfg.seed, 1]).bit_generator.state
            self._col_gen_state = torch.Generator().manual_seed(cfg.seed + 1).get_state()
            self._inflight: Submission | None = None
        else:
            self.collector = RolloutCollector(self.rules, self.encoder, cfg.rollout, self.pool, cfg.pool,
                                              privileged=self.policy.privileged or self.policy.oracle,
                                              device=self.device)
        self.update_no = 0
        self.global_step = 0
        self.env_steps = 0
        self.deals = 0
        self.wall_time = 0.0
        self.pretrain_metrics: dict[str, float] = {}
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self._writer = None
        self._evaluator = None
        if resume:
            if self.out_dir is None or not (self.out_dir / CHECKPOINT_NAME).exists():
                raise ConfigError(f"--resume: no checkpoint at {self.out_dir and self.out_dir / CHECKPOINT_NAME}")
            self.load_checkpoint(self.out_dir / CHECKPOINT_NAME)
        if cfg.pretrain.data and not self.pretrain_metrics:  # a file that does not fit fails here, not mid-run
            from .pretrain import file_groups

            file_groups(cfg.pretrain, self.rules, self.encoder, self.policy.privileged)

    def _load_init_policy(self, name: str) -> None:
        """Copy the weights of the policy file ``name`` (``init_policy``) into the fresh network.

        Raises:
            FileNotFoundError: no such file or shipped name.
            ConfigError: not a PPO file, trained on another preset or observation kind, or its
                network settings differ from ``network`` (the message names the setting).
        """
        from .agent import read_policy_file, resolve_policy_path

        path = resolve_policy_path(name, self.cfg.preset)
        data = read_policy_file(path)
        saved = config_from_saved(data["config"])
        for key in ("preset", "obs_kind"):
            if getattr(saved, key) != getattr(self.cfg, key):
                raise ConfigError(f"init_policy {path}: trained with {key}={getattr(saved, key)!r}, "
                                  f"this run has {key}={getattr(self.cfg, key)!r}")
        # an oracle may start from a policy without the hidden-card inputs (they start at zero weight)
        to_oracle = self.cfg.network.oracle and not saved.network.oracle
        diff = [f"network.{k}={v!r} (this run: {getattr(self.cfg.network, k)!r})"
                for k, v in vars(saved.network).items() if k not in ("precision", "policy_bias_init")
                and not (k == "oracle" and to_oracle) and v != getattr(self.cfg.network, k)]
        if diff:
            raise ConfigError(f"init_policy {path}: its network differs from this run's: {'; '.join(diff)}")
        state = pad_oracle_inputs(data["policy"], self.policy) if to_oracle else data["policy"]
        try:
            missing, unexpected = self.policy.load_state_dict(
                {k: v.to(self.device) for k, v in state.items()}, strict=False)
        except RuntimeError as e:  # a tensor of another shape
            detail = " ".join(line.strip() for line in str(e).strip().splitlines()[1:3])
            raise ConfigError(f"init_policy {path}: weights do not fit this run's network: {detail[:300]}") from None
        bad = [k for k in missing if k.startswith(("actor_trunk.", "policy_head."))] + list(unexpected)
        if bad:
            raise ConfigError(f"init_policy {path}: weights do not fit this run's network: "
                              f"missing or unexpected {', '.join(bad[:5])}")
        if missing:
            warnings.warn(f"init_policy {path} holds no critic weights (an actor-only policy file): the critic "
                          "starts fresh", stacklevel=2)
        if saved.rollout.reward_scale != self.cfg.rollout.reward_scale:
            warnings.warn(f"init_policy {path} was trained with rollout.reward_scale={saved.rollout.reward_scale}, "
                          f"this run has {self.cfg.rollout.reward_scale}: its critic's values start in the old "
                          "units", stacklevel=2)
        log.info("init_policy: weights from %s", path)

    # ------------------------------------------------------------------ columns / logging
    @property
    def columns(self) -> list[str]:
        cols = list(CORE_COLUMNS)
        for name in [*self.cfg.pool.baselines, "snapshots"]:
            cols += [f"vs_{name}_tp", f"vs_{name}_deals"]
        if self.cfg.pool.partner_prob > 0:
            for name in [*self.cfg.pool.baselines, "snapshots"]:
                cols += [f"mixed_{name}_tp", f"mixed_{name}_deals"]
        for opp in self.cfg.eval.opponents if self.cfg.eval.every else ():
            cols += [f"eval_{opp}_mean", f"eval_{opp}_lo", f"eval_{opp}_hi"]
        return cols

    @property
    def done(self) -> bool:
        return self.global_step >= self.cfg.total_steps

    # ------------------------------------------------------------------ training
    def train(self, max_updates: int | None = None, progress: bool = False,
              max_seconds: float | None = None,
              on_update: Callable[[dict[str, float]], None] | None = None) -> list[dict[str, float]]:
        """Run updates until ``total_steps`` learner steps (or ``max_updates`` more updates, or
        the first update that ends after ``max_seconds`` of wall time in this call; a run cut
        by time is reproducible only from its checkpoint, not from its config).

        Saves a checkpoint every ``checkpoint_every`` updates and at the end, then exports
        ``policy.pt``. ``on_update(row)`` is called after each update (a caller's own progress
        display). Returns the per-update metric rows of this call.
        """
        t_call = time.perf_counter()
        from tqdm.auto import tqdm

        rows = []
        logger = _CsvLog(self.out_dir / METRICS_NAME, self.columns, self.update_no) if self.out_dir else None
        bar = tqdm(total=self.cfg.total_steps, initial=min(self.global_step, self.cfg.total_steps), unit="step",
                   disable=not progress, dynamic_ncols=True, smoothing=0.1)
        try:
            if self.cfg.pretrain.enabled and self.update_no == 0 and not self.pretrain_metrics:
                self.pretrain()
            n = 0
            while not self.done and (max_updates is None or n < max_updates) and (
                    max_seconds is None or time.perf_counter() - t_call < max_seconds):
                row = self.train_one_update()
                rows.append(row)
                n += 1
                bar.update(min(int(row["batch_steps"]), max(self.cfg.total_steps - bar.n, 0)))
                post = {"kl": f"{row['approx_kl']:.4f}", "ent": f"{row['entropy']:.2f}",
                        "col/s": f"{row['collect_sps']:.0f}", "upd/s": f"{row['update_sps']:.0f}"}
                for b in self.cfg.pool.baselines:
                    if not math.isnan(row.get(f"vs_{b}_tp", math.nan)):
                        post[b] = f"{row[f'vs_{b}_tp']:+.1f}"
                bar.set_postfix(post, refresh=False)
                if on_update is not None:
                    on_update(row)
                if logger:
                    logger.write(row)
                    self._tensorboard(row)
                if self.out_dir and (self.update_no % self.cfg.checkpoint_every == 0):
                    self.save_checkpoint(self.out_dir / CHECKPOINT_NAME)
                    if self.cfg.keep_checkpoints:
                        self.export_policy(self.out_dir / f"policy_{self.update_no:06d}.pt")  # see kept_policies
            if self.out_dir:
                self.save_checkpoint(self.out_dir / CHECKPOINT_NAME)
                self.export_policy(self.out_dir / POLICY_NAME)
        finally:
            self.close()
            bar.close()
            if logger:
                logger.close()
            if self._writer is not None:
                self._writer.flush()
        return rows

    def pretrain(self) -> dict[str, float]:
        """Behaviour-clone ``cfg.pretrain.agent`` (played here) or the decisions of ``cfg.pretrain.data``
        into the policy (and fit the critic), then checkpoint."""
        from .pretrain import behaviour_clone

        t0 = time.perf_counter()
        self.pretrain_metrics = behaviour_clone(self.policy, self.rules, self.encoder, self.cfg.pretrain,
                                                self.cfg.rollout.num_envs, self.cfg.rollout.reward_scale, self.rng,
                                                self.agent_factory, self.device)
        self.wall_time += time.perf_counter() - t0
        log.info("pretrain: %s", self.pretrain_metrics)
        if self.out_dir:
            self.save_checkpoint(self.out_dir / CHECKPOINT_NAME)
        return self.pretrain_metrics

    def train_one_update(self) -> dict[str, float]:
        """Collect one rollout and update the policy on it; returns the update's metrics."""
        cfg = self.cfg
        t_start = time.perf_counter()
        frac = 1.0 - self.global_step / cfg.total_steps if cfg.ppo.anneal_lr else 1.0
        lr = cfg.ppo.learning_rate * max(frac, 0.0)
        for g in self.optimizer.param_groups:
            g["lr"] = lr
        ro = self._next_rollout()
        adv, ret = compute_gae(ro.rewards, ro.values, ro.dones, cfg.ppo.gamma, cfg.ppo.gae_lambda, ro.next_idx)
        t_upd = time.perf_counter()
        metrics = self._update(ro, adv, ret)
        update_time = time.perf_counter() - t_upd
        T = len(ro)
        self.update_no += 1
        self.global_step += T
        self.env_steps += int(ro.stats["env_steps"])
        self.deals += int(ro.stats["deals"])
        if cfg.pool.snapshot_every and self.update_no % cfg.pool.snapshot_every == 0:
            self.pool.add_snapshot(f"u{self.update_no}", self.policy)
        row: dict[str, float] = {c: math.nan for c in self.columns}
        row.update(metrics)
        ct = ro.stats["collect_time"]
        row.update({
            "update": self.update_no, "global_step": self.global_step, "env_steps": self.env_steps,
            "deals": self.deals, "learning_rate": lr, "batch_steps": T,
            "mean_reward": float(ro.rewards.sum() / max(ro.dones.sum(), 1.0)),
            "passed_out": ro.stats["passed_out"],
            "collect_sps": T / ct if ct > 0 else math.nan,
            "env_sps": ro.stats["env_steps"] / ct if ct > 0 else math.nan,
            "update_sps": T / update_time if update_time > 0 else math.nan,
            "collect_time": ct, "update_time": update_time,
        })
        for k, v in ro.stats.items():
            if k.startswith(("vs_", "mixed_")) and k in row:
                row[k] = v
        if cfg.eval.every and self.update_no % cfg.eval.every == 0:
            row.update(self.evaluate())
        self.wall_time += time.perf_counter() - t_start
        row["wall_time"] = self.wall_time
        return row

    def _submission(self) -> Submission:
        """The next rollout's job for the worker: the current parameters, snapshots and streams."""
        params = _cpu(self.policy.state_dict())
        snaps = [(n, _cpu(sd)) for n, sd in self.pool.state_dict()["snapshots"]]
        return Submission(self.cfg.rollout.deals_per_rollout, params, snaps, self._col_rng_state, self._col_gen_state)

    def _next_rollout(self) -> Rollout:
        """Collect one rollout: in this process, or (``rollout.overlap``) take the worker's and
        start the next one with the current policy before this update runs."""
        cfg = self.cfg
        if not self.overlap:
            return self.collector.collect(self.policy, cfg.rollout.deals_per_rollout, self.rng, self.gen)
        if self._async is None:
            self._async = AsyncCollector(cfg, self.agent_factory)
        if self._async.pending is None:
            self._async.submit(self._inflight or self._submission())
        ro, self._col_rng_state, self._col_gen_state = self._async.result()
        self._inflight = None
        if self.global_step + len(ro) < cfg.total_steps:
            self._inflight = self._submission()
            self._async.submit(self._inflight)
        return ro

    def close(self) -> None:
        """Stop the collection worker, if any (``train`` calls it when it returns)."""
        if self.overlap and self._async is not None:
            self._async.close()
            self._async = None

    def _update(self, ro: Rollout, adv: np.ndarray, ret: np.ndarray) -> dict[str, float]:
        p = self.cfg.ppo
        T = len(ro)
        dev = self.device
        obs = torch.from_numpy(ro.obs).to(dev)
        masks = torch.from_numpy(ro.masks).to(dev)
        priv = torch.from_numpy(ro.privileged).to(dev) if ro.privileged is not None else None
        actions = torch.from_numpy(ro.actions).to(dev)
        old_logp = torch.from_numpy(ro.logprobs).to(dev)
        old_v = torch.from_numpy(ro.values).to(dev)
        b_adv = torch.from_numpy(adv).to(dev)
        b_ret = torch.from_numpy(ret).to(dev)
        groups = self.policy.row_groups(masks)
        # the sparse input layer's active entries, found once per update (a minibatch takes its rows)
        pre = self.policy.sparse_inputs(obs, priv)
        mb_size = max(1, math.ceil(T / p.num_minibatches))
        sums: dict[str, float] = {"pg_loss": 0.0, "v_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0,
                                  "old_approx_kl": 0.0, "clipfrac": 0.0, "grad_norm": 0.0}
        count = 0
        epochs = 0
        critic_only = bool(self.pretrain_metrics) and self.update_no < self.cfg.pretrain.critic_warmup_updates
        self.policy.train()
        for _ in range(p.update_epochs):
            epochs += 1
            perm = torch.from_numpy(self.rng.permutation(T)).to(dev)
            kls = []
            for start in range(0, T, mb_size):
                idx = perm[start:start + mb_size]
                if pre is None:
                    new_logp, entropy, new_v = self.policy.policy_terms(
                        obs.index_select(0, idx), masks.index_select(0, idx), actions[idx],
                        None if priv is None else priv.index_select(0, idx), groups=groups[idx])
                else:
                    rows = idx.numpy()
                    xa = pre[0].take(rows)
                    new_logp, entropy, new_v = self.policy.policy_terms(
                        None, masks.index_select(0, idx), actions[idx], groups=groups[idx],
                        inputs=(xa, xa if pre[1] is pre[0] else pre[1].take(rows)))
                logratio = new_logp - old_logp[idx]
                ratio = logratio.exp()
                with torch.no_grad():
                    old_kl = (-logratio).mean()
                    kl = ((ratio - 1) - logratio).mean()
                    clipfrac = ((ratio - 1.0).abs() > p.clip_coef).float().mean()
                mb_adv = b_adv[idx]
                if p.norm_adv and len(idx) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - p.clip_coef, 1 + p.clip_coef)).mean()
                if p.clip_vloss:
                    v_unclipped = (new_v - b_ret[idx]) ** 2
                    v_clip = old_v[idx] + (new_v - old_v[idx]).clamp(-p.clip_coef, p.clip_coef)
                    v_loss = 0.5 * torch.max(v_unclipped, (v_clip - b_ret[idx]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((new_v - b_ret[idx]) ** 2).mean()
                ent = entropy.mean()
                if critic_only:
                    loss = p.vf_coef * v_loss
                else:
                    loss = pg_loss - p.ent_coef * ent + p.vf_coef * v_loss
                self.policy.zero_grad(set_to_none=True)  # the frozen parameters' too (ppo.frozen)
                loss.backward()
                for param, mask in self._grad_masks:
                    if param.grad is not None:  # None in the critic-only warm-up updates
                        param.grad.mul_(mask)
                gn = nn.utils.clip_grad_norm_(self._trained, p.max_grad_norm)
                self.optimizer.step()
                for k, v in (("pg_loss", pg_loss), ("v_loss", v_loss), ("entropy", ent), ("approx_kl", kl),
                             ("old_approx_kl", old_kl), ("clipfrac", clipfrac), ("grad_norm", gn)):
                    sums[k] += float(v.detach())
                count += 1
                kls.append(float(kl))
            if p.target_kl is not None and float(np.mean(kls)) > p.target_kl:
                break
        self.policy.eval()
        out = {k: v / max(count, 1) for k, v in sums.items()}
        var_y = float(np.var(ret))
        out["explained_variance"] = math.nan if var_y == 0 else 1.0 - float(np.var(ret - ro.values)) / var_y
        out["epochs"] = epochs
        return out

    # ------------------------------------------------------------------ evaluation
    def evaluate(self) -> dict[str, float]:
        """Duplicate evaluation of the greedy policy against ``cfg.eval.opponents`` (frozen boards).

        Uses its own seeds, so it never changes the training streams. Returns
        ``eval_<opp>_mean/lo/hi`` (mean board score per deal and its 95% CI, score-sheet units).
        """
        from .agent import PPOAgent

        agent = PPOAgent(copy.deepcopy(self.policy).to("cpu"), self.encoder, greedy=True, config=self.cfg)
        out = self.evaluator(agent)
        log.info("update %d eval: %s", self.update_no, out)
        return out

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """Everything a resumed run needs to continue exactly."""
        return {
            "format": CHECKPOINT_FORMAT,
            "config": self.cfg.to_dict(),
            "obs_dim": self.encoder.size,
            "num_actions": self.num_actions,
            "policy": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "rng": {"numpy": self.rng.bit_generator.state, "torch_sample": self.gen.get_state()},
            "counters": {"update": self.update_no, "global_step": self.global_step, "env_steps": self.env_steps,
                         "deals": self.deals, "wall_time": self.wall_time},
            "pretrain": dict(self.pretrain_metrics),
            "pool": self.pool.state_dict(),
            "collector": self._collector_state() if self.overlap else None,
        }

    def _collector_state(self) -> dict[str, Any]:
        """The worker's streams and the rollout in flight (its snapshots by name, with the
        weights of any the pool has dropped since)."""
        out: dict[str, Any] = {"rng_state": self._col_rng_state, "gen_state": self._col_gen_state, "inflight": None}
        if self._inflight is not None:
            d = self._inflight.to_dict()
            names = {n for n, _ in self.pool.state_dict()["snapshots"]}
            d["snapshot_names"] = [n for n, _ in d["snapshots"]]
            d["snapshots"] = [(n, sd) for n, sd in d["snapshots"] if n not in names]
            out["inflight"] = d
        return out

    def _load_collector_state(self, st: dict[str, Any] | None) -> None:
        if (st is None) == self.overlap:
            was = "without" if st is None else "with"
            raise ConfigError(f"the checkpoint was written {was} rollout.overlap (the collection streams differ); "
                              f"resume it with rollout.overlap={'false' if st is None else 'true'}")
        if st is None:
            return
        self._col_rng_state, self._col_gen_state = st["rng_state"], st["gen_state"]
        self._inflight = None
        d = st.get("inflight")
        if d is not None:
            have = dict(self.pool.state_dict()["snapshots"]) | dict(d["snapshots"])
            d = dict(d)
            d["snapshots"] = [(n, have[n]) for n in d.pop("snapshot_names")]
            self._inflight = Submission.from_dict(d)

    def save_checkpoint(self, path: str | Path) -> None:
        """Write :meth:`state_dict` atomically (temporary file, then rename)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        torch.save(self.state_dict(), tmp)
        os.replace(tmp, path)

    def load_checkpoint(self, path: str | Path) -> None:
        """Restore a checkpoint written by :meth:`save_checkpoint`.

        Raises:
            ConfigError: wrong format, or a preset / observation / network that differs from this run's,
                or an ``init_policy`` or ``pretrain`` setting (``critic_warmup_updates`` aside) changed
                since the run began (they act only at its start), or ``ppo.frozen`` or ``ppo.actor_inputs``
                did (the optimizer's state fits the parameters trained).
        """
        ck = torch.load(path, map_location="cpu", weights_only=True)  # generator states must stay CPU tensors
        if ck.get("format") != CHECKPOINT_FORMAT:
            raise ConfigError(f"{path}: not a {CHECKPOINT_FORMAT} file")
        old = config_from_saved(ck["config"])
        for key in ("preset", "obs_kind", "network"):
            if getattr(old, key) != getattr(self.cfg, key):
                raise ConfigError(f"{path}: checkpoint {key}={getattr(old, key)!r} differs from the run's "
                                  f"{getattr(self.cfg, key)!r}")
        # settings that act only when a run begins: a resume would ignore a change without a word
        at_start = {"init_policy": (old.init_policy, self.cfg.init_policy)}
        at_start |= {f"pretrain.{k}": (v, getattr(self.cfg.pretrain, k)) for k, v in vars(old.pretrain).items()
                     if k != "critic_warmup_updates"}
        for key in ("frozen", "actor_inputs"):  # the optimizer's state holds the trained parameters of the run
            was, now = getattr(old.ppo, key), getattr(self.cfg.ppo, key)
            if was != now:
                raise ConfigError(f"{path}: ppo.{key} is {list(was)!r} in the checkpoint and {list(now)!r} now; a "
                                  f"resumed run trains what it began training (the optimizer's state is kept for "
                                  f"it). Resume with the checkpoint's value, or start a new run from its policy "
                                  f"(init_policy) in another --out")
        for key, (was, now) in at_start.items():
            if was != now:
                raise ConfigError(f"{path}: {key} is {was!r} in the checkpoint and {now!r} now; it acts "
                                  f"only at a run's start, so the resumed run would ignore it. Resume with the "
                                  f"checkpoint's value (--resume without --config uses it) or start a new run "
                                  f"in another --out")
        self.policy.load_state_dict(ck["policy"])
        self.optimizer.load_state_dict(ck["optimizer"])  # moves the Adam state to the parameters' device
        self.rng.bit_generator.state = ck["rng"]["numpy"]
        self.gen.set_state(ck["rng"]["torch_sample"])
        c = ck["counters"]
        self.update_no, self.global_step = int(c["update"]), int(c["global_step"])
        self.env_steps, self.deals, self.wall_time = int(c["env_steps"]), int(c["deals"]), float(c["wall_time"])
        self.pretrain_metrics = dict(ck.get("pretrain") or {})
        self.pool.load_state_dict(ck["pool"], self.policy)
        self._load_collector_state(ck.get("collector"))
        self.policy.eval()

    def export_policy(self, path: str | Path) -> None:
        """Write the policy file (network weights and config) for :func:`agents.ppo.agent.load_ppo_agent`."""
        save_policy(self.policy, self.cfg, path, {"update": self.update_no, "global_step": self.global_step,
                                                  "deals": self.deals, "wall_time": self.wall_time})

    # ------------------------------------------------------------------ tensorboard
    def _tensorboard(self, row: dict[str, float]) -> None:
        if not self.cfg.tensorboard or self.out_dir is None:
            return
        if self._writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(self.out_dir / "tb"), purge_step=int(row["update"]))
        step = int(row["global_step"])
        for k, v in row.items():
            if k not in ("update", "global_step") and not (isinstance(v, float) and math.isnan(v)):
                group = "eval" if k.startswith("eval_") else "pool" if k.startswith(("vs_", "mixed_")) else \
                    "perf" if k.endswith(("sps", "_time")) else "train"
                self._writer.add_scalar(f"{group}/{k}", v, step)


def _cpu(sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A CPU copy of a state dict (what crosses to the worker process and into files)."""
    return {k: v.detach().to("cpu", copy=True) for k, v in sd.items()}


def save_policy(policy: ActorCritic, cfg: TrainConfig, path: str | Path, meta: dict[str, Any] | None = None) -> None:
    """Write the network's weights (actor and critic, no optimizer) and the config needed to rebuild
    the agent. The agent acts with the actor only; the critic serves the light search
    (agents/search/net_search.py)."""
    weights = _cpu(policy.state_dict())
    write_policy_file({"format": POLICY_FORMAT, "config": cfg.to_dict(), "obs_dim": policy.obs_dim,
                       "num_actions": policy.num_actions, "policy": weights, "meta": dict(meta or {})}, path)


def write_policy_file(data: dict[str, Any], path: str | Path) -> None:
    """Save a policy-file dict at ``path`` whole or not at all (a temporary file, then a rename;
    the temporary file is removed if the write fails), creating the parent folder.

    Raises:
        OSError: ``path`` cannot be written (a folder of that name, no permission, a full disk).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        torch.save(data, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class _CsvLog:
    """Append-only CSV of per-update metrics; on resume, rows after the checkpoint's update are dropped."""

    def __init__(self, path: Path, columns: list[str], resume_update: int):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.columns = columns
        rows: list[dict[str, str]] = []
        if path.exists() and resume_update > 0:
            with open(path, newline="", encoding="utf-8") as f:
                rows = [r for r in csv.DictReader(f) if int(float(r.get("update") or 0)) <= resume_update]
        self.f = open(path, "w", newline="", encoding="utf-8")  # noqa: SIM115 (kept open for the run)
        self.w = csv.DictWriter(self.f, fieldnames=columns, extrasaction="ignore")
        self.w.writeheader()
        for r in rows:
            self.w.writerow(r)
        self.f.flush()

    def write(self, row: dict[str, float]) -> None:
        self.w.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
        self.f.flush()

    def close(self) -> None:
        self.f.close()


__all__ = [
    "CHECKPOINT_FORMAT",
    "CORE_COLUMNS",
    "POLICY_FORMAT",
    "PPOTrainer",
    "configure_torch",
    "save_policy",
    "write_policy_file",
]
