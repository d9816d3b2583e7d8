"""Map a trained policy onto another preset of the same seat count, or onto another observation
kind: a warm start for ``blot-train``.

    python scripts/transfer_policy.py agents/data/ppo_bazar.pt --preset bazar-app --out runs/bazar-app_from_bazar.pt
    python scripts/transfer_policy.py agents/data/ppo_bazar.pt --preset bazar --obs-kind observation_voids \
        --new-features zero --out runs/stage4_voids.pt

The new file holds the source network's weights row by row wherever an input feature or an
action means the same in both presets (agents/ppo/transfer.py says which); give it to a
training config as ``init_policy`` (configs/ppo_bazar-app_transfer.yaml) or evaluate it as it
is with ``blot-eval --agent FILE --preset PRESET``. Prints how many features and actions map.
With ``--new-features zero`` the input features the source never saw (the public voids of
``observation_voids``, say) start with zero weights, so the moved network plays as the source
until training moves it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main(argv: list[str] | None = None) -> int:
    from blot_env.observation import KINDS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", help="a policy.pt or checkpoint.pt (agents/data/ppo_bazar.pt, say)")
    ap.add_argument("--preset", required=True, help="the target preset (bazar-app, say)")
    ap.add_argument("--obs-kind", default=None, choices=KINDS,
                    help="the target observation kind (default: the source's)")
    ap.add_argument("--new-features", choices=("fresh", "zero"), default="fresh",
                    help="weights of target input features with no source feature: the new network's "
                         "initial ones (fresh, the default) or zero")
    ap.add_argument("--out", required=True, help="the policy file to write")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    from agents.ppo.transfer import transfer_policy
    from blot_env.errors import ConfigError

    try:
        report = transfer_policy(args.source, args.preset, args.out, obs_kind=args.obs_kind,
                                 new_features=args.new_features)
    except (OSError, ConfigError, ValueError) as e:
        print(f"transfer_policy: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['source']} ({report['source_preset']}, {report['source_obs_kind']}, weights "
              f"{report['source_digest']}) -> {args.out} ({report['preset']}, {report['obs_kind']}): "
              f"{report['obs_mapped']} of {report['obs_size']} input features and {report['actions_mapped']} of "
              f"{report['num_actions']} actions carried over; the others {report['new_features']}; "
              f"{report['obs_dropped']} of the source's {report['source_obs_size']} input features dropped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
