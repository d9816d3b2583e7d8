"""Benchmark the picture of the table: frames per second of ``render_mode="rgb_array"``.

Plays random deals through the AEC env with ``render_mode="rgb_array"`` and times every
``env.render()`` call (``uint8[560, 880, 3]`` frames, blot_env/render_image.py); the env's
steps are not timed. Reports frames per second (wall and CPU time) per preset and the
machine load (``os.getloadavg``) before and after.

    python scripts/bench_render.py --deals 20
    python scripts/bench_render.py --preset bazar --deals 50 --json
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from blot_env.env import raw_env
from blot_env.rules_config import PRESETS


def bench(preset: str, deals: int, seed: int = 0) -> dict:
    env = raw_env(preset, render_mode="rgb_array")
    rng = np.random.default_rng(seed)
    frames, wall, cpu = 0, 0.0, 0.0
    for d in range(deals):
        env.reset(seed=seed + d)
        for agent in env.agent_iter():
            t0, c0 = time.perf_counter(), time.process_time()
            frame = env.render()
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
            frames += 1
            assert frame.dtype == np.uint8 and frame.ndim == 3
            if env.terminations[agent]:
                env.step(None)
                continue
            legal = np.flatnonzero(env.observe(agent)["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
    return {"preset": preset, "frames": frames, "fps_wall": frames / wall, "fps_cpu": frames / cpu,
            "shape": list(frame.shape)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=list(PRESETS), help="one preset (default: every preset)")
    ap.add_argument("--deals", type=int, default=20, help="deals per preset (default 20)")
    ap.add_argument("--json", action="store_true", help="print one JSON object per preset")
    args = ap.parse_args()
    load0 = os.getloadavg()
    rows = [bench(p, args.deals) for p in ([args.preset] if args.preset else list(PRESETS))]
    load1 = os.getloadavg()
    for r in rows:
        if args.json:
            print(json.dumps(r | {"load_before": load0[0], "load_after": load1[0]}))
        else:
            print(f"{r['preset']:10s} {r['frames']:6d} frames  {r['fps_wall']:7.1f} frames/s wall  "
                  f"{r['fps_cpu']:7.1f} frames/s CPU  ({r['shape'][0]}x{r['shape'][1]})")
    if not args.json:
        print(f"load average {load0[0]:.2f} before, {load1[0]:.2f} after")


if __name__ == "__main__":
    main()
