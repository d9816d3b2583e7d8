"""Wiring of the trainer: the agent registry and the duplicate arena plugged into :class:`PPOTrainer`.

The trainer core (``rollout``, ``trainer``, ``pretrain``) imports no registry and no arena; it
receives an agent factory (pool baselines, the cloning teacher) and an evaluator (the periodic
evaluation) from here, and the evaluation receives the registry's ``make_agent`` as its factory,
so the import graph of ``agents`` has no circle (build -> registry, eval.arena, trainer;
tests/test_imports.py keeps it so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from blot_env.errors import ConfigError

from ..eval.arena import evaluate, load_suite
from ..registry import UnknownAgentError, make_agent, make_pool_agent
from .config import EvalConfig, TrainConfig
from .trainer import Evaluator, PPOTrainer


def make_evaluator(cfg: EvalConfig, preset: str) -> Evaluator:
    """The periodic evaluation of ``cfg``: the greedy policy against each of ``cfg.opponents`` on
    the first ``cfg.boards`` boards of the preset's frozen ``cfg.split`` suite (docs/evaluation.md).

    The returned callable maps an agent to ``{"eval_<opp>_mean", "eval_<opp>_lo", "eval_<opp>_hi"}``:
    the mean board score per deal and its 95% CI (score-sheet units, candidate minus opponent).
    """
    from blot_env.rules_config import make_rules

    rules = make_rules(preset)
    deals = load_suite(preset, cfg.split)
    if cfg.boards > len(deals):
        raise ConfigError(f"eval.boards is {cfg.boards} but the {preset} {cfg.split} suite has {len(deals)} boards")
    deals = deals[:cfg.boards]

    def evaluator(agent: Any) -> dict[str, float]:
        out: dict[str, float] = {}
        for opp in cfg.opponents:
            m = evaluate(agent, opp, rules, deals, seed=cfg.seed, factory=make_agent).metrics
            lo, hi = m["ci95"]
            out.update({f"eval_{opp}_mean": float(m["mean_board_score"]), f"eval_{opp}_lo": float(lo),
                        f"eval_{opp}_hi": float(hi)})
        return out

    return evaluator


def build_trainer(cfg: TrainConfig, out_dir: str | Path | None = None, resume: bool = False) -> PPOTrainer:
    """A :class:`PPOTrainer` for ``cfg`` with the registry's agents (``agents.registry.make_agent``)
    as pool baselines and cloning teacher, and :func:`make_evaluator` when ``cfg.eval.every > 0``.

    Raises:
        ConfigError: a bad config, an unknown agent name (``pool.baselines``, ``eval.opponents``,
            ``pretrain.agent``: checked here, before any training), more ``eval.boards`` than the
            suite holds, or a checkpoint that does not fit.
        FileNotFoundError: no deal suite ``eval.split`` (with ``eval.every`` > 0).
    """
    named = [("pool.baselines", n) for n in cfg.pool.baselines] + [("pretrain.agent", cfg.pretrain.agent)] * bool(
        cfg.pretrain.agent) + [("eval.opponents", n) for n in cfg.eval.opponents if cfg.eval.every]
    for field, name in named:
        try:
            make_agent(name, cfg.preset, allow_oracle=field == "pool.baselines")
        except (UnknownAgentError, ConfigError) as e:
            raise ConfigError(f"{field}: {e}") from None
    evaluator = make_evaluator(cfg.eval, cfg.preset) if cfg.eval.every else None
    return PPOTrainer(cfg, out_dir, resume=resume, agent_factory=make_pool_agent, evaluator=evaluator)


__all__ = ["build_trainer", "make_evaluator"]
