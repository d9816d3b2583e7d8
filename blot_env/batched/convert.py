"""Rows of the batched engine to and from reference :class:`~blot_env.state.State` values.

``from_state(state)`` is the canonical ``int64[ROW]`` image of a state (the layout of
``_layout.py``); ``to_state(row, cfg)`` inverts it. The differential test checks that after
every action the batched row equals ``from_state`` of the reference state, and the PPO
rollout turns rows back into states where a Python agent (a rule-based baseline) must see a
:class:`~blot_env.view.SeatView`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..actions import layout_for
from ..codes import CONTRACT_KINDS
from ..combos import Combo, achievable_plus, best_set, instances
from ..rules_config import RulesConfig
from ..scoring import DealResult, passed_out_result
from ..state import Contract, Declarations, Phase, State, Step
from . import _layout as L

_NONE_DECL = {
    L.ANNOUNCED: -1, L.CLAIM_CLS: -1, L.CLAIM_VALUE: 0, L.CLAIM_MASK: 0, L.CLAIM_KEY: -1, L.CLAIM_SUIT: -1,
    L.CLAIM_TOP: -1, L.SHOW_MASK: 0, L.SHOW_VALUE: 0, L.SHOW_N: 0, L.CONCEDED: 0, L.RIGHTS: 0, L.DECIDED: -1,
    L.ANN_ORDER: -1, L.AUTO_MASK: 0, L.AUTO_VALUE: 0, L.AUTO_KEY: -1,
}


def empty_row() -> np.ndarray:
    """``int64[ROW]`` with every field at its "nothing yet" value (the pads of ``_layout.py``)."""
    r = np.zeros(L.ROW, dtype=np.int64)
    for name in ("stock", "trick", "last_call", "play_card", "play_seat", "pend_kind", "pend_seat", "ev_seat",
                 "ev_step", "ev_top", "piles", "calls"):
        o, size = L.FIELDS[name]
        r[o:o + size] = -1
    for off, v in _NONE_DECL.items():
        r[off:off + L.MAXN] = v
    for off in (L.HIGH_SEAT, L.HIGH_CALL, L.C_SEAT, L.C_STRAIN, L.C_KIND, L.C_CALL, L.DLEADER):
        r[off] = -1
    return r


def _seq(r: np.ndarray, off: int, values) -> None:
    for i, v in enumerate(values):
        r[off + i] = int(v)


def _set_of(combos: tuple[Combo, ...]) -> tuple[int, int, int]:
    m = v = 0
    for c in combos:
        m |= c.mask
        v += c.value
    return m, v, len(combos)


def from_state(state: State) -> np.ndarray:
    """The ``int64[ROW]`` row of a reference state (see ``_layout.py`` for every field)."""
    cfg = state.cfg
    n = cfg.num_players
    r = empty_row()
    r[L.DEALER] = state.dealer
    r[L.PHASE] = int(state.phase)
    r[L.SEAT] = state.seat
    ncalls = state.n_calls if state.phase != Phase.AUCTION else len(state.history)
    if ncalls > L.MAXCALLS:
        raise ValueError(f"auction of {ncalls} calls exceeds the row's {L.MAXCALLS}")
    r[L.NCALLS] = ncalls
    r[L.NHIST] = len(state.history)
    _seq(r, L.CALLS, state.history[:ncalls])
    for i, a in enumerate(state.history[:ncalls]):
        r[L.LAST_CALL + (state.dealer + 1 + i) % cfg.num_players] = a
    _seq(r, L.HANDS, state.hands)
    _seq(r, L.START_HANDS, state.start_hands)
    _seq(r, L.PLAY_HANDS, state.play_hands)
    _seq(r, L.STOCK, state.stock)
    r[L.NSTOCK] = len(state.stock)
    r[L.HIGH_VALUE] = state.high_value
    r[L.HIGH_SEAT] = state.high_seat
    r[L.HIGH_CALL] = state.high_call
    r[L.KAPUT_SEEN] = int(state.kaput_seen)
    r[L.DOUBLE] = state.double
    r[L.PASSES] = state.passes
    r[L.ROUND] = state.round
    c = state.contract
    if c is not None:
        r[L.C_SEAT], r[L.C_STRAIN], r[L.C_VALUE] = c.seat, c.strain, c.value
        r[L.C_KIND] = CONTRACT_KINDS.index(c.kind)
        r[L.C_PLUS], r[L.C_DOUBLE], r[L.C_CALL] = c.plus, c.double, c.call
    _seq(r, L.TRICK, state.trick)
    r[L.TRICK_LEN] = len(state.trick)
    r[L.LEADER] = state.leader
    r[L.TRICK_NO] = state.trick_no
    _seq(r, L.TRICKS, state.tricks)
    _seq(r, L.POINTS, state.points)
    r[L.NPLAYS] = len(state.plays)
    for s, card in state.plays:
        r[L.PLAYED + s] |= 1 << card
    _seq(r, L.PLAY_SEAT, (s for s, _ in state.plays))
    _seq(r, L.PLAY_CARD, (card for _, card in state.plays))
    r[L.KAPUT_BROKEN] = int(state.kaput_broken)
    r[L.NPEND] = len(state.pending)
    _seq(r, L.PEND_KIND, (k for k, _ in state.pending))
    _seq(r, L.PEND_SEAT, (s for _, s in state.pending))
    d = state.decl
    if d is not None:
        r[L.HAS_DECL] = 1
        for s in range(n):
            r[L.ANNOUNCED + s] = d.announced[s]
            cl = d.claim[s]
            if cl is not None:
                r[L.CLAIM_CLS + s], r[L.CLAIM_VALUE + s], r[L.CLAIM_MASK + s] = cl.cls, cl.value, cl.mask
                r[L.CLAIM_KEY + s] = L.combo_key(cl.key)
                r[L.CLAIM_SUIT + s], r[L.CLAIM_TOP + s] = cl.suit, cl.top
            r[L.SHOW_MASK + s], r[L.SHOW_VALUE + s], r[L.SHOW_N + s] = _set_of(d.show_set[s])
            r[L.CONCEDED + s] = int(d.conceded[s])
            r[L.RIGHTS + s] = int(d.rights[s])
            r[L.DECIDED + s] = d.decided[s]
        r[L.NEV] = len(d.events)
        if len(d.events) > L.MAXEV:
            raise ValueError(f"{len(d.events)} height events exceed the row's {L.MAXEV}")
        _seq(r, L.EV_SEAT, (e[0] for e in d.events))
        _seq(r, L.EV_STEP, (e[1] for e in d.events))
        _seq(r, L.EV_TOP, (e[2] for e in d.events))
        r[L.DLEADER] = d.leader
        r[L.NANN] = len(d.announce_order)
        _seq(r, L.ANN_ORDER, d.announce_order)
        if cfg.declarations == "auto":
            for s in range(n):
                bs = best_set(state.play_hands[s], c.strain, cfg.long_run, cfg.carre_table)
                m, v, _ = _set_of(bs)
                r[L.AUTO_MASK + s], r[L.AUTO_VALUE + s] = m, v
                r[L.AUTO_KEY + s] = L.combo_key(bs[0].key) if bs else -1
    if cfg.kaput_bid == "raisable":
        for s in range(n):
            for strain in layout_for(cfg).strains:
                r[L.ACH + 5 * s + strain] = sum(1 << x for x in achievable_plus(
                    state.start_hands[s], strain, cfg.long_run, cfg.carre_table))
    _seq(r, L.FACE_DOWN, state.face_down)
    _seq(r, L.UNLAID, state.unlaid)
    if state.piles:
        r[L.HAS_PILES] = 1
        for s, p in enumerate(state.piles):
            _seq(r, L.PILES + 16 * s, p)
    return r


def _ints(row: list[int], off: int, k: int) -> tuple[int, ...]:
    """``row[off:off + k]`` as a tuple (``row``: the row as a list of Python ints)."""
    return tuple(row[off:off + k])


def _claim_hand(state_cards: dict, cfg: RulesConfig, seat: int) -> int:
    hand = state_cards["play_hands"][seat]
    if state_cards["piles"]:
        bottoms = 0
        for c in state_cards["piles"][seat][0::2]:
            bottoms |= 1 << c
        hand &= ~bottoms
    return hand


def to_state(row: np.ndarray, cfg: RulesConfig, history: Sequence[int] | None = None) -> State:
    """The reference :class:`State` of a row (inverse of :func:`from_state`).

    The row keeps the auction calls but only the number of later actions (``NHIST``): without
    ``history`` the play-phase part of ``State.history`` is ``-1`` placeholders; ``history``
    (every action id of the deal, as the caller kept them) makes the state complete.

    Raises:
        ValueError: the row's claim does not match any combination of the seat's hand (a
            corrupted row), or ``history`` does not have ``NHIST`` actions starting with the
            row's auction calls.
    """
    full_history = history
    row = np.asarray(row).tolist()  # Python ints: one conversion instead of one per field
    n = cfg.num_players
    phase = Phase(int(row[L.PHASE]))
    ncalls = int(row[L.NCALLS])
    nplays = int(row[L.NPLAYS])
    play_seats = _ints(row, L.PLAY_SEAT, nplays)
    play_cards = _ints(row, L.PLAY_CARD, nplays)
    plays = tuple(zip(play_seats, play_cards))
    # the history: the auction calls, then the play-phase actions are not kept in the row;
    # they are rebuilt from the plays and declaration decisions only in length (NHIST)
    history = _ints(row, L.CALLS, ncalls)
    started = phase != Phase.AUCTION and int(row[L.C_SEAT]) >= 0
    piles: tuple = ()
    if row[L.HAS_PILES]:
        piles = tuple(_ints(row, L.PILES + 16 * s, 16) for s in range(n))
    contract = None
    if row[L.C_SEAT] >= 0:
        contract = Contract(seat=int(row[L.C_SEAT]), strain=int(row[L.C_STRAIN]), value=int(row[L.C_VALUE]),
                            kind=CONTRACT_KINDS[int(row[L.C_KIND])], plus=int(row[L.C_PLUS]),
                            double=int(row[L.C_DOUBLE]), call=int(row[L.C_CALL]))
    play_hands = _ints(row, L.PLAY_HANDS, n) if started else ()
    decl = None
    if row[L.HAS_DECL]:
        cards = {"play_hands": play_hands, "piles": piles}
        claims: list[Combo | None] = []
        sets: list[tuple[Combo, ...]] = []
        for s in range(n):
            cls = int(row[L.CLAIM_CLS + s])
            if cls < 0:
                claims.append(None)
                sets.append(())
                continue
            hand = _claim_hand(cards, cfg, s)
            mask = int(row[L.CLAIM_MASK + s])
            inst = [cb for cb in instances(hand, contract.strain, cfg.long_run, cfg.carre_table) if cb.mask == mask]
            if not inst:
                raise ValueError(f"row: claim_mask of seat {s} is no combination of its hand")
            claims.append(inst[0])
            sets.append(best_set(hand, contract.strain, cfg.long_run, cfg.carre_table, max_cls=cls, include=inst[0]))
        nev = int(row[L.NEV])
        events = tuple(zip(_ints(row, L.EV_SEAT, nev), _ints(row, L.EV_STEP, nev), _ints(row, L.EV_TOP, nev)))
        decl = Declarations(
            announced=_ints(row, L.ANNOUNCED, n), claim=tuple(claims), show_set=tuple(sets),
            conceded=tuple(bool(x) for x in row[L.CONCEDED:L.CONCEDED + n]), events=events,
            leader=int(row[L.DLEADER]), rights=_ints(row, L.RIGHTS, n), decided=_ints(row, L.DECIDED, n),
            announce_order=_ints(row, L.ANN_ORDER, int(row[L.NANN])),
        )
    npend = int(row[L.NPEND])
    pending = tuple((Step(k), s) for k, s in zip(_ints(row, L.PEND_KIND, npend), _ints(row, L.PEND_SEAT, npend)))
    # the history's play-phase part: the reference keeps every action id, the row only their
    # count; without ``full_history`` they become -1 placeholders (records need the real ids,
    # rules and views do not)
    nhist = int(row[L.NHIST])
    if full_history is not None:
        full = tuple(int(a) for a in full_history)
        if len(full) != nhist or full[:len(history)] != history:
            raise ValueError(f"history of {len(full)} actions does not match the row's {nhist} "
                             f"(auction calls {list(history)})")
        history = full
    elif nhist > len(history):
        history = history + (-1,) * (nhist - len(history))
    face_down = _ints(row, L.FACE_DOWN, n) if piles else ()
    unlaid = _ints(row, L.UNLAID, n) if piles else ()
    return State(
        cfg=cfg, dealer=int(row[L.DEALER]), start_hands=_ints(row, L.START_HANDS, n),
        stock=_ints(row, L.STOCK, int(row[L.NSTOCK])), phase=phase, seat=int(row[L.SEAT]), history=history,
        hands=_ints(row, L.HANDS, n), high_value=int(row[L.HIGH_VALUE]), high_seat=int(row[L.HIGH_SEAT]),
        high_call=int(row[L.HIGH_CALL]), kaput_seen=bool(row[L.KAPUT_SEEN]), double=int(row[L.DOUBLE]),
        passes=int(row[L.PASSES]), round=int(row[L.ROUND]), contract=contract,
        n_calls=ncalls if phase != Phase.AUCTION else 0, play_hands=play_hands,
        trick=_ints(row, L.TRICK, int(row[L.TRICK_LEN])), leader=int(row[L.LEADER]),
        trick_no=int(row[L.TRICK_NO]), tricks=_ints(row, L.TRICKS, n) if started else (),
        points=_ints(row, L.POINTS, n) if started else (), plays=plays, kaput_broken=bool(row[L.KAPUT_BROKEN]),
        pending=pending, decl=decl, face_down=face_down, unlaid=unlaid, piles=piles,
    )


def result_from_array(r: np.ndarray) -> DealResult:
    """The :class:`~blot_env.scoring.DealResult` of a compiled result vector ``int64[16]``.

    Layout (``_score.score_row`` then the contract): made (-1 passed out, 0, 1), tricks[2],
    card_points[2] (raw), combinations[2], score[2] (score-sheet units) per side, then the
    contract's seat, strain, value, kind (index into ``codes.CONTRACT_KINDS``), plus, double, call.
    """
    if r[0] < 0:
        return passed_out_result()
    c = Contract(seat=int(r[9]), strain=int(r[10]), value=int(r[11]), kind=CONTRACT_KINDS[int(r[12])],
                 plus=int(r[13]), double=int(r[14]), call=int(r[15]))
    return DealResult(c, bool(r[0]), (int(r[1]), int(r[2])), (int(r[3]), int(r[4])), (int(r[5]), int(r[6])),
                      (int(r[7]), int(r[8])))
