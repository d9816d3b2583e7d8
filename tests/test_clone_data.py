"""Cloning data (agents/ppo/clone_data.py, scripts/clone_data.py), cloning from it
(``pretrain.data``, a ``total_steps: 0`` run) and policy files as batched pool members."""

from __future__ import annotations

import copy
import importlib.util
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.clone_data import (  # noqa: E402
    CloneDataError,
    CloneJob,
    agreement,
    build_chunk,
    paired_agreement,
    read_clone_data,
    unpack_arrays,
)
from agents.ppo.config import load_config  # noqa: E402
from agents.ppo.distributions import MaskedCategorical  # noqa: E402
from agents.ppo.rollout import OpponentPool, RolloutCollector  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from blot_env.errors import ConfigError  # noqa: E402
from blot_env.observation import ObservationEncoder  # noqa: E402
from blot_env.rules_config import make_rules  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "configs" / "ppo_tiny.yaml"


def _script():
    spec = importlib.util.spec_from_file_location("clone_data_script", REPO / "scripts" / "clone_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rules_file(tmp_path_factory) -> Path:
    """Four chunks of three bazar deals of ``rules`` in every seat, built by the script on one worker."""
    path = tmp_path_factory.mktemp("clone") / "rules.pkl"
    assert _script().main(["--agent", "rules", "--deals", "12", "--chunk-deals", "3", "--workers", "1",
                           "--out", str(path)]) == 0
    return path


def test_the_file_holds_every_chunk_with_legal_decisions(rules_file):
    recs, end = read_clone_data(rules_file)
    assert sorted(r["chunk"] for r in recs) == [0, 1, 2, 3] and end == rules_file.stat().st_size
    enc = ObservationEncoder(make_rules("bazar"), "observation")
    for r in recs:
        a = unpack_arrays(r)
        T = r["samples"]
        assert a["obs"].shape == (T, enc.size) and a["obs"].dtype == np.uint8
        assert a["masks"][np.arange(T), a["actions"]].all()  # every kept action was legal
        assert (a["masks"].sum(axis=1) > 1).all()  # forced decisions are not kept
        assert a["privileged"].shape[0] == T and a["returns"].dtype == np.float32
        assert np.abs(a["returns"]).max() > 1  # table points, not scaled rewards
        assert sorted(set(a["deal"].tolist())) == [0, 1, 2]  # each decision's deal of the chunk's three
        for d in range(3):  # the decisions of one deal share its score, up to the side's sign
            assert len(set(np.abs(a["returns"][a["deal"] == d]).tolist())) == 1
    # a chunk is a pure function of (job, index): rebuilt alone it is the same
    again = unpack_arrays(build_chunk(CloneJob(make_rules("bazar"), "rules", 0, 3, factory=make_agent), 2))
    two = unpack_arrays(next(r for r in recs if r["chunk"] == 2))
    assert all(np.array_equal(again[k], two[k]) for k in two)


def test_a_rerun_plays_only_missing_chunks_and_a_cut_record_is_dropped(rules_file, tmp_path, capsys):
    path = tmp_path / "part.pkl"
    path.write_bytes(rules_file.read_bytes())
    with open(path, "ab") as f:
        f.write(pickle.dumps({"kind": "blot-clone-data"})[:7])  # a record cut short by a kill
    assert _script().main(["--agent", "rules", "--deals", "18", "--chunk-deals", "3", "--workers", "1",
                           "--out", str(path)]) == 0
    assert "2 chunks (6 deals) played" in capsys.readouterr().out
    recs, _ = read_clone_data(path)
    assert sorted(r["chunk"] for r in recs) == [0, 1, 2, 3, 4, 5]
    info = _script().info(str(path))
    assert info["deals"] == 18 and info["first_missing_chunk"] == 6 and info["agent"] == "rules"


def test_a_file_of_another_agent_or_chunk_size_is_refused(rules_file, tmp_path, capsys):
    path = tmp_path / "other.pkl"
    path.write_bytes(rules_file.read_bytes())
    size = path.stat().st_size
    assert _script().main(["--agent", "random", "--deals", "6", "--chunk-deals", "3", "--out", str(path)]) == 2
    assert "agent='rules', this run asks agent='random'" in capsys.readouterr().err
    assert _script().main(["--agent", "rules", "--deals", "6", "--chunk-deals", "2", "--out", str(path)]) == 2
    assert "deals=3, this run asks deals=2" in capsys.readouterr().err
    assert path.stat().st_size == size
    precious = tmp_path / "notes.yaml"  # --out on a file of something else: refused, never truncated
    precious.write_text("preset: bazar\n")
    assert _script().main(["--agent", "rules", "--deals", "3", "--out", str(precious)]) == 2
    assert "is not a cloning-data file" in capsys.readouterr().err and precious.read_text() == "preset: bazar\n"
    (tmp_path / "junk.pkl").write_bytes(pickle.dumps({"agent": "x"}))
    with pytest.raises(CloneDataError, match="not a cloning-data record"):
        read_clone_data(tmp_path / "junk.pkl")
    assert _script().main(["--agent", "rulez", "--deals", "3", "--out", str(tmp_path / "x.pkl")]) == 2
    assert "unknown agent 'rulez'" in capsys.readouterr().err


def test_a_cloning_only_run_imitates_the_file_and_exports_its_policy(rules_file, tmp_path, capsys):
    over = ["total_steps=0", f"pretrain.data={rules_file}", "pretrain.agent=rules", "pretrain.chunk_deals=6",
            "pretrain.passes=4", "pretrain.epochs=3", "pretrain.batch_size=64", "network.critic=privileged"]
    cfg = load_config(TINY, over)
    trainer = build_trainer(cfg, tmp_path / "clone")
    before = agreement(trainer.policy, rules_file)
    fresh = copy.deepcopy(trainer.policy)  # the untrained network
    rows = trainer.train()
    assert rows == [] and trainer.global_step == 0
    m = trainer.pretrain_metrics
    assert m["bc_samples"] == sum(r["samples"] for r in read_clone_data(rules_file)[0])  # each decision once
    clone = make_agent(str(tmp_path / "clone" / "policy.pt"), "bazar")
    after = agreement(clone.policy, rules_file)
    assert after["all"] > before["all"] + 0.2 and after["all"] > 0.6, (before, after)
    assert after["n_auction"] > 0 and after["n_play"] > 0
    assert after["n_auction"] + after["n_play"] == after["n_all"] == m["bc_samples"]
    assert _script().main(["--agree", str(tmp_path / "clone" / "policy.pt"), str(rules_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["all"] == pytest.approx(after["all"])
    # a second call has nothing left to do: the cloning is in the checkpoint
    again = build_trainer(cfg, tmp_path / "clone", resume=True)
    assert again.pretrain_metrics == m and again.train() == []
    # decision by decision against an untrained network on the same decisions (McNemar)
    pair = paired_agreement(fresh, rules_file, clone.policy, rules_file)
    assert pair["all"]["a"] == pytest.approx(before["all"])
    assert pair["all"]["b"] == pytest.approx(after["all"])
    assert pair["all"]["b_only"] > pair["all"]["a_only"] and pair["all"]["p"] < 0.05
    assert pair["all"]["b_only"] - pair["all"]["a_only"] == round((after["all"] - pair["all"]["a"]) * after["n_all"])
    assert pair["all"]["deals"] == 12 and pair["all"]["diff"] == pytest.approx(after["all"] - before["all"])
    assert 0 < pair["all"]["se"] < 0.5 and 0 <= pair["all"]["p_deals"] < 0.05
    policy = str(tmp_path / "clone" / "policy.pt")
    assert _script().main(["--agree", policy, str(rules_file), "--against", policy, str(rules_file), "--json"]) == 0
    same = json.loads(capsys.readouterr().out)["play"]
    assert same["a_only"] == same["b_only"] == 0 and same["p"] == 1.0 and same["a"] == pytest.approx(after["play"])
    other = tmp_path / "seed1.pkl"  # other deals: refused, the differing field named
    assert _script().main(["--agent", "rules", "--deals", "3", "--chunk-deals", "3", "--seed", "1", "--workers", "1",
                           "--out", str(other)]) == 0
    capsys.readouterr()
    assert _script().main(["--agree", policy, str(rules_file), "--against", policy, str(other)]) == 2
    assert "hold different decisions: seed 0 against 1" in capsys.readouterr().err


def test_from_init_clones_on_top_of_the_init_policys_weights(rules_file, tmp_path):
    """pretrain.from_init: the cloning starts from init_policy's weights (distillation into a trained
    policy), not from a fresh network; without the flag the pair is refused."""
    net = ["network.critic=privileged"]
    build_trainer(load_config(TINY, ["total_steps=200", "seed=7", *net]), tmp_path / "start").train()
    start = make_agent(str(tmp_path / "start" / "policy.pt"), "bazar").policy.state_dict()
    clone = ["total_steps=0", f"pretrain.data={rules_file}", "pretrain.agent=rules", "pretrain.chunk_deals=6",
             "pretrain.passes=2", "pretrain.batch_size=64", *net]
    cfg = load_config(TINY, [*clone, f"init_policy={tmp_path / 'start' / 'policy.pt'}", "pretrain.from_init=true"])
    trainer = build_trainer(cfg, tmp_path / "distil")
    actor = [k for k in start if not k.startswith("critic")]
    assert actor and all(torch.equal(trainer.policy.state_dict()[k], start[k]) for k in actor)  # the file's weights
    before = agreement(trainer.policy, rules_file)
    trainer.train()
    after = agreement(make_agent(str(tmp_path / "distil" / "policy.pt"), "bazar").policy, rules_file)
    assert after["all"] > before["all"], (before, after)  # it learned from the file
    fresh = build_trainer(load_config(TINY, clone), tmp_path / "fresh")
    fresh.train()
    distilled = trainer.policy.state_dict()
    assert any(not torch.equal(distilled[k], fresh.policy.state_dict()[k]) for k in actor)  # the start mattered
    with pytest.raises(ConfigError, match=r"both set the starting weights.* or set pretrain\.from_init=true"):
        load_config(TINY, [*clone, f"init_policy={tmp_path / 'start' / 'policy.pt'}"])
    with pytest.raises(ConfigError, match=r"pretrain\.from_init=true needs init_policy \(the weights to start "
                                          r"from\); it is empty"):
        load_config(TINY, [*clone, "pretrain.from_init=true"])
    with pytest.raises(ConfigError, match=r"needs pretrain\.agent or pretrain\.data \(the play to clone\)"):
        load_config(TINY, [f"init_policy={tmp_path / 'start' / 'policy.pt'}", "pretrain.agent=",
                           "pretrain.from_init=true"])


def test_disagreements_only_and_kl_coef_keep_the_start(rules_file, tmp_path):
    """pretrain.disagreements_only: decisions the start already plays get no cross-entropy, so on a
    file of the start's own play the actor does not move, and on another agent's play it learns the
    decisions the start gets wrong; pretrain.kl_coef keeps the clone nearer its start (KL on the
    file's decisions) than plain cloning from the same start and seed."""
    net = ["network.critic=privileged"]
    build_trainer(load_config(TINY, ["total_steps=200", "seed=7", *net]), tmp_path / "start").train()
    start_file = tmp_path / "start" / "policy.pt"
    own = tmp_path / "own.pkl"
    assert _script().main(["--agent", str(start_file), "--deals", "6", "--chunk-deals", "3", "--workers", "1",
                           "--out", str(own)]) == 0
    start = make_agent(str(start_file), "bazar").policy
    actor = [k for k in start.state_dict() if k.startswith(("actor", "policy_head"))]
    base = [f"init_policy={start_file}", "pretrain.from_init=true", "total_steps=0", "pretrain.chunk_deals=6",
            "pretrain.passes=2", "pretrain.batch_size=64", "pretrain.learning_rate=1e-3", *net]

    def clone(name, data, agent, *extra):
        trainer = build_trainer(load_config(TINY, [*base, f"pretrain.data={data}", f"pretrain.agent={agent}",
                                                   *extra]), tmp_path / name)
        trainer.train()
        return trainer.policy

    kept = clone("kept", own, start_file, "pretrain.disagreements_only=true")
    moved = clone("moved", own, start_file)
    assert all(torch.equal(kept.state_dict()[k], start.state_dict()[k]) for k in actor)
    assert any(not torch.equal(moved.state_dict()[k], start.state_dict()[k]) for k in actor)

    def log_probs(policy):  # float32[N, A] over the decisions of rules_file, and their int64[N] actions
        recs = [unpack_arrays(r) for r in read_clone_data(rules_file)[0]]
        obs, masks = (torch.from_numpy(np.concatenate([a[k] for a in recs])) for k in ("obs", "masks"))
        with torch.no_grad():
            lp = MaskedCategorical(policy.logits(obs), masks).log_probs
        return lp, masks, torch.from_numpy(np.concatenate([a["actions"] for a in recs])).long()

    p0, masks, acts = log_probs(start)

    def kl_to_start(policy) -> float:
        p1 = log_probs(policy)[0]
        return float(torch.where(masks, p0.exp() * (p0 - p1), 0.0).sum(-1).mean())

    plain = kl_to_start(clone("plain", rules_file, "rules"))
    near = kl_to_start(clone("near", rules_file, "rules", "pretrain.kl_coef=5"))
    assert 0 < near < 0.5 * plain, (near, plain)

    # on rules' play the start disagrees often: there both keys together still teach the recorded action
    p1 = log_probs(clone("both", rules_file, "rules", "pretrain.disagreements_only=true", "pretrain.kl_coef=1"))[0]
    wrong = p0.argmax(-1) != acts
    gain = (p1 - p0).gather(1, acts[:, None])[:, 0][wrong]
    assert len(gain) > 0 and float(gain.mean()) > 0.05, gain
    for bad in ("pretrain.kl_coef=1", "pretrain.disagreements_only=true"):
        with pytest.raises(ConfigError, match=r"need pretrain\.from_init=true"):
            load_config(TINY, ["total_steps=0", f"pretrain.data={rules_file}", "pretrain.agent=rules", bad])
    with pytest.raises(ConfigError, match=r"pretrain\.kl_coef must be >= 0 and finite, got -1\.0"):
        load_config(TINY, [*base, f"pretrain.data={rules_file}", "pretrain.agent=rules", "pretrain.kl_coef=-1"])


def test_cloning_data_that_does_not_fit_the_run_is_refused(rules_file, tmp_path):
    # refused when the trainer is built, before anything is trained or written
    with pytest.raises(ConfigError, match=r"built with agent='rules', this run has agent='rules-medium'"):
        build_trainer(load_config(TINY, ["total_steps=0", f"pretrain.data={rules_file}",
                                         "pretrain.agent=rules-medium"]), None)
    with pytest.raises(ConfigError, match=r"built with preset='bazar', this run has preset='belote'"):
        build_trainer(load_config(TINY, ["preset=belote", "total_steps=0", f"pretrain.data={rules_file}"]), None)
    with pytest.raises(ConfigError, match="no cloning-data file"):
        build_trainer(load_config(TINY, ["total_steps=0", f"pretrain.data={tmp_path / 'nope.pkl'}"]), None)
    from agents.ppo.cli import main as blot_train

    assert blot_train(["--config", str(TINY), "--set", "total_steps=0", "--set", f"pretrain.data={tmp_path / 'x.pkl'}",
                       "--out", str(tmp_path / "run"), "--no-progress"]) == 2
    assert not (tmp_path / "run").exists()
    with pytest.raises(ConfigError, match=r"total_steps must be > 0 \(0 is allowed only with pretrain"):
        load_config(TINY, ["total_steps=0"])
    with pytest.raises(ConfigError, match=r"pretrain\.passes > 1 needs pretrain\.data"):
        load_config(TINY, ["pretrain.agent=rules", "pretrain.passes=2"])
    with pytest.raises(ConfigError, match=r"init_policy .* and pretrain\.data"):
        load_config(TINY, ["init_policy=ppo", f"pretrain.data={rules_file}"])


def test_pretrain_deals_reads_whole_chunks_up_to_the_limit(rules_file):
    from agents.ppo.config import PretrainConfig
    from agents.ppo.pretrain import file_groups

    rules = make_rules("bazar")
    enc = ObservationEncoder(rules, "observation")
    groups = file_groups(PretrainConfig(data=str(rules_file), deals=9, chunk_deals=4), rules, enc, True)
    assert [[r["chunk"] for r in g] for g in groups] == [[0, 1], [2]]  # groups of at least 4 deals
    groups = file_groups(PretrainConfig(data=str(rules_file), deals=8, chunk_deals=4), rules, enc, True)
    assert [[r["chunk"] for r in g] for g in groups] == [[0, 1]]  # a third chunk would pass 8 deals
    whole = file_groups(PretrainConfig(data=str(rules_file), deals=100, chunk_deals=100), rules, enc, True)
    assert sum(r["deals"] for g in whole for r in g) == 12


def _mixed_rollout(policy_file: Path, batched: bool):
    cfg = load_config(TINY, [f"pool.baselines=[{policy_file}]", "pool.partner_prob=1.0", "pool.opponent_prob=0",
                             "pool.snapshot_every=0", "rollout.skip_forced=false"])
    rules = make_rules("bazar")
    enc = ObservationEncoder(rules, cfg.obs_kind)
    pool = OpponentPool(cfg.pool, cfg.preset, cfg.seed, make_agent)
    col = RolloutCollector(rules, enc, cfg.rollout, pool, cfg.pool)
    if not batched:
        pool.baselines[0].net = None  # act env by env through the agent, as any baseline does
    learner = build_trainer(load_config(TINY, ["total_steps=200", "seed=3"]), None).policy
    return pool, col.collect(learner, 12, np.random.default_rng(5), torch.Generator().manual_seed(5))


def test_a_policy_file_in_the_pool_acts_batched_and_plays_as_its_agent(tmp_path):
    build_trainer(load_config(TINY, ["total_steps=200"]), tmp_path / "a").train()
    policy_file = tmp_path / "a" / "policy.pt"
    pool, fast = _mixed_rollout(policy_file, batched=True)
    assert pool.baselines[0].net is not None
    _, slow = _mixed_rollout(policy_file, batched=False)
    # the same deals, the same learner draws: batched greedy actions equal the agent's own
    assert fast.stats[f"mixed_{policy_file}_deals"] == 12
    assert np.array_equal(fast.actions, slow.actions) and np.array_equal(fast.rewards, slow.rewards)
    # a policy of another observation kind keeps acting env by env
    enc = ObservationEncoder(make_rules("bazar"), "information_state")
    assert OpponentPool(load_config(TINY, [f"pool.baselines=[{policy_file}]"]).pool, "bazar", 0,
                        make_agent).batch_networks(enc) == []
