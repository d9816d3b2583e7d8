"""Duplicate evaluation (docs/evaluation.md): boards from frozen deal suites, each played twice
with the sides swapped, and the metrics reported together.

A **board** (:mod:`agents.eval.boards`, which this module re-exports) is one deal played at
two tables with the sides swapped; a passed-out table scores 0 and the board is not
re-dealt, so passing cannot throw away the boards one would lose: a side that passes where
the other table bids and makes gives that score away. The boards run on the one engine of
:mod:`agents.eval.board_pool` (this process, local processes or a Ray cluster);
:func:`evaluate` keeps them in memory, ``blot-eval --save`` appends each to a save file.

Metrics (:func:`summarize`): mean board score per deal (``delta / 2``) with a 95% t
interval, board win rate (ties count one half) with a Wilson interval, duplicate match
win rate to the preset's target with a Wilson interval, and diagnostics (contracts made
as bidder, defeats as defender, contras and their precision, kaput attempts, mean
contract level, passed-out tables). The matches replay the tables in board order: match 1
strings the table-1 results of consecutive boards (the suite's dealers rotate with the
board index, as a match's deal does), match 2 the table-2 results of the same boards, and
the next pair starts after the longer of the two ends; deals are scored by
``blot_env.match``, whose own rule holds for a passed-out table: it adds nothing to the
totals and the match goes on with the next board (rules.md 2.1). Agents do not see the
match score, so this equals playing the matches.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from blot_env.match import after_deal, new_match
from blot_env.rules_config import RulesConfig, make_rules
from blot_env.state import Contract

from ..base import Agent
from . import stats
from .boards import BoardResult, TableResult, Timing, deal_state, play_board, play_table, seatings

SUITE_DIR = Path(__file__).resolve().parent.parent / "data" / "suites"
SPLITS = {"dev": 2000, "test": 10000}
"""Deal-suite splits and their sizes (docs/evaluation.md "Deal suites are frozen files")."""


# ---------------------------------------------------------------------------- suites


def suite_path(preset: str, split: str, directory: Path | str | None = None) -> Path:
    """``agents/data/suites/<preset>_<split>.json``."""
    return Path(directory or SUITE_DIR) / f"{preset}_{split}.json"


def load_suite(preset: str, split: str = "test", directory: Path | str | None = None) -> list[dict]:
    """The frozen deals of a suite: a list of ``{"dealer", "hands", "stock"}`` objects.

    Raises:
        FileNotFoundError: no such suite (generate it with ``python scripts/make_suites.py``).
        ValueError: the file is not gzip (``.json.gz``), not UTF-8 JSON text, or not a JSON
            list of deal objects (the message names the file).
        OSError: the file cannot be read.
    """
    p = suite_path(preset, split, directory)
    where = p
    try:
        if not p.exists():
            gz = where = p.with_suffix(".json.gz")
            if gz.exists():
                import gzip
                import zlib

                try:
                    raw = gzip.decompress(gz.read_bytes())
                except (OSError, EOFError, zlib.error) as e:
                    raise ValueError(f"{gz}: not a readable gzip file ({e})") from None
            else:
                known = sorted(x.name for x in Path(directory or SUITE_DIR).glob("*.json"))
                raise FileNotFoundError(f"no deal suite {p} (run scripts/make_suites.py); present: {', '.join(known)}")
        else:
            raw = p.read_bytes()
        deals = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ValueError(f"{where}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start}); "
                         "a deal suite is a JSON list") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(deals, list) or not all(isinstance(d, dict) and "hands" in d and "dealer" in d for d in deals):
        raise ValueError(f"{where}: expected a JSON list of {{'dealer', 'hands', 'stock'}} objects")
    return deals


# ---------------------------------------------------------------------------- evaluation

AgentSpec = Agent | str
"""An agent, or a name that the run's ``factory`` builds (:func:`agents.registry.make_agent`)."""

AgentFactory = Callable[[str, RulesConfig], Agent]
"""``factory(name, rules) -> agent``: how a run builds the agents it is given by name. The
evaluation imports no registry: the command-line edge (``blot-eval``, the trainer's wiring)
passes :func:`agents.registry.make_agent` (a module-level function, so it travels to worker
processes by reference)."""


def resolve_agent(spec: AgentSpec, cfg: RulesConfig, factory: AgentFactory | None) -> Agent:
    """``spec`` itself, or the agent ``factory`` builds for the name ``spec``.

    Raises:
        TypeError: a name without a factory (the message says what to pass).
    """
    if isinstance(spec, str):
        if factory is None:
            raise TypeError(f"agent {spec!r} is a name: pass factory=agents.registry.make_agent (or an agent "
                            "object) to build it")
        return factory(spec, cfg)
    return spec


@dataclass
class Evaluation:
    """Boards played and the metrics over them (see :func:`summarize`)."""

    cfg: RulesConfig
    candidate: str
    opponent: str
    mixed: bool
    boards: list[BoardResult]
    timing: Timing
    seconds: float
    agent_names: tuple[str, str] = ("", "")
    """The ``name`` attributes of the candidate and opponent agents (keys of ``timing``)."""
    metrics: dict[str, Any] = field(default_factory=dict)


def chunk_size(boards: int, workers: int | None) -> int:
    """Boards per task of :func:`evaluate` on worker processes: ``ceil(boards / (2 workers))``,
    at most 25, so that every worker gets boards (20 boards on 2 workers: 4 tasks of 5) and a
    slow task does not leave the others idle for long, while many quick boards do not cost a
    wake-up of the parent each."""
    return max(1, min(25, math.ceil(boards / (2 * max(1, workers or 1)))))


def check_workers(workers: object) -> int:
    """``workers`` as a process count.

    Raises:
        ValueError: not a positive integer (the message names the value).
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive number of processes, got {workers!r}")
    return workers


def evaluate(candidate: AgentSpec, opponent: AgentSpec, cfg: RulesConfig | str, deals: Sequence[dict],
             seed: int = 0, mixed: bool = False, workers: int | None = 1, progress: bool = False,
             chunk: int | None = None, start_index: int = 0, factory: AgentFactory | None = None,
             address: str | None = None) -> Evaluation:
    """Duplicate evaluation of ``candidate`` against ``opponent`` over ``deals``, boards kept in memory.

    The boards run on the one engine of :func:`agents.eval.board_pool.play_boards`, one board
    per task: in this process (``workers=1``, no ``address``; torch runs on one thread while
    a board plays, as in the worker processes, and gets the caller's setting back after),
    on ``workers`` processes of this machine, or on a Ray cluster. The numbers do not depend
    on where the boards ran.

    Args:
        candidate, opponent: agents, or names that ``factory`` builds. An agent object goes
            to forked local workers as it is, and must pickle for Ray.
        cfg: the rules (or a preset id) the suite was dealt for.
        deals: suite deals (``load_suite``); board ``i`` is ``deals[i]`` with index
            ``start_index + i`` (the index keys the agents' generators).
        seed: base seed of the agents' generators.
        mixed: mixed-partnership mode (4 players).
        workers: processes (1: this process; None: one per CPU); with ``address``, Ray actors
            (None: the cluster's CPUs).
        progress: a tqdm bar on stderr.
        chunk: boards per task on worker processes (default :func:`chunk_size`); the records
            come back board by board either way.
        factory: builds the agents given by name (:data:`AgentFactory`; the command-line edge
            passes :func:`agents.registry.make_agent`).
        address: a Ray cluster's address (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``), or
            None for this machine.

    Returns:
        An :class:`Evaluation` with ``metrics`` filled by :func:`summarize`; ``boards`` in
        board order.

    Raises:
        ValueError: ``workers`` or ``chunk`` is not a positive integer, or ``mixed`` with a
            2-player preset.
        TypeError: an agent name without a ``factory``.
        ImportError: an ``address`` without Ray installed.
        KeyboardInterrupt: Ctrl-C or SIGTERM stopped the boards (nothing is kept).
    """
    from .board_pool import BoardJob, play_boards

    if isinstance(cfg, str):
        cfg = make_rules(cfg)
    if workers is not None:
        check_workers(workers)
    if mixed and cfg.num_players != 4:
        raise ValueError(f"--mixed needs a 4-player preset; {cfg.preset!r} has {cfg.num_players} players")
    if chunk is None:
        chunk = chunk_size(len(deals), workers)
    elif isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be a positive number of boards, got {chunk!r}")
    cname = candidate if isinstance(candidate, str) else candidate.name
    oname = opponent if isinstance(opponent, str) else opponent.name
    # the tasks name the two agents by key: a name itself, or a key of its own for an object
    ckey = candidate if isinstance(candidate, str) else "<candidate>"
    okey = ckey if opponent is candidate else opponent if isinstance(opponent, str) else "<opponent>"
    # built here, so that a bad name fails before any board; a local pool's workers inherit
    # them (Ray actors build the names themselves)
    specs = {ckey: candidate, okey: opponent}
    built = {k: resolve_agent(s, cfg, factory) for k, s in specs.items()}
    shipped = built if address is None else {k: built[k] for k, s in specs.items() if not isinstance(s, str)}
    index = {start_index + i: d for i, d in enumerate(deals)} if start_index else deals
    job = BoardJob(cfg, index, seed=seed, mixed=mixed, factory=factory, agents=shipped)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(deals), desc=f"{cname} vs {oname}", unit="board", leave=False)
    t0 = time.perf_counter()
    try:
        stop = play_boards(job, [(ckey, okey, start_index + i) for i in range(len(deals))], workers, address,
                           on_record=None if bar is None else (lambda rec: bar.update(1)), chunksize=chunk)
    finally:
        if bar is not None:
            bar.close()
    if stop.interrupted:
        raise KeyboardInterrupt(f"{cname} vs {oname}: stopped after {stop.finished} of {len(deals)} boards")
    records = sorted(stop.records, key=lambda r: r["index"])
    timing = Timing()
    for r in records:
        timing.merge(r["timing"])
    names = records[0]["names"] if records else (built[ckey].name, built[okey].name)
    results = [r["board"] for r in records]
    ev = Evaluation(cfg, cname, oname, mixed, results, timing, time.perf_counter() - t0, agent_names=names)
    ev.metrics = summarize(results, cfg)
    return ev


# ---------------------------------------------------------------------------- metrics


def match_outcomes(boards: Sequence[BoardResult], cfg: RulesConfig) -> list[tuple[int, int]]:
    """Duplicate matches over consecutive boards: per pair, (candidate won match 1, match 2) as 0/1.

    Match ``t`` (t = 1, 2) plays the table-``t`` deals of boards ``i0, i0+1, ...`` to the
    target with :mod:`blot_env.match`; a passed-out table adds nothing to the totals and the
    match goes on with the next board (the game's own rule, rules.md 2.1). A pair whose
    matches run out of boards is dropped.
    """
    out = []
    i0 = 0
    nb = len(boards)
    while i0 < nb:
        wins, ends = [], []
        for t in (0, 1):
            m = new_match(cfg, 0)
            i = i0
            side = boards[i0].tables[t].side
            while i < nb and not m.over:
                m = after_deal(m, boards[i].tables[t].result)
                i += 1
            if not m.over:
                return out
            wins.append(1 if m.winner == side else 0)
            ends.append(i)
        out.append((wins[0], wins[1]))
        i0 = max(ends)
    return out


_LEVELLED = ("num", "kaput", "kaput_plus")
"""Contract kinds with a bid value; the 2-player trump choices (``take``, ``name``) have none."""


def diagnostics(boards: Sequence[BoardResult], cfg: RulesConfig) -> dict[str, Any]:
    """What the results are made of (not strength).

    Returns ``{"candidate": {...}, "opponent": {...}, "passed_out_tables",
    "boards_passed_out_one", "boards_passed_out_both"}``. Per side: ``tables`` played,
    ``contracts`` held and ``made`` (``made_rate``), contracts ``defended`` and ``defeated``
    (``defeat_rate``), ``contras``/``recontras`` said and how many were right, ``kaputs``
    and ``kaputs_made``, and ``mean_level``, the mean bid value of its contracts in
    score-sheet units (None when it held none with a bid value, e.g. always in the 2-player
    presets, whose trump choices have no level). A passed-out table counts in ``tables``
    only. The last three count the passed-out tables, and the boards passed out at exactly
    one table and at both (those score 0).
    """
    n = cfg.num_players
    keys = ("tables", "contracts", "made", "defended", "defeated", "contras", "contras_right", "recontras",
            "recontras_right", "kaputs", "kaputs_made")
    d = {w: dict.fromkeys(keys, 0) for w in ("candidate", "opponent")}
    levels: dict[str, list[int]] = {"candidate": [], "opponent": []}
    one = both = 0
    for b in boards:
        one += b.passed_out == 1
        both += b.passed_out == 2
        for t in b.tables:
            r = t.result
            c = r.contract
            for who, side in (("candidate", t.side), ("opponent", 1 - t.side)):
                x = d[who]
                x["tables"] += 1
                if c is None:
                    continue
                mine = c.seat % 2 == side if n == 4 else c.seat == side
                if mine:
                    x["contracts"] += 1
                    x["made"] += int(bool(r.made))
                    if c.kind in _LEVELLED:
                        levels[who].append(c.value)
                    if c.is_kaput:
                        x["kaputs"] += 1
                        x["kaputs_made"] += int(bool(r.made))
                else:
                    x["defended"] += 1
                    x["defeated"] += int(not r.made)
                if t.contra_seat >= 0 and t.contra_seat % 2 == side:
                    x["contras"] += 1
                    x["contras_right"] += int(not r.made)
                if t.recontra_seat >= 0 and t.recontra_seat % 2 == side:
                    x["recontras"] += 1
                    x["recontras_right"] += int(bool(r.made))
    for who, x in d.items():
        x["made_rate"] = x["made"] / x["contracts"] if x["contracts"] else None
        x["defeat_rate"] = x["defeated"] / x["defended"] if x["defended"] else None
        x["mean_level"] = float(np.mean(levels[who])) if levels[who] else None
    return {**d, "passed_out_tables": one + 2 * both, "boards_passed_out_one": one, "boards_passed_out_both": both}


CONTRACT_GROUPS = ("same_contract", "same_side_strain", "different", "passed_out_one", "passed_out_both")


def contract_key(c: Contract | None) -> tuple | None:
    """What makes two tables' final contracts the same one: (declaring side, strain, level,
    kind, kaput extra, contra level, and the declarer's seat for kaput+N only); None for a
    passed-out table.

    The same seat holds the same cards at both tables of a board, and the play and the score
    depend on the declaring side, not on which partner declared, except kaput+N, which counts
    the declarer's own combinations (rules.md 2.9).
    """
    if c is None:
        return None
    return (c.seat % 2, c.strain, c.value, c.kind, c.plus, c.double, c.seat if c.kind == "kaput_plus" else -1)


def _contract_group(b: BoardResult) -> str:
    if b.passed_out:
        return "passed_out_both" if b.passed_out == 2 else "passed_out_one"
    k = [contract_key(t.result.contract) for t in b.tables]
    if k[0] == k[1]:
        return "same_contract"
    return "same_side_strain" if k[0][:2] == k[1][:2] else "different"


def contract_breakdown(boards: Sequence[BoardResult]) -> dict[str, dict[str, Any]]:
    """Where a duplicate result comes from: the boards grouped by how the final contracts of
    their two tables compare (docs/evaluation.md, "Metrics").

    The same seat holds the same cards at both tables, so a contract is compared as
    (declaring side, strain, level, kind, kaput extra, contra level), with the declarer's
    seat as well for kaput+N:

    * ``same_contract``: identical at both tables; the difference comes from the card play
      and the declarations;
    * ``same_side_strain``: the same side declared the same strain, at another level, kind
      (kaput) or contra level;
    * ``different``: the other side declared, or another strain;
    * ``passed_out_one``: one table was passed out (it scores 0), the other was played;
    * ``passed_out_both``: both tables were passed out, a delta of 0.

    Returns, per group: ``boards`` (count), ``share`` (of all boards), ``mean`` and ``ci95``
    (per deal, score-sheet units, within the group; None when empty) and ``contribution``
    (the group's sum per deal divided by all boards: the contributions add up to
    ``mean_board_score``).
    """
    total = len(boards)
    per_group: dict[str, list[float]] = {g: [] for g in CONTRACT_GROUPS}
    for b in boards:
        per_group[_contract_group(b)].append(b.delta / 2.0)
    out: dict[str, dict[str, Any]] = {}
    for g in CONTRACT_GROUPS:
        v = np.array(per_group[g], dtype=float)
        if v.size:
            m, lo, hi = stats.mean_ci(v)
            out[g] = {"boards": int(v.size), "share": v.size / total, "mean": m, "ci95": [lo, hi],
                      "contribution": float(v.sum()) / total}
        else:
            out[g] = {"boards": 0, "share": 0.0, "mean": None, "ci95": [None, None], "contribution": 0.0}
    return out


def format_breakdown(by: dict) -> str:
    """One line of :func:`contract_breakdown`: per group, boards, the mean per
    deal within it and its contribution to the overall mean."""
    names = {"same_contract": "same contract", "same_side_strain": "same side and strain",
             "different": "different contract", "passed_out_one": "passed out at one table",
             "passed_out_both": "passed out at both"}
    parts = []
    for g, x in by.items():
        if not x["boards"]:
            continue
        lo, hi = x["ci95"]
        parts.append(f"{names.get(g, g)} {x['boards']}: {_signed(x['mean'])} [{_signed(lo)}, {_signed(hi)}] "
                     f"(adds {_signed(x['contribution'])})")
    return "by contract: " + "; ".join(parts)


def _signed(x: float | None) -> str:
    return "-" if x is None else f"{x:+.2f}"


def summarize(boards: Sequence[BoardResult], cfg: RulesConfig) -> dict[str, Any]:
    """The metrics of docs/evaluation.md over ``boards`` (score-sheet units per deal), with
    :func:`diagnostics` and :func:`contract_breakdown` (``by_contract``)."""
    deltas = np.array([b.delta for b in boards], dtype=float)
    per_deal = deltas / 2.0
    out: dict[str, Any] = {"boards": len(boards)}
    if len(boards) == 0:
        return out
    m, lo, hi = stats.mean_ci(per_deal)
    rate, wins, nb = stats.win_rate(deltas)
    wlo, whi = stats.wilson_interval(wins, nb)
    matches = match_outcomes(boards, cfg)
    mw = sum(a + b for a, b in matches)
    mn = 2 * len(matches)
    mlo, mhi = stats.wilson_interval(mw, mn) if mn else (None, None)
    out.update(
        mean_board_score=m, ci95=[lo, hi], sd=float(per_deal.std(ddof=1)) if len(boards) > 1 else 0.0,
        board_win_rate=rate, win_rate_ci95=[wlo, whi],
        match_win_rate=(mw / mn) if mn else None, match_win_rate_ci95=[mlo, mhi], matches=mn,
        diagnostics=diagnostics(boards, cfg), by_contract=contract_breakdown(boards),
    )
    return out


def run(candidate: AgentSpec, opponents: Sequence[AgentSpec], preset: str = "bazar", boards: int = 2000,
        split: str = "test", seed: int = 0, mixed: bool = False, workers: int | None = 1, progress: bool = False,
        suite_dir: Path | str | None = None, on_row: Callable[[dict], None] | None = None,
        factory: AgentFactory | None = None, address: str | None = None) -> dict[str, Any]:
    """Evaluate ``candidate`` against each opponent on the first ``boards`` deals of a suite.

    Returns ``{"preset", "split", "mixed", "seed", "rows": [...]}``; each row has ``agent``,
    ``opponent``, ``boards``, ``mean_board_score``, ``ci95``, ``board_win_rate``,
    ``win_rate_ci95``, ``match_win_rate`` (and ``match_win_rate_ci95``, ``matches``, ``sd``,
    ``diagnostics``, ``by_contract``, ``sec_per_decision`` = ``{"agent", "opponent"}`` seconds
    per ``act``, ``seconds``).

    ``factory`` builds the agents given by name, ``workers`` and ``address`` say where the
    boards run (:func:`evaluate`).

    Raises:
        ValueError: more boards asked for than the suite holds.
        TypeError: an agent name without a ``factory``.
        ImportError: an ``address`` without Ray installed.
    """
    cfg = make_rules(preset)
    deals = load_suite(preset, split, suite_dir)
    if boards > len(deals):
        raise ValueError(f"suite {preset}_{split} has {len(deals)} boards, {boards} asked for")
    rows = []
    for opp in opponents:
        ev = evaluate(candidate, opp, cfg, deals[:boards], seed=seed, mixed=mixed, workers=workers,
                      progress=progress, factory=factory, address=address)
        per = ev.timing.per_decision()
        row = {"agent": ev.candidate, "opponent": ev.opponent, **ev.metrics,
               "sec_per_decision": {"agent": per.get(ev.agent_names[0]), "opponent": per.get(ev.agent_names[1])},
               "seconds": ev.seconds}
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return {"preset": preset, "split": split, "mixed": mixed, "seed": seed, "rows": rows}


__all__ = [
    "CONTRACT_GROUPS",
    "SPLITS",
    "AgentFactory",
    "AgentSpec",
    "BoardResult",
    "Evaluation",
    "TableResult",
    "Timing",
    "check_workers",
    "chunk_size",
    "contract_breakdown",
    "deal_state",
    "diagnostics",
    "evaluate",
    "format_breakdown",
    "load_suite",
    "match_outcomes",
    "play_board",
    "play_table",
    "resolve_agent",
    "run",
    "seatings",
    "suite_path",
    "summarize",
]
