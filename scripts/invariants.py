"""Long random-play invariant runs, resumable (the checks of tests/oracles/invariants.py).

Every preset: cards conserved, the legal set never empty before the end, legal cards equal to
an independent rules.md 1.3, next leader = last trick's winner, raw points adding up to 162,
the kaput stop, records that replay, and the score recomputed independently for deals in
which nothing but cards counts. Deal ``i`` of a run seeded ``S`` is dealt and played from its
own generator (``numpy.random.default_rng([S, i])``), so any range of deals can be checked on
its own, and a run keeps its place in a state file:

    python scripts/invariants.py --preset all --count 1000000 --state-dir runs/invariants --workers 2
    python scripts/invariants.py --preset duel --start 0 --count 20000
    python scripts/invariants.py --preset bazar --count 10000 --rules declarations=auto

Rerunning the first command after a stop resumes every preset where its state file left it
(the state is written every ``--chunk`` deals). The last line printed per preset is a JSON
summary: the counts of :class:`oracles.Stats`, ``failures`` (0, or the run stops at the
first failing deal with its cards and actions and exits 1), ``wall_s`` (seconds of the run,
summed over resumes) and ``deals_per_s`` (deals over those seconds, all workers together).
``--workers N`` checks chunks on N processes; the state file records only a prefix of chunks
that are all done, so a stop loses at most the chunks in flight.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from oracles import InvariantError, Stats, run_deals

from agents.files import write_json_atomic
from blot_env.errors import ConfigError
from blot_env.rules_config import PRESETS, make_rules


def _parse_rules(items: list[str]) -> dict:
    out = {}
    for it in items:
        k, sep, v = it.partition("=")
        if not sep or not k:
            raise ValueError(f"--rules {it!r}: expected KNOB=VALUE")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def _load_state(path: Path | None, key: dict) -> tuple[int, Stats, float]:
    """(next deal, stats so far, seconds so far) from a state file written for the same run."""
    if path is None or not path.exists():
        return key["start"], Stats(), 0.0
    saved = json.loads(path.read_text(encoding="utf-8"))
    if saved.get("run") != key:
        raise ValueError(f"{path} belongs to another run ({saved.get('run')}); remove it or pass another "
                         f"--state-dir")
    return int(saved["next"]), Stats(**saved["stats"]), float(saved["wall_s"])


def _save_state(path: Path | None, key: dict, nxt: int, stats: Stats, wall: float) -> None:
    if path is not None:
        write_json_atomic(path, {"run": key, "next": nxt, "stats": stats.as_dict(), "wall_s": round(wall, 1)})


def _check_range(preset: str, rules: dict, seed: int, start: int, count: int) -> Stats:
    """Worker: deals ``start .. start + count - 1`` (raises InvariantError at the first failure)."""
    return run_deals(make_rules(preset, **rules), seed, count, start=start)


def run_preset(preset: str, rules: dict, seed: int, start: int, count: int, chunk: int, state: Path | None,
               progress: bool, workers: int = 1) -> int:
    """Check deals ``start .. start + count - 1`` of ``preset`` in chunks of ``chunk`` deals on
    ``workers`` processes, resuming from ``state``. The state's ``next`` only moves past chunks
    that are all done, so a stop loses at most the chunks in flight. Returns 0, or 1 after the
    first failing chunk (its message on stderr)."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    from tqdm import tqdm

    cfg = make_rules(preset, **rules)
    key = {"preset": preset, "rules": rules, "seed": seed, "start": start}  # a larger --count extends a run
    nxt, stats, wall = _load_state(state, key)
    stop = start + count
    failures = 0
    pool = ProcessPoolExecutor(workers) if workers > 1 else None
    t_last = time.perf_counter()
    with tqdm(total=count, initial=nxt - start, unit="deal", desc=preset, disable=not progress,
              smoothing=0.05, file=sys.stderr) as bar:
        if pool is None:
            while nxt < stop:
                k = min(chunk, stop - nxt)
                try:
                    st = run_deals(cfg, seed, k, start=nxt)
                except InvariantError as e:
                    print(f"{preset}: {e}", file=sys.stderr)
                    failures = 1
                    break
                now = time.perf_counter()
                wall, t_last = wall + now - t_last, now
                stats.add(st)
                nxt += k
                _save_state(state, key, nxt, stats, wall)
                bar.update(k)
        else:
            with pool:
                done: dict[int, Stats] = {}  # finished chunks past ``nxt``, by first deal
                inflight: dict = {}
                sub = nxt
                while (nxt < stop) and not failures:
                    while sub < stop and len(inflight) < 2 * workers:
                        k = min(chunk, stop - sub)
                        inflight[pool.submit(_check_range, preset, rules, seed, sub, k)] = sub
                        sub += k
                    finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        first = inflight.pop(fut)
                        try:
                            done[first] = fut.result()
                        except InvariantError as e:
                            print(f"{preset}: {e}", file=sys.stderr)
                            failures = 1
                    while nxt in done:
                        st = done.pop(nxt)
                        stats.add(st)
                        nxt += st.deals
                        bar.update(st.deals)
                    now = time.perf_counter()
                    wall, t_last = wall + now - t_last, now
                    _save_state(state, key, nxt, stats, wall)
                for fut in inflight:
                    fut.cancel()
    summary = {"preset": preset, "rules": rules, "seed": seed, "start": start, "next": nxt,
               **stats.as_dict(), "failures": failures, "workers": workers, "wall_s": round(wall, 1),
               "deals_per_s": round(stats.deals / wall, 1) if wall else None}
    print(json.dumps(summary), flush=True)
    return failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python scripts/invariants.py", description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="bazar", help=f"a preset, or 'all' ({', '.join(PRESETS)}); default bazar")
    ap.add_argument("--rules", nargs="*", default=[], metavar="KNOB=VALUE", help="knob overrides (JSON values)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the run (default 0)")
    ap.add_argument("--start", type=int, default=0, help="index of the first deal (default 0)")
    ap.add_argument("--count", type=int, default=1_000_000, help="deals per preset (default 1,000,000)")
    ap.add_argument("--chunk", type=int, default=2000, help="deals between two saves of the state (default 2000)")
    ap.add_argument("--state-dir", type=Path, default=None,
                    help="folder of the resumable state files (<preset>.json); none: no resuming")
    ap.add_argument("--workers", type=int, default=1,
                    help="processes checking chunks side by side (default 1; the machine has "
                         f"{os.cpu_count()} cores)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    if args.start < 0 or args.count < 1 or args.chunk < 1 or args.workers < 1:
        ap.error(f"--start must be >= 0 and --count, --chunk, --workers >= 1 (got {args.start}, {args.count}, "
                 f"{args.chunk}, {args.workers})")
    presets = list(PRESETS) if args.preset == "all" else [args.preset]
    try:
        rules = _parse_rules(args.rules)
        for p in presets:
            make_rules(p, **rules)
    except (ConfigError, ValueError) as e:
        ap.error(str(e))
    failures = 0
    for p in presets:
        suffix = "" if not rules else "_" + "_".join(f"{k}-{v}" for k, v in sorted(rules.items()))
        state = args.state_dir / f"{p}{suffix}.json" if args.state_dir else None
        try:
            failures += run_preset(p, rules, args.seed, args.start, args.count, args.chunk, state,
                                   not args.no_progress, args.workers)
        except ValueError as e:
            print(f"{p}: {e}", file=sys.stderr)
            return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
