"""The terminal table of ``blot-play``: drawing a snapshot with rich, and reading a human's input.

The table (:func:`table_panel`) shows the auction, the contract, the declarations, every
seat (the human's hand by suit, the others' card counts or face-up cards), the current and
the last trick, tricks and card points per team and the score sheet, with suit symbols in
colour (hearts and diamonds red). rich prints plain text when the output is not a terminal
or ``NO_COLOR`` is set.

Input (:func:`parse_choice`): the number of a listed choice, or an action string of the
deal-record grammar (docs/deal-record.md) in any case and spacing: ``play 9H``, ``9H``
(a card alone plays it), ``10H``, ``9♥``, ``bid 10S``, ``bid 10 S``, ``kaput H``, ``pass``,
``contra``, ``announce terz``, ``show``. A string that is no action raises
:class:`InputError`; whether a parsed action is legal is the engine's to say.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from blot_env.actions import ActionLayout, UnknownActionError
from blot_env.errors import IllegalActionError

from .game import Game

SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
_SYMBOL_LETTERS = {v: k for k, v in SUIT_SYMBOLS.items()}
_CARD = re.compile(r"\b(10|[789TJQKA])([CDHS])\b")
_SPACED_BID = re.compile(r"^(bid|name)\s+(\d+)\s+(nt|[cdhs])\b(.*)$", re.IGNORECASE)
MAX_LISTED = 24
"""Choices listed by number; longer lists (a bazar auction's bids) end with a summary."""


class InputError(ValueError):
    """A line that is neither a choice number nor an action string; the message says what to type."""


def suit_style(suit: str) -> str:
    return "bold red" if suit in "DH" else "bold"


def card_text(card: str) -> Text:
    """``"TH"`` -> a coloured ``10♥``."""
    rank = "10" if card[0] == "T" else card[0]
    return Text(rank + SUIT_SYMBOLS[card[1]], style=suit_style(card[1]))


def action_text(action: str) -> Text:
    """An action string with its cards and strains drawn as coloured suit symbols
    (``"bid 9H"`` -> ``bid 9♥``, ``"play TS"`` -> ``play 10♠``)."""
    out = Text()
    m = re.match(r"^(bid (?:kaput(?:\+\d+)? |\d+)|name |play )(NT|[CDHS]|10|[789TJQKA][CDHS])(.*)$", action)
    if not m:
        return Text(action)
    head, mid, tail = m.groups()
    out.append(head)
    if head == "play ":
        out.append_text(card_text(mid))
    elif mid == "NT":
        out.append("NT", style="bold")
    else:
        out.append(SUIT_SYMBOLS[mid], style=suit_style(mid))
    out.append(tail)
    return out


def hand_text(cards: Sequence[str]) -> Text:
    """Cards grouped by suit: ``♣ 7 8 K  ♦ 9  ♥ J A``."""
    out = Text()
    for suit in "CDHS":
        ranks = [("10" if c[0] == "T" else c[0]) for c in cards if c[1] == suit]
        if ranks:
            if out:
                out.append("   ")
            out.append(SUIT_SYMBOLS[suit] + " " + " ".join(ranks), style=suit_style(suit))
    return out if out else Text("-")


def parse_choice(text: str, legal: Sequence[int], layout: ActionLayout) -> int:
    """The action id a human typed: a choice number (1-based, in the order of ``legal``) or an
    action string (see the module docstring). The id may still be illegal here.

    Raises:
        InputError: empty input, a number outside ``1..len(legal)``, or no action of this preset.
    """
    t = text.strip()
    hint = (f"type a choice number 1..{len(legal)}, a card such as 9H, or an action such as "
            "'bid 9H', 'pass', 'contra', 'announce terz'")
    if not t:
        raise InputError(f"nothing typed: {hint}")
    if t.isdigit():
        k = int(t)
        if 1 <= k <= len(legal):
            return legal[k - 1]
        raise InputError(f"there is no choice {k}: {hint}")
    for sym, letter in _SYMBOL_LETTERS.items():
        t = t.replace(sym, letter)
    t = " ".join(t.split())
    cands = [t, f"play {t}"]
    m = _SPACED_BID.match(t)
    if m:
        cands.append(f"{m.group(1)} {m.group(2)}{m.group(3)}{m.group(4)}")
    if t.lower().startswith("kaput"):
        cands.append(f"bid {t}")
    for c in cands:
        try:
            return layout.parse(c)
        except UnknownActionError:
            continue
    raise InputError(f"{text.strip()!r} is not an action of {layout.cfg.preset}: {hint}")


def _team_names(n: int, human: int | None, names: Sequence[str]) -> tuple[str, str]:
    if human is None:
        return ("seats 0+2", "seats 1+3") if n == 4 else (f"seat 0 {names[0]}", f"seat 1 {names[1]}")
    if n == 4:
        return ("us", "them") if human % 2 == 0 else ("them", "us")
    return ("you", names[1]) if human == 0 else (names[0], "you")


def _seat_name(snap: dict, seat: int, human: int | None) -> str:
    n = snap["num_players"]
    if seat == human:
        return f"You (seat {seat})"
    rel = ""
    if human is not None and n == 4:
        rel = {1: " (left)", 2: " (partner)", 3: " (right)"}[(seat - human) % 4]
    players = snap.get("players")
    return f"seat {seat}" + (f" · {players[seat]}" if players else "") + rel


def table_panel(snap: dict[str, Any], human: int | None = None, title: str | None = None) -> Panel:
    """The table of a snapshot (:func:`blot_env.table.table_snapshot`) as a rich panel, for the
    seat ``human`` (``None``: a spectator)."""
    n = snap["num_players"]
    names = snap.get("players") or [f"seat {s}" for s in range(n)]
    teams = _team_names(n, human, names)
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="cyan", no_wrap=True)
    grid.add_column()
    calls = Text()
    for a in snap["auction"]:
        if calls:
            calls.append("   ")
        calls.append(f"{a['seat']}: ", style="dim")
        calls.append_text(action_text(a["call"]))
    grid.add_row("Auction", calls or Text("-"))
    if snap["open_card"] is not None:
        grid.add_row("Open card", card_text(snap["open_card"]))
    c = snap["contract"]
    if c is not None:
        line = Text(f"{_seat_name(snap, c['seat'], human)}  ")
        line.append_text(action_text(c["call"]))
        if c["double"] != "none":
            line.append(f"  {c['double']}", style="bold magenta")
        grid.add_row("Contract", line)
    d = snap["declarations"]
    if any(a is not None for a in d["announced"]) or d["events"]:
        line = Text("   ".join(f"{s}: {a}" for s, a in enumerate(d["announced"]) if a is not None))
        if d["events"]:
            line.append("   heights: " + ", ".join(f"{e['seat']} {e['event']}" for e in d["events"]))
        grid.add_row("Declared", line)
    for s, cards in enumerate(d["shown"]):
        if cards:
            grid.add_row("Shown", Text(f"{s}: ").append_text(hand_text(cards)))
    grid.add_row("", "")
    for s in range(n):
        line = Text()
        line.append("▶ " if s == snap["to_act"] else "  ", style="bold yellow")
        dealer = " (dealer)" if s == snap["dealer"] else ""
        line.append(f"{_seat_name(snap, s, human)}{dealer}:  ", style="bold" if s == human else "")
        hand = snap["hands"][s]
        if hand is not None:
            line.append_text(hand_text(hand))
        if snap["face_up"] is not None and hand is None:
            line.append_text(hand_text(snap["face_up"][s]))
        if snap["hidden"][s]:
            line.append(f"  {'▮' * snap['hidden'][s]} {snap['hidden'][s]}", style="bright_blue")
        grid.add_row("Seats" if s == 0 else "", line)
    grid.add_row("", "")
    if snap["phase"] != "auction":
        t = snap["trick"]
        line = Text()
        for x in t["cards"]:
            line.append(f"{x['seat']}: ", style="dim")
            line.append_text(card_text(x["card"]))
            line.append("   ")
        if snap["phase"] == "play":
            grid.add_row(f"Trick {t['number']}", line or Text("-"))
        lt = snap["last_trick"]
        if lt is not None:
            line = Text()
            for x in lt["cards"]:
                line.append(f"{x['seat']}: ", style="dim")
                line.append_text(card_text(x["card"]))
                line.append("   ")
            line.append(f"won by {_seat_name(snap, lt['winner'], human)}")
            grid.add_row(f"Last trick {lt['number']}", line)
        tr, pts = snap["tricks"], snap["card_points"]
        grid.add_row("Tricks", f"{teams[0]} {tr[0]} · {teams[1]} {tr[1]}      card points "
                               f"{teams[0]} {pts[0]} · {teams[1]} {pts[1]}")
    r = snap["result"]
    if r is not None:
        if r["contract"] is None:
            verdict = "passed out (everybody passed)"
        else:
            verdict = f"contract {r['contract']['bid']} {'made' if r['made'] else 'failed'}"
        grid.add_row("Deal score", Text(f"{teams[0]} {r['score'][0]} · {teams[1]} {r['score'][1]}   ({verdict}; "
                                        f"combinations {r['combinations'][0]} · {r['combinations'][1]})",
                                        style="bold"))
    m = snap["match"]
    if m is not None:
        sheet = Text()
        for i, (a, b) in enumerate(m["deal_scores"], 1):
            sheet.append(f"{i}: {a}·{b}   ", style="dim")
        sheet.append(f"total {teams[0]} {m['totals'][0]} · {teams[1]} {m['totals'][1]}  (to {m['target']})",
                     style="bold")
        if m.get("winner") is not None:
            sheet.append(f"   winner: {teams[m['winner']]}", style="bold green")
        grid.add_row("Score sheet", sheet)
    head = title or f"{snap['preset']} · dealer seat {snap['dealer']}"
    return Panel(grid, title=head, title_align="left", border_style="green")


def choices_text(snap: dict[str, Any]) -> Text:
    """The legal choices, numbered (a long list ends with a summary of the rest)."""
    legal = snap["legal"]
    out = Text("Your choices" + (f" ({snap['step']})" if snap["step"] else "") + ":\n", style="bold")
    for i, a in enumerate(legal[:MAX_LISTED], 1):
        out.append(f" {i:>2} ", style="cyan")
        out.append_text(action_text(a["action"]))
        out.append("\n" if i % 6 == 0 else "  ")
    rest = legal[MAX_LISTED:]
    if rest:
        out.append(f"\n  ... {len(rest)} more: {rest[0]['action']} ... {rest[-1]['action']} "
                   f"(numbers {MAX_LISTED + 1}..{len(legal)}, or type them, e.g. 'bid 10 S')", style="dim")
    return out


def play(game: Game, console: Console, human: int, read: Callable[[str], str] | None = None,
         pause: Callable[[], None] | None = None) -> None:
    """Play ``game`` in the terminal for the human seat ``human`` until it is over.

    Args:
        game: the table (``game.agents[human]`` is ``None``).
        console: where the table is printed.
        human: the human's seat.
        read: reads one line after a prompt (default ``console.input``); ``EOFError`` or
            ``KeyboardInterrupt`` from it end the game early.
        pause: called between the deals of a match (default: wait for Enter).

    Typed ``help`` (or ``?``) lists the choices again; ``quit`` ends the game early.
    """
    read = read or console.input
    lay = game.layout
    while True:
        if game.deal_over:
            console.print(table_panel(game.snapshot(None), human, _title(game, "deal over")))
            if game.over:
                return
            (pause or (lambda: read("Enter: next deal ")))()
            game.next_deal()
            console.rule(f"deal {game.deal_index + 1}")
            continue
        if not game.human_to_act():
            with console.status(f"seat {game.to_act} ({game.names[game.to_act]}) is thinking…"):
                before = game.state.trick_no
                seat, action = game.bot_step()
            line = Text(f"  seat {seat} · {game.names[seat]}: ", style="dim")
            console.print(line.append_text(action_text(lay.describe(action))))
            _trick_won(game, console, human, before)
            continue
        snap = game.snapshot(human)
        console.print(table_panel(snap, human, _title(game)))
        console.print(choices_text(snap))
        while True:
            text = read("Your move> ")
            cmd = text.strip().lower()
            if cmd in ("help", "?"):
                console.print(choices_text(snap))
                continue
            if cmd in ("quit", "exit"):
                raise KeyboardInterrupt
            try:
                action = parse_choice(text, [x["id"] for x in snap["legal"]], lay)
                before = game.state.trick_no
                game.act(action)
            except InputError as e:
                console.print(Text("Not understood: ", style="bold red").append(str(e)))
                continue
            except IllegalActionError as e:
                console.print(Text("Not legal now: ", style="bold red").append(
                    f"{lay.describe(action)!r}: {e.reason}. Type help to list the legal choices."))
                continue
            console.print(Text("  You: ", style="bold").append_text(action_text(lay.describe(action))))
            _trick_won(game, console, human, before)
            break


def _trick_won(game: Game, console: Console, human: int, trick_before: int) -> None:
    """Print who won the trick the last action completed (if it completed one)."""
    if game.state.trick_no != trick_before and not game.deal_over:
        snap = game.snapshot(human)
        lt = snap["last_trick"]
        console.print(f"  trick {lt['number']} won by {_seat_name(snap, lt['winner'], human)}", style="yellow")


def _title(game: Game, extra: str = "") -> str:
    t = f"{game.cfg.preset} · deal {game.deal_index + 1} · dealer seat {game.state.dealer}"
    if game.match is not None:
        t += f" · match to {game.cfg.target}"
    return t + (f" · {extra}" if extra else "")


__all__ = ["InputError", "action_text", "card_text", "choices_text", "hand_text", "parse_choice", "play",
           "table_panel"]
