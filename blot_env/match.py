"""Matches: deals to the target score, dealer rotation, redeals and tie rules (pure functions).

Implements rules.md 2.6 (game end), 2.8 (``tie_at_target``, ``instant_match_end``, RES-8,
RES-9) and 2.1 (the deal passes to the next player; a passed-out deal is redealt by the next
player, which is the same rotation). Scores are in the score sheet's units (table points for
the Armenian presets, raw points for belote); sides are teams ``seat % 2`` (2-player games:
the players).

Usage::

    m = new_match(cfg, first_dealer=0)
    while not m.over:
        state = deal_random(cfg, rng, m.dealer)   # play it out ...
        m = after_deal(m, deal_result(state))
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .rules_config import RulesConfig
from .scoring import DealResult


@dataclass(frozen=True, slots=True)
class MatchState:
    """The state of a match between deals (immutable).

    Attributes:
        cfg: the rules (``target``, ``tie_at_target``, ``instant_match_end``).
        dealer: dealer of the next deal (the current one while a deal is in progress).
        totals: match totals per side, score-sheet units.
        deal_scores: the score pair of every finished deal, in order (passed-out deals: (0, 0)).
        winner: the side that won the match, -1 while it goes on.
        reason: why the match ended: ``"target"``, ``"higher_total"``, ``"tie_deal_winner"``,
            ``"instant_no_trick"``, ``"instant_kaput_contra"``; ``""`` while it goes on.
    """

    cfg: RulesConfig
    dealer: int
    totals: tuple[int, int] = (0, 0)
    deal_scores: tuple[tuple[int, int], ...] = ()
    winner: int = -1
    reason: str = ""

    @property
    def over(self) -> bool:
        return self.winner >= 0

    @property
    def num_deals(self) -> int:
        return len(self.deal_scores)


def new_match(cfg: RulesConfig, first_dealer: int = 0) -> MatchState:
    """A match before its first deal. Raises ValueError on a bad dealer seat."""
    if not 0 <= first_dealer < cfg.num_players:
        raise ValueError(f"dealer must be a seat 0..{cfg.num_players - 1}, got {first_dealer}")
    return MatchState(cfg=cfg, dealer=first_dealer)


def decide(cfg: RulesConfig, totals: tuple[int, int], result: DealResult) -> tuple[int, str]:
    """Winner side and reason after a deal with match ``totals`` (deal included), or ``(-1, "")``.

    rules.md 2.6: exactly one side at or above the target wins; both: the higher total; an
    exact tie: the deal's winner (``tie_at_target="deal_winner"``) or more deals
    (``"extra_deal"``, RES-9). With ``instant_match_end`` (2.8, RES-8) a bidding side that
    took no trick loses, and a kaput contract made under contra wins, whatever the score.
    """
    c = result.contract
    if cfg.instant_match_end and c is not None:
        bidders = c.seat % 2
        if result.tricks[bidders] == 0:
            return 1 - bidders, "instant_no_trick"
        if c.is_kaput and c.double >= 1 and result.made:
            return bidders, "instant_kaput_contra"
    t = cfg.target
    a, b = totals[0] >= t, totals[1] >= t
    if a and not b:
        return 0, "target"
    if b and not a:
        return 1, "target"
    if a and b:
        if totals[0] != totals[1]:
            return (0 if totals[0] > totals[1] else 1), "higher_total"
        if cfg.tie_at_target == "deal_winner" and result.winner() >= 0:
            return result.winner(), "tie_deal_winner"
    return -1, ""


def after_deal(match: MatchState, result: DealResult) -> MatchState:
    """The match after a finished deal: totals summed, winner decided, deal passed on.

    Raises:
        ValueError: the match is already over.
    """
    if match.over:
        raise ValueError("the match is already over")
    cfg = match.cfg
    totals = (match.totals[0] + result.score[0], match.totals[1] + result.score[1])
    winner, reason = decide(cfg, totals, result)
    return replace(match, totals=totals, deal_scores=match.deal_scores + (tuple(result.score),),
                   dealer=(match.dealer + 1) % cfg.num_players, winner=winner, reason=reason)


__all__ = ["MatchState", "after_deal", "decide", "new_match"]
