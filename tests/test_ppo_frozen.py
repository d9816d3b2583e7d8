"""What the PPO update trains: ``ppo.frozen`` (parameters kept fixed) and ``ppo.actor_inputs``
(only some observation pieces' weights of the actor's first layer train)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.config import apply_overrides, load_config  # noqa: E402
from agents.ppo.network import trainable_parameters  # noqa: E402
from blot_env.errors import ConfigError  # noqa: E402
from blot_env.observation import ObservationEncoder  # noqa: E402
from blot_env.rules_config import make_rules  # noqa: E402

TINY = Path(__file__).resolve().parents[1] / "configs" / "ppo_tiny.yaml"


def _weights(trainer) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in trainer.policy.named_parameters()}


def test_frozen_parameters_keep_their_values_and_the_rest_trains(tmp_path):
    cfg = apply_overrides(load_config(TINY), ["total_steps=100000", "ppo.frozen=[actor_trunk, policy_head.bias]"])
    trainer = build_trainer(cfg, tmp_path)
    before = _weights(trainer)
    trainer.train(max_updates=2)
    after = _weights(trainer)
    fixed = {"actor_trunk.0.weight", "actor_trunk.0.bias", "policy_head.bias"}
    for name in before:
        assert torch.equal(before[name], after[name]) == (name in fixed), name
    assert {id(p) for g in trainer.optimizer.param_groups for p in g["params"]} == {
        id(p) for n, p in trainer.policy.named_parameters() if n not in fixed}


@pytest.mark.parametrize("layer", ["sparse", "dense"])
def test_actor_inputs_train_only_those_rows_of_the_first_layer(tmp_path, layer):
    """On observation_voids with everything else of the actor frozen, the 16 voids inputs' weights
    move (the deals show voids) and every other input's weight stays as it was."""
    cfg = apply_overrides(load_config(TINY), [
        "total_steps=100000", "obs_kind=observation_voids", f"network.input_layer={layer}",
        "ppo.actor_inputs=[voids]", "ppo.frozen=[actor_trunk.0.bias, policy_head]"])
    trainer = build_trainer(cfg, tmp_path)
    piece = next(p for p in trainer.encoder.pieces if p.name == "voids")
    rows = torch.zeros(trainer.encoder.size, dtype=torch.bool)
    rows[piece.offset:piece.offset + piece.size] = True
    w0 = trainer.policy.actor_trunk[0].weight.detach().clone()
    critic0 = trainer.policy.critic_trunk[0].weight.detach().clone()
    trainer.train(max_updates=3)
    w1 = trainer.policy.actor_trunk[0].weight.detach()
    if layer == "dense":  # nn.Linear keeps [H, D]
        w0, w1 = w0.t(), w1.t()
    changed = (w0 != w1).any(dim=1)
    assert changed[rows].any(), "no voids weight moved"
    assert not changed[~rows].any(), f"inputs outside voids moved: {torch.nonzero(changed & ~rows).flatten()[:5]}"
    assert not torch.equal(critic0, trainer.policy.critic_trunk[0].weight.detach())


def test_the_default_trains_every_parameter(tmp_path):
    trainer = build_trainer(load_config(TINY), tmp_path)
    assert [p for g in trainer.optimizer.param_groups for p in g["params"]] == list(trainer.policy.parameters())
    assert trainer._grad_masks == []


@pytest.mark.parametrize("frozen, inputs, needle", [
    (["actor"], [], r"ppo.frozen: 'actor' names no parameter .*; its parameters: actor_trunk.0.weight"),
    (["policy_head.w"], [], r"'policy_head.w' names no parameter"),
    ([], ["voidz"], r"ppo.actor_inputs: unknown observation piece\(s\) \['voidz'\]; this observation's pieces: hand"),
    (["actor_trunk.0"], ["hand"], r"ppo.actor_inputs trains part of actor_trunk.0.weight, which ppo.frozen keeps"),
    (["actor_trunk", "critic_trunk", "policy_head", "value_head"], [], r"keeps every parameter fixed"),
])
def test_bad_selections_name_the_problem(frozen, inputs, needle):
    cfg = apply_overrides(load_config(TINY), {"ppo.frozen": frozen, "ppo.actor_inputs": inputs})
    from agents.ppo.network import build_policy
    from blot_env.actions import layout_for

    enc = ObservationEncoder(make_rules(cfg.preset), cfg.obs_kind)
    policy = build_policy(cfg, enc, layout_for(enc.cfg))
    with pytest.raises(ConfigError, match=needle):
        trainable_parameters(policy, cfg.ppo.frozen, cfg.ppo.actor_inputs, enc.pieces)


@pytest.mark.parametrize("override", ["ppo.frozen=[a, a]", "ppo.actor_inputs=['']", "ppo.frozen=[1]"])
def test_config_refuses_repeated_or_empty_names(override):
    with pytest.raises(ConfigError, match=r"ppo.(frozen|actor_inputs) must be a list of distinct non-empty names"):
        apply_overrides(load_config(TINY), [override])


@pytest.mark.parametrize("selection, other", [
    (["ppo.frozen=[value_head, policy_head.bias]"], {"ppo.frozen": []}),
    (["obs_kind=observation_voids", "ppo.actor_inputs=[voids, hand]"], {"ppo.actor_inputs": ["voids"]}),
])
def test_resume_keeps_the_selection_exactly_and_refuses_another(tmp_path, selection, other):
    cfg = apply_overrides(load_config(TINY), ["total_steps=100000", *selection])
    straight = build_trainer(cfg, tmp_path / "a")
    straight.train(max_updates=3)
    build_trainer(cfg, tmp_path / "b").train(max_updates=1)
    key = next(iter(other))
    reordered = apply_overrides(cfg, {key: list(reversed(getattr(cfg.ppo, key.split(".")[1])))})
    resumed = build_trainer(reordered, tmp_path / "b", resume=True)  # the same names in another order
    resumed.train(max_updates=2)
    for (n, a), b in zip(straight.policy.named_parameters(), resumed.policy.parameters()):
        assert torch.equal(a, b), n
    with pytest.raises(ConfigError, match=rf"{key} is \[.*\] in the checkpoint and \[.*\] now; a resumed run "
                                          r"trains what it began training"):
        build_trainer(apply_overrides(cfg, other), tmp_path / "b", resume=True)


def test_the_critic_only_warm_up_after_cloning_leaves_the_masked_weight_alone(tmp_path):
    """After a cloning warm start the first updates train the critic alone, so the actor's weight
    gets no gradient there; the mask step must pass over it, and the cloned actor stay as cloned."""
    cfg = apply_overrides(load_config(TINY), [
        "total_steps=100000", "pretrain.agent=rules", "pretrain.deals=12", "pretrain.chunk_deals=6",
        "pretrain.batch_size=64", "pretrain.critic_warmup_updates=1", "ppo.actor_inputs=[hand]"])
    trainer = build_trainer(cfg, tmp_path)
    trainer.pretrain()
    cloned = trainer.policy.actor_trunk[0].weight.detach().clone()
    trainer.train(max_updates=1)
    assert torch.equal(cloned, trainer.policy.actor_trunk[0].weight.detach())
