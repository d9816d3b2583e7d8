"""What a table shows: a JSON-ready snapshot of a deal, and the frames of a deal record.

One description of the table feeds every picture of it: the terminal game (``blot-play``),
the browser viewer (``blot-view``) and the env's ``render_mode="rgb_array"`` image
(:mod:`blot_env.render_image`). A snapshot seen from a seat is built from that seat's
:class:`~blot_env.view.SeatView` only, so it cannot show a hidden card; ``observer=None``
shows every hand (replays, debugging).

Snapshot fields (all JSON types; seats are absolute, teams are ``seat % 2``; cards are
record strings such as ``"JH"``):

* ``preset``, ``num_players``, ``dealer``, ``observer`` (seat or ``None`` for all hands),
  ``phase`` (``"auction"``, ``"play"``, ``"done"``), ``to_act`` (seat, -1 at the end),
  ``step`` (``None`` or the pending declaration step: ``"announce"``, ``"height"``,
  ``"answer"``, ``"show"``), ``actions_taken`` (length of the deal's history);
* ``hands``: per seat a list of cards, or ``None`` where the observer may not see them;
  ``hidden``: per seat the number of cards not shown; ``face_up`` (Open Blot: per seat the
  public pile tops, else ``None``); ``open_card`` (duels: the turned card or ``None``);
* ``auction``: ``[{"seat", "call"}]`` in order; ``contract``: ``None`` or
  ``{"seat", "call", "strain", "double"}`` (strain ``"C".."NT"``, double ``"none"``,
  ``"contra"``, ``"recontra"``); ``high``: the auction's standing call ``{"seat", "call"}``;
* ``declarations``: ``{"announced": [class name or None per seat], "events": [{"seat",
  "event"}], "shown": [cards per seat]}`` (rules.md 2.4);
* ``trick``: ``{"number": 1-based, "cards": [{"seat", "card"}]}`` (the trick being played);
  ``last_trick``: ``None`` or ``{"number", "cards", "winner"}`` (the last complete trick);
* ``tricks``, ``card_points``: per team, tricks won and raw card points so far;
* ``result``: the record's result JSON once the deal is over (docs/deal-record.md);
* ``match``: ``None`` or ``{"totals", "target", "deal_scores"}`` (score-sheet units);
* ``legal``: ``[{"id", "action"}]`` of the seat to act when the observer may see them (the
  observer is to act, or ``observer=None``);
* ``last_action``: ``None`` or ``{"seat", "action"}`` (the action that led here, when the
  caller passes it); ``players``: names per seat or ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .actions import CLASS_NAMES, layout_for
from .cards import STRAINS, card_str, cards_of
from .codes import DOUBLE_NAMES
from .engine import apply_action, current_seat, deal_result
from .errors import IllegalActionError, RecordError
from .match import MatchState
from .play import trick_winner
from .record import initial_state, parse_actions
from .state import Phase, State
from .view import seat_view

PHASE_NAMES = ("auction", "play", "done")
STEP_NAMES = ("announce", "height", "answer", "show")
EVENT_NAMES = ("height", "height trump", "concede", "reveal")


def _cards(mask: int) -> list[str]:
    return [card_str(c) for c in cards_of(mask)]


def table_snapshot(state: State, observer: int | None = None, match: MatchState | None = None,
                   players: Sequence[str] | None = None,
                   last_action: tuple[int, int] | None = None) -> dict[str, Any]:
    """The table of ``state`` as seen by ``observer`` (a seat) or by a spectator of every hand
    (``observer=None``); the fields are listed in the module docstring.

    Args:
        state: the deal.
        observer: seat 0..n-1 whose view is shown, or ``None`` for every hand.
        match: the match state (totals before this deal's score is added), if any.
        players: a name per seat (agent names), shown by the viewers.
        last_action: ``(seat, action id)`` of the action that led to ``state``, if known.

    Raises:
        ValueError: ``observer`` is not a seat of the preset, or ``players`` has the wrong length.
    """
    cfg = state.cfg
    n = cfg.num_players
    lay = layout_for(cfg)
    to_act = current_seat(state)
    if observer is not None and not (isinstance(observer, int) and 0 <= observer < n):
        raise ValueError(f"observer must be a seat 0..{n - 1} or None, got {observer!r}")
    if players is not None and len(players) != n:
        raise ValueError(f"players must name {n} seats, got {len(players)}")
    # the public part comes from a seat's view; a spectator of all hands takes the view of the
    # seat to act (its legal actions are then listed too)
    v = seat_view(state, observer if observer is not None else max(to_act, 0))
    if observer is None:
        hands: list[list[str] | None] = [_cards(state.hands[s]) for s in range(n)]
    else:
        hands = [_cards(v.hand) if s == observer else None for s in range(n)]
    if v.face_up:
        face_up: list[list[str]] | None = [_cards(m) for m in v.face_up]
        hidden = list(v.hidden_counts)
        if observer is None:
            hidden = [0] * n
    else:
        face_up = None
        hidden = [0 if hands[s] is not None else state.hands[s].bit_count() for s in range(n)]
    c = state.contract
    contract = None
    if c is not None:
        contract = {"seat": c.seat, "call": lay.describe(c.call), "strain": STRAINS[c.strain],
                    "double": DOUBLE_NAMES[c.double]}
    plays = v.plays
    last_trick = None
    done_tricks = len(plays) // n
    if done_tricks and c is not None:
        last = plays[(done_tricks - 1) * n:done_tricks * n]
        cards = tuple(card for _, card in last)
        seats = tuple(seat for seat, _ in last)
        last_trick = {"number": done_tricks, "cards": [{"seat": s, "card": card_str(k)} for s, k in last],
                      "winner": trick_winner(cards, seats, c.strain)}
    teams = [[s for s in range(n) if s % 2 == t] for t in (0, 1)]
    result = deal_result(state).to_json(lay.describe) if state.phase == Phase.DONE else None
    open_card = v.open_card if v.open_card >= 0 else -1
    if observer is None and open_card < 0 and cfg.auction == "duel" and state.phase == Phase.AUCTION and state.stock:
        open_card = state.stock[0]
    legal = [{"id": a, "action": lay.describe(a)} for a in v.legal] if v.legal else []
    return {
        "preset": cfg.preset,
        "num_players": n,
        "dealer": state.dealer,
        "observer": observer,
        "phase": PHASE_NAMES[state.phase],
        "to_act": to_act,
        "step": STEP_NAMES[v.step] if v.step >= 0 else None,
        "actions_taken": len(state.history),
        "hands": hands,
        "hidden": hidden,
        "face_up": face_up,
        "open_card": card_str(open_card) if open_card >= 0 else None,
        "auction": [{"seat": s, "call": lay.describe(a)} for s, a in v.calls],
        "high": {"seat": v.high_seat, "call": lay.describe(state.high_call)} if state.high_call >= 0 else None,
        "contract": contract,
        "declarations": {
            "announced": [CLASS_NAMES[a] if a >= 0 else None for a in v.announced],
            "events": [{"seat": s, "event": EVENT_NAMES[k]} for s, k, _ in v.events],
            "shown": [_cards(m) for m in v.shown],
        },
        "trick": {"number": v.trick_no + 1 if state.phase != Phase.AUCTION else 0,
                  "cards": [{"seat": s, "card": card_str(k)} for s, k in zip(v.trick_seats, v.trick)]},
        "last_trick": last_trick,
        "tricks": [sum(v.tricks[s] for s in t) for t in teams],
        "card_points": [sum(v.points[s] for s in t) for t in teams],
        "result": result,
        "match": ({"totals": list(match.totals), "target": cfg.target,
                   "deal_scores": [list(d) for d in match.deal_scores]} if match is not None else None),
        "legal": legal,
        "last_action": {"seat": last_action[0], "action": lay.describe(last_action[1])} if last_action else None,
        "players": list(players) if players is not None else None,
    }


def record_frames(obj: dict, observer: int | None = None, match: MatchState | None = None,
                  players: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The snapshots of a deal record, one before the first action and one after each action
    (``len(actions) + 1`` frames); each frame's ``last_action`` names the seat that acted.

    Args:
        obj: a ``blot-record/1`` object (docs/deal-record.md).
        observer: the seat whose view every frame shows, or ``None`` for every hand.
        match: the match state before this deal (totals shown on every frame), if any.
        players: names per seat; default the record's optional ``"players"`` field.

    Raises:
        RecordError: a malformed record or an illegal action (index, action, seat and reason).
        ValueError: a bad ``observer``.
    """
    state = initial_state(obj)
    lay = layout_for(state.cfg)
    if players is None and isinstance(obj.get("players"), list) and len(obj["players"]) == state.cfg.num_players:
        players = [str(p) for p in obj["players"]]
    frames = [table_snapshot(state, observer, match, players)]
    for i, a in enumerate(parse_actions(obj, state.cfg)):
        seat = current_seat(state)
        if seat < 0:
            raise RecordError(f'action {i} "{lay.describe(a)}": the deal is already over')
        try:
            state = apply_action(state, a)
        except IllegalActionError as e:
            raise RecordError(f'action {i} "{lay.describe(a)}" by seat {seat}: {e.reason}') from None
        frames.append(table_snapshot(state, observer, match, players, (seat, a)))
    return frames


__all__ = ["EVENT_NAMES", "PHASE_NAMES", "STEP_NAMES", "record_frames", "table_snapshot"]
