"""The README's main job: a short PPO training on the CPU, then duplicate evaluation against the baselines.

1. Trains a PPO policy on Bazar Blot from scratch with configs/ppo_bazar.yaml on the CPU (no
   shipped weights): a short behaviour-cloning warm start (6,000 deals of ``rules+rules-medium``:
   ``rules``' calls and ``rules-medium``'s card play, both cheap), then PPO self-play, collection
   and update on the two cores, for ``--total-steps`` learner steps or ``--train-minutes`` of wall
   time, whichever comes first. Against the recipe's settings the short run takes 64 minibatches
   an epoch instead of 4: sixteen times the gradient steps, the update about 0.64 as fast in
   learner steps a second (docs/experiments.md, "The main job's settings").
2. Evaluates it against ``random`` (L0), ``rules`` (L1) and ``rules-medium`` (L2), and the
   shipped ``ppo`` policy against ``rules-medium``, on duplicate boards of the frozen test
   suite (agents.eval.arena, docs/evaluation.md), and prints the table with its legend.
3. Writes the learning curve (``learning_curve.png``), ``report.json`` and ``report.md``.

Usage::

    python scripts/main_job.py                    # about 12 minutes on 2 cores, 10 of them training
    python scripts/main_job.py --train-minutes 2 --boards 200 --out runs/quick
"""

from __future__ import annotations

import argparse
import csv
import logging
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

#: the short run: a smaller behaviour-cloning warm start of rules' calls and rules-medium's cards, more
#: and smaller minibatches, a learning-curve point every 60 updates
MAIN_JOB_OVERRIDES = ("pretrain.agent=rules+rules-medium", "pretrain.deals=6000", "pretrain.chunk_deals=2000",
                      "ppo.num_minibatches=64", "eval.every=60", "eval.boards=100",
                      "eval.opponents=[rules]",
                      "checkpoint_every=20", "keep_checkpoints=false")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", type=Path, default=REPO / "configs" / "ppo_bazar.yaml")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "main_job")
    ap.add_argument("--total-steps", type=int, default=9_000_000,
                    help="learner steps of the short run (the learning rate anneals over them)")
    ap.add_argument("--train-minutes", type=float, default=10.0, help="wall-time cap of the training")
    ap.add_argument("--boards", type=int, default=1000, help="duplicate boards per evaluation row")
    ap.add_argument("--split", default="test", help="deal suite split (test: reported numbers)")
    ap.add_argument("--workers", type=int, default=2, help="evaluation processes")
    ap.add_argument("--no-shipped", action="store_true", help="skip the rows of the shipped ppo policy")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="extra config overrides (see blot-train --set)")
    return ap.parse_args(argv)


def job_overrides(args: argparse.Namespace) -> list[str]:
    """The config overrides of the run, in the order they apply (a later one wins): the step budget,
    the short run's :data:`MAIN_JOB_OVERRIDES`, then the command line's ``--set`` pairs."""
    return [f"total_steps={args.total_steps}", *MAIN_JOB_OVERRIDES, *args.overrides]


def train(args: argparse.Namespace) -> tuple[Path, dict]:
    from tqdm.auto import tqdm

    from agents.ppo.build import build_trainer
    from agents.ppo.config import load_config
    from agents.ppo.trainer import POLICY_NAME

    cfg = load_config(args.config, job_overrides(args))
    run_dir = args.out / "train"
    if run_dir.exists():
        for f in run_dir.glob("*"):
            if f.is_file():
                f.unlink()
    say("building the trainer: the batched engine and the network's input layer are compiled on first use "
        "(about a minute on a fresh clone, cached afterwards)")
    trainer = build_trainer(cfg, run_dir)
    budget = args.train_minutes * 60
    unit = score_unit(cfg.preset)
    say(f"behaviour-cloning warm start: {cfg.pretrain.agent} plays {cfg.pretrain.deals:,} deals, "
        "the network imitates it")
    t0 = time.perf_counter()
    trainer.pretrain()
    say(f"warm start done in {time.perf_counter() - t0:.0f} s; PPO self-play for the rest of the "
        f"{args.train_minutes:g} minutes (or {cfg.total_steps:,} learner steps)")
    bar = tqdm(total=round(budget), initial=min(round(time.perf_counter() - t0), round(budget)), unit="s",
               desc="training (wall seconds)", dynamic_ncols=True)

    def show(row: dict) -> None:
        bar.n = min(round(time.perf_counter() - t0), round(budget))
        bar.set_postfix({"steps": f"{int(row['global_step']):,}", "vs rules": _fmt_eval(row, unit)}, refresh=True)

    left = budget - (time.perf_counter() - t0)
    if left <= 0:
        raise SystemExit(f"[main job] the warm start used the whole budget of {args.train_minutes:g} minutes; "
                         "give --train-minutes more time")
    try:
        rows = trainer.train(progress=False, max_seconds=left, on_update=show)
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    steps = sum(r["batch_steps"] for r in rows)
    info = {
        "preset": cfg.preset, "updates": trainer.update_no, "learner_steps": trainer.global_step,
        "env_steps": trainer.env_steps,
        "deals": trainer.deals, "wall_seconds": wall, "finished": trainer.done,
        "collect_sps": steps / sum(r["collect_time"] for r in rows),
        "update_sps": steps / sum(r["update_time"] for r in rows),
        "overall_sps": steps / wall,
    }
    return run_dir / POLICY_NAME, info


def say(msg: str) -> None:
    print(f"[main job] {msg}", flush=True)


def score_unit(preset: str) -> str:
    """The unit of a preset's scores: ``raw`` (card points, belote: rules.md 6) or ``tp`` (table points)."""
    from blot_env.rules_config import make_rules
    from blot_env.scoring import score_unit as unit_of

    return unit_of(make_rules(preset))


def _fmt_eval(row: dict, unit: str) -> str:
    m = row.get("eval_rules_mean")
    if m is None or m != m:
        return "-"
    return f"{m:+.1f} [{row['eval_rules_lo']:+.1f}, {row['eval_rules_hi']:+.1f}] {unit} (dev)"


#: the evaluation rows: (candidate, opponents)
def _plan(policy: Path, shipped: bool) -> list[tuple[str, list[str]]]:
    plan = [(str(policy), ["random", "rules", "rules-medium"])]
    if shipped:
        plan.append(("ppo", ["rules-medium"]))
    return plan


def evaluate(policy: Path, args: argparse.Namespace, preset: str = "bazar") -> list[dict]:
    from agents.eval.arena import run
    from agents.registry import make_agent

    rows = []
    for cand, opps in _plan(policy, not args.no_shipped):
        report = run(cand, opps, preset=preset, boards=args.boards, split=args.split,
                     workers=args.workers, progress=True, factory=make_agent)
        for r in report["rows"]:
            r["agent"] = "ppo (this run)" if cand == str(policy) else "ppo (shipped)"
            rows.append(r)
    return rows


def legend(preset: str) -> str:
    """The table's legend: the preset's score unit (rules.md 6 scores belote in raw card points) and match target."""
    from blot_env.rules_config import make_rules

    rules = make_rules(preset)
    if score_unit(preset) == "tp":
        unit = """in table points (tp),
  the unit of the Bazar Blot score sheet (a made contract of 16 scores 16 tp; the card points of a
  deal, 162 raw, are worth about 16 tp),"""
    else:
        unit = """in raw card points (raw),
  the unit belote is scored in (162 card points a deal plus declarations, rules.md 6),"""
    return f"""mean/deal: the candidate side's score minus the opponent side's, per deal, {unit}
  averaged over the two tables of each duplicate board.
95% CI: Student t interval over boards. board win: share of boards the candidate won, ties one half
  (so a positive mean can go with a win rate under 0.5: fewer boards won, by more).
match win: duplicate matches to {rules.target} won. s/dec: seconds per decision."""


def plot_curve(metrics: Path, out: Path, unit: str = "tp") -> None:
    """Learning curve from a run's metrics.csv: one panel per baseline (training-deal score
    difference, raw and smoothed, plus the duplicate evaluations with their 95% CI)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    with open(metrics, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    x = np.array([float(r["global_step"]) for r in rows])

    def col(key: str) -> np.ndarray:
        return np.array([float(r[key]) if r.get(key) else np.nan for r in rows])

    names = [n for n in ("rules", "rules-medium", "random") if f"vs_{n}_tp" in rows[0] or f"eval_{n}_mean" in rows[0]]
    fig, axes = plt.subplots(len(names), 1, figsize=(7, 3 * len(names)), sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        if f"vs_{name}_tp" in rows[0]:
            y = col(f"vs_{name}_tp")
            ok = ~np.isnan(y)
            if ok.any():
                k = 9
                sm = np.convolve(np.where(ok, y, 0.0), np.ones(k), "same") / np.maximum(
                    np.convolve(ok.astype(float), np.ones(k), "same"), 1)
                ax.plot(x[ok], y[ok], alpha=0.25, color="tab:blue")
                ax.plot(x, sm, color="tab:blue", label=f"training deals vs {name} (smoothed)")
        if f"eval_{name}_mean" in rows[0]:
            m, lo, hi = col(f"eval_{name}_mean"), col(f"eval_{name}_lo"), col(f"eval_{name}_hi")
            ok = ~np.isnan(m)
            if ok.any():
                ax.errorbar(x[ok], m[ok], yerr=[m[ok] - lo[ok], hi[ok] - m[ok]], fmt="o-", color="tab:green",
                            capsize=3, label=f"duplicate boards vs {name} (dev suite, 95% CI)")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_ylabel(f"{unit} per deal")
        ax.set_title(f"learner side minus {name}")
        ax.legend(fontsize=8)
    axes[-1, 0].set_xlabel("learner steps")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def markdown(rows: list[dict], info: dict) -> str:
    lines = [f"| agent | opponent | boards | mean/deal ({score_unit(info['preset'])}) | 95% CI | board win rate "
             "| 95% CI |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lo, hi = r["ci95"]
        wlo, whi = r["win_rate_ci95"]
        lines.append(f"| {r['agent']} | {r['opponent']} | {r['boards']} | {r['mean_board_score']:+.2f} | "
                     f"[{lo:+.2f}, {hi:+.2f}] | {r['board_win_rate']:.3f} | [{wlo:.3f}, {whi:.3f}] |")
    lines.append("")
    lines.append(f"Training: {info['updates']} updates, {info['learner_steps']} learner steps, {info['deals']} deals "
                 f"in {info['wall_seconds']:.0f} s; collection {info['collect_sps']:.0f} and update "
                 f"{info['update_sps']:.0f} learner steps/s.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    t0 = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    say(f"training PPO ({args.config.name}) from scratch for up to {args.train_minutes:g} min "
        f"({args.total_steps:,} learner steps)")
    policy, info = train(args)
    print(f"[main job] trained: {info['learner_steps']} learner steps, {info['deals']} deals in "
          f"{info['wall_seconds']:.0f} s (collection {info['collect_sps']:.0f}, update {info['update_sps']:.0f} "
          f"learner steps/s)", flush=True)
    plot_curve(policy.parent / "metrics.csv", args.out / "learning_curve.png", score_unit(info["preset"]))
    say(f"evaluating on {args.boards} duplicate boards of the {args.split} suite (rules-medium takes longest)")
    rows = evaluate(policy, args, info["preset"])
    from agents.eval.cli import format_table
    from agents.files import write_json_atomic

    print(format_table({"preset": info["preset"], "split": args.split, "mixed": False, "rows": rows}))
    text = legend(info["preset"])
    print(text)
    total = time.perf_counter() - t0
    report = {"training": info, "evaluation": rows, "total_seconds": total}
    write_json_atomic(args.out / "report.json", report, default=float)
    (args.out / "report.md").write_text(markdown(rows, info) + f"\n\n{text}\n\nTotal wall time {total:.0f} s.\n",
                                        encoding="utf-8")
    print(f"[main job] done in {total:.0f} s; learning curve {args.out / 'learning_curve.png'}, "
          f"report {args.out / 'report.md'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
