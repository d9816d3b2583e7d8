"""Collection in a worker process, overlapping the update (``rollout.overlap: true``).

On two cores the update of rollout ``k`` and the collection of rollout ``k + 1`` can run at
the same time. :class:`AsyncCollector` runs a :class:`~agents.ppo.rollout.RolloutCollector`
in a worker process (spawned, one torch thread, the network on the CPU); the trainer sends it
the parameters to act with, the pool's snapshots when they change, and the collector's
random-generator states, and receives the rollout with the states after it. (Snapshots go with
every request; the worker rebuilds its pool only when their names change. The rollout's large
arrays come back as shared-memory tensors, not pickled copies.)

The trainer keeps the pipeline one rollout ahead: it waits for rollout ``k + 1``, submits
rollout ``k + 2`` with the parameters it has then (those of update ``k``), and updates on
rollout ``k + 1``. So each rollout is collected by the policy of one update earlier (a lag
of one update, which the clipped ratio of PPO absorbs; the stored log-probabilities are
those of the policy that acted). The generator states live in the trainer, so a checkpoint
holds everything the in-flight rollout needs (its parameters, snapshots and generator
states) and a resumed run collects it again, bit for bit.
"""

from __future__ import annotations

import contextlib
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.multiprocessing as mp

from blot_env.observation import ObservationEncoder
from blot_env.rules_config import make_rules

from .config import TrainConfig
from .network import build_policy
from .rollout import AgentFactory, OpponentPool, Rollout, RolloutCollector

#: Rollout fields sent through shared memory (torch.multiprocessing's tensor sharing)
_SHARED = ("obs", "masks", "privileged")


@dataclass
class Submission:
    """What the worker needs for one rollout (also the in-flight part of a checkpoint)."""

    num_deals: int
    """Complete deals to collect."""
    params: dict[str, torch.Tensor]
    """The acting policy's ``state_dict`` (CPU tensors)."""
    snapshots: list[tuple[str, dict[str, torch.Tensor]]]
    """The pool's snapshots when this rollout starts."""
    rng_state: dict[str, Any]
    """``numpy`` bit-generator state at the start of the rollout (deals, pool draws, baselines)."""
    gen_state: torch.Tensor
    """``torch.Generator`` state at the start (action sampling)."""

    def to_dict(self) -> dict[str, Any]:
        return {"num_deals": self.num_deals, "params": self.params, "snapshots": self.snapshots,
                "rng_state": self.rng_state, "gen_state": self.gen_state}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Submission:
        return cls(int(d["num_deals"]), d["params"], list(d["snapshots"]), d["rng_state"], d["gen_state"])


def _worker(conn, cfg_dict: dict[str, Any], agent_factory: AgentFactory | None) -> None:
    from .config import config_from_dict

    torch.set_num_threads(1)
    cfg: TrainConfig = config_from_dict(cfg_dict)
    torch.use_deterministic_algorithms(cfg.deterministic)
    rules = make_rules(cfg.preset)
    encoder = ObservationEncoder(rules, cfg.obs_kind)
    from blot_env.actions import layout_for

    policy = build_policy(cfg, encoder, layout_for(rules)).eval()
    pool = OpponentPool(cfg.pool, cfg.preset, cfg.seed, agent_factory)
    collector = RolloutCollector(rules, encoder, cfg.rollout, pool, cfg.pool,
                                 privileged=policy.privileged or policy.oracle)
    rng = np.random.default_rng(0)
    gen = torch.Generator()
    snap_key: list[str] | None = None
    conn.send(("ready", None))
    while True:
        msg = conn.recv()
        if msg is None:
            break
        sub = Submission.from_dict(msg)
        try:
            policy.load_state_dict(sub.params)
            key = [name for name, _ in sub.snapshots]
            if key != snap_key:
                pool.load_state_dict({"snapshots": sub.snapshots}, policy)
                snap_key = key
            rng.bit_generator.state = sub.rng_state
            gen.set_state(sub.gen_state)
            ro = collector.collect(policy, sub.num_deals, rng, gen)
            for name in _SHARED:  # large arrays travel as shared-memory tensors, not pickled copies
                if getattr(ro, name) is not None:
                    setattr(ro, name, torch.from_numpy(getattr(ro, name)))
            conn.send(("rollout", (ro, rng.bit_generator.state, gen.get_state())))
        except Exception:  # report with the traceback, don't hang the trainer
            conn.send(("error", traceback.format_exc()))


class AsyncCollector:
    """A rollout collector in a worker process (see the module doc).

    Args:
        cfg: the run's config (the worker builds its own engine, pool and policy copy from it).
        agent_factory: builds the pool's baseline agents in the worker; must be picklable (a
            module-level function such as ``agents.registry.make_agent``).

    Raises:
        RuntimeError: the worker failed to start or reported an error.
    """

    def __init__(self, cfg: TrainConfig, agent_factory: AgentFactory | None) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_worker, args=(child, cfg.to_dict(), agent_factory), daemon=True,
                                 name="blot-ppo-collector")
        self._proc.start()
        child.close()
        self._expect("ready")
        self.pending: Submission | None = None

    def _expect(self, kind: str) -> Any:
        try:
            tag, payload = self._conn.recv()
        except EOFError:
            raise RuntimeError("the collection worker died (see its error output above)") from None
        if tag == "error":
            raise RuntimeError(f"the collection worker failed: {payload}")
        if tag != kind:
            raise RuntimeError(f"the collection worker sent {tag!r}, expected {kind!r}")
        return payload

    def submit(self, sub: Submission) -> None:
        """Start collecting one rollout (at most one in flight)."""
        if self.pending is not None:
            raise RuntimeError("a rollout is already in flight")
        self._conn.send(sub.to_dict())
        self.pending = sub

    def result(self) -> tuple[Rollout, dict[str, Any], torch.Tensor]:
        """Wait for the rollout in flight: ``(rollout, numpy state after it, torch state after it)``.

        Raises:
            RuntimeError: nothing in flight, or the worker died or failed (its traceback is in the message).
        """
        if self.pending is None:
            raise RuntimeError("no rollout in flight")
        ro, rng_state, gen_state = self._expect("rollout")
        for name in _SHARED:
            if isinstance(getattr(ro, name), torch.Tensor):
                setattr(ro, name, getattr(ro, name).numpy())
        self.pending = None
        return ro, rng_state, gen_state

    def close(self) -> None:
        """Stop the worker. A rollout in flight is dropped at once (the trainer's checkpoint
        holds what it needs to collect it again)."""
        if self._proc.is_alive():
            if self.pending is not None:
                self._proc.terminate()
            else:
                with contextlib.suppress(BrokenPipeError, EOFError, OSError):
                    self._conn.send(None)
            self._proc.join(timeout=10)
            if self._proc.is_alive():
                self._proc.kill()
        self._conn.close()
        self.pending = None


__all__ = ["AsyncCollector", "Submission"]
