"""Long duplicate evaluations that survive being cut short: every finished board is saved.

``blot-eval`` keeps its boards in memory until the end. For runs of hours (the search agents
of issue 9) this script plays one board per task on a process pool and appends each finished
board to a pickle file as it arrives, so a run stopped by ``--deadline``, a time limit or a
crash keeps what it played, and a later run with the same ``--save`` file skips those boards.
Ctrl-C stops a run as a deadline does: the pool is stopped and the finished boards kept.
The summary uses the longest run of consecutive finished boards from board 0 (the boards
left in flight at a deadline are dropped, so that no board is left out for taking long).

    python scripts/eval_long.py --agent pimc-64 --vs rules-medium --boards 2000 --workers 2 \\
        --deadline 3600 --save runs/pimc64_vs_medium.pkl
    python scripts/eval_long.py --summarize runs/pimc64_vs_medium.pkl [other.pkl ...] [--json]

Metrics (spec/evaluation.md) come from :func:`agents.arena.summarize`: mean board score per
deal in score-sheet units with its 95% CI, board win rate, match win rate, diagnostics, the
breakdown by contract agreement between the two tables (``by_contract``); and
seconds per decision for each agent.

The save file is a sequence of pickled dicts, one per finished board: ``agent``, ``vs``,
``preset``, ``split``, ``seed``, ``index`` (the board), ``board``
(:class:`agents.arena.BoardResult`), ``timing`` (:class:`agents.arena.Timing`), ``names``
(the two agents' ``name``) and ``commit`` (the git commit of the code that played it, when
known). Runs are told apart by (agent, vs, preset, split, seed); the summary lists the
commits it used, since an agent's name does not change with its code. A record cut short by
a kill is dropped on the next load and the file truncated before new records are added.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.arena import Timing, load_suite, play_board, summarize
from agents.arena_cli import format_breakdown
from blot_env.rules_config import make_rules

_AGENTS: dict[str, object] = {}
_JOB: dict[str, object] = {}


def _init(job: dict) -> None:
    """Worker set-up: one torch thread, the job's rules and deals; Ctrl-C is left to the
    parent, which stops the pool (a worker that took it would be replaced by a new one)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    _JOB.update(job)


def _agent(name: str, cfg):
    if name not in _AGENTS:
        from agents.registry import make_agent

        _AGENTS[name] = make_agent(name, cfg)
    return _AGENTS[name]


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _key(r: dict) -> tuple:
    """What tells runs apart (records of earlier versions lack ``split``: test)."""
    return r["agent"], r["vs"], r["preset"], r.get("split", "test"), r["seed"]


def _one(index: int) -> dict:
    cfg = _JOB["cfg"]
    cand = _agent(_JOB["agent"], cfg)
    opp = cand if _JOB["vs"] == _JOB["agent"] else _agent(_JOB["vs"], cfg)
    timing = Timing()
    board = play_board(cfg, _JOB["deals"][index], index, cand, opp, _JOB["seed"], False, timing)
    return {"agent": _JOB["agent"], "vs": _JOB["vs"], "preset": cfg.preset, "split": _JOB["split"],
            "seed": _JOB["seed"], "index": index, "board": board, "timing": timing,
            "names": (cand.name, opp.name), "commit": _JOB["commit"]}


def warm_up(cfg) -> None:
    """Compile the solver and the compiled replay in this process before the pool forks, so
    that the workers inherit them instead of each compiling its own (on a machine without
    numba's on-disk cache, that is a minute per worker)."""
    import numpy as np

    from agents.random_agent import RandomAgent
    from agents.search import solver
    from agents.search.sampler import sample_worlds
    from blot_env.engine import apply_action, current_seat, deal_random
    from blot_env.state import Phase
    from blot_env.view import seat_view

    rng = np.random.default_rng(0)
    player = RandomAgent()
    while True:
        s = deal_random(cfg, rng, 0)
        while s.phase == Phase.AUCTION or (s.phase == Phase.PLAY and s.trick_no < 1):
            s = apply_action(s, player.act(seat_view(s, current_seat(s)), rng))
        if s.phase == Phase.PLAY:
            break
    sample_worlds(seat_view(s, current_seat(s)), 2, rng)
    solver.solve(s)


def _read(path: str) -> tuple[list[dict], int]:
    """The complete records of one save file, and the byte offset where they end."""
    out = []
    good = 0
    with open(path, "rb") as f:
        while True:
            try:
                out.append(pickle.load(f))
            except (EOFError, pickle.UnpicklingError, ValueError, AttributeError, IndexError):
                break  # the end, or a record cut short by a kill
            good = f.tell()
    return out, good


def load_records(paths: list[str]) -> list[dict]:
    """Every complete record of the save files (a record cut short at the end is ignored)."""
    return [r for p in paths for r in _read(p)[0]]


def summary(records: list[dict]) -> list[dict]:
    """Per (agent, opponent, preset): the metrics over the consecutive boards from 0."""
    groups: dict[tuple, dict[int, dict]] = {}
    for r in records:
        groups.setdefault(_key(r), {})[r["index"]] = r
    rows = []
    for (agent, vs, preset, split, seed), by in sorted(groups.items()):
        n = 0
        while n in by:
            n += 1
        used = [by[i] for i in range(n)]
        cfg = make_rules(preset)
        timing = Timing()
        for r in used:
            timing.merge(r["timing"])
        m = summarize([r["board"] for r in used], cfg)
        per = timing.per_decision()
        cname, oname = used[0]["names"] if used else (agent, vs)
        rows.append({"agent": agent, "opponent": vs, "preset": preset, "split": split, "seed": seed, **m,
                     "commits": sorted({str(r.get("commit")) for r in used}),
                     "boards_finished": len(by), "boards_beyond_prefix": len(by) - n,
                     "sec_per_decision": {"agent": per.get(cname), "opponent": per.get(oname)},
                     "decisions": {"agent": timing.decisions.get(cname, 0),
                                   "opponent": timing.decisions.get(oname, 0)}})
    return rows


def _print(rows: list[dict]) -> None:
    print(f"{'candidate':<14}{'opponent':<14}{'boards':>7}  {'mean/deal':>9}  {'95% CI':<18}"
          f"{'win rate':>9}  {'s/decision (cand, opp)':<24}{'not in prefix':>14}")
    for r in rows:
        if not r.get("boards"):
            print(f"{r['agent']:<14}{r['opponent']:<14}{0:>7}")
            continue
        lo, hi = r["ci95"]
        sp = r["sec_per_decision"]
        print(f"{r['agent']:<14}{r['opponent']:<14}{r['boards']:>7}  {r['mean_board_score']:>+9.2f}  "
              f"[{lo:+.2f}, {hi:+.2f}]  {r['board_win_rate']:>8.3f}  "
              f"{sp['agent'] or 0:<8.3f}{sp['opponent'] or 0:<16.4f}{r['boards_beyond_prefix']:>14}")
        if r.get("by_contract"):
            print("    " + format_breakdown(r["by_contract"]))


def _save(f, rec: dict) -> None:
    """Append one record in a single write, flushed to disk."""
    f.write(pickle.dumps(rec))
    f.flush()
    os.fsync(f.fileno())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agent", help="candidate (a blot-eval name, e.g. pimc-64)")
    ap.add_argument("--vs", help="opponent (a blot-eval name)")
    ap.add_argument("--preset", default="bazar")
    ap.add_argument("--split", default="test", choices=("dev", "test"))
    ap.add_argument("--boards", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--deadline", type=float, default=None,
                    help="stop after this many seconds from the start (the kernels' compilation included)")
    ap.add_argument("--save", help="pickle file the finished boards are appended to")
    ap.add_argument("--summarize", nargs="+", metavar="FILE",
                    help="print the metrics of saved runs (a row per run and file)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args(argv)
    if args.summarize:
        # one file at a time: two files of one (agent, vs, preset, split, seed), e.g. runs of
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
    deals = load_suite(args.preset, args.split)
    if args.boards > len(deals):
        ap.error(f"the {args.preset} {args.split} suite has {len(deals)} boards")
    save = Path(args.save)
    save.parent.mkdir(parents=True, exist_ok=True)
    done: set[int] = set()
    if save.exists():
        old, good = _read(str(save))
        if good < save.stat().st_size:  # drop a record cut short by a kill
            with open(save, "r+b") as f:
                f.truncate(good)
        me = (args.agent, args.vs, cfg.preset, args.split, args.seed)
        done = {r["index"] for r in old if _key(r) == me}
    todo = [i for i in range(args.boards) if i not in done]
    job = {"cfg": cfg, "deals": deals, "agent": args.agent, "vs": args.vs, "seed": args.seed,
           "split": args.split, "commit": _commit()}
    t0 = time.perf_counter()
    warm_up(cfg)
    print(f"[eval_long] kernels ready in {time.perf_counter() - t0:.0f} s", flush=True)
    finished = 0
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc=f"{args.agent} vs {args.vs}", unit="board", mininterval=5)
    pool = mp.get_context("fork").Pool(args.workers, initializer=_init, initargs=(job,))
    stopped = False
    sigint: list[int] = []  # Ctrl-C: stop like a deadline (the boards in flight are lost)
    previous = signal.signal(signal.SIGINT, lambda signum, frame: sigint.append(signum))
    try:
        with open(save, "ab") as f:
            it = pool.imap_unordered(_one, todo, chunksize=1)
            while not sigint:
                left = None if args.deadline is None else args.deadline - (time.perf_counter() - t0)
                if left is not None and left <= 0:
                    stopped = True
                    break
                try:
                    rec = it.next(timeout=1.0 if left is None else min(left, 1.0))
                except mp.TimeoutError:
                    continue
                except StopIteration:
                    break
                _save(f, rec)
                finished += 1
                bar.update(1)
            if stopped or sigint:  # keep the boards that finished while we waited
                while True:
                    try:
                        rec = it.next(timeout=0)
                    except (mp.TimeoutError, StopIteration):
                        break
                    _save(f, rec)
                    finished += 1
    finally:
        signal.signal(signal.SIGINT, previous)
        bar.close()
        pool.terminate()
        pool.join()
    interrupted = bool(sigint)
    print(f"[eval_long] {finished} boards finished in {time.perf_counter() - t0:.0f} s"
          f"{' (deadline reached)' if stopped else ' (interrupted)' if interrupted else ''}; "
          f"{len(done) + finished} saved in {save}", flush=True)
    _print(summary(load_records([str(save)])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
