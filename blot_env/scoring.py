"""Deal scoring: one function, ``score_deal``, used by the env, search and evaluation.

The formulas of every family live in :func:`score_outcome` (on a deal's tally);
``blot_env/batched/_score.py`` is their numba twin (``tests/test_batched_combos.py`` and
``tests/test_batched_diff.py`` hold the two equal) and :func:`side_score_difference` turns a
result into the deal reward of a seat.

Families (``cfg.scoring``): ``bazar`` rules.md 2.5 and ``duel`` 3/4 (table points, "tp"),
``open`` 5.5 with 5.7.5 (tp), ``belote`` 6 (raw points). Card points are always raw
(0..162; 2-player: from tricks only, undealt cards never in them, 5.7.3).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import NT, card_points, cards_of, round_tens
from .codes import (
    BELOTE_BASE,
    BLOT_RAW,
    BLOT_TP,
    CAPOT_CARD_POINTS,
    DEAL_TP,
    DOUBLE_NAMES,
    MULT_BELOTE,
    MULT_NT,
    MULT_SUIT,
)
from .declarations import blots, counted_sets, set_value
from .rules_config import RulesConfig
from .state import Contract, State
from .variants import undealt_mask


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


def side_score_difference(score, seat: int):
    """The deal reward of ``seat``: its side's deal score minus the other side's.

    ``score`` is the per-side ``score`` of a :class:`DealResult` (a pair, or any sequence
    indexed by side: the compiled engines pass a slice of their result vector), in score-sheet
    units (tp for the Armenian presets, raw for belote, rules.md 2.5); the side is
    ``seat % 2`` (2-player games: the seat). Partners get the same value; the two sides'
    values sum to zero. The env, the batched engine (compiled from this very function) and
    the PPO rollout all take their deal rewards from here.
    """
    t = seat % 2
    return score[t] - score[1 - t]


def _team_sums(state: State, per_seat) -> tuple[int, int]:
    a = sum(per_seat[s] for s in range(state.n) if s % 2 == 0)
    b = sum(per_seat[s] for s in range(state.n) if s % 2 == 1)
    return a, b


def score_deal(state: State) -> DealResult:
    """Score a finished deal (rules.md 2.5 for bazar; other families by ``cfg.scoring``).

    Reads the deal's tally (tricks, raw card points, counted combinations and blots, the
    undealt cards of a duel) from ``state`` and applies :func:`score_outcome`.
    """
    c = state.contract
    if c is None:
        return passed_out_result()
    cfg = state.cfg
    tricks = _team_sums(state, state.tricks)
    points = _team_sums(state, state.points)
    combos, blot_by_seat = combination_tally(state)
    swept = (tricks[0] == cfg.num_tricks, tricks[1] == cfg.num_tricks)
    undealt = 0
    if cfg.scoring == "duel":
        undealt = sum(card_points(x, c.strain) for x in cards_of(undealt_mask(state)))
    made, comb, score = score_outcome(cfg, c, swept, points, combos, blot_by_seat, undealt)
    return DealResult(c, made, tricks, points, comb, score)


def score_unit(cfg: RulesConfig) -> str:
    """The unit of ``cfg``'s deal scores: ``"raw"`` (card points; belote scoring, rules.md 6)
    or ``"tp"`` (table points; the Armenian and open families, rules.md 2.5, 3-5)."""
    return "raw" if cfg.scoring == "belote" else "tp"


def combination_tally(state: State) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Per seat: its counted combinations and its blot, in score-sheet units (tp; raw in
    belote), for a play-phase or finished state whose declarations are final
    (``declarations.counted_sets`` and ``blots``; rules.md 1.4 item 4, 2.4.2)."""
    raw = score_unit(state.cfg) == "raw"
    combos = tuple(set_value(x) if raw else set_value(x) // 10 for x in counted_sets(state))
    blot = BLOT_RAW if raw else BLOT_TP
    return combos, tuple(blot if b else 0 for b in blots(state))


def score_outcome(cfg: RulesConfig, c: Contract, swept: tuple[bool, bool], points: tuple[int, int],
                  combos: tuple[int, ...], blot_by_seat: tuple[int, ...], undealt: int = 0
                  ) -> tuple[bool, tuple[int, int], tuple[int, int]]:
    """The score formulas of every family on a deal's tally: ``(made, combinations, score)``.

    Args:
        cfg: the rules (``cfg.scoring`` picks the family; ``capot_tp``, ``taker_ge``,
            ``open_complement``, ``num_players`` are read).
        c: the contract (never None: a passed-out deal scores nothing).
        swept: per side, whether it took every trick of the deal.
        points: raw card points per side (0..162, last-trick 10 included).
        combos: per seat, its counted combinations in score-sheet units (tp; raw in belote);
            0 for a seat whose combinations do not count.
        blot_by_seat: per seat, its blot in score-sheet units (``BLOT_TP``; ``BLOT_RAW`` in belote).
        undealt: raw points of the cards never dealt (duels, rules.md 3-4; else 0).

    Returns ``made`` and per side the ``combinations`` and the ``score`` of the
    :class:`DealResult` (score-sheet units). Rules: bazar rules.md 2.5, duels 3/4 and 5.7.4,
    Open Blot 5.5 and 5.7.5, belote 6. The solver (``agents/search/solver.py``) scores its
    leaves with this function too, on tallies built from its outcome codes.

    Raises:
        NotImplementedError: an unknown scoring family.
    """
    fam = cfg.scoring
    if fam == "bazar":
        return _score_bazar(cfg, c, swept, points, combos, blot_by_seat)
    if fam in ("duel", "open"):
        return _score_two(cfg, c, swept, points, combos, blot_by_seat, undealt)
    if fam == "belote":
        return _score_belote(cfg, c, swept, points, combos, blot_by_seat)
    raise NotImplementedError(f"scoring family {fam!r}")


def _score_bazar(cfg, c, swept, pts, combos, blot_by_seat):
    """Bazar Blot, tp (rules.md 2.5)."""
    A = c.seat % 2
    D = 1 - A
    K = [0, 0]
    for s in range(cfg.num_players):
        K[s % 2] += combos[s] + blot_by_seat[s]
    capA, capD = swept[A], swept[D]
    V_A = (CAPOT_CARD_POINTS if capA else pts[A]) + 10 * K[A]
    made = (not capD) and V_A >= 10 * c.value
    if c.is_kaput:
        made = made and capA
    if c.kind == "kaput_plus":
        made = made and combos[c.seat] + blot_by_seat[c.seat] >= c.plus
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
            score[D] = bid + (cap if capD else DEAL_TP) + K[A] + K[D]
            comb[D] = K[A] + K[D]
    else:
        w = A if made else D
        capw = capA if made else capD
        score[w] = bid + (cap if capw else DEAL_TP) + K[A] + K[D]
        comb[w] = K[A] + K[D]
    return made, (comb[0], comb[1]), (score[0], score[1])


def _score_two(cfg, c, swept, pts, combos, blot_by_seat, undealt):
    """The 2-player games (tp): duels rules.md 3/4 and 5.7.4, Open Blot 5.5 and 5.7.5.

    ``T = card points + 10·K`` per player (K = counted combinations + blot, tp); the taker
    makes iff ``T_t > T_o`` (``>=`` with ``taker_ge``) and the opponent did not capot him
    (duels: took every trick; open: the taker's tricks hold 0 card points, 5.7.5). Made: the
    duel taker writes ``r(c_t + u)`` (u = raw points of the undealt cards), the open taker
    ``16 - r(c_o)`` (``open_complement``), the opponent ``r(c_o)``; a capot writes
    ``capot_tp`` instead and the capotted player 0 for cards. Failed: the opponent writes
    ``16`` (``capot_tp`` when the taker is capotted) plus both players' combinations.
    """
    t, o = c.seat, 1 - c.seat
    K = [combos[s] + blot_by_seat[s] for s in (0, 1)]
    T = [pts[s] + 10 * K[s] for s in (0, 1)]
    beats = T[t] >= T[o] if cfg.taker_ge else T[t] > T[o]
    # cap[s]: player s capotted the other. Duels: s took every trick (5.7.4); Open Blot: the
    # other's tricks hold 0 card points, "did not score a single point" (5.7.5)
    if cfg.scoring == "open":
        cap = [pts[1 - s] == 0 for s in (0, 1)]
    else:
        cap = [swept[s] for s in (0, 1)]
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
            score[t] = round_tens(pts[t] + undealt) + K[t]
            score[o] = round_tens(pts[o]) + K[o]
    else:
        comb[o] = K[t] + K[o]
        score[o] = (cfg.capot_tp if cap[o] else DEAL_TP) + K[t] + K[o]
    return made, (comb[0], comb[1]), (score[0], score[1])


def _score_belote(cfg, c, swept, pts, combos, blot_by_seat):
    """Classic belote, raw points (rules.md 6; RES-16, RES-34, RES-35).

    ``T_A = cards_A + Dec_A + Bel_A``; made iff ``T_A >= v`` and the defenders did not take
    all 8 tricks. Only the pair with the senior declaration counts its declarations (a
    complete tie: nobody); belote (Bel) always stays with its holder's pair. A capot pays
    ``(capot_tp + v)·k`` to the pair that took every trick (the other keeps only its Bel);
    otherwise a doubled deal pays ``(160 + v)·k`` to the side that was right, and an
    undoubled failure ``160 + v`` to the defenders. Dec and Bel are never multiplied.
    """
    A = c.seat % 2
    D = 1 - A
    dec, bel = [0, 0], [0, 0]
    for s in range(cfg.num_players):
        dec[s % 2] += combos[s]
        bel[s % 2] += blot_by_seat[s]
    v = c.value
    k = MULT_BELOTE[c.double]
    capA, capD = swept[A], swept[D]
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
    return made, (comb[0], comb[1]), (score[0], score[1])
