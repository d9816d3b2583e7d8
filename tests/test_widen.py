"""agents/ppo/widen.py and scripts/widen_policy.py: a larger actor that plays exactly as the source."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from conftest import load_script, random_play_positions  # noqa: E402

from agents.ppo.agent import load_policy, read_policy_file  # noqa: E402
from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.config import load_config  # noqa: E402
from agents.ppo.widen import widen_policy, widen_policy_file  # noqa: E402
from blot_env.errors import ConfigError  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "agents" / "data" / "ppo_bazar.pt"


def _positions(steps: int = 24, envs: int = 32):
    """uint8 observations and privileged features of random play on bazar (auction and cards)."""
    obs, _, priv = random_play_positions(steps, envs, engine_seed=5, choice_seed=1)
    return torch.from_numpy(obs), torch.from_numpy(priv)


@pytest.mark.parametrize("hidden", [[512, 512], [300, 256, 280]])
def test_widened_shipped_policy_gives_the_same_logits_and_values(tmp_path, hidden):
    out = tmp_path / "wide.pt"
    widen_policy_file(SHIPPED, out, hidden, seed=3)
    src, *_ = load_policy(SHIPPED)
    big, _, cfg, _, has_critic = load_policy(out)
    assert list(cfg.network.hidden) == hidden and list(cfg.network.critic_hidden) == [128, 128] and has_critic
    assert big.actor_trunk[2].weight.shape[1] == hidden[0]
    obs, priv = _positions()
    with torch.no_grad():
        for x in (obs, obs.float() * src.obs_quantum):  # the sparse path and the dense one
            la, va = src(x, priv)
            lb, vb = big(x, priv)
            # the same sums in another order (wider matrices, other kernel blocking): float32
            # rounding of logits up to ~30 in size, 2e-5 on some CPUs; a widening error is ~0.1 or more
            assert torch.allclose(la, lb, atol=1e-4, rtol=0), (la - lb).abs().max()
            assert torch.equal(va, vb)
    # the new units are live: they read the input, and only their outgoing weights are zero
    w0 = big.actor_trunk[0].weight  # sparse layer: [in, out]
    assert w0[:, 256:].abs().sum() > 0
    assert torch.count_nonzero(big.policy_head.weight[:, 256:]) == 0
    meta = read_policy_file(out)["meta"]
    assert meta["widened_from"] == {"hidden": [256, 256], "to": hidden, "seed": 3, "file": str(SHIPPED)}


def test_refuses_shrinking_a_tanh_layer_added_and_a_shared_trunk():
    data = read_policy_file(SHIPPED)
    with pytest.raises(ConfigError, match="at least as wide"):
        widen_policy(data, [512, 128])
    with pytest.raises(ConfigError, match="at least as wide"):
        widen_policy(data, [512])
    with pytest.raises(ConfigError, match="at least 256 wide"):
        widen_policy(data, [256, 256, 64])
    tanh = {**data, "config": {**data["config"], "network": {**data["config"]["network"], "activation": "tanh"}}}
    with pytest.raises(ConfigError, match="identity"):
        widen_policy(tanh, [256, 256, 256])
    assert widen_policy(tanh, [300, 300])["config"]["network"]["hidden"] == [300, 300]
    lost = {**data, "policy": {k: v for k, v in data["policy"].items() if k != "actor_trunk.2.weight"}}
    with pytest.raises(ConfigError, match=r"missing \['actor_trunk\.2\.weight'\]"):
        widen_policy(lost, [512, 512])
    deeper = {**data, "config": {**data["config"], "network": {**data["config"]["network"], "hidden": [256]}}}
    with pytest.raises(ConfigError, match=r"unexpected \['actor_trunk\.2\.weight'"):
        widen_policy(deeper, [512])
    shared = {**data, "config": {**data["config"], "network": {**data["config"]["network"], "shared_trunk": True}}}
    with pytest.raises(ConfigError, match="shared_trunk"):
        widen_policy(shared, [512, 512])


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_trainer_continues_from_a_widened_checkpoint(tmp_path, activation):
    cfg = load_config(REPO / "configs" / "ppo_tiny.yaml", ["total_steps=200", f"network.activation={activation}"])
    build_trainer(cfg, tmp_path / "small").train()
    hidden = [48, 40] if activation == "relu" else [48]  # tanh: wider only, no added layer
    widen_policy_file(tmp_path / "small" / "checkpoint.pt", tmp_path / "wide.pt", hidden)
    wide_cfg = load_config(REPO / "configs" / "ppo_tiny.yaml",
                           ["total_steps=200", f"init_policy={tmp_path / 'wide.pt'}", f"network.hidden={hidden}",
                            "network.critic_hidden=[32]", f"network.activation={activation}"])
    trainer = build_trainer(wide_cfg, tmp_path / "wide_run")
    start, *_ = load_policy(tmp_path / "small" / "policy.pt")
    obs, _ = _positions(steps=4, envs=8)
    with torch.no_grad():
        assert torch.allclose(trainer.policy.logits(obs), start.logits(obs), atol=1e-5, rtol=0)
    trainer.train()
    grown, *_ = load_policy(tmp_path / "wide_run" / "policy.pt")
    assert not torch.equal(grown.policy_head.weight[:, 32:], torch.zeros_like(grown.policy_head.weight[:, 32:]))
    # a run whose widths differ from the file's is refused by name
    bad = load_config(REPO / "configs" / "ppo_tiny.yaml",
                      [f"init_policy={tmp_path / 'wide.pt'}", f"network.activation={activation}"])
    with pytest.raises(ConfigError, match=r"network\.hidden"):
        build_trainer(bad, tmp_path / "bad_run")


def test_cli_writes_the_file_and_reports_bad_widths(tmp_path, capsys):
    script = load_script("widen_policy")
    assert script.main([str(SHIPPED), "--hidden", "320", "256", "--out", str(tmp_path / "w.pt")]) == 0
    assert "[256, 256] -> [320, 256]" in capsys.readouterr().out
    for argv, msg in ((["--hidden", "128", "256"], "at least as wide"), (["--hidden", "0", "256"], "positive")):
        with pytest.raises(SystemExit) as e:
            script.main([str(SHIPPED), *argv, "--out", str(tmp_path / "x.pt")])
        assert e.value.code == 2 and msg in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main([str(tmp_path / "missing.pt"), "--hidden", "512", "--out", str(tmp_path / "x.pt")])
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "taken").mkdir()
    with pytest.raises(SystemExit):
        script.main([str(SHIPPED), "--hidden", "512", "512", "--out", str(tmp_path / "taken")])
    assert "cannot write --out" in capsys.readouterr().err
    assert not (tmp_path / "taken.tmp").exists()
