"""PPO training throughput, end to end (collection plus update), one change at a time.

    python scripts/bench_train.py [--preset bazar] [--obs-kind observation] [--updates 4] [--json]
    python scripts/bench_train.py --preset all --only baseline,fast     # every preset, two rows each

Each row builds a trainer (no pretraining, no periodic evaluation, nothing written), runs one
fills the opponent pool with snapshots (as it is once a run has trained ``pool.snapshot_every``
updates), runs one warm-up update (compilation, worker start-up), then ``--updates`` timed
updates, and
reports learner steps per second of collection alone, of the update alone, and end to end
(learner steps over the wall time of the timed updates). *Learner steps* are the learner's
decisions with more than one legal action (docs/training.md).

The rows, from today's settings to the shipped config, change one thing each:

``baseline``  the settings of configs/ppo_bazar.yaml before the speed-up: dense input layer,
              64 envs, 256 deals per update, 4 epochs, the pool's baselines in 49% of deals,
              one process, one torch thread
``sparse``    the input layer over the active features (agents/ppo/sparse.py)
``batch``     256 envs and 512 deals per update (bigger forward passes and minibatches)
``pool``      baselines (Python agents) in 4.5% of deals, snapshots in the rest of the pool deals
``epochs``    2 epochs of 4 minibatches instead of 4
``fast``      collection in a worker process overlapping the update (two cores): the preset's
              shipped config, configs/ppo_<preset>.yaml

``--json`` prints one object: ``{"preset", "obs_kind", "rows": [...], "end_to_end_steps_per_s"
(the ``fast`` row), "baseline_end_to_end_steps_per_s", "speedup", "torch_threads" and "processes"
(of the ``fast`` row), "cpus", "torch", "device", "cuda"}``; every row also carries its own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

#: the settings of the PPO configs before the speed-up (the ``baseline`` row)
TODAY = ["network.input_layer=dense", "network.precision=float32", "network.critic=observation",
         "network.hidden=[256, 256]", "network.critic_hidden=[]", "rollout.num_envs=64",
         "rollout.deals_per_rollout=256", "ppo.update_epochs=4", "ppo.num_minibatches=4", "rollout.overlap=false",
         "torch_threads=1", "pool.opponent_prob=0.7", "pool.baseline_weight=0.7", "pool.baselines=[random, rules]",
         "pool.baseline_probs=[0.1, 0.9]", "pool.snapshot_every=20", "pool.max_snapshots=5", "ppo.learning_rate=0.0001"]
#: one change per row, applied on top of the previous rows
STEPS = [
    ("baseline", []),
    ("sparse", ["network.input_layer=sparse"]),
    ("batch", ["rollout.num_envs=256", "rollout.deals_per_rollout=512"]),
    ("pool", ["pool.opponent_prob=0.3", "pool.baseline_weight=0.15"]),
    ("epochs", ["ppo.update_epochs=2"]),
]
COMMON = ["pretrain.agent=", "eval.every=0", "tensorboard=false", "total_steps=1000000000"]


def measure(overrides: list[str], preset: str, obs_kind: str, updates: int, config: Path | None = None) -> dict:
    """Throughput of ``updates`` timed updates after a warm-up one."""
    from agents.ppo.build import build_trainer
    from agents.ppo.config import load_config

    path = config or REPO / "configs" / f"ppo_{preset}.yaml"
    cfg = load_config(path, [f"preset={preset}", f"obs_kind={obs_kind}", *COMMON, *overrides])
    trainer = build_trainer(cfg, None)
    try:
        # the pool as it is once training runs: snapshots of the learner beside the baselines
        for i in range(cfg.pool.max_snapshots if cfg.pool.snapshot_every else 0):
            trainer.pool.add_snapshot(f"bench{i}", trainer.policy)
        trainer.train_one_update()
        t0 = time.perf_counter()
        rows = [trainer.train_one_update() for _ in range(updates)]
        wall = time.perf_counter() - t0
    finally:
        trainer.close()
    steps = sum(r["batch_steps"] for r in rows)
    return {
        "learner_steps": int(steps),
        "seconds": wall,
        "collect_steps_per_s": steps / sum(r["collect_time"] for r in rows),
        "update_steps_per_s": steps / sum(r["update_time"] for r in rows),
        "end_to_end_steps_per_s": steps / wall,
        "overlap": cfg.rollout.overlap,
        "torch_threads": cfg.torch_threads,
        "network": f"{cfg.network.input_layer} {list(cfg.network.hidden)} {cfg.network.precision} "
                   f"critic={cfg.network.critic}",
        "batch": f"{cfg.rollout.num_envs} envs, {cfg.rollout.deals_per_rollout} deals, "
                 f"{cfg.ppo.update_epochs}x{cfg.ppo.num_minibatches} minibatches",
    }


def run(preset: str, obs_kind: str, updates: int, only: set[str] | None, extra: list[str] | None = None) -> dict:
    rows = []
    extra = list(extra or [])
    acc: list[str] = list(TODAY)
    for name, change in STEPS:
        acc = acc + change
        if only and name not in only:
            continue
        r = measure(acc + extra, preset, obs_kind, updates)
        rows.append({"row": name, **r})
        _print_row(rows[-1])
    if not only or "fast" in only:
        r = measure(extra, preset, obs_kind, updates)
        rows.append({"row": "fast", **r})
        _print_row(rows[-1])
    out = {"preset": preset, "obs_kind": obs_kind, "rows": rows}
    by = {r["row"]: r for r in rows}
    if "fast" in by:
        out["end_to_end_steps_per_s"] = by["fast"]["end_to_end_steps_per_s"]
        # the thread settings of the measured configuration: torch threads per process, and
        # processes (the trainer, plus the collection worker with rollout.overlap)
        out["torch_threads"] = by["fast"]["torch_threads"]
        out["processes"] = 2 if by["fast"]["overlap"] else 1
    if "baseline" in by:
        out["baseline_end_to_end_steps_per_s"] = by["baseline"]["end_to_end_steps_per_s"]
    if "fast" in by and "baseline" in by:
        out["speedup"] = out["end_to_end_steps_per_s"] / out["baseline_end_to_end_steps_per_s"]
    return out


def _print_row(r: dict) -> None:
    print(f"{r['row']:>9}  collect {r['collect_steps_per_s']:8.0f}  update {r['update_steps_per_s']:8.0f}  "
          f"end-to-end {r['end_to_end_steps_per_s']:8.0f} learner steps/s   [{r['network']}; {r['batch']}; "
          f"overlap={r['overlap']}, torch threads={r['torch_threads']}]", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    from blot_env.observation import KINDS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="bazar", help="a preset, or 'all'")
    ap.add_argument("--obs-kind", default="observation", choices=list(KINDS))
    ap.add_argument("--updates", type=int, default=4, help="timed updates per row (after one warm-up update)")
    ap.add_argument("--only", default="", help="comma-separated rows to run (default: all)")
    ap.add_argument("--json", action="store_true", help="print the results as one JSON object")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="a config override applied to every row (blot-train --set syntax); repeatable")
    args = ap.parse_args(argv)
    if args.updates < 1:
        ap.error(f"--updates must be >= 1, got {args.updates}")
    import torch

    from blot_env.rules_config import PRESETS

    presets = sorted(PRESETS) if args.preset == "all" else [args.preset]
    for p in presets:
        if p not in PRESETS:
            ap.error(f"unknown preset {p!r}; known: {', '.join(sorted(PRESETS))}, all")
    only = {s.strip() for s in args.only.split(",") if s.strip()} or None
    known = {n for n, _ in STEPS} | {"fast"}
    if only and only - known:
        ap.error(f"unknown rows {sorted(only - known)}; known: {', '.join(sorted(known))}")
    results = []
    for p in presets:
        print(f"== {p} ({args.obs_kind})", file=sys.stderr, flush=True)
        results.append(run(p, args.obs_kind, args.updates, only, args.overrides))
    dev = next((o.split("=", 1)[1] for o in args.overrides if o.startswith("device=")), "cpu")
    meta = {"cpus": os.cpu_count(), "torch": torch.__version__, "device": dev,
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    if args.json:
        out = {**results[0], **meta} if len(results) == 1 else {"presets": results, **meta}
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
