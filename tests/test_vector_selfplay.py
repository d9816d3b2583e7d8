"""SelfPlayVector on both engines against the AEC env, and as a drop-in for the trainer's vectors.

Each env of a :class:`blot_env.vector.SelfPlayVector` plays random legal actions; every deal
(its cards read from ``states[e]`` when it is dealt) is replayed on the AEC env with the same
actions: at every step the seat to act, the ``uint8`` observation (the AEC observation
quantized), the mask, and at the end the per-seat rewards, ``passed_out`` and the result.
"""

from __future__ import annotations

import numpy as np
import pytest

from blot_env import PRESETS, make_rules
from blot_env.env import raw_env
from blot_env.errors import ConfigError, IllegalActionError
from blot_env.observation import ObservationEncoder
from blot_env.record import deal_fields
from blot_env.vector import SelfPlayVector


def _play(vec: SelfPlayVector, deals: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    N = vec.num_envs
    out = vec.reset(range(N), rng)
    started = N
    live = {e: {"deal": deal_fields(vec.states[e]), "steps": []} for e in range(N)}
    done_deals = []
    while (out.seat >= 0).any():
        m = out.mask
        k = (rng.random(N) * m.sum(axis=1)).astype(np.int64)
        actions = (np.cumsum(m, axis=1) > k[:, None]).argmax(axis=1)
        for e in np.flatnonzero(out.seat >= 0):
            live[e]["steps"].append((int(out.seat[e]), out.obs[e].copy(), out.mask[e].copy(), int(actions[e])))
        out = vec.step(actions)
        refill = []
        for e in np.flatnonzero(out.done):
            d = live.pop(e)
            d.update(rewards=out.rewards[e].copy(), passed=bool(out.passed_out[e]), result=vec.results[e])
            done_deals.append(d)
            if started < deals:
                refill.append(int(e))
                started += 1
        if refill:
            out = vec.reset(refill, rng)
            for e in refill:
                live[e] = {"deal": deal_fields(vec.states[e]), "steps": []}
    return done_deals


@pytest.mark.parametrize("engine", ["batched", "reference"])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_selfplay_vector_equals_the_aec_env(preset, engine):
    rules = make_rules(preset)
    enc = ObservationEncoder(rules, "observation")
    vec = SelfPlayVector(rules, enc, 3, engine=engine)
    deals = _play(vec, 6, seed=11)
    assert len(deals) == 6
    n = rules.num_players
    aec = raw_env(preset=preset)
    for d in deals:
        aec.reset(seed=0, options={"deal": d["deal"]})
        for seat, obs, mask, action in d["steps"]:
            agent = aec.agent_selection
            assert aec.seat_of(agent) == seat
            o = aec.observe(agent)
            np.testing.assert_array_equal(obs, enc.quantize(o["observation"]))
            np.testing.assert_array_equal(mask, o["action_mask"].astype(bool))
            aec.step(action)
        assert all(aec.terminations.values())
        np.testing.assert_array_equal(d["rewards"], [aec.rewards[f"player_{s}"] for s in range(n)])
        res = aec.deal.result()
        assert d["passed"] == (res.contract is None)
        assert d["result"] == res


def test_selfplay_vector_idles_finished_envs_and_refuses_illegal_actions():
    rules = make_rules("duel")
    for engine in ("batched", "reference"):
        vec = SelfPlayVector(rules, "observation", 2, engine=engine)
        out = vec.reset([1], np.random.default_rng(0))
        assert out.seat[0] == -1 and out.seat[1] >= 0
        bad = int(np.flatnonzero(~out.mask[1])[0])
        with pytest.raises(IllegalActionError, match=r"rules\.md"):
            vec.step(np.array([0, bad]))
        assert vec.privileged(np.array([1])).shape == (1, 32 * 2 + 32)
    with pytest.raises(ConfigError, match="engine"):
        SelfPlayVector(rules, "observation", 2, engine="gpu")
    with pytest.raises(ConfigError, match="match"):
        SelfPlayVector(rules, ObservationEncoder(rules, match=True), 2)


def test_the_trainer_collects_on_the_public_vector(tmp_path):
    """agents/ppo holds no vector classes of its own: its collector steps a SelfPlayVector on
    either engine, and a tiny run trains on each."""
    pytest.importorskip("torch")
    from pathlib import Path

    from agents.ppo.build import build_trainer
    from agents.ppo.config import load_config

    tiny = Path(__file__).resolve().parents[1] / "configs" / "ppo_tiny.yaml"
    for engine in ("batched", "reference"):
        trainer = build_trainer(load_config(tiny, ["total_steps=300", f"rollout.engine={engine}"]), tmp_path / engine)
        assert isinstance(trainer.collector.vec, SelfPlayVector) and trainer.collector.vec.engine == engine
        trainer.train()
        assert trainer.global_step > 0
