"""PettingZoo classic's wrapper stack, with direct access to the env's bookkeeping.

PettingZoo's ``BaseWrapper`` forwards every attribute it does not hold through
``__getattr__``, one wrapper at a time: behind three wrappers reading ``env.terminations`` or
``env.agent_selection`` costs about 3 µs, and an AEC step reads them a dozen times (measured
with scripts/bench_env.py: the plain stack ran at 40 % of the raw env's speed). These
subclasses keep the wrappers' behaviour and messages (they *are*
``TerminateIllegalWrapper``, ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``) and

* read the AEC bookkeeping attributes (``agents``, ``agent_selection``, ``rewards``,
  ``_cumulative_rewards``, ``terminations``, ``truncations``, ``infos``) straight from the
  unwrapped env, which is where the forwarding chain ends anyway;
* take a short path for the common case of each method (a legal action of a live agent,
  ``last()``, the ``agent_iter`` loop) and hand every other case to PettingZoo's own code;
  around exactly this module's stack (:func:`classic_stack`), ``OrderEnforcingWrapper`` does
  the inner wrappers' work of ``last()``, a legal step and a dead step itself instead of
  calling through them (the same effect: ``tests/test_env_fast.py`` plays it against
  PettingZoo's classes; the measured effect is in docs/env.md, "Throughput");
* refuse a value that is no action id with :class:`~blot_env.errors.IllegalActionError`
  naming the value, the seat and agent, and what an id must be
  (:func:`blot_env.actions.action_id`: an int, numpy integer or 0-d integer array in
  ``0..A-1``; never a bool, a float, a string, or None while the agent is to act), where
  PettingZoo's ``AssertOutOfBoundsWrapper`` raises a bare ``AssertionError``. A legal id that
  the mask forbids is still PettingZoo's illegal move (``TerminateIllegalWrapper``'s penalty).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers as pzw
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from .actions import action_id
from .errors import IllegalActionError

_FIELDS = ("agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations", "truncations",
           "infos")
_NEED_RESET = frozenset(("agents", "agent_selection", "rewards", "terminations", "truncations", "infos"))


def _direct(name: str, check_reset: bool) -> property:
    def get(self) -> Any:
        if check_reset and name in _NEED_RESET and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    def set_(self, value: Any) -> None:
        setattr(self._raw, name, value)

    return property(get, set_, doc=f"``{name}`` of the unwrapped env.")


class _Direct:
    """Mixin: set ``self._raw`` (the unwrapped env) after ``BaseWrapper.__init__``."""

    def _bind(self, env: AECEnv) -> None:
        self._raw = env.unwrapped

    def _seat(self, agent: str) -> int:
        seat_of = getattr(self._raw, "seat_of", None)
        return seat_of(agent) if seat_of else -1

    def _is_done(self, agent: str) -> bool:
        raw = self._raw
        return bool(raw.terminations.get(agent) or raw.truncations.get(agent))

    def _legal_strings(self, agent: str) -> list[str]:
        """The agent's legal actions as strings (for an error message only)."""
        raw = self._raw
        mask = raw.observe(agent)["action_mask"]
        describe = getattr(raw, "describe", str)
        return [describe(int(a)) for a in np.flatnonzero(mask)]

    def _checked(self, action: Any, num_actions: int | None) -> Any:
        """``action`` as an int id for a live agent, ``None`` for a done one.

        Raises:
            IllegalActionError: not an action id (value, seat and agent named), or a value
                other than None for an agent that is done.
        """
        agent = self._raw.agent_selection
        seat = self._seat(agent)
        if self._is_done(agent):
            if action is not None:
                raise IllegalActionError(repr(action), seat, f"{agent} is done (terminated or truncated): the "
                                         "only valid action is None", agent=agent)
            return None
        return action_id(action, seat, agent, num_actions, legal=lambda: self._legal_strings(agent))


def _discrete_size(env: AECEnv) -> int:
    """``n`` when every agent's action space is ``Discrete(n)`` starting at 0 (then an ``int``
    ``a`` with ``0 <= a < n`` is in the space without asking it), else -1."""
    sizes = set()
    for a in getattr(env, "possible_agents", ()):
        sp = env.action_space(a)
        if type(sp) is not spaces.Discrete or int(sp.start) != 0:
            return -1
        sizes.add(int(sp.n))
    return sizes.pop() if len(sizes) == 1 else -1


class TerminateIllegalWrapper(_Direct, pzw.TerminateIllegalWrapper):
    """``pettingzoo.utils.wrappers.TerminateIllegalWrapper`` with direct bookkeeping access.

    Short path of ``step``: the observation seen last is a dict whose ``action_mask`` allows
    the action of a live agent, and no illegal move ended the episode: step the inner env.
    Otherwise the action is checked by :func:`blot_env.actions.action_id` (IllegalActionError
    for a value that is no id) before PettingZoo's code gives a masked-out id its penalty.
    """

    def __init__(self, env: AECEnv, illegal_reward: float):
        super().__init__(env, illegal_reward)
        self._bind(env)
        self._n = _discrete_size(env)

    def observe(self, agent: str) -> Any:
        obs = self.env.observe(agent)
        raw = self._raw
        if agent == raw.agent_selection:
            self._prev_obs = obs
            infos = raw.infos
            self._prev_info = infos.get(agent, {})
        return obs

    def step(self, action: Any) -> None:
        prev = self._prev_obs
        if type(prev) is dict and not self._terminated and type(action) is int:
            raw = self._raw
            agent = raw.agent_selection
            mask = prev.get("action_mask")
            if (mask is not None and 0 <= action < len(mask) and mask[action]
                    and not raw.terminations[agent] and not raw.truncations[agent]):
                self._prev_obs = None
                self._prev_info = None
                self.env.step(action)
                return
        super().step(self._checked(action, self._n if self._n > 0 else None))


class AssertOutOfBoundsWrapper(_Direct, pzw.AssertOutOfBoundsWrapper):
    """``pettingzoo.utils.wrappers.AssertOutOfBoundsWrapper`` with direct bookkeeping access.

    Short path of ``step``: an ``int`` inside a ``Discrete(n)`` space that starts at 0. Any
    other value goes through :func:`blot_env.actions.action_id`.

    Raises:
        IllegalActionError: a value that is no action id in ``0..n-1`` (a bool, a float, a
            string, an array other than 0-d integer, None while the agent is to act), or a
            value other than None for an agent that is done.
    """

    def __init__(self, env: AECEnv):
        super().__init__(env)
        self._bind(env)
        self._n = _discrete_size(env)

    def step(self, action: Any) -> None:
        if type(action) is int and 0 <= action < self._n:
            self.env.step(action)
        elif self._n < 0:  # not one Discrete(n) space: PettingZoo's check
            super().step(action)
        else:
            self.env.step(self._checked(action, self._n))


def _defined_by(cls: type, name: str) -> type | None:
    """The class of ``cls.__mro__`` whose body defines ``name`` (None: none)."""
    return next((k for k in cls.__mro__ if name in vars(k)), None)


def _fused_chain(env: AECEnv) -> tuple[TerminateIllegalWrapper | None, int] | None:
    """``(terminate, n)`` when ``env`` is exactly this module's ``AssertOutOfBoundsWrapper``
    around (this module's ``TerminateIllegalWrapper`` around) the unwrapped env, with one
    ``Discrete(n)`` action space; ``terminate`` is that wrapper or None. Else None: another
    stack (a subclass, a user's wrapper in between) always goes through every wrapper."""
    if type(env) is not AssertOutOfBoundsWrapper or env._n <= 0:
        return None
    inner = env.env
    term = None
    if type(inner) is TerminateIllegalWrapper:
        term, inner = inner, inner.env
    if inner is not env.unwrapped:
        return None
    return term, env._n


class OrderEnforcingWrapper(_Direct, pzw.OrderEnforcingWrapper):
    """``pettingzoo.utils.wrappers.OrderEnforcingWrapper`` with direct bookkeeping access
    (still raising AttributeError before ``reset``).

    Around :func:`classic_stack`'s own wrappers (exactly ``AssertOutOfBoundsWrapper`` around
    ``TerminateIllegalWrapper``, or without it, around the unwrapped env) the common calls
    skip the inner wrappers' Python frames and do their work here, with the same effect:

    * ``last()`` observes through the unwrapped env and records the observation and info as
      ``TerminateIllegalWrapper.observe`` does (the mask that its ``step`` checks);
    * ``step(a)`` with an ``int`` id inside the space that the recorded mask allows, for a
      live agent after no illegal move: both inner wrappers would pass it on (their short
      paths), so the unwrapped env steps it directly;
    * ``step(None)`` for a done agent after no illegal move: the dead step of the unwrapped
      env, which is where both inner wrappers send it.

    Every other case (an illegal or out-of-space action, an action of another type, an
    episode ended by an illegal move, ``observe`` called directly) goes through the stack.
    """

    def __init__(self, env: AECEnv):
        super().__init__(env)
        self._bind(env)
        fused = _fused_chain(env)
        #: the short paths are on (see the class docstring)
        self._fused = fused is not None
        #: the TerminateIllegalWrapper of the fused stack (None: none), and n of Discrete(n)
        self._term, self._n = fused if fused is not None else (None, -1)
        #: the unwrapped env steps a live agent to act with ``_step_live(agent, action)``
        #: (:class:`blot_env.env.raw_env`, unless a subclass overrides ``step`` alone; other
        #: envs: ``step(action)``)
        owner = _defined_by(type(self._raw), "_step_live")
        self._has_step_live = owner is not None and owner is _defined_by(type(self._raw), "step")

    def step(self, action: Any) -> None:
        raw = self._raw
        if not (self._has_reset and raw.agents):
            return super().step(action)
        self._has_updated = True
        if self._fused:
            term = self._term
            if type(action) is int:
                if 0 <= action < self._n:
                    if term is None:
                        return raw.step(action)
                    prev = term._prev_obs
                    if type(prev) is dict and not term._terminated:
                        agent = raw.agent_selection
                        mask = prev.get("action_mask")
                        if (mask is not None and action < len(mask) and mask[action]
                                and not raw.terminations[agent] and not raw.truncations[agent]):
                            term._prev_obs = None
                            term._prev_info = None
                            if self._has_step_live:
                                return raw._step_live(agent, action)
                            return raw.step(action)
            elif action is None and (term is None or not term._terminated):
                agent = raw.agent_selection
                if raw.terminations.get(agent) or raw.truncations.get(agent):
                    if term is not None:
                        term._prev_obs = None
                        term._prev_info = None
                    return raw.step(None)
        return self.env.step(action)

    def observe(self, agent: str) -> Any:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last`` reading the bookkeeping of the unwrapped env."""
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        raw = self._raw
        agent = raw.agent_selection
        assert agent is not None
        if not observe:
            observation = None
        elif self._fused:
            observation = raw.observe(agent)
            term = self._term
            if term is not None:  # TerminateIllegalWrapper.observe of the agent to act
                term._prev_obs = observation
                term._prev_info = raw.infos.get(agent, {})
        else:
            observation = self.observe(agent)
        return (observation, raw._cumulative_rewards[agent], raw.terminations[agent], raw.truncations[agent],
                raw.infos[agent])

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _Iterable(self, max_iter)


class _Iterable(AECOrderEnforcingIterable):
    def __iter__(self) -> AECOrderEnforcingIterator:
        return _Iterator(self.env, self.max_iter)


class _Iterator(AECOrderEnforcingIterator):
    """PettingZoo's order-enforcing ``agent_iter`` iterator, reading the unwrapped env directly."""

    def __next__(self) -> str:
        env = self.env
        raw = env._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return raw.agent_selection


for _name in _FIELDS:
    setattr(TerminateIllegalWrapper, _name, _direct(_name, False))
    setattr(AssertOutOfBoundsWrapper, _name, _direct(_name, False))
    setattr(OrderEnforcingWrapper, _name, _direct(_name, True))


def classic_stack(env: AECEnv, illegal_reward: float | None) -> AECEnv:
    """PettingZoo classic's stack: TerminateIllegal (unless ``illegal_reward`` is None),
    AssertOutOfBounds, OrderEnforcing."""
    if illegal_reward is not None:
        env = TerminateIllegalWrapper(env, illegal_reward=illegal_reward)
    env = AssertOutOfBoundsWrapper(env)
    return OrderEnforcingWrapper(env)


__all__ = ["AssertOutOfBoundsWrapper", "OrderEnforcingWrapper", "TerminateIllegalWrapper", "classic_stack"]
