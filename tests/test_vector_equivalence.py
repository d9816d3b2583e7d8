"""BlotVectorEnv against the AEC env, move for move, on every preset and across autoresets.

The vector env plays random learner actions (random opponents: the engine's sampler, or a
batch callable) with ``records=True``, so every finished deal comes back as a deal record
(dealer, hands, stock, every action, result). Each env's episodes are then replayed on the
AEC env (``blot_env.env.raw_env``) from those records: the same cards, the same actions, and
in match mode the AEC env's own choice of the next dealer (checked against the record). For
every learner decision the observation, the mask, the seat to act and the action must be
equal; after it, the reward and the done flags; at an episode's end the final observation
(``infos["final_obs"]``), and for every deal the AEC env's record (``record()`` /
``match_record()``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from blot_env import PRESETS
from blot_env.env import raw_env
from blot_env.vector import BlotVectorEnv


@dataclass
class Decision:
    obs: np.ndarray
    mask: np.ndarray
    seat: int
    action: int
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    final_obs: dict | None = None


@dataclass
class EnvLog:
    decisions: list[Decision] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (``[B, A]``)."""
    m = np.asarray(mask, dtype=bool)
    k = (rng.random(m.shape[0]) * m.sum(axis=1)).astype(np.int64)
    return (np.cumsum(m, axis=1) > k[:, None]).argmax(axis=1)


def play_vector(env: Any, steps: int, seed: int, reset_seed: int = 0) -> list[EnvLog]:
    """``steps`` steps of random legal learner actions on a Gymnasium-API vector env."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=reset_seed)
    logs = [EnvLog() for _ in range(env.num_envs)]
    for _ in range(steps):
        a = random_legal(obs["action_mask"], rng)
        nobs, r, term, trunc, ninfo = env.step(a)
        for e, log in enumerate(logs):
            d = Decision(obs["observation"][e].copy(), obs["action_mask"][e].copy(), int(info["seat"][e]), int(a[e]),
                         float(r[e]), bool(term[e]), bool(trunc[e]))
            if term[e] or trunc[e]:
                d.final_obs = ninfo["final_obs"][e]
            log.decisions.append(d)
        if "deal_record" in ninfo:
            for e in np.flatnonzero(ninfo["_deal_record"]):
                logs[e].records.append(ninfo["deal_record"][e])
        obs, info = nobs, ninfo
    return logs


def replay_on_aec(log: EnvLog, seats: tuple[int, ...], **aec_kwargs: Any) -> int:
    """Replay ``log``'s finished episodes on the AEC env and compare; returns the episodes checked."""
    decisions = [d for d in log.decisions]
    records = list(log.records)
    k = 0
    episodes = 0
    n_done = sum(d.terminated or d.truncated for d in decisions)
    while episodes < n_done:
        aec = raw_env(**aec_kwargs)
        queue = list(records)
        cur: dict[str, Any] = {}
        played: list[dict] = []
        orig = aec._start_deal

        def start(dealer, deal=None, queue=queue, cur=cur, played=played, orig=orig):
            rec = queue.pop(0)
            assert dealer == rec["dealer"], "the next dealer of the match"
            played.append(rec)
            cur.update(rec=rec, pos=0)
            orig(dealer, {"dealer": rec["dealer"], "hands": rec["hands"], "stock": rec["stock"]})

        aec._start_deal = start
        aec.reset(seed=0, options={"dealer": records[0]["dealer"]})
        me = f"player_{seats[0]}"
        got: list[Decision] = []
        last_seat = None
        while True:
            agent = aec.agent_selection
            if aec.terminations[agent] or aec.truncations[agent]:
                break
            seat = aec.seat_of(agent)
            rec, pos = cur["rec"], cur["pos"]
            action = aec.parse(rec["actions"][pos])
            cur["pos"] = pos + 1
            if seat in seats:
                o = aec.observe(agent)
                got.append(Decision(o["observation"].copy(), o["action_mask"].copy(), seat, action))
                last_seat = seat
            aec.step(action)
            if got:
                got[-1].reward += aec.rewards[me]
            if aec.terminations[me] or aec.truncations[me]:
                got[-1].terminated = bool(aec.terminations[me])
                got[-1].truncated = bool(aec.truncations[me])
                got[-1].final_obs = aec.observe(f"player_{last_seat}")
                break
        mine = decisions[k:k + len(got)]
        assert len(mine) == len(got)
        for i, (a, b) in enumerate(zip(mine, got)):
            where = f"episode {episodes}, learner decision {i}"
            assert a.seat == b.seat and a.action == b.action, where
            np.testing.assert_array_equal(a.obs, b.obs, err_msg=where)
            np.testing.assert_array_equal(a.mask, b.mask, err_msg=where)
            assert a.reward == b.reward, where
            assert (a.terminated, a.truncated) == (b.terminated, b.truncated), where
            if b.final_obs is not None:
                np.testing.assert_array_equal(a.final_obs["observation"], b.final_obs["observation"], err_msg=where)
                np.testing.assert_array_equal(a.final_obs["action_mask"], b.final_obs["action_mask"], err_msg=where)
        # the AEC env's records of the deals it played equal the vector env's
        assert aec.match_record()["deals"] == played
        k += len(got)
        del records[:len(played)]
        episodes += 1
    return episodes


def check_against_aec(env: BlotVectorEnv, steps: int, seed: int = 0, **aec_kwargs: Any) -> int:
    logs = play_vector(env, steps, seed)
    kw = {"preset": env.cfg.preset, "episode": env.episode, "observation_kind": env.observation_kind,
          "reward_scale": env.reward_scale, "deal_rewards": env.deal_rewards, "max_deals": env.max_deals,
          **aec_kwargs}
    return sum(replay_on_aec(log, env.seats, **kw) for log in logs)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_deal_episodes_equal_the_aec_env(preset):
    env = BlotVectorEnv(num_envs=6, preset=preset, records=True, reward_scale=0.5)
    episodes = check_against_aec(env, steps=60, seed=1)
    assert episodes >= 12  # several autoresets per env


@pytest.mark.parametrize("preset", list(PRESETS))
def test_match_episodes_equal_the_aec_env(preset):
    """Match mode: the dealer rotates (the vector env turns its seats so that the engine's
    random dealer sits where the match wants it), the match pieces, the +1/-1 and the deal
    rewards, and the truncation after ``max_deals``."""
    env = BlotVectorEnv(num_envs=4, preset=preset, episode="match", deal_rewards=True, reward_scale=0.01,
                        max_deals=3, records=True)
    episodes = check_against_aec(env, steps=60, seed=2)
    assert episodes >= 4


def test_other_seats_fixed_dealer_and_a_callable_opponent():
    """The learner on the side of seat 1, a fixed dealer (the seats are turned), the
    information-state kind and a batch callable for the opponents."""
    calls = []

    def lowest_legal(obs, mask):
        calls.append(obs.shape)
        return mask.argmax(axis=1)

    env = BlotVectorEnv(num_envs=5, preset="bazar", seats=(1, 3), dealer=2, opponents=lowest_legal,
                        observation_kind="information_state", records=True)
    assert check_against_aec(env, steps=50, seed=3) >= 5
    assert calls and all(s[1] == env.obs_size for s in calls)
    env = BlotVectorEnv(num_envs=4, preset="duel-app", seats=1, dealer=0, records=True)
    assert check_against_aec(env, steps=40, seed=4) >= 5


def test_a_single_learner_seat_with_opponent_partner():
    env = BlotVectorEnv(num_envs=4, preset="belote", seats=[2], opponents={0: "random", 1: "random", 3: "random"},
                        records=True)
    logs = play_vector(env, 40, seed=5)
    assert all(d.seat == 2 for log in logs for d in log.decisions)
    assert sum(replay_on_aec(log, (2,), preset="belote") for log in logs) >= 4


def test_reset_seed_reproduces_and_episodes_do_not_depend_on_the_batch():
    a = play_vector(BlotVectorEnv(num_envs=3, preset="duel", records=True), 30, seed=6, reset_seed=9)
    b = play_vector(BlotVectorEnv(num_envs=3, preset="duel", records=True), 30, seed=6, reset_seed=9)
    assert [r for log in a for r in log.records] == [r for log in b for r in log.records]
    c = play_vector(BlotVectorEnv(num_envs=3, preset="duel", records=True), 30, seed=6, reset_seed=10)
    assert [r for log in a for r in log.records] != [r for log in c for r in log.records]
    # env 0's first deal is the same in a batch of 1 (the engine deals row by row)
    one = BlotVectorEnv(num_envs=1, preset="duel")
    three = BlotVectorEnv(num_envs=3, preset="duel")
    o1, _ = one.reset(seed=4)
    o3, _ = three.reset(seed=4)
    np.testing.assert_array_equal(o1["observation"][0], o3["observation"][0])


def test_make_vec_gives_the_vector_env_for_every_preset():
    from blot_env.gym_env import vector_id

    for preset in PRESETS:
        env = gym.make_vec(vector_id(preset), num_envs=3, vectorization_mode="vector_entry_point")
        assert isinstance(env.unwrapped, BlotVectorEnv) and env.unwrapped.cfg.preset == preset
        assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        assert env.single_action_space.n == env.unwrapped.num_actions
    env = gym.make_vec("blot_env/Bazar-v0", num_envs=2, seats=(1, 3))
    assert env.unwrapped.seats == (1, 3)
