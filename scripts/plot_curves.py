"""Learning curves of training runs: the periodic duplicate evaluations of ``metrics.csv``.

    python scripts/plot_curves.py runs/curve_today runs/ppo_bazar --labels "today's settings,shipped config" \
        --opponent rules --x steps --out docs/img/curve_bazar_steps.png
    python scripts/plot_curves.py runs/ppo_duel runs/ppo_open --opponent rules-medium --x minutes --out curves.png
    python scripts/plot_curves.py runs/oracle_bazar --training vs_rules --window 4000000 --table

Each run directory holds the ``metrics.csv`` that blot-train writes; its ``eval_<opponent>_mean``
/ ``_lo`` / ``_hi`` columns (mean board score per deal on the run's dev boards, 95% CI, in
score-sheet units) are drawn against learner steps (``--x steps``) or wall time (``--x
minutes``, the trainer's own clock: cloning and evaluations included); a CSV file of the same
columns may be named instead of a run directory. ``--table`` prints the points as a Markdown
table instead of (or besides) drawing them.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path


def load(run: Path, opponent: str) -> list[dict[str, float]]:
    """The evaluation rows for ``opponent`` (step, minutes, mean, lo, hi) of a run directory's
    ``metrics.csv`` (or of its ``curve.csv``, a file of the same columns, when ``metrics.csv`` holds
    no evaluation against ``opponent``); ``run`` may also be such a CSV file.

    Raises:
        FileNotFoundError: no metrics.csv; KeyError: the run never evaluated against ``opponent``.
    """
    key = f"eval_{opponent}_mean"
    files = [run] if run.is_file() else [run / "metrics.csv", run / "curve.csv"]
    if not files[0].exists():
        raise FileNotFoundError(f"{files[0]}: no such file (a blot-train output directory holds metrics.csv)")
    have: set[str] = set()
    found: list[dict[str, str]] | None = None
    for path in files:
        if not path.exists():
            continue
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            table = list(reader)
            header = reader.fieldnames or []
        if key in header:
            if any(r.get(key) for r in table):
                found = table
                break
            found = found if found is not None else table  # the column, no point yet: an empty curve
        have |= {k[5:-5] for k in header if k.startswith("eval_") and k.endswith("_mean")}
    if found is None:
        raise KeyError(f"{run}: no evaluations against {opponent!r} (it has: {', '.join(sorted(have)) or 'none'})")
    rows = found
    out = []
    for r in rows:
        if r.get(key):
            out.append({"step": float(r["global_step"]), "minutes": float(r["wall_time"]) / 60.0,
                        "mean": float(r[key]), "lo": float(r[f"eval_{opponent}_lo"]),
                        "hi": float(r[f"eval_{opponent}_hi"])})
    return out


def load_training(run: Path, member: str, window: float) -> list[dict[str, float]]:
    """The learner's mean score per deal (its side's table points, raw card points for belote, as
    logged: sampled actions) in its training deals against pool member ``member``
    (the ``<member>_tp`` and ``<member>_deals`` columns of ``metrics.csv``: ``vs_rules``,
    ``mixed_rules``, ``vs_snapshots``, ...), weighted by deals over windows of ``window`` learner
    steps; one point (step, minutes at the window's last update, mean, deals) per window. A
    curve for a run that cannot play the dev boards, such as an oracle (``network.oracle``).

    Raises:
        FileNotFoundError: no metrics.csv; KeyError: no such columns.
    """
    path = run if run.is_file() else run / "metrics.csv"
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        header = reader.fieldnames or []
    tp, deals = f"{member}_tp", f"{member}_deals"
    if tp not in header or deals not in header:
        have = sorted(k[:-3] for k in header if k.endswith("_tp"))
        raise KeyError(f"{run}: no training scores against {member!r} (it has: {', '.join(have) or 'none'})")
    out: list[dict[str, float]] = []
    num = tot = 0.0
    end = window
    for i, r in enumerate(rows):
        if r[tp] and r[deals]:
            num += float(r[tp]) * float(r[deals])
            tot += float(r[deals])
        step = float(r["global_step"])
        if step >= end or i == len(rows) - 1:
            if tot:
                out.append({"step": step, "minutes": float(r["wall_time"]) / 60.0, "mean": num / tot,
                            "deals": tot})
            num = tot = 0.0
            while end <= step:
                end += window
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path,
                    help="blot-train output directories, or CSV files of the same columns")
    ap.add_argument("--labels", default="", help="comma-separated legend labels (default: the directory names)")
    ap.add_argument("--opponent", default="rules", help="the evaluation opponent to draw")
    ap.add_argument("--x", choices=["steps", "minutes"], default="steps")
    ap.add_argument("--max-steps", type=float, default=None, help="draw only points up to this many learner steps")
    ap.add_argument("--out", type=Path, help="PNG file to write")
    ap.add_argument("--title", default="")
    ap.add_argument("--table", action="store_true", help="print the points as a Markdown table")
    ap.add_argument("--training", metavar="MEMBER", default=None,
                    help="draw the training deals' score against a pool member instead of --opponent (a "
                         "metrics.csv column without _tp: vs_rules, mixed_rules, ...), no CI")
    ap.add_argument("--window", type=float, default=None,
                    help="learner steps a --training point averages over (default 4000000)")
    args = ap.parse_args(argv)
    if args.window is not None and not args.training:
        ap.error("--window needs --training")
    window = 4e6 if args.window is None else args.window
    if not math.isfinite(window) or window <= 0:
        ap.error(f"--window must be a finite number > 0, got {window}")
    labels = [s.strip() for s in args.labels.split(",")] if args.labels else [r.name for r in args.runs]
    if len(labels) != len(args.runs):
        ap.error(f"--labels gives {len(labels)} labels for {len(args.runs)} runs")
    try:
        curves = []
        for r in args.runs:
            try:
                curves.append(load_training(r, args.training, window) if args.training else load(r, args.opponent))
            except (ValueError, csv.Error) as e:  # a bad number, a file that is not CSV text
                raise ValueError(f"{r}: not a metrics or curve CSV file ({e})") from None
    except (OSError, KeyError, ValueError) as e:
        ap.error(str(e))
    if args.max_steps is not None:
        curves = [[p for p in c if p["step"] <= args.max_steps] for c in curves]
    if args.table:
        for label, c in zip(labels, curves):
            if args.training:
                print(f"\n{label} (training deals, {args.training})\n")
                print("| learner steps | minutes | mean per deal | deals |\n|---|---|---|---|")
                for p in c:
                    print(f"| {p['step']:,.0f} | {p['minutes']:.1f} | {p['mean']:+.2f} | {p['deals']:,.0f} |")
                continue
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
            if not args.training:
                ax.fill_between(x, [p["lo"] for p in c], [p["hi"] for p in c], alpha=0.15)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xlabel("learner steps (millions)" if args.x == "steps" else "wall time (minutes)")
        ax.set_ylabel("mean per deal, training deals" if args.training else f"mean per deal vs {args.opponent}")
        ax.set_title(args.title or (f"training deals, {args.training}, per {window / 1e6:g}M learner steps"
                                    if args.training else
                                    f"duplicate boards of the dev suite against {args.opponent} (95% CI)"),
                     fontsize=10)
        ax.legend(fontsize=8)
        fig.tight_layout()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.out, dpi=110)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
