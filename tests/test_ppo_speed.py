"""The trainer's fast paths compute what the plain ones do: the sparse input layer, the policy
head by action groups, and the masks they rely on."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.ppo.config import NetworkConfig, TrainConfig  # noqa: E402
from agents.ppo.distributions import MaskedCategorical  # noqa: E402
from agents.ppo.network import action_groups, build_policy  # noqa: E402
from agents.ppo.sparse import SparseInput, SparseLinear  # noqa: E402
from blot_env import PRESETS  # noqa: E402
from blot_env.batched import BatchedEngine  # noqa: E402
from blot_env.observation import ObservationEncoder  # noqa: E402


def _batch(preset: str, steps: int = 40, rows: int = 64, seed: int = 0):
    eng = BatchedEngine(preset, num_envs=rows, seed=seed, obs_dtype="uint8")
    obs, masks, priv = [], [], []
    for _ in range(steps):
        b = eng.buffers()
        obs.append(b.obs.copy())
        masks.append(b.action_mask.astype(bool))
        priv.append(eng.privileged())
        eng.step(eng.random_actions())
    return eng, np.concatenate(obs), np.concatenate(masks), np.concatenate(priv)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_masks_never_mix_action_groups(preset):
    eng, _, masks, _ = _batch(preset, steps=150)
    groups = action_groups(eng.layout)
    inside = np.stack([masks[:, a:b].any(axis=1) for a, b in groups], axis=1)
    assert (inside.sum(axis=1) == 1).all()
    assert len(groups) == 2 and inside.all(axis=0).sum() == 0 and inside.any(axis=0).all()


def test_sparse_layer_matches_the_dense_product():
    eng, obs, _, priv = _batch("bazar", steps=10)
    enc = ObservationEncoder(eng.cfg)
    q = torch.from_numpy(enc.quantum)
    x, p = torch.from_numpy(obs), torch.from_numpy(priv)
    torch.manual_seed(0)
    layer = SparseLinear(x.shape[1] + p.shape[1], 16)
    dense = torch.cat([x.float() * q, p.float()], dim=1)
    sp = SparseInput.from_numerators([(x, q), (p, torch.ones(p.shape[1]))])
    assert sp.index.size == int((dense != 0).sum())
    g = torch.randn(x.shape[0], 16)
    y1 = layer(sp)
    (y1 * g).sum().backward()
    gw1, gb1 = layer.weight.grad.clone(), layer.bias.grad.clone()
    layer.zero_grad()
    y2 = layer(dense)
    (y2 * g).sum().backward()
    torch.testing.assert_close(y1, y2, rtol=1e-5, atol=1e-5)
    # a weight's gradient sums over the batch's rows (640 here): float32 order differences of 1e-5 relative
    torch.testing.assert_close(gw1, layer.weight.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(gb1, layer.bias.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("preset", ["bazar", "duel"])
@pytest.mark.parametrize("input_layer", ["sparse", "dense"])
def test_grouped_head_matches_the_full_head(preset, input_layer):
    eng, obs, masks, priv = _batch(preset, steps=12)
    cfg = TrainConfig(preset=preset, network=NetworkConfig(hidden=(32,), critic="privileged", input_layer=input_layer))
    net = build_policy(cfg, ObservationEncoder(eng.cfg), eng.layout)
    with torch.no_grad():
        net.policy_head.weight.normal_()
    x, m, p = torch.from_numpy(obs), torch.from_numpy(masks), torch.from_numpy(priv)
    logits, value = net(x, p)
    full = MaskedCategorical(logits, m)
    acts = full.sample(torch.Generator().manual_seed(0))
    logp, ent, v = net.policy_terms(x, m, acts, p)
    torch.testing.assert_close(logp, full.log_prob(acts), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ent, full.entropy(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(v, value)
    a, lp, _ = net.act(x, m, torch.Generator().manual_seed(1), privileged=p)
    assert bool(m[torch.arange(len(a)), a].all())
    torch.testing.assert_close(lp, full.log_prob(a), rtol=1e-5, atol=1e-5)
    greedy, _, _ = net.act(x, m, greedy=True, privileged=p)
    assert torch.equal(greedy, full.mode())


@pytest.mark.parametrize("critic", ["privileged", "observation"])
def test_minibatch_rows_taken_from_the_batch_inputs_are_the_same(critic):
    # the trainer extracts the sparse layer's active entries once per update and takes each
    # minibatch's rows from them: the numbers are exactly those of extracting the rows anew
    eng, obs, masks, priv = _batch("bazar", steps=12)
    cfg = TrainConfig(preset="bazar", network=NetworkConfig(hidden=(32,), critic=critic, input_layer="sparse"))
    net = build_policy(cfg, ObservationEncoder(eng.cfg), eng.layout)
    x, m, p = torch.from_numpy(obs), torch.from_numpy(masks), torch.from_numpy(priv)
    acts = MaskedCategorical(net(x, p)[0], m).sample(torch.Generator().manual_seed(0))
    pre = net.sparse_inputs(x, p)
    assert pre is not None and (pre[1] is pre[0]) == (critic == "observation")
    rows = torch.from_numpy(np.random.default_rng(3).permutation(len(x))[: len(x) // 3])
    xa = pre[0].take(rows.numpy())
    inputs = (xa, xa if pre[1] is pre[0] else pre[1].take(rows.numpy()))
    got = net.policy_terms(None, m[rows], acts[rows], inputs=inputs)
    want = net.policy_terms(x[rows], m[rows], acts[rows], p[rows])
    for g, w in zip(got, want):
        assert torch.equal(g, w)
    dense = build_policy(TrainConfig(preset="bazar", network=NetworkConfig(hidden=(32,), input_layer="dense")),
                         ObservationEncoder(eng.cfg), eng.layout)
    assert dense.sparse_inputs(x, p) is None
