"""TorchRL integration (runs in .venv-torchrl; scripts/ci_integrations.sh).

``PettingZooWrapper(blot_env.env(...), use_mask=True)`` grouped per team: TorchRL's own spec
check, a masked random rollout whose masks match the engine's legal actions step by step,
terminal rewards for every seat, Monte-Carlo returns of :func:`acting_transitions`, and one
iteration of the masked PPO example.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from common import ROOT, engine_mask, expected_deal_rewards, heavy_modules_after_import_blot_env
from torchrl.envs.utils import check_env_specs, step_mdp

from blot_env.integrations.torchrl import acting_agent, acting_transitions, make_env, team_group_map
from blot_env.rules_config import make_rules


def test_import_blot_env_pulls_in_no_rl_library():
    assert heavy_modules_after_import_blot_env() == []


@pytest.mark.parametrize("preset", ["bazar", "duel"])
def test_spec_check_and_groups(preset):
    env = make_env(preset, seed=0)
    check_env_specs(env)
    n = make_rules(preset).num_players
    assert env.group_map == team_group_map(n)
    assert set(env.group_map) == {"team_0", "team_1"}


@pytest.mark.parametrize("preset", ["bazar", "bazar-app", "duel", "open", "belote"])
def test_masked_random_rollout_masks_match_env(preset):
    """Random legal play through TorchRL's spec (rand_action uses the updated action mask):
    at every step exactly the agent to act is unmasked, its action_mask equals the engine's
    legal mask, the sampled action is legal, and the final step pays every seat its reward."""
    env = make_env(preset, seed=1, reward_scale=0.5)
    torch.manual_seed(0)
    raw = env._env.unwrapped
    groups = env.group_map
    n = raw.cfg.num_players
    td = env.reset()
    deals = steps = 0
    totals = np.zeros(n)
    while deals < 3:
        g, i = acting_agent(td, groups)
        agent = groups[g][i]
        assert agent == raw.agent_selection
        assert sum(int(td[gg, "mask"].sum()) for gg in groups) == 1
        legal = engine_mask(raw)
        np.testing.assert_array_equal(td[g, "action_mask"][i].numpy(), legal)
        td = env.rand_action(td)
        assert legal[int(td[g, "action"][i])], "rand_action ignored the mask"
        td = env.step(td)
        steps += 1
        for gg, agents in groups.items():
            for j, a in enumerate(agents):
                totals[raw.seat_of(a)] += float(td["next", gg, "reward"][j])
        if bool(td["next", "done"]):
            result = raw.infos["player_0"]["deal_result"]
            np.testing.assert_allclose(totals, expected_deal_rewards(result, n, 0.5))
            totals[:] = 0
            deals += 1
            td = env.reset()
        else:
            td = step_mdp(td)
    assert steps > 3 * n


def test_rollout_without_policy_is_legal():
    env = make_env("bazar", seed=2)  # illegal_reward=None: an illegal action would raise
    ro = env.rollout(300, break_when_any_done=False)
    assert ro.batch_size[0] == 300
    assert int(ro["next", "done"].sum()) >= 3


def test_acting_transitions_returns():
    env = make_env("duel", seed=3, reward_scale=1.0)
    groups = env.group_map
    ro = env.rollout(200, break_when_any_done=False)
    flat = acting_transitions(ro, groups)
    done = ro["next", "done"].reshape(-1)
    last = int(done.nonzero()[-1, 0])
    assert len(flat) == last + 1  # one acting agent per step up to the last finished deal
    # each transition's return = that agent's reward at the end of its deal
    ends = done.nonzero()[:, 0].tolist()
    for k in range(0, len(flat), 7):
        t, g, i = int(flat["step"][k]), int(flat["group"][k]), int(flat["index"][k])
        end = next(e for e in ends if e >= t)
        gname = list(groups)[g]
        want = float(ro["next", gname, "reward"][end, i, 0])
        assert float(flat["return"][k, 0]) == pytest.approx(want)
        assert bool(flat["action_mask"][k, int(flat["action"][k])])


def test_masked_ppo_example_runs():
    cmd = [sys.executable, str(ROOT / "integrations" / "torchrl" / "masked_ppo.py"), "--preset", "duel-app",
           "--iterations", "1", "--frames-per-batch", "256", "--epochs", "1", "--eval-boards", "4"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(x) for x in proc.stdout.strip().splitlines() if x.startswith("{")]
    assert lines[0]["iteration"] == 1 and lines[0]["decisions"] > 0
    assert all(np.isfinite(lines[0][k]) for k in ("loss_objective", "loss_critic", "entropy"))
    assert np.isfinite(lines[-1]["final_eval"]["eval_random_mean"])
