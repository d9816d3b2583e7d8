"""One frozen rules-config type and the presets of rules.md (section 8).

Variants are data: the engine branches on these named behaviours, never on a preset's
name. ``make_rules("bazar", declarations="auto")`` gives a preset with overrides.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import ConfigError


@dataclass(frozen=True)
class RulesConfig:
    """Every knob of rules.md section 8. Frozen: build a new value to change a knob."""

    preset: str = "bazar"
    """Preset id this value was built from (informational; the engine never branches on it)."""
    num_players: Literal[2, 4] = 4
    """Players at the table; 4 means two partnerships ``seat % 2`` (rules.md 2.1)."""
    short_deck: bool = False
    """True for the 24-card deck 9..A of the duels (rules.md 3, 4)."""
    hand_size: int = 8
    """Cards dealt to each hand before the auction (8 in bazar/belote, 6 duel, 5 duel-app)."""
    num_tricks: int = 8
    """Tricks in a deal."""
    auction: Literal["bazar", "belote", "duel", "open"] = "bazar"
    """Auction family: bazar (2.2), classic belote (6), duel open-card (3, 4), open choice (5.2)."""
    bid_min: int = 8
    """Lowest number bid (tens for bazar, raw points for belote)."""
    bid_max: int = 80
    """Highest number bid; also caps kaput+N at ``25 + N <= bid_max`` (rules.md 2.2)."""
    bid_step: int = 1
    """Step between number bids (10 in belote)."""
    allow_nt: bool = True
    """No-trump contracts allowed (rules.md 1.1, not in belote/duel-app)."""
    kaput_bid: Literal["raisable", "terminal", "none"] = "raisable"
    """Kaput as a bid: 25, raised by kaput+N (000); the highest bid (004); or absent (002)."""
    auction_end_passes: int = 4
    """Consecutive passes after a bid that end the auction (4: the bidder has the last word)."""
    contra_end_passes: int = 3
    """Consecutive passes after a contra that end the auction (RES-3; 4 adds the forced pass)."""
    declarations: Literal["manual", "auto", "announce"] = "manual"
    """manual announce/show protocol (2.4.2); auto (2.8); announce before trick 1 (open, 5.7.6)."""
    auto_reveal: Literal["after_trick1", "end"] = "after_trick1"
    """Automatic declarations: the counted combinations are shown to all after trick 1 (004:
    "После первой взятки карты стороны, которой они засчитаны ... открываются") or only when
    the deal is scored (002: "стол сам находит их и засчитывает, когда раздача сыграна")."""
    long_run: Literal["split", "100"] = "split"
    """Runs longer than 5: split by the player's choice (000) or one flat 100 (RES-11)."""
    carre_table: Literal["armenian", "classic", "none"] = "armenian"
    """Carre values: Armenian (1.4), classic 002, or no carres at all (duel-app, RES-20)."""
    scoring: Literal["bazar", "duel", "open", "belote"] = "bazar"
    """Deal-scoring family: rules.md 2.5, 3/4, 5.5 or 6."""
    declaration_tie: Literal["trick1_order", "nobody"] = "trick1_order"
    """Equal best declarations of both sides (same class, length, top card, both plain): the
    one earlier in trick 1 wins (000, RES-36 A) or nobody scores declarations (002/FFB, RES-36)."""
    capot_tp: int = 25
    """Card portion of a capot in score-sheet units: 25 tp bazar, 21 tp in the 2-player games
    (RES-22; ``cap_duel`` = 25 for duel-app), 250 raw in belote (paid as ``250 + v``, rules.md 6)."""
    target: int = 151
    """Match target in score-sheet units (151/301; 51/101/201 open; 1000 belote)."""
    tie_at_target: Literal["deal_winner", "extra_deal"] = "deal_winner"
    """Exact tie above the target: the deal's winner wins (000) or more deals (004, 002)."""
    instant_match_end: bool = False
    """004 house rule (RES-8): no-trick bidders lose; a kaput made under contra wins."""
    partner_exemption: bool = True
    """A player void in the led suit need not ruff while his partner wins (rules.md 1.3)."""
    undertrump: Literal["free", "forced"] = "free"
    """Unable to over-ruff an opponent: play anything (free, RES-13) or any trump (forced)."""
    jack_forces_dealer: bool = False
    """Duel: a turned jack passed by the non-dealer forces the dealer to take (RES-23)."""
    duel_open_card_choice: bool = False
    """Duel round 2: the namer keeps or leaves the open card (``name X keep|leave``, RES-21)."""
    taker_ge: bool = False
    """2-player games: the taker makes with ``>=`` instead of strictly more (RES-19)."""
    open_complement: bool = True
    """Open Blot: the taker's card tp are ``16 - r(c_o)`` (RES-30)."""

    def __post_init__(self) -> None:
        self._check_types()
        if self.num_players not in (2, 4):
            raise ConfigError(f"num_players must be 2 or 4, got {self.num_players!r}")
        if self.bid_min > self.bid_max or self.bid_step < 1:
            raise ConfigError(f"bad bid ladder: bid_min={self.bid_min}, bid_max={self.bid_max}, "
                              f"bid_step={self.bid_step} (need bid_min <= bid_max and bid_step >= 1)")
        if self.target < 1:
            raise ConfigError(f"target must be positive, got {self.target}")
        for name in _LITERALS:
            allowed = _LITERALS[name]
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{name} must be one of {sorted(allowed)}, got {getattr(self, name)!r}")
        if self.declarations == "manual" and self.num_players == 4 and self.auction != "bazar":
            raise ConfigError("manual declarations need a bazar auction in 4-player games")
        self._check_table()

    def _check_types(self) -> None:
        """Every knob has its type (ints are not bools) and lies in its range (rules.md 8)."""
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            kind = _KINDS[f.name]
            if kind is int:
                ok = isinstance(v, int) and not isinstance(v, bool)
            elif kind is bool:
                ok = isinstance(v, bool)
            else:
                ok = isinstance(v, str)
            if not ok:
                raise ConfigError(f"rules knob {f.name} must be {kind.__name__}, got {v!r} (rules.md 8)")
        for name, low in _MINIMA.items():
            if getattr(self, name) < low:
                raise ConfigError(f"rules knob {name} must be >= {low}, got {getattr(self, name)!r} (rules.md 8)")
        for name, high in _MAXIMA.items():
            if getattr(self, name) > high:
                raise ConfigError(f"rules knob {name} must be <= {high:,}, got {getattr(self, name)!r} (rules.md 8; "
                                  "the engines hold every count and score in 64-bit integers)")

    def _check_table(self) -> None:
        """Deck, hand size, tricks, auction and scoring must fit together (rules.md 8)."""
        deck = 24 if self.short_deck else 32
        two = self.auction in ("duel", "open")
        if two != (self.num_players == 2):
            raise ConfigError(f"auction {self.auction!r} is for {'2' if two else '4'} players, "
                              f"got num_players={self.num_players} (rules.md 8)")
        if (self.scoring in ("duel", "open")) != two:
            raise ConfigError(f"scoring {self.scoring!r} does not fit auction {self.auction!r} (rules.md 8)")
        if self.auction == "duel":
            # 5.7.1: U + 2 or 3 for the taker, 3 for the other; "leave" needs 2*hand + 7 cards
            if self.num_tricks != self.hand_size + 3 or 2 * self.hand_size + 7 > deck:
                raise ConfigError(f"duel: {self.hand_size} cards each + 3 drawn must give num_tricks "
                                  f"(got {self.num_tricks}) and fit the {deck}-card deck (rules.md 5.7.1)")
        elif self.auction == "open":
            if self.short_deck or self.hand_size != 16 or self.num_tricks != 16:
                raise ConfigError("open: 32 cards, 8 piles of 2 per player, 16 tricks "
                                  "(hand_size=16, num_tricks=16, short_deck=False; rules.md 5.1)")
        elif self.hand_size * self.num_players != deck or self.num_tricks != self.hand_size:
            raise ConfigError(f"{self.num_players} hands of {self.hand_size} must deal the {deck}-card deck "
                              f"and give num_tricks={self.hand_size} (got {self.num_tricks}; rules.md 2.1, 6)")
        if self.kaput_bid != "none" and self.auction != "bazar":
            raise ConfigError("kaput bids (value 25 tp) exist only in the bazar auction (rules.md 2.2, 6)")
        if self.auction == "open" and self.declarations == "manual":
            raise ConfigError("open: the cards are face up, declarations are 'announce' or 'auto' (rules.md 5.7.6)")

    def replace(self, **overrides: Any) -> RulesConfig:
        return with_overrides(self, overrides)


def _literal_values(name: str) -> set[str]:
    hint = typing.get_type_hints(RulesConfig)[name]
    return set(typing.get_args(hint))


_LITERALS = {n: _literal_values(n) for n in ("auction", "kaput_bid", "declarations", "auto_reveal", "long_run",
                                             "carre_table", "declaration_tie", "scoring", "tie_at_target",
                                             "undertrump")}
KNOBS = tuple(f.name for f in dataclasses.fields(RulesConfig))
_KINDS: dict[str, type] = {}
for _n, _hint in typing.get_type_hints(RulesConfig).items():
    _args = typing.get_args(_hint)
    _KINDS[_n] = type(_args[0]) if _args else _hint
_MINIMA = {"hand_size": 1, "num_tricks": 1, "bid_min": 1, "bid_step": 1, "auction_end_passes": 1,
           "contra_end_passes": 1, "capot_tp": 0, "target": 1}
#: upper bounds far above every preset: a deck has 32 cards, the action layout holds one id per
#: number bid (and per kaput+N), and the compiled engines keep knobs and scores in int64
_MAXIMA = {"hand_size": 32, "num_tricks": 32, "bid_min": 1000, "bid_max": 1000, "bid_step": 1000,
           "auction_end_passes": 64, "contra_end_passes": 64, "capot_tp": 100_000, "target": 1_000_000}


def with_overrides(cfg: RulesConfig, overrides: dict[str, Any]) -> RulesConfig:
    """A copy of ``cfg`` with knobs replaced.

    Raises:
        ConfigError: ``overrides`` is no mapping, names an unknown knob (any key that is no
            knob name, strings or not), or a value is outside its knob's domain.
    """
    if not isinstance(overrides, Mapping):
        raise ConfigError(f"rules overrides must be a mapping of knob names to values, got {type(overrides).__name__}")
    unknown = sorted((k for k in overrides if k not in KNOBS), key=repr)
    if unknown:
        knobs = ", ".join(k for k in KNOBS if k != "preset")
        raise ConfigError(f"unknown rules knob(s) {unknown}; the knobs are: {knobs} (a preset is chosen by name, "
                          f"not overridden: {', '.join(PRESETS)})")
    return dataclasses.replace(cfg, **overrides)


BAZAR = RulesConfig()
BAZAR_APP = RulesConfig(
    preset="bazar-app", bid_max=24, kaput_bid="terminal", declarations="auto", long_run="100",
    tie_at_target="extra_deal",
)

#: variant B, rules.md 3 and 5.7 (rules text 000 "1 на 1")
DUEL = RulesConfig(
    preset="duel", num_players=2, short_deck=True, hand_size=6, num_tricks=9, auction="duel",
    kaput_bid="none", declarations="manual", long_run="split", carre_table="armenian", scoring="duel",
    capot_tp=21, target=151, tie_at_target="deal_winner", partner_exemption=False,
    jack_forces_dealer=True, duel_open_card_choice=True,
)
#: variant C, rules.md 4 and 5.7 (rules text 004 "Дуэль")
DUEL_APP = RulesConfig(
    preset="duel-app", num_players=2, short_deck=True, hand_size=5, num_tricks=8, auction="duel",
    allow_nt=False, kaput_bid="none", declarations="auto", long_run="100", carre_table="none",
    scoring="duel", capot_tp=21, target=151, tie_at_target="extra_deal", partner_exemption=False,
    jack_forces_dealer=False, duel_open_card_choice=False,
)
#: variant D, rules.md 5 (rules text 003): 8 piles of (face-down, face-up) per player
OPEN = RulesConfig(
    preset="open", num_players=2, hand_size=16, num_tricks=16, auction="open", kaput_bid="none",
    declarations="announce", long_run="100", carre_table="armenian", scoring="open", capot_tp=21,
    target=51, tie_at_target="extra_deal", partner_exemption=False,
)
#: variant E, rules.md 6 (rules text 002): raw points, bids 80..160, game to 1000
BELOTE = RulesConfig(
    preset="belote", auction="belote", bid_min=80, bid_max=160, bid_step=10, allow_nt=False,
    kaput_bid="none", auction_end_passes=3, contra_end_passes=3, declarations="auto", auto_reveal="end",
    long_run="100", carre_table="classic", declaration_tie="nobody", scoring="belote", capot_tp=250, target=1000,
    tie_at_target="extra_deal",
)

PRESETS: dict[str, RulesConfig] = {
    "bazar": BAZAR,
    "bazar-app": BAZAR_APP,
    "duel": DUEL,
    "duel-app": DUEL_APP,
    "open": OPEN,
    "belote": BELOTE,
}


def make_rules(preset: str = "bazar", **overrides: Any) -> RulesConfig:
    """The rules of a preset (rules.md "Presets") with optional knob overrides.

    Raises:
        ConfigError: unknown preset or knob, or a value outside a knob's domain.
    """
    if not isinstance(preset, str) or preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    return with_overrides(PRESETS[preset], overrides) if overrides else PRESETS[preset]


__all__ = ["KNOBS", "PRESETS", "RulesConfig", "field", "make_rules", "with_overrides"]
