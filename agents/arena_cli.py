"""``blot-eval``: duplicate evaluation from the command line (spec/evaluation.md).

Examples::

    blot-eval --agent rules --vs random --preset bazar --boards 2000 --workers 2
    blot-eval --agent rules-medium --vs rules,random --boards 500 --json
    blot-eval --agent runs/ppo/best.pt --vs rules-medium --split dev --mixed --plot cmp.png

Prints one table row per opponent (``--json``: one JSON object instead); a progress bar
goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from blot_env.rules_config import PRESETS

from .arena import SPLITS, run
from .registry import known_agents


def _fmt(x: Any, nd: int = 2) -> str:
    if x is None:
        return "-"
    return f"{x:+.{nd}f}" if isinstance(x, float) and nd == 2 else f"{x:.{nd}f}"


def format_table(report: dict) -> str:
    """A plain-text table of the rows of :func:`agents.arena.run`."""
    head = ("agent", "opponent", "boards", "mean/deal", "95% CI", "board win", "95% CI", "match win", "95% CI",
            "s/dec agent", "s/dec opp")
    rows = []
    for r in report["rows"]:
        spd = r.get("sec_per_decision", {})
        lo, hi = r.get("ci95", [None, None])
        wlo, whi = r.get("win_rate_ci95", [None, None])
        mlo, mhi = r.get("match_win_rate_ci95", [None, None])
        rows.append((
            r["agent"], r["opponent"], str(r["boards"]), _fmt(r.get("mean_board_score")),
            f"[{_fmt(lo)}, {_fmt(hi)}]", _fmt(r.get("board_win_rate"), 3), f"[{_fmt(wlo, 3)}, {_fmt(whi, 3)}]",
            _fmt(r.get("match_win_rate"), 3) + f" ({r.get('matches', 0)})", f"[{_fmt(mlo, 3)}, {_fmt(mhi, 3)}]",
            _sec(spd.get("agent")), _sec(spd.get("opponent")),
        ))
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
    lines = [f"preset {report['preset']}, split {report['split']}{', mixed partnerships' if report['mixed'] else ''}"
             f"; mean board score per deal in score-sheet units, candidate minus opponent",
             "  ".join(h.ljust(w) for h, w in zip(head, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    for r in report["rows"]:
        d = r.get("diagnostics")
        if not d:
            continue
        for who in ("candidate", "opponent"):
            x = d[who]
            name = r["agent"] if who == "candidate" else r["opponent"]
            lines.append(
                f"  {name:>14} ({who}) vs {r['opponent'] if who == 'candidate' else r['agent']}: "
                f"contracts {x['contracts']}/{x['tables']} made {_rate(x['made_rate'])}, "
                f"defeated {_rate(x['defeat_rate'])} of {x['defended']} defended, "
                f"contras {x['contras']} ({x['contras_right']} right), recontras {x['recontras']}, "
                f"kaputs {x['kaputs']} ({x['kaputs_made']} made), mean level {_lvl(x['mean_level'])}")
        lines.append(f"  redeals {d['redeals']}, void boards {d['void_boards']}, {r.get('seconds', 0):.1f} s")
        if r.get("by_contract"):
            lines.append("  " + format_breakdown(r["by_contract"]))
    return "\n".join(lines)


def format_breakdown(by: dict) -> str:
    """One line of :func:`agents.arena.contract_breakdown`: per group, boards, the mean per
    deal within it and its contribution to the overall mean."""
    names = {"same_contract": "same contract", "same_side_strain": "same side and strain",
             "different": "different contract", "void": "void"}
    parts = []
    for g, x in by.items():
        if not x["boards"]:
            continue
        lo, hi = x["ci95"]
        parts.append(f"{names.get(g, g)} {x['boards']}: {_fmt(x['mean'])} [{_fmt(lo)}, {_fmt(hi)}] "
                     f"(adds {_fmt(x['contribution'])})")
    return "by contract: " + "; ".join(parts)


def _sec(x: float | None) -> str:
    return "-" if x is None else f"{x:.2e}"


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _lvl(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def plot(report: dict, path: str) -> None:
    """Bar chart of the mean board score per deal with 95% CI error bars, one bar per opponent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    names = [r["opponent"] for r in rows]
    means = [r["mean_board_score"] for r in rows]
    err = [[m - r["ci95"][0] for m, r in zip(means, rows)], [r["ci95"][1] - m for m, r in zip(means, rows)]]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.4 * len(rows) + 2), 3.6))
    ax.bar(names, means, yerr=err, capsize=6, color=["tab:green" if m > 0 else "tab:red" for m in means])
    ax.axhline(0, color="black", linewidth=0.8)
    agent = rows[0]["agent"] if rows else "?"
    ax.set_title(f"{agent} vs opponents, {report['preset']} ({rows[0]['boards'] if rows else 0} boards)")
    ax.set_ylabel("mean board score per deal (95% CI)")
    ax.set_xlabel("opponent")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="blot-eval", description="Duplicate evaluation of blot agents "
                                 "(spec/evaluation.md).")
    ap.add_argument("--agent", required=True, help=f"candidate: {', '.join(known_agents())}")
    ap.add_argument("--vs", default="random,rules", help="comma-separated opponents (default random,rules)")
    ap.add_argument("--preset", default="bazar", choices=sorted(PRESETS))
    ap.add_argument("--boards", type=int, default=2000, help="boards from the start of the suite (default 2000)")
    ap.add_argument("--split", default="test", choices=sorted(SPLITS),
                    help="deal suite: dev for checkpoint selection, test for reported numbers (default test)")
    ap.add_argument("--mixed", action="store_true", help="mixed partnerships: candidate + baseline vs 2 baselines")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    ap.add_argument("--plot", metavar="FILE.png", help="bar chart of the mean board score per opponent")
    ap.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="base seed of the agents' generators (default 0)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    opponents = [x.strip() for x in args.vs.split(",") if x.strip()]
    if not opponents:
        print("blot-eval: --vs needs at least one opponent", file=sys.stderr)
        return 2
    if args.boards < 1:
        print("blot-eval: --boards must be positive", file=sys.stderr)
        return 2
    if args.plot:
        from pathlib import Path

        plot_dir = Path(args.plot).resolve().parent
        if not plot_dir.is_dir():
            print(f"blot-eval: --plot {args.plot}: directory {plot_dir} does not exist", file=sys.stderr)
            return 2
    from .registry import UnknownAgentError, make_agent

    try:
        for name in [args.agent, *opponents]:
            make_agent(name, args.preset)
        report = run(args.agent, opponents, preset=args.preset, boards=args.boards, split=args.split,
                     seed=args.seed, mixed=args.mixed, workers=args.workers, progress=not args.no_progress)
    except (UnknownAgentError, FileNotFoundError, ValueError, ImportError) as e:
        print(f"blot-eval: {e}", file=sys.stderr)
        return 2
    if args.plot:
        plot(report, args.plot)
    if args.json:
        print(json.dumps(report, indent=None, default=_json_default))
    else:
        print(format_table(report))
    return 0


def _json_default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


if __name__ == "__main__":
    sys.exit(main())
