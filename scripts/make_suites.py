"""Generate the frozen deal suites of docs/evaluation.md: ``agents/data/suites/<preset>_<split>.json``.

Each suite is a JSON list with one deal per line, ``{"dealer", "hands", "stock"}`` as
``blot_env.record.deal_fields`` writes them; the dealer of board ``i`` is ``i % players``
(balanced over seats, and rotating like a match's deals). ``dev`` has 2,000 boards, ``test``
10,000. Deals come from ``numpy.random.SeedSequence([SEED, crc32(preset), split number])``,
so a suite never changes once written.

Idempotent: only missing files are written unless ``--force``. Run it again after a preset
is added::

    python scripts/make_suites.py            # every preset in PRESETS, missing files only
    python scripts/make_suites.py --preset duel --force
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from pathlib import Path

import numpy as np

from agents.eval.arena import SPLITS, SUITE_DIR, suite_path
from blot_env.engine import deal_random
from blot_env.record import deal_fields
from blot_env.rules_config import PRESETS, make_rules

SEED = 20240515
SPLIT_IDS = {"dev": 1, "test": 2}


def make_suite(preset: str, split: str, size: int | None = None) -> list[dict]:
    """The deals of one suite (deterministic in ``preset`` and ``split``)."""
    cfg = make_rules(preset)
    n = size if size is not None else SPLITS[split]
    rng = np.random.default_rng(np.random.SeedSequence([SEED, zlib.crc32(preset.encode()), SPLIT_IDS[split]]))
    return [deal_fields(deal_random(cfg, rng, i % cfg.num_players)) for i in range(n)]


def dumps_suite(deals: list[dict]) -> str:
    """A JSON list with one compact deal per line."""
    lines = [json.dumps(d, separators=(",", ":")) for d in deals]
    return "[\n" + ",\n".join(lines) + "\n]\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", action="append", help="preset id (repeatable); default: every preset")
    ap.add_argument("--split", action="append", choices=sorted(SPLITS), help="split (repeatable); default both")
    ap.add_argument("--out", type=Path, default=SUITE_DIR, help=f"directory (default {SUITE_DIR})")
    ap.add_argument("--force", action="store_true", help="rewrite existing files")
    args = ap.parse_args(argv)
    presets = args.preset or list(PRESETS)
    unknown = [p for p in presets if p not in PRESETS]
    if unknown:
        ap.error(f"unknown preset(s) {unknown}; known: {', '.join(PRESETS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    total = 0
    for preset in presets:
        for split in args.split or list(SPLITS):
            p = suite_path(preset, split, args.out)
            if p.exists() and not args.force:
                print(f"keep   {p} ({p.stat().st_size / 1e6:.2f} MB)")
            else:
                p.write_text(dumps_suite(make_suite(preset, split)), encoding="utf-8")
                print(f"wrote  {p} ({p.stat().st_size / 1e6:.2f} MB)")
            total += p.stat().st_size
    print(f"total {total / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
