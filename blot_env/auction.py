"""Auctions, pure functions: the bazar of rules.md 2.2 (and 2.8), classic belote (6), and
the 2-player trump choices of the duels (3, 4, 5.7.2) and Open Blot (5.2).

``legal_calls`` gives the legal action ids of the seat to act; ``apply_call`` returns the
auction fields to update and whether the auction ended; ``contract_of`` the contract.

The bazar and belote auctions share one ladder (``cfg.bid_min..bid_max`` step ``bid_step``):
belote is 80..160 step 10, suits only, no kaput, and ends after 3 passes following a bid or
a contra (``auction_end_passes = contra_end_passes = 3``); 4 passes with no bid redeal; its
"surcontra" is the ``recontra`` action (docs/deal-record.md).

The trump choices (``cfg.auction`` "duel" or "open") use ``state.round`` (0 or 1) and
``state.passes``: round 1 ends when the dealer passes; in round 2 the dealer must name.
"""

from __future__ import annotations

from .actions import ActionLayout
from .cards import RJ
from .codes import KAPUT_VALUE
from .combos import achievable_plus
from .state import Contract, State


def legal_calls(state: State, lay: ActionLayout) -> list[int]:
    """Legal calls (action ids, ascending) of ``state.seat`` in the auction or trump choice."""
    cfg = state.cfg
    if cfg.auction in ("duel", "open"):
        return _choice_legal(state, lay)
    p = state.seat
    out = [lay.id("PASS")]
    if state.double == 1:
        if state.high_seat % 2 == p % 2:
            out.append(lay.id("RECONTRA"))
        return sorted(out)
    if state.double:
        return out
    has_high = state.high_seat >= 0
    if has_high and state.high_seat % 2 != p % 2:
        out.append(lay.id("CONTRA"))
    if not state.kaput_seen:
        lo = state.high_value + 1 if has_high else cfg.bid_min
        first = next((v for v in lay.bid_values if v >= lo), None)
        if first is not None:  # bids are value-major in their block: one contiguous range
            out.extend(range(lay.bid_id(first, lay.strains[0]), lay.blocks["BID"].stop))
        if cfg.kaput_bid != "none" and (not has_high or state.high_value < KAPUT_VALUE):
            out.extend(range(lay.blocks["KAPUT"].start, lay.blocks["KAPUT"].stop))
    if cfg.kaput_bid == "raisable":
        hand = state.hands[p]
        for s in lay.strains:
            for n in achievable_plus(hand, s, cfg.long_run, cfg.carre_table):
                v = KAPUT_VALUE + n
                if n >= 2 and v <= cfg.bid_max and (not has_high or v > state.high_value):
                    out.append(lay.kaput_plus_id(n, s))
    return sorted(out)


def _open_card(state: State) -> int:
    """The duel's turned card U: the first card of the stock (rules.md 5.7.1)."""
    return state.stock[0]


def _dealer_forced_to_take(state: State) -> bool:
    """Duel round 1: the non-dealer passed a turned jack, so the dealer must take (RES-23)."""
    return (state.cfg.jack_forces_dealer and state.round == 0 and state.seat == state.dealer
            and _open_card(state) & 7 == RJ)


def _choice_legal(state: State, lay: ActionLayout) -> list[int]:
    """Legal calls of the duel / Open Blot trump choice (rules.md 3, 4, 5.2, 5.7.2)."""
    cfg = state.cfg
    dealer_turn = state.seat == state.dealer
    out = []
    if cfg.auction == "duel":
        if state.round == 0:
            out.append(lay.id("TAKE"))
            if not _dealer_forced_to_take(state):
                out.append(lay.id("PASS"))
            return sorted(out)
        u_suit = _open_card(state) >> 3
        keeps = (True, False) if cfg.duel_open_card_choice else (True,)
        out += [lay.name_id(s, k) for s in lay.strains if s != u_suit for k in keeps]
    else:
        out += [lay.name_id(s) for s in lay.strains]
    if not (state.round == 1 and dealer_turn):
        out.append(lay.id("PASS"))
    return sorted(out)


def _explain_choice(state: State, lay: ActionLayout, action: int) -> str:
    cfg = state.cfg
    block = lay.block_of[action]
    sec = "rules.md 5.2" if cfg.auction == "open" else "rules.md 3, 4, 5.7.2"
    if block == "PASS":
        if _dealer_forced_to_take(state):
            return "a turned jack passed by the non-dealer: the dealer must take (rules.md 3, RES-23)"
        return f"nobody chose in round 1: the dealer must name the trump in round 2 ({sec})"
    if block == "TAKE":
        return f"'take' (the open card's suit) only in round 1 ({sec})"
    if block == "NAME":
        if cfg.auction == "duel" and state.round == 0:
            return f"round 1 is 'take' or 'pass'; another trump is named in round 2 ({sec})"
        return f"round 2 names a trump other than the open card's suit ({sec})"
    return f"not a trump-choice call ({sec})"


def explain_illegal_call(state: State, lay: ActionLayout, action: int) -> str:
    """Why a call is illegal, naming the clause of rules.md 2.2 (or 3-6)."""
    if state.cfg.auction in ("duel", "open"):
        return _explain_choice(state, lay, action)
    block = lay.block_of[action]
    p = state.seat
    sec = "rules.md 6" if state.cfg.auction == "belote" else "rules.md 2.2"
    if state.double == 1 and block != "PASS":
        if block == "RECONTRA":
            return f"only the contracted pair may recontra ({sec})"
        return f"after a contra only recontra (by the contracted pair) or pass ({sec})"
    if state.double == 2:
        return f"the auction is over after a recontra ({sec})"
    if block == "CONTRA":
        if state.high_seat < 0:
            return f"contra needs a standing bid ({sec})"
        return f"contra only against the opponents' bid ({sec})"
    if block == "RECONTRA":
        return f"recontra only after a contra against your pair's bid ({sec})"
    if block == "BID":
        if state.kaput_seen:
            return f"no number bids once a kaput has been bid ({sec})"
        return f"a bid must be higher than the standing {state.high_value} ({sec})"
    if block == "KAPUT":
        if state.kaput_seen:
            return f"kaput only as a raise by kaput+N after a kaput ({sec})"
        return f"kaput (25) only over a standing bid of 24 or less ({sec})"
    if block == "KAPUT_PLUS":
        n = lay.params[action][0]
        if KAPUT_VALUE + n <= state.high_value:
            return f"kaput+{n} ({KAPUT_VALUE + n}) does not exceed the standing {state.high_value} ({sec})"
        return (f"kaput+{n} needs own combinations worth exactly {n} in seat {p}'s hand "
                f"(Ach, {sec})")
    return f"not an auction call ({sec})"


def apply_call(state: State, lay: ActionLayout, action: int) -> dict:
    """Field updates of a legal call; key ``"end"`` is ``None`` (go on), ``"contract"`` or ``"passed_out"``."""
    cfg = state.cfg
    block = lay.block_of[action]
    p = state.seat
    upd: dict = {"end": None}
    if cfg.auction in ("duel", "open"):
        return _apply_choice(state, block, action)
    if block == "PASS":
        passes = state.passes + 1
        upd["passes"] = passes
        if state.double == 1:
            if passes >= cfg.contra_end_passes:
                upd["end"] = "contract"
        elif state.high_seat >= 0:
            if passes >= cfg.auction_end_passes:
                upd["end"] = "contract"
        elif passes >= cfg.num_players:
            upd["end"] = "passed_out"
    elif block == "CONTRA":
        upd.update(double=1, passes=0)
    elif block == "RECONTRA":
        upd.update(double=2, passes=0, end="contract")
    else:
        if block == "BID":
            v, _ = lay.params[action]
        elif block == "KAPUT":
            v = KAPUT_VALUE
            upd["kaput_seen"] = True
        else:
            n, _ = lay.params[action]
            v = KAPUT_VALUE + n
            upd["kaput_seen"] = True
        upd.update(high_value=v, high_seat=p, high_call=action, passes=0)
    return upd


def _apply_choice(state: State, block: str, action: int) -> dict:
    """Trump choice: a pass moves on (the dealer's pass closes round 1); a take/name ends it."""
    if block != "PASS":
        return {"end": "contract", "high_seat": state.seat, "high_call": action, "passes": 0}
    upd: dict = {"end": None, "passes": state.passes + 1}
    if state.seat == state.dealer:  # round 1 over (round 2 cannot end in a pass)
        upd.update(round=1, passes=0)
        if state.unlaid:  # Open Blot: 4 more face-up cards each before round 2 (rules.md 5.1)
            upd["unlaid"] = (0,) * state.n
    return upd


def contract_of(state: State, lay: ActionLayout) -> Contract:
    """The contract fixed by a finished auction or trump choice.

    Trump choices (rules.md 5.7.3): ``kind`` "take" (the open card's suit) or "name", value 0,
    no double; ``call`` is the action that fixed the trump.
    """
    block = lay.block_of[state.high_call]
    if block in ("TAKE", "NAME"):
        if block == "TAKE":
            kind, strain = "take", _open_card(state) >> 3
        else:
            kind, strain = "name", lay.params[state.high_call][0]
        return Contract(seat=state.high_seat, strain=strain, value=0, kind=kind, plus=0, double=0,
                        call=state.high_call)
    params = lay.params[state.high_call]
    if block == "BID":
        kind, strain, plus = "num", params[1], 0
    elif block == "KAPUT":
        kind, strain, plus = "kaput", params[0], 0
    else:
        kind, strain, plus = "kaput_plus", params[1], params[0]
    return Contract(seat=state.high_seat, strain=strain, value=state.high_value, kind=kind, plus=plus,
                    double=state.double, call=state.high_call)
