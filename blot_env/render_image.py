"""The table as a picture: the env's ``render_mode="rgb_array"`` and ``"human"``.

``render_rgb(snapshot)`` draws a :func:`blot_env.table.table_snapshot` with Pillow and returns
``uint8[H, W, 3]`` (``H, W = SIZE``: 560 x 880 pixels), the frame Gymnasium's ``RecordVideo``
and other video recorders take. The observer's seat is at the bottom and the others follow
clockwise in playing order (seat ``+1`` on the left); the panel on the right lists the auction,
the contract, the declarations, tricks and card points per team and the score sheet.

``render_mode="human"`` shows the same frame in a window (tkinter with Pillow's ``ImageTk``,
updated at every ``render()`` call). Where no window can be opened (no display, or Python
without tkinter), :class:`HumanWindow` warns once, naming the reason, and prints the table as
text (:func:`blot_env.render.render_text`) at each call instead.

Pillow is an optional dependency (``pip install "blot-env[render]"``); without it
:func:`render_rgb` raises an ImportError that names the extra.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from functools import lru_cache
from typing import Any

import numpy as np

from .engine import current_seat
from .match import MatchState
from .state import State
from .table import table_snapshot

SIZE = (560, 880)
"""(height, width) of a frame in pixels."""
_H, _W = SIZE
_PANEL_X = 640  # the table takes x < 640, the panel the rest
_CW, _CH = 44, 62  # card width, height
_FELT = (22, 96, 60)
_PANEL = (246, 244, 238)
_RED = (200, 30, 40)
_BLACK = (20, 20, 20)
_GOLD = (250, 210, 80)
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


def _pil():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as e:  # the base install stays light: Pillow is the "render" extra
        raise ImportError('render_mode="rgb_array"/"human" draws with Pillow: pip install "blot-env[render]" '
                          f"({e})") from None
    return Image, ImageDraw, ImageFont


@lru_cache(maxsize=8)
def _font(size: int):
    _, _, ImageFont = _pil()
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has only the fixed bitmap font
        return ImageFont.load_default()


def _suit_shape(draw, cx: float, cy: float, r: float, suit: str) -> None:
    """Draw a suit symbol of radius ``r`` centred on (cx, cy), as shapes (no font needed)."""
    col = _RED if suit in "DH" else _BLACK
    if suit == "D":
        draw.polygon([(cx, cy - r), (cx + 0.72 * r, cy), (cx, cy + r), (cx - 0.72 * r, cy)], fill=col)
    elif suit == "H":
        draw.ellipse([cx - r, cy - r * 0.8, cx, cy - r * 0.8 + r], fill=col)
        draw.ellipse([cx, cy - r * 0.8, cx + r, cy - r * 0.8 + r], fill=col)
        draw.polygon([(cx - r * 0.97, cy - r * 0.15), (cx + r * 0.97, cy - r * 0.15), (cx, cy + r)], fill=col)
    elif suit == "S":
        draw.ellipse([cx - r, cy - r * 0.2, cx, cy + r * 0.8], fill=col)
        draw.ellipse([cx, cy - r * 0.2, cx + r, cy + r * 0.8], fill=col)
        draw.polygon([(cx - r * 0.97, cy + r * 0.15), (cx + r * 0.97, cy + r * 0.15), (cx, cy - r)], fill=col)
        draw.polygon([(cx, cy + r * 0.2), (cx - r * 0.35, cy + r * 1.05), (cx + r * 0.35, cy + r * 1.05)], fill=col)
    else:  # clubs
        q = r * 0.48
        for dx, dy in ((0, -r * 0.45), (-r * 0.5, r * 0.2), (r * 0.5, r * 0.2)):
            draw.ellipse([cx + dx - q, cy + dy - q, cx + dx + q, cy + dy + q], fill=col)
        draw.polygon([(cx, cy), (cx - r * 0.35, cy + r * 1.05), (cx + r * 0.35, cy + r * 1.05)], fill=col)


@lru_cache(maxsize=40)
def _card_sprite(card: str | None):
    """A card face (``"JH"``) or, for ``None``, a card back, as an RGBA image (cached)."""
    Image, ImageDraw, _ = _pil()
    img = Image.new("RGBA", (_CW, _CH), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    if card is None:
        d.rounded_rectangle([0, 0, _CW - 1, _CH - 1], radius=5, fill=(40, 70, 150), outline=(230, 230, 240))
        d.rounded_rectangle([4, 4, _CW - 5, _CH - 5], radius=3, outline=(120, 150, 220))
        return img
    rank, suit = card[0], card[1]
    d.rounded_rectangle([0, 0, _CW - 1, _CH - 1], radius=5, fill=(255, 255, 252), outline=(90, 90, 90))
    col = _RED if suit in "DH" else _BLACK
    d.text((4, 2), "10" if rank == "T" else rank, fill=col, font=_font(15))
    _suit_shape(d, 10, 27, 5, suit)
    _suit_shape(d, _CW / 2 + 4, _CH / 2 + 8, 11, suit)
    return img


def _positions(n: int, bottom: int) -> dict[int, str]:
    """Where each seat sits: the observer at the bottom, then clockwise in playing order."""
    if n == 2:
        return {bottom: "bottom", 1 - bottom: "top"}
    places = ("bottom", "left", "top", "right")
    return {(bottom + k) % n: places[k] for k in range(4)}


# the top-left corner of a seat's hand and name label, and where its trick card lies
_CENTER = (_PANEL_X // 2, _H // 2 - 10)
_TRICK_AT = {"bottom": (0, 52), "top": (0, -52), "left": (-62, 0), "right": (62, 0)}


def _hand_origin(place: str, width: int) -> tuple[int, int]:
    cx, cy = _CENTER
    if place == "bottom":
        return cx - width // 2, _H - _CH - 18
    if place == "top":
        return cx - width // 2, 34
    if place == "left":
        return 14, cy - _CH // 2
    return _PANEL_X - width - 14, cy - _CH // 2


def _draw_hand(img, draw, place: str, cards: list[str | None], label: str, active: bool) -> None:
    step = 30 if place in ("bottom", "top") else 15
    if len(cards) > 10:  # Open Blot's 16 cards
        step = 22 if place in ("bottom", "top") else 9
    width = _CW + step * max(len(cards) - 1, 0)
    x, y = _hand_origin(place, width)
    for i, c in enumerate(cards):
        sprite = _card_sprite(c)
        img.paste(sprite, (x + i * step, y), sprite)
    ly = y - 18 if place != "bottom" else y - 19
    draw.text((x, ly), label, fill=_GOLD if active else (235, 235, 235), font=_font(14))


def _seat_label(snap: dict, seat: int) -> str:
    players = snap.get("players")
    who = f"seat {seat}" + (f" · {players[seat]}" if players else "")
    if seat == snap["dealer"]:
        who += " (dealer)"
    return who


def _panel_lines(snap: dict) -> list[tuple[str, tuple[int, int, int]]]:
    grey, dark = (90, 90, 90), (30, 30, 30)
    out: list[tuple[str, tuple[int, int, int]]] = [(f"{snap['preset']} · {snap['phase']}", dark)]
    c = snap["contract"]
    if c:
        dbl = "" if c["double"] == "none" else f" {c['double']}"
        out.append((f"contract: seat {c['seat']} {c['call']}{dbl}", dark))
    out.append(("auction:", grey))
    calls = [f"{a['seat']}: {a['call']}" for a in snap["auction"]]
    for i in range(0, len(calls), 3):
        out.append(("  " + "   ".join(calls[i:i + 3]), dark))
    if snap["open_card"] is not None and snap["phase"] != "auction":
        out.append((f"open card: {snap['open_card']}", dark))
    ann = snap["declarations"]["announced"]
    if any(a is not None for a in ann):
        out.append(("declared: " + "  ".join(f"{s}:{a}" for s, a in enumerate(ann) if a is not None), dark))
    for s, cards in enumerate(snap["declarations"]["shown"]):
        if cards:
            out.append((f"  shown {s}: {' '.join(cards)}", dark))
    if snap["phase"] != "auction":
        t, p = snap["tricks"], snap["card_points"]
        out.append((f"tricks {t[0]} : {t[1]}   points {p[0]} : {p[1]}", dark))
    r = snap["result"]
    if r is not None:
        made = "passed out" if r["contract"] is None else ("made" if r["made"] else "failed")
        out.append((f"deal score {r['score'][0]} : {r['score'][1]} ({made})", _RED))
    m = snap["match"]
    if m is not None:
        out.append((f"match {m['totals'][0]} : {m['totals'][1]} (to {m['target']})", dark))
    return out


def render_rgb(snap: dict[str, Any], bottom: int | None = None) -> np.ndarray:
    """The picture of a table snapshot (:func:`blot_env.table.table_snapshot`).

    Args:
        snap: the snapshot.
        bottom: the seat drawn at the bottom (default: the snapshot's observer, else seat 0).

    Returns:
        ``uint8[H, W, 3]`` RGB, ``(H, W) = SIZE``.

    Raises:
        ImportError: Pillow is not installed (the message names the ``render`` extra).
    """
    Image, ImageDraw, _ = _pil()
    img = Image.new("RGB", (_W, _H), _FELT)
    draw = ImageDraw.Draw(img)
    draw.rectangle([_PANEL_X, 0, _W, _H], fill=_PANEL)
    n = snap["num_players"]
    if bottom is None:
        bottom = snap["observer"] if snap["observer"] is not None else 0
    places = _positions(n, bottom)
    for seat, place in places.items():
        hand = snap["hands"][seat]
        cards: list[str | None] = list(hand) if hand is not None else []
        if snap["face_up"] is not None and hand is None:
            cards = list(snap["face_up"][seat])
        cards += [None] * snap["hidden"][seat]
        _draw_hand(img, draw, place, cards, _seat_label(snap, seat), seat == snap["to_act"])
    trick = snap["trick"]["cards"]
    caption = f"trick {snap['trick']['number']}" if snap["phase"] == "play" else ""
    shown_trick = trick
    if not trick and snap["last_trick"] is not None:
        shown_trick = snap["last_trick"]["cards"]
        caption = f"trick {snap['last_trick']['number']} won by seat {snap['last_trick']['winner']}"
    cx, cy = _CENTER
    for t in shown_trick:
        dx, dy = _TRICK_AT[places[t["seat"]]]
        sprite = _card_sprite(t["card"])
        img.paste(sprite, (cx + dx - _CW // 2, cy + dy - _CH // 2), sprite)
    if snap["open_card"] is not None and snap["phase"] == "auction":
        sprite = _card_sprite(snap["open_card"])
        img.paste(sprite, (cx - _CW // 2, cy - _CH // 2), sprite)
        caption = "open card"
    if caption:
        font = _font(14)
        draw.text((cx - draw.textlength(caption, font=font) / 2, cy + 96), caption, fill=(235, 235, 235), font=font)
    y = 12
    for text, col in _panel_lines(snap):
        for line in _wrap(text, 34):
            draw.text((_PANEL_X + 12, y), line, fill=col, font=_font(14))
            y += 20
    return np.array(img, dtype=np.uint8)


def _wrap(text: str, width: int) -> list[str]:
    lines = [""]
    for word in text.split(" "):
        if lines[-1] and len(lines[-1]) + 1 + len(word) > width:
            lines.append("    " + word)
        else:
            lines[-1] = f"{lines[-1]} {word}" if lines[-1] else word
    return lines


def render_state(state: State, observer: int | None = None, show_all: bool = False,
                 match: MatchState | None = None) -> np.ndarray:
    """The picture of a deal, ``uint8[H, W, 3]``, for the env's ``render_mode="rgb_array"``.

    Args:
        state: the deal.
        observer: the seat at the bottom whose hand is shown (``None``: the seat to act, or
            seat 0 at the end).
        show_all: show every hand (hidden information; for debugging and replays).
        match: the match state, whose totals the panel shows.
    """
    seat = observer if observer is not None else max(current_seat(state), 0)
    return render_rgb(table_snapshot(state, None if show_all else seat, match), bottom=seat)


class HumanWindow:
    """A window that shows frames (``render_mode="human"``): tkinter + Pillow's ``ImageTk``.

    ``show(frame, text)`` draws ``uint8[H, W, 3]`` and processes the window's events without
    blocking. If no window can be opened, it warns once (the reason named) and prints
    ``text`` to stdout instead, at every call.
    """

    def __init__(self, title: str = "blot-env"):
        self.title = title
        self._root: Any = None
        self._label: Any = None
        self._photo: Any = None
        self.fallback: str | None = None
        """Why no window could be opened (``None`` while a window works)."""

    def _open(self) -> None:
        try:
            import tkinter

            from PIL import ImageTk  # noqa: F401  (needed to show the frames)

            root = tkinter.Tk()
        except Exception as e:  # no tkinter, no display, no Pillow: text instead
            self.fallback = f"{type(e).__name__}: {e}".strip()
            warnings.warn(f'render_mode="human": no window can be opened ({self.fallback}); '
                          "printing the table as text instead", RuntimeWarning, stacklevel=4)
            return
        root.title(self.title)
        self._root = root
        self._label = tkinter.Label(root)
        self._label.pack()

    def show(self, frame: np.ndarray, text: str) -> None:
        if self._root is None and self.fallback is None:
            self._open()
        if self._root is None:
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        from PIL import Image, ImageTk

        try:
            self._photo = ImageTk.PhotoImage(Image.fromarray(frame))
            self._label.configure(image=self._photo)
            self._root.update()
        except Exception:  # the user closed the window: stop drawing
            self._root = None
            self.fallback = "the window was closed"

    def close(self) -> None:
        if self._root is not None:
            with contextlib.suppress(Exception):  # already closed by the user
                self._root.destroy()
            self._root = None


__all__ = ["SIZE", "HumanWindow", "render_rgb", "render_state"]
