"""scripts/average_policies.py: the element-wise mean of policy weights, one loadable policy file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from conftest import load_script, play_legal_deal  # noqa: E402

from agents.ppo.agent import load_ppo_agent  # noqa: E402
from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.config import load_config  # noqa: E402
from blot_env.engine import is_terminal  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _script():
    return load_script("average_policies")


def test_mean_of_kept_policies_is_a_policy_that_plays(tmp_path):
    cfg = load_config(REPO / "configs" / "ppo_tiny.yaml", ["total_steps=400", "keep_checkpoints=true"])
    build_trainer(cfg, tmp_path / "run").train()
    kept = sorted((tmp_path / "run").glob("policy_0*.pt"))[-2:]
    assert len(kept) == 2
    out = tmp_path / "avg.pt"
    assert _script().main([*map(str, kept), "--out", str(out)]) == 0
    a, b, m = (torch.load(p, weights_only=True) for p in (*kept, out))
    assert m["meta"]["averaged_from"] == [str(p) for p in kept]
    moved = 0
    for k, v in m["policy"].items():
        assert torch.allclose(v, (a["policy"][k] + b["policy"][k]) / 2, atol=1e-7), k
        moved += not torch.equal(a["policy"][k], b["policy"][k])
    assert moved > 0  # the two kept policies differ, so the mean is a third network
    assert is_terminal(play_legal_deal(load_ppo_agent(out), "bazar"))
    assert _script().main(["--run", str(tmp_path / "run"), "--last", "3", "--out", str(tmp_path / "avg3.pt")]) == 0
    assert len(torch.load(tmp_path / "avg3.pt", weights_only=True)["meta"]["averaged_from"]) == 3
    # a file written before a network key existed (here network.oracle) averages with a newer one
    old = torch.load(kept[0], weights_only=True)
    del old["config"]["network"]["oracle"]
    torch.save(old, tmp_path / "old.pt")
    assert _script().main([str(tmp_path / "old.pt"), str(kept[1]), "--out", str(tmp_path / "mixed.pt")]) == 0


def test_refuses_policies_of_different_presets_and_too_few_files(tmp_path, capsys):
    files = [REPO / "agents" / "data" / "ppo_bazar.pt", REPO / "agents" / "data" / "ppo_belote.pt"]
    with pytest.raises(SystemExit):
        _script().main([*map(str, files), "--out", str(tmp_path / "x.pt")])
    assert "preset, obs_kind or network differ" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _script().main([str(files[0]), "--out", str(tmp_path / "x.pt")])
    assert "at least two policy files" in capsys.readouterr().err
    shutil.copyfile(files[0], tmp_path / "same.pt")
    assert _script().main([str(files[0]), str(tmp_path / "same.pt"), "--out", str(tmp_path / "y.pt")]) == 0
    same = torch.load(tmp_path / "y.pt", weights_only=True)["policy"]
    ref = torch.load(files[0], weights_only=True)["policy"]
    assert all(torch.equal(same[k], v) for k, v in ref.items())
