"""The README's main job: a short PPO training on the CPU, then duplicate evaluation against the baselines.

1. Trains a PPO policy on Bazar Blot with configs/ppo_bazar.yaml (CPU, one torch thread):
   a short behaviour-cloning warm start from the ``rules`` agent (6,000 deals), then PPO
   self-play for ``--total-steps`` learner steps, stopping early at ``--train-minutes``.
2. Evaluates it, and the shipped pretrained ``ppo`` policy, against ``random`` (L0) and
   ``rules`` (L1) on duplicate boards of the frozen test suite (agents.arena,
   spec/evaluation.md) and prints the table.
3. Writes the learning curve (``learning_curve.png``), ``report.json`` and ``report.md``.

Usage::

    python scripts/main_job.py                    # about 8 minutes on 2 cores
    python scripts/main_job.py --train-minutes 2 --boards 200 --out runs/quick
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

#: the short run: a smaller behaviour-cloning warm start, a learning-curve point every 20 updates
MAIN_JOB_OVERRIDES = ("pretrain.deals=6000", "pretrain.chunk_deals=2000", "eval.every=20", "eval.boards=100",
                      "checkpoint_every=20", "keep_checkpoints=false")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", type=Path, default=REPO / "configs" / "ppo_bazar.yaml")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "main_job")
    ap.add_argument("--total-steps", type=int, default=1_000_000,
                    help="learner steps of the short run (the learning rate anneals over them)")
    ap.add_argument("--train-minutes", type=float, default=10.0, help="wall-time cap of the training")
    ap.add_argument("--boards", type=int, default=1000, help="duplicate boards per evaluation row")
    ap.add_argument("--split", default="test", help="deal suite split (test: reported numbers)")
    ap.add_argument("--workers", type=int, default=2, help="evaluation processes")
    ap.add_argument("--no-shipped", action="store_true", help="skip the rows of the shipped ppo policy")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="extra config overrides (see blot-train --set)")
    return ap.parse_args(argv)


def train(args: argparse.Namespace) -> tuple[Path, dict]:
    from agents.ppo.config import load_config
    from agents.ppo.trainer import POLICY_NAME, PPOTrainer

    cfg = load_config(args.config, [f"total_steps={args.total_steps}", *MAIN_JOB_OVERRIDES, *args.overrides])
    run_dir = args.out / "train"
    if run_dir.exists():
        for f in run_dir.glob("*"):
            if f.is_file():
                f.unlink()
    trainer = PPOTrainer(cfg, run_dir)
    t0 = time.perf_counter()
    rows = trainer.train(progress=True, max_seconds=args.train_minutes * 60)
    wall = time.perf_counter() - t0
    steps = sum(r["batch_steps"] for r in rows)
    info = {
        "updates": trainer.update_no, "learner_steps": trainer.global_step, "env_steps": trainer.env_steps,
        "deals": trainer.deals, "wall_seconds": wall, "finished": trainer.done,
        "collect_sps": steps / sum(r["collect_time"] for r in rows),
        "update_sps": steps / sum(r["update_time"] for r in rows),
        "overall_sps": steps / wall,
    }
    return run_dir / POLICY_NAME, info


def evaluate(policy: Path, args: argparse.Namespace) -> list[dict]:
    from agents.arena import run

    rows = []
    candidates = [str(policy)] + ([] if args.no_shipped else ["ppo"])
    for cand in candidates:
        report = run(cand, ["random", "rules"], preset="bazar", boards=args.boards, split=args.split,
                     workers=args.workers, progress=True)
        for r in report["rows"]:
            r["agent"] = "ppo (this run)" if cand == str(policy) else "ppo (shipped)"
            rows.append(r)
    return rows


def plot_curve(metrics: Path, out: Path) -> None:
    """Learning curve from a run's metrics.csv: one panel per baseline (training-deal score
    difference, raw and smoothed, plus the duplicate evaluations with their 95% CI)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    with open(metrics, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    x = np.array([float(r["global_step"]) for r in rows])

    def col(key: str) -> np.ndarray:
        return np.array([float(r[key]) if r.get(key) else np.nan for r in rows])

    names = [n for n in ("rules", "random") if f"vs_{n}_tp" in rows[0] or f"eval_{n}_mean" in rows[0]]
    fig, axes = plt.subplots(len(names), 1, figsize=(7, 3 * len(names)), sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        if f"vs_{name}_tp" in rows[0]:
            y = col(f"vs_{name}_tp")
            ok = ~np.isnan(y)
            if ok.any():
                k = 9
                sm = np.convolve(np.where(ok, y, 0.0), np.ones(k), "same") / np.maximum(
                    np.convolve(ok.astype(float), np.ones(k), "same"), 1)
                ax.plot(x[ok], y[ok], alpha=0.25, color="tab:blue")
                ax.plot(x, sm, color="tab:blue", label=f"training deals vs {name} (smoothed)")
        if f"eval_{name}_mean" in rows[0]:
            m, lo, hi = col(f"eval_{name}_mean"), col(f"eval_{name}_lo"), col(f"eval_{name}_hi")
            ok = ~np.isnan(m)
            if ok.any():
                ax.errorbar(x[ok], m[ok], yerr=[m[ok] - lo[ok], hi[ok] - m[ok]], fmt="o-", color="tab:green",
                            capsize=3, label=f"duplicate boards vs {name} (dev suite, 95% CI)")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_ylabel("tp per deal")
        ax.set_title(f"learner side minus {name}")
        ax.legend(fontsize=8)
    axes[-1, 0].set_xlabel("learner steps")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def markdown(rows: list[dict], info: dict) -> str:
    lines = ["| agent | opponent | boards | mean/deal (tp) | 95% CI | board win rate | 95% CI |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lo, hi = r["ci95"]
        wlo, whi = r["win_rate_ci95"]
        lines.append(f"| {r['agent']} | {r['opponent']} | {r['boards']} | {r['mean_board_score']:+.2f} | "
                     f"[{lo:+.2f}, {hi:+.2f}] | {r['board_win_rate']:.3f} | [{wlo:.3f}, {whi:.3f}] |")
    lines.append("")
    lines.append(f"Training: {info['updates']} updates, {info['learner_steps']} learner steps, {info['deals']} deals "
                 f"in {info['wall_seconds']:.0f} s; collection {info['collect_sps']:.0f} and update "
                 f"{info['update_sps']:.0f} learner steps/s.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    import torch

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"[main job] training PPO on bazar for up to {args.train_minutes:g} min ({args.total_steps} steps)",
          flush=True)
    policy, info = train(args)
    print(f"[main job] trained: {info['learner_steps']} learner steps, {info['deals']} deals in "
          f"{info['wall_seconds']:.0f} s (collection {info['collect_sps']:.0f}, update {info['update_sps']:.0f} "
          f"learner steps/s)", flush=True)
    plot_curve(policy.parent / "metrics.csv", args.out / "learning_curve.png")
    print(f"[main job] evaluating on {args.boards} duplicate boards ({args.split} suite)", flush=True)
    rows = evaluate(policy, args)
    from agents.arena_cli import format_table

    print(format_table({"preset": "bazar", "split": args.split, "mixed": False, "rows": rows}))
    total = time.perf_counter() - t0
    report = {"training": info, "evaluation": rows, "total_seconds": total}
    (args.out / "report.json").write_text(json.dumps(report, indent=1, default=float), encoding="utf-8")
    (args.out / "report.md").write_text(markdown(rows, info) + f"\nTotal wall time {total:.0f} s.\n",
                                        encoding="utf-8")
    print(f"[main job] done in {total:.0f} s; learning curve {args.out / 'learning_curve.png'}, "
          f"report {args.out / 'report.md'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
