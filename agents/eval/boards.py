"""A duplicate board: one suite deal played at two tables with the sides swapped
(docs/evaluation.md, "The protocol").

A **board** is one deal (dealer, hands, stock) played at two tables. 4 players: the
candidate sits in seats 0/2 at table 1 and in seats 1/3 at table 2; 2 players: seat 0,
then seat 1. Mixed mode (4 players): the candidate plays with a copy of the baseline as
partner against two copies of the baseline; at table 1 it sits in seat ``k`` and at table 2
in seat ``k + 1``, with ``k = 0`` on even boards and ``k = 2`` on odd ones, so it visits all
four seats (:func:`seatings`). The board score of the candidate is
``delta = (A - B at table 1) + (A - B at table 2)`` in score-sheet units (table points for
the Armenian presets, raw points for belote), A being the candidate's side.

* A table whose auction is passed out scores 0 for both sides (``blot_env.scoring``'s
  passed-out result); the board is **not** re-dealt.
* Each seat's agent gets its own generator keyed by ``(seed, board, seat)``; the key is the
  same at both tables, so a stochastic agent playing itself gives delta 0 too.
* Every agent's ``reset()`` is called before each table.

This is the lowest layer of the evaluation: the engine that plays boards on a pool
(:mod:`agents.eval.board_pool`) and the metrics (:mod:`agents.eval.arena`) build on it. The
board records of the save files pickle :class:`Timing`, :class:`TableResult` and
:class:`BoardResult` (:data:`agents.eval.board_pool.RECORD_FORMAT`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from blot_env.actions import layout_for
from blot_env.engine import apply_action, current_seat, deal_result, is_terminal
from blot_env.rules_config import RulesConfig
from blot_env.scoring import DealResult
from blot_env.state import Phase, State
from blot_env.view import seat_view

from ..base import Agent, reset_agent


def deal_state(cfg: RulesConfig, deal: dict) -> State:
    """The initial state of a suite deal (the ``dealer``/``hands``/``stock`` of a deal record).

    Raises:
        ValueError: ``deal`` is no such object, or its cards do not form a deal of ``cfg``
            (wrong counts, duplicates, ...); a :class:`blot_env.errors.RecordError` naming the field.
    """
    from blot_env.record import FORMAT, initial_state, rules_to_record

    if not isinstance(deal, dict):
        raise ValueError(f"a suite deal must be an object {{'dealer', 'hands', 'stock'}}, got {type(deal).__name__}")
    hands = deal.get("hands")
    return initial_state({"format": FORMAT, "preset": cfg.preset, "rules": rules_to_record(cfg),
                          "dealer": deal.get("dealer"), "hands": list(hands) if isinstance(hands, tuple) else hands,
                          "stock": deal.get("stock", "") or "", "actions": []})


# ---------------------------------------------------------------------------- tables


@dataclass
class Timing:
    """Seconds spent in ``act`` and number of decisions, per agent name."""

    seconds: dict[str, float] = field(default_factory=dict)
    decisions: dict[str, int] = field(default_factory=dict)

    def add(self, name: str, dt: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + dt
        self.decisions[name] = self.decisions.get(name, 0) + 1

    def merge(self, other: Timing) -> None:
        for k, v in other.seconds.items():
            self.seconds[k] = self.seconds.get(k, 0.0) + v
            self.decisions[k] = self.decisions.get(k, 0) + other.decisions[k]

    def per_decision(self) -> dict[str, float]:
        return {k: self.seconds[k] / max(1, self.decisions[k]) for k in self.seconds}


@dataclass(frozen=True)
class TableResult:
    """One table of a board, seen from the candidate's side ``side`` (0 or 1)."""

    side: int
    result: DealResult
    contra_seat: int
    """Seat that said contra (-1 none)."""
    recontra_seat: int

    @property
    def passed_out(self) -> bool:
        return self.result.contract is None

    @property
    def diff(self) -> int:
        """Candidate side's score minus the other side's."""
        s = self.result.score
        return s[self.side] - s[1 - self.side]


@dataclass(frozen=True)
class BoardResult:
    """A board: its index and its two tables (table 1, then table 2)."""

    index: int
    tables: tuple[TableResult, ...]
    deal: dict | None = None
    """The suite deal both tables played."""

    @property
    def delta(self) -> int:
        """The candidate's board score: the sum of its side's difference at both tables
        (score-sheet units; a passed-out table adds 0)."""
        return sum(t.diff for t in self.tables)

    @property
    def passed_out(self) -> int:
        """Tables of the board whose auction was passed out (0, 1 or 2)."""
        return sum(t.passed_out for t in self.tables)


def play_table(state: State, agents: Sequence[Agent], rngs: Sequence[np.random.Generator],
               timing: Timing | None = None) -> tuple[State, int, int]:
    """Play a deal to the end; ``agents[seat]`` acts for each seat with ``rngs[seat]``.

    Returns the final state and the seats that said contra / recontra (-1 if none).

    Raises:
        IllegalActionError: an agent returned an illegal action (the engine names it).
    """
    lay = layout_for(state.cfg)
    contra = recontra = -1
    while not is_terminal(state):
        seat = current_seat(state)
        view = seat_view(state, seat)
        agent = agents[seat]
        t0 = time.perf_counter()
        a = int(agent.act(view, rngs[seat]))
        if timing is not None:
            timing.add(agent.name, time.perf_counter() - t0)
        if state.phase == Phase.AUCTION:
            block = lay.block_of[a] if 0 <= a < lay.num_actions else ""
            if block == "CONTRA":
                contra = seat
            elif block == "RECONTRA":
                recontra = seat
        state = apply_action(state, a)
    return state, contra, recontra


def seatings(n: int, index: int, mixed: bool) -> tuple[tuple[tuple[bool, ...], int], ...]:
    """Per table: (is-candidate flag per seat, candidate's side) for board ``index``."""
    if n == 2:
        return ((True, False), 0), ((False, True), 1)
    if not mixed:
        return ((True, False, True, False), 0), ((False, True, False, True), 1)
    k = 0 if index % 2 == 0 else 2
    t1 = tuple(s == k for s in range(4))
    t2 = tuple(s == (k + 1) % 4 for s in range(4))
    return (t1, k % 2), (t2, (k + 1) % 2)


def play_board(cfg: RulesConfig, deal: dict, index: int, candidate: Agent, opponent: Agent, seed: int = 0,
               mixed: bool = False, timing: Timing | None = None) -> BoardResult:
    """Play board ``index`` (a suite deal) at both tables (module docstring, :func:`seatings`).

    A table passed out scores 0 for both sides; the board is not re-dealt. Seat ``s`` acts
    with a generator keyed by ``(seed, index, s)`` at both tables.

    Raises:
        ValueError: ``mixed`` with a 2-player preset, or a deal that is not one of ``cfg``.
        IllegalActionError: an agent returned an illegal action.
    """
    n = cfg.num_players
    if mixed and n != 4:
        raise ValueError(f"mixed partnerships need a 4-player preset; {cfg.preset!r} has {n} players")
    tables = []
    for is_cand, side in seatings(n, index, mixed):
        agents = [candidate if c else opponent for c in is_cand]
        for ag in {id(a): a for a in agents}.values():
            reset_agent(ag)
        rngs = [np.random.default_rng(np.random.SeedSequence([seed, index, s])) for s in range(n)]
        final, contra, recontra = play_table(deal_state(cfg, deal), agents, rngs, timing)
        tables.append(TableResult(side, deal_result(final), contra, recontra))
    return BoardResult(index, tuple(tables), deal)


__all__ = [
    "BoardResult",
    "TableResult",
    "Timing",
    "deal_state",
    "play_board",
    "play_table",
    "seatings",
]
