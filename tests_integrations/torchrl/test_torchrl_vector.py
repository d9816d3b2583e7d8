"""BlotBatchedEnv, the batched engine as a TorchRL EnvBase (runs in .venv-torchrl).

TorchRL's spec check; step by step the same observations, masks, rewards and done flags as
:class:`blot_env.vector.BlotVectorEnv` (which tests/test_vector_equivalence.py checks against
the AEC env), with the final observation shown at an episode's end and the next episode's
first one after the reset; a ``MaskedCategorical`` policy's rollout over the ``action_mask``
entry; a partial reset of an env in the middle of its episode.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torchrl.envs.utils import check_env_specs
from torchrl.modules import MaskedCategorical

from blot_env.integrations.torchrl import BlotBatchedEnv
from blot_env.vector import BlotVectorEnv


@pytest.mark.parametrize("preset", ["bazar", "duel"])
def test_spec_check(preset):
    env = BlotBatchedEnv(num_envs=3, preset=preset, seed=0)
    check_env_specs(env)
    assert env.batch_size == torch.Size([3])


@pytest.mark.parametrize("preset", ["bazar", "duel-app", "belote"])
def test_steps_equal_the_gymnasium_vector_env(preset):
    B = 4
    env = BlotBatchedEnv(num_envs=B, preset=preset, seed=3, reward_scale=0.1)
    ref = BlotVectorEnv(num_envs=B, preset=preset, reward_scale=0.1)
    td = env.reset()
    obs, _ = ref.reset(seed=3)
    gen = torch.Generator().manual_seed(0)
    ends = 0
    for _ in range(60):
        np.testing.assert_array_equal(td["observation"].numpy(), obs["observation"])
        np.testing.assert_array_equal(td["action_mask"].numpy(), obs["action_mask"].astype(bool))
        td["action"] = _sample(td["action_mask"], gen)
        out, td = env.step_and_maybe_reset(td)
        obs, r, term, trunc, info = ref.step(out["action"].numpy())
        done = term | trunc
        np.testing.assert_allclose(out["next", "reward"].numpy()[:, 0], r.astype(np.float32))
        np.testing.assert_array_equal(out["next", "done"].numpy()[:, 0], done)
        np.testing.assert_array_equal(out["next", "terminated"].numpy()[:, 0], term)
        for e in range(B):
            shown = out["next", "observation"][e].numpy()
            if done[e]:
                ends += 1
                np.testing.assert_array_equal(shown, info["final_obs"][e]["observation"])
                assert not out["next", "action_mask"][e].any()
            else:
                np.testing.assert_array_equal(shown, obs["observation"][e])
    assert ends >= 4


def _sample(mask: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A uniformly random legal action per row of ``mask`` (``bool[B, A]``)."""
    w = mask.float()
    return torch.multinomial(w, 1, generator=gen).squeeze(-1)


def test_a_masked_categorical_policy_plays_only_legal_actions():
    env = BlotBatchedEnv(num_envs=8, preset="bazar", seed=1)
    D, A = env.venv.obs_size, env.venv.num_actions
    torch.manual_seed(0)
    net = torch.nn.Linear(D, A)

    def policy(td):
        dist = MaskedCategorical(logits=net(td["observation"]), mask=td["action_mask"])
        td["action"] = dist.sample()
        td["sample_log_prob"] = dist.log_prob(td["action"])
        return td

    with torch.no_grad():
        roll = env.rollout(80, policy, break_when_any_done=False)
    assert roll.batch_size == torch.Size([8, 80])
    legal = roll["action_mask"].gather(-1, roll["action"].unsqueeze(-1)).squeeze(-1)
    assert bool(legal.all())  # (an illegal action would have raised IllegalActionError)
    assert torch.isfinite(roll["sample_log_prob"]).all()
    assert int(roll["next", "done"].sum()) > 8  # episodes ended and were reset inside the rollout
    assert float(roll["next", "reward"].abs().sum()) > 0


def test_a_partial_reset_in_mid_episode_starts_a_new_deal():
    env = BlotBatchedEnv(num_envs=3, preset="duel", seed=2)
    td = env.reset()
    gen = torch.Generator().manual_seed(1)
    td["action"] = _sample(td["action_mask"], gen)
    _, td = env.step_and_maybe_reset(td)
    before = td["observation"].clone()
    td["_reset"] = torch.tensor([[False], [True], [False]])
    after = env.reset(td)
    assert torch.equal(after["observation"][[0, 2]], before[[0, 2]])
    assert not torch.equal(after["observation"][1], before[1])
    assert not after["done"].any()
