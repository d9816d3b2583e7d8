"""``blot-train``: train a PPO policy from a YAML config, or every stage of a recipe.

Examples::

    blot-train --config configs/ppo_bazar.yaml
    blot-train --config configs/ppo_bazar.yaml --total-steps 200000 --out runs/short
    blot-train --config configs/ppo_bazar.yaml --out runs/short --resume --total-steps 400000
    blot-train --config configs/ppo_bazar.yaml --set ppo.ent_coef=0.02 --set rollout.num_envs=32
    blot-train --recipe bazar --out runs/bazar              # a shipped policy from nothing; rerun to continue
    blot-train --recipe duel --tiny --out runs/duel_tiny    # the same chain at toy scale (CI)
    blot-train --recipe bazar-app --out runs/bazar-app --use bazar=runs/bazar

A training run writes ``DIR/checkpoint.pt`` (exact-resume state), ``DIR/policy.pt`` (the acting
policy, loadable with ``load_ppo_agent(path)`` or ``blot-eval --agent DIR/policy.pt``),
``DIR/metrics.csv``, ``DIR/tb/`` (TensorBoard) and ``DIR/config.yaml`` (the resolved config). A
recipe (configs/recipes/<name>.yaml, agents/ppo/recipe.py) runs its stages in ``DIR/<stage>/``
and writes ``DIR/ppo_<preset>.pt`` with its model card ``DIR/ppo_<preset>.json``.
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
                   help="stop after this many updates in this call (a later --resume, or the same --recipe "
                        "command, continues)")
    r = p.add_argument_group("recipes (configs/recipes/, agents/ppo/recipe.py)")
    r.add_argument("--recipe", metavar="NAME|FILE",
                   help="run every stage of a recipe (bazar, bazar-app, duel, duel-app, open, belote, or a file) "
                        "under --out (default runs/<recipe>); rerun the same command to continue after a stop")
    r.add_argument("--tiny", action="store_true", help="the recipe at toy scale (a few updates per stage; CI)")
    r.add_argument("--no-search", action="store_true",
                   help="skip the model card's rows against the search agents (CPU-hours each)")
    r.add_argument("--workers", type=positive_int, default=2,
                   help="processes for the selections' and the card's boards and the cloning deals (default 2)")
    r.add_argument("--use", action="append", default=[], metavar="STAGE=DIR",
                   help="run (or reuse) a recipe stage's nested recipe in DIR, e.g. bazar=runs/bazar")
    r.add_argument("--until", metavar="STAGE", help="stop after this stage of the recipe")
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


def _recipe_main(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``blot-train --recipe``: :func:`agents.ppo.recipe.run_recipe`."""
    given = [flag for flag, v in (("--config", args.config), ("--resume", args.resume), ("--set", args.overrides),
                                  ("--total-steps", args.total_steps), ("--seed", args.seed))
             if v not in (None, False, [])]
    if given:
        p.error(f"--recipe takes its configs from the recipe file; {', '.join(given)} cannot go with it")
    use = {}
    for item in args.use:
        name, sep, folder = item.partition("=")
        if not sep or not name or not folder:
            p.error(f"--use {item!r}: expected STAGE=DIR (bazar=runs/bazar, say)")
        use[name] = Path(folder)
    import yaml

    from .recipe import load_recipe, run_recipe

    try:
        recipe = load_recipe(args.recipe)
        out = args.out or Path("runs") / recipe.name
        card = run_recipe(recipe, out, tiny=args.tiny, search=not args.no_search, workers=args.workers, use=use,
                          until=args.until, max_updates=args.max_updates, progress=not args.no_progress)
    except (BlotError, OSError, yaml.YAMLError) as e:
        print(f"blot-train: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("blot-train: interrupted; rerun the same command to continue", file=sys.stderr)
        return 130
    if card is not None:
        rows = "; ".join(f"{r['mean']:+.2f} [{r['ci95'][0]:+.2f}, {r['ci95'][1]:+.2f}] vs {r['opponent']}"
                         f"{' (mixed)' if r['mode'] == 'mixed' else ''}" for r in card["test_rows"])
        print(f"blot-train: recipe {recipe.name}: {out / card['policy']} (weights {card['weights_digest']}, "
              f"{card['learner_steps']['total']:,} learner steps); {rows} per deal on "
              f"{card['test_rows'][0]['boards'] if card['test_rows'] else 0} test boards")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from ..extras import MissingExtraError, require

    try:  # python -m agents.ppo.cli comes here without the console script's check
        require("train", "blot-train")
    except MissingExtraError as e:
        print(f"blot-train: {e}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.recipe is not None:
        return _recipe_main(parser, args)
    for flag, v in (("--tiny", args.tiny), ("--no-search", args.no_search), ("--use", args.use),
                    ("--until", args.until)):
        if v:
            parser.error(f"{flag} goes with --recipe")
    import yaml

    from .trainer import POLICY_NAME

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
