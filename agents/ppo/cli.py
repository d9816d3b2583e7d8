"""``blot-train``: train a PPO policy from a YAML config.

Examples::

    blot-train --config configs/ppo_bazar.yaml
    blot-train --config configs/ppo_bazar.yaml --total-steps 200000 --out runs/short
    blot-train --config configs/ppo_bazar.yaml --out runs/short --resume --total-steps 400000
    blot-train --config configs/ppo_bazar.yaml --set ppo.ent_coef=0.02 --set rollout.num_envs=32

Writes ``DIR/checkpoint.pt`` (exact-resume state), ``DIR/policy.pt`` (the acting policy,
loadable with ``load_ppo_agent(path)`` or ``blot-eval --agent DIR/policy.pt``),
``DIR/metrics.csv``, ``DIR/tb/`` (TensorBoard) and ``DIR/config.yaml``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from blot_env.errors import BlotError

from ..eval.cli import positive_int


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="blot-train", description="Train a PPO policy by self-play (agents/ppo).")
    p.add_argument("--config", type=Path, help="YAML config (configs/ppo_<preset>.yaml); default: built-in "
                   "defaults, or the checkpoint's config with --resume")
    p.add_argument("--total-steps", type=int, help="learner agent steps to train for (overrides total_steps)")
    p.add_argument("--out", type=Path, help="output directory (default runs/ppo_<preset>)")
    p.add_argument("--resume", action="store_true", help="continue exactly from OUT/checkpoint.pt")
    p.add_argument("--seed", type=int, help="overrides seed")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config field, dotted keys (ppo.learning_rate=1e-4); repeatable")
    p.add_argument("--max-updates", type=positive_int,
                   help="stop after this many updates in this call (a later --resume continues)")
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    p.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    return p


def resolve_config(args: argparse.Namespace) -> Any:
    """The run's config (a TrainConfig): file (or the checkpoint's when resuming without
    --config), then overrides."""
    from .config import TrainConfig, apply_overrides, config_from_saved, load_config
    from .trainer import CHECKPOINT_NAME

    if args.config is not None:
        cfg = load_config(args.config)
    elif args.resume and args.out is not None and (args.out / CHECKPOINT_NAME).exists():
        from .agent import read_policy_file

        cfg = config_from_saved(read_policy_file(args.out / CHECKPOINT_NAME)["config"])
    else:
        cfg = TrainConfig()
    extra = list(args.overrides)
    if args.total_steps is not None:
        extra.append(f"total_steps={args.total_steps}")
    if args.seed is not None:
        extra.append(f"seed={args.seed}")
    return apply_overrides(cfg, extra) if extra else cfg


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ..extras import MissingExtraError, require

    try:  # python -m agents.ppo.cli comes here without the console script's check
        require("train", "blot-train")
    except MissingExtraError as e:
        print(f"blot-train: {e}", file=sys.stderr)
        return 2
    import yaml

    from .trainer import POLICY_NAME

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        cfg = resolve_config(args)
        out = args.out or Path("runs") / f"ppo_{cfg.preset}"
        from .build import build_trainer

        trainer = build_trainer(cfg, out, resume=args.resume)
    except (BlotError, OSError, yaml.YAMLError) as e:
        print(f"blot-train: {e}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "config.yaml", "w", encoding="utf-8") as f:
        yaml.safe_dump(cfg.to_dict(), f, sort_keys=False)
    cloned_before = bool(trainer.pretrain_metrics)
    rows = trainer.train(max_updates=args.max_updates, progress=not args.no_progress)
    if not rows and trainer.pretrain_metrics and not cloned_before:
        m = trainer.pretrain_metrics
        seen = " (seen in the earlier passes)" if cfg.pretrain.data and cfg.pretrain.passes > 1 else ""
        print(f"blot-train: cloned {int(m['bc_samples'])} decisions in {m['bc_seconds']:.0f} s (accuracy "
              f"{m['bc_accuracy']:.3f} on the last chunk before the last pass trained on it{seen}"
              + (f"; KL to the start {m['bc_kl']:.4f} nats" if "bc_kl" in m else "")
              + (f"; regret of the greedy card by the file's card values {m['bc_dd_regret']:.3f} table points on the "
                 "last chunk before it trained on it" if "bc_dd_regret" in m else "")
              + f"); policy: {out / POLICY_NAME}")
    elif rows:
        steps = sum(r["batch_steps"] for r in rows)
        col = steps / sum(r["collect_time"] for r in rows)
        upd = steps / sum(r["update_time"] for r in rows)
        print(f"blot-train: {trainer.update_no} updates, {trainer.global_step} learner steps, "
              f"{trainer.deals} deals, {trainer.wall_time:.0f} s; this call: collection {col:.0f} and update "
              f"{upd:.0f} learner steps/s; policy: {out / POLICY_NAME}")
    else:
        print(f"blot-train: nothing to do ({trainer.global_step} >= total_steps {cfg.total_steps})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
