"""One live deal as a compiled row: the public single-deal interface of the compiled engine.

A :class:`DealRow` keeps one deal in the ``int64`` row layout of the batched engine and steps
it with one compiled call per action (the action with its legality check, then the next seat's
mask and observation, or the deal's score). It is the compiled implementation of the deal
interface of :mod:`blot_env.deal` (the AEC env steps one, ``engine="compiled"``), and what
every other consumer of a single compiled deal uses: the belief sampler of
``agents.search`` replays public histories on it, and record replays can too. Nothing outside
``blot_env/batched`` needs the package's private modules.

Quick reference (docs/batched.md, "One deal: DealRow")::

    row = DealRow(cfg, obs_kind="observation", match=False)
    seat = row.start(engine.deal_random(cfg, rng, dealer))   # or record.initial_state(rec)
    obs, mask = row.observe(seat)                            # float32[D], int8[A]
    seat = row.step(action)               # next seat; -1 when the deal ended
    row.result()                          # DealResult once the deal is over, else None
    row.state()                           # the reference State (full information)
    n = row.replay(dealer, lay_cards(hands, stock, piles), actions)   # no observations
    clone = row.copy()

Every method that takes an action checks it as ``engine.apply_action`` does and raises the
reference engine's :class:`~blot_env.errors.IllegalActionError` (action, seat, rule, legal
actions); the row is then untouched. ``tests/test_deal_row.py`` checks a DealRow against the
reference engine step by step; ``tests/test_batched_diff.py`` checks the row functions it calls.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ..actions import layout_for
from ..cards import cards_of
from ..engine import apply_action, check_action_id
from ..errors import ConfigError, IllegalActionError
from ..observation import KINDS, ObservationEncoder
from ..rules_config import RulesConfig
from ..scoring import DealResult
from ..state import State
from . import _single
from ._layout import ROW, capacity_problem
from .convert import from_state, result_from_array, to_state

ENGINE = "compiled"


def lay_cards(hands: Sequence[int], stock: Sequence[int] = (),
              piles: Sequence[Sequence[int]] | None = None) -> np.ndarray:
    """``int64[deck]``: a deal's cards as a compiled row deals them (``engine.deal_random``'s
    order): seat ``s``'s cards (``hands``: bitmask per seat, ascending card ids; Open Blot:
    ``piles[s]``, bottom then top of piles 1..8) seat after seat, then ``stock`` (undealt
    cards in draw order; duels: the open card first)."""
    if piles:
        laid = [c for p in piles for c in p]
    else:
        laid = [c for h in hands for c in cards_of(h)]
    return np.array(laid + list(stock), dtype=np.int64)


@lru_cache(maxsize=32)
def _tables(cfg: RulesConfig, obs_kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The compiled tables of ``(cfg, obs_kind)``, built once per process (read-only)."""
    T, F = _single.tables(cfg, obs_kind)
    T.setflags(write=False)
    F.setflags(write=False)
    return T, F


class DealRow:
    """One deal of ``cfg`` in compiled code (module docstring).

    Args:
        cfg: the rules; must fit in a row (:func:`capacity_problem` is ``None``).
        obs_kind: ``"observation"``, ``"information_state"`` or ``"observation_voids"`` (:mod:`blot_env.observation`).
        match: observations carry the match pieces after the per-deal ones (set them with
            :meth:`set_match`), as the env's ``episode="match"`` does.

    Attributes:
        cfg, layout, num_actions (A), obs_size (D: the per-deal observation, + 4 with ``match``),
        row (``int64[1, ROW]``: the live deal; read it, do not write it), history (the action
        ids of the deal so far), seat (to act; -1 before the start and once the deal is over).

    Raises:
        ConfigError: a rules config whose auction or stock may outgrow a row, or a bad ``obs_kind``.
    """

    engine = ENGINE

    def __init__(self, cfg: RulesConfig, obs_kind: str = "observation", match: bool = False):
        problem = capacity_problem(cfg)
        if problem is not None:
            raise ConfigError(f"a compiled deal row cannot hold this rules config: {problem}; "
                              'use the reference engine (engine="reference")')
        if obs_kind not in KINDS:
            raise ConfigError(f"obs_kind must be one of {KINDS}, got {obs_kind!r}")
        self.cfg = cfg
        self.layout = layout_for(cfg)
        self.num_actions = self.layout.num_actions
        self.obs_kind = obs_kind
        self.match = bool(match)
        self._encoder = ObservationEncoder(cfg, obs_kind, match=self.match)
        d0 = ObservationEncoder(cfg, obs_kind).size
        enc = self._encoder
        if self.match and (enc.size != d0 + 4 or enc.o_match != d0 or enc.o_to_go != d0 + 2):
            raise RuntimeError("the match pieces must follow the per-deal observation")  # layout invariant
        self.obs_size = enc.size
        self._T, self._F = _tables(cfg, obs_kind)
        # appended to each observation, row = the observer's side (``_single`` module doc)
        self._tail = enc.match_pieces(None) if self.match else np.zeros((2, 0), np.float32)
        self.row = np.zeros((1, ROW), np.int64)
        self._res = np.zeros(_single.NRESULT, np.int64)
        self.history: list[int] = []
        self.seat = -1
        self._started = False
        self._state: State | None = None  # the reference state, built from the row when asked for
        self._result: DealResult | None = None
        # the seat to act's observation and mask, written by the last start or step
        self._next: tuple[np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------------ start
    def start(self, state: State) -> int:
        """Start the deal of ``state`` (dealt, no action taken yet: ``engine.new_deal``,
        ``deal_random`` or ``record.initial_state``). Returns the seat to act."""
        seat = self.start_cards(state.dealer, lay_cards(state.start_hands, state.stock, state.piles))
        self._state = state
        return seat

    def start_cards(self, dealer: int, cards: np.ndarray) -> int:
        """Start a deal from its dealer and its cards (``int64[deck]``, see :func:`lay_cards`).
        Returns the seat to act."""
        obs = np.empty(self.obs_size, np.float32)
        mask = np.empty(self.num_actions, np.int8)
        self.seat = _single.start_one(self.row, self._T, self._F, self._tail, dealer, cards, obs, mask)
        self._next = (obs, mask)
        self._started = True
        self.history = []
        self._state = None
        self._result = None
        return self.seat

    # ------------------------------------------------------------------ step
    def step(self, action: int) -> int:
        """The seat to act takes ``action`` (an id of the layout). Returns the next seat to act,
        or -1 when the action ended the deal (then :meth:`result` holds its result).

        Raises:
            IllegalActionError: ``action`` is not an integer id, or not legal here (the
                reference engine's message); the row is untouched.
        """
        if type(action) is not int:
            if action is None:
                raise IllegalActionError("None", self.seat, "an action id is required while the agent is to act")
            action = check_action_id(action, self.seat)
        obs = np.empty(self.obs_size, np.float32)
        mask = np.empty(self.num_actions, np.int8)
        if 0 <= action < self.num_actions:
            code = _single.step_one(self.row, self._T, self._F, self._tail, action, obs, mask, self._res)
        else:
            code = -1
        if code < 0 and code != _single.DEAL_OVER:
            self._explain_illegal(action)  # raises
        self.history.append(action)
        self._state = None
        if code >= 0:
            self.seat = code
            self._next = (obs, mask)
            return code
        self.seat = -1
        self._next = None
        self._result = result_from_array(self._res)
        return -1

    def apply(self, actions: np.ndarray) -> int:
        """Apply ``actions`` (``int64[m]``) in turn, writing no observation. Returns how many
        were applied: ``m``, or the index of the first illegal one (the deal then stands
        before it)."""
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        done = _single.apply_many(self.row, self._T, self._F, actions)
        self._after_apply(actions[:done])
        return done

    def replay(self, dealer: int, cards: np.ndarray, actions: np.ndarray) -> int:
        """:meth:`start_cards` then :meth:`apply`, in one compiled call (no observation is
        written): how many of ``actions`` were applied."""
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        done = _single.replay_one(self.row, self._T, self._F, dealer, cards, actions)
        self._started = True
        self.history = []
        self._after_apply(actions[:done])
        return done

    def _after_apply(self, applied: np.ndarray) -> None:
        self.history.extend(applied.tolist())
        self.seat = int(_single.seat_one(self.row, self._T))
        self._next = None
        self._state = None
        self._result = None

    def _explain_illegal(self, action: int) -> None:
        """Raise the reference engine's IllegalActionError for an action the compiled check refused."""
        apply_action(self.state(), action)
        raise IllegalActionError(str(action), self.seat, "the compiled engine refuses it but the reference "
                                 "engine accepts it (please report this)")

    # ------------------------------------------------------------------ observe
    def observe(self, seat: int, with_mask: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``(float32[D], int8[A])``: the observation of ``seat`` (any seat, any time) and its
        legal mask (zeros unless ``with_mask`` and ``seat`` is to act). Do not modify the
        arrays in place: those of the seat to act are shared until the next step."""
        if with_mask and seat == self.seat and self._next is not None:
            return self._next
        obs = np.empty(self.obs_size, np.float32)
        mask = np.empty(self.num_actions, np.int8)
        _single.observe_one(self.row, self._T, self._F, self._tail, seat, with_mask, obs, mask)
        return obs, mask

    def set_match(self, totals: Sequence[int] | None) -> None:
        """The match totals per absolute side before this deal (``match=True``; ``None``: 0, 0),
        which the observations' match pieces encode (``ObservationEncoder.match_pieces``)."""
        if self.match:
            self._tail = self._encoder.match_pieces(totals)  # a new array: copies may share the old one
            self._next = None

    # ------------------------------------------------------------------ result and state
    @property
    def over(self) -> bool:
        """The deal has ended."""
        return self._started and self.seat < 0

    def result(self) -> DealResult | None:
        """The :class:`~blot_env.scoring.DealResult` of the deal once it is over, else ``None``."""
        if self._result is None and self._started and _single.result_one(self.row, self._T, self._res) == 0:
            self._result = result_from_array(self._res)
        return self._result

    def state(self) -> State | None:
        """The reference :class:`~blot_env.state.State` of the deal (``convert.to_state`` of the
        row with :attr:`history`), built when first asked for after a step; ``None`` before a start."""
        if self._state is None and self._started:
            self._state = to_state(self.row[0], self.cfg, self.history)
        return self._state

    def load(self, state: State) -> int:
        """Continue from any reference ``state`` of ``cfg`` (``convert.from_state``). Returns the seat to act."""
        self.row[0] = from_state(state)
        self._started = True
        self.history = []
        self._after_apply(np.array(state.history, dtype=np.int64))
        self._state = state
        return self.seat

    # ------------------------------------------------------------------ copies
    def copy(self) -> DealRow:
        """An independent copy of the live deal (it shares only the read-only tables)."""
        new = _copy.copy(self)
        new.row = self.row.copy()
        new._res = self._res.copy()
        new.history = list(self.history)
        new._next = None
        return new

    def snapshot(self) -> dict:
        """What :meth:`restore` needs: ``{"row", "history", "state"}`` (``state`` may be None)."""
        return {"row": self.row.copy(), "history": tuple(self.history), "state": self._state}

    def restore(self, snap: dict) -> int:
        """Continue from a :meth:`snapshot` of a deal of ``cfg``, or from ``{"state": State}``
        (a snapshot of the reference deal). Returns the seat to act."""
        if snap.get("row") is None:
            return self.load(snap["state"])
        self.row = np.array(snap["row"], dtype=np.int64).reshape(1, ROW)  # a copy: this deal steps its own
        self._started = True
        self.history = []
        self._after_apply(np.array(snap["history"], dtype=np.int64))
        self._state = snap.get("state")
        return self.seat


__all__ = ["ENGINE", "DealRow", "capacity_problem", "lay_cards"]
