"""BlotSB3VecEnv: the same trajectories as BlotVectorEnv (so as the AEC env), and sb3-contrib's
MaskablePPO trains on it with no illegal action."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from test_vector_equivalence import Decision, EnvLog, random_legal, replay_on_aec

from blot_env.vector import BlotVectorEnv
from blot_env.vector.sb3 import BlotSB3VecEnv


@pytest.mark.parametrize("preset", ["bazar", "duel"])
def test_sb3_vec_env_steps_like_the_gymnasium_vector_env(preset):
    sb3 = BlotSB3VecEnv(num_envs=4, preset=preset, seed=7, records=True)
    gym_env = BlotVectorEnv(num_envs=4, preset=preset, records=True)
    o1 = sb3.reset()
    _, info = gym_env.reset(seed=7)
    rng = np.random.default_rng(0)
    logs = [EnvLog() for _ in range(4)]
    episodes = 0
    for _ in range(60):
        masks = np.stack(sb3.env_method("action_masks"))
        np.testing.assert_array_equal(masks, gym_env.action_masks())
        a = random_legal(masks, rng)
        n1, r1, d1, i1 = sb3.step(a)
        n2, r2, t2, tr2, i2 = gym_env.step(a)
        for k in ("observation", "action_mask"):
            np.testing.assert_array_equal(n1[k], n2[k])
        assert r1.dtype == np.float32 and d1.dtype == bool
        np.testing.assert_array_equal(r1, r2.astype(np.float32))
        np.testing.assert_array_equal(d1, t2 | tr2)
        for e in np.flatnonzero(d1):
            episodes += 1
            final = i2["final_obs"][e]["observation"]
            np.testing.assert_array_equal(i1[e]["terminal_observation"]["observation"], final)
            assert i1[e]["episode"]["r"] == i2["final_info"]["return"][e]
            assert i1[e]["episode"]["l"] == i2["final_info"]["length"][e]
            assert i1[e]["TimeLimit.truncated"] is False
        for e in range(4):
            logs[e].decisions.append(Decision(o1["observation"][e].copy(), o1["action_mask"][e].copy(),
                                              int(info["seat"][e]), int(a[e]), float(r1[e]), bool(d1[e]), False,
                                              i1[e].get("terminal_observation")))
            if "deal_record" in i1[e]:
                logs[e].records.append(i1[e]["deal_record"])
        o1, info = n1, i2
    assert episodes >= 8
    assert sum(replay_on_aec(log, gym_env.seats, preset=preset) for log in logs) == episodes


def test_maskable_ppo_trains_on_it_without_an_illegal_action():
    torch = pytest.importorskip("torch")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    torch.set_num_threads(1)
    venv = BlotSB3VecEnv(num_envs=16, preset="bazar", seed=0)
    checked = {"actions": 0, "illegal": 0}
    step_async = venv.step_async

    def audited(actions):
        m = venv.action_masks()
        a = np.asarray(actions)
        checked["actions"] += a.size
        checked["illegal"] += int((~m[np.arange(a.size), a]).sum())
        step_async(actions)

    venv.step_async = audited
    model = sb3_contrib.MaskablePPO("MultiInputPolicy", venv, n_steps=128, batch_size=512, n_epochs=2, seed=0,
                                    policy_kwargs={"net_arch": [64]}, device="cpu")
    model.learn(4096)
    assert checked["actions"] >= 4096 and checked["illegal"] == 0
    assert model.num_timesteps >= 4096 and len(model.ep_info_buffer) > 50  # "episode" infos: SB3 logs returns
