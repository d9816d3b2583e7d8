#!/usr/bin/env python
"""Train a blot preset with Ray RLlib's PPO (new API stack), on a laptop or on a Ray cluster.

    python integrations/rllib/train_rllib.py --config configs/rllib_bazar.yaml [--num-env-runners N]
        [--address ADDR] [--iterations K] [--out DIR] [--set key=value ...]

Without ``--address`` (and without ``RAY_ADDRESS`` in the environment) it starts a local Ray
instance sized by the config's ``ray`` section; with ``--address auto`` / ``--address
ray://host:10001`` / ``RAY_ADDRESS`` set (``ray job submit`` sets it) it joins that cluster and
places the env runners there. The same command runs unchanged in both places.

Writes to ``--out`` (default ``runs/rllib_<preset>``): ``metrics.csv`` (one row per iteration:
env steps, deals, main's training return and win rate, learner losses, evaluation against the
baselines on duplicate boards), ``learning_curve.png``, ``policy.pt`` (the trained module's
actor in agents/ppo's policy format: ``blot-eval --agent DIR/policy.pt``), RLlib checkpoints
under ``checkpoint/`` and ``config.yaml``. The last line printed is a JSON summary.
docs/integrations.md describes the run and the comparison with agents/ppo.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # running from a clone without `pip install -e .`
    sys.path.insert(0, str(ROOT))

from agents.integrations.rllib_config import RLlibRunConfig, apply_rllib_overrides, load_rllib_config  # noqa: E402

log = logging.getLogger("train_rllib")

COLUMNS = ["iteration", "env_steps", "main_steps", "deals", "wall_time", "iter_time", "main_return", "main_win",
           "main_return_vs_random", "passed_out", "seats_rewarded", "seats_no_decision", "reward_mismatch",
           "decisions_per_deal", "policy_loss", "vf_loss", "entropy", "mean_kl", "vf_explained_var", "snapshots"]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(ROOT / "configs" / "rllib_bazar.yaml"), help="YAML run config")
    ap.add_argument("--num-env-runners", type=int, default=None, help="override runners.num_env_runners")
    ap.add_argument("--address", default=None,
                    help="Ray cluster to join (auto, ray://HOST:10001, HOST:6379); default: RAY_ADDRESS or a local "
                         "instance")
    ap.add_argument("--iterations", type=int, default=None, help="override iterations")
    ap.add_argument("--out", default=None, help="output directory (default runs/rllib_<preset>)")
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="config overrides, e.g. ppo.lr=1e-4")
    ap.add_argument("--no-plot", action="store_true", help="do not write learning_curve.png")
    ap.add_argument("--replot", metavar="DIR", help="only redraw DIR/learning_curve.png from DIR/metrics.csv and "
                    "DIR/config.yaml (no training)")
    return ap


def init_ray(cfg: RLlibRunConfig, address: str | None) -> str:
    """Join ``address`` / ``RAY_ADDRESS`` or start a small local instance; returns a description."""
    import ray

    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, ignore_reinit_error=True)
        return f"cluster {address}"
    kwargs: dict[str, Any] = {"include_dashboard": False, "ignore_reinit_error": True,
                              "object_store_memory": cfg.ray.object_store_memory_mb * 1024 * 1024}
    if cfg.ray.num_cpus:
        kwargs["num_cpus"] = cfg.ray.num_cpus
    ray.init(**kwargs)
    return "local"


def _get(d: dict, *path: str, default: float = float("nan")) -> float:
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return default
        d = d[p]
    try:
        return float(d)
    except (TypeError, ValueError):
        return default


def row_of(result: dict, learner: str, wall: float, iter_time: float) -> dict[str, float]:
    er = result.get("env_runners", {})
    lr = result.get("learners", {}).get(learner, {})
    return {
        "iteration": result.get("training_iteration"),
        "env_steps": _get(result, "env_runners", "num_env_steps_sampled_lifetime"),
        "main_steps": _get(er, "num_module_steps_sampled_lifetime", learner),
        "deals": _get(er, "num_episodes_lifetime"),
        "wall_time": round(wall, 2), "iter_time": round(iter_time, 2),
        "main_return": _get(er, "blot/main_return") if learner == "main"
        else _get(er, "module_episode_returns_mean", learner),
        "main_win": _get(er, "blot/main_win"),
        "main_return_vs_random": _get(er, "blot/main_return_vs_random"),
        "passed_out": _get(er, "blot/passed_out"),
        "seats_rewarded": _get(er, "blot/seats_rewarded"),
        "seats_no_decision": _get(er, "blot/seats_no_decision"),
        "reward_mismatch": _get(er, "blot/reward_mismatch", default=0.0),
        "decisions_per_deal": _get(er, "blot/decisions"),
        "policy_loss": _get(lr, "policy_loss"), "vf_loss": _get(lr, "vf_loss"), "entropy": _get(lr, "entropy"),
        "mean_kl": _get(lr, "mean_kl_loss"), "vf_explained_var": _get(lr, "vf_explained_var"),
        "snapshots": _get(result, "league", "snapshots", default=0.0),
    }


def evaluate_module(module: Any, cfg: RLlibRunConfig) -> dict[str, float]:
    """Duplicate evaluation (agents.eval.arena) of the greedy module against ``cfg.eval.opponents``."""
    from agents.eval.arena import evaluate, load_suite
    from agents.integrations.rllib import module_agent
    from agents.registry import make_agent
    from blot_env.rules_config import make_rules

    rules = make_rules(cfg.env.preset)
    deals = load_suite(rules.preset, cfg.eval.split)[:cfg.eval.boards]
    agent = module_agent(module, cfg)
    out = {}
    for opp in cfg.eval.opponents:
        m = evaluate(agent, opp, rules, deals, seed=cfg.eval.seed, factory=make_agent).metrics
        out[f"eval_{opp}_mean"] = float(m["mean_board_score"])
        out[f"eval_{opp}_lo"], out[f"eval_{opp}_hi"] = (float(x) for x in m["ci95"])
    return out


def plot_curve(rows: list[dict], path: Path, cfg: RLlibRunConfig, title: str) -> None:
    """Two panels against deals played: main's training return (scaled score difference) and
    the duplicate evaluation against the baselines (score-sheet units per deal, 95% CI)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    x = [r["deals"] for r in rows]
    a1.plot(x, [r["main_return"] for r in rows], marker=".", label="return vs league (all opponents)")
    vr = [(r["deals"], r["main_return_vs_random"]) for r in rows if not math.isnan(r["main_return_vs_random"])]
    if vr:
        a1.plot(*zip(*vr), marker=".", alpha=0.7, label="return vs random module")
    a1.axhline(0.0, color="grey", lw=0.8)
    a1.set_xlabel("deals played (all env runners)")
    a1.set_ylabel(f"mean episode return (score diff x {cfg.env.reward_scale})")
    a1.set_title("training (RLlib PPO, main module)")
    po = a1.twinx()
    po.plot(x, [r["passed_out"] for r in rows], color="grey", ls=":", label="passed-out share (right axis)")
    po.set_ylim(0, 1)
    po.set_ylabel("share of passed-out deals")
    h1, l1 = a1.get_legend_handles_labels()
    h2, l2 = po.get_legend_handles_labels()
    a1.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper left")
    for opp in cfg.eval.opponents:
        pts = [(r["deals"], r[f"eval_{opp}_mean"], r[f"eval_{opp}_lo"], r[f"eval_{opp}_hi"]) for r in rows
               if not math.isnan(r.get(f"eval_{opp}_mean", math.nan))]
        if pts:
            xs, ys, lo, hi = zip(*pts)
            a2.errorbar(xs, ys, yerr=[[y - lo_ for y, lo_ in zip(ys, lo)], [hi_ - y for y, hi_ in zip(ys, hi)]],
                        marker="o", capsize=3, label=f"vs {opp}")
    a2.axhline(0.0, color="grey", lw=0.8)
    a2.set_xlabel("deals played (all env runners)")
    a2.set_ylabel("mean board score per deal (table points)")
    a2.set_title(f"duplicate evaluation, {cfg.eval.boards} {cfg.eval.split} boards, greedy")
    a2.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def curve_title(cfg: RLlibRunConfig) -> str:
    mode = "league self-play" if cfg.league.mode == "league" else "one module per team"
    return (f"{cfg.env.preset}: RLlib PPO, {mode}, {cfg.runners.num_env_runners} env runners, "
            f"{cfg.ppo.train_batch_size} agent steps per iteration")


def replot(run_dir: Path) -> Path:
    """Redraw ``run_dir/learning_curve.png`` from its ``metrics.csv`` and ``config.yaml``."""
    cfg = load_rllib_config(run_dir / "config.yaml")
    with open(run_dir / "metrics.csv", newline="", encoding="utf-8") as f:
        rows = [{k: float(v) if v not in ("", None) else math.nan for k, v in r.items()} for r in csv.DictReader(f)]
    path = run_dir / "learning_curve.png"
    plot_curve(rows, path, cfg, curve_title(cfg))
    return path


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.replot:
        print(replot(Path(args.replot)))
        return 0
    cfg = load_rllib_config(args.config, args.set)
    over: dict[str, Any] = {}
    if args.num_env_runners is not None:
        over["runners.num_env_runners"] = args.num_env_runners
    if args.iterations is not None:
        over["iterations"] = args.iterations
    if over:
        cfg = apply_rllib_overrides(cfg, over)
    out = Path(args.out or ROOT / "runs" / f"rllib_{cfg.env.preset}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False), encoding="utf-8")

    import torch

    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    where = init_ray(cfg, args.address)

    from agents.integrations.rllib import MAIN, build_algorithm_config, export_policy, learning_modules, register

    register("blot")
    algo = build_algorithm_config(cfg, "blot").build_algo()
    learner = learning_modules(cfg)[0] if cfg.league.mode == "teams" else MAIN
    log.info("RLlib PPO on %s (%s), %d env runners, modules %s; output %s", cfg.env.preset, where,
             cfg.runners.num_env_runners, sorted(algo.config.policies), out)
    rows: list[dict] = []
    eval_cols = [f"eval_{o}_{k}" for o in cfg.eval.opponents for k in ("mean", "lo", "hi")]
    t0 = time.perf_counter()
    with open(out / "metrics.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS + eval_cols, extrasaction="ignore")
        w.writeheader()
        for it in range(1, cfg.iterations + 1):
            t_it = time.perf_counter()
            result = algo.train()
            row = row_of(result, learner, time.perf_counter() - t0, time.perf_counter() - t_it)
            if cfg.eval.every and (it % cfg.eval.every == 0 or it == cfg.iterations):
                row.update(evaluate_module(algo.get_module(learner), cfg))
            rows.append(row)
            w.writerow(row)
            f.flush()
            log.info("iter %d: %s", it, {k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()})
            if cfg.checkpoint_every and it % cfg.checkpoint_every == 0 and it < cfg.iterations:
                algo.save_to_path(str(out / "checkpoint"))
    algo.save_to_path(str(out / "checkpoint"))
    export_policy(algo.get_module(learner), cfg, out / "policy.pt",
                  {"iterations": cfg.iterations, "env_steps": rows[-1]["env_steps"], "deals": rows[-1]["deals"]})
    if not args.no_plot:
        plot_curve(rows, out / "learning_curve.png", cfg, curve_title(cfg))
    algo.stop()
    last = rows[-1]
    summary = {"out": str(out), "iterations": cfg.iterations, "wall_s": round(time.perf_counter() - t0, 1),
               **{k: last.get(k) for k in ("env_steps", "deals", "main_return", "main_win", "reward_mismatch",
                                           "seats_rewarded", *eval_cols)}}
    print(json.dumps(summary, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
