"""Mixed-partnership deals in training (``pool.partner_prob``) and fine-tuning from a policy file
(``init_policy``): agents/ppo/rollout.py, agents/ppo/trainer.py."""

from __future__ import annotations

import typing
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.config import apply_overrides, load_config  # noqa: E402
from agents.ppo.rollout import LEARNER, OpponentPool, RolloutCollector  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from blot_env.errors import ConfigError  # noqa: E402
from blot_env.observation import ObservationEncoder  # noqa: E402
from blot_env.rules_config import make_rules  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "configs" / "ppo_tiny.yaml"
REPO_BAZAR = REPO / "configs" / "ppo_bazar.yaml"


class _Recording:
    """A baseline that plays like ``rules`` and records which seats it acted for."""

    seats: typing.ClassVar[list[int]] = []

    def __init__(self, preset, seed):
        self.inner = make_agent("rules", preset, seed)

    def reset(self) -> None:
        self.inner.reset()

    def act(self, view, rng):
        _Recording.seats.append(view.seat)
        return self.inner.act(view, rng)


def _factory(name, preset, seed):
    return _Recording(preset, seed) if name == "rec" else make_agent(name, preset, seed)


def _collector(overrides: list[str]):
    cfg = load_config(TINY, ["pool.baselines=[rec]", "pool.snapshot_every=0", "rollout.skip_forced=false",
                             *overrides])
    rules = make_rules(cfg.preset)
    enc = ObservationEncoder(rules, cfg.obs_kind)
    trainer = build_trainer(apply_overrides(cfg, {"pool.baselines": ["rules"]}), None)  # a network of this config
    pool = OpponentPool(cfg.pool, cfg.preset, cfg.seed, _factory)
    col = RolloutCollector(rules, enc, cfg.rollout, pool, cfg.pool)
    return col, trainer.policy


def test_partner_prob_one_gives_the_learner_one_seat_of_every_deal():
    col, policy = _collector(["pool.partner_prob=1.0", "pool.opponent_prob=0"])
    _Recording.seats = []
    rng = np.random.default_rng(3)
    ctrls = [col._controllers(0, rng) for _ in range(200)]
    for c in ctrls:
        assert (c == LEARNER).sum() == 1 and col.mixed[0]
    learner_seats = [int(np.flatnonzero(c == LEARNER)[0]) for c in ctrls]
    assert set(learner_seats) == {0, 1, 2, 3}  # any seat, partner played by the pool member
    ro = col.collect(policy, 16, np.random.default_rng(0), torch.Generator().manual_seed(0))
    assert ro.stats["mixed_rec_deals"] == 16 and "vs_rec_deals" not in ro.stats
    # every deal ends with exactly one learner transition marked done (one learner seat per deal)
    assert ro.dones.sum() == 16
    # the baseline acted for three seats of every deal: far more than the learner
    assert len(_Recording.seats) > 2 * len(ro)


def test_partner_prob_zero_keeps_whole_sides():
    col, policy = _collector(["pool.partner_prob=0", "pool.opponent_prob=1.0"])
    rng = np.random.default_rng(4)
    for _ in range(100):
        c = col._controllers(0, rng)
        assert (c == LEARNER).sum() == 2 and c[0] == c[2] and c[1] == c[3] and not col.mixed[0]
    ro = col.collect(policy, 8, np.random.default_rng(0), torch.Generator().manual_seed(0))
    assert ro.stats["vs_rec_deals"] == 8 and ro.dones.sum() == 16  # two learner seats per deal


@pytest.mark.parametrize("overlap", ["false", "true"])
def test_partner_prob_needs_four_players(overlap):
    cfg = load_config(TINY, ["preset=duel", "pool.partner_prob=0.5", f"rollout.overlap={overlap}"])
    with pytest.raises(ConfigError, match="partner_prob needs a 4-player preset"):
        build_trainer(cfg, None)  # refused when the trainer is built, also when a worker would collect


def test_exact_resume_with_mixed_deals_in_the_worker(tmp_path):
    cfg = load_config(TINY, ["total_steps=100000", "pool.partner_prob=0.5", "pool.baselines=[random, rules]",
                             "rollout.overlap=true"])
    straight = build_trainer(cfg, tmp_path / "a")
    rows = straight.train(max_updates=4)
    assert np.nansum([r.get(f"mixed_{m}_deals", np.nan) for r in rows for m in ("random", "rules", "snapshots")]) > 0
    build_trainer(cfg, tmp_path / "b").train(max_updates=2)
    resumed = build_trainer(cfg, tmp_path / "b", resume=True)
    resumed.train(max_updates=2)
    assert resumed.global_step == straight.global_step
    for a, b in zip(straight.policy.parameters(), resumed.policy.parameters()):
        assert torch.equal(a, b)


def test_trainer_logs_mixed_deals(tmp_path):
    cfg = load_config(TINY, ["total_steps=200", "pool.partner_prob=0.5", "pool.baselines=[rules]"])
    rows = build_trainer(cfg, tmp_path).train(max_updates=2)
    assert np.nansum([r.get("mixed_rules_deals", np.nan) for r in rows]) > 0
    header = (tmp_path / "metrics.csv").read_text().splitlines()[0].split(",")
    assert "mixed_rules_tp" in header and "mixed_snapshots_tp" in header


def test_init_policy_starts_from_the_files_weights(tmp_path):
    first = load_config(TINY, ["total_steps=200"])
    build_trainer(first, tmp_path / "a").train()
    src = torch.load(tmp_path / "a" / "policy.pt", weights_only=True)["policy"]
    cfg = load_config(TINY, ["total_steps=200", "seed=99", f"init_policy={tmp_path / 'a' / 'policy.pt'}"])
    tuned = build_trainer(cfg, tmp_path / "b")
    for k, v in tuned.policy.state_dict().items():
        assert torch.equal(v, src[k]), k
    fresh = build_trainer(load_config(TINY, ["total_steps=200", "seed=99"]), None)
    assert not all(torch.equal(v, src[k]) for k, v in fresh.policy.state_dict().items())
    tuned.train(max_updates=1)
    resumed = build_trainer(cfg, tmp_path / "b", resume=True)  # resume reads the checkpoint, not init_policy
    for k, v in resumed.policy.state_dict().items():
        assert torch.equal(v, tuned.policy.state_dict()[k]), k


def test_init_policy_shipped_name_and_errors(tmp_path):
    cfg = load_config(REPO_BAZAR, ["init_policy=ppo", "pretrain.agent=", "rollout.overlap=false", "eval.every=0",
                                   "pool.baselines=[rules]", "pool.baseline_probs=[]"])
    trainer = build_trainer(cfg, None)
    shipped = torch.load(REPO / "agents" / "data" / "ppo_bazar.pt", weights_only=True)["policy"]
    assert all(torch.equal(v, shipped[k]) for k, v in trainer.policy.state_dict().items())
    with pytest.raises(ConfigError, match=r"network differs.*network\.hidden"):
        build_trainer(apply_overrides(cfg, {"network.hidden": [64]}), None)
    with pytest.raises(ConfigError, match="trained with preset='bazar'"):
        bad = load_config(TINY, [f"init_policy={REPO / 'agents' / 'data' / 'ppo_bazar.pt'}", "preset=belote"])
        build_trainer(bad, None)
    with pytest.raises(FileNotFoundError, match="no PPO policy file"):
        build_trainer(load_config(TINY, [f"init_policy={tmp_path / 'nope.pt'}"]), None)
    with pytest.raises(ConfigError, match=r"init_policy .* and pretrain\.agent"):
        load_config(TINY, ["init_policy=ppo", "pretrain.agent=rules"])


def test_init_policy_from_an_actor_only_file_or_another_reward_scale_warns(tmp_path):
    build_trainer(load_config(TINY, ["total_steps=200"]), tmp_path / "a").train()
    data = torch.load(tmp_path / "a" / "policy.pt", weights_only=True)
    data["policy"] = {k: v for k, v in data["policy"].items() if k.startswith(("actor_trunk.", "policy_head."))}
    torch.save(data, tmp_path / "actor.pt")
    with pytest.warns(UserWarning, match="no critic weights"):
        t = build_trainer(load_config(TINY, [f"init_policy={tmp_path / 'actor.pt'}"]), None)
    assert all(torch.equal(v, data["policy"][k]) for k, v in t.policy.state_dict().items() if k in data["policy"])
    with pytest.warns(UserWarning, match=r"rollout\.reward_scale=0\.02, this run has 0\.5"):
        build_trainer(load_config(TINY, [f"init_policy={tmp_path / 'a' / 'checkpoint.pt'}",
                                         "rollout.reward_scale=0.5"]), None)
    del data["policy"]["policy_head.weight"]
    torch.save(data, tmp_path / "broken.pt")
    with pytest.raises(ConfigError, match=r"missing or unexpected policy_head\.weight"):
        build_trainer(load_config(TINY, [f"init_policy={tmp_path / 'broken.pt'}"]), None)
