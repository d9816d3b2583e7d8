"""Long fuzzing runs of every user input, resumable (the targets of tests/oracles/fuzz.py).

Case ``i`` of a target is the Hypothesis example built from the bytes of
``numpy.random.default_rng([seed, crc32(target), i])`` (Hypothesis' ``fuzz_one_input``), so
a run can stop and resume anywhere, and every failure is reproducible from its case number.
``--cases N`` is the total over the targets (spread evenly); the state file keeps, per
target, the cases run, the inputs Hypothesis could not build from their bytes (``invalid``),
the seconds, and every failure (its case, error, place and traceback; the first one of each
kind in full, with a count):

    nohup nice -n 10 python scripts/fuzz.py --cases 1000000 --state runs/fuzz/state.json &
    python scripts/fuzz.py --cases 20000 --targets record,rules      # a short run, no state
    python scripts/fuzz.py --replay record:1234                       # rerun one case here

Rerunning the first command after a stop continues where the state file left it (it is
written after every chunk, atomically). The cases run in a child process (limited to
``--memory-gb`` of address space), so a crash or a hang of one case is reported as a failure
of that case and the run goes on with the next. The last lines are a table per target and a
JSON summary; the exit status is 1 when any case failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import sys
import time
import traceback
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from agents.files import write_json_atomic

BUFFER = 8192
"""Bytes handed to Hypothesis per case (enough for the longest inputs the targets draw)."""
STATE_VERSION = 1
KEEP_TRACEBACKS = 3
"""Full tracebacks kept per kind of failure (the rest are counted)."""


def case_bytes(seed: int, target: str, case: int) -> bytes:
    """The input bytes of case ``case`` of ``target`` in a run seeded ``seed``."""
    import numpy as np

    return np.random.default_rng([seed, zlib.crc32(target.encode()), case]).bytes(BUFFER)


def _tests() -> dict:
    from hypothesis import HealthCheck, settings
    from oracles.fuzz import TARGETS

    s = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
    return {name: t.test(s) for name, t in TARGETS.items()}


def failure_of(e: BaseException) -> dict:
    """``{"error", "where", "traceback"}`` of an exception: its type and message, and the
    innermost frame of the code under test (not of Hypothesis or of the target)."""
    frames = traceback.extract_tb(e.__traceback__)
    inner = [f for f in frames if "site-packages" not in f.filename] or frames
    last = inner[-1] if inner else None
    where = f"{Path(last.filename).name}:{last.lineno} ({last.name})" if last else "?"
    return {"error": f"{type(e).__name__}: {str(e)[:300]}", "kind": type(e).__name__, "where": where,
            "traceback": "".join(traceback.format_exception(e))[-4000:]}


def run_case(test, seed: int, target: str, case: int) -> tuple[bool, dict | None]:
    """Run one case: ``(valid, failure)`` (``valid`` is False when Hypothesis could not build
    an input from the bytes; ``failure`` None when the property held)."""
    try:
        used = test.hypothesis.fuzz_one_input(case_bytes(seed, target, case))
    except Exception as e:
        return True, failure_of(e)
    return used is not None, None


def _worker(conn, seed: int, current, memory_gb: float) -> None:
    """The child: runs ``(target, first, count)`` chunks sent on ``conn`` and answers with
    ``(invalid, failures, seconds)``; ``current`` holds the case in progress."""
    if memory_gb > 0:
        import resource

        limit = int(memory_gb * 2 ** 30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    tests = _tests()
    while True:
        job = conn.recv()
        if job is None:
            return
        target, first, count = job
        t0 = time.perf_counter()
        invalid = 0
        for case in range(first, first + count):
            current.value = case
            valid, fail = run_case(tests[target], seed, target, case)
            invalid += not valid
            if fail is not None:
                conn.send(("fail", dict(fail, case=case)))
        conn.send(("done", invalid, time.perf_counter() - t0))


class Worker:
    """A child process that runs chunks of cases; restarted after a crash or a hang."""

    def __init__(self, seed: int, memory_gb: float) -> None:
        self.seed, self.memory_gb = seed, memory_gb
        self.proc = None

    def start(self) -> None:
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.current = ctx.Value("q", -1)
        self.proc = ctx.Process(target=_worker, args=(child, self.seed, self.current, self.memory_gb), daemon=True)
        self.proc.start()
        child.close()

    def run(self, target: str, first: int, count: int, timeout: float) -> tuple[int, list[dict], float, int]:
        """``(invalid, failures, seconds, done)`` of cases ``first ..``; ``done < count`` when
        the child died or hung at case ``first + done - 1`` (reported as a failure)."""
        if self.proc is None or not self.proc.is_alive():
            self.start()
        self.current.value = -1
        self.conn.send((target, first, count))
        t0 = time.perf_counter()
        failures: list[dict] = []
        hung = False
        while True:
            left = t0 + timeout - time.perf_counter()
            if left <= 0 or not self.conn.poll(left):
                hung = True
                break
            try:
                msg = self.conn.recv()
            except EOFError:  # the child died
                self.proc.join(10)
                break
            if msg[0] == "fail":
                failures.append(msg[1])
                continue
            return msg[1], failures, msg[2], count
        case = self.current.value
        self.stop(kill=True)
        case = first if case < first else case
        what = f"hung for more than {timeout:.0f} s" if hung else f"the process died (exit code {self.proc.exitcode})"
        failures.append({"error": f"Crash: {what}", "kind": "Crash", "where": "?", "traceback": "", "case": case})
        return 0, failures, time.perf_counter() - t0, case - first + 1

    def stop(self, kill: bool = False) -> None:
        if self.proc is None:
            return
        if kill:
            self.proc.kill()
        else:
            with contextlib.suppress(OSError):
                self.conn.send(None)
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


# --------------------------------------------------------------------------- state


def new_state(seed: int, names: list[str]) -> dict:
    return {"version": STATE_VERSION, "seed": seed, "buffer": BUFFER,
            "targets": {n: {"cases": 0, "invalid": 0, "failures": 0, "seconds": 0.0} for n in names},
            "failures": []}


def load_state(path: Path | None, seed: int, names: list[str]) -> dict:
    """The state of a run (a new one when ``path`` is None or absent).

    Raises:
        ValueError: the file is no state of this script, or of a run with another seed.
    """
    if path is None or not path.exists():
        return new_state(seed, names)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a fuzz state file ({e}); remove it or pass another --state") from None
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION or not isinstance(
            state.get("targets"), dict):
        raise ValueError(f"{path}: not a fuzz state file of version {STATE_VERSION}; remove it or pass another --state")
    if state.get("seed") != seed or state.get("buffer") != BUFFER:
        raise ValueError(f"{path} belongs to a run with seed {state.get('seed')} (buffer {state.get('buffer')}); "
                         f"pass --seed {state.get('seed')} or another --state")
    for n in names:
        state["targets"].setdefault(n, {"cases": 0, "invalid": 0, "failures": 0, "seconds": 0.0})
    return state


def save_state(path: Path | None, state: dict) -> None:
    """Write the state atomically (agents/files.py: a temporary file renamed over the old one)."""
    if path is not None:
        write_json_atomic(path, state)


def add_failures(state: dict, target: str, failures: list[dict]) -> None:
    """Count ``failures`` in the state: one entry per (target, kind, place), its first
    ``KEEP_TRACEBACKS`` cases with their tracebacks."""
    for f in failures:
        state["targets"][target]["failures"] += 1
        key = (target, f["kind"], f["where"])
        for entry in state["failures"]:
            if (entry["target"], entry["kind"], entry["where"]) == key:
                entry["count"] += 1
                if len(entry["cases"]) < KEEP_TRACEBACKS:
                    entry["cases"].append(f["case"])
                break
        else:
            state["failures"].append({"target": target, "kind": f["kind"], "where": f["where"], "error": f["error"],
                                      "count": 1, "cases": [f["case"]], "traceback": f["traceback"]})


def quotas(total: int, names: list[str]) -> dict[str, int]:
    """``total`` cases spread evenly over the targets (the first ones get the remainder)."""
    base, extra = divmod(total, len(names))
    return {n: base + (i < extra) for i, n in enumerate(names)}


def report(state: dict, names: list[str]) -> str:
    rows = [f"{'target':<14}{'cases':>10}{'invalid':>9}{'tracebacks':>12}{'cases/s':>9}"]
    for n in names:
        t = state["targets"][n]
        rate = t["cases"] / t["seconds"] if t["seconds"] else 0.0
        rows.append(f"{n:<14}{t['cases']:>10,}{t['invalid']:>9,}{t['failures']:>12,}{rate:>9.0f}")
    total = sum(state["targets"][n]["cases"] for n in names)
    fails = sum(state["targets"][n]["failures"] for n in names)
    rows.append(f"{'all':<14}{total:>10,}{sum(state['targets'][n]['invalid'] for n in names):>9,}{fails:>12,}")
    for f in state["failures"]:
        if f["target"] in names:
            rows.append(f"FAIL {f['target']} x{f['count']} at {f['where']}: {f['error']} (cases {f['cases']})")
    return "\n".join(rows)


def run(total: int, names: list[str], seed: int, chunk: int, state_path: Path | None, timeout: float,
        memory_gb: float, progress: bool = True) -> dict:
    """Run the targets ``names`` until each has its share of ``total`` cases; returns the state."""
    state = load_state(state_path, seed, names)
    want = quotas(total, names)
    worker = Worker(seed, memory_gb)
    try:
        while True:
            todo = [n for n in names if state["targets"][n]["cases"] < want[n]]
            if not todo:
                break
            for n in todo:
                t = state["targets"][n]
                count = min(chunk, want[n] - t["cases"])
                invalid, failures, secs, done = worker.run(n, t["cases"], count, timeout)
                t["cases"] += done
                t["invalid"] += invalid
                t["seconds"] = round(t["seconds"] + secs, 2)
                add_failures(state, n, failures)
                save_state(state_path, state)
            if progress:
                done_all = sum(state["targets"][n]["cases"] for n in names)
                fails = sum(state["targets"][n]["failures"] for n in names)
                print(f"{done_all:,} of {sum(want.values()):,} cases, {fails} failures", file=sys.stderr, flush=True)
    finally:
        worker.stop()
    return state


def replay(spec: str, seed: int) -> int:
    """Rerun ``TARGET:CASE`` in this process and print its traceback; 1 if it fails."""
    from oracles.fuzz import TARGETS

    target, _, case = spec.partition(":")
    if target not in TARGETS or not case.isdigit():
        print(f"--replay: expected TARGET:CASE with a target of {', '.join(TARGETS)}, got {spec!r}", file=sys.stderr)
        return 2
    test = _tests()[target]
    try:
        test.hypothesis.fuzz_one_input(case_bytes(seed, target, int(case)))
    except Exception:
        traceback.print_exc()
        return 1
    print(f"{spec}: the property holds")
    return 0


def main(argv: list[str] | None = None) -> int:
    from oracles.fuzz import TARGETS

    ap = argparse.ArgumentParser(prog="python scripts/fuzz.py", description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10_000, help="cases in all, spread over the targets (default 10,000)")
    ap.add_argument("--targets", default="all", help=f"comma-separated targets, or all ({', '.join(TARGETS)})")
    ap.add_argument("--seed", type=int, default=0, help="seed of the run (default 0)")
    ap.add_argument("--chunk", type=int, default=500, help="cases per target between two saves (default 500)")
    ap.add_argument("--state", type=Path, default=None, help="the resumable state file (JSON); none: no resuming")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds a chunk may take before its case in progress counts as a hang (default 600)")
    ap.add_argument("--memory-gb", type=float, default=8.0,
                    help="address-space limit of the child process, GiB (default 8; 0: none)")
    ap.add_argument("--replay", metavar="TARGET:CASE", help="rerun one case here and print its traceback")
    ap.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    args = ap.parse_args(argv)
    if args.replay:
        return replay(args.replay, args.seed)
    names = list(TARGETS) if args.targets == "all" else [n.strip() for n in args.targets.split(",") if n.strip()]
    bad = [n for n in names if n not in TARGETS]
    if bad or not names:
        ap.error(f"unknown target(s) {bad}; the targets are {', '.join(TARGETS)}")
    if args.cases < 1 or args.chunk < 1 or args.seed < 0 or args.timeout <= 0:
        ap.error("--cases and --chunk must be >= 1, --seed >= 0 and --timeout > 0")
    import signal

    # a kill ends the run through run()'s finally, which stops the child process too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        state = run(args.cases, names, args.seed, args.chunk, args.state, args.timeout, args.memory_gb,
                    not args.no_progress)
    except ValueError as e:
        print(f"fuzz.py: {e}", file=sys.stderr)
        return 2
    print(report(state, names))
    summary = {"seed": args.seed, "cases": sum(state["targets"][n]["cases"] for n in names),
               "tracebacks": sum(state["targets"][n]["failures"] for n in names),
               "targets": {n: state["targets"][n] for n in names}}
    print(json.dumps(summary), flush=True)
    return 1 if summary["tracebacks"] else 0


if __name__ == "__main__":
    sys.exit(main())
