"""agents/ppo/logit_shift.py and scripts/shift_logits.py: reopen action blocks a policy stopped trying."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from conftest import load_script, random_play_positions  # noqa: E402

from agents.ppo.agent import load_policy, read_policy_file  # noqa: E402
from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.config import load_config  # noqa: E402
from agents.ppo.logit_shift import block_ids, probe_blocks, shift_logits, shift_logits_file  # noqa: E402
from blot_env.actions import layout_for  # noqa: E402
from blot_env.errors import ConfigError  # noqa: E402
from blot_env.rules_config import make_rules  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "agents" / "data" / "ppo_bazar.pt"


def _positions(steps: int = 16, envs: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """uint8 observations and bool legal masks of random play on bazar, auction and cards."""
    obs, masks, _ = random_play_positions(steps, envs, engine_seed=9, choice_seed=2)
    return torch.from_numpy(obs), torch.from_numpy(masks)


def test_block_ids_are_the_layouts_and_bad_names_are_refused():
    lay = layout_for(make_rules("bazar"))
    assert block_ids("bazar", ["RECONTRA", "CONTRA"]) == [lay.index["contra"], lay.index["recontra"]]
    assert len(block_ids("bazar", ["BID"])) == lay.blocks["BID"].size
    with pytest.raises(ConfigError, match=r"no action block 'contra' in bazar; it has PASS, CONTRA"):
        block_ids("bazar", ["contra"])
    with pytest.raises(ConfigError, match="no action block 'CONTRA' in duel"):
        block_ids("duel", ["CONTRA"])
    with pytest.raises(ConfigError, match="at least one action block"):
        block_ids("bazar", [])


def test_shift_moves_only_the_named_logits_and_keeps_the_critic(tmp_path):
    out = tmp_path / "shifted.pt"
    shift_logits_file(SHIPPED, out, ["CONTRA", "RECONTRA"], 7.5)
    src, *_ = load_policy(SHIPPED)
    new, _, cfg, _, has_critic = load_policy(out)
    assert has_critic and cfg.preset == "bazar"
    ids = block_ids("bazar", ["CONTRA", "RECONTRA"])
    rest = [a for a in range(src.policy_head.bias.numel()) if a not in ids]
    obs, mask = _positions()
    with torch.no_grad():
        la, lb = src.logits(obs), new.logits(obs)
        assert torch.allclose(lb[:, ids] - la[:, ids], torch.full_like(la[:, ids], 7.5), atol=1e-4)
        assert torch.equal(la[:, rest], lb[:, rest])
        # the grouped, masked policy the trainer samples from: where contra is legal, its odds
        # against pass (outside the blocks) grow by exp(7.5)
        rows = mask[:, ids[0]].nonzero().squeeze(-1)
        assert rows.numel() >= 5
        m, o = mask[rows], obs[rows]
        odds = []
        for net in (src, new):
            lp_c, *_ = net.policy_terms(o, m, torch.full((len(rows),), ids[0]), with_value=False)
            lp_p, *_ = net.policy_terms(o, m, torch.zeros(len(rows), dtype=torch.long), with_value=False)
            odds.append(lp_c - lp_p)
        assert torch.allclose(odds[1] - odds[0], torch.full_like(odds[0], 7.5), atol=1e-3)
        sa, sb = src.state_dict(), new.state_dict()
        assert all(torch.equal(sa[k], sb[k]) for k in sa if k != "policy_head.bias")
    meta = read_policy_file(out)["meta"]["logit_shift"]
    assert meta == {"blocks": ["CONTRA", "RECONTRA"], "shift": 7.5, "file": str(SHIPPED)}
    again = shift_logits(read_policy_file(out), ["BID"], -1.0)
    assert again["meta"]["logit_shift"]["earlier"]["shift"] == 7.5
    with pytest.raises(ConfigError, match="finite"):
        shift_logits(read_policy_file(SHIPPED), ["CONTRA"], float("nan"))
    headless = read_policy_file(SHIPPED)
    headless["policy"] = {k: v for k, v in headless["policy"].items() if k != "policy_head.bias"}
    with pytest.raises(ConfigError, match=r"policy_head\.bias"):
        shift_logits(headless, ["CONTRA"], 1.0)


def test_probe_sees_the_reopened_call_and_a_trainer_starts_from_it(tmp_path):
    before = probe_blocks(SHIPPED, ["CONTRA"], deals=12, seed=4)
    assert before["decisions"] > 10 and before["greedy_share"] == 0.0
    out = tmp_path / "contra.pt"
    shift_logits_file(SHIPPED, out, ["CONTRA"], 40.0)
    after = probe_blocks(out, ["CONTRA"], deals=12, seed=4)
    assert after["mean"] > 1000 * before["mean"] and after["greedy_share"] > 0
    with pytest.raises(ValueError, match="deals"):
        probe_blocks(SHIPPED, ["CONTRA"], deals=0)
    # the shifted file is a start for init_policy: the trainer's first logits are the file's
    cfg = load_config(REPO / "configs" / "ppo_bazar_stage10.yaml",
                      [f"init_policy={out}", "total_steps=100", "eval.every=0", "pool.baselines=[rules]",
                       "pool.baseline_probs=[1.0]", "rollout.num_envs=8", "rollout.deals_per_rollout=8",
                       "rollout.overlap=false", "tensorboard=false"])
    trainer = build_trainer(cfg, tmp_path / "run")
    shifted, *_ = load_policy(out)
    obs, _ = _positions(steps=2, envs=4)
    with torch.no_grad():
        assert torch.equal(trainer.policy.logits(obs), shifted.logits(obs))


def test_cli_writes_probes_and_refuses_bad_input(tmp_path, capsys):
    script = load_script("shift_logits")
    out = tmp_path / "s.pt"
    assert script.main([str(SHIPPED), "--block", "CONTRA", "--shift", "30", "--out", str(out), "--probe", "4"]) == 0
    text = capsys.readouterr().out
    assert f"CONTRA logits +30 written to {out}" in text and text.count("positions with the blocks legal") == 2
    assert read_policy_file(out)["meta"]["logit_shift"]["shift"] == 30.0
    for argv, msg in ((["--block", "FOO", "--probe", "1"], "no action block 'FOO'"),
                      (["--block", "CONTRA"], "nothing to do"),
                      (["--block", "CONTRA", "--out", str(tmp_path / "x.pt")], "non-zero --shift"),
                      (["--block", "CONTRA", "--shift", "2", "--probe", "1"], "--shift needs --out"),
                      (["--block", "CONTRA", "--shift", "nan", "--out", str(tmp_path / "x.pt")], "finite"),
                      (["--block", "CONTRA", "--shift", "2", "--out", str(tmp_path)], "it is a folder"),
                      (["--block", "CONTRA", "--shift", "2", "--out", str(SHIPPED)], "is the source file"),
                      (["--block", "CONTRA", "--probe", "-1"], "--probe must be >= 0")):
        with pytest.raises(SystemExit) as e:
            script.main([str(SHIPPED), *argv])
        assert e.value.code == 2 and msg in capsys.readouterr().err
    assert not (tmp_path / "x.pt").exists()
    with pytest.raises(SystemExit) as e:
        script.main([str(tmp_path / "missing.pt"), "--block", "CONTRA", "--probe", "1"])
    assert e.value.code == 2 and "no such file" in capsys.readouterr().err
    # a trainer checkpoint is a source too, and two blocks are shifted together
    cfg = load_config(REPO / "configs" / "ppo_tiny.yaml", ["total_steps=64"])
    build_trainer(cfg, tmp_path / "tiny").train()
    two = tmp_path / "two.pt"
    assert script.main([str(tmp_path / "tiny" / "checkpoint.pt"), "--block", "CONTRA", "--block", "RECONTRA",
                        "--shift", "3", "--out", str(two)]) == 0
    capsys.readouterr()
    before = read_policy_file(tmp_path / "tiny" / "checkpoint.pt")["policy"]["policy_head.bias"]
    after = read_policy_file(two)["policy"]["policy_head.bias"]
    ids = block_ids(cfg.preset, ["CONTRA", "RECONTRA"])
    assert len(ids) == 2 and torch.allclose(after[ids] - before[ids], torch.full((2,), 3.0))
