"""Deal scoring for the batched engine: numba ports of :func:`blot_env.scoring.score_deal` and of
the counted-combinations logic of :mod:`blot_env.declarations` (``counted_sets``, ``blots``,
``_set_key``, ``best_key_is_tied``), over one row ``S[b]`` of ``_layout`` and the knobs ``K``
(``int64[NK]``, ``_layout.knobs``). Rules: rules.md 1.4 item 4, 2.4.2 RESOLUTION, 2.5, 2.8,
3/4, 5.5, 5.7.3-5.7.6 and 6.

The home of the formulas is :func:`blot_env.scoring.score_outcome`; this twin exists because a
kernel compiled without numba's runtime cannot call Python (nor build tuples of a State), and
it reads the same constants (:mod:`blot_env.codes`). ``tests/test_batched_combos.py`` (random
finished deals, every knob) and ``tests/test_batched_diff.py`` (every preset, move by move)
hold the two equal. Rounding and the deal reward are the reference functions themselves,
compiled (:data:`round_tens`, :data:`side_score_difference`).

Each seat's candidate set (what may count) is read from the row:

* ``auto``: the best set of its hand at the start of play (``AUTO_MASK / AUTO_VALUE /
  AUTO_KEY``, filled by the core when play starts);
* ``manual``: its show set (``SHOW_MASK / SHOW_VALUE``) if it decided to show;
* ``announce`` (Open Blot): its show set if it announced a class.

For ``manual`` and ``announce`` the senior combination of a show set is the claim, so its
seniority key is ``CLAIM_KEY``.
"""

from __future__ import annotations

import numpy as np

from .. import cards as _cards
from .. import scoring as _scoring
from ..cards import NT
from ..codes import (
    BELOTE_BASE,
    BLOT_RAW,
    BLOT_TP,
    CAPOT_CARD_POINTS,
    DEAL_TP,
    DECL_ANNOUNCE,
    DECL_AUTO,
    DECL_MANUAL,
    DOUBLE_NONE,
    KIND_KAPUT,
    KIND_KAPUT_PLUS,
    SCORING_BAZAR,
    SCORING_BELOTE,
    SCORING_OPEN,
    TIE_NOBODY,
)
from ._combos import has_blot, mask_points
from ._jit import jit
from ._layout import (
    ANN_ORDER,
    ANNOUNCED,
    AUTO_KEY,
    AUTO_MASK,
    AUTO_VALUE,
    C_DOUBLE,
    C_KIND,
    C_PLUS,
    C_SEAT,
    C_STRAIN,
    C_VALUE,
    CLAIM_KEY,
    DEALER,
    DECIDED,
    HANDS,
    K_CAPOT,
    K_DECL,
    K_N,
    K_OPEN_COMPLEMENT,
    K_SCORING,
    K_TAKER_GE,
    K_TIE,
    K_TRICKS,
    NANN,
    NSTOCK,
    PLAY_HANDS,
    POINTS,
    SHOW_MASK,
    SHOW_VALUE,
    STOCK,
    TRICKS,
)

#: bid multiplier M (rules.md 2.5) by double: suit, NT; belote's k (rules.md 6)
MULT_SUIT = np.array(_scoring.MULT_SUIT, dtype=np.int64)
MULT_NT = np.array(_scoring.MULT_NT, dtype=np.int64)
MULT_BELOTE = np.array(_scoring.MULT_BELOTE, dtype=np.int64)
#: ``out`` of ``score_row``: made, tricks[2], card_points[2], combinations[2], score[2]
R_MADE, R_TRICKS, R_POINTS, R_COMB, R_SCORE = 0, 1, 3, 5, 7
NRES = 9

#: table-point rounding r(x) of rules.md 0: ``cards.round_tens`` itself, compiled
round_tens = jit(_cards.round_tens)
#: the deal reward of a seat from a result's score pair: ``scoring.side_score_difference``
#: itself, compiled (the batched engine's rewards; ``score`` is ``res[b, R_SCORE:R_SCORE + 2]``)
side_score_difference = jit(_scoring.side_score_difference)


@jit
def seat_set(S, b: int, K, s: int):
    """Seat ``s``'s candidate set (see the module docstring): ``(present, mask, raw value,
    combo_key of its senior combination)``; ``present`` False for an empty set."""
    decl = K[K_DECL]
    if decl == DECL_AUTO:
        key = S[b, AUTO_KEY + s]
        if key < 0:
            return False, 0, 0, -1
        return True, S[b, AUTO_MASK + s], S[b, AUTO_VALUE + s], key
    if decl == DECL_MANUAL:
        shown = S[b, DECIDED + s] == 1
    else:
        shown = S[b, ANNOUNCED + s] > 0
    if not shown or S[b, SHOW_MASK + s] == 0:
        return False, 0, 0, -1
    return True, S[b, SHOW_MASK + s], S[b, SHOW_VALUE + s], S[b, CLAIM_KEY + s]


@jit
def _full_key(S, b: int, K, s: int, key: int) -> int:
    """``declarations._set_key`` as one int: ``key * 4 + (3 - pos)`` with pos the announce
    position (announce mode) or the trick-1 position; ``key * 4`` when ties score nobody."""
    if K[K_DECL] == DECL_ANNOUNCE:
        pos = 0
        for i in range(S[b, NANN]):
            if S[b, ANN_ORDER + i] == s:
                pos = i
                break
        return key * 4 + (3 - pos)
    if K[K_TIE] == TIE_NOBODY:
        return key * 4
    n = K[K_N]
    fh = (S[b, DEALER] + 1) % n
    return key * 4 + (3 - (s - fh + n) % n)


@jit
def counted_team(S, b: int, K) -> int:
    """The side (``seat % 2``) whose sets count, or -1 if none does (no set, or a complete tie
    under ``declaration_tie="nobody"``): ``declarations.counted_sets``, rules.md 1.4 item 4."""
    n = K[K_N]
    best_seat = -1
    best_full = -1
    for s in range(n):
        present, _, _, key = seat_set(S, b, K, s)
        if present:
            full = _full_key(S, b, K, s, key)
            if best_seat < 0 or full > best_full:
                best_seat = s
                best_full = full
    if best_seat < 0:
        return -1
    if K[K_TIE] == TIE_NOBODY:
        for s in range(n):
            if s % 2 != best_seat % 2:
                present, _, _, key = seat_set(S, b, K, s)
                if present and _full_key(S, b, K, s, key) == best_full:
                    return -1
    return best_seat % 2


@jit
def counted_masks(S, b: int, K, out) -> None:
    """``out[0:n]`` (int64) = per seat the union of the masks of its counted combinations
    (``declarations.counted_sets``; 0 for a seat whose set does not count)."""
    team = counted_team(S, b, K)
    for s in range(K[K_N]):
        present, mask, _, _ = seat_set(S, b, K, s)
        out[s] = mask if present and s % 2 == team else 0


@jit
def counted_values(S, b: int, K, out) -> None:
    """``out[0:n]`` (int64) = per seat the raw value of its counted combinations
    (``set_value(counted_sets(state)[s])``)."""
    team = counted_team(S, b, K)
    for s in range(K[K_N]):
        present, _, value, _ = seat_set(S, b, K, s)
        out[s] = value if present and s % 2 == team else 0


@jit
def seat_blot(S, b: int, s: int) -> bool:
    """``declarations.blots(state)[s]``: seat ``s`` held trump K+Q at the start of play."""
    return has_blot(S[b, PLAY_HANDS + s], S[b, C_STRAIN])


@jit
def undealt_mask(S, b: int, K) -> int:
    """``variants.undealt_mask``: the stock's cards that never were in a hand (duels; else 0)."""
    n = K[K_N]
    off = PLAY_HANDS
    started = False
    for s in range(n):
        if S[b, PLAY_HANDS + s] != 0:
            started = True
    if not started:
        off = HANDS
    held = 0
    for s in range(n):
        held |= S[b, off + s]
    st = 0
    for i in range(S[b, NSTOCK]):
        st |= 1 << S[b, STOCK + i]
    return st & ~held


@jit
def score_row(S, b: int, K, out) -> None:
    """Score the finished deal of row ``S[b]`` (``scoring.score_deal``) into ``out`` (int64[9]):
    ``made`` (-1 passed out, 0, 1), ``tricks[2]``, ``card_points[2]`` (raw),
    ``combinations[2]`` and ``score[2]`` per side, as ``DealResult``'s fields. Families by
    ``K_SCORING``: bazar (rules.md 2.5), duel / open (3, 4, 5.5, 5.7.5), belote (6)."""
    for i in range(NRES):
        out[i] = 0
    if S[b, C_SEAT] < 0:
        out[R_MADE] = -1
        return
    fam = K[K_SCORING]
    n = K[K_N]
    team = counted_team(S, b, K)
    tr0 = tr1 = p0 = p1 = 0
    for s in range(n):
        if s % 2 == 0:
            tr0 += S[b, TRICKS + s]
            p0 += S[b, POINTS + s]
        else:
            tr1 += S[b, TRICKS + s]
            p1 += S[b, POINTS + s]
    out[R_TRICKS] = tr0
    out[R_TRICKS + 1] = tr1
    out[R_POINTS] = p0
    out[R_POINTS + 1] = p1
    if fam in (SCORING_BAZAR, SCORING_BELOTE):
        _score_four(S, b, K, out, fam, team, tr0, tr1, p0, p1)
    else:
        _score_two(S, b, K, out, fam, team, p0, p1, tr0, tr1)


@jit
def _score_four(S, b, K, out, fam, team, tr0, tr1, p0, p1) -> None:
    """Bazar (rules.md 2.5, tp) and belote (rules.md 6, raw) for a row with a contract."""
    n = K[K_N]
    cseat = S[b, C_SEAT]
    strain = S[b, C_STRAIN]
    value = S[b, C_VALUE]
    dbl = S[b, C_DOUBLE]
    A = cseat % 2
    D = 1 - A
    tricks = (tr0, tr1)
    pts = (p0, p1)
    capA = tricks[A] == K[K_TRICKS]
    capD = tricks[D] == K[K_TRICKS]
    cap = K[K_CAPOT]
    # per-team combinations (bazar: tp incl. blot 2; belote: raw dec and bel 20)
    k0 = k1 = 0
    bel0 = bel1 = 0
    seat_k = 0
    for s in range(n):
        present, _, v, _ = seat_set(S, b, K, s)
        cv = v if present and s % 2 == team else 0
        bl = seat_blot(S, b, s)
        if fam == SCORING_BAZAR:
            ks = cv // 10 + (BLOT_TP if bl else 0)
            if s == cseat:
                seat_k = ks
            if s % 2 == 0:
                k0 += ks
            else:
                k1 += ks
        else:
            if s % 2 == 0:
                k0 += cv
                bel0 += BLOT_RAW if bl else 0
            else:
                k1 += cv
                bel1 += BLOT_RAW if bl else 0
    score0 = score1 = comb0 = comb1 = 0
    if fam == SCORING_BAZAR:
        KK = (k0, k1)
        V_A = (CAPOT_CARD_POINTS if capA else pts[A]) + 10 * KK[A]
        made = (not capD) and V_A >= 10 * value
        kind = S[b, C_KIND]
        if kind in (KIND_KAPUT, KIND_KAPUT_PLUS):
            made = made and capA
        if kind == KIND_KAPUT_PLUS:
            made = made and seat_k >= S[b, C_PLUS]
        M = MULT_NT[dbl] if strain == NT else MULT_SUIT[dbl]
        bid = M * value
        sA = sD = cA = cD = 0
        if dbl == DOUBLE_NONE:
            if made:
                sA = bid + (cap if capA else round_tens(pts[A])) + KK[A]
                sD = (0 if capA else round_tens(pts[D])) + KK[D]
                cA = KK[A]
                cD = KK[D]
            else:
                sD = bid + (cap if capD else DEAL_TP) + KK[A] + KK[D]
                cD = KK[A] + KK[D]
        else:
            capw = capA if made else capD
            sw = bid + (cap if capw else DEAL_TP) + KK[A] + KK[D]
            cw = KK[A] + KK[D]
            if made:
                sA = sw
                cA = cw
            else:
                sD = sw
                cD = cw
    else:
        dec = (k0, k1)
        bel = (bel0, bel1)
        v = value
        k = MULT_BELOTE[dbl]
        made = (not capD) and pts[A] + dec[A] + bel[A] >= v
        sA = sD = cA = cD = 0
        if capA or capD:
            # w: the side that took every trick
            cw_ = cap + v
            if capA:
                cA = dec[A] + bel[A]
                cD = bel[D]
                sA = cw_ * k + cA
                sD = cD
            else:
                cD = dec[D] + bel[D]
                cA = bel[A]
                sD = cw_ * k + cD
                sA = cA
        elif dbl:
            cA = dec[A] + bel[A]
            cD = dec[D] + bel[D]
            if made:
                sA = (BELOTE_BASE + v) * k + cA
                sD = cD
            else:
                sD = (BELOTE_BASE + v) * k + cD
                sA = cA
        else:
            cA = dec[A] + bel[A]
            cD = dec[D] + bel[D]
            if made:
                sA = v + pts[A] + cA
                sD = pts[D] + cD
            else:
                sD = BELOTE_BASE + v + cD
                sA = cA
    if A == 0:
        score0, score1, comb0, comb1 = sA, sD, cA, cD
    else:
        score0, score1, comb0, comb1 = sD, sA, cD, cA
    out[R_MADE] = 1 if made else 0
    out[R_COMB] = comb0
    out[R_COMB + 1] = comb1
    out[R_SCORE] = score0
    out[R_SCORE + 1] = score1


@jit
def _score_two(S, b, K, out, fam, team, p0, p1, tr0, tr1) -> None:
    """The 2-player games (tp): duels rules.md 3/4 and 5.7.4, Open Blot 5.5 and 5.7.5."""
    t = S[b, C_SEAT]
    o = 1 - t
    strain = S[b, C_STRAIN]
    pt = p0 if t == 0 else p1
    po = p1 if t == 0 else p0
    trt = tr0 if t == 0 else tr1
    tro = tr1 if t == 0 else tr0
    kt = ko = 0
    for s in range(2):
        present, _, v, _ = seat_set(S, b, K, s)
        cv = v if present and s % 2 == team else 0
        ks = cv // 10 + (BLOT_TP if seat_blot(S, b, s) else 0)
        if s == t:
            kt = ks
        else:
            ko = ks
    T_t = pt + 10 * kt
    T_o = po + 10 * ko
    beats = T_t >= T_o if K[K_TAKER_GE] else T_t > T_o
    if fam == SCORING_OPEN:  # the other's tricks hold 0 card points
        cap_t = po == 0
        cap_o = pt == 0
    else:
        cap_t = trt == K[K_TRICKS]
        cap_o = tro == K[K_TRICKS]
    made = beats and not cap_o
    st = so = ct = co = 0
    if made:
        ct = kt
        co = ko
        if cap_t:
            st = K[K_CAPOT] + kt
            so = ko
        elif fam == SCORING_OPEN:
            ro = round_tens(po)
            so = ro + ko
            st = (DEAL_TP - ro if K[K_OPEN_COMPLEMENT] else round_tens(pt)) + kt
        else:
            u = mask_points(undealt_mask(S, b, K), strain)
            st = round_tens(pt + u) + kt
            so = round_tens(po) + ko
    else:
        co = kt + ko
        so = (K[K_CAPOT] if cap_o else DEAL_TP) + kt + ko
    out[R_MADE] = 1 if made else 0
    out[R_COMB + t] = ct
    out[R_COMB + o] = co
    out[R_SCORE + t] = st
    out[R_SCORE + o] = so
