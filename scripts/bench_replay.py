"""Replay throughput and memory: records per second and peak memory of ``blot-replay`` on a
``.jsonl`` file of random-play deal records.

    python scripts/bench_replay.py [--preset bazar] [--records 50000] [--engine compiled|reference] [--file F]

The records are written first (random legal play through ``blot_env.raw_env``, one record
per deal, streamed to the file; an existing file with enough records is reused), then
``python -m blot_env.replay -q --engine ENGINE FILE`` runs in a child process, so its peak
resident memory and CPU time (``resource.getrusage(RUSAGE_CHILDREN)``) are the replay's own.
Prints one JSON object: ``records``, ``replay_s`` (wall, interpreter start and imports
included), ``records_per_s`` (records / wall), ``cpu_s`` and ``records_per_cpu_s`` (records /
the child's user + system time: the figure that other load on the machine does not change),
``startup_cpu_s`` (the same command on a one-record file: interpreter, imports, compiled
code loaded from numba's cache) and ``records_per_cpu_s_after_startup`` (records / (cpu_s -
startup_cpu_s)), ``peak_rss_mb``, ``file_mb``, and the exit status of the replay (0: every
record replayed with its result).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from blot_env.env import raw_env

REPO = Path(__file__).resolve().parents[1]


def write_records(path: Path, preset: str, n: int, seed: int = 0) -> None:
    """``n`` deal records of random legal play, one JSON line each (constant memory)."""
    e = raw_env(preset=preset)
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            e.reset(seed=seed + i)
            while not all(e.terminations.values()):
                legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
                e.step(int(legal[rng.integers(len(legal))]))
            f.write(json.dumps(e.record()) + "\n")


def _child_cpu(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``cmd``; its user + system CPU seconds and the finished process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p


def count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python scripts/bench_replay.py", description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="bazar", help="preset of the records (default bazar)")
    ap.add_argument("--records", type=int, default=50_000, help="records to replay (default 50,000)")
    ap.add_argument("--engine", choices=("compiled", "reference"), default="compiled",
                    help="the replay's engine (default compiled)")
    ap.add_argument("--file", type=Path, default=None,
                    help="the .jsonl to replay (written when missing or short; "
                         "default runs/replay_bench_<preset>.jsonl)")
    args = ap.parse_args(argv)
    if args.records < 1:
        ap.error(f"--records must be >= 1, got {args.records}")
    path = args.file or REPO / "runs" / f"replay_bench_{args.preset}.jsonl"
    if not path.exists() or count_lines(path) != args.records:
        t0 = time.perf_counter()
        write_records(path, args.preset, args.records)
        print(f"wrote {args.records} records to {path} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    one = path.with_name(path.stem + "_one.jsonl")
    with open(path, encoding="utf-8") as f:
        one.write_text(f.readline(), encoding="utf-8")
    startup = _child_cpu([sys.executable, "-m", "blot_env.replay", "-q", "--engine", args.engine, str(one)])[0]
    t0 = time.perf_counter()
    cpu, p = _child_cpu([sys.executable, "-m", "blot_env.replay", "-q", "--engine", args.engine, str(path)])
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_kb = ru.ru_maxrss  # KiB on Linux: the largest child, the replay (the writer runs in this process)
    out = {"preset": args.preset, "engine": args.engine, "records": args.records, "replay_s": round(wall, 2),
           "records_per_s": round(args.records / wall, 1), "cpu_s": round(cpu, 2),
           "records_per_cpu_s": round(args.records / cpu, 1), "startup_cpu_s": round(startup, 2),
           "records_per_cpu_s_after_startup": round(args.records / max(cpu - startup, 1e-9), 1),
           "peak_rss_mb": round(peak_kb / 1024, 1),
           "file_mb": round(path.stat().st_size / 2**20, 1), "replay_exit": p.returncode,
           "replay_summary": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""}
    print(json.dumps(out))
    return 0 if p.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
