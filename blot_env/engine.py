"""Phase dispatch over the immutable deal state.

``new_deal`` -> ``legal_actions`` / ``apply_action`` -> ``is_terminal`` -> ``deal_result``.
Every function is pure: it returns a new :class:`State` and never mutates one.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

import numpy as np

from . import auction, declarations, variants
from .actions import ActionLayout, action_id, layout_for
from .cards import FULL_DECK, LAST_TRICK_BONUS, SHORT_DECK, card_points, cards_of, mask_str, popcount
from .errors import IllegalActionError
from .play import explain_illegal_card, legal_cards, trick_winner
from .rules_config import RulesConfig
from .scoring import DealResult, score_deal
from .state import Phase, State, evolve


def deck_mask(cfg: RulesConfig) -> int:
    return SHORT_DECK if cfg.short_deck else FULL_DECK


def new_deal(cfg: RulesConfig, dealer: int, hands: list[int] | tuple[int, ...],
             stock: list[int] | tuple[int, ...] = (),
             piles: tuple[tuple[int, ...], ...] | None = None) -> State:
    """A deal from explicit cards. ``hands`` are bitmasks per seat; ``stock`` card ids in draw order.

    Duels: ``hands`` are the hands dealt before the trump choice and ``stock`` starts with the
    open card (rules.md 5.7.1). Open Blot: ``hands`` hold each player's 16 cards and ``piles``
    gives their order, bottom then top of piles 1..8 (rules.md 5.7.7); without ``piles`` the
    cards are paired in ascending id order.

    Raises:
        ValueError: wrong number of hands/cards, a card dealt twice, a card outside the deck,
            or piles that do not match the hands.
    """
    n = cfg.num_players
    if not 0 <= dealer < n:
        raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer}")
    if len(hands) != n:
        raise ValueError(f"expected {n} hands, got {len(hands)}")
    seen = 0
    for s, h in enumerate(hands):
        if popcount(h) != cfg.hand_size:
            raise ValueError(f"hand of seat {s} has {popcount(h)} cards, expected {cfg.hand_size}")
        if h & seen:
            raise ValueError(f"card(s) {mask_str(h & seen)} dealt twice")
        seen |= h
    for c in stock:
        if seen >> c & 1:
            raise ValueError(f"card {mask_str(1 << c)} dealt twice")
        seen |= 1 << c
    deck = deck_mask(cfg)
    if seen & ~deck:
        raise ValueError(f"card(s) {mask_str(seen & ~deck)} are not in this preset's deck")
    if seen != deck:
        raise ValueError(f"missing card(s) {mask_str(deck & ~seen)}")
    hands = tuple(int(h) for h in hands)
    extra: dict = {}
    if variants.has_piles(cfg):
        piles = variants.default_piles(hands) if piles is None else tuple(tuple(int(c) for c in p) for p in piles)
        if len(piles) != n or any(sorted(p) != cards_of(h) for p, h in zip(piles, hands)):
            raise ValueError("piles must list exactly each seat's cards (rules.md 5.7.7)")
        face_down, unlaid = variants.initial_table(piles)
        extra = {"piles": piles, "face_down": face_down, "unlaid": unlaid}
    return State(cfg=cfg, dealer=dealer, start_hands=hands, stock=tuple(stock), phase=Phase.AUCTION,
                 seat=(dealer + 1) % n, history=(), hands=hands, **extra)


@cache
def _deck_cards(deck: int) -> np.ndarray:
    """``int64[cards]``: the card ids of a deck bitmask, ascending (read-only; copy to shuffle)."""
    cards = np.array(cards_of(deck), dtype=np.int64)
    cards.setflags(write=False)
    return cards


def deal_random(cfg: RulesConfig, rng: np.random.Generator, dealer: int = 0) -> State:
    """Shuffle with ``rng`` (a ``numpy.random.Generator``) and deal (rules.md 2.1, 3, 4, 5.1, 6).

    Each seat gets ``cfg.hand_size`` consecutive cards of the shuffled deck (Open Blot: in pile
    order); the rest is the stock in draw order (duels: the open card first). The result is
    :func:`new_deal` of those cards (a valid deal by construction, so only Open Blot's piles
    go through its checks); ``rng`` draws one ``shuffle`` of the deck's card ids.

    Raises:
        ValueError: ``dealer`` is no seat.
    """
    cards = _deck_cards(deck_mask(cfg)).copy()
    rng.shuffle(cards)
    order = cards.tolist()
    n, k = cfg.num_players, cfg.hand_size
    if variants.has_piles(cfg):
        chunks = tuple(tuple(order[s * k:(s + 1) * k]) for s in range(n))
        hands = [sum(1 << c for c in ch) for ch in chunks]
        return new_deal(cfg, dealer, hands, tuple(order[n * k:]), chunks)
    if not 0 <= dealer < n:
        raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer}")
    held = []
    for s in range(n):
        h = 0
        for c in order[s * k:(s + 1) * k]:
            h |= 1 << c
        held.append(h)
    hands = tuple(held)
    return State(cfg=cfg, dealer=dealer, start_hands=hands, stock=tuple(order[n * k:]), phase=Phase.AUCTION,
                 seat=(dealer + 1) % n, history=(), hands=hands)


def layout(state_or_cfg) -> ActionLayout:
    cfg = state_or_cfg.cfg if isinstance(state_or_cfg, State) else state_or_cfg
    return layout_for(cfg)


def is_terminal(state: State) -> bool:
    return state.phase == Phase.DONE


def current_seat(state: State) -> int:
    """Seat to act, or -1 when the deal is over."""
    if state.phase == Phase.AUCTION:
        return state.seat
    if state.phase == Phase.PLAY:
        if state.pending:
            return state.pending[0][1]
        return (state.leader + len(state.trick)) % state.n
    return -1


def _trick_seats(state: State) -> tuple[int, ...]:
    return tuple((state.leader + i) % state.n for i in range(len(state.trick)))


def legal_cards_mask(state: State) -> int:
    """Bitmask of the cards the seat to play may play (rules.md 1.3)."""
    me = current_seat(state)
    cfg = state.cfg
    hand = state.hands[me] & ~state.face_down[me] if state.face_down else state.hands[me]
    return legal_cards(hand, state.trick, _trick_seats(state), state.contract.strain, me,
                       cfg.partner_exemption and cfg.num_players == 4, cfg.undertrump)


def legal_actions(state: State) -> list[int]:
    """Legal action ids of the seat to act, ascending; empty when the deal is over."""
    lay = layout_for(state.cfg)
    if state.phase == Phase.AUCTION:
        return auction.legal_calls(state, lay)
    if state.phase == Phase.PLAY:
        if state.pending:
            return declarations.legal_steps(state, lay)
        base = lay.blocks["PLAY"].start
        return [base + c for c in cards_of(legal_cards_mask(state))]
    return []


def legal_mask(state: State) -> np.ndarray:
    """``int8[A]`` mask of legal actions (A = the layout's ``num_actions``)."""
    lay = layout_for(state.cfg)
    m = np.zeros(lay.num_actions, dtype=np.int8)
    m[legal_actions(state)] = 1
    return m


def _explain(state: State, lay: ActionLayout, action: int) -> str:
    block = lay.block_of[action]
    if state.phase == Phase.AUCTION:
        if block in ("PASS", "CONTRA", "RECONTRA", "BID", "KAPUT", "KAPUT_PLUS", "TAKE", "NAME"):
            return auction.explain_illegal_call(state, lay, action)
        return "the auction is not over (rules.md 2.2)"
    if state.pending:
        kind = state.pending[0][0]
        names = ("announce a class you hold (rules.md 2.4.3 item 1)",
                 "state your height; 'height trump' only for a trump sequence (rules.md 2.4.3 item 3)",
                 "answer the height: concede or reveal (rules.md 2.4.3 item 3)",
                 "decide show or noshow before your card (rules.md 2.4.3 items 5-7)")
        if block == "ANNOUNCE":
            return f"seat {current_seat(state)} holds no combination of that class (rules.md 2.4.3 item 1)"
        return f"a declaration decision is due: {names[kind]}"
    if block != "PLAY":
        return "not a legal action during the play of tricks (rules.md 2.3)"
    me = current_seat(state)
    cfg = state.cfg
    hand = state.hands[me] & ~state.face_down[me] if state.face_down else state.hands[me]
    return explain_illegal_card(hand, state.trick, _trick_seats(state), state.contract.strain, me,
                                lay.card_of(action), cfg.partner_exemption and cfg.num_players == 4)


def apply_action(state: State, action: int) -> State:
    """The state after the seat to act takes ``action`` (an id of the preset's layout).

    Raises:
        IllegalActionError: the deal is over, or the action is not legal here; the message
            names the action, the seat, the rule and the legal alternatives.
    """
    lay = layout_for(state.cfg)
    action = check_action_id(action, current_seat(state))
    if state.phase == Phase.DONE:
        raise IllegalActionError(_safe_describe(lay, action), -1, "the deal is over")
    legal = legal_actions(state)
    if action not in legal:
        seat = current_seat(state)
        if not 0 <= action < lay.num_actions:
            raise IllegalActionError(str(action), seat, f"action id outside 0..{lay.num_actions - 1}",
                                     [lay.describe(a) for a in legal])
        raise IllegalActionError(lay.describe(action), seat, _explain(state, lay, action),
                                 [lay.describe(a) for a in legal])
    return _apply(state, lay, action)


def check_action_id(action: Any, seat: int) -> int:
    """``action`` as a Python int (:func:`blot_env.actions.action_id`, without the range check).

    Raises:
        IllegalActionError: a bool, a float, a string, None or an array other than 0-d
            integer; the message points to ``env.parse("play JH")`` for text actions.
    """
    if type(action) is int:
        return action
    return action_id(action, seat)


def _safe_describe(lay: ActionLayout, action: int) -> str:
    try:
        return lay.describe(action)
    except ValueError:
        return str(action)


def _apply(state: State, lay: ActionLayout, action: int) -> State:
    history = state.history + (action,)
    if state.phase == Phase.AUCTION:
        upd = auction.apply_call(state, lay, action)
        end = upd.pop("end")
        s = evolve(state, history=history, seat=(state.seat + 1) % state.n, **upd)
        if end == "passed_out":
            return replace(s, phase=Phase.DONE, n_calls=len(history))
        if end == "contract":
            return _start_play(replace(s, contract=auction.contract_of(s, lay)))
        return s
    if state.pending:
        s = declarations.apply_step(evolve(state, history=history), lay, action)
        return s
    return _play_card(state, history, lay.card_of(action))


def _complete_deal(state: State, lay: ActionLayout) -> State:
    """Cards that come after the trump choice: the duel draw (rules.md 5.7.1) and Open
    Blot's last four face-up cards per player (5.1)."""
    if state.cfg.auction == "duel":
        c = state.contract
        keep = c.kind == "take" or lay.params[c.call][1]
        taker, other, _ = variants.duel_draw(state.stock, keep)
        hands = list(state.hands)
        hands[c.seat] |= taker
        hands[1 - c.seat] |= other
        return replace(state, hands=tuple(hands))
    if state.unlaid:
        return replace(state, unlaid=(0,) * state.n)
    return state


def _start_play(state: State) -> State:
    n = state.n
    state = _complete_deal(state, layout_for(state.cfg))
    s = replace(state, phase=Phase.PLAY, n_calls=len(state.history), play_hands=state.hands,
                leader=state.first_hand, trick_no=0, trick=(), tricks=(0,) * n, points=(0,) * n,
                decl=declarations.initial(n))
    return _begin_turn(s)


def _begin_turn(state: State) -> State:
    seat = current_seat(state)
    s, steps = declarations.steps_for_turn(state, seat)
    return replace(s, pending=steps) if steps else s


def _play_card(state: State, history: tuple[int, ...], card: int) -> State:
    """``state`` (before ``card``) -> the state after the seat to play plays ``card``;
    ``history`` already ends with the card's action id. One new state in the common case."""
    me = current_seat(state)
    n = state.n
    hands = list(state.hands)
    hands[me] &= ~(1 << card)
    trick = state.trick + (card,)
    plays = state.plays + ((me, card),)
    face_down = state.face_down
    if state.piles:  # Open Blot: the card under a played top turns face up at once (5.7.7)
        under = variants.card_under(state, me, card)
        if under >= 0:
            fd = list(face_down)
            fd[me] &= ~(1 << under)
            face_down = tuple(fd)
    if len(trick) < n:
        return _begin_turn(evolve(state, history=history, hands=tuple(hands), trick=trick, plays=plays,
                                  face_down=face_down))
    cfg = state.cfg
    contract = state.contract
    strain = contract.strain
    seats = tuple((state.leader + i) % n for i in range(n))
    w = trick_winner(trick, seats, strain)
    pts = sum(card_points(c, strain) for c in trick)
    last = state.trick_no == cfg.num_tricks - 1
    if last:
        pts += LAST_TRICK_BONUS
    tricks = list(state.tricks)
    tricks[w] += 1
    points = list(state.points)
    points[w] += pts
    broken = state.kaput_broken or (contract.is_kaput and w % 2 != contract.seat % 2)
    done = last or (broken and state.trick_no >= 1)
    s = evolve(state, history=history, hands=tuple(hands), trick=(), plays=plays, face_down=face_down,
               leader=w, tricks=tuple(tricks), points=tuple(points), kaput_broken=broken,
               trick_no=state.trick_no + 1, phase=Phase.DONE if done else state.phase,
               pending=() if done else state.pending)
    if state.trick_no == 0:
        s = declarations.fix_leader(s)
    return s if done else _begin_turn(s)


def deal_result(state: State) -> DealResult:
    """The result of a finished deal (rules.md 2.5). Raises ValueError if it is not over."""
    if state.phase != Phase.DONE:
        raise ValueError("the deal is not over")
    return score_deal(state)


