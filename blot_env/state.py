"""The immutable deal state (rules of thumb 1 and 3): ints, tuples and bitmasks only.

Transitions live in ``engine.py`` and the phase modules; they return new states built
with :func:`dataclasses.replace` (or :func:`evolve`, its faster twin for :class:`State` on
the engine's hot path) and never mutate one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import IntEnum

from . import codes
from .combos import Combo
from .rules_config import RulesConfig


class Phase(IntEnum):
    """The phase of a deal (codes ``PHASE_*`` of :mod:`blot_env.codes`)."""

    AUCTION = codes.PHASE_AUCTION
    PLAY = codes.PHASE_PLAY
    DONE = codes.PHASE_DONE


class Step(IntEnum):
    """Decision steps a seat takes before its card (manual declarations, deal-record.md)."""

    ANNOUNCE = codes.STEP_ANNOUNCE
    HEIGHT = codes.STEP_HEIGHT
    ANSWER = codes.STEP_ANSWER
    SHOW = codes.STEP_SHOW


class Right(IntEnum):
    """Why a seat may decide ``show``/``noshow`` (rules.md 2.4.3 items 5-7)."""

    NONE = codes.RIGHT_NONE
    LEADING_PAIR = codes.RIGHT_LEADING_PAIR
    PASS_ON = codes.RIGHT_PASS_ON
    PARTNER = codes.RIGHT_PARTNER


@dataclass(frozen=True, slots=True)
class Contract:
    """The contract of a deal (rules.md 2.2 "Contract record").

    ``value`` is the bid value ``b`` in the score sheet's units (tens for bazar; raw for
    belote; 0 for the 2-player trump choices); ``kind`` is ``num``, ``kaput``,
    ``kaput_plus``, ``take`` or ``name``; ``plus`` is N of kaput+N; ``double`` 0/1/2 for
    none/contra/recontra; ``call`` the action id that fixed it.
    """

    seat: int
    strain: int
    value: int
    kind: str
    plus: int
    double: int
    call: int

    @property
    def is_kaput(self) -> bool:
        return self.kind in ("kaput", "kaput_plus")


@dataclass(frozen=True, slots=True)
class Declarations:
    """Per-seat declaration state; "announced" and "shown" are kept apart (rules.md 2.4.2).

    ``announced[s]``: -1 not yet, else a class 0..4 (0 = silent). ``claim[s]``: the senior
    instance of the announced class by true cards. ``show_set[s]``: what a show reveals
    (RES-40). ``events``: public height-exchange events ``(seat, step, value)`` with step
    0 height, 1 height trump, 2 concede, 3 reveal (``EVENT_*`` of :mod:`blot_env.codes`) and
    value the stated top rank (-1 none).
    ``decided[s]``: -1 undecided, 0 noshow, 1 show.
    """

    announced: tuple[int, ...]
    claim: tuple[Combo | None, ...]
    show_set: tuple[tuple[Combo, ...], ...]
    conceded: tuple[bool, ...]
    events: tuple[tuple[int, int, int], ...]
    leader: int
    rights: tuple[int, ...]
    decided: tuple[int, ...]
    announce_order: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class State:
    """One deal, from the first call to the last card (immutable)."""

    cfg: RulesConfig
    dealer: int
    start_hands: tuple[int, ...]
    """Bitmask per seat when the first action is taken (the record's ``hands``)."""
    stock: tuple[int, ...]
    """Undealt cards in draw order (duels: the open card first)."""
    phase: Phase
    seat: int
    """Seat to act in the auction (the play phase derives it)."""
    history: tuple[int, ...]
    hands: tuple[int, ...]
    """Bitmask per seat of the cards held now."""
    # auction
    high_value: int = 0
    high_seat: int = -1
    high_call: int = -1
    kaput_seen: bool = False
    double: int = 0
    passes: int = 0
    round: int = 0
    contract: Contract | None = None
    n_calls: int = 0
    """Number of auction calls (set when the auction ends)."""
    # play
    play_hands: tuple[int, ...] = ()
    """Bitmask per seat at the start of play (combinations and blots are found here)."""
    trick: tuple[int, ...] = ()
    leader: int = 0
    trick_no: int = 0
    tricks: tuple[int, ...] = ()
    points: tuple[int, ...] = ()
    plays: tuple[tuple[int, int], ...] = ()
    kaput_broken: bool = False
    pending: tuple[tuple[int, int], ...] = ()
    decl: Declarations | None = None
    face_down: tuple[int, ...] = ()
    """Open Blot: bitmask per seat of the face-down cards (pile bottoms not yet uncovered)."""
    unlaid: tuple[int, ...] = ()
    """Open Blot: bitmask per seat of the pile tops not laid yet (piles 5-8 during round 1 of
    the trump choice, rules.md 5.1); nobody sees them."""
    piles: tuple[tuple[int, ...], ...] = ()
    """Open Blot: per seat the 16 card ids bottom, top of piles 1..8 (the record's ``hands``,
    rules.md 5.7.7)."""

    @property
    def n(self) -> int:
        return self.cfg.num_players

    @property
    def first_hand(self) -> int:
        return (self.dealer + 1) % self.cfg.num_players

    def team(self, seat: int) -> int:
        return seat % 2

    def trick1_pos(self, seat: int) -> int:
        """Position of a seat in trick-1 order (0 = first hand)."""
        return (seat - self.first_hand) % self.cfg.num_players


_STATE_FIELDS = tuple(f.name for f in fields(State))
_set = object.__setattr__


def evolve(state: State, **changes: object) -> State:
    """A copy of ``state`` with ``changes`` (field name -> value): what
    ``dataclasses.replace(state, **changes)`` returns, built without calling ``__init__``
    (about 1.4x faster, and the engine builds one or more states per action).

    Raises:
        AttributeError: a name in ``changes`` is not a field of :class:`State`.
    """
    new = object.__new__(State)
    for name in _STATE_FIELDS:
        _set(new, name, getattr(state, name))
    for name, value in changes.items():  # a slotted class: an unknown name raises AttributeError
        _set(new, name, value)
    return new
