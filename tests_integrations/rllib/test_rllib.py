"""Ray RLlib integration (runs in .venv-rllib; scripts/ci_integrations.sh).

* the MultiAgentEnv adapter's step protocol on every preset (masks = the engine's, only the
  agent to act observes, every seat gets its terminal reward in the final step);
* two training iterations of the league config with 2 env runners: no illegal action (the
  env raises on one), every seat that acted got its terminal reward inside RLlib's episodes,
  frozen snapshots reach the env runners, the exported policy plays in agents.eval.arena;
* ``integrations/rllib/train_rllib.py`` end to end (metrics.csv, policy.pt, learning_curve.png).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
import ray
import torch
from common import ROOT, engine_mask, expected_deal_rewards, heavy_modules_after_import_blot_env

from agents.integrations.rllib import (
    MAIN,
    BlotMultiAgentEnv,
    LeagueMapping,
    build_algorithm_config,
    expected_terminal_rewards,
    export_policy,
    frozen_id,
    register,
)
from agents.integrations.rllib_config import apply_rllib_overrides, load_rllib_config
from blot_env.rules_config import PRESETS, make_rules

CONFIG = ROOT / "configs" / "rllib_bazar.yaml"
TINY = {"ppo.train_batch_size": 400, "ppo.minibatch_size": 100, "ppo.num_epochs": 1, "runners.num_env_runners": 2,
        "runners.num_envs_per_env_runner": 1, "league.snapshot_every": 1, "league.win_rate_threshold": 0.0,
        "eval.every": 0}


def test_import_blot_env_pulls_in_no_rl_library():
    assert heavy_modules_after_import_blot_env() == []


def _play(env: BlotMultiAgentEnv, rng: np.random.Generator, seed: int) -> tuple[dict, dict, dict]:
    obs, infos = env.reset(seed=seed)
    n = len(env.possible_agents)
    while True:
        assert len(obs) == 1, "only the agent to act observes mid-episode"
        (agent, o), = obs.items()
        assert agent == env.raw.agent_selection
        assert set(o) == {"observation", "action_mask"}
        np.testing.assert_array_equal(o["action_mask"].astype(bool), engine_mask(env.raw))
        assert env.observation_spaces[agent].contains(o)
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rewards, terms, truncs, infos = env.step({agent: action})
        assert agent in rewards, "the acting agent always gets a reward entry (RLlib requires it)"
        if terms["__all__"] or truncs["__all__"]:
            assert set(obs) == set(rewards) == set(env.possible_agents)
            assert all(terms[a] or truncs[a] for a in env.possible_agents)
            assert all(not o["action_mask"].any() for o in obs.values())
            assert len(infos) == n
            return obs, rewards, infos


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_env_protocol_and_terminal_rewards(preset):
    rng = np.random.default_rng(0)
    for skip_forced in (False, True):
        env = BlotMultiAgentEnv({"preset": preset, "reward_scale": 0.02, "skip_forced": skip_forced})
        n = len(env.possible_agents)
        for seed in range(4):
            _, rewards, infos = _play(env, rng, seed)
            info = infos["player_0"]
            want = expected_deal_rewards(info["deal_result"], n, 0.02)
            assert [rewards[f"player_{s}"] for s in range(n)] == pytest.approx(want)
            assert expected_terminal_rewards(info, {"reward_scale": 0.02}, n) == pytest.approx(want)
            assert sum(info["decisions_by_seat"]) >= 1


def test_env_match_mode_rewards_winner():
    env = BlotMultiAgentEnv({"preset": "duel-app", "episode": "match", "reward_scale": 0.02})
    _, rewards, infos = _play(env, np.random.default_rng(1), 0)
    winner = infos["player_0"]["match_winner"]
    assert rewards == {"player_0": 1.0 if winner == 0 else -1.0, "player_1": 1.0 if winner == 1 else -1.0}


def test_league_mapping_is_per_team_and_per_episode():
    m = LeagueMapping(frozen_slots=3, random_weight=0.25)

    class Ep:
        def __init__(self, i):
            self.id_ = f"episode-{i}"

    seen = set()
    for i in range(200):
        ep = Ep(i)
        mods = [m(f"player_{s}", ep) for s in range(4)]
        assert mods[0] == mods[2] and mods[1] == mods[3] and mods[0] != mods[1]
        assert MAIN in mods
        seen.add(mods[0] if mods[0] != MAIN else mods[1])
    assert seen == {"random", "frozen_0", "frozen_1", "frozen_2"}


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, object_store_memory=200 * 1024 * 1024, include_dashboard=False, ignore_reinit_error=True,
             log_to_driver=False)
    yield
    ray.shutdown()


def _weights_sum(module) -> float:
    return float(sum(p.detach().abs().sum() for p in module.parameters()))


def test_two_iterations_two_env_runners(ray_local, tmp_path):
    cfg = apply_rllib_overrides(load_rllib_config(CONFIG), TINY)
    register("blot")
    algo = build_algorithm_config(cfg, "blot").build_algo()
    try:
        results = [algo.train() for _ in range(2)]
        for r in results:
            er = r["env_runners"]
            assert er["num_episodes"] > 0
            assert er["blot/reward_mismatch"] == 0, "a seat that acted missed its terminal reward"
            assert er["blot/seats_rewarded"] + er["blot/seats_no_decision"] == pytest.approx(4.0)
            assert er["blot/seats_rewarded"] > 3.5
            assert r["learners"][MAIN]["num_module_steps_trained"] > 0
        assert results[-1]["league"]["snapshots"] == 2
        # the second snapshot went to frozen_1: on every remote env runner it equals main's learner weights
        learner_modules = algo.learner_group._learner.module
        main_w = _weights_sum(learner_modules[MAIN])
        assert _weights_sum(learner_modules[frozen_id(1)]) == pytest.approx(main_w, rel=1e-6)
        slot = frozen_id(1)
        # the lambda must not reference this test module (env runners cannot import it)
        remote = algo.env_runner_group.foreach_env_runner(
            lambda runner: float(sum(p.detach().abs().sum() for p in runner.module[slot].parameters())),
            local_env_runner=False)
        assert len(remote) == 2
        assert remote == pytest.approx([main_w] * 2, rel=1e-5)
        # the trained module exports to agents/ppo's policy format and plays duplicate boards
        path = export_policy(algo.get_module(MAIN), cfg, tmp_path / "policy.pt")
    finally:
        algo.stop()
    from agents.eval.arena import evaluate, load_suite
    from agents.registry import make_agent

    agent = make_agent(str(path), "bazar")
    ev = evaluate(agent, "random", make_rules("bazar"), load_suite("bazar", "dev")[:4], factory=make_agent)
    assert len(ev.boards) == 4 and np.isfinite(ev.metrics["mean_board_score"])
    assert torch.load(path, weights_only=False)["meta"]["engine"] == "rllib"


def test_train_rllib_script(tmp_path):
    out = tmp_path / "run"
    script = ROOT / "integrations" / "rllib" / "train_rllib.py"
    cmd = [sys.executable, str(script), "--config", str(CONFIG), "--iterations", "2",
           "--num-env-runners", "2", "--out", str(out), "--set", "ppo.train_batch_size=400", "ppo.minibatch_size=100",
           "ppo.num_epochs=1", "runners.num_envs_per_env_runner=1", "eval.every=2", "eval.boards=4"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["iterations"] == 2 and summary["reward_mismatch"] == 0
    with open(out / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["iteration"]) for r in rows] == [1, 2]
    assert float(rows[-1]["env_steps"]) >= 800 and rows[-1]["eval_rules_mean"] != ""
    for name in ("policy.pt", "learning_curve.png", "config.yaml"):
        assert (out / name).stat().st_size > 0
    assert (out / "checkpoint").is_dir()
