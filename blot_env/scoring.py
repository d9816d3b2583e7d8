"""Deal scoring: one function, ``score_deal``, used by the env, search and evaluation.

Implements rules.md 2.5 (bazar; table points, "tp"). Card points are raw (0..162).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import NT, round_tens
from .declarations import blots, counted_sets, set_value
from .state import DOUBLE_NAMES, Contract, State

#: bid multiplier M, rules.md 2.5:  none contra recontra
MULT_SUIT = (1, 2, 4)
MULT_NT = (2, 3, 5)


@dataclass(frozen=True)
class DealResult:
    """The result of a deal, per side (team ``seat % 2``; 2-player: per player).

    ``card_points`` raw (incl. the last-trick 10); ``combinations`` and ``score`` in the
    score sheet's units (tp for the Armenian presets, raw for belote), spec/deal-record.md.
    """

    contract: Contract | None
    made: bool | None
    tricks: tuple[int, int]
    card_points: tuple[int, int]
    combinations: tuple[int, int]
    score: tuple[int, int]

    def winner(self) -> int:
        """Side that won the deal: the bidders if made, else the defenders (-1 if passed out)."""
        if self.contract is None:
            return -1
        bt = self.contract.seat % 2
        return bt if self.made else 1 - bt

    def to_json(self, describe) -> dict:
        c = self.contract
        return {
            "contract": None if c is None else {"seat": c.seat, "bid": describe(c.call),
                                                "double": DOUBLE_NAMES[c.double]},
            "made": self.made,
            "tricks": list(self.tricks),
            "card_points": list(self.card_points),
            "combinations": list(self.combinations),
            "score": list(self.score),
        }


def passed_out_result() -> DealResult:
    return DealResult(None, None, (0, 0), (0, 0), (0, 0), (0, 0))


def _team_sums(state: State, per_seat) -> tuple[int, int]:
    a = sum(per_seat[s] for s in range(state.n) if s % 2 == 0)
    b = sum(per_seat[s] for s in range(state.n) if s % 2 == 1)
    return a, b


def score_deal(state: State) -> DealResult:
    """Score a finished deal (rules.md 2.5 for bazar; other families by ``cfg.scoring``)."""
    if state.contract is None:
        return passed_out_result()
    fam = state.cfg.scoring
    if fam == "bazar":
        return _score_bazar(state)
    raise NotImplementedError(f"scoring family {fam!r}")


def _combo_tp(state: State) -> tuple[list[int], list[int]]:
    """Per seat: tp of counted combinations, and tp of blots."""
    sets = counted_sets(state)
    bl = blots(state)
    return [set_value(s) // 10 for s in sets], [2 if b else 0 for b in bl]


def _score_bazar(state: State) -> DealResult:
    cfg = state.cfg
    c = state.contract
    A = c.seat % 2
    D = 1 - A
    tricks = _team_sums(state, state.tricks)
    pts = _team_sums(state, state.points)
    combo_seat, blot_seat = _combo_tp(state)
    K = [0, 0]
    for s in range(state.n):
        K[s % 2] += combo_seat[s] + blot_seat[s]
    total_tricks = cfg.num_tricks
    capA = tricks[A] == total_tricks
    capD = tricks[D] == total_tricks
    V_A = (250 if capA else pts[A]) + 10 * K[A]
    made = (not capD) and V_A >= 10 * c.value
    if c.is_kaput:
        made = made and capA
    if c.kind == "kaput_plus":
        made = made and combo_seat[c.seat] + blot_seat[c.seat] >= c.plus
    M = (MULT_NT if c.strain == NT else MULT_SUIT)[c.double]
    bid = M * c.value
    score = [0, 0]
    comb = [0, 0]
    cap = cfg.capot_tp
    if not c.double:
        if made:
            score[A] = bid + (cap if capA else round_tens(pts[A])) + K[A]
            score[D] = (0 if capA else round_tens(pts[D])) + K[D]
            comb[A], comb[D] = K[A], K[D]
        else:
            score[D] = bid + (cap if capD else 16) + K[A] + K[D]
            comb[D] = K[A] + K[D]
    else:
        w = A if made else D
        capw = capA if made else capD
        score[w] = bid + (cap if capw else 16) + K[A] + K[D]
        comb[w] = K[A] + K[D]
    return DealResult(c, made, tricks, pts, (comb[0], comb[1]), (score[0], score[1]))
