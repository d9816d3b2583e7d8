"""PPO trainer (agents/ppo): masked categorical, GAE, rollouts, configs, smoke training, exact resume, agents."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from conftest import play_legal_deal  # noqa: E402

from agents.ppo.agent import PPOAgent, load_ppo_agent  # noqa: E402
from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.config import (  # noqa: E402
    PPOConfig,
    TrainConfig,
    apply_overrides,
    config_from_dict,
    config_reference_markdown,
    load_config,
)
from agents.ppo.distributions import MaskedCategorical  # noqa: E402
from agents.ppo.rollout import compute_gae  # noqa: E402
from agents.ppo.trainer import PPOTrainer  # noqa: E402
from blot_env.engine import apply_action, current_seat, deal_random, deal_result, is_terminal  # noqa: E402
from blot_env.errors import ConfigError  # noqa: E402
from blot_env.observation import ObservationEncoder  # noqa: E402
from blot_env.rules_config import PRESETS, make_rules  # noqa: E402
from blot_env.view import seat_view  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "configs" / "ppo_tiny.yaml"


# --------------------------------------------------------------------------- masked categorical


def _random_batch(seed: int, B: int = 64, A: int = 40) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(B, A, generator=g) * 5
    mask = torch.rand(B, A, generator=g) < 0.2
    mask[torch.arange(B), torch.randint(0, A, (B,), generator=g)] = True  # at least one legal per row
    logits = torch.where(mask, logits, logits + 50.0)  # illegal actions would win without the mask
    return logits, mask


def test_masked_categorical_never_samples_illegal():
    logits, mask = _random_batch(0)
    dist = MaskedCategorical(logits, mask)
    g = torch.Generator().manual_seed(1)
    for _ in range(200):
        a = dist.sample(g)
        assert bool(mask[torch.arange(len(a)), a].all())
    assert bool(mask[torch.arange(len(logits)), dist.mode()].all())
    assert torch.isfinite(dist.log_prob(dist.sample(g))).all()
    assert float(dist.probs[~mask].abs().max()) == 0.0


def test_masked_categorical_entropy_over_legal_only():
    A = 30
    mask = torch.zeros(3, A, dtype=torch.bool)
    mask[0, :7] = True  # 7 legal, uniform logits
    mask[1, 5] = True  # a single legal action
    mask[2, ::3] = True
    logits = torch.zeros(3, A)
    logits[2] = torch.linspace(-2, 3, A)
    dist = MaskedCategorical(logits, mask)
    ent = dist.entropy()
    assert ent[0].item() == pytest.approx(math.log(7), abs=1e-5)
    assert ent[1].item() == 0.0
    ref = torch.distributions.Categorical(logits=logits[2][mask[2]]).entropy()
    assert ent[2].item() == pytest.approx(ref.item(), abs=1e-5)
    assert torch.isfinite(ent).all()
    # gradients through masked rows stay finite (no 0 * inf)
    lg = logits.clone().requires_grad_(True)
    MaskedCategorical(lg, mask).entropy().sum().backward()
    assert torch.isfinite(lg.grad).all()


def test_masked_categorical_rejects_empty_rows():
    with pytest.raises(ValueError):
        MaskedCategorical(torch.zeros(2, 4), torch.tensor([[True, False, False, False], [False] * 4]))


# --------------------------------------------------------------------------- GAE


def test_gae_hand_computed():
    r = np.array([0.0, 0.0, 1.0], np.float32)
    v = np.array([0.5, 0.2, 0.4], np.float32)
    d = np.array([0.0, 0.0, 1.0], np.float32)
    adv, ret = compute_gae(r, v, d, gamma=0.9, lam=0.8)
    # delta2 = 1 - 0.4 = 0.6;  delta1 = 0.9*0.4 - 0.2 = 0.16;  delta0 = 0.9*0.2 - 0.5 = -0.32
    # A2 = 0.6;  A1 = 0.16 + 0.72*0.6 = 0.592;  A0 = -0.32 + 0.72*0.592 = 0.10624
    np.testing.assert_allclose(adv, [0.10624, 0.592, 0.6], atol=1e-6)
    np.testing.assert_allclose(ret, [0.60624, 0.792, 1.0], atol=1e-6)


def test_gae_interleaved_trajectories_match_separate_ones():
    # two seats' trajectories interleaved in collection order: a0 b0 a1 b1 a2 (b ends at b1)
    ra, va = np.array([0, 0, 2.0], np.float32), np.array([0.1, 0.3, 0.7], np.float32)
    rb, vb = np.array([0, -1.0], np.float32), np.array([0.2, -0.4], np.float32)
    adv_a, _ = compute_gae(ra, va, np.array([0, 0, 1.0], np.float32), 1.0, 0.95)
    adv_b, _ = compute_gae(rb, vb, np.array([0, 1.0], np.float32), 1.0, 0.95)
    rew = np.array([0, 0, 0, -1.0, 2.0], np.float32)
    val = np.array([0.1, 0.2, 0.3, -0.4, 0.7], np.float32)
    done = np.array([0, 0, 0, 1, 1], np.float32)
    nxt = np.array([2, 3, 4, -1, -1])
    adv, ret = compute_gae(rew, val, done, 1.0, 0.95, nxt)
    np.testing.assert_allclose(adv[[0, 2, 4]], adv_a, atol=1e-6)
    np.testing.assert_allclose(adv[[1, 3]], adv_b, atol=1e-6)
    np.testing.assert_allclose(ret, adv + val, atol=1e-6)


# --------------------------------------------------------------------------- the deal vector (blot_env.vector)


def test_reference_vector_rewards_are_deal_score_differences():
    from blot_env.vector import SelfPlayVector

    rules = make_rules("bazar")
    vec = SelfPlayVector(rules, ObservationEncoder(rules, "observation"), 3, engine="reference")
    rng = np.random.default_rng(3)
    out = vec.reset([0, 1, 2], rng)
    finished = 0
    while (out.seat >= 0).any():
        acts = np.array([int(rng.choice(np.flatnonzero(out.mask[e]))) if out.seat[e] >= 0 else 0 for e in range(3)])
        states_before = list(vec.states)
        out = vec.step(acts)
        for e in np.flatnonzero(out.done):
            res = deal_result(vec.states[e])
            diff = res.score[0] - res.score[1]
            np.testing.assert_array_equal(out.rewards[e], [diff, -diff, diff, -diff])
            finished += 1
        for e in np.flatnonzero(~out.done):
            assert not out.rewards[e].any()
        assert all(s is not None for s in states_before)
    assert finished == 3
    assert (out.seat == -1).all()


@pytest.mark.parametrize("preset", ["bazar", "duel"])
def test_batched_vector_matches_a_reference_replay(preset):
    """The trainer's batched deal vector against reference states replayed from the same cards
    and actions: the views baseline agents read, the masks, the rewards (score differences of
    the reference result) and the idle rows after each deal."""
    from blot_env.batched import _layout as L
    from blot_env.engine import new_deal
    from blot_env.vector import SelfPlayVector

    rules = make_rules(preset)
    n = rules.num_players
    vec = SelfPlayVector(rules, "observation", 4)
    rng = np.random.default_rng(5)
    out = vec.reset([0, 1, 2], rng)
    assert not out.done.any() and not out.rewards.any() and out.seat[3] == -1
    refs = {}
    for e in range(3):
        r = vec.eng.S[e]
        stock = [int(c) for c in r[L.STOCK:L.STOCK + int(r[L.NSTOCK])]]
        refs[e] = new_deal(rules, int(r[L.DEALER]), [int(h) for h in r[L.START_HANDS:L.START_HANDS + n]], stock)
    finished = 0
    while (out.seat >= 0).any():
        acts = np.zeros(4, dtype=np.int64)
        for e in np.flatnonzero(out.seat >= 0):
            view = vec.views[e]
            assert view == seat_view(refs[e], current_seat(refs[e]))
            assert set(np.flatnonzero(out.mask[e])) == set(view.legal)
            acts[e] = int(rng.choice(np.flatnonzero(out.mask[e])))
        out = vec.step(acts)
        for e in np.flatnonzero(out.seat >= 0):
            refs[e] = apply_action(refs[e], int(acts[e]))
        for e in np.flatnonzero(out.done):
            res = deal_result(apply_action(refs[e], int(acts[e])))
            assert vec.results[e] == res
            expect = [res.score[s % 2] - res.score[1 - s % 2] for s in range(n)]
            np.testing.assert_array_equal(out.rewards[e], expect)
            finished += 1
        for e in np.flatnonzero(~out.done):
            assert not out.rewards[e].any()
    assert finished == 3
    assert (out.seat == -1).all() and (out.mask.sum(axis=1) == 1).all()


# --------------------------------------------------------------------------- configs


def test_every_shipped_config_loads():
    paths = sorted((REPO / "configs").glob("ppo_*.yaml"))
    assert {p.stem for p in paths} >= {f"ppo_{preset}" for preset in PRESETS}
    for path in paths:  # ppo_PRESET.yaml, and later stages as ppo_PRESET_STAGE.yaml
        name = path.stem.removeprefix("ppo_")
        cfg = load_config(path)
        assert cfg.preset == ("bazar" if name == "tiny" else name.split("_")[0]), path.name
        assert config_from_dict(cfg.to_dict()) == cfg
    for path in sorted((REPO / "configs").glob("clone_*.yaml")):  # clone_PRESET_AGENT.yaml: cloning-only runs
        cfg = load_config(path)
        preset, agent = path.stem.removeprefix("clone_").split("_")
        assert (cfg.preset, cfg.pretrain.agent, cfg.total_steps) == (preset, agent, 0), path.name
        assert cfg.pretrain.data, path.name


def test_config_overrides_and_validation():
    cfg = load_config(TINY, ["ppo.learning_rate=1e-3", "rollout.num_envs=4", "network.hidden=[16, 16]"])
    assert cfg.ppo.learning_rate == 1e-3 and cfg.rollout.num_envs == 4 and cfg.network.hidden == (16, 16)
    assert apply_overrides(cfg, {"total_steps": 10}).total_steps == 10
    with pytest.raises(ConfigError, match="unknown key"):
        apply_overrides(cfg, ["ppo.learnin_rate=1"])
    with pytest.raises(ConfigError, match="learning_rate"):
        PPOConfig(learning_rate=-1.0)
    with pytest.raises(ConfigError, match="preset"):
        TrainConfig(preset="nope")
    with pytest.raises(ConfigError, match="learning_rate must be finite, got inf"):
        apply_overrides(cfg, ["ppo.learning_rate=.inf"])
    with pytest.raises(ConfigError, match="reward_clip must be >= 0, got nan"):
        apply_overrides(cfg, ["rollout.reward_clip=.nan"])
    assert apply_overrides(cfg, ["ppo.max_grad_norm=.inf"]).ppo.max_grad_norm == float("inf")  # no clipping
    with pytest.raises(ConfigError):
        apply_overrides(cfg, ["ppo.clip_coef=abc"])


def test_docs_config_reference_is_generated():
    doc = (REPO / "docs" / "training.md").read_text(encoding="utf-8")
    assert config_reference_markdown() in doc, "regenerate docs/training.md: python -m agents.ppo.config"


# --------------------------------------------------------------------------- training


def _params(trainer: PPOTrainer) -> list[torch.Tensor]:
    return [p.detach().clone() for p in trainer.policy.parameters()]


def test_trainer_smoke(tmp_path):
    cfg = load_config(TINY)
    trainer = build_trainer(cfg, tmp_path)
    before = _params(trainer)
    rows = trainer.train()
    assert trainer.global_step >= cfg.total_steps and len(rows) >= 2
    for key in ("pg_loss", "v_loss", "entropy", "approx_kl", "clipfrac", "collect_sps", "update_sps"):
        assert all(math.isfinite(r[key]) for r in rows), key
    assert any(not torch.equal(a, b) for a, b in zip(before, _params(trainer)))
    for name in ("checkpoint.pt", "policy.pt", "metrics.csv"):
        assert (tmp_path / name).exists()
    lines = (tmp_path / "metrics.csv").read_text().splitlines()
    assert len(lines) == len(rows) + 1


def test_exact_resume(tmp_path):
    cfg = apply_overrides(load_config(TINY), {"total_steps": 100_000})
    straight = build_trainer(cfg, tmp_path / "a")
    straight.train(max_updates=4)
    first = build_trainer(cfg, tmp_path / "b")
    first.train(max_updates=2)
    resumed = build_trainer(cfg, tmp_path / "b", resume=True)
    assert resumed.update_no == 2
    resumed.train(max_updates=2)
    assert resumed.global_step == straight.global_step and resumed.deals == straight.deals
    for a, b in zip(_params(straight), _params(resumed)):
        assert torch.equal(a, b)
    assert len(resumed.pool.snapshots) == len(straight.pool.snapshots)


def test_checkpoint_loads_as_agent_that_acts_legally(tmp_path):
    cfg = load_config(TINY, ["total_steps=300"])
    build_trainer(cfg, tmp_path).train()
    rules = make_rules("bazar")
    rng = np.random.default_rng(0)
    for path, greedy in ((tmp_path / "policy.pt", True), (tmp_path / "checkpoint.pt", False)):
        agent = load_ppo_agent(path, greedy=greedy)
        assert isinstance(agent, PPOAgent)
        for d in range(3):
            s = deal_random(rules, rng, d)
            while not is_terminal(s):
                view = seat_view(s, current_seat(s))
                a = agent.act(view, rng)
                assert a in view.legal
                s = apply_action(s, a)


def test_shipped_policy_acts_legally():
    assert is_terminal(play_legal_deal(load_ppo_agent("ppo"), "bazar", seed=1))


def test_cli_trains_and_resumes(tmp_path):
    from agents.ppo.cli import main

    out = tmp_path / "run"
    assert main(["--config", str(TINY), "--out", str(out), "--total-steps", "300", "--no-progress"]) == 0
    assert (out / "policy.pt").exists() and (out / "config.yaml").exists()
    assert main(["--out", str(out), "--resume", "--total-steps", "600", "--no-progress"]) == 0
    ck = torch.load(out / "checkpoint.pt", weights_only=True)
    assert ck["counters"]["global_step"] >= 600


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_one_update_on_every_preset(preset, tmp_path):
    cfg = load_config(TINY, [f"preset={preset}", "total_steps=50", "rollout.deals_per_rollout=4",
                             "rollout.num_envs=4", "pool.baselines=[random, rules]"])
    trainer = build_trainer(cfg, None)
    row = trainer.train_one_update()
    assert row["batch_steps"] > 0 and math.isfinite(row["pg_loss"]) and math.isfinite(row["v_loss"])


def test_behaviour_cloning_warm_start(tmp_path):
    cfg = load_config(TINY, ["total_steps=100", "pretrain.agent=rules", "pretrain.deals=12", "pretrain.chunk_deals=6",
                             "pretrain.batch_size=64", "pretrain.critic_warmup_updates=1"])
    trainer = build_trainer(cfg, tmp_path)
    before = _params(trainer)
    rows = trainer.train(max_updates=1)
    m = trainer.pretrain_metrics
    assert m["bc_samples"] > 0 and 0.0 <= m["bc_accuracy"] <= 1.0 and math.isfinite(m["bc_loss"])
    assert any(not torch.equal(a, b) for a, b in zip(before, _params(trainer)))
    assert rows[0]["pg_loss"] == rows[0]["pg_loss"]  # critic-only warm-up update still logs the policy loss
    resumed = build_trainer(cfg, tmp_path, resume=True)
    assert resumed.pretrain_metrics == m  # not cloned again on resume


@pytest.mark.parametrize(("overrides", "split"), [(["rollout.overlap=true"], 2), (["rollout.overlap=true"], 3),
                                                 (["network.critic=privileged", "network.input_layer=dense"], 2)])
def test_exact_resume_variants(tmp_path, overrides, split):
    """Exact resume with collection in a worker process (the rollout in flight at a checkpoint is
    collected again from its saved parameters and streams; split at update 3, its snapshots [u1,
    u2] are no longer all in the pool [u2, u3], so the dropped one's weights come from the
    checkpoint), and with a privileged critic."""
    cfg = apply_overrides(load_config(TINY), ["total_steps=100000", *overrides])
    straight = build_trainer(cfg, tmp_path / "a")
    straight.train(max_updates=5)
    first = build_trainer(cfg, tmp_path / "b")
    first.train(max_updates=split)
    if split == 3:
        ck = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=True)
        assert [n for n, _ in ck["collector"]["inflight"]["snapshots"]] == ["u1"]  # dropped, kept in full
    resumed = build_trainer(cfg, tmp_path / "b", resume=True)
    resumed.train(max_updates=5 - split)
    assert resumed.global_step == straight.global_step and resumed.deals == straight.deals
    for a, b in zip(_params(straight), _params(resumed)):
        assert torch.equal(a, b)


def test_overlap_trains_on_lagged_rollouts(tmp_path):
    """With rollout.overlap the worker collects while the trainer updates: training moves the
    parameters and the worker is stopped when ``train`` returns."""
    cfg = apply_overrides(load_config(TINY), ["total_steps=100000", "rollout.overlap=true", "pool.opponent_prob=0"])
    trainer = build_trainer(cfg, None)
    before = _params(trainer)
    rows = trainer.train(max_updates=3)
    assert len(rows) == 3 and all(math.isfinite(r["pg_loss"]) for r in rows)
    assert any(not torch.equal(a, b) for a, b in zip(before, _params(trainer)))
    assert trainer._async is None  # the worker is stopped when train() returns


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kind", ["empty", "garbage", "truncated"])
def test_bad_checkpoint_files_give_clear_errors(tmp_path, kind):
    from agents.ppo.agent import SHIPPED, resolve_policy_path

    path = tmp_path / f"{kind}.pt"
    good = resolve_policy_path(SHIPPED[0], "bazar").read_bytes()
    path.write_bytes({"empty": b"", "garbage": b"not a checkpoint at all", "truncated": good[: len(good) // 3]}[kind])
    with pytest.raises(ConfigError, match=rf"{kind}\.pt: .*(empty|not a readable PPO)"):
        load_ppo_agent(path)
    from agents.registry import make_agent

    with pytest.raises(ConfigError, match=rf"{kind}\.pt"):
        make_agent(str(path), "bazar")


def test_config_files_and_values_name_the_problem(tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match="empty"):
        load_config(empty)
    listy = tmp_path / "list.yaml"
    listy.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(listy)
    with pytest.raises(ConfigError, match=r"rollout\.reward_scale: expected float, got 'x'"):
        load_config(TINY, ["rollout.reward_scale=x"])
    with pytest.raises(ConfigError, match=r"network\.critic: expected one of"):
        load_config(TINY, ["network.critic=oracle"])


def test_blot_train_names_the_missing_extra(monkeypatch, capsys):
    import importlib.util

    from agents.ppo import cli

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "yaml" else real(name, *a))
    assert cli.main(["--config", str(TINY)]) == 2
    err = capsys.readouterr().err
    assert "yaml" in err and "pip install -e '.[train]'" in err


def test_blot_train_rejects_an_empty_config(tmp_path, capsys):
    from agents.ppo.cli import main

    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert main(["--config", str(empty), "--out", str(tmp_path / "o")]) == 2
    assert "empty" in capsys.readouterr().err


@pytest.mark.parametrize("first", [True, False])
def test_resume_keeps_the_overlap_setting(tmp_path, first):
    """A checkpoint resumes only with the rollout.overlap it was written with (the streams differ)."""
    cfg = apply_overrides(load_config(TINY), ["total_steps=100000", f"rollout.overlap={str(first).lower()}"])
    build_trainer(cfg, tmp_path).train(max_updates=1)
    other = apply_overrides(cfg, [f"rollout.overlap={str(not first).lower()}"])
    with pytest.raises(ConfigError, match=r"rollout\.overlap"):
        build_trainer(other, tmp_path, resume=True)


def test_resume_refuses_a_changed_start_setting(tmp_path):
    """init_policy and pretrain act only when a run begins: a resume that changes one is refused
    with the setting named, instead of ignoring it; critic_warmup_updates still acts after the
    start, so it may change."""
    cfg = apply_overrides(load_config(TINY), ["total_steps=100000"])
    build_trainer(cfg, tmp_path).train(max_updates=1)
    for override, key in (("init_policy=ppo", "init_policy"), ("pretrain.agent=rules", "pretrain.agent"),
                          ("pretrain.deals=7", "pretrain.deals")):
        with pytest.raises(ConfigError, match=rf"{key} is .* in the checkpoint and .* now; it acts only at a "
                                              r"run's start.*--resume without --config"):
            build_trainer(apply_overrides(cfg, [override]), tmp_path, resume=True)
    resumed = build_trainer(apply_overrides(cfg, ["pretrain.critic_warmup_updates=3"]), tmp_path, resume=True)
    assert resumed.update_no == 1


@pytest.mark.parametrize("override, needle", [
    ("network.hidden=[a, b]", "network.hidden must be a list of integer widths, got ['a', 'b']"),
    ("network.hidden=[1.5]", "network.hidden must be a list of integer widths, got [1.5]"),  # int() made it 1
    ("network.hidden=[true]", "network.hidden must be a list of integer widths, got [True]"),
    ("network.critic_hidden=[x]", "network.critic_hidden must be a list of integer widths, got ['x']"),
    ("pool.baseline_probs=[a, 1]", "pool.baseline_probs must be a list of numbers, got ['a', 1]"),
    ("obs_kind=obs", "obs_kind must be one of ['observation', 'information_state', 'observation_voids'], got 'obs'"),
    ("seed=-1", "seed must be >= 0"),
])
def test_blot_train_names_a_bad_value_before_training(tmp_path, capsys, override, needle):
    from agents.ppo.cli import main

    with pytest.raises(ConfigError) as ei:
        load_config(TINY, [override])
    assert needle in str(ei.value)
    assert main(["--config", str(TINY), "--set", override, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("override, needle", [
    ("pool.baselines=[rules, rulez]", "pool.baselines: unknown agent 'rulez'; known:"),
    ("pretrain.agent=rulez", "pretrain.agent: unknown agent 'rulez'"),
    ("eval.opponents=[randm]", "eval.opponents: unknown agent 'randm'"),
    ("eval.boards=999999", "eval.boards is 999999 but the bazar dev suite has"),
])
def test_agent_names_and_eval_boards_are_checked_when_the_trainer_is_built(tmp_path, override, needle):
    """These failed only when the pool, the cloning or the first evaluation used them, after
    training had run (or, for eval.boards, evaluated fewer boards than asked)."""
    cfg = load_config(TINY, [override, "eval.every=5"])
    with pytest.raises(ConfigError) as ei:
        build_trainer(cfg, tmp_path)
    assert needle in str(ei.value)


@pytest.mark.parametrize("value", ["0", "-1"])
def test_blot_train_max_updates_must_be_positive(capsys, value):
    from agents.ppo.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--config", str(TINY), "--max-updates", value])
    assert e.value.code == 2
    assert f"argument --max-updates: expected a positive integer, got {value}" in capsys.readouterr().err
