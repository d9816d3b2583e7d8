"""Long duplicate evaluations that survive being cut short: every finished board is saved.

``blot-eval`` keeps its boards in memory until the end. For runs of hours (the search
agents) this script plays one board per task on a pool (:mod:`agents.eval.board_pool`: this
machine's processes, or a Ray cluster with ``--address``) and appends each finished board to
a pickle file as it arrives, so a run stopped by ``--deadline``, a time limit or a crash
keeps what it played, and a later run with the same ``--save`` file skips those boards.
Ctrl-C, or SIGTERM (what a batch scheduler sends at a job's time limit), stops a run as a
deadline does: the pool is stopped and the finished boards kept.
The summary uses the longest run of consecutive finished boards from board 0 (the boards
left in flight at a deadline are dropped, so that no board is left out for taking long).

    python scripts/eval_long.py --agent pimc-64 --vs rules-medium --boards 2000 --workers 2 \\
        --deadline 3600 --save runs/pimc64_vs_medium.pkl
    python scripts/eval_long.py --agent pimc-64 --vs rules-medium --address auto --save runs/p.pkl
    python scripts/eval_long.py --summarize runs/pimc64_vs_medium.pkl [other.pkl ...] [--json]
    python scripts/eval_long.py --paired runs/a_vs_insane.pkl runs/b_vs_insane.pkl [--json]
    python scripts/eval_long.py --agent ppo --vs rules-medium --mixed --split dev --boards 2000 --save runs/m.pkl

``--mixed`` plays the mixed-partnership mode of ``blot-eval --mixed`` (docs/evaluation.md,
:func:`agents.eval.arena.seatings`): at each table the candidate holds one seat among three copies
of the opponent, its partner one of them, on one side at table 1 and on the other at table 2.
A mixed run is a run of its own in the save file (the summary marks it), and ``--paired``
compares only runs of the same mode.

``--paired A B`` compares two candidates that played the same boards against the same
opponent (one run per file): the difference of their board scores, board by board, over the
boards both files finished from board 0, with its paired 95% CI. What a deal does to both
candidates alike cancels, so the interval is narrower than the two files' intervals suggest.
It also splits the difference by the two candidates' auctions (``by_auction``): the boards
where both ended in the same contracts (the card play decides), and those where the first
candidate's side declares at more, fewer or as many tables as the second's.

Metrics (docs/evaluation.md) come from :func:`agents.eval.arena.summarize`: mean board score per
deal in score-sheet units with its 95% CI, board win rate, match win rate, diagnostics, the
breakdown by contract agreement between the two tables (``by_contract``); and seconds per
decision for each agent and the CPU seconds of the boards.

A board passed out at a table scores 0 there and is never re-dealt. The save file's records
(:mod:`agents.eval.board_pool`) carry a ``format`` field; a file written before this rule (format
1, boards re-dealt) is refused with a message, never mixed with new boards. Runs are told
apart by (agent, vs, preset, split, seed, mixed); the summary lists the commits it used, since an
agent's name does not change with its code. A name such as ``ppo`` loads whatever policy is
shipped at the time, so every record also carries a digest of the networks' weights
(:func:`agents.eval.board_pool.weights_digest`): a resumed run whose weights differ from those of
the boards already saved under its name is refused (save to a new file), and the summary
lists the digests it used.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from agents.eval.arena import BoardResult, Timing, contract_key, load_suite, summarize
from agents.eval.board_pool import (
    BoardJob,
    SaveFormatError,
    agent_digests,
    check_weights,
    close_pool,
    commit,
    load_records,
    make_pool,
    open_save,
    record_key,
    run_tasks,
    warm_up,
)
from agents.eval.cli import format_breakdown, positive_int
from agents.eval.stats import mean_ci
from agents.registry import UnknownAgentError, make_agent
from blot_env.errors import ConfigError
from blot_env.rules_config import make_rules


def _prefix(by_index: dict[int, dict]) -> int:
    """How many consecutive boards from board 0 are in ``by_index`` (index -> record)."""
    n = 0
    while n in by_index:
        n += 1
    return n


def summary(records: list[dict]) -> list[dict]:
    """Per (agent, opponent, preset, split, seed, mixed): the metrics over the consecutive boards from 0."""
    groups: dict[tuple, dict[int, dict]] = {}
    for r in records:
        groups.setdefault(record_key(r), {})[r["index"]] = r
    rows = []
    for (agent, vs, preset, split, seed, mixed), by in sorted(groups.items()):
        n = _prefix(by)
        used = [by[i] for i in range(n)]
        cfg = make_rules(preset)
        timing = Timing()
        for r in used:
            timing.merge(r["timing"])
        m = summarize([r["board"] for r in used], cfg)
        per = timing.per_decision()
        cname, oname = used[0]["names"] if used else (agent, vs)
        rows.append({"agent": agent, "opponent": vs, "preset": preset, "split": split, "seed": seed, "mixed": mixed,
                     **m,
                     "commits": sorted({str(r.get("commit")) for r in used}),
                     "weights": sorted({str(r.get("weights")) for r in used}),
                     "boards_finished": len(by), "boards_beyond_prefix": len(by) - n,
                     "cpu_seconds": sum(r["cpu_seconds"] for r in used),
                     "sec_per_decision": {"agent": per.get(cname), "opponent": per.get(oname)},
                     "decisions": {"agent": timing.decisions.get(cname, 0),
                                   "opponent": timing.decisions.get(oname, 0)}})
    return rows


def paired(records_a: list[dict], records_b: list[dict], names: tuple[str, str] = ("A", "B")) -> dict:
    """The board-by-board difference of two candidates against one opponent on one suite.

    ``records_a`` and ``records_b`` are the records of one run each (:func:`load_records` of
    one file). Returns ``boards`` (the boards 0 .. n-1 both finished), ``a`` and ``b`` (each
    run's :func:`agents.eval.arena.summarize` metrics over those boards), and ``difference``: the
    mean of (a's score - b's score) per deal in score-sheet units, its paired 95% CI
    (``ci95``), and the share of boards where a scored more (``a_better``) or less
    (``b_better``); and ``by_auction``, that difference split by the two runs' auctions
    (:func:`auction_breakdown`).

    Raises:
        ValueError: a file holds no run or more than one, the two runs differ in opponent,
            preset, split, seed (which keys every agent's random draws, so that the opponent
            of both runs draws alike) or mode (plain or mixed), or they have no board 0 in
            common.
    """
    runs = []
    for recs, name in zip((records_a, records_b), names):
        keys = sorted({record_key(r) for r in recs})
        if len(keys) != 1:
            raise ValueError(f"{name} holds {len(keys)} runs ({keys}); --paired needs exactly one per file")
        runs.append((keys[0], {r["index"]: r for r in recs}))
    (ka, by_a), (kb, by_b) = runs
    if ka[5] != kb[5]:
        mode = {False: "plain", True: "mixed partnerships"}
        raise ValueError(f"the runs differ in mode ({mode[ka[5]]} in {names[0]}, {mode[kb[5]]} in {names[1]}): "
                         "a paired comparison needs the same boards played the same way")
    for i, what in ((1, "opponent"), (2, "preset"), (3, "split"), (4, "seed")):
        if ka[i] != kb[i]:
            raise ValueError(f"the runs differ in {what} ({ka[i]!r} in {names[0]}, {kb[i]!r} in {names[1]}): "
                             "a paired comparison needs the same boards against the same opponent, "
                             "whose random draws the seed keys")
    n = min(_prefix(by_a), _prefix(by_b))
    if n == 0:
        raise ValueError(f"{names[0]} and {names[1]} have no board 0 in common")
    cfg = make_rules(ka[2])
    a = [by_a[i]["board"] for i in range(n)]
    b = [by_b[i]["board"] for i in range(n)]
    d = np.array([x.delta - y.delta for x, y in zip(a, b)], dtype=float) / 2.0
    m, lo, hi = mean_ci(d)
    def side(key: tuple, by: dict, boards: list, name: str) -> dict:
        # a record's "weights" is (candidate's digest, opponent's digest), None for no network
        weights = sorted({str((by[i].get("weights") or (None,))[0]) for i in range(n)})
        return {"agent": key[0], "file": name, "weights": weights, **summarize(boards, cfg)}

    return {"a": side(ka, by_a, a, names[0]), "b": side(kb, by_b, b, names[1]),
            "opponent": ka[1], "preset": ka[2], "split": ka[3], "mixed": ka[5], "boards": n,
            "difference": {"mean": m, "ci95": [lo, hi], "a_better": float(np.mean(d > 0)),
                           "b_better": float(np.mean(d < 0))},
            "by_auction": auction_breakdown(a, b)}


def _declared(board: BoardResult) -> int:
    """At how many of the board's tables the candidate's side holds the contract."""
    return sum(t.result.contract is not None and t.result.contract.seat % 2 == t.side for t in board.tables)


def auction_breakdown(a: list[BoardResult], b: list[BoardResult]) -> dict:
    """Where two candidates' paired difference comes from: the boards split by their auctions.

    ``a`` and ``b`` are the same boards (same order, same seatings) played by two candidates
    against one opponent. Groups:

    * ``same_contracts``: at each table the two runs ended in the same contract
      (:func:`agents.eval.arena.contract_key`: declaring side, strain, level, kind, contra level),
      or both passed out; the card play, the declarations and the opponent's draws make the
      difference;
    * ``a_declares_more`` / ``a_declares_fewer``: otherwise, a's side holds the contract at
      more / fewer of the board's tables than b's side (a passed-out table counts for neither);
    * ``same_count``: the other boards (other contracts, as many tables declared).

    Returns per group ``boards``, ``share``, ``mean`` (a minus b, score-sheet units per deal)
    and its 95% CI ``ci95`` (None for an empty group), and ``contribution`` (the group's sum
    over all boards; the four contributions add up to the mean difference).
    """
    groups: dict[str, list[float]] = {"same_contracts": [], "a_declares_more": [],
                                      "a_declares_fewer": [], "same_count": []}
    for x, y in zip(a, b):
        d = (x.delta - y.delta) / 2.0
        if [contract_key(t.result.contract) for t in x.tables] == [contract_key(t.result.contract) for t in y.tables]:
            g = "same_contracts"
        else:
            na, nb = _declared(x), _declared(y)
            g = "a_declares_more" if na > nb else "a_declares_fewer" if na < nb else "same_count"
        groups[g].append(d)
    n = len(a)
    out = {}
    for g, v in groups.items():
        m, lo, hi = mean_ci(v) if v else (None, None, None)
        out[g] = {"boards": len(v), "share": len(v) / n if n else 0.0, "mean": m, "ci95": [lo, hi],
                  "contribution": float(sum(v)) / n if n else 0.0}
    return out


def _print_paired(p: dict) -> None:
    mode = ", mixed partnerships" if p.get("mixed") else ""
    print(f"{p['boards']} boards of the {p['preset']} {p['split']} suite against {p['opponent']}{mode}:")
    for k in ("a", "b"):
        r = p[k]
        lo, hi = r["ci95"]
        print(f"  {r['agent']:<22}{r['mean_board_score']:>+8.2f} [{lo:+.2f}, {hi:+.2f}] per deal   "
              f"({r['file']}; weights {', '.join(r['weights'])})")
    d = p["difference"]
    lo, hi = d["ci95"]
    print(f"  difference (first - second): {d['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] per deal; "
          f"first better on {d['a_better']:.3f} of the boards, second on {d['b_better']:.3f}")
    names = {"same_contracts": "same contracts at both tables", "a_declares_more": "first declares more tables",
             "a_declares_fewer": "first declares fewer", "same_count": "other contracts, as many declared"}
    parts = []
    for g, x in p.get("by_auction", {}).items():
        if x["boards"]:
            lo, hi = x["ci95"]
            parts.append(f"{names[g]} {x['boards']}: {x['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] "
                         f"(adds {x['contribution']:+.2f})")
    if parts:
        print("  by auction: " + "; ".join(parts))


def _print(rows: list[dict]) -> None:
    w = max([14] + [len(str(r[k])) + 2 for r in rows for k in ("agent", "opponent")])
    print(f"{'candidate':<{w}}{'opponent':<{w}}{'boards':>7}  {'mean/deal':>9}  {'95% CI':<18}"
          f"{'win rate':>9}  {'s/decision (cand, opp)':<24}{'CPU s':>9}{'not in prefix':>14}")
    for r in rows:
        if r.get("mixed"):
            print(f"{r['agent']} vs {r['opponent']}, mixed partnerships "
                  f"(the candidate with a {r['opponent']} partner):")
        if not r.get("boards"):
            print(f"{r['agent']:<{w}}{r['opponent']:<{w}}{0:>7}")
            continue
        lo, hi = r["ci95"]
        sp = r["sec_per_decision"]
        print(f"{r['agent']:<{w}}{r['opponent']:<{w}}{r['boards']:>7}  {r['mean_board_score']:>+9.2f}  "
              f"[{lo:+.2f}, {hi:+.2f}]  {r['board_win_rate']:>8.3f}  "
              f"{sp['agent'] or 0:<8.3f}{sp['opponent'] or 0:<16.4f}{r['cpu_seconds']:>9.1f}"
              f"{r['boards_beyond_prefix']:>14}")
        d = r["diagnostics"]
        print(f"    passed out: {d['passed_out_tables']} tables ({d['boards_passed_out_one']} boards at one table, "
              f"{d['boards_passed_out_both']} at both)")
        if r.get("by_contract"):
            print("    " + format_breakdown(r["by_contract"]))
        if len(r.get("weights", ())) > 1:
            print(f"    boards of {len(r['weights'])} different network weights: {', '.join(r['weights'])}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agent", help="candidate (a blot-eval name, e.g. pimc-64)")
    ap.add_argument("--vs", help="opponent (a blot-eval name)")
    ap.add_argument("--preset", default="bazar")
    ap.add_argument("--split", default="test", choices=("dev", "test"))
    ap.add_argument("--boards", type=positive_int, default=2000)
    ap.add_argument("--workers", type=positive_int, default=None,
                    help="processes (default: this machine's CPUs; with --address: the cluster's CPUs)")
    ap.add_argument("--address", default=None,
                    help="run on this Ray cluster (auto, HOST:PORT or ray://HOST:PORT; needs the ray extra)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mixed", action="store_true",
                    help="mixed-partnership mode (4 players): the candidate with an opponent-agent partner")
    ap.add_argument("--deadline", type=float, default=None,
                    help="stop after this many seconds from the start (the kernels' compilation included)")
    ap.add_argument("--save", help="pickle file the finished boards are appended to")
    ap.add_argument("--summarize", nargs="+", metavar="FILE",
                    help="print the metrics of saved runs (a row per run and file)")
    ap.add_argument("--paired", nargs=2, metavar=("A", "B"),
                    help="compare two saved runs against the same opponent board by board")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args(argv)
    try:
        return _main(ap, args)
    except (SaveFormatError, ImportError, ConnectionError, UnknownAgentError, ConfigError) as e:
        print(f"eval_long: {e}", file=sys.stderr)
        return 2


def _main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.mixed and (args.paired or args.summarize):
        ap.error("--mixed applies to a run (--agent, --vs); --summarize and --paired read the mode from the files")
    if args.paired:
        a, b = args.paired
        for f in (a, b):
            if not Path(f).is_file():
                ap.error(f"--paired: no file {f}")
        try:
            p = paired(load_records([a]), load_records([b]), (a, b))
        except ValueError as e:
            ap.error(f"--paired: {e}")
        if args.json:
            print(json.dumps(p, default=str))
        else:
            _print_paired(p)
        return 0
    if args.summarize:
        # one file at a time: two files of one (agent, vs, preset, split, seed, mixed), e.g. runs of
        # two versions of an agent, are two rows, not one mixed by board index
        rows = [dict(row, file=p) for p in args.summarize for row in summary(load_records([p]))]
        if args.json:
            print(json.dumps(rows, default=str))
        else:
            _print(rows)
        return 0
    if not (args.agent and args.vs and args.save):
        ap.error("--agent, --vs and --save are required (or --summarize FILE ...)")
    cfg = make_rules(args.preset)
    if args.mixed and cfg.num_players != 4:
        ap.error(f"--mixed needs a 4-player preset; {cfg.preset!r} has {cfg.num_players} players")
    deals = load_suite(args.preset, args.split)
    if args.boards > len(deals):
        ap.error(f"the {args.preset} {args.split} suite has {len(deals)} boards")
    save = Path(args.save)
    f, old = open_save(save)
    me = (args.agent, args.vs, cfg.preset, args.split, args.seed, args.mixed)
    mine = [r for r in old if record_key(r) == me]
    try:
        unchecked = check_weights(mine, agent_digests((args.agent, args.vs), cfg, make_agent), *me[2:5], save)
    except BaseException:
        f.close()
        raise
    if unchecked:
        print(f"[eval_long] {unchecked} saved boards predate the weight digests: their weights cannot be checked",
              flush=True)
    done = {r["index"] for r in mine}
    todo = [(args.agent, args.vs, i) for i in range(args.boards) if i not in done]
    job = BoardJob(cfg, deals, args.split, args.seed, commit(), mixed=args.mixed, factory=make_agent)
    t0 = time.perf_counter()
    if args.address is None and warm_up(cfg, (args.agent, args.vs)):
        print(f"[eval_long] kernels ready in {time.perf_counter() - t0:.0f} s", flush=True)
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc=f"{args.agent} vs {args.vs}{' (mixed)' if args.mixed else ''}", unit="board",
               mininterval=5)
    pool = make_pool(job, args.workers, args.address)
    try:
        with f:
            stop = run_tasks(pool, todo, f, None if args.deadline is None else t0 + args.deadline,
                             on_record=lambda rec: bar.update(1))
    finally:
        bar.close()
        close_pool(pool)
    print(f"[eval_long] {stop.finished} boards finished in {time.perf_counter() - t0:.0f} s"
          f"{' (deadline reached)' if stop.deadline else ' (interrupted)' if stop.interrupted else ''}; "
          f"{len(done) + stop.finished} saved in {save}", flush=True)
    _print(summary(load_records([str(save)])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
