"""Pick the best kept policy of a training run on dev boards, and optionally ship it.

    python scripts/select_policy.py runs/ppo_bazar --vs rules-medium --boards 300 [--last 6] [--ship]
    python scripts/select_policy.py runs/ppo_bazar_mixed --mixed --also runs/ppo_bazar/policy_selected.pt

A run trained with ``keep_checkpoints: true`` keeps ``policy_<update>.pt`` at every
checkpoint. This script evaluates the last ``--last`` of them (and ``policy.pt``) against
``--vs`` on the first ``--boards`` boards of the preset's ``dev`` suite (checkpoint selection
uses ``dev``; reported numbers use ``test``, docs/evaluation.md), prints a table sorted by the
mean board score, copies the best to ``<run>/policy_selected.pt`` (what a next stage's
``init_policy`` reads, as in configs/ppo_bazar_mixed.yaml), and with ``--ship`` also copies the
best to ``agents/data/ppo_<preset>.pt``
(what the agent name ``ppo`` loads for that preset).

``--mixed`` also plays every candidate in the mixed-partnership mode (the candidate and an
``--vs`` partner against two ``--vs``, docs/evaluation.md) and ranks by the mean of the two
scores. Each row also gives the board and duplicate match win rates (``match_win_rate`` over
``matches``, docs/evaluation.md); ``--also FILE`` adds policy files from elsewhere (the policy a fine-tuning run
started from, so that the run ships only what beats its start).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def candidates(run: Path, last: int) -> list[Path]:
    """The run's kept policy files, the last ``last`` of them by update, then ``policy.pt``."""
    from agents.ppo.trainer import kept_policies

    kept = kept_policies(run)[-last:] if last > 0 else []
    final = run / "policy.pt"
    return kept + ([final] if final.exists() else [])


def _shown(path) -> str:
    """A policy path as the output names it: relative to the repository when inside it."""
    p = Path(path)
    return str(p.resolve().relative_to(REPO)) if p.is_absolute() and p.resolve().is_relative_to(REPO) else str(p)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a blot-train output directory")
    ap.add_argument("--vs", default="rules-medium", help="opponent (agents.registry name)")
    ap.add_argument("--boards", type=int, default=300, help="dev boards per candidate")
    ap.add_argument("--last", type=int, default=6, help="kept policies to try, the latest ones")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--mixed", action="store_true",
                    help="also evaluate in the mixed-partnership mode and rank by the mean of both scores")
    ap.add_argument("--also", type=Path, action="append", default=[], metavar="FILE",
                    help="another policy file to compare (repeatable), e.g. the policy a fine-tuning run started "
                         "from; ppo for the shipped policy of the preset")
    ap.add_argument("--preset", default=None,
                    help="preset of --also ppo when the run holds no policy yet (default: the run's preset)")
    ap.add_argument("--ship", action="store_true", help="copy the best to agents/data/ppo_<preset>.pt")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.boards < 1 or args.last < 0 or args.workers < 1:
        ap.error("--boards and --workers must be >= 1 and --last >= 0")
    if not args.run.is_dir():
        ap.error(f"{args.run} is not a directory")
    from agents.eval.arena import run
    from agents.ppo.agent import read_policy_file, resolve_policy_path, shipped_path
    from agents.registry import make_agent
    from blot_env.errors import ConfigError
    from blot_env.rules_config import make_rules
    from blot_env.scoring import score_unit

    kept = candidates(args.run, args.last)
    if not kept and not args.also:
        ap.error(f"{args.run} holds no policy_<update>.pt or policy.pt")
    try:
        run_preset = read_policy_file(kept[0])["config"]["preset"] if kept else args.preset
        also = [resolve_policy_path(str(f), run_preset) for f in args.also]  # "ppo": the shipped policy
        files = kept + also
        presets = {str(f): read_policy_file(f)["config"]["preset"] for f in files}
    except (FileNotFoundError, ConfigError) as e:
        ap.error(f"--also: {e}" if not isinstance(e, ConfigError) else str(e))
    preset = presets[str(files[0])]
    other = {f: p for f, p in presets.items() if p != preset}
    if other:
        ap.error(f"every policy must be of preset {preset!r} ({files[0]}); "
                 + ", ".join(f"{f} is {p!r}" for f, p in other.items()))
    rules = make_rules(preset)
    players = rules.num_players
    unit = "raw points/deal" if score_unit(rules) == "raw" else "tp/deal"
    if args.mixed and players != 4:
        ap.error(f"--mixed needs a 4-player preset (partners); {preset!r} has {players} players")
    rows = []
    for f in files:
        row: dict = {"policy": _shown(f)}
        for mixed in (False, True) if args.mixed else (False,):
            rep = run(str(f), [args.vs], preset=preset, boards=args.boards, split="dev", workers=args.workers,
                      mixed=mixed, progress=False, factory=make_agent)["rows"][0]
            key = "mixed_" if mixed else ""
            row.update({f"{key}mean": rep["mean_board_score"], f"{key}ci95": rep["ci95"],
                        f"{key}board_win_rate": rep["board_win_rate"],
                        f"{key}match_win_rate": rep["match_win_rate"], f"{key}matches": rep["matches"]})
            print(f"{f.name:>26}  {rep['mean_board_score']:+.2f} [{rep['ci95'][0]:+.2f}, {rep['ci95'][1]:+.2f}] "
                  f"{unit} vs {args.vs}{' (mixed)' if mixed else ''}", file=sys.stderr, flush=True)
        row["rank_score"] = (row["mean"] + row["mixed_mean"]) / 2 if args.mixed else row["mean"]
        rows.append(row)
    best = max(rows, key=lambda r: r["rank_score"])
    out = {"preset": preset, "opponent": args.vs, "boards": args.boards, "split": "dev", "mixed": args.mixed,
           "rows": rows,
           "best": best["policy"]}
    selected = args.run / "policy_selected.pt"
    if Path(best["policy"]).resolve() != selected.resolve():
        shutil.copyfile(best["policy"], selected)
    out["selected"] = str(selected)
    if args.ship:
        dest = shipped_path(preset)
        if Path(best["policy"]).resolve() != dest.resolve():  # the shipped policy itself may win (--also ppo)
            shutil.copyfile(best["policy"], dest)
        out["shipped"] = str(dest)
        print(f"shipped {best['policy']} as {dest}", file=sys.stderr)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        how = "mean of plain and mixed" if args.mixed else "mean"
        print(f"best: {best['policy']} ({how} {best['rank_score']:+.2f} {unit} vs {args.vs} "
              f"on {args.boards} dev boards)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
