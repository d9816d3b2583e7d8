"""Add a constant to a trained policy's logits of whole action blocks (reopen a call it stopped trying).

    python scripts/shift_logits.py docs/results/ppo_bazar_stage11_run2/policy.pt \\
        --block CONTRA --block RECONTRA --shift 21 --out runs/run2_contra21.pt --probe 300
    python scripts/shift_logits.py agents/data/ppo_bazar.pt --block CONTRA --probe 300   # measure only

The new file acts as the source everywhere except that each action of the blocks has its odds
against every legal action outside the blocks multiplied by exp(shift) (agents/ppo/logit_shift.py). ``--probe N``
plays N random deals greedily with the policy in every seat and prints how likely it makes the
blocks where one is legal, before and after the shift. Give the file to a training config as
``init_policy`` (docs/training.md, "Stage 13"). Exit status 2 on bad input, with the reason.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _print_probe(label: str, r: dict) -> None:
    if not r["decisions"]:
        print(f"{label}: no position of the probe had one of the blocks legal")
        return
    print(f"{label}: {r['decisions']} positions with the blocks legal; probability mean {r['mean']:.3g}, "
          f"max {r['max']:.3g}, above 0.01 at {r['share_above_1pct']:.3f}; greedy choice at {r['greedy_share']:.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path, help="a policy.pt or checkpoint.pt")
    ap.add_argument("--block", action="append", required=True, metavar="NAME",
                    help="an action block of the preset's layout (CONTRA, RECONTRA, BID, ...); repeat for more")
    ap.add_argument("--shift", type=float, default=0.0, help="logit units added to the blocks' actions")
    ap.add_argument("--out", type=Path, help="the policy file to write (needs --shift)")
    ap.add_argument("--probe", type=int, default=0, metavar="DEALS",
                    help="play this many random deals greedily and report the blocks' probability")
    ap.add_argument("--seed", type=int, default=0, help="seed of the probe's deals")
    args = ap.parse_args(argv)
    if not args.source.is_file():
        ap.error(f"no such file: {args.source}")
    if args.out is None and not args.probe:
        ap.error("nothing to do: give --out (with --shift) or --probe")
    if args.out is not None and args.shift == 0:
        ap.error("--out needs a non-zero --shift")
    if args.out is None and args.shift != 0:
        ap.error("--shift needs --out (the file to write)")
    if not math.isfinite(args.shift):
        ap.error(f"--shift must be a finite number of logit units, got {args.shift}")
    if args.out is not None and args.out.is_dir():
        ap.error(f"cannot write --out {args.out}: it is a folder")
    if args.out is not None and args.out.resolve() == args.source.resolve():
        ap.error(f"--out {args.out} is the source file; write the shifted policy to another file")
    if args.probe < 0:
        ap.error(f"--probe must be >= 0, got {args.probe}")
    from agents.ppo.logit_shift import probe_blocks, shift_logits_file
    from blot_env.errors import ConfigError

    try:
        if args.probe:
            _print_probe(str(args.source), probe_blocks(args.source, args.block, args.probe, args.seed))
    except (ConfigError, OSError) as e:
        ap.error(f"probe of {args.source}: {e}")
    if args.out is not None:
        try:
            shift_logits_file(args.source, args.out, args.block, args.shift)
        except ConfigError as e:
            ap.error(str(e))
        except OSError as e:
            ap.error(f"cannot write --out {args.out}: {e}")
        print(f"{args.source}: {'+'.join(args.block)} logits {args.shift:+g} written to {args.out}")
        if args.probe:
            _print_probe(str(args.out), probe_blocks(args.out, args.block, args.probe, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
