"""scripts/main_job.py: the table and its legend name the preset's score unit and match target; the short
run's overrides, teacher and defaults."""

from __future__ import annotations

import pytest
from conftest import load_script

INFO = {"updates": 3, "learner_steps": 900, "deals": 40, "wall_seconds": 5.0, "collect_sps": 200.0,
        "update_sps": 900.0}
ROW = {"agent": "ppo (this run)", "opponent": "rules", "boards": 2, "mean_board_score": 1.5, "ci95": [-1.0, 4.0],
       "board_win_rate": 0.5, "win_rate_ci95": [0.1, 0.9]}


@pytest.mark.parametrize(("preset", "unit", "words", "target"), [
    ("bazar", "tp", "in table points (tp)", 151),
    ("belote", "raw", "in raw card points (raw)", 1000),  # rules.md 6 scores belote in card points
])
def test_legend_and_table_use_the_presets_unit_and_target(preset, unit, words, target):
    job = load_script("main_job")
    text = job.legend(preset)
    assert words in text and f"matches to {target} won" in text
    assert (unit == "raw") == ("table points" not in text)
    table = job.markdown([ROW], {"preset": preset, **INFO})
    assert table.splitlines()[0].startswith(f"| agent | opponent | boards | mean/deal ({unit}) |")
    assert "| ppo (this run) | rules | 2 | +1.50 | [-1.00, +4.00] | 0.500 |" in table


@pytest.mark.parametrize("preset", ["bazar", "bazar-app", "duel", "duel-app", "open", "belote"])
def test_score_unit_follows_the_presets_scoring_family(preset):
    from blot_env.rules_config import make_rules
    from blot_env.scoring import score_unit

    expected = "raw" if preset == "belote" else "tp"  # rules.md 6: only belote scores raw card points
    assert score_unit(make_rules(preset)) == expected
    assert load_script("main_job").score_unit(preset) == expected


def test_main_job_overrides_give_a_valid_run_with_the_split_teacher():
    """The short run's overrides load onto the bazar config: the warm start clones rules' calls and
    rules-medium's card play, and an epoch takes 64 minibatches; defaults are 10 minutes / 9M steps."""
    from agents.base import PhaseSplitAgent
    from agents.baselines.medium_agent import MediumAgent
    from agents.baselines.rules_agent import RulesAgent
    from agents.ppo.config import load_config
    from agents.registry import make_agent

    job = load_script("main_job")
    args = job.parse_args([])
    assert (args.train_minutes, args.total_steps) == (10.0, 9_000_000)
    cfg = load_config(args.config, job.job_overrides(args))
    assert cfg.total_steps == 9_000_000 and cfg.ppo.num_minibatches == 64 and cfg.pretrain.deals == 6000
    teacher = make_agent(cfg.pretrain.agent, cfg.preset, seed=0)
    assert isinstance(teacher, PhaseSplitAgent)
    assert type(teacher.bidder) is RulesAgent and isinstance(teacher.player, MediumAgent)
    # a --set override given on the command line comes after the job's own and wins
    args2 = job.parse_args(["--set", "ppo.num_minibatches=4", "--total-steps", "1000"])
    cfg2 = load_config(args2.config, job.job_overrides(args2))
    assert (cfg2.ppo.num_minibatches, cfg2.total_steps, cfg2.pretrain.agent) == (4, 1000, "rules+rules-medium")
