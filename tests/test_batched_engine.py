"""The batched engine's API: shapes, seeding, autoreset, idle rows and errors.

Move-for-move agreement with the reference engine is ``test_batched_diff.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from blot_env.batched import BatchedEngine
from blot_env.batched import _layout as L
from blot_env.errors import ConfigError, IllegalActionError


def _play(eng: BatchedEngine, steps: int) -> tuple[int, np.ndarray]:
    deals = 0
    total = np.zeros(eng.num_players)
    for _ in range(steps):
        out = eng.step(eng.random_actions())
        deals += int(out.done.sum())
        total += out.reward.sum(axis=0)
        assert (out.action_mask.sum(axis=1) > 0).all()
        assert (out.seat >= 0).all()
    return deals, total


@pytest.mark.parametrize("preset", ["bazar", "duel", "open", "belote"])
def test_shapes_dtypes_and_zero_sum_rewards(preset):
    eng = BatchedEngine(preset, num_envs=8, seed=3)
    out = eng.buffers()
    assert out.obs.shape == (8, eng.obs_size) and out.obs.dtype == np.float32
    assert out.action_mask.shape == (8, eng.num_actions) and out.action_mask.dtype == np.int8
    assert out.seat.dtype == np.int64 and out.reward.shape == (8, eng.num_players)
    deals, _ = _play(eng, 300)
    assert deals > 0
    for _ in range(200):
        out = eng.step(eng.random_actions())
        for b in np.flatnonzero(out.done):
            assert out.reward[b].sum() == 0  # both teams' rewards cancel
            if out.result[b, 0] >= 0:
                res = eng.deal_result(int(b))
                t = 0
                assert out.reward[b, 0] == res.score[t] - res.score[1 - t]


def test_same_seed_same_deals_and_rows_independent_of_batch_size():
    a = BatchedEngine("bazar", num_envs=4, seed=123)
    b = BatchedEngine("bazar", num_envs=9, seed=123)
    c = BatchedEngine("bazar", num_envs=4, seed=124)
    hands = slice(L.START_HANDS, L.START_HANDS + 4)
    assert np.array_equal(a.S[:, hands], b.S[:4, hands])
    assert not np.array_equal(a.S[:, hands], c.S[:, hands])
    # replaying the same actions gives the same trajectory
    x = BatchedEngine("duel", num_envs=5, seed=9)
    y = BatchedEngine("duel", num_envs=5, seed=9)
    for _ in range(100):
        act = x.random_actions().copy()
        ox = x.step(act)
        oy = y.step(act)
        assert np.array_equal(ox.obs, oy.obs) and np.array_equal(ox.reward, oy.reward)
    # reset(seed) restarts the generator
    first = x.reset(42).obs.copy()
    assert np.array_equal(first, x.reset(42).obs)


def test_autoreset_gives_the_next_deal_and_idle_rows_without_it():
    eng = BatchedEngine("bazar-app", num_envs=6, seed=1)
    seen_done = False
    for _ in range(400):
        out = eng.step(eng.random_actions())
        if out.done.any():
            seen_done = True
            b = int(np.flatnonzero(out.done)[0])
            assert out.seat[b] >= 0 and eng.S[b, L.PHASE] == 0  # the next deal's auction
            assert eng.S[b, L.NHIST] == 0
    assert seen_done
    idle = BatchedEngine("bazar-app", num_envs=6, seed=1, autoreset=False)
    finished = np.zeros(6, bool)
    for _ in range(400):
        out = idle.step(idle.random_actions())
        finished |= out.done
        assert (out.action_mask[finished].sum(axis=1) == 1).all()  # idle: action 0 only, never all zero
        assert (out.seat[finished] == -1).all()
        assert not out.obs[finished].any()
    assert finished.all()
    back = idle.reset_rows([2])
    assert back.seat[2] >= 0 and back.seat[3] == -1


def test_bad_input_errors_name_the_row_and_the_action():
    eng = BatchedEngine("bazar", num_envs=3, seed=0)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        eng.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="integers"):
        eng.step(np.zeros(3, dtype=np.float32))
    acts = eng.random_actions().copy()
    play = eng.layout.play_id(0)
    acts[1] = play  # a card during the auction
    with pytest.raises(IllegalActionError, match=r"row 1") as e:
        eng.step(acts)
    assert "play 7C" in str(e.value) and "rules.md" in str(e.value)
    acts[1] = 10_000
    with pytest.raises(IllegalActionError, match=r"row 1.*outside"):
        eng.step(acts)
    with pytest.raises(ValueError, match="num_envs"):
        BatchedEngine("bazar", num_envs=0)
    with pytest.raises(ConfigError):
        BatchedEngine("no-such-preset")
    with pytest.raises(ValueError, match="kind"):
        BatchedEngine("bazar", obs_kind="pixels")


@pytest.mark.parametrize("rows", [1, 8192])
def test_batch_size_extremes(rows):
    eng = BatchedEngine("duel-app", num_envs=rows, seed=2)
    for _ in range(40):
        out = eng.step(eng.random_actions())
    assert out.obs.shape == (rows, eng.obs_size)
    assert (out.action_mask.sum(axis=1) > 0).all()


def test_returned_buffers_are_read_only_and_state_matches_rows():
    eng = BatchedEngine("bazar", num_envs=2, seed=4)
    out = eng.step(eng.random_actions())
    with pytest.raises(ValueError):
        out.obs[0, 0] = 1.0
    from blot_env.batched.convert import from_state

    for b in range(2):
        assert np.array_equal(from_state(eng.state(b)), eng.S[b])


def test_reset_restarts_the_random_action_stream_too():
    eng = BatchedEngine("belote", num_envs=3, seed=7)
    runs = []
    for _ in range(2):
        eng.reset(7)
        traj = []
        for _ in range(30):
            traj.append(eng.random_actions().copy())
            eng.step(traj[-1])
        runs.append(np.array(traj))
    assert np.array_equal(runs[0], runs[1])


def test_row_arguments_are_checked():
    eng = BatchedEngine("duel", num_envs=4, seed=1)
    with pytest.raises(ValueError, match="integer"):
        eng.reset_rows([0.7, 1.2])
    with pytest.raises(ValueError, match="integer"):
        eng.reset_rows(np.array([True, False, True, False]))
    with pytest.raises(ValueError, match="distinct"):
        eng.reset_rows([1, 1])
    with pytest.raises(ValueError, match=r"0\.\.3"):
        eng.release_rows([4])
    with pytest.raises(ValueError, match="one entry per row"):
        eng.reset_rows([0, 1], keys=[5])
    with pytest.raises(ValueError, match="non-negative"):
        eng.reset_rows([0], keys=[-1])
    with pytest.raises(ValueError, match="row must be an int"):
        eng.state(-1)
    with pytest.raises(ValueError, match="row must be an int"):
        eng.deal_result(4)
    with pytest.raises(ValueError, match="2\\*\\*64"):
        eng.reset(2**70)
    with pytest.raises(ValueError, match="autoreset"):
        BatchedEngine("duel", num_envs=1, autoreset="no")
    with pytest.raises(ValueError, match="reward_scale"):
        BatchedEngine("duel", num_envs=1, reward_scale=float("nan"))


def test_rules_with_overrides_and_rows_that_cannot_hold_a_config():
    from blot_env import make_rules
    from blot_env.env import raw_env

    eng = BatchedEngine(rules=make_rules("bazar"), num_envs=1, bid_max=30)
    assert eng.cfg.bid_max == 30
    with pytest.raises(ConfigError, match="RulesConfig"):
        BatchedEngine(rules="bazar", num_envs=1)
    # an auction that may outgrow a row, and a duel whose stock does
    for preset, knobs in (("bazar", {"auction_end_passes": 10}), ("duel", {"short_deck": False})):
        with pytest.raises(ConfigError, match="cannot run this rules config"):
            BatchedEngine(preset, num_envs=1, **knobs)
        with pytest.raises(ConfigError, match="compiled deal row cannot hold"):
            raw_env(preset, engine="compiled", **knobs)
        fast, ref = raw_env(preset, **knobs), raw_env(preset, engine="reference", **knobs)
        assert fast.engine == "reference"  # engine="auto" runs such configs on the reference engine
        fast.reset(seed=3)
        ref.reset(seed=3)
        rng = np.random.default_rng(0)
        while not any(fast.terminations.values()):
            mask = fast.observe(fast.agent_selection)["action_mask"]
            assert np.array_equal(mask, ref.observe(ref.agent_selection)["action_mask"])
            a = int(rng.choice(np.flatnonzero(mask)))
            fast.step(a)
            ref.step(a)
        assert fast.rewards == ref.rewards


@pytest.mark.parametrize("preset", ["bazar", "duel-app", "open", "belote"])
def test_observe_gives_every_seat_s_view_finished_deals_included(preset):
    from blot_env.engine import is_terminal
    from blot_env.observation import ObservationEncoder
    from blot_env.view import seat_view

    eng = BatchedEngine(preset, num_envs=6, seed=5, autoreset=False)
    enc = ObservationEncoder(eng.cfg, "observation")
    n = eng.num_players
    finished = 0
    for _ in range(400):
        out = eng.step(eng.random_actions())
        done = np.flatnonzero(out.done)
        rows = np.repeat(np.arange(6), n)
        seats = np.tile(np.arange(n), 6)
        obs = eng.observe(rows, seats)
        assert obs.shape == (6 * n, eng.obs_size) and obs.dtype == np.float32
        for b in done:  # a finished row keeps its deal: every seat's last view of it
            st = eng.state(int(b))
            assert is_terminal(st)
            for s in range(n):
                np.testing.assert_array_equal(obs[b * n + s], enc.encode(seat_view(st, s)))
        finished += done.size
        for b in range(6):  # the seat to act's own observation is the buffer's
            if out.seat[b] >= 0:
                np.testing.assert_array_equal(obs[b * n + int(out.seat[b])], out.obs[b])
        if done.size:
            eng.reset_rows(done)
    assert finished > 0
    with pytest.raises(ValueError, match="seats must lie"):
        eng.observe([0], [n])
    with pytest.raises(ValueError, match="one integer seat per row"):
        eng.observe([0, 1], [0])
    with pytest.raises(ValueError, match="out must be"):
        eng.observe([0], [0], out=np.zeros((1, eng.obs_size), dtype=np.float64))


def test_step_hold_leaves_the_held_rows_as_they_are():
    eng = BatchedEngine("bazar", num_envs=8, seed=2)
    eng.step(eng.random_actions())
    held = np.array([1, 4, 6])
    before = eng.S[held].copy(), eng.buffers().obs[held].copy(), eng.buffers().seat[held].copy()
    moved = np.setdiff1d(np.arange(8), held)
    rows_before = eng.S[moved].copy()
    out = eng.step(eng.random_actions(), hold=held)
    np.testing.assert_array_equal(eng.S[held], before[0])
    np.testing.assert_array_equal(out.obs[held], before[1])
    np.testing.assert_array_equal(out.seat[held], before[2])
    assert not out.done[held].any() and not out.reward[held].any()
    assert all((eng.S[b] != rows_before[i]).any() for i, b in enumerate(moved))  # the others moved
    with pytest.raises(ValueError, match="rows must lie"):
        eng.step(eng.random_actions(), hold=[8])
    np.testing.assert_array_equal(eng.buffers().seat[held], before[2])  # a refused call holds nothing


@pytest.mark.parametrize("obs_dtype", ["float32", "uint8"])
def test_step_phases_only_steps_the_engine_and_its_parts_add_up(obs_dtype):
    from blot_env.batched.profile import step_phases

    seen = BatchedEngine("bazar", num_envs=64, seed=5, obs_dtype=obs_dtype)
    plain = BatchedEngine("bazar", num_envs=64, seed=5, obs_dtype=obs_dtype)
    ticks = iter(range(10**6))
    phases = step_phases(seen, calls=3, clock=lambda: float(next(ticks)))  # one tick per phase
    for _ in range(4):  # the warm-up step and the 3 timed ones
        plain.step(plain.random_actions())
    np.testing.assert_array_equal(seen.S, plain.S)
    for a, b in zip(seen.buffers(), plain.buffers()):
        np.testing.assert_array_equal(a, b)
    per_tick = 1e9 / 64
    assert phases["step"] == pytest.approx(per_tick)
    assert phases["move_score_deal"] == pytest.approx(per_tick - 3 * per_tick)
    with pytest.raises(ValueError, match="calls"):
        step_phases(seen, calls=0)
