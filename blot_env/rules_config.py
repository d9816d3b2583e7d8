"""One frozen rules-config type and the presets of rules.md (section 8).

Variants are data: the engine branches on these named behaviours, never on a preset's
name. ``make_rules("bazar", declarations="auto")`` gives a preset with overrides.
"""

from __future__ import annotations

import dataclasses
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
    long_run: Literal["split", "100"] = "split"
    """Runs longer than 5: split by the player's choice (000) or one flat 100 (RES-11)."""
    carre_table: Literal["armenian", "classic", "none"] = "armenian"
    """Carre values: Armenian (1.4), classic 002, or no carres at all (duel-app, RES-20)."""
    scoring: Literal["bazar", "duel", "open", "belote"] = "bazar"
    """Deal-scoring family: rules.md 2.5, 3/4, 5.5 or 6."""
    capot_tp: int = 25
    """Card portion of a capot in table points (25 bazar, 21 in the 2-player games, RES-22)."""
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
        if self.num_players not in (2, 4):
            raise ConfigError(f"num_players must be 2 or 4, got {self.num_players!r}")
        if self.bid_min > self.bid_max or self.bid_step < 1:
            raise ConfigError(f"bad bid ladder {self.bid_min}..{self.bid_max} step {self.bid_step}")
        if self.target < 1:
            raise ConfigError(f"target must be positive, got {self.target}")
        for name in ("auction", "kaput_bid", "declarations", "long_run", "carre_table",
                     "scoring", "tie_at_target", "undertrump"):
            allowed = _LITERALS[name]
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{name} must be one of {sorted(allowed)}, got {getattr(self, name)!r}")
        if self.declarations == "manual" and self.num_players == 4 and self.auction != "bazar":
            raise ConfigError("manual declarations need a bazar auction in 4-player games")

    @property
    def teams(self) -> int:
        """Number of sides: 2 (partnerships or single players)."""
        return 2

    def team_of(self, seat: int) -> int:
        return seat % 2

    def replace(self, **overrides: Any) -> RulesConfig:
        return with_overrides(self, overrides)


def _literal_values(name: str) -> set[str]:
    import typing

    hint = typing.get_type_hints(RulesConfig)[name]
    return set(typing.get_args(hint))


_LITERALS = {n: _literal_values(n) for n in ("auction", "kaput_bid", "declarations", "long_run",
                                             "carre_table", "scoring", "tie_at_target", "undertrump")}
KNOBS = tuple(f.name for f in dataclasses.fields(RulesConfig))


def with_overrides(cfg: RulesConfig, overrides: dict[str, Any]) -> RulesConfig:
    """A copy of ``cfg`` with knobs replaced. Raises ConfigError on an unknown knob."""
    unknown = sorted(set(overrides) - set(KNOBS))
    if unknown:
        raise ConfigError(f"unknown rules knob(s) {unknown}; known: {', '.join(KNOBS)}")
    return dataclasses.replace(cfg, **overrides)


BAZAR = RulesConfig()
BAZAR_APP = RulesConfig(
    preset="bazar-app", bid_max=24, kaput_bid="terminal", declarations="auto", long_run="100",
    tie_at_target="extra_deal",
)

PRESETS: dict[str, RulesConfig] = {
    "bazar": BAZAR,
    "bazar-app": BAZAR_APP,
}


def make_rules(preset: str = "bazar", **overrides: Any) -> RulesConfig:
    """The rules of a preset (rules.md "Presets") with optional knob overrides.

    Raises:
        ConfigError: unknown preset or knob, or a value outside a knob's domain.
    """
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    return with_overrides(PRESETS[preset], overrides) if overrides else PRESETS[preset]


__all__ = ["KNOBS", "PRESETS", "RulesConfig", "field", "make_rules", "with_overrides"]
