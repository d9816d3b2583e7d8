"""scripts/select_policy.py: ranks a run's kept policies (and --also files) on dev boards, --mixed, --ship."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from conftest import load_script  # noqa: E402

from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.config import load_config  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _script():
    return load_script("select_policy")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run")
    cfg = load_config(REPO / "configs" / "ppo_tiny.yaml", ["total_steps=300", "keep_checkpoints=true"])
    build_trainer(cfg, out).train()
    return out


def test_ranks_kept_policies_and_extra_files_in_both_modes(tiny_run, tmp_path, capsys):
    extra = tmp_path / "start.pt"
    shutil.copyfile(REPO / "agents" / "data" / "ppo_bazar.pt", extra)
    assert _script().main([str(tiny_run), "--vs", "rules", "--boards", "3", "--last", "1", "--workers", "1",
                           "--also", str(extra), "--mixed", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert "tp/deal vs rules (mixed)" in captured.err  # bazar scores table points
    names = [Path(r["policy"]).name for r in out["rows"]]
    assert names[-1] == "start.pt" and "policy.pt" in names and len(names) == 3
    for r in out["rows"]:
        assert r["rank_score"] == pytest.approx((r["mean"] + r["mixed_mean"]) / 2)
        for key in ("", "mixed_"):  # 3 boards of 4 players make no whole match (docs/evaluation.md)
            assert 0.0 <= r[f"{key}board_win_rate"] <= 1.0 and r[f"{key}matches"] >= 0
    assert out["best"] == max(out["rows"], key=lambda r: r["rank_score"])["policy"] and out["mixed"]
    assert (tiny_run / "policy_selected.pt").read_bytes() == Path(out["best"]).read_bytes()


def test_refuses_a_missing_extra_file_and_mixed_on_two_players(tiny_run, tmp_path, capsys):
    with pytest.raises(SystemExit):
        _script().main([str(tiny_run), "--also", str(tmp_path / "nope.pt")])
    assert "--also: no PPO policy file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _script().main([str(tiny_run), "--also", str(REPO / "agents" / "data" / "ppo_belote.pt")])
    assert "every policy must be of preset 'bazar'" in capsys.readouterr().err
    duel = tmp_path / "duel"
    duel.mkdir()
    shutil.copyfile(REPO / "agents" / "data" / "ppo_duel.pt", duel / "policy.pt")
    with pytest.raises(SystemExit):
        _script().main([str(duel), "--mixed", "--boards", "1"])
    assert "--mixed needs a 4-player preset (partners); 'duel' has 2 players" in capsys.readouterr().err


def test_belote_scores_are_printed_in_raw_points(tmp_path, capsys):
    """Belote's board scores are raw points (rules.md 6), and the printed lines say so."""
    run = tmp_path / "belote"
    run.mkdir()
    shutil.copyfile(REPO / "agents" / "data" / "ppo_belote.pt", run / "policy.pt")
    assert _script().main([str(run), "--vs", "rules", "--boards", "1", "--workers", "1"]) == 0
    captured = capsys.readouterr()
    assert "raw points/deal vs rules" in captured.err and "tp/deal" not in captured.err + captured.out
    assert "raw points/deal vs rules on 1 dev boards" in captured.out


def test_ship_when_the_shipped_policy_itself_wins(tmp_path, capsys, monkeypatch):
    """--also ppo --ship with the shipped policy as the best candidate leaves it in place."""
    mod = _script()
    data = tmp_path / "data"
    data.mkdir()
    shipped = data / "ppo_duel.pt"
    shutil.copyfile(REPO / "agents" / "data" / "ppo_duel.pt", shipped)
    import agents.ppo.agent as agent_mod

    monkeypatch.setattr(agent_mod, "DATA_DIR", data)
    run = tmp_path / "run"
    run.mkdir()
    assert mod.main([str(run), "--also", "ppo", "--preset", "duel", "--vs", "rules", "--boards", "2",
                     "--workers", "1", "--ship", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["best"] == str(shipped) and out["shipped"] == str(shipped)
    assert shipped.read_bytes() == (REPO / "agents" / "data" / "ppo_duel.pt").read_bytes()
    assert (run / "policy_selected.pt").read_bytes() == shipped.read_bytes()
