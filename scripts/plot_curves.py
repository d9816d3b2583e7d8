"""Learning curves of training runs: the periodic duplicate evaluations of ``metrics.csv``.

    python scripts/plot_curves.py runs/curve_today runs/ppo_bazar --labels "today's settings,shipped config" \
        --opponent rules --x steps --out docs/img/curve_bazar_steps.png
    python scripts/plot_curves.py runs/ppo_duel runs/ppo_open --opponent rules-medium --x minutes --out curves.png

Each run directory holds the ``metrics.csv`` that blot-train writes; its ``eval_<opponent>_mean``
/ ``_lo`` / ``_hi`` columns (mean board score per deal on the run's dev boards, 95% CI, in
score-sheet units) are drawn against learner steps (``--x steps``) or wall time (``--x
minutes``, the trainer's own clock: cloning and evaluations included). ``--table`` prints the
points as a Markdown table instead of (or besides) drawing them.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path


def load(run: Path, opponent: str) -> list[dict[str, float]]:
    """The evaluation rows of the run's ``metrics.csv`` for ``opponent`` (step, minutes, mean, lo, hi).

    Raises:
        FileNotFoundError: no metrics.csv; KeyError: the run never evaluated against ``opponent``.
    """
    with open(run / "metrics.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    key = f"eval_{opponent}_mean"
    if rows and key not in rows[0]:
        have = sorted(k[5:-5] for k in rows[0] if k.startswith("eval_") and k.endswith("_mean"))
        raise KeyError(f"{run}: no evaluations against {opponent!r} (it has: {', '.join(have) or 'none'})")
    out = []
    for r in rows:
        if r.get(key):
            out.append({"step": float(r["global_step"]), "minutes": float(r["wall_time"]) / 60.0,
                        "mean": float(r[key]), "lo": float(r[f"eval_{opponent}_lo"]),
                        "hi": float(r[f"eval_{opponent}_hi"])})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="blot-train output directories")
    ap.add_argument("--labels", default="", help="comma-separated legend labels (default: the directory names)")
    ap.add_argument("--opponent", default="rules", help="the evaluation opponent to draw")
    ap.add_argument("--x", choices=["steps", "minutes"], default="steps")
    ap.add_argument("--max-steps", type=float, default=None, help="draw only points up to this many learner steps")
    ap.add_argument("--out", type=Path, help="PNG file to write")
    ap.add_argument("--title", default="")
    ap.add_argument("--table", action="store_true", help="print the points as a Markdown table")
    args = ap.parse_args(argv)
    labels = [s.strip() for s in args.labels.split(",")] if args.labels else [r.name for r in args.runs]
    if len(labels) != len(args.runs):
        ap.error(f"--labels gives {len(labels)} labels for {len(args.runs)} runs")
    try:
        curves = [load(r, args.opponent) for r in args.runs]
    except (OSError, KeyError) as e:
        ap.error(str(e))
    if args.max_steps is not None:
        curves = [[p for p in c if p["step"] <= args.max_steps] for c in curves]
    if args.table:
        for label, c in zip(labels, curves):
            print(f"\n{label} (vs {args.opponent}, dev boards)\n")
            print("| learner steps | minutes | mean per deal [95% CI] |\n|---|---|---|")
            for p in c:
                print(f"| {p['step']:,.0f} | {p['minutes']:.1f} | {p['mean']:+.2f} [{p['lo']:+.2f}, {p['hi']:+.2f}] |")
    if args.out:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7.5, 4))
        for label, c in zip(labels, curves):
            if not c:
                continue
            x = [p["step"] / 1e6 if args.x == "steps" else p["minutes"] for p in c]
            m = [p["mean"] for p in c]
            ax.plot(x, m, "o-", label=label, markersize=3)
            ax.fill_between(x, [p["lo"] for p in c], [p["hi"] for p in c], alpha=0.15)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xlabel("learner steps (millions)" if args.x == "steps" else "wall time (minutes)")
        ax.set_ylabel(f"mean per deal vs {args.opponent}")
        ax.set_title(args.title or f"duplicate boards of the dev suite against {args.opponent} (95% CI)", fontsize=10)
        ax.legend(fontsize=8)
        fig.tight_layout()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.out, dpi=110)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
