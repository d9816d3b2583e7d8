"""Average the weights of several policy files of one run into one policy (weight averaging).

    python scripts/average_policies.py runs/ppo_bazar_mixed/policy_0009*.pt runs/ppo_bazar_mixed/policy_001000.pt \
        --out runs/ppo_bazar_mixed/policy_avg.pt
    python scripts/average_policies.py --run runs/ppo_bazar_mixed --last 8 --out runs/ppo_bazar_mixed/policy_avg.pt

Kept policies of the same run late in training lie close together in weight space; their
element-wise mean (stochastic weight averaging, Izmailov et al., 2018) is one network that
often plays better than any single one of them, at no cost at play time: the result is an
ordinary ``policy.pt`` (``blot-eval --agent FILE``, ``scripts/select_policy.py --also FILE``),
still acting without search. Every file must come from the same preset, observation kind and
network settings; the output's config is the last file's, and its ``meta`` lists the sources.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def average(files: list[Path]) -> dict:
    """The policy-file dict whose weights are the element-wise mean of ``files``' weights.

    Raises:
        ConfigError: a file is not a PPO policy, or the files differ in preset, observation
            kind, network settings or weight names and shapes (the message names the file).
    """
    import torch

    from agents.ppo.agent import read_policy_file
    from agents.ppo.config import config_from_saved
    from blot_env.errors import ConfigError

    datas = [read_policy_file(f) for f in files]
    ref = datas[-1]
    # through config_from_saved, so that a file written before a key existed reads its default
    cfgs = [config_from_saved(d["config"]) for d in datas]
    key = ("preset", "obs_kind", "network")
    for f, c, d in zip(files, cfgs, datas):
        if any(getattr(c, k) != getattr(cfgs[-1], k) for k in key):
            raise ConfigError(f"{f}: preset, obs_kind or network differ from {files[-1]}'s; only policies of one "
                              "run (or of runs with the same network) can be averaged")
        if d["policy"].keys() != ref["policy"].keys() or any(
                d["policy"][k].shape != v.shape for k, v in ref["policy"].items()):
            raise ConfigError(f"{f}: its weights have other names or shapes than {files[-1]}'s")
    weights = {k: torch.stack([d["policy"][k].to(torch.float64) for d in datas]).mean(0).to(v.dtype)
               for k, v in ref["policy"].items()}
    meta = dict(ref.get("meta") or {})
    meta["averaged_from"] = [str(f) for f in files]
    return {**ref, "policy": weights, "meta": meta}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="policy files (policy.pt, policy_<update>.pt)")
    ap.add_argument("--run", type=Path, help="a blot-train output directory: average its last --last kept policies")
    ap.add_argument("--last", type=int, default=8, help="with --run: how many kept policies (default 8)")
    ap.add_argument("--out", type=Path, required=True, help="the averaged policy file to write")
    args = ap.parse_args(argv)
    files = list(args.files)
    if args.run is not None:
        if not args.run.is_dir():
            ap.error(f"--run {args.run} is not a directory")
        if args.last < 1:
            ap.error("--last must be >= 1")
        from agents.ppo.trainer import kept_policies

        kept = kept_policies(args.run)
        if not kept:
            ap.error(f"--run {args.run} holds no policy_<update>.pt (train with keep_checkpoints: true)")
        files += kept[-args.last:]
    if len(files) < 2:
        ap.error("give at least two policy files (or --run with --last >= 2)")
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        ap.error(f"no such file: {', '.join(missing)}")
    import torch

    from blot_env.errors import ConfigError

    try:
        data = average(files)
    except ConfigError as e:
        ap.error(str(e))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(data, args.out)
    print(f"averaged {len(files)} policies into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
