"""Combinations (melds) for the batched engine: numba ports of :mod:`blot_env.combos` and the
card tables of :mod:`blot_env.cards` (rules.md 1.1, 1.2, 1.4, 2.2, 2.4.1).

All functions are ``@jit`` over ``int64`` scalars: a hand is a card bitmask
(bit ``suit * 8 + rank``), a strain ``0..3`` (a suit) or ``4`` (NT). The rules knobs come as
their ``_layout`` codes: ``flat`` = ``K_LONG_RUN`` (0 ``"split"``, 1 ``"100"``) and ``ctab`` =
``K_CARRE`` (0 armenian, 1 classic, 2 none). Values are **raw** points (terz 20, fifty 50,
hundred 100, carres 100..200), table points ``value // 10``.

A combination instance is six ints (the columns of an ``instances_into`` buffer):
``cls`` (1 terz, 2 fifty, 3 hundred, 4 carre), ``value``, ``mask``, ``key`` (the one-int
seniority key of ``_layout.combo_key``: ``((is_carre * 8 + cls_or_carre_order) * 8 + top)
* 2 + is_trump``), ``suit`` (-1 for a carre) and ``top`` rank. Instances come senior first
(by ``key`` descending; equal keys keep the reference's generation order), exactly as
``combos.instances``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import cards as _cards
from .. import combos as _ref_combos
from ..codes import CARRE_TABLE_CLASSIC, CARRE_TABLE_NONE, CLS_CARRE, CLS_FIFTY, CLS_HUNDRED, CLS_TERZ
from ._jit import jit, jit_inline, stack_array

# Every table is the reference modules' own, as an array (one table in one place).
NT = _cards.NT
MAXI = 128
"""Rows of an instance buffer: more than any hand of <= 16 cards can hold (split: <= 15 runs
per suit; flat: <= 21 runs per suit, plus <= 8 carres)."""
I_CLS, I_VALUE, I_MASK, I_KEY, I_SUIT, I_TOP = range(6)
_instance_buf = stack_array((MAXI, 6))
_index_buf = stack_array((MAXI + 1,))
_path_buf = stack_array((MAXI + 1,))


def _arr(values) -> np.ndarray:
    return np.array(values, dtype=np.int64)


#: card points by rank (rules.md 1.1)
TRUMP_POINTS = _arr(_cards.TRUMP_POINTS)
PLAIN_POINTS = _arr(_cards.PLAIN_POINTS)
NT_POINTS = _arr(_cards.NT_POINTS)
#: trick strength by rank (rules.md 1.1, 1.2)
TRUMP_ORDER = _arr(_cards.TRUMP_ORDER)
PLAIN_ORDER = _arr(_cards.PLAIN_ORDER)
#: carre values by rank (raw), rules.md 1.4
CARRE_ARMENIAN_TRUMP = _arr(_ref_combos.CARRE_ARMENIAN_TRUMP)
CARRE_ARMENIAN_NT = _arr(_ref_combos.CARRE_ARMENIAN_NT)
CARRE_CLASSIC = _arr(_ref_combos.CARRE_CLASSIC)
#: carre seniority: trump game Q<K<T<A<9<J, no trump J<Q<K<T<A
CARRE_ORDER_TRUMP = _arr(_ref_combos.CARRE_ORDER_TRUMP)
CARRE_ORDER_NT = _arr(_ref_combos.CARRE_ORDER_NT)
#: raw value of a sequence of class 1..3 (index 0 unused)
SEQ_VALUES = _arr([0] + [_ref_combos.SEQ_VALUES[c] for c in (CLS_TERZ, CLS_FIFTY, CLS_HUNDRED)])
RANK_MASK0 = _ref_combos.RANK_MASKS[0]
"""Bitmask of the four 7s; ``RANK_MASK0 << rank`` is the four cards of ``rank``."""
RK, RQ = _cards.RK, _cards.RQ
assert CLS_CARRE == 4 and RANK_MASK0 == 0x01010101  # the compiled code's class and bit layout


# ------------------------------------------------------------------------------ cards
@jit
def card_points(card: int, strain: int) -> int:
    """Raw card points of ``card`` (0..31) when ``strain`` (0..3, or 4 = NT) is the contract
    (``cards.card_points``, rules.md 1.1)."""
    r = card & 7
    if strain == NT:
        return NT_POINTS[r]
    if (card >> 3) == strain:
        return TRUMP_POINTS[r]
    return PLAIN_POINTS[r]


@jit
def mask_points(mask: int, strain: int) -> int:
    """Sum of ``card_points`` over the cards of bitmask ``mask``."""
    t = 0
    m = mask
    while m:
        low = m & -m
        c = 0
        while (low >> c) != 1:
            c += 1
        t += card_points(c, strain)
        m ^= low
    return t


@jit
def strength(card: int, led_suit: int, strain: int) -> int:
    """Trick strength of ``card`` (``cards.strength``, rules.md 1.2): trumps 16+, cards of the
    led suit 8+, others 0; higher wins."""
    s = card >> 3
    r = card & 7
    if strain != NT and s == strain:
        return 16 + TRUMP_ORDER[r]
    if s == led_suit:
        return 8 + PLAIN_ORDER[r]
    return 0


@jit
def trick_winner_index(cards, ncards: int, strain: int) -> int:
    """Index (0-based) of the winning card among ``cards[0:ncards]`` (int64 array, play order),
    ``cards.trick_winner_index`` (rules.md 1.2)."""
    led = cards[0] >> 3
    best = 0
    best_s = strength(cards[0], led, strain)
    for i in range(1, ncards):
        st = strength(cards[i], led, strain)
        if st > best_s:
            best = i
            best_s = st
    return best


# ------------------------------------------------------------------------------ combos
@jit
def carre_value(rank: int, strain: int, ctab: int) -> int:
    """Raw value of a carre of ``rank`` (0 = not a combination), rules.md 1.4."""
    if ctab == CARRE_TABLE_NONE:
        return 0
    if ctab == CARRE_TABLE_CLASSIC:
        return CARRE_CLASSIC[rank]
    if strain == NT:
        return CARRE_ARMENIAN_NT[rank]
    return CARRE_ARMENIAN_TRUMP[rank]


@jit
def _carre_ranks(hand: int, strain: int, ctab: int) -> int:
    """Bitmask (bit = rank) of the carres held that are worth something."""
    out = 0
    for r in range(8):
        m = RANK_MASK0 << r
        if (hand & m) == m and carre_value(r, strain, ctab) > 0:
            out |= 1 << r
    return out


@jit
def _rank_mask(ranks: int) -> int:
    m = 0
    for r in range(8):
        if (ranks >> r) & 1:
            m |= RANK_MASK0 << r
    return m


@jit
def has_blot(hand: int, strain: int) -> bool:
    """Blot: K and Q of trumps in ``hand``; never in NT (``combos.has_blot``, rules.md 1.4)."""
    if strain == NT or strain < 0:
        return False
    need = (1 << (strain * 8 + RK)) | (1 << (strain * 8 + RQ))
    return (hand & need) == need


@jit_inline
def _next_run(bits: int, r: int):
    """The next maximal run of set bits of the 8-bit ``bits`` at or after rank ``r``:
    ``(start, stop)``, stop exclusive; ``(8, 8)`` when there is none."""
    while r < 8 and not (bits >> r) & 1:
        r += 1
    start = r
    while r < 8 and (bits >> r) & 1:
        r += 1
    return start, r


@jit
def _run_classes(hand: int, flat: int) -> int:
    """Bitmask of sequence classes (bits 1..3) of ``hand``'s runs, split or flat."""
    out = 0
    for s in range(4):
        bits = (hand >> (8 * s)) & 0xFF
        r = 0
        while r < 8:
            start, r = _next_run(bits, r)
            ln = r - start
            if ln < 3:
                continue
            if flat:
                out |= 1 << (min(ln, 5) - 2)
            else:
                out |= 2
                if ln >= 4:
                    out |= 4
                if ln >= 5:
                    out |= 8
    return out


@jit
def classes_held(hand: int, strain: int, flat: int, ctab: int) -> int:
    """Classes ``hand`` may announce (``combos.classes_held``, rules.md 2.4.3 item 1): an int
    bitmask with bit ``c`` set for each class ``c`` in 1..4 (terz, fifty, hundred, carre) of
    which it holds an instance. ``flat``: ``K_LONG_RUN`` code; ``ctab``: ``K_CARRE`` code."""
    out = _run_classes(hand, flat)
    cr = _carre_ranks(hand, strain, ctab)
    if cr:
        out |= 1 << CLS_CARRE
        if flat:
            # flat runs left when held carres are taken out (combos.instances)
            sub = cr
            while sub:
                out |= _run_classes(hand & ~_rank_mask(sub), 1)
                sub = (sub - 1) & cr
    return out


@jit
def _push(buf, n: int, cls: int, value: int, mask: int, key: int, suit: int, top: int) -> int:
    buf[n, 0] = cls
    buf[n, 1] = value
    buf[n, 2] = mask
    buf[n, 3] = key
    buf[n, 4] = suit
    buf[n, 5] = top
    return n + 1


@jit
def _runs_into(hand: int, strain: int, flat: int, buf, n: int, dedup_from: int) -> int:
    """Append ``combos._runs`` of ``hand`` to ``buf`` from row ``n``; returns the new count.
    ``dedup_from >= 0``: skip masks already in rows ``dedup_from..``(flat extras)."""
    for s in range(4):
        bits = (hand >> (8 * s)) & 0xFF
        trump = 1 if strain == s else 0
        r = 0
        while r < 8:
            start, r = _next_run(bits, r)
            length = r - start
            if length < 3:
                continue
            if flat:
                cls = min(length, 5) - 2
                mask = ((1 << length) - 1) << (8 * s + start)
                top = r - 1
                if dedup_from >= 0:
                    dup = False
                    for i in range(dedup_from, n):
                        if buf[i, 2] == mask:
                            dup = True
                            break
                    if dup:
                        continue
                n = _push(buf, n, cls, SEQ_VALUES[cls], mask, ((cls * 8) + top) * 2 + trump, s, top)
            else:
                for ln in range(3, min(5, length) + 1):
                    cls = ln - 2
                    for lo in range(start, r - ln + 1):
                        mask = ((1 << ln) - 1) << (8 * s + lo)
                        top = lo + ln - 1
                        n = _push(buf, n, cls, SEQ_VALUES[cls], mask, ((cls * 8) + top) * 2 + trump, s, top)
    return n


@jit
def instances_into(hand: int, strain: int, flat: int, ctab: int, buf) -> int:
    """Every combination instance of ``hand`` into ``buf`` (``int64[>= MAXI, 6]``, columns
    ``I_CLS .. I_TOP``), senior first; returns the count (``combos.instances``, rules.md 1.4,
    2.4.1). Split: every sub-run 3..5 of a run; flat (``"100"``): each maximal run whole, and
    each maximal run left when held carres are taken out (deduplicated by mask). Zero-value
    carres are not combinations."""
    n = _runs_into(hand, strain, flat, buf, 0, -1)
    cr = _carre_ranks(hand, strain, ctab)
    if flat and cr:
        # subsets in the reference's order: k = 1 .. 2^nc - 1, bit i = the i-th carre by rank
        nc = 0
        for r in range(8):
            nc += (cr >> r) & 1
        for k in range(1, 1 << nc):
            rest = hand
            i = 0
            for r in range(8):
                if (cr >> r) & 1:
                    if (k >> i) & 1:
                        rest &= ~(RANK_MASK0 << r)
                    i += 1
            n = _runs_into(rest, strain, 1, buf, n, 0)
    for r in range(8):
        if (cr >> r) & 1:
            order = CARRE_ORDER_NT[r] if strain == NT else CARRE_ORDER_TRUMP[r]
            n = _push(buf, n, 4, carre_value(r, strain, ctab), RANK_MASK0 << r, ((8 + order) * 8 + r) * 2, -1, r)
    # stable sort by key, descending (insertion sort: equal keys keep their order)
    for i in range(1, n):
        j = i
        while j > 0 and buf[j - 1, 3] < buf[j, 3]:
            for c in range(6):
                t = buf[j - 1, c]
                buf[j - 1, c] = buf[j, c]
                buf[j, c] = t
            j -= 1
    return n


@njit(cache=True, error_model="numpy")  # with NRT: it returns a new array (Python callers only)
def instances(hand: int, strain: int, flat: int, ctab: int):
    """``int64[n, 6]``: the instances of ``hand`` (see ``instances_into``), a fresh array."""
    buf = _instance_buf()
    n = instances_into(hand, strain, flat, ctab, buf)
    return buf[:n].copy()


@jit
def best_of_class(hand: int, strain: int, cls: int, flat: int, ctab: int):
    """The senior instance of exactly class ``cls`` (the claim of rules.md 2.4.2;
    ``combos.best_of_class``): ``(found, value, mask, key, suit, top)``, ``found`` a bool
    (all zeros / -1 when not found)."""
    buf = _instance_buf()
    n = instances_into(hand, strain, flat, ctab, buf)
    for i in range(n):
        if buf[i, 0] == cls:
            return True, buf[i, 1], buf[i, 2], buf[i, 3], buf[i, 4], buf[i, 5]
    return False, 0, 0, -1, -1, -1


@jit
def _best_disjoint(buf, idx, m: int, path):
    """The reference ``_best_disjoint`` over candidates ``buf[idx[0:m]]`` (senior first): the
    card-disjoint set of largest value, ties to the set found first in pre-order (the
    lexicographically first index sequence). Returns ``(mask, value, top_key, count)``."""
    best_v = 0
    best_mask = 0
    best_key = -1
    best_cnt = 0
    d = 0
    j = 0
    used = 0
    cur = 0
    while True:
        while j < m and (buf[idx[j], 2] & used):
            j += 1
        if j < m:
            path[d] = j
            d += 1
            used |= buf[idx[j], 2]
            cur += buf[idx[j], 1]
            if cur > best_v:
                best_v = cur
                best_mask = used
                best_key = buf[idx[path[0]], 3]
                best_cnt = d
            j += 1
        else:
            if d == 0:
                break
            d -= 1
            jj = path[d]
            used &= ~buf[idx[jj], 2]
            cur -= buf[idx[jj], 1]
            j = jj + 1
    return best_mask, best_v, best_key, best_cnt


@jit
def best_set(hand: int, strain: int, flat: int, ctab: int, max_cls: int, include_mask: int):
    """The card-disjoint set of combinations worth most (raw), ``combos.best_set`` (rules.md
    1.4, 2.4.2, 2.8): ``(mask, value, top_key, count)`` = union of the set's masks, its raw
    value, the ``combo_key`` of its senior combination (-1: empty set) and its size.

    Only classes ``<= max_cls`` (4 = all). ``include_mask`` 0: no forced instance; else the
    instance whose mask is exactly ``include_mask`` (it must be one of ``hand``'s) is forced in
    and the rest is the best set disjoint from it. Ties in value go to the set the reference
    finds first (``_best_disjoint``'s senior-first order)."""
    buf = _instance_buf()
    n = instances_into(hand, strain, flat, ctab, buf)
    idx = _index_buf()
    path = _path_buf()
    inc_v = 0
    inc_key = -1
    if include_mask != 0:
        for i in range(n):
            if buf[i, 2] == include_mask:
                inc_v = buf[i, 1]
                inc_key = buf[i, 3]
                break
    m = 0
    for i in range(n):
        if buf[i, 0] <= max_cls and not (buf[i, 2] & include_mask):
            idx[m] = i
            m += 1
    mask, v, key, cnt = _best_disjoint(buf, idx, m, path)
    if include_mask != 0:
        mask |= include_mask
        v += inc_v
        cnt += 1
        if inc_key > key:
            key = inc_key
    return mask, v, key, cnt


@jit
def achievable_plus(hand: int, strain: int, flat: int, ctab: int) -> int:
    """``Ach(hand, den)`` of rules.md 2.2 (``combos.achievable_plus``): an int bitmask with bit
    ``N`` set iff ``N >= 1`` is the table-point sum of a non-empty set of combinations
    (sequences and carres card-disjoint; the blot may overlap them and adds 2). Sums of hands
    of <= 16 cards stay below 63."""
    buf = _instance_buf()
    n = instances_into(hand, strain, flat, ctab, buf)
    path = _path_buf()
    sums = 1  # the empty set
    d = 0
    j = 0
    used = 0
    cur = 0
    while True:
        while j < n and (buf[j, 2] & used):
            j += 1
        if j < n:
            path[d] = j
            d += 1
            used |= buf[j, 2]
            cur += buf[j, 1] // 10
            sums |= 1 << cur
            j += 1
        else:
            if d == 0:
                break
            d -= 1
            jj = path[d]
            used &= ~buf[jj, 2]
            cur -= buf[jj, 1] // 10
            j = jj + 1
    if has_blot(hand, strain):
        sums |= sums << 2
    return sums & ~1
