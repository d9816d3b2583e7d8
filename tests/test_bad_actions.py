"""A value that is no action id gets a clear IllegalActionError at every layer (the raw env,
PettingZoo's wrapper stack from ``blot_env.env()``, the Gymnasium view): the message names the
value, the seat and agent, and what an action id must be; the deal is untouched. The one rule
is :func:`blot_env.actions.action_id`: an int, a numpy integer or a 0-d integer array in
``0..A-1``; never a bool, a float (not even 3.0), a string, None while the agent is to act, or
a longer array. A legal id that the mask forbids is an illegal *move* (the documented penalty)."""

from __future__ import annotations

import numpy as np
import pytest

import blot_env
from blot_env.actions import action_id
from blot_env.errors import IllegalActionError
from blot_env.gym_env import BlotGymEnv

A = 681  # bazar's action space
NOT_IDS = [
    pytest.param(999, "action id outside 0..680", id="out-of-range"),
    pytest.param(-1, "action id outside 0..680", id="negative"),
    pytest.param(3.7, "got float", id="float"),
    pytest.param(3.0, "got float", id="integral-float"),
    pytest.param(np.float64(2.0), "got float64", id="np-float"),
    pytest.param(None, "an action id is required while the agent is to act", id="None"),
    pytest.param("pass", "got str", id="string"),
    pytest.param(np.array([0]), "got an array of shape (1,)", id="array-1"),
    pytest.param(True, "got bool", id="True"),
    pytest.param(np.bool_(False), "got bool", id="np-bool"),
]


def _shown(value) -> str:
    return f"array({value.tolist()!r}" if isinstance(value, np.ndarray) else repr(value)


def _assert_clear(err: IllegalActionError, value, expected: str, seat: int, agent: str | None) -> None:
    msg = str(err)
    assert _shown(value) in msg  # the value
    assert f"seat {seat}" in msg and err.seat == seat  # the seat (and agent)
    if agent:
        assert agent in msg and err.agent == agent
    assert expected in msg  # what was wrong / expected
    if (value is not None and not isinstance(value, int)) or isinstance(value, bool):
        assert "an action id is an int, a numpy integer or a 0-d integer array" in msg


@pytest.mark.parametrize(("value", "expected"), NOT_IDS)
def test_wrapped_env_refuses_a_value_that_is_no_action_id(value, expected):
    e = blot_env.env(preset="bazar")  # illegal_reward=-1: the penalty is for masked-out ids only
    e.reset(seed=1)
    agent = e.agent_selection
    seat = e.unwrapped.seat_of(agent)
    with pytest.raises(IllegalActionError) as ei:
        e.step(value)
    _assert_clear(ei.value, value, expected, seat, agent)
    # nothing happened: same agent to act, nobody terminated, no penalty
    assert e.agent_selection == agent and not any(e.terminations.values())
    assert all(r == 0 for r in e.rewards.values())


@pytest.mark.parametrize(("value", "expected"), NOT_IDS)
@pytest.mark.parametrize("illegal_reward", [-1.0, None])
def test_gym_view_refuses_a_value_that_is_no_action_id(value, expected, illegal_reward):
    g = BlotGymEnv("bazar", illegal_reward=illegal_reward)
    g.reset(seed=0)
    before = g.raw.game_state
    with pytest.raises(IllegalActionError) as ei:
        g.step(value)
    _assert_clear(ei.value, value, expected, 0, "player_0")
    assert g.raw.game_state is before  # 3.7 is not played as 3, True not as 1


def test_gym_view_true_is_not_played_when_id_1_is_legal():
    """With illegal_reward=None a legal id 1 would be played; True must not be taken for it."""
    g = BlotGymEnv("bazar-app", illegal_reward=None)
    lay = g.raw.layout
    for seed in range(200):
        g.reset(seed=seed)
        if g.action_masks()[1]:  # contra is legal for the learner
            break
    else:
        pytest.skip("no deal in 200 where the learner may contra at its first turn")
    assert lay.describe(1) == "contra"
    before = g.raw.game_state
    with pytest.raises(IllegalActionError, match="got bool"):
        g.step(True)
    assert g.raw.game_state is before
    g.step(np.int64(1))  # the id itself is played
    assert g.raw.game_state is not before


@pytest.mark.parametrize("make", [lambda: blot_env.env(preset="duel"), lambda: blot_env.raw_env("duel")])
@pytest.mark.parametrize("wrap", [int, np.int64, np.int32, np.uint8, np.array], ids=lambda f: f.__name__)
def test_integer_forms_are_ids(make, wrap):
    e = make()
    e.reset(seed=3)
    agent = e.agent_selection
    legal = int(np.flatnonzero(e.observe(agent)["action_mask"])[0])
    e.step(wrap(legal))
    assert e.unwrapped.record()["actions"][0] == e.unwrapped.describe(legal)


def test_masked_out_id_gets_the_penalty_not_an_error():
    e = blot_env.env(preset="bazar", illegal_reward=-3.0)
    e.reset(seed=0)
    mover = e.agent_selection
    bad = int(np.flatnonzero(e.observe(mover)["action_mask"] == 0)[0])
    e.step(bad)
    assert all(e.terminations.values()) and e.rewards[mover] == -3.0


def test_done_agent_may_only_pass_none():
    e = blot_env.env(preset="bazar", illegal_reward=-1.0)
    e.reset(seed=0)
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0]))  # ends the episode
    agent = e.agent_selection
    with pytest.raises(IllegalActionError, match=rf"{agent} is done .*only valid action is None"):
        e.step(0)
    e.step(None)


def test_action_id_helper():
    assert action_id(np.array(5), 0, num_actions=A) == 5 and type(action_id(np.uint16(7), 0)) is int
    with pytest.raises(IllegalActionError, match=r'"680" by seat 2 \(p\): action id outside 0..679'):
        action_id(680, 2, "p", num_actions=680)
    with pytest.raises(IllegalActionError, match=r"env\.parse"):
        action_id("play JH", 0)


@pytest.mark.parametrize("value, kind", [(True, "bool"), ("3", "str"), (3.0, "float"), (None, "NoneType"),
                                         (np.array([3]), "an array of shape (1,)")])
def test_describe_follows_the_action_id_rule(value, kind):
    from blot_env.actions import UnknownActionError

    e = blot_env.raw_env("bazar")
    with pytest.raises(UnknownActionError) as ei:
        e.describe(value)
    assert f"expected an integer action id in 0..680, got {kind}" in str(ei.value)
    assert e.describe(np.int64(1)) == e.describe(np.array(1)) == e.describe(1) == "contra"
    with pytest.raises(UnknownActionError, match=r"action id 681 outside 0\.\.680"):
        e.describe(681)
