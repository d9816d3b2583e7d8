"""Runs saved board by board: ``blot-eval --save``, ``--summarize`` and ``--paired``
(docs/evaluation.md, "Long runs that survive a stop").

:func:`play_saved` plays a candidate against opponents on the engine of
:mod:`agents.eval.board_pool`, appending each finished board to a save file, and resumes a
file that holds some of the boards already: a run stopped by ``--deadline``, Ctrl-C,
SIGTERM (what a batch scheduler sends at a job's time limit) or a crash keeps what it
played. Runs are told apart by (agent, vs, preset, split, seed, mixed)
(:func:`agents.eval.board_pool.record_key`); a mixed run is a run of its own. A resumed run
whose network weights differ from those of the boards saved under its names is refused
(:func:`agents.eval.board_pool.check_weights`).

The metrics (:func:`summary`) are those of :func:`agents.eval.arena.summarize` over the
longest run of consecutive finished boards from board 0 (the boards left in flight at a
deadline are dropped, so that no board is left out for taking long), with the seconds per
decision of each agent, the CPU seconds of the boards, and the commits and weight digests
the boards were played with. Over a complete run they equal ``blot-eval`` without
``--save`` on the same boards.

:func:`paired` compares two candidates that played the same boards against the same
opponent (one run per file) board by board: the difference of their board scores with its
paired 95% CI, and that difference split by the two candidates' auctions
(:func:`auction_breakdown`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from blot_env.rules_config import RulesConfig, make_rules

from .arena import contract_key, format_breakdown, load_suite, summarize
from .board_pool import (
    BoardJob,
    build_agents,
    check_weights,
    commit,
    open_save,
    play_boards,
    record_key,
    weights_digest,
)
from .boards import BoardResult, Timing
from .stats import mean_ci


def prefix_length(by_index: dict[int, Any]) -> int:
    """How many consecutive boards from board 0 are in ``by_index`` (index -> record)."""
    n = 0
    while n in by_index:
        n += 1
    return n


def summary(records: Sequence[dict], boards: int | None = None) -> list[dict]:
    """Per run (agent, opponent, preset, split, seed, mixed): the metrics over its consecutive
    boards from board 0, at most ``boards`` of them.

    Returns rows sorted by run, each with ``agent``, ``opponent``, ``preset``, ``split``,
    ``seed``, ``mixed``, the metrics of :func:`agents.eval.arena.summarize` (score-sheet units
    per deal), ``commits`` and ``weights`` (those the boards were played with),
    ``boards_finished`` (the run's boards in the records), ``boards_beyond_prefix`` (finished
    boards the summary leaves out: past a missing board, or past ``boards``),
    ``cpu_seconds`` (of the boards summarized), ``sec_per_decision`` and ``decisions``
    (``{"agent", "opponent"}``).
    """
    groups: dict[tuple, dict[int, dict]] = {}
    for r in records:
        groups.setdefault(record_key(r), {})[r["index"]] = r
    rows = []
    for (agent, vs, preset, split, seed, mixed), by in sorted(groups.items()):
        n = prefix_length(by)
        if boards is not None:
            n = min(n, boards)
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


def paired(records_a: Sequence[dict], records_b: Sequence[dict], names: tuple[str, str] = ("A", "B")) -> dict:
    """The board-by-board difference of two candidates against one opponent on one suite.

    ``records_a`` and ``records_b`` are the records of one run each
    (:func:`agents.eval.board_pool.load_records` of one file). Returns ``boards`` (the boards
    0 .. n-1 both finished), ``a`` and ``b`` (each run's :func:`agents.eval.arena.summarize`
    metrics over those boards, with ``agent``, ``file`` and ``weights``), ``opponent``,
    ``preset``, ``split``, ``mixed``, and ``difference``: the mean of (a's score - b's score)
    per deal in score-sheet units, its paired 95% CI (``ci95``), and the share of boards
    where a scored more (``a_better``) or less (``b_better``); and ``by_auction``, that
    difference split by the two runs' auctions (:func:`auction_breakdown`).

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
    n = min(prefix_length(by_a), prefix_length(by_b))
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


def auction_breakdown(a: Sequence[BoardResult], b: Sequence[BoardResult]) -> dict:
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


# ---------------------------------------------------------------------------- a saved run


def play_saved(candidate: str, opponents: Sequence[str], save: str | Path, factory: Callable[[str, RulesConfig], Any],
               preset: str = "bazar", split: str = "test", boards: int = 2000, seed: int = 0, mixed: bool = False,
               workers: int | None = 1, address: str | None = None, deadline: float | None = None,
               progress: bool = True, note: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Play (or resume) ``candidate`` against each opponent on the first ``boards`` boards of a
    suite, each finished board appended to ``save``.

    Args:
        candidate, opponents: agent names that ``factory`` builds (registry names or
            checkpoint paths; the command-line edge passes :func:`agents.registry.make_agent`).
        save: the save file; the boards of these runs already in it are not played again.
        preset, split, boards, seed, mixed: the suite, its first boards, the agents' seed and
            the mode, as ``blot-eval``.
        workers, address: where the boards run (:func:`agents.eval.board_pool.play_boards`).
        deadline: seconds from the start after which to stop (the boards finished by then
            are kept; the solver's compilation counts).
        progress: a tqdm bar on stderr.
        note: where a remark goes (boards saved before the weight digests); default stderr.

    Returns:
        ``{"preset", "split", "mixed", "seed", "rows", "save", "finished", "saved", "stopped",
        "wall_seconds"}``: ``rows`` the :func:`summary` of each run over its first ``boards``
        boards, in the order of ``opponents``; ``finished`` the boards this call played,
        ``saved`` the boards of these runs in the file; ``stopped`` ``"deadline"``,
        ``"interrupted"`` (Ctrl-C or SIGTERM) or None.

    Raises:
        ValueError: more boards than the suite holds, or ``mixed`` with a 2-player preset.
        SaveFormatError: a save file of another format, a damaged one, or boards saved
            under a name with other network weights (nothing is played).
        UnknownAgentError, ConfigError: as the factory.
        ImportError: an ``address`` without Ray.
    """
    note = note or (lambda text: print(text, file=sys.stderr, flush=True))
    t0 = time.perf_counter()
    cfg = make_rules(preset)
    if mixed and cfg.num_players != 4:
        raise ValueError(f"--mixed needs a 4-player preset; {cfg.preset!r} has {cfg.num_players} players")
    deals = load_suite(preset, split)
    if boards > len(deals):
        raise ValueError(f"suite {preset}_{split} has {len(deals)} boards, {boards} asked for")
    opponents = list(dict.fromkeys(opponents))
    built = build_agents([candidate, *opponents], cfg, factory)
    digests = {name: weights_digest(agent) for name, agent in built.items()}
    keys = {(candidate, vs, cfg.preset, split, seed, mixed) for vs in opponents}
    f, old = open_save(save)
    with f:
        mine = [r for r in old if record_key(r) in keys]
        unchecked = check_weights(mine, digests, cfg.preset, split, seed, save)
        if unchecked:
            note(f"[blot-eval] {unchecked} saved boards predate the weight digests: their weights cannot be checked")
        done = {(r["vs"], r["index"]) for r in mine}
        # board by board across the opponents, so that a stopped run has each one's first boards
        todo = [(candidate, vs, i) for i in range(boards) for vs in opponents if (vs, i) not in done]
        job = BoardJob(cfg, deals, split, seed, commit(), mixed=mixed, factory=factory,
                       agents=built if address is None else {})
        bar = None
        if progress and todo:
            from tqdm import tqdm

            bar = tqdm(total=len(todo), desc=f"{candidate} vs {','.join(opponents)}{' (mixed)' if mixed else ''}",
                       unit="board", mininterval=2)
        try:
            stop = play_boards(job, todo, workers, address, out=f,
                               deadline_at=None if deadline is None else t0 + deadline,
                               on_record=None if bar is None else (lambda rec: bar.update(1)))
        finally:
            if bar is not None:
                bar.close()
    records = mine + stop.records
    by_vs = {row["opponent"]: row for row in summary(records, boards)}
    rows = [by_vs.get(vs) or {"agent": candidate, "opponent": vs, "boards": 0} for vs in opponents]
    return {"preset": cfg.preset, "split": split, "mixed": mixed, "seed": seed, "rows": rows, "save": str(save),
            "finished": stop.finished, "saved": len(records),
            "stopped": "deadline" if stop.deadline else "interrupted" if stop.interrupted else None,
            "wall_seconds": time.perf_counter() - t0}


# ---------------------------------------------------------------------------- text


def format_summary(rows: Sequence[dict]) -> str:
    """The rows of :func:`summary` as a plain-text table (``blot-eval --summarize``)."""
    w = max([14] + [len(str(r[k])) + 2 for r in rows for k in ("agent", "opponent")])
    lines = [f"{'candidate':<{w}}{'opponent':<{w}}{'boards':>7}  {'mean/deal':>9}  {'95% CI':<18}"
             f"{'win rate':>9}  {'s/decision (cand, opp)':<24}{'CPU s':>9}{'not in prefix':>14}"]
    for r in rows:
        if r.get("mixed"):
            lines.append(f"{r['agent']} vs {r['opponent']}, mixed partnerships "
                         f"(the candidate with a {r['opponent']} partner):")
        if not r.get("boards"):
            lines.append(f"{r['agent']:<{w}}{r['opponent']:<{w}}{0:>7}")
            continue
        lo, hi = r["ci95"]
        sp = r["sec_per_decision"]
        lines.append(f"{r['agent']:<{w}}{r['opponent']:<{w}}{r['boards']:>7}  {r['mean_board_score']:>+9.2f}  "
                     f"[{lo:+.2f}, {hi:+.2f}]  {r['board_win_rate']:>8.3f}  "
                     f"{sp['agent'] or 0:<8.3f}{sp['opponent'] or 0:<16.4f}{r['cpu_seconds']:>9.1f}"
                     f"{r['boards_beyond_prefix']:>14}")
        d = r["diagnostics"]
        lines.append(f"    passed out: {d['passed_out_tables']} tables ({d['boards_passed_out_one']} boards at one "
                     f"table, {d['boards_passed_out_both']} at both)")
        if r.get("by_contract"):
            lines.append("    " + format_breakdown(r["by_contract"]))
        if len(r.get("weights", ())) > 1:
            lines.append(f"    boards of {len(r['weights'])} different network weights: {', '.join(r['weights'])}")
    return "\n".join(lines)


def format_paired(p: dict) -> str:
    """The comparison of :func:`paired` as plain text (``blot-eval --paired``)."""
    mode = ", mixed partnerships" if p.get("mixed") else ""
    lines = [f"{p['boards']} boards of the {p['preset']} {p['split']} suite against {p['opponent']}{mode}:"]
    for k in ("a", "b"):
        r = p[k]
        lo, hi = r["ci95"]
        lines.append(f"  {r['agent']:<22}{r['mean_board_score']:>+8.2f} [{lo:+.2f}, {hi:+.2f}] per deal   "
                     f"({r['file']}; weights {', '.join(r['weights'])})")
    d = p["difference"]
    lo, hi = d["ci95"]
    lines.append(f"  difference (first - second): {d['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] per deal; "
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
        lines.append("  by auction: " + "; ".join(parts))
    return "\n".join(lines)


__all__ = [
    "auction_breakdown",
    "format_paired",
    "format_summary",
    "paired",
    "play_saved",
    "prefix_length",
    "summary",
]
