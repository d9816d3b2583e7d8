"""The single-agent Gymnasium wrapper: env checker, policies of both forms, masks, MaskablePPO."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from blot_env import PRESETS
from blot_env.errors import IllegalActionError
from blot_env.gym_env import BlotGymEnv, gym_id


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("preset", list(PRESETS))
def test_check_env_and_registry(preset):
    e = gymnasium.make(gym_id(preset))
    check_env(e.unwrapped, skip_render_check=True)
    assert e.unwrapped.raw.cfg.preset == preset


def test_make_returns_the_env_with_its_action_masks():
    """``gymnasium.make(...).action_masks()`` works: no wrapper hides it."""
    e = gymnasium.make("BlotDuel-v0")
    with pytest.raises(gymnasium.error.ResetNeeded, match="reset"):
        e.step(0)  # the order is still enforced
    e.reset(seed=0)
    mask = e.action_masks()
    assert mask.dtype == bool and mask.shape == (e.action_space.n,) and mask.any()
    assert (mask == e.get_wrapper_attr("action_masks")()).all()


def _episode(env: BlotGymEnv, seed: int, rng: np.random.Generator):
    obs, info = env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any()
        assert env.observation_space.contains(obs)
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        total += r
        steps += 1
        if term or trunc:
            assert not env.action_masks().any()
            return total, steps, info


def test_policy_forms_and_reward():
    calls = {"view": 0, "obs": 0}

    def view_policy(view):
        calls["view"] += 1
        return view.legal[0]

    def obs_policy(obs, mask):
        calls["obs"] += 1
        assert obs.dtype == np.float32 and mask.dtype == np.int8
        return int(np.flatnonzero(mask)[-1])

    env = BlotGymEnv("bazar-app", seat=1, opponents={0: view_policy, 2: obs_policy, 3: "random"})
    rng = np.random.default_rng(0)
    for k in range(5):
        total, _steps, info = _episode(env, k, rng)
        score = info["deal_result"]["score"]
        assert total == score[1] - score[0]  # seat 1 is on side 1
    assert calls["view"] > 0 and calls["obs"] > 0


def test_seeded_episodes_are_reproducible_and_random_seat():
    def run():
        env = BlotGymEnv("duel", seat="random")
        rng = np.random.default_rng(3)
        out = []
        for k in range(4):
            out.append(_episode(env, 100 + k, rng)[:2] + (env.seat,))
        return out

    a, b = run(), run()
    assert a == b
    assert {x[2] for x in a} == {0, 1}  # the learner sits at both seats


def test_illegal_learner_action():
    env = BlotGymEnv("bazar")
    env.reset(seed=0)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    _, r, term, _, info = env.step(bad)
    assert term and r == -1.0 and info["illegal_action"]
    strict = BlotGymEnv("bazar", illegal_reward=None)
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError):
        strict.step(bad)


def test_match_episode_and_render():
    env = BlotGymEnv("duel-app", episode="match", render_mode="ansi")
    total, _steps, info = _episode(env, 0, np.random.default_rng(1))
    assert total in (1.0, -1.0) and "match_winner" in info
    assert "match" in env.render()


def test_maskable_ppo_smoke(tmp_path, monkeypatch):
    sb3 = pytest.importorskip("sb3_contrib", reason="sb3-contrib is in the test extra: pip install -e '.[test]'")
    # SB3's default logger makes a fresh /tmp/SB3-<time> folder per model; keep it in tmp_path.
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))
    env = gymnasium.make("BlotBazarApp-v0")
    model = sb3.MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, verbose=0,
                            policy_kwargs={"net_arch": [64]})
    model.learn(total_timesteps=256)
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]


def _first(view):
    return view.legal[0]


@pytest.mark.parametrize("kwargs, needle", [
    ({"seat": True}, "seat must be 0..3 or 'random', got True"),
    ({"seat": "0"}, "seat must be 0..3 or 'random', got '0'"),
    ({"opponents": None}, "opponents must be 'random', a policy, a list of 4 policies (one per seat) or a dict"),
    ({"opponents": 3}, "got int"),
    ({"opponents": ["rules"] * 4}, "opponents[0]: expected a policy (a callable), 'random' or None, got 'rules'"),
    ({"opponents": {1: 5}}, "opponents[1]: expected a policy (a callable), 'random' or None, got 5"),
    ({"opponents": {"1": _first}}, "opponents: key '1' is no seat; the keys of an opponents dict are seats 0..3"),
    ({"opponents": {9: _first}}, "opponents: key 9 is no seat"),
    ({"illegal_reward": "x"}, "illegal_reward must be a finite number, got 'x'"),
])
def test_bad_arguments_are_named(kwargs, needle):
    from blot_env.errors import ConfigError

    with pytest.raises(ConfigError) as ei:
        BlotGymEnv("bazar", **kwargs)
    assert needle in str(ei.value)
    assert BlotGymEnv("bazar", seat=np.int64(2)).seat == 2  # a numpy integer is a seat


@pytest.mark.parametrize("returned, needle", [
    (lambda o, m: float(np.flatnonzero(m)[0]) + 0.3, "got float"),  # int() would have played id 0
    (lambda o, m: float(np.flatnonzero(m)[0]), "got float"),
    (lambda o, m: "pass", "got str"),
    (lambda o, m: None, "an action id is required"),
    (lambda o, m: True, "got bool"),
    (lambda o, m: 10**6, "action id outside 0..680"),
])
def test_an_opponent_policy_that_returns_no_action_id_is_named(returned, needle):
    e = BlotGymEnv("bazar", seat=0, opponents=returned, dealer=0)  # seat 1 speaks first
    with pytest.raises(IllegalActionError) as ei:
        e.reset(seed=0)
    assert "by seat 1 (player_1, opponent policy)" in str(ei.value) and needle in str(ei.value)
