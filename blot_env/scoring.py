"""Deal scoring: one function, ``score_deal``, used by the env, search and evaluation.

Families (``cfg.scoring``): ``bazar`` rules.md 2.5 and ``duel`` 3/4 (table points, "tp"),
``open`` 5.5 with 5.7.5 (tp), ``belote`` 6 (raw points). Card points are always raw
(0..162; 2-player: from tricks only, undealt cards never in them, 5.7.3).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import NT, card_points, cards_of, round_tens
from .declarations import blots, counted_sets, set_value
from .state import DOUBLE_NAMES, Contract, State
from .variants import undealt_mask

#: bid multiplier M, rules.md 2.5:  none contra recontra
MULT_SUIT = (1, 2, 4)
MULT_NT = (2, 3, 5)
#: belote contra multiplier k, rules.md 6: none contra surcontra
MULT_BELOTE = (1, 2, 4)
#: what a side that was right gets beside the bid on a failed / doubled belote contract [002]
BELOTE_BASE = 160
#: card tp of a deal in the 2-player games: the failed taker's opponent writes 16 (rules.md 3-5)
DEAL_TP = 16


@dataclass(frozen=True)
class DealResult:
    """The result of a deal, per side (team ``seat % 2``; 2-player: per player).

    ``card_points`` raw (incl. the last-trick 10); ``combinations`` and ``score`` in the
    score sheet's units (tp for the Armenian presets, raw for belote), docs/deal-record.md.
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
    if fam in ("duel", "open"):
        return _score_two(state)
    if fam == "belote":
        return _score_belote(state)
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


def _score_two(state: State) -> DealResult:
    """The 2-player games (tp): duels rules.md 3/4 and 5.7.4, Open Blot 5.5 and 5.7.5.

    ``T = card points + 10·K`` per player (K = counted combinations + blot, tp); the taker
    makes iff ``T_t > T_o`` (``>=`` with ``taker_ge``) and the opponent did not capot him
    (duels: took every trick; open: the taker's tricks hold 0 card points, 5.7.5). Made: the
    duel taker writes ``r(c_t + u)`` (u = raw points of the undealt cards), the open taker
    ``16 - r(c_o)`` (``open_complement``), the opponent ``r(c_o)``; a capot writes
    ``capot_tp`` instead and the capotted player 0 for cards. Failed: the opponent writes
    ``16`` (``capot_tp`` when the taker is capotted) plus both players' combinations.
    """
    cfg = state.cfg
    c = state.contract
    t, o = c.seat, 1 - c.seat
    pts = (state.points[0], state.points[1])
    tricks = (state.tricks[0], state.tricks[1])
    combo_seat, blot_seat = _combo_tp(state)
    K = [combo_seat[s] + blot_seat[s] for s in (0, 1)]
    T = [pts[s] + 10 * K[s] for s in (0, 1)]
    beats = T[t] >= T[o] if cfg.taker_ge else T[t] > T[o]
    # cap[s]: player s capotted the other. Duels: s took every trick (5.7.4); Open Blot: the
    # other's tricks hold 0 card points, "did not score a single point" (5.7.5)
    if cfg.scoring == "open":
        cap = [pts[1 - s] == 0 for s in (0, 1)]
    else:
        cap = [tricks[s] == cfg.num_tricks for s in (0, 1)]
    made = beats and not cap[o]
    score = [0, 0]
    comb = [0, 0]
    if made:
        comb[t], comb[o] = K[t], K[o]
        if cap[t]:
            score[t], score[o] = cfg.capot_tp + K[t], K[o]
        elif cfg.scoring == "open":
            ro = round_tens(pts[o])
            score[o] = ro + K[o]
            score[t] = (DEAL_TP - ro if cfg.open_complement else round_tens(pts[t])) + K[t]
        else:
            u = sum(card_points(x, c.strain) for x in cards_of(undealt_mask(state)))
            score[t] = round_tens(pts[t] + u) + K[t]
            score[o] = round_tens(pts[o]) + K[o]
    else:
        comb[o] = K[t] + K[o]
        score[o] = (cfg.capot_tp if cap[o] else DEAL_TP) + K[t] + K[o]
    return DealResult(c, made, tricks, pts, (comb[0], comb[1]), (score[0], score[1]))


def _score_belote(state: State) -> DealResult:
    """Classic belote, raw points (rules.md 6; RES-16, RES-34, RES-35).

    ``T_A = cards_A + Dec_A + Bel_A``; made iff ``T_A >= v`` and the defenders did not take
    all 8 tricks. Only the pair with the senior declaration counts its declarations (a
    complete tie: nobody); belote (Bel) always stays with its holder's pair. A capot pays
    ``(capot_tp + v)·k`` to the pair that took every trick (the other keeps only its Bel);
    otherwise a doubled deal pays ``(160 + v)·k`` to the side that was right, and an
    undoubled failure ``160 + v`` to the defenders. Dec and Bel are never multiplied.
    """
    cfg = state.cfg
    c = state.contract
    A = c.seat % 2
    D = 1 - A
    tricks = _team_sums(state, state.tricks)
    pts = _team_sums(state, state.points)
    sets = counted_sets(state)
    bl = blots(state)
    dec, bel = [0, 0], [0, 0]
    for s in range(state.n):
        dec[s % 2] += set_value(sets[s])
        bel[s % 2] += 20 if bl[s] else 0
    v = c.value
    k = MULT_BELOTE[c.double]
    capA = tricks[A] == cfg.num_tricks
    capD = tricks[D] == cfg.num_tricks
    made = not capD and pts[A] + dec[A] + bel[A] >= v
    comb = [0, 0]
    score = [0, 0]
    if capA or capD:
        w = A if capA else D
        comb[w], comb[1 - w] = dec[w] + bel[w], bel[1 - w]
        score[w] = (cfg.capot_tp + v) * k + comb[w]
        score[1 - w] = comb[1 - w]
    elif c.double:
        w = A if made else D
        comb = [dec[0] + bel[0], dec[1] + bel[1]]
        score[w] = (BELOTE_BASE + v) * k + comb[w]
        score[1 - w] = comb[1 - w]
    else:
        comb = [dec[0] + bel[0], dec[1] + bel[1]]
        if made:
            score[A] = v + pts[A] + comb[A]
            score[D] = pts[D] + comb[D]
        else:
            score[D] = BELOTE_BASE + v + comb[D]
            score[A] = comb[A]
    return DealResult(c, made, tricks, pts, (comb[0], comb[1]), (score[0], score[1]))
