"""Double-dummy tables: solve N seeded deals of a preset for every strain, in parallel, resumable.

Each deal becomes one row of :mod:`agents.search.dd_table` (per strain, or per outcome of a
2-player trump choice: the minimax outcome code ``X`` from the first lead and the
combinations that count), from which ``agents.search.dd_table.dd_score(row, contract)`` gives
the double-dummy deal score of any contract without solving again. Deal ``i`` of a table
seeded ``S`` is dealt from ``numpy.random.default_rng([S, i])``.

The deals run one per task on the pool of :mod:`agents.eval.board_pool` (this machine's processes
with ``--workers``, or a Ray cluster with ``--address``), and each finished row is appended
to ``--out`` at once, so a run stopped by ``--deadline``, Ctrl-C or a kill keeps every row
that finished (only the deals in flight are lost), and a rerun with the same file builds
only the deals it lacks.

    python scripts/dd_table.py --preset bazar --deals 300000 --workers 2 --out runs/dd_bazar.ddt
    python scripts/dd_table.py --preset duel --deals 1000 --address auto --out runs/dd_duel.ddt
    python scripts/dd_table.py --info runs/dd_bazar.ddt [--json]

File format (``agents/search/dd_table.py``, module docstring): the line ``BLOTDDT``, a JSON
header line (``format``, ``preset``, ``seed``, ``dtype``, ``itemsize``), then fixed-size
binary rows of ``agents.search.dd_table.row_dtype(cfg)`` in the order they finished; read
them with ``agents.search.dd_table.read_table(path)``. A file of another preset or seed is
refused.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.eval.board_pool import build_dataset
from agents.eval.cli import add_dataset_options, positive_int
from agents.search.dd_table import (
    DDTableError,
    TableJob,
    append_row,
    open_table,
    read_table,
    solve_task,
)
from blot_env.rules_config import PRESETS, make_rules


def info(path: str) -> dict:
    """What a table file holds: preset, seed, rows, the first missing deal, bytes and CPU
    seconds per row."""
    head, rows = read_table(path)
    idx = set(int(i) for i in rows["index"])
    first_missing = 0
    while first_missing in idx:
        first_missing += 1
    size = Path(path).stat().st_size
    cpu = rows["cpu_seconds"].astype(float)
    return {"file": path, "preset": head["preset"], "seed": head["seed"], "rows": int(rows.size),
            "first_missing": first_missing, "bytes": size, "bytes_per_row": head["itemsize"],
            "cpu_seconds": float(cpu.sum()), "cpu_seconds_per_row": float(cpu.mean()) if rows.size else None,
            "cpu_seconds_per_row_p95": float(sorted(cpu)[int(0.95 * (rows.size - 1))]) if rows.size else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="bazar", choices=tuple(PRESETS))
    ap.add_argument("--deals", type=positive_int, help="deals 0 .. N-1 of the seed")
    add_dataset_options(ap, "rows", "runs/dd_bazar.ddt")
    args = ap.parse_args(argv)
    try:
        return _main(ap, args)
    except (DDTableError, ImportError, ConnectionError, FileNotFoundError) as e:
        print(f"dd_table: {e}", file=sys.stderr)
        return 2


def _main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.info:
        rows = [info(p) for p in args.info]
        if args.json:
            print(json.dumps(rows))
        else:
            for r in rows:
                per = r["cpu_seconds_per_row"]
                print(f"{r['file']}: {r['preset']} seed {r['seed']}, {r['rows']} rows "
                      f"(deals 0..{r['first_missing'] - 1} complete), {r['bytes']} bytes "
                      f"({r['bytes_per_row']} per row), "
                      f"{r['cpu_seconds']:.1f} CPU s ({per or 0:.3f} per row)")
        return 0
    if args.deals is None or args.out is None:
        ap.error("--deals and --out are required (or --info FILE ...)")
    if args.deadline is not None and args.deadline <= 0:
        ap.error(f"--deadline must be a positive number of seconds, got {args.deadline}")
    cfg = make_rules(args.preset)
    f, old = open_table(args.out, cfg, args.seed)
    done = {int(i) for i in old["index"]}
    todo = [i for i in range(args.deals) if i not in done]
    t0 = time.perf_counter()
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc=f"dd table {cfg.preset}", unit="deal", mininterval=5)
    with f:
        try:
            stop = build_dataset(TableJob(cfg, args.seed), todo, f, solve_task, append_row, args.workers,
                                 args.address, None if args.deadline is None else t0 + args.deadline,
                                 on_record=lambda rec: bar.update(1))
        finally:
            bar.close()
    finished = stop.finished
    stopped = " (deadline reached)" if stop.deadline else " (interrupted)" if stop.interrupted else ""
    print(f"[dd_table] {finished} deals solved in {time.perf_counter() - t0:.0f} s{stopped}; "
          f"{len(done) + finished} rows in {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
