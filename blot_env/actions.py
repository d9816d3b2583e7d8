"""The one flat action layout: named contiguous blocks of action ids (rules of thumb 2).

Every action has one canonical string (docs/deal-record.md); ``describe`` and ``parse``
map ids and strings one-to-one. Nothing else in the package does index arithmetic on
action ids: it calls the ``*_id`` helpers of :class:`ActionLayout`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .cards import NT, STRAINS, card_str, parse_card
from .codes import CLASS_NAMES, CLS_CARRE, CLS_FIFTY, CLS_HUNDRED, CLS_NONE, CLS_TERZ
from .errors import BlotError, IllegalActionError
from .rules_config import RulesConfig

# declaration classes (rules.md 1.4; codes CLS_* of blot_env.codes): NONE is the silent
# announcement. They are re-exported here beside the ANNOUNCE block they parametrize.


class UnknownActionError(BlotError, ValueError):
    """An action string or id that is not in the preset's layout."""


@dataclass(frozen=True)
class Block:
    name: str
    start: int
    size: int

    @property
    def stop(self) -> int:
        return self.start + self.size


AUCTION_BLOCKS = ("PASS", "CONTRA", "RECONTRA", "BID", "KAPUT", "KAPUT_PLUS", "TAKE", "NAME")
"""The blocks of auction calls (rules.md 2.2, 4, 5, 6); every other block is a play-phase action
(declarations, cards). They come first in every layout, and a legal set never mixes the two."""


class ActionLayout:
    """The flat ``Discrete(A)`` action space of one rules config.

    Blocks (present only when the config uses them): ``PASS``, ``CONTRA``, ``RECONTRA``,
    ``BID`` (number x strain), ``KAPUT`` (strain), ``KAPUT_PLUS`` (N x strain), ``TAKE``,
    ``NAME`` (strain, or strain x keep/leave), ``ANNOUNCE`` (none/terz/50/100/carre),
    ``HEIGHT``, ``HEIGHT_TRUMP``, ``CONCEDE``, ``REVEAL``, ``SHOW``, ``NOSHOW``, ``PLAY`` (32 cards).
    """

    def __init__(self, cfg: RulesConfig):
        self.cfg = cfg
        self.strains = tuple(range(5)) if cfg.allow_nt else tuple(range(4))
        self.bid_values = tuple(range(cfg.bid_min, cfg.bid_max + 1, cfg.bid_step))
        self.kaput_plus_values = tuple(n for n in range(2, cfg.bid_max - 25 + 1) if n != 3)
        self.blocks: dict[str, Block] = {}
        self.strings: list[str] = []
        self.params: list[tuple] = []

        def add(name: str, items: list[tuple[str, tuple]]) -> None:
            self.blocks[name] = Block(name, len(self.strings), len(items))
            for s, p in items:
                self.strings.append(s)
                self.params.append(p)

        bidding = cfg.auction in ("bazar", "belote")
        add("PASS", [("pass", ())])
        if bidding:
            add("CONTRA", [("contra", ())])
            add("RECONTRA", [("recontra", ())])
            add("BID", [(f"bid {v}{STRAINS[s]}", (v, s)) for v in self.bid_values for s in self.strains])
            if cfg.kaput_bid != "none":
                add("KAPUT", [(f"bid kaput {STRAINS[s]}", (s,)) for s in self.strains])
            if cfg.kaput_bid == "raisable":
                add("KAPUT_PLUS", [(f"bid kaput+{n} {STRAINS[s]}", (n, s))
                                   for n in self.kaput_plus_values for s in self.strains])
        if cfg.auction == "duel":
            add("TAKE", [("take", ())])
            if cfg.duel_open_card_choice:
                add("NAME", [(f"name {STRAINS[s]} {k}", (s, k == "keep"))
                             for s in self.strains for k in ("keep", "leave")])
            else:
                add("NAME", [(f"name {STRAINS[s]}", (s, True)) for s in self.strains])
        if cfg.auction == "open":
            add("NAME", [(f"name {STRAINS[s]}", (s, True)) for s in self.strains])
        if cfg.declarations in ("manual", "announce"):
            add("ANNOUNCE", [(f"announce {CLASS_NAMES[c]}", (c,)) for c in range(5)])
        if cfg.declarations == "manual":
            for name, s in (("HEIGHT", "height"), ("HEIGHT_TRUMP", "height trump"),
                            ("CONCEDE", "concede"), ("REVEAL", "reveal"),
                            ("SHOW", "show"), ("NOSHOW", "noshow")):
                add(name, [(s, ())])
        add("PLAY", [(f"play {card_str(c)}", (c,)) for c in range(32)])
        self.num_actions = len(self.strings)
        self.index = {s: i for i, s in enumerate(self.strings)}
        self.block_of = [""] * self.num_actions
        for b in self.blocks.values():
            for i in range(b.start, b.stop):
                self.block_of[i] = b.name
        self._bid_pos = {v: i for i, v in enumerate(self.bid_values)}
        self._kp_pos = {n: i for i, n in enumerate(self.kaput_plus_values)}
        self._strain_pos = {s: i for i, s in enumerate(self.strains)}

    # ----------------------------------------------------------------- id helpers
    def has(self, block: str) -> bool:
        return block in self.blocks

    def id(self, block: str, offset: int = 0) -> int:
        b = self.blocks[block]
        return b.start + offset

    def bid_id(self, value: int, strain: int) -> int:
        return self.blocks["BID"].start + self._bid_pos[value] * len(self.strains) + self._strain_pos[strain]

    def kaput_id(self, strain: int) -> int:
        return self.blocks["KAPUT"].start + self._strain_pos[strain]

    def kaput_plus_id(self, n: int, strain: int) -> int:
        return self.blocks["KAPUT_PLUS"].start + self._kp_pos[n] * len(self.strains) + self._strain_pos[strain]

    def name_id(self, strain: int, keep: bool = True) -> int:
        b = self.blocks["NAME"]
        if self.cfg.auction == "duel" and self.cfg.duel_open_card_choice:
            return b.start + self._strain_pos[strain] * 2 + (0 if keep else 1)
        return b.start + self._strain_pos[strain]

    def announce_id(self, cls: int) -> int:
        return self.blocks["ANNOUNCE"].start + cls

    def play_id(self, card: int) -> int:
        return self.blocks["PLAY"].start + card

    def card_of(self, action: int) -> int:
        return action - self.blocks["PLAY"].start

    # ----------------------------------------------------------------- strings
    def describe(self, action: int) -> str:
        """The canonical action string of an id (docs/deal-record.md).

        Raises:
            UnknownActionError: ``action`` is no action id (:func:`action_id`'s rule: a bool, a
                float, a string, None or a longer array is refused) or not in ``0..num_actions-1``.
        """
        if type(action) is not int:
            if not _is_integer(action):
                raise UnknownActionError(f"expected an integer action id in 0..{self.num_actions - 1}, got "
                                         f"{_kind(action)} {_shown(action)}; {ACTION_ID_RULE}")
            action = int(action)
        if not 0 <= action < self.num_actions:
            raise UnknownActionError(f"action id {action!r} outside 0..{self.num_actions - 1}")
        return self.strings[action]

    def parse(self, text: str) -> int:
        """The id of an action string; accepts ``10`` for ``T`` in cards and any spacing/case.

        Raises:
            UnknownActionError: the string is not an action of this preset.
        """
        if not isinstance(text, str):
            raise UnknownActionError(f"action must be a string, got {type(text).__name__}")
        norm = " ".join(text.strip().split())
        if norm in self.index:
            return self.index[norm]
        low = norm.lower()
        if low in self.index:
            return self.index[low]
        parts = low.split(" ")
        if parts[0] == "play" and len(parts) == 2:
            try:
                return self.play_id(parse_card(parts[1]))
            except ValueError:
                pass
        if parts[0] in ("bid", "name") and len(parts) >= 2:
            fixed = " ".join([parts[0]] + [p.upper() if p[-1:] in "cdhst" and p not in ("kaput",) and not
                                          p.startswith("kaput") else p for p in parts[1:]])
            fixed = fixed.replace("nt", "NT") if fixed.endswith("nt") else fixed
            if fixed in self.index:
                return self.index[fixed]
        raise UnknownActionError(f"unknown action {text!r} for preset {self.cfg.preset!r}")

    def blocks_table(self) -> list[tuple[str, int, int, str]]:
        """(block, first id, size, example string) rows, for documentation."""
        return [(b.name, b.start, b.size, self.strings[b.start]) for b in self.blocks.values()]


@lru_cache(maxsize=64)
def _layout_by_value(cfg: RulesConfig) -> ActionLayout:
    return ActionLayout(cfg)


_BY_ID: dict[int, tuple[RulesConfig, ActionLayout]] = {}


def layout_for(cfg: RulesConfig) -> ActionLayout:
    """The cached action layout of a rules config.

    Looked up by object identity first (hashing a config hashes all its fields), then by value.
    """
    hit = _BY_ID.get(id(cfg))
    if hit is not None and hit[0] is cfg:
        return hit[1]
    lay = _layout_by_value(cfg)
    if len(_BY_ID) > 1024:
        _BY_ID.clear()
    _BY_ID[id(cfg)] = (cfg, lay)
    return lay


ACTION_ID_RULE = ("an action id is an int, a numpy integer or a 0-d integer array (never a bool, a float, "
                  "a string or a longer array)")
_TEXT_HINT = 'turn text into an id with env.parse("play JH") or layout_for(cfg).parse(...)'


def _shown(action: Any) -> str:
    if isinstance(action, np.ndarray):
        return f"array({action.tolist()!r}, dtype={action.dtype})"
    return repr(action)


def _kind(action: Any) -> str:
    if isinstance(action, np.ndarray):
        return f"an array of shape {action.shape} (dtype {action.dtype})"
    return type(action).__name__


def _is_integer(action: Any) -> bool:
    if isinstance(action, np.ndarray):
        return action.ndim == 0 and action.dtype.kind in "iu"
    return isinstance(action, (int, np.integer)) and not isinstance(action, bool)


def action_id(action: Any, seat: int, agent: str | None = None, num_actions: int | None = None,
              legal: Callable[[], list[str]] | None = None) -> int:
    """``action`` as a Python ``int`` action id: the one check of an action's type and range,
    used by the engine, the AEC env, its wrappers and the Gymnasium view.

    Accepted: an ``int``, a numpy integer scalar (``np.int64(3)``) or a 0-d numpy integer array
    (``np.array(3)``). Refused: ``bool`` and ``np.bool_`` (True is not action 1), every float
    (also an integral one such as ``3.0``: a policy that returns floats has a bug), strings
    (see ``env.parse``), ``None`` and arrays of any other shape (``np.array([0])``). With
    ``num_actions`` the id must also lie in ``0..num_actions-1``.

    Args:
        seat: the seat to act (named in the message); ``agent``: its agent name, if any.
        legal: called only when the action is refused, for the legal action strings to list.

    Raises:
        IllegalActionError: the message names the value, its type, the seat (and agent) and
            what an action id must be.
    """
    if type(action) is int:
        value = action
    elif _is_integer(action):
        value = int(action)
    else:
        if action is None:
            reason = "an action id is required while the agent is to act (None is only for an agent that is done)"
        else:
            want = "an integer action id" + (f" in 0..{num_actions - 1}" if num_actions is not None else "")
            reason = f"expected {want}, got {_kind(action)}; {ACTION_ID_RULE}; {_TEXT_HINT}"
        raise IllegalActionError(_shown(action), seat, reason, legal() if legal else None, agent=agent)
    if num_actions is not None and not 0 <= value < num_actions:
        raise IllegalActionError(str(value), seat, f"action id outside 0..{num_actions - 1}",
                                 legal() if legal else None, agent=agent)
    return value


__all__ = [
    "ACTION_ID_RULE",
    "AUCTION_BLOCKS",
    "CLASS_NAMES",
    "CLS_CARRE",
    "CLS_FIFTY",
    "CLS_HUNDRED",
    "CLS_NONE",
    "CLS_TERZ",
    "NT",
    "ActionLayout",
    "UnknownActionError",
    "action_id",
    "layout_for",
]
