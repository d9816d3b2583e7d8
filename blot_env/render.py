"""Text rendering of a deal (the env's ``render_mode="ansi"``).

``render_text(state, observer)`` shows what ``observer`` may see (built from its
:class:`~blot_env.view.SeatView`); ``show_all=True`` adds every hand (debugging only: it
shows hidden cards).
"""

from __future__ import annotations

from collections.abc import Sequence

from .actions import CLASS_NAMES, layout_for
from .cards import STRAINS, cards_of, cards_str
from .codes import DOUBLE_NAMES
from .engine import current_seat
from .state import Phase, State
from .view import seat_view

_STEP_NAMES = ("announce", "height", "answer", "show")
_EVENT_NAMES = ("height", "height trump", "concede", "reveal")  # by EVENT_* code (blot_env.codes)


def _hand(mask: int) -> str:
    return cards_str(cards_of(mask)) or "-"


def render_text(state: State, observer: int | None = None, show_all: bool = False,
                match_totals: Sequence[int] | None = None) -> str:
    """The table as text.

    Args:
        state: the deal.
        observer: seat whose hand is shown (``None``: the seat to act, or seat 0 at the end).
        show_all: also show every seat's cards (hidden information; for debugging).
        match_totals: match totals per side to print, if any.
    """
    cfg = state.cfg
    n = cfg.num_players
    lay = layout_for(cfg)
    to_act = current_seat(state)
    if observer is None:
        observer = to_act if to_act >= 0 else 0
    v = seat_view(state, observer)
    lines = [f"{cfg.preset}  dealer {state.dealer}  phase {Phase(state.phase).name.lower()}"
             + (f"  to act: seat {to_act}" if to_act >= 0 else "  (deal over)")]
    if state.pending:
        lines[0] += f" ({_STEP_NAMES[state.pending[0][0]]})"
    calls = "  ".join(f"{s}:{lay.describe(a)}" for s, a in v.calls)
    lines.append(f"auction: {calls or '-'}")
    if v.contract_seat >= 0:
        lines.append(f"contract: seat {v.contract_seat} {lay.describe(state.contract.call)} "
                     f"({STRAINS[v.contract_strain]}, {DOUBLE_NAMES[v.double]})")
    elif v.double:
        lines.append(f"double: {DOUBLE_NAMES[v.double]}")
    if v.open_card >= 0:
        lines.append(f"open card: {_hand(1 << v.open_card)}")
    lines.append(f"seat {observer} hand: {_hand(v.hand)}")
    if v.face_up:
        for s in range(n):
            lines.append(f"  seat {s} face up: {_hand(v.face_up[s])}  face down: {v.hidden_counts[s]}")
    if show_all:
        for s in range(n):
            lines.append(f"  [debug] seat {s}: {_hand(state.hands[s])}")
    if state.phase != Phase.AUCTION:
        trick = "  ".join(f"{s}:{_hand(1 << c)}" for s, c in zip(v.trick_seats, v.trick))
        lines.append(f"trick {v.trick_no + 1}: {trick or '-'}")
        tr = [sum(v.tricks[s] for s in range(n) if s % 2 == side) for side in (0, 1)]
        pts = [sum(v.points[s] for s in range(n) if s % 2 == side) for side in (0, 1)]
        lines.append(f"tricks {tr[0]}:{tr[1]}  card points {pts[0]}:{pts[1]}")
        if any(a >= 0 for a in v.announced):
            ann = "  ".join(f"{s}:{CLASS_NAMES[a] if a >= 0 else '?'}" for s, a in enumerate(v.announced))
            lines.append(f"announced: {ann}")
        if v.events:
            lines.append("heights: " + "  ".join(f"{s}:{_EVENT_NAMES[k]}" for s, k, _ in v.events))
        shown = [f"{s}:{_hand(m)}" for s, m in enumerate(v.shown) if m]
        if shown:
            lines.append("shown: " + "  ".join(shown))
    if state.phase == Phase.DONE:
        from .engine import deal_result

        r = deal_result(state)
        lines.append(f"deal score {r.score[0]}:{r.score[1]}" + ("" if r.contract else " (passed out)"))
    if match_totals is not None:
        lines.append(f"match {match_totals[0]}:{match_totals[1]} (target {cfg.target})")
    return "\n".join(lines) + "\n"


__all__ = ["render_text"]
