"""scripts/main_job.py: the table and its legend name the preset's score unit and match target."""

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
