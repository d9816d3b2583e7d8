"""A learning curve after the fact: the kept policies of a run evaluated on the trainer's dev boards.

    python scripts/curve_from_snapshots.py runs/stage12 --every 400 \\
        --start docs/results/ppo_bazar_stage11_run2/policy.pt
    python scripts/plot_curves.py runs/stage12 --opponent rules-medium --x minutes --table

A run trained with ``eval.every: 0`` (to spend its time on learner steps) has no evaluation in
its ``metrics.csv``, so no learning curve. With ``keep_checkpoints: true`` it keeps
``policy_<update>.pt`` at every checkpoint, and each holds its update, learner steps and the
trainer's wall clock in its ``meta``. This script evaluates the kept policies of every
``--every``-th update, and the final ``policy.pt``, the way the trainer's periodic evaluation
does (:func:`agents.ppo.build.make_evaluator`: the greedy policy against each opponent on the
first ``boards`` boards of the ``split`` suite, with the same seed, all taken from the run's
``eval`` config unless given here), so the points are comparable with the curve of a run that
evaluated while training. ``--start FILE`` adds the policy the run started from as the point at
0 steps and 0 minutes.

The points go to ``<run>/curve.csv`` (columns ``update``, ``global_step``, ``wall_time`` in
seconds, and ``eval_<opponent>_mean`` / ``_lo`` / ``_hi``: mean board score per deal and its 95%
CI, in score-sheet units: table points, raw card points for ``belote``), the columns that
``scripts/plot_curves.py`` reads; it reads this file for a run whose ``metrics.csv`` holds no
evaluation, and ``weights``: the digest of the network evaluated
(:func:`agents.board_pool.weights_digest`). A rerun evaluates only the policies whose update has
no point with the same weights yet, and keeps every other point in the file (those of an earlier
``--every`` too); a file of other opponents or boards is refused (``--out`` names a new one).
``wall_time`` is the trainer's clock, which holds no evaluation time for a run that evaluated
nothing; on a minutes axis a run that evaluated while training is charged for its evaluations,
so the scores are comparable and the minutes nearly so. Exits 2 with the reason on bad input.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CURVE_NAME = "curve.csv"


def points(run: Path, every: int) -> list[Path]:
    """The run's kept policies whose update is a multiple of ``every``, then ``policy.pt`` (if any)."""
    from agents.ppo.trainer import kept_policies

    kept = [p for p in kept_policies(run) if int(p.stem[len("policy_"):]) % every == 0]
    final = run / "policy.pt"
    return kept + ([final] if final.exists() else [])


def read_curve(path: Path) -> list[dict[str, str]]:
    """The rows of an existing curve file ([] when there is none)."""
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a blot-train output directory with kept policies")
    ap.add_argument("--every", type=int, default=None,
                    help="updates between points (default: the run's eval.every, else 400)")
    ap.add_argument("--vs", nargs="+", default=None, help="opponents (default: the run's eval.opponents)")
    ap.add_argument("--boards", type=int, default=None, help="dev boards a point (default: the run's eval.boards)")
    ap.add_argument("--start", type=Path, default=None,
                    help="the policy the run started from, drawn at 0 steps and 0 minutes")
    ap.add_argument("--out", type=Path, default=None, help=f"the curve file (default: <run>/{CURVE_NAME})")
    args = ap.parse_args(argv)

    from dataclasses import replace

    from tqdm import tqdm

    from agents.board_pool import weights_digest
    from agents.ppo.agent import load_ppo_agent, read_policy_file
    from agents.ppo.build import make_evaluator
    from agents.ppo.config import config_from_saved
    from agents.registry import UnknownAgentError, make_agent
    from blot_env.errors import ConfigError

    if not args.run.is_dir():
        ap.error(f"{args.run} is not a directory")
    if args.every is not None and args.every < 1:
        ap.error("--every must be >= 1")
    if args.boards is not None and args.boards < 1:
        ap.error("--boards must be >= 1")
    if args.start is not None and not args.start.is_file():
        ap.error(f"--start: {args.start} is not a file")
    every_file = points(args.run, 1)
    if not every_file:
        ap.error(f"{args.run} holds no policy_<update>.pt or policy.pt")
    try:
        cfg = config_from_saved(read_policy_file(every_file[-1])["config"])
        if cfg.network.oracle:
            ap.error(f"{args.run} trains an oracle (network.oracle): it reads every seat's hidden cards, so it "
                     "cannot play the dev boards from a seat's view (plot_curves.py --training draws its "
                     "training scores)")
        every = args.every or cfg.eval.every or 400
        ev_cfg = replace(cfg.eval, opponents=tuple(args.vs or cfg.eval.opponents),
                         boards=args.boards or cfg.eval.boards)
        for name in ev_cfg.opponents:
            make_agent(name, cfg.preset)
        evaluator = make_evaluator(ev_cfg, cfg.preset)
        files = points(args.run, every)
        metas = [(f, read_policy_file(f).get("meta") or {}) for f in files]
        if args.start:
            start_cfg = config_from_saved(read_policy_file(args.start)["config"])
            if start_cfg.preset != cfg.preset:
                ap.error(f"--start: {args.start} is a {start_cfg.preset!r} policy; the run trains {cfg.preset!r}")
            if start_cfg.network.oracle:
                ap.error(f"--start: {args.start} is an oracle (network.oracle); it cannot play from a seat's view")
    except (ConfigError, UnknownAgentError) as e:
        ap.error(str(e))
    missing = [str(f) for f, m in metas if not {"update", "global_step", "wall_time"} <= set(m)]
    if missing:
        ap.error(f"{', '.join(missing)}: no update, global_step and wall_time in the file's meta "
                 "(written by blot-train)")
    # policy.pt repeats the last kept update's weights: the digest check below skips it
    todo = ([(args.start, {"update": 0, "global_step": 0, "wall_time": 0.0})] if args.start else []) + metas

    cols = [c for o in ev_cfg.opponents for c in (f"eval_{o}_mean", f"eval_{o}_lo", f"eval_{o}_hi")]
    header = ["update", "global_step", "wall_time", "boards", "weights", *cols]
    out = args.out or args.run / CURVE_NAME
    try:
        old = read_curve(out)
        if old and (list(old[0]) != header or any(int(r["boards"]) != ev_cfg.boards for r in old)):
            ap.error(f"{out} holds points of other settings (columns {', '.join(old[0])}; boards "
                     f"{sorted({r['boards'] for r in old})}); give --out for a new file, or remove it")
        done = {int(r["update"]): r for r in old}
    except (ValueError, KeyError, csv.Error) as e:
        ap.error(f"{out}: not a curve file of this script ({e})")
    bar = tqdm(todo, desc=f"curve of {args.run}", unit="policy")
    for f, meta in bar:
        u = int(meta["update"])
        try:
            agent = load_ppo_agent(f, cfg.preset)
        except ConfigError as e:
            ap.error(str(e))
        digest = weights_digest(agent)
        if u in done and done[u]["weights"] == digest:
            continue
        row = {"update": u, "global_step": int(meta["global_step"]), "wall_time": float(meta["wall_time"]),
               "boards": ev_cfg.boards, "weights": digest, **evaluator(agent)}
        done[u] = row
        bar.write(f"update {u:>6}  " + "  ".join(
            f"{o} {row[f'eval_{o}_mean']:+.2f} [{row[f'eval_{o}_lo']:+.2f}, {row[f'eval_{o}_hi']:+.2f}]"
            for o in ev_cfg.opponents))
        with open(out, "w", newline="", encoding="utf-8") as fh:  # after every point: a stopped run keeps them
            w = csv.DictWriter(fh, fieldnames=header)
            w.writeheader()
            w.writerows(done[k] for k in sorted(done))
    print(f"{out}: {len(done)} points", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
