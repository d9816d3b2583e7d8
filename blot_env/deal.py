"""The deal interface that the AEC env steps, its reference implementation, and the choice.

The env (:class:`blot_env.env.raw_env`) is bookkeeping: agents, rewards, terminations, the
match. The live deal sits behind a small interface (:class:`Deal`) with two implementations
that behave identically (style: "two engines, one contract"):

* :class:`ReferenceDeal` (here): the readable rules. ``engine.apply_action`` on an immutable
  :class:`~blot_env.state.State`, observations by ``view.seat_view`` and
  :class:`~blot_env.observation.ObservationEncoder`. The source of truth.
* :class:`~blot_env.batched.deal_row.DealRow`: the same deal as one compiled row of the
  batched engine, about 10x faster per step.

:func:`make_deal` picks one by name (the env's public ``engine`` argument, :data:`ENGINES`):
``"compiled"``, ``"reference"``, or ``"auto"`` (the default: compiled when the rules fit in a
row, else reference; knob overrides with a very long auction or a large stock do not fit, see
``DealRow``'s ``capacity_problem``). ``tests/test_env_fast.py`` plays both engines in lockstep
through the env on every preset; ``tests/test_deal_row.py`` checks the interface itself.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from .actions import layout_for
from .batched.convert import to_state
from .batched.deal_row import DealRow, capacity_problem
from .engine import _apply, apply_action, check_action_id, current_seat, deal_result, is_terminal
from .errors import ConfigError, IllegalActionError
from .observation import KINDS, ObservationEncoder
from .rules_config import RulesConfig
from .scoring import DealResult
from .state import State
from .view import seat_view

#: the values of the env's ``engine`` argument (see the module docstring)
ENGINES = ("auto", "compiled", "reference")


class Deal(Protocol):
    """One live deal: what the env needs from an engine (module docstring).

    Attributes: ``engine`` (``"compiled"`` or ``"reference"``), ``cfg``, ``num_actions`` (A),
    ``obs_size`` (D), ``seat`` (to act; -1 once the deal is over), ``history`` (action ids).
    """

    engine: str
    cfg: RulesConfig
    num_actions: int
    obs_size: int
    seat: int

    @property
    def history(self) -> Sequence[int]:
        """The action ids of the deal so far."""

    def start(self, state: State) -> int:
        """Start a dealt deal (no action yet); returns the seat to act."""

    def step(self, action: int) -> int:
        """Apply the seat to act's action; returns the next seat, or -1 when the deal ended.
        Raises IllegalActionError (the reference engine's message), leaving the deal as it was."""

    def observe(self, seat: int, with_mask: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``(float32[D], int8[A])`` of any seat; the mask is zeros unless ``with_mask`` and the
        seat is to act."""

    def set_match(self, totals: Sequence[int] | None) -> None:
        """The match totals before this deal, for the match pieces of the observations."""

    def result(self) -> DealResult | None:
        """The result once the deal is over, else None."""

    def state(self) -> State | None:
        """The reference State of the deal (full information)."""

    def copy(self) -> Deal:
        """An independent copy."""

    def snapshot(self) -> dict:
        """A picklable snapshot; both implementations restore each other's."""

    def restore(self, snap: dict) -> int:
        """Continue from a snapshot; returns the seat to act."""


class ReferenceDeal:
    """The :class:`Deal` interface over the reference engine (module docstring).

    Args:
        cfg: the rules.
        obs_kind: ``"observation"``, ``"information_state"`` or ``"observation_voids"``.
        match: observations carry the match pieces (:meth:`set_match`).

    Raises:
        ConfigError: a bad ``obs_kind``.
    """

    engine = "reference"

    def __init__(self, cfg: RulesConfig, obs_kind: str = "observation", match: bool = False):
        if obs_kind not in KINDS:
            raise ConfigError(f"obs_kind must be one of {KINDS}, got {obs_kind!r}")
        self.cfg = cfg
        self.layout = layout_for(cfg)
        self.num_actions = self.layout.num_actions
        self.encoder = ObservationEncoder(cfg, obs_kind, match=match)
        self.obs_size = self.encoder.size
        self.seat = -1
        self._state: State | None = None
        self._totals: Sequence[int] | None = None
        self._legal: frozenset[int] | None = None  # legal ids of the state, once observed for the seat to act
        self._result: DealResult | None = None

    @property
    def history(self) -> tuple[int, ...]:
        return self._state.history if self._state is not None else ()

    def start(self, state: State) -> int:
        return self._set(state)

    def _set(self, state: State) -> int:
        self._state = state
        self._legal = None
        self._result = None
        self.seat = current_seat(state)
        return self.seat

    def step(self, action: int) -> int:
        if action is None:
            raise IllegalActionError("None", self.seat, "an action id is required while the agent is to act")
        action = check_action_id(action, self.seat)
        if self._legal is not None and action in self._legal:
            # already checked against the legal set of this very state (computed for the mask
            # in observe): skip the engine's second legal_actions call
            state = _apply(self._state, self.layout, action)
        else:
            state = apply_action(self._state, action)  # checks; raises IllegalActionError
        return self._set(state)

    def observe(self, seat: int, with_mask: bool = True) -> tuple[np.ndarray, np.ndarray]:
        view = seat_view(self._state, seat)
        obs = self.encoder.encode(view, self._totals)
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if view.legal and with_mask:
            mask[list(view.legal)] = 1
            self._legal = frozenset(view.legal)
        return obs, mask

    def set_match(self, totals: Sequence[int] | None) -> None:
        self._totals = totals

    def result(self) -> DealResult | None:
        if self._result is None and self._state is not None and is_terminal(self._state):
            self._result = deal_result(self._state)
        return self._result

    def state(self) -> State | None:
        return self._state

    def copy(self) -> ReferenceDeal:
        return _copy.copy(self)  # the state is immutable

    def snapshot(self) -> dict:
        return {"state": self._state, "history": self.history}

    def restore(self, snap: dict) -> int:
        state = snap.get("state")
        if state is None:  # a snapshot of a compiled deal whose state was not built
            state = to_state(np.asarray(snap["row"]).reshape(-1), self.cfg, snap["history"])
        return self._set(state)


def make_deal(cfg: RulesConfig, obs_kind: str = "observation", match: bool = False,
              engine: str = "auto") -> Deal:
    """The live deal of an env: a :class:`DealRow` or a :class:`ReferenceDeal` (module docstring).

    Raises:
        ConfigError: ``engine`` not in :data:`ENGINES`; ``engine="compiled"`` with rules that
            do not fit in a row (the message says why); a bad ``obs_kind``.
    """
    if engine not in ENGINES:
        raise ConfigError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "reference" or (engine == "auto" and capacity_problem(cfg) is not None):
        return ReferenceDeal(cfg, obs_kind, match)
    return DealRow(cfg, obs_kind, match)


__all__ = ["ENGINES", "Deal", "ReferenceDeal", "make_deal"]
