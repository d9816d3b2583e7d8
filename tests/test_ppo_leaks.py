"""The PPO actor reads only what its seat may see; the privileged critic may read every hand.

Three checks: (1) the engine's compact ``uint8`` observation, which the actor reads during
training, is exactly the quantized encoding of the acting seat's view (so the resampling leak
test of tests/test_leaks.py covers it); (2) the actor's outputs under the resampling check
itself; (3) the actor's outputs do not move when the privileged features change, while the
critic's do.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_leaks import check_no_leak  # noqa: E402

from agents.ppo.config import NetworkConfig, TrainConfig  # noqa: E402
from agents.ppo.network import build_policy  # noqa: E402
from blot_env import PRESETS, make_rules  # noqa: E402
from blot_env.actions import layout_for  # noqa: E402
from blot_env.batched import BatchedEngine  # noqa: E402
from blot_env.observation import ObservationEncoder, privileged_features  # noqa: E402
from blot_env.view import seat_view  # noqa: E402


def _policy(preset: str, critic: str = "privileged"):
    cfg = TrainConfig(preset=preset, network=NetworkConfig(hidden=(32,), critic=critic))
    rules = make_rules(preset)
    enc = ObservationEncoder(rules, "observation")
    torch.manual_seed(0)
    net = build_policy(cfg, enc, layout_for(rules)).eval()
    with torch.no_grad():  # a non-degenerate actor: the policy head's init is tiny
        net.policy_head.weight.normal_(0.0, 1.0)
    return net, enc, rules


@pytest.mark.parametrize("preset", list(PRESETS))
def test_engine_uint8_obs_is_the_quantized_view(preset):
    eng = BatchedEngine(preset, num_envs=16, seed=4, obs_dtype="uint8")
    enc = ObservationEncoder(eng.cfg, "observation")
    checked = 0
    for _ in range(120):
        out = eng.buffers()
        for b in range(0, 16, 3):
            seat = int(out.seat[b])
            if seat >= 0:
                want = enc.quantize(enc.encode(seat_view(eng.state(b), seat)))
                np.testing.assert_array_equal(out.obs[b], want)
                priv = eng.privileged([b])[0]
                np.testing.assert_array_equal(priv, privileged_features(eng.state(b), seat))
                checked += 1
        eng.step(eng.random_actions())
    assert checked > 300


@pytest.mark.parametrize("preset", ["bazar", "duel", "open", "belote"])
def test_actor_outputs_survive_resampling(preset):
    """The resampling check of tests/test_leaks.py on the actor's logits (through the compact
    input the trainer uses); the same check on the privileged critic's value must fail."""
    net, enc, rules = _policy(preset)

    def actor(state, o):
        x = torch.from_numpy(enc.quantize(enc.encode(seat_view(state, o))))[None]
        with torch.no_grad():
            return net.logits(x)[0].numpy()

    def critic(state, o):
        x = torch.from_numpy(enc.quantize(enc.encode(seat_view(state, o))))[None]
        p = torch.from_numpy(privileged_features(state, o))[None]
        with torch.no_grad():
            return net.value(x, p).numpy()

    st = check_no_leak(rules, actor, deals=8, seed=3)
    assert st["mismatch"] == 0 and st["compared"] > 80 and st["changed"] > 30, st
    assert check_no_leak(rules, critic, deals=4, seed=3)["mismatch"] > 0  # the critic does see the hands


def test_actor_ignores_privileged_features():
    net, _, _ = _policy("bazar")
    eng = BatchedEngine("bazar", num_envs=64, seed=2, obs_dtype="uint8")
    for _ in range(30):
        eng.step(eng.random_actions())
    b = eng.buffers()
    obs = torch.from_numpy(b.obs.copy())
    mask = torch.from_numpy(b.action_mask.astype(bool))
    p1 = torch.from_numpy(eng.privileged())
    p2 = p1[torch.randperm(p1.shape[0])]
    a1, lp1, v1 = net.act(obs, mask, greedy=True, privileged=p1)
    a2, lp2, v2 = net.act(obs, mask, greedy=True, privileged=p2)
    assert torch.equal(a1, a2) and torch.equal(lp1, lp2)
    assert not torch.equal(v1, v2)
    acts = a1
    l1, e1, w1 = net.policy_terms(obs, mask, acts, p1)
    l2, e2, w2 = net.policy_terms(obs, mask, acts, p2)
    assert torch.equal(l1, l2) and torch.equal(e1, e2) and not torch.equal(w1, w2)
    with pytest.raises(ValueError, match="privileged"):
        net.value(obs)
