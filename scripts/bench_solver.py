"""Benchmark the double-dummy solver: full 8-trick, 4-hand solves from the first lead.

Deals are random; the contract comes from an auction played by the L1 rules agent (deals it
passes out are re-dealt), and declaration steps before the first card follow the solver's
policy, so the timed call is ``solve(state)`` at the first card of trick 1: the value and
the value of every legal card. Reports the median and 95th percentile of the CPU time
(``time.process_time``) and of the wall time per solve, the kernel nodes, and the machine
load (``os.getloadavg``) before and after, since wall times on a shared machine are only
as good as the load allows, and a profile of the search (``solver.SearchStats`` summed over
the solves): CPU nanoseconds per node, the null-window searches per solve and the nodes per
search, the share of nodes in each trick, the share at trick
boundaries, how many of those the cheap bounds and the transposition table end, and the mean
move number of the moves that cut (0 = the first move generated).

    python scripts/bench_solver.py --deals 200 --preset bazar
    taskset -c 1 python scripts/bench_solver.py --deals 200        # pin to one core
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from agents.baselines.rules_agent import RulesAgent
from agents.search import solver
from blot_env.engine import apply_action, current_seat, deal_random
from blot_env.rules_config import make_rules
from blot_env.state import Phase
from blot_env.view import seat_view


def first_lead_states(preset: str, count: int, seed: int) -> list:
    """``count`` play-phase states at the first card of trick 1 (contracts bid by L1)."""
    cfg = make_rules(preset)
    rng = np.random.default_rng(seed)
    bidder = RulesAgent()
    out = []
    while len(out) < count:
        s = deal_random(cfg, rng, int(rng.integers(cfg.num_players)))
        while s.phase == Phase.AUCTION:
            s = apply_action(s, bidder.act(seat_view(s, current_seat(s)), rng))
        if s.phase != Phase.PLAY:
            continue
        out.append(solver.advance_declarations(s))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--preset", default="bazar")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    states = first_lead_states(args.preset, args.deals, args.seed)
    solver.solve(states[0])  # compile / load the kernel cache outside the timing
    load0 = os.getloadavg()
    cpu, wall, nodes = [], [], []
    prof = {k: 0 for k in ("boundary", "bound_cuts", "tt_found", "tt_cuts", "cutoffs", "cut_move_sum", "searches")}
    by_trick = np.zeros(states[0].cfg.num_tricks, dtype=np.int64)
    for s in states:
        t0, c0 = time.perf_counter(), time.process_time()
        solver.solve(s)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
        st = solver.LAST
        nodes.append(st.nodes)
        by_trick += st.by_trick
        for k in prof:
            prof[k] += getattr(st, k)
    load1 = os.getloadavg()
    total = max(int(np.sum(nodes)), 1)
    bnd = max(prof["boundary"], 1)
    profile = {  # where the nodes go (docs/search.md, "Where the time goes")
        "ns_per_node": round(1e9 * float(np.sum(cpu)) / total, 1),
        "searches_per_solve": round(prof["searches"] / len(states), 2),
        "nodes_per_search": round(total / max(prof["searches"], 1)),
        "node_share_by_trick": [round(float(x) / total, 3) for x in by_trick],
        "boundary_share": round(prof["boundary"] / total, 3),
        "bound_cut_rate": round(prof["bound_cuts"] / bnd, 3),
        "tt_cut_rate": round(prof["tt_cuts"] / bnd, 3),
        "first_move_cut_mean": round(prof["cut_move_sum"] / max(prof["cutoffs"], 1), 3),
    }
    res = {
        "preset": args.preset, "deals": len(states),
        "cpu_ms_median": 1000 * float(np.median(cpu)), "cpu_ms_p95": 1000 * float(np.percentile(cpu, 95)),
        "wall_ms_median": 1000 * float(np.median(wall)), "wall_ms_p95": 1000 * float(np.percentile(wall, 95)),
        "nodes_median": int(np.median(nodes)), "nodes_p95": int(np.percentile(nodes, 95)),
        "loadavg_before": load0, "loadavg_after": load1, "cpus": os.cpu_count(), "profile": profile,
    }
    if args.json:
        print(json.dumps(res))
    else:
        print(f"{args.preset}: {len(states)} solves from the first lead (value + every legal card)")
        print(f"  CPU  time per solve: median {res['cpu_ms_median']:.1f} ms, p95 {res['cpu_ms_p95']:.1f} ms")
        print(f"  wall time per solve: median {res['wall_ms_median']:.1f} ms, p95 {res['wall_ms_p95']:.1f} ms")
        print(f"  kernel nodes: median {res['nodes_median']}, p95 {res['nodes_p95']}")
        print(f"  load average (1/5/15 min) before {load0}, after {load1}; {os.cpu_count()} CPUs")
        print(f"  profile: {json.dumps(profile)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
