"""Throughput of the env layers, one core: agent steps per second with random masked moves.

    python scripts/bench_env.py [--preset bazar] [--steps 20000] [--json] [--profile]

Keys: ``aec_steps_per_s`` (``blot_env.env()`` with PettingZoo's wrapper stack: ``last()``
with the observation, then ``step``), ``raw_env_steps_per_s`` (the unwrapped env, same loop),
``engine_steps_per_s`` (``legal_actions`` + ``apply_action`` only), ``seat_view_us`` and
``encode_us`` (per call). Each figure is the best of ``--repeat`` runs (other load only slows
a run down). ``--profile`` prints the top functions of a cProfile run of the
wrapped loop (by internal time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import time
import warnings

import numpy as np

from blot_env import make_rules
from blot_env.engine import apply_action, deal_random, is_terminal, legal_actions
from blot_env.env import env, raw_env
from blot_env.observation import ObservationEncoder
from blot_env.view import seat_view


def bench_aec(e, steps: int, seed: int = 0) -> float:
    """Agent steps per second of an AEC env under random masked play (episodes restarted)."""
    rng = np.random.default_rng(seed)
    done = 0
    e.reset(seed=seed)
    t0 = time.perf_counter()
    while done < steps:
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))
            done += 1
        e.reset()
    return done / (time.perf_counter() - t0)


def bench_engine(cfg, steps: int, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    done = 0
    t0 = time.perf_counter()
    while done < steps:
        s = deal_random(cfg, rng, done % cfg.num_players)
        while not is_terminal(s):
            legal = legal_actions(s)
            s = apply_action(s, legal[rng.integers(len(legal))])
            done += 1
    return done / (time.perf_counter() - t0)


def bench_observation(cfg, kind: str, deals: int = 60, seed: int = 0) -> tuple[float, float]:
    """Microseconds per ``seat_view`` and per ``encode`` call over every seat of random deals."""
    rng = np.random.default_rng(seed)
    states = []
    for d in range(deals):
        s = deal_random(cfg, rng, d % cfg.num_players)
        while not is_terminal(s):
            states.append(s)
            s = apply_action(s, int(rng.choice(legal_actions(s))))
    pairs = [(s, o) for s in states for o in range(cfg.num_players)]
    t0 = time.perf_counter()
    views = [seat_view(s, o) for s, o in pairs]
    t1 = time.perf_counter()
    enc = ObservationEncoder(cfg, kind)
    t2 = time.perf_counter()
    for v in views:
        enc.encode(v)
    t3 = time.perf_counter()
    return (t1 - t0) / len(pairs) * 1e6, (t3 - t2) / len(pairs) * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="bazar")
    ap.add_argument("--kind", default="observation", choices=["observation", "information_state"])
    ap.add_argument("--steps", type=int, default=20_000, help="agent steps per measurement")
    ap.add_argument("--repeat", type=int, default=3, help="measurements per figure; the best is kept")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--profile", action="store_true", help="cProfile the wrapped AEC loop")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    cfg = make_rules(args.preset)
    r = range(max(args.repeat, 1))
    res = {
        "preset": args.preset,
        "observation_kind": args.kind,
        "aec_steps_per_s": round(max(bench_aec(env(args.preset, observation_kind=args.kind), args.steps) for _ in r)),
        "raw_env_steps_per_s": round(max(bench_aec(raw_env(args.preset, observation_kind=args.kind), args.steps)
                                         for _ in r)),
        "engine_steps_per_s": round(max(bench_engine(cfg, args.steps) for _ in r)),
    }
    sv, en = min(bench_observation(cfg, args.kind) for _ in r)
    res["seat_view_us"] = round(sv, 2)
    res["encode_us"] = round(en, 2)
    if args.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:>22}: {v}")
    if args.profile:
        prof = cProfile.Profile()
        e = env(args.preset, observation_kind=args.kind)
        prof.enable()
        bench_aec(e, args.steps // 2)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
        print(buf.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
