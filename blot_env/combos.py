"""Combinations (melds): sequences, carres and the blot, rules.md 1.4 and 2.4.1.

Pure functions over a hand bitmask and a strain. Values are **raw** points (terz 20, 50,
100, carres 100..200); table points are ``value // 10`` in the Armenian presets.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from .cards import NT, RK, RQ, make_card
from .codes import BLOT_RAW, CLS_CARRE, CLS_FIFTY, CLS_HUNDRED, CLS_TERZ

#: bitmask of the four cards of each rank
RANK_MASKS = tuple(sum(1 << make_card(s, r) for s in range(4)) for r in range(8))
SEQ_VALUES = {CLS_TERZ: 20, CLS_FIFTY: 50, CLS_HUNDRED: 100}
BLOT_VALUE = BLOT_RAW

#: carre values by rank (raw points), rules.md 1.4      7  8   9    T    J    Q    K    A
CARRE_ARMENIAN_TRUMP = (0, 0, 140, 100, 200, 100, 100, 110)
CARRE_ARMENIAN_NT = (0, 0, 0, 100, 100, 100, 100, 190)
CARRE_CLASSIC = (0, 0, 150, 100, 200, 100, 100, 100)
#: carre seniority (higher is senior), rules.md 1.4 item 2: trump game Q<K<T<A<9<J
CARRE_ORDER_TRUMP = (0, 0, 4, 2, 5, 0, 1, 3)
#: no trump: J<Q<K<T<A
CARRE_ORDER_NT = (0, 0, 0, 3, 0, 1, 2, 4)


class Combo(NamedTuple):
    """One combination instance held by a player.

    ``key`` orders combinations by seniority without the trick-1 tie-break:
    ``(is_carre, class or carre order, top rank, is_trump)``.
    """

    cls: int
    value: int
    mask: int
    key: tuple[int, int, int, int]
    suit: int
    top: int


def _carre_value(rank: int, strain: int, table: str) -> int:
    if table == "none":
        return 0
    if table == "classic":
        return CARRE_CLASSIC[rank]
    return (CARRE_ARMENIAN_NT if strain == NT else CARRE_ARMENIAN_TRUMP)[rank]


@lru_cache(maxsize=200_000)
def instances(hand: int, strain: int, long_run: str = "split", carre_table: str = "armenian") -> tuple[Combo, ...]:
    """Every combination instance in ``hand`` (bitmask) for a contract in ``strain``.

    With ``long_run="split"`` every sub-run of length 3..5 of a run is an instance (the
    player splits runs, rules.md 2.4.1); with ``"100"`` each maximal run of 3+ counts whole,
    and so does each maximal run left when the cards of held carres are taken out (a carre
    of tens with T-J-Q-K also gives the terz J-Q-K; the conformance records of ``open``).
    Zero-value carres (7s, 8s, NT 9s) are not combinations. Ordered senior first.
    """
    out = list(_runs(hand, strain, long_run))
    if long_run != "split":
        carres = [m for r, m in enumerate(RANK_MASKS) if hand & m == m and _carre_value(r, strain, carre_table)]
        seen = {c.mask for c in out}
        for k in range(1, 1 << len(carres)):
            rest = hand
            for i, m in enumerate(carres):
                if k >> i & 1:
                    rest &= ~m
            for c in _runs(rest, strain, long_run):
                if c.mask not in seen:
                    seen.add(c.mask)
                    out.append(c)
    for rank, mask in enumerate(RANK_MASKS):
        if hand & mask == mask:
            v = _carre_value(rank, strain, carre_table)
            if v:
                order = (CARRE_ORDER_NT if strain == NT else CARRE_ORDER_TRUMP)[rank]
                out.append(Combo(CLS_CARRE, v, mask, (1, order, rank, 0), -1, rank))
    out.sort(key=lambda c: c.key, reverse=True)
    return tuple(out)


def _runs(hand: int, strain: int, long_run: str) -> list[Combo]:
    """Sequence instances of ``hand``: sub-runs 3..5 (split) or whole maximal runs (flat)."""
    out: list[Combo] = []
    for s in range(4):
        bits = (hand >> (8 * s)) & 0xFF
        trump = 1 if strain == s else 0
        r = 0
        while r < 8:
            if not bits >> r & 1:
                r += 1
                continue
            start = r
            while r < 8 and bits >> r & 1:
                r += 1
            length = r - start
            if length < 3:
                continue
            if long_run == "split":
                for ln in range(3, min(5, length) + 1):
                    for lo in range(start, r - ln + 1):
                        cls = ln - 2
                        mask = ((1 << ln) - 1) << (8 * s + lo)
                        top = lo + ln - 1
                        out.append(Combo(cls, SEQ_VALUES[cls], mask, (0, cls, top, trump), s, top))
            else:
                cls = min(length, 5) - 2
                mask = ((1 << length) - 1) << (8 * s + start)
                top = r - 1
                out.append(Combo(cls, SEQ_VALUES[cls], mask, (0, cls, top, trump), s, top))
    return out


def has_blot(hand: int, strain: int) -> bool:
    """Blot: K and Q of trumps in one hand; none in no-trump (rules.md 1.4)."""
    if strain == NT or strain < 0:
        return False
    need = (1 << make_card(strain, RK)) | (1 << make_card(strain, RQ))
    return hand & need == need


def _best_disjoint(cands: tuple[Combo, ...], used: int, i: int) -> tuple[int, tuple[Combo, ...]]:
    best_v, best = 0, ()
    for j in range(i, len(cands)):
        c = cands[j]
        if c.mask & used:
            continue
        v, rest = _best_disjoint(cands, used | c.mask, j + 1)
        v += c.value
        if v > best_v:
            best_v, best = v, (c,) + rest
    return best_v, best


@lru_cache(maxsize=100_000)
def best_set(hand: int, strain: int, long_run: str = "split", carre_table: str = "armenian",
             max_cls: int = CLS_CARRE, include: Combo | None = None) -> tuple[Combo, ...]:
    """The card-disjoint set of combinations worth most (raw), senior first.

    ``max_cls`` limits classes (a show under an announced class, RES-40); ``include`` forces
    one instance into the set (the claim). Ties in value go to the set found first, which
    prefers senior instances.
    """
    cands = tuple(c for c in instances(hand, strain, long_run, carre_table) if c.cls <= max_cls)
    if include is not None:
        rest = tuple(c for c in cands if not c.mask & include.mask)
        _, chosen = _best_disjoint(rest, 0, 0)
        return tuple(sorted((include,) + chosen, key=lambda c: c.key, reverse=True))
    return _best_disjoint(cands, 0, 0)[1]


def best_of_class(hand: int, strain: int, cls: int, long_run: str = "split",
                  carre_table: str = "armenian") -> Combo | None:
    """The senior instance of exactly class ``cls`` (the claim of 2.4.2), or None."""
    for c in instances(hand, strain, long_run, carre_table):
        if c.cls == cls:
            return c
    return None


def classes_held(hand: int, strain: int, long_run: str = "split", carre_table: str = "armenian") -> set[int]:
    """Classes a player may announce (rules.md 2.4.3 item 1)."""
    return {c.cls for c in instances(hand, strain, long_run, carre_table)}


@lru_cache(maxsize=100_000)
def achievable_plus(hand: int, strain: int, long_run: str = "split", carre_table: str = "armenian") -> frozenset[int]:
    """``Ach(hand, den)`` of rules.md 2.2: table-point sums of non-empty sets of combinations.

    Sequences and carres in a set are card-disjoint; the blot may overlap them.
    """
    cands = instances(hand, strain, long_run, carre_table)
    sums: set[int] = set()

    def rec(i: int, used: int, total: int) -> None:
        sums.add(total)
        for j in range(i, len(cands)):
            c = cands[j]
            if not c.mask & used:
                rec(j + 1, used | c.mask, total + c.value // 10)

    rec(0, 0, 0)
    out = set(sums)
    if has_blot(hand, strain):
        out |= {s + BLOT_VALUE // 10 for s in sums}
    out.discard(0)
    return frozenset(out)


def seniority(combo: Combo, order_pos: int) -> tuple[int, int, int, int, int]:
    """Full seniority key: ``combo.key`` then earlier in trick-1 order wins (rules.md 1.4)."""
    return combo.key + (-order_pos,)
