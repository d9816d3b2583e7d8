"""Auctions: the bazar of rules.md 2.2 (and 2.8), classic belote (6), pure functions.

``legal_calls`` gives the legal action ids of the seat to act; ``apply_call`` returns the
auction fields to update and whether the auction ended.
"""

from __future__ import annotations

from .actions import ActionLayout
from .combos import achievable_plus
from .state import State

KAPUT_VALUE = 25


def legal_calls(state: State, lay: ActionLayout) -> list[int]:
    """Legal calls (action ids, ascending) of ``state.seat`` in a bazar/belote auction."""
    cfg = state.cfg
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
        for v in lay.bid_values:
            if v >= lo:
                for s in lay.strains:
                    out.append(lay.bid_id(v, s))
        if cfg.kaput_bid != "none" and (not has_high or state.high_value < KAPUT_VALUE):
            for s in lay.strains:
                out.append(lay.kaput_id(s))
    if cfg.kaput_bid == "raisable":
        hand = state.hands[p]
        for s in lay.strains:
            for n in achievable_plus(hand, s, cfg.long_run, cfg.carre_table):
                v = KAPUT_VALUE + n
                if n >= 2 and v <= cfg.bid_max and (not has_high or v > state.high_value):
                    out.append(lay.kaput_plus_id(n, s))
    return sorted(out)


def explain_illegal_call(state: State, lay: ActionLayout, action: int) -> str:
    """Why a call is illegal, naming the clause of rules.md 2.2 (or 6)."""
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


def contract_of(state: State, lay: ActionLayout):
    """The contract fixed by a finished bazar/belote auction."""
    from .state import Contract

    block = lay.block_of[state.high_call]
    params = lay.params[state.high_call]
    if block == "BID":
        kind, strain, plus = "num", params[1], 0
    elif block == "KAPUT":
        kind, strain, plus = "kaput", params[0], 0
    else:
        kind, strain, plus = "kaput_plus", params[1], params[0]
    return Contract(seat=state.high_seat, strain=strain, value=state.high_value, kind=kind, plus=plus,
                    double=state.double, call=state.high_call)
