"""What one seat knows: the information-set view of a deal (no hidden cards, by construction).

Agents and observation encoders read a :class:`SeatView`, never a :class:`State`, so a
policy cannot see another seat's cards. ``seat_view(state, seat)`` copies only what the
seat has observed under the rules: its own cards, every public call and card, the public
part of the declaration protocol (announced classes, stated heights, concessions, shown
combinations; rules.md 2.4.2) and, in variants with face-up cards, those cards.
"""

from __future__ import annotations

from dataclasses import dataclass

from .combos import Combo
from .declarations import counted_sets
from .engine import current_seat, legal_actions
from .rules_config import RulesConfig
from .state import Phase, State


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything ``seat`` has observed. Seats are absolute here; encoders make them egocentric."""

    cfg: RulesConfig
    seat: int
    dealer: int
    phase: Phase
    to_act: int
    """Seat to act (-1 when the deal is over)."""
    step: int
    """Pending declaration step kind of the seat to act (-1: a call or a card)."""
    hand: int
    """Bitmask of the seat's cards now (Open Blot: its playable face-up cards)."""
    dealt_hand: int
    """Bitmask of the seat's cards at the start of play (0 during the auction)."""
    calls: tuple[tuple[int, int], ...]
    """Auction calls so far as (seat, action id)."""
    contract_seat: int
    contract_strain: int
    contract_value: int
    contract_kind: str
    double: int
    """0 none, 1 contra, 2 recontra (also during the auction)."""
    high_value: int
    high_seat: int
    trick: tuple[int, ...]
    trick_seats: tuple[int, ...]
    trick_no: int
    plays: tuple[tuple[int, int], ...]
    """Every card played so far as (seat, card)."""
    tricks: tuple[int, ...]
    points: tuple[int, ...]
    announced: tuple[int, ...]
    """Per seat: -1 not yet, 0 silent, 1 terz, 2 50, 3 100, 4 carre."""
    events: tuple[tuple[int, int, int], ...]
    """Height exchange: (seat, 0 height / 1 height trump / 2 concede / 3 reveal, top rank)."""
    decided: tuple[int, ...]
    """Per seat: -1 undecided, 0 noshow, 1 show."""
    shown: tuple[int, ...]
    """Per seat: bitmask of the cards of a shown combination set (0 if none)."""
    decl_leader: int
    """Seat whose claim leads after trick 1 (-1 none or not yet)."""
    own_claim: Combo | None
    own_show_set: tuple[Combo, ...]
    open_card: int
    """Duels: the turned card U, public from the deal on (-1 if none); rules.md 3, 4."""
    face_up: tuple[int, ...]
    """Open Blot: per seat, bitmask of the face-up cards on top of the piles (public, playable).
    Empty outside Open Blot."""
    hidden_counts: tuple[int, ...]
    """Open Blot: per seat, number of face-down cards (0..8; the tops of piles 5-8 not laid yet
    during round 1 of the trump choice are not counted). Empty outside Open Blot."""
    legal: tuple[int, ...]
    """Legal action ids when this seat is to act, else empty."""


def seat_view(state: State, seat: int) -> SeatView:
    """The view of ``seat`` (0..n-1) of a deal state. Raises ValueError on a bad seat."""
    n = state.cfg.num_players
    if not 0 <= seat < n:
        raise ValueError(f"seat must be 0..{n - 1}, got {seat}")
    to_act = current_seat(state)
    c = state.contract
    ncalls = _auction_len(state)
    calls = tuple(((state.dealer + 1 + i) % n, a) for i, a in enumerate(state.history[:ncalls]))
    d = state.decl
    if d is not None:
        shown = tuple(sum(cb.mask for cb in d.show_set[s]) if (d.decided[s] == 1 or
                      (state.cfg.declarations == "announce" and d.announced[s] > 0)) else 0
                      for s in range(n))
        announced, events, decided, leader = d.announced, d.events, d.decided, d.leader
        own_claim, own_set = d.claim[seat], d.show_set[seat]
    else:
        announced, events, decided, leader = (-1,) * n, (), (-1,) * n, -1
        shown, own_claim, own_set = (0,) * n, None, ()
    if d is not None and state.cfg.declarations == "auto" and _auto_public(state):
        # automatic declarations: the counted sets are shown to everybody (rules.md 2.8)
        shown = tuple(sum(cb.mask for cb in cs) for cs in counted_sets(state))
    trick_seats = tuple((state.leader + i) % n for i in range(len(state.trick)))
    face_down = state.face_down
    if face_down:
        unlaid = state.unlaid or (0,) * n
        face_up = tuple(state.hands[s] & ~face_down[s] & ~unlaid[s] for s in range(n))
        hidden = tuple(face_down[s].bit_count() for s in range(n))
        hand = face_up[seat]
    else:
        face_up, hidden, hand = (), (), state.hands[seat]
    from .variants import visible_open_card

    return SeatView(
        cfg=state.cfg, seat=seat, dealer=state.dealer, phase=state.phase, to_act=to_act,
        step=int(state.pending[0][0]) if state.pending else -1,
        hand=hand, dealt_hand=(state.play_hands[seat] if state.play_hands and not face_down else 0),
        calls=calls,
        contract_seat=c.seat if c else -1, contract_strain=c.strain if c else -1,
        contract_value=c.value if c else 0, contract_kind=c.kind if c else "",
        double=c.double if c else state.double,
        high_value=state.high_value, high_seat=state.high_seat,
        trick=state.trick, trick_seats=trick_seats, trick_no=state.trick_no, plays=state.plays,
        tricks=state.tricks or (0,) * n, points=state.points or (0,) * n,
        announced=announced, events=events, decided=decided, shown=shown, decl_leader=leader,
        own_claim=own_claim, own_show_set=own_set,
        open_card=visible_open_card(state, seat), face_up=face_up, hidden_counts=hidden,
        legal=tuple(legal_actions(state)) if to_act == seat else (),
    )


def _auto_public(state: State) -> bool:
    if state.phase == Phase.DONE:
        return True
    return state.cfg.auto_reveal == "after_trick1" and state.trick_no >= 1


def _auction_len(state: State) -> int:
    """Number of auction calls in the history (they precede every play-phase action)."""
    return state.n_calls if state.phase != Phase.AUCTION else len(state.history)
