"""``network.oracle``: a perfect-information actor (it reads every seat's hidden cards), for use
as a pool member of another run only. It starts from a seat-view policy with zero weights on
the hidden cards, it never acts from a seat's view, and a run with it in its pool trains."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from agents.ppo.agent import load_ppo_agent  # noqa: E402
from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.config import apply_overrides, load_config  # noqa: E402
from agents.ppo.network import build_policy, pad_oracle_inputs  # noqa: E402
from blot_env.actions import layout_for  # noqa: E402
from blot_env.batched import BatchedEngine  # noqa: E402
from blot_env.errors import ConfigError  # noqa: E402
from blot_env.observation import ObservationEncoder  # noqa: E402
from blot_env.rules_config import make_rules  # noqa: E402

TINY = Path(__file__).resolve().parents[1] / "configs" / "ppo_tiny.yaml"
ORACLE = ["network.oracle=true", "network.critic=privileged", "eval.every=0"]


def _positions(cfg, n: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    """Observations ``uint8[n, D]`` and the acting seats' hidden features ``uint8[n, P]`` of
    positions from random play (auction and card play)."""
    eng = BatchedEngine(cfg.preset, num_envs=n, obs_kind=cfg.obs_kind, seed=3, obs_dtype="uint8")
    for _ in range(25):  # random legal actions into the deals (finished rows deal again)
        eng.step(eng.random_actions())
    return torch.from_numpy(eng.buffers().obs.copy()), torch.from_numpy(eng.privileged(np.arange(n)).copy())


def _policy(cfg):
    rules = make_rules(cfg.preset)
    return build_policy(cfg, ObservationEncoder(rules, cfg.obs_kind), layout_for(rules)).eval()


@pytest.mark.parametrize("layer", ["sparse", "dense"])
def test_an_oracle_reads_the_hidden_cards_and_starts_as_its_seat_view_policy(layer):
    base = apply_overrides(load_config(TINY), [f"network.input_layer={layer}", "network.critic=privileged"])
    seat_view = _policy(base)
    oracle = _policy(apply_overrides(base, ORACLE))
    obs, priv = _positions(base)
    shuffled = priv[torch.randperm(len(priv), generator=torch.Generator().manual_seed(0))]
    assert not torch.equal(priv, shuffled)
    with torch.no_grad():
        # a freshly initialised oracle's logits move with the hidden cards
        assert not torch.allclose(oracle.logits(obs, priv), oracle.logits(obs, shuffled))
        with pytest.raises(ValueError, match=r"an oracle actor .* needs the privileged features"):
            oracle.logits(obs)
        # started from the seat-view policy, it acts exactly as that policy whatever the hidden cards
        oracle.load_state_dict(pad_oracle_inputs(seat_view.state_dict(), oracle))
        want = seat_view.logits(obs)
        assert torch.allclose(oracle.logits(obs, priv), want, atol=1e-5)
        assert torch.allclose(oracle.logits(obs, shuffled), want, atol=1e-5)
    with pytest.raises(ValueError, match="not an oracle"):
        pad_oracle_inputs(seat_view.state_dict(), seat_view)


def test_an_oracle_trains_from_a_seat_view_policy_and_plays_in_another_runs_pool(tmp_path):
    seat_run = build_trainer(apply_overrides(load_config(TINY), ["network.critic=privileged", "total_steps=100000"]),
                             tmp_path / "seat")
    seat_run.train(max_updates=1)
    seat_run.export_policy(tmp_path / "seat.pt")
    oracle_cfg = apply_overrides(load_config(TINY), [*ORACLE, "total_steps=100000",
                                                     f"init_policy={tmp_path / 'seat.pt'}"])
    oracle_run = build_trainer(oracle_cfg, tmp_path / "oracle")
    obs, priv = _positions(oracle_cfg)
    with torch.no_grad():  # the start plays as the seat-view policy
        assert torch.allclose(oracle_run.policy.logits(obs, priv), seat_run.policy.logits(obs), atol=1e-5)
    key = "actor_trunk.0.weight"
    hidden_rows = oracle_run.policy.state_dict()[key][oracle_run.policy.obs_dim:].clone()
    assert torch.count_nonzero(hidden_rows) == 0
    oracle_run.train(max_updates=3)
    moved = oracle_run.policy.state_dict()[key][oracle_run.policy.obs_dim:]
    assert torch.count_nonzero(moved) > 0, "the oracle's hidden-card weights did not train"
    oracle_run.export_policy(tmp_path / "oracle.pt")

    # by agent name it is refused at load (blot-eval, blot-play, search agents, phase splits) ...
    from agents.registry import make_agent

    path = tmp_path / "oracle.pt"
    for name in (str(path), f"ppo-search-4:{path}", f"rules+{path}"):
        with pytest.raises(ConfigError, match=r"is an oracle policy .* cannot act from a seat's view"):
            make_agent(name, "bazar")
    bad_eval = apply_overrides(load_config(TINY), ["eval.every=1", f"eval.opponents=[{tmp_path / 'oracle.pt'}]"])
    with pytest.raises(ConfigError, match=r"eval.opponents: .* is an oracle policy"):
        build_trainer(bad_eval, tmp_path / "bad")
    # ... and loaded directly it cannot act from a seat's view
    agent = load_ppo_agent(tmp_path / "oracle.pt")
    from blot_env.engine import current_seat, deal_random
    from blot_env.view import seat_view

    state = deal_random(make_rules("bazar"), np.random.default_rng(0))
    with pytest.raises(ConfigError, match=r"oracle policy .* cannot act from a seat's view"):
        agent.act(seat_view(state, current_seat(state)), np.random.default_rng(0))

    # a seat-view run with the oracle as its pool's baseline: every deal is mixed with the oracle
    learner_cfg = apply_overrides(load_config(TINY), [
        "total_steps=100000", f"pool.baselines=[{tmp_path / 'oracle.pt'}]", "pool.partner_prob=1.0",
        "pool.opponent_prob=0.0", "pool.baseline_weight=1.0"])
    learner = build_trainer(learner_cfg, tmp_path / "learner")
    rows = learner.train(max_updates=2)
    name = str(tmp_path / "oracle.pt")
    assert sum(r.get(f"mixed_{name}_deals", 0) for r in rows) == 2 * learner_cfg.rollout.deals_per_rollout


@pytest.mark.parametrize("sets, needle", [
    (["network.oracle=true", "eval.every=5"], r"network.oracle: .* set eval.every=0 \(it is 5\)"),
    (["network.oracle=true", "network.shared_trunk=true"], r"network.oracle needs separate trunks"),
    (["network.oracle=true", "pretrain.agent=rules"], r"network.oracle cannot be cloned"),
])
def test_bad_oracle_settings_name_the_problem(sets, needle):
    with pytest.raises(ConfigError, match=needle):
        apply_overrides(load_config(TINY), sets)


def test_an_oracle_with_its_first_layer_frozen_is_refused(tmp_path):
    cfg = apply_overrides(load_config(TINY), [*ORACLE, "ppo.frozen=[actor_trunk.0]"])
    with pytest.raises(ConfigError, match=r"hidden cards could never train"):
        build_trainer(cfg, tmp_path)


def test_rllib_refuses_an_oracle():
    from agents.integrations.rllib_config import RLlibRunConfig
    from agents.ppo.config import NetworkConfig

    with pytest.raises(ConfigError, match="RLlib's env does not give"):
        RLlibRunConfig(network=NetworkConfig(oracle=True))
