"""Pick the best kept policy of a training run on dev boards, and optionally ship it.

    python scripts/select_policy.py runs/ppo_bazar --vs rules-medium --boards 300 [--last 6] [--ship]
    python scripts/select_policy.py runs/ppo_bazar_mixed --mixed --also runs/ppo_bazar/policy_selected.pt

A run trained with ``keep_checkpoints: true`` keeps ``policy_<update>.pt`` at every
checkpoint. This script evaluates the last ``--last`` of them (and any ``--update``, and
``policy.pt``) against ``--vs`` on the first ``--boards`` boards of the preset's ``dev`` suite
(checkpoint selection uses ``dev``; reported numbers use ``test``, docs/evaluation.md), prints a
table sorted by the mean board score, copies the best to ``<run>/policy_selected.pt`` (what a
next stage's ``init_policy`` reads, as in configs/ppo_bazar_mixed.yaml), and with ``--ship``
also copies the best to ``agents/data/ppo_<preset>.pt`` (what the agent name ``ppo`` loads for
that preset). The ``select`` stage of a recipe (``blot-train --recipe``) does the same
(agents/ppo/select.py).

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
    ap.add_argument("--update", type=int, action="append", default=[], metavar="N",
                    help="also try the kept policy of update N (policy_<N>.pt; repeatable)")
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
    from agents.ppo.agent import read_policy_file, resolve_policy_path, shipped_path
    from agents.ppo.select import candidates, select_policy
    from agents.registry import make_agent
    from blot_env.errors import ConfigError
    from blot_env.rules_config import make_rules
    from blot_env.scoring import score_unit

    try:
        kept = candidates(args.run, args.last, args.update)
    except ConfigError as e:
        ap.error(str(e))
    if not kept and not args.also:
        ap.error(f"{args.run} holds no policy_<update>.pt or policy.pt")
    try:
        run_preset = read_policy_file(kept[0])["config"]["preset"] if kept else args.preset
        also = [resolve_policy_path(str(f), run_preset) for f in args.also]  # "ppo": the shipped policy
        files = kept + also
        preset = read_policy_file(files[0])["config"]["preset"]
    except (FileNotFoundError, ConfigError) as e:
        ap.error(f"--also: {e}" if not isinstance(e, ConfigError) else str(e))
    unit = "raw points/deal" if score_unit(make_rules(preset)) == "raw" else "tp/deal"

    def say(r: dict) -> None:
        rep = r["row"]
        print(f"{Path(r['policy']).name:>26}  {rep['mean_board_score']:+.2f} [{rep['ci95'][0]:+.2f}, "
              f"{rep['ci95'][1]:+.2f}] {unit} vs {args.vs}{' (mixed)' if r['mixed'] else ''}", file=sys.stderr,
              flush=True)

    try:
        out = select_policy(files, args.vs, args.boards, args.mixed, args.workers, factory=make_agent,
                            out=args.run / "policy_selected.pt", on_row=say)
    except (FileNotFoundError, ConfigError) as e:
        ap.error(str(e))
    best = out["best"]
    for r in out["rows"]:
        r["policy"] = _shown(r["policy"])
    out["best"] = _shown(best)
    out["selected"] = str(args.run / "policy_selected.pt")
    if args.ship:
        dest = shipped_path(preset)
        if Path(best).resolve() != dest.resolve():  # the shipped policy itself may win (--also ppo)
            shutil.copyfile(best, dest)
        out["shipped"] = str(dest)
        print(f"shipped {out['best']} as {dest}", file=sys.stderr)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        how = "mean of plain and mixed" if args.mixed else "mean"
        score = max(r["rank_score"] for r in out["rows"])
        print(f"best: {out['best']} ({how} {score:+.2f} {unit} vs {args.vs} on {args.boards} dev boards)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
