"""Grow a trained policy's actor (wider layers, or more of them) without changing how it plays.

    python scripts/widen_policy.py runs/stage4_shipped.pt --hidden 512 512 --out runs/stage4_wide.pt

The new file's actor gives the same logits as the source's on every observation
(agents/ppo/widen.py says how); give it to a training config as ``init_policy`` with the same
``network.hidden`` (configs/ppo_bazar_stage8.yaml) so that fine-tuning has more capacity
to use, or evaluate it as it is with ``blot-eval --agent FILE``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path, help="a policy.pt or checkpoint.pt")
    ap.add_argument("--hidden", type=int, nargs="+", required=True,
                    help="the new actor widths, e.g. 512 512 (each source layer at least as wide; more layers allowed)")
    ap.add_argument("--out", type=Path, required=True, help="the policy file to write")
    ap.add_argument("--seed", type=int, default=0, help="seed of the new units' incoming weights")
    args = ap.parse_args(argv)
    if not args.source.is_file():
        ap.error(f"no such file: {args.source}")
    if any(h < 1 for h in args.hidden):
        ap.error(f"--hidden widths must be positive: {args.hidden}")
    from agents.ppo.widen import widen_policy_file
    from blot_env.errors import ConfigError

    try:
        data = widen_policy_file(args.source, args.out, args.hidden, args.seed)
    except ConfigError as e:
        ap.error(str(e))
    except OSError as e:
        ap.error(f"cannot write --out {args.out}: {e}")
    info = data["meta"]["widened_from"]
    print(f"{args.source}: actor {info['hidden']} -> {info['to']} written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
