"""``blot-eval``: duplicate evaluation from the command line (docs/evaluation.md).

Examples::

    blot-eval --agent rules --vs random --preset bazar --boards 2000 --workers 2
    blot-eval --agent rules-medium --vs rules,random --boards 500 --json
    blot-eval --agent runs/ppo/best.pt --vs rules-medium --split dev --mixed --plot cmp.png
    blot-eval --agent pimc-64 --vs rules-medium --workers 2 --deadline 3600 --save runs/p64.pkl
    blot-eval --summarize runs/p64.pkl --json
    blot-eval --paired runs/a_vs_insane.pkl runs/b_vs_insane.pkl
    blot-eval --league random,rules,rules-medium,ppo --save runs/league.pkl --plot league.png

Prints one table row per opponent (``--json``: one JSON object instead); a progress bar
and remarks go to stderr. Every board runs on the engine of :mod:`agents.eval.board_pool`:
this process (``--workers 1``, the default), local processes, or a Ray cluster
(``--address``). ``--save FILE`` appends each finished board to ``FILE`` and resumes it
(:mod:`agents.eval.saved`); ``--summarize`` and ``--paired`` read such files; ``--league``
plays a round robin and rates the agents (:mod:`agents.eval.league`). Names become agents
here: the evaluation modules receive ``factory=agents.registry.make_agent``.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from blot_env.rules_config import PRESETS

from ..files import write_json_atomic
from ..registry import known_agents
from .arena import SPLITS, format_breakdown, run


def _int_at_least(text: str, low: int, what: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if v < low:
        raise argparse.ArgumentTypeError(f"expected {what}, got {v}")
    return v


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1 (a clear message otherwise)."""
    return _int_at_least(text, 1, "a positive integer")


def seed_number(text: str) -> int:
    """argparse type: a seed, an integer >= 0 (numpy's generators take no negative seed)."""
    return _int_at_least(text, 0, "an integer >= 0")


def add_dataset_options(ap: Any, unit: str, example: str) -> None:
    """The options every dataset command shares (``scripts/dd_table.py``, ``scripts/clone_data.py``):
    ``--seed``, ``--workers``, ``--address``, ``--deadline``, ``--out``, ``--info FILE...`` and
    ``--json``; ``unit`` names what a file holds (``rows``), ``example`` an output path."""
    ap.add_argument("--seed", type=seed_number, default=0)
    ap.add_argument("--workers", type=positive_int, default=None,
                    help="processes (default: this machine's CPUs; with --address: the cluster's CPUs)")
    ap.add_argument("--address", default=None,
                    help="run on this Ray cluster (auto, HOST:PORT or ray://HOST:PORT; needs the ray extra)")
    ap.add_argument("--deadline", type=float, default=None,
                    help=f"stop after this many seconds from the start (the {unit} finished by then are kept)")
    ap.add_argument("--out", help=f"file the finished {unit} are appended to (e.g. {example})")
    ap.add_argument("--info", nargs="+", metavar="FILE", help="print what these files hold")
    ap.add_argument("--json", action="store_true", help="print --info (and the like) as JSON")


def _fraction(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0.5, 1), got {text!r}") from None
    if not 0.5 < v < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0.5, 1), got {v}")
    return v


def _fmt(x: Any, nd: int = 2) -> str:
    if x is None:
        return "-"
    return f"{x:+.{nd}f}" if isinstance(x, float) and nd == 2 else f"{x:.{nd}f}"


def format_table(report: dict) -> str:
    """A plain-text table of the rows of :func:`agents.eval.arena.run`."""
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
            # the 2-player trump choices have no level: no "mean level" for them
            level = "" if x["mean_level"] is None else f", mean level {x['mean_level']:.2f}"
            lines.append(
                f"  {name:>14} ({who}) vs {r['opponent'] if who == 'candidate' else r['agent']}: "
                f"contracts {x['contracts']}/{x['tables']} made {_rate(x['made_rate'])}, "
                f"defeated {_rate(x['defeat_rate'])} of {x['defended']} defended, "
                f"contras {x['contras']} ({x['contras_right']} right), recontras {x['recontras']}, "
                f"kaputs {x['kaputs']} ({x['kaputs_made']} made){level}")
        cost = (f", {r['seconds']:.1f} s" if "seconds" in r
                else f", {r['cpu_seconds']:.1f} CPU s in the boards" if "cpu_seconds" in r else "")
        lines.append(f"  passed out: {d['passed_out_tables']} tables ({d['boards_passed_out_one']} boards at one "
                     f"table, {d['boards_passed_out_both']} at both; a passed-out table scores 0){cost}")
        if r.get("by_contract"):
            lines.append("  " + format_breakdown(r["by_contract"]))
    return "\n".join(lines)


def _sec(x: float | None) -> str:
    return "-" if x is None else f"{x:.2e}"


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def plot_figure(report: dict) -> Any:
    """The figure of :func:`plot` (a ``matplotlib.figure.Figure``; constrained layout, so
    that the title and labels stay inside it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    names = [r["opponent"] for r in rows]
    means = [r["mean_board_score"] for r in rows]
    err = [[m - r["ci95"][0] for m, r in zip(means, rows)], [r["ci95"][1] - m for m, r in zip(means, rows)]]
    width = max(5.0, 1.4 * len(rows) + 2)
    fig, ax = plt.subplots(figsize=(width, 3.8), layout="constrained")
    ax.bar(names, means, yerr=err, capsize=6, color=["tab:green" if m > 0 else "tab:red" for m in means])
    ax.axhline(0, color="black", linewidth=0.8)
    agent = rows[0]["agent"] if rows else "?"
    lines = [f"{agent} vs opponents", f"{report['preset']}, {report['split']} suite, "
             f"{rows[0]['boards'] if rows else 0} boards"]
    # about 10 characters of 10-point text per inch: wrap what would run past the figure
    ax.set_title("\n".join(x for line in lines for x in textwrap.wrap(line, int(9 * width))), fontsize=10)
    ax.set_ylabel("mean board score per deal (95% CI)")
    ax.set_xlabel("opponent")
    return fig


def plot(report: dict, path: str) -> None:
    """Bar chart of the mean board score per deal with 95% CI error bars, one bar per opponent."""
    import matplotlib.pyplot as plt

    fig = plot_figure(report)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _seconds(text: str) -> float:
    """argparse type: a finite number of seconds >= 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds >= 0, got {text}")
    return v


LEAGUE_ONLY = ("league_json", "anchor", "round", "separated", "bootstrap")
"""Options that only ``--league`` takes (their defaults are None, to tell them apart)."""

RUN_ONLY = ("agent", "vs", "save", "deadline", "address", "workers", "plot", "league", *LEAGUE_ONLY)
"""Options that play boards, which ``--summarize`` and ``--paired`` (they read save files) do not take."""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="blot-eval", description="Duplicate evaluation of blot agents "
                                 "(docs/evaluation.md): one candidate against opponents, saved runs and their "
                                 "comparison, or a league.")
    ap.add_argument("--agent", help=f"candidate: {', '.join(known_agents())}")
    ap.add_argument("--vs", default=None, help="comma-separated opponents (default random,rules)")
    ap.add_argument("--preset", default="bazar", choices=sorted(PRESETS))
    ap.add_argument("--boards", type=positive_int, default=2000,
                    help="boards from the start of the suite (default 2000; --league: the most per pair)")
    ap.add_argument("--split", default="test", choices=sorted(SPLITS),
                    help="deal suite: dev for checkpoint selection, test for reported numbers (default test)")
    ap.add_argument("--mixed", action="store_true", help="mixed partnerships: candidate + baseline vs 2 baselines")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    ap.add_argument("--plot", metavar="FILE.png",
                    help="bar chart of the mean board score per opponent (--league: the ratings)")
    ap.add_argument("--seed", type=seed_number, default=0, help="base seed of the agents' generators (default 0)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    where = ap.add_argument_group("where the boards run")
    where.add_argument("--workers", type=positive_int, default=None,
                       help="processes (default 1: this process; with --address: the cluster's CPUs)")
    where.add_argument("--address", help="play on this Ray cluster (auto, HOST:PORT, ray://HOST:PORT; the ray extra)")
    sv = ap.add_argument_group("saved runs (docs/evaluation.md, Long runs that survive a stop)")
    sv.add_argument("--save", metavar="FILE.pkl",
                    help="append each finished board to this file; run again to resume (--league: default "
                         "runs/league_PRESET_SPLIT.pkl)")
    sv.add_argument("--deadline", type=_seconds, metavar="SECONDS",
                    help="stop after this many seconds from the start, keeping the boards finished (with --save "
                         "or --league; rerun to resume)")
    sv.add_argument("--summarize", nargs="+", metavar="FILE", help="the metrics of saved runs (a row per run and file)")
    sv.add_argument("--paired", nargs=2, metavar=("A", "B"),
                    help="compare two saved runs against the same opponent board by board")
    lg = ap.add_argument_group("league (docs/evaluation.md, League)")
    lg.add_argument("--league", metavar="A,B,...", help="round robin among these agents, rated by Bradley-Terry")
    lg.add_argument("--league-json", metavar="FILE.json", help="the report (default: the --save file's .json)")
    lg.add_argument("--anchor", help="agent pinned at 1500 (default rules)")
    lg.add_argument("--round", type=positive_int, help="boards per pair and round (default 200)")
    lg.add_argument("--separated", type=_fraction,
                    help="stop a pair once its board win rate's 95%% Wilson interval is above this or below "
                         "1 - this (default 0.9)")
    lg.add_argument("--bootstrap", type=positive_int, help="bootstrap resamples of the rating intervals (default 1000)")
    return ap


def _given(args: argparse.Namespace, names: Sequence[str]) -> list[str]:
    return [f"--{k.replace('_', '-')}" for k in names if getattr(args, k) is not None]


def _workers(args: argparse.Namespace) -> int | None:
    """``--workers``, by default 1 (this process), or the cluster's CPUs with ``--address``."""
    return args.workers or (None if args.address else 1)


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.plot:
        plot_dir = Path(args.plot).resolve().parent
        if not plot_dir.is_dir():
            print(f"blot-eval: --plot {args.plot}: directory {plot_dir} does not exist", file=sys.stderr)
            return 2
    if args.summarize or args.paired:
        return _read(ap, args)
    if args.league is not None:
        return _league(ap, args)
    given = _given(args, LEAGUE_ONLY)
    if given:
        ap.error(f"{', '.join(given)} only go with --league")
    if args.agent is None:
        ap.error("--agent is required (or --league A,B,..., --summarize FILE ..., --paired A B)")
    opponents = [x.strip() for x in (args.vs or "random,rules").split(",")]
    if not all(opponents):
        print(f"blot-eval: --vs {args.vs!r}: expected agent names separated by commas, with no empty name",
              file=sys.stderr)
        return 2
    if args.deadline is not None and args.save is None:
        ap.error("--deadline needs --save FILE: without a save file the boards finished by the deadline are lost")
    from ..registry import make_agent
    from .board_pool import SaveFormatError

    try:
        if args.save is not None:
            from .saved import play_saved

            report = play_saved(args.agent, opponents, args.save, make_agent, preset=args.preset, split=args.split,
                                boards=args.boards, seed=args.seed, mixed=args.mixed, workers=_workers(args),
                                address=args.address, deadline=args.deadline, progress=not args.no_progress)
        else:
            for name in [args.agent, *opponents]:
                make_agent(name, args.preset)  # a bad name fails before any board
            report = run(args.agent, opponents, preset=args.preset, boards=args.boards, split=args.split,
                         seed=args.seed, mixed=args.mixed, workers=_workers(args), progress=not args.no_progress,
                         factory=make_agent, address=args.address)
    except (SaveFormatError, FileNotFoundError, ValueError, ImportError, ConnectionError) as e:
        print(f"blot-eval: {e}", file=sys.stderr)
        return 2
    if args.save is not None:
        stopped = {"deadline": " (deadline reached)", "interrupted": " (interrupted)"}.get(report["stopped"], "")
        print(f"[blot-eval] {report['finished']} boards finished in {report['wall_seconds']:.0f} s{stopped}; "
              f"{report['saved']} saved in {report['save']}", file=sys.stderr, flush=True)
    if args.plot:
        rows = [r for r in report["rows"] if r.get("boards")]
        if rows:
            plot(dict(report, rows=rows), args.plot)
    if args.json:
        print(json.dumps(report, indent=None, default=_json_default))
    else:
        print(format_table(report))
    return 0


def _read(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--summarize FILE ...`` and ``--paired A B``: the metrics of save files (:mod:`agents.eval.saved`)."""
    from .board_pool import SaveFormatError, load_records
    from .saved import format_paired, format_summary, paired, summary

    if args.summarize and args.paired:
        ap.error("--summarize and --paired do not go together")
    if args.mixed:
        ap.error("--mixed applies to a run (--agent, --vs); --summarize and --paired read the mode from the files")
    given = _given(args, RUN_ONLY)
    if given:
        ap.error(f"{', '.join(given)} do not go with --summarize or --paired, which read save files")
    what = "--paired" if args.paired else "--summarize"
    files = args.paired or args.summarize
    for f in files:
        if not Path(f).is_file():
            ap.error(f"{what}: no file {f}")
    try:
        if args.paired:
            a, b = args.paired
            try:
                out: Any = paired(load_records([a]), load_records([b]), (a, b))
            except SaveFormatError:
                raise
            except ValueError as e:
                ap.error(f"--paired: {e}")
        else:
            # one file at a time: two files of one (agent, vs, preset, split, seed, mixed), e.g. runs of
            # two versions of an agent, are two rows, not one mixed by board index
            out = [dict(row, file=f) for f in files for row in summary(load_records([f]))]
    except (SaveFormatError, OSError) as e:
        print(f"blot-eval: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out, default=str))
    else:
        print(format_paired(out) if args.paired else format_summary(out))
    return 0


def _league(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from ..registry import make_agent
    from .board_pool import SaveFormatError
    from .league import Schedule, check_league, format_league, play_league, plot_league

    if args.agent is not None or args.vs is not None or args.mixed:
        ap.error("--league takes no --agent, --vs or --mixed (every agent plays every other)")
    names = [x.strip() for x in args.league.split(",")]
    if not all(names):
        ap.error(f"--league {args.league!r}: expected agent names separated by commas, with no empty name")
    anchor = args.anchor or "rules"
    save = Path(args.save or f"runs/league_{args.preset}_{args.split}.pkl")
    out_json = Path(args.league_json) if args.league_json else save.with_suffix(".json")
    try:
        check_league(names, anchor)
        round_boards = args.round or 200
        schedule = Schedule(round_boards=min(round_boards, args.boards), max_boards=args.boards,
                            separated=args.separated or 0.9)
        report = play_league(names, save, preset=args.preset, split=args.split, seed=args.seed, schedule=schedule,
                             workers=_workers(args), address=args.address, deadline=args.deadline,
                             progress=not args.no_progress, anchor=anchor, n_boot=args.bootstrap or 1000,
                             factory=make_agent)
    except (SaveFormatError, FileNotFoundError, ValueError, ImportError, ConnectionError) as e:
        print(f"blot-eval: {e}", file=sys.stderr)
        return 2
    report["save"] = str(save)
    write_json_atomic(out_json, report, default=_json_default)
    if args.plot and report["agents"]:
        plot_league(report, args.plot)
    if args.json:
        print(json.dumps(report, indent=None, default=_json_default))
    else:
        print(format_league(report))
        print(f"boards in {save}; report {out_json}" + (f"; plot {args.plot}" if args.plot else ""))
    return 0


def _json_default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


if __name__ == "__main__":
    sys.exit(main())
