"""Compiled transitions of the batched engine: deal, seat to act, legal mask, apply.

Numba ports of ``engine.py`` (``new_deal``/``deal_random``, ``current_seat``, ``legal_mask``,
``_apply`` with ``_start_play``, ``_begin_turn`` and ``_play_card``), ``auction.py`` (bazar and
belote ladders with kaput and kaput+N, contra/recontra, the duel and Open Blot trump choices),
``play.py`` (``legal_cards``, the trick winner) and the manual / announce declaration protocol
of ``declarations.py`` (``steps_for_turn``, ``apply_step``, ``fix_leader``).

Every function works in place on one row ``S[b]`` of an ``int64[B, ROW]`` batch (fields of
``_layout.py``); ``K`` is ``knobs(cfg)`` (``int64[NK]``) and ``block, p0, p1, bstart`` are
``action_tables(cfg)``. After :func:`apply_row` the row equals ``convert.from_state`` of the
reference state after the same action, field for field.
"""

from __future__ import annotations

from ..cards import LAST_TRICK_BONUS, NT, RJ
from ..codes import (
    AUCTION_DUEL,
    AUCTION_OPEN,
    CLS_CARRE,
    DECL_AUTO,
    DECL_MANUAL,
    DOUBLE_CONTRA,
    DOUBLE_RECONTRA,
    EVENT_CONCEDE,
    EVENT_HEIGHT,
    EVENT_HEIGHT_TRUMP,
    EVENT_REVEAL,
    KAPUT_NONE,
    KAPUT_RAISABLE,
    KAPUT_VALUE,
    KIND_KAPUT,
    KIND_KAPUT_PLUS,
    KIND_NAME,
    KIND_NUM,
    KIND_TAKE,
    PHASE_AUCTION,
    PHASE_DONE,
    PHASE_PLAY,
    RIGHT_LEADING_PAIR,
    RIGHT_NONE,
    RIGHT_PARTNER,
    RIGHT_PASS_ON,
    STEP_ANNOUNCE,
    STEP_ANSWER,
    STEP_HEIGHT,
    STEP_SHOW,
    UNDERTRUMP_FREE,
)
from ._combos import TRUMP_ORDER, achievable_plus, best_of_class, best_set, classes_held
from ._combos import card_points as _card_points
from ._combos import strength as _strength
from ._jit import jit
from ._layout import (
    ACH,
    ANN_ORDER,
    ANNOUNCED,
    AUTO_KEY,
    AUTO_MASK,
    AUTO_VALUE,
    B_ANNOUNCE,
    B_BID,
    B_CONCEDE,
    B_CONTRA,
    B_HEIGHT,
    B_HEIGHT_TRUMP,
    B_KAPUT,
    B_KAPUT_PLUS,
    B_NAME,
    B_NOSHOW,
    B_PASS,
    B_PLAY,
    B_RECONTRA,
    B_REVEAL,
    B_SHOW,
    B_TAKE,
    C_CALL,
    C_DOUBLE,
    C_KIND,
    C_PLUS,
    C_SEAT,
    C_STRAIN,
    C_VALUE,
    CALLS,
    CLAIM_CLS,
    CLAIM_KEY,
    CLAIM_MASK,
    CLAIM_SUIT,
    CLAIM_TOP,
    CLAIM_VALUE,
    CONCEDED,
    DEALER,
    DECIDED,
    DLEADER,
    DOUBLE,
    EV_SEAT,
    EV_STEP,
    EV_TOP,
    FACE_DOWN,
    HANDS,
    HAS_DECL,
    HAS_PILES,
    HIGH_CALL,
    HIGH_SEAT,
    HIGH_VALUE,
    K_AUCTION,
    K_BID_MAX,
    K_BID_MIN,
    K_BID_STEP,
    K_CARRE,
    K_CONTRA_END,
    K_DECL,
    K_END_PASSES,
    K_HAND,
    K_JACK_FORCES,
    K_KAPUT,
    K_LONG_RUN,
    K_N,
    K_NSTRAINS,
    K_NUM_ACTIONS,
    K_PARTNER_EX,
    K_TRICKS,
    K_UNDERTRUMP,
    KAPUT_BROKEN,
    KAPUT_SEEN,
    LAST_CALL,
    LEADER,
    MAXCALLS,
    MAXEV,
    MAXN,
    MAXPEND,
    MAXPLAYS,
    MAXSTOCK,
    NANN,
    NCALLS,
    NEV,
    NHIST,
    NPEND,
    NPLAYS,
    NSTOCK,
    PASSES,
    PEND_KIND,
    PEND_SEAT,
    PHASE,
    PILES,
    PLAY_CARD,
    PLAY_HANDS,
    PLAY_SEAT,
    PLAYED,
    POINTS,
    RIGHTS,
    ROUND,
    ROW,
    SEAT,
    SHOW_MASK,
    SHOW_N,
    SHOW_VALUE,
    START_HANDS,
    STOCK,
    TRICK,
    TRICK_LEN,
    TRICK_NO,
    TRICKS,
    UNLAID,
)

# error codes of apply_row (the row is left untouched)
ERR_DONE = -1
"""The deal is over (``Phase.DONE``)."""
ERR_RANGE = -2
"""The action id is outside ``0..A-1``."""
ERR_ILLEGAL = -3
"""The action is not legal for the seat to act."""

# the named codes of phases, steps, rights, kinds and knobs come from blot_env.codes

_TRUMP_ORDER = TRUMP_ORDER


# ---------------------------------------------------------------------------- small helpers
@jit
def _trick_winner_index(S, b, trump):
    """Index of the winning card of the (partial) trick, rules.md 1.2."""
    led = S[b, TRICK] >> 3
    best = 0
    best_s = _strength(S[b, TRICK], led, trump)
    for i in range(1, S[b, TRICK_LEN]):
        st = _strength(S[b, TRICK + i], led, trump)
        if st > best_s:
            best = i
            best_s = st
    return best


@jit
def _trumps_above(trumps, trump, order):
    out = 0
    base = 8 * trump
    for r in range(8):
        if (trumps >> (base + r)) & 1 and _TRUMP_ORDER[r] > order:
            out |= 1 << (base + r)
    return out


@jit
def _top_trump_order(S, b, trump):
    """Highest trump order among the trick's trumps, -1 when it holds none."""
    top = -1
    for i in range(S[b, TRICK_LEN]):
        c = S[b, TRICK + i]
        if c >> 3 == trump:
            o = _TRUMP_ORDER[c & 7]
            if o > top:
                top = o
    return top


@jit
def _first_hand(S, b, K):
    return (S[b, DEALER] + 1) % K[K_N]


@jit
def _seniority(S, b, K, seat):
    """``combos.seniority`` of the seat's claim as one int: ``key * 4 + (3 - trick1_pos)``."""
    n = K[K_N]
    pos = (seat - _first_hand(S, b, K) + n) % n
    return S[b, CLAIM_KEY + seat] * 4 + (3 - pos)


@jit
def _decl_hand(S, b, K, seat):
    if K[K_AUCTION] == AUCTION_OPEN:
        return S[b, HANDS + seat] & ~S[b, FACE_DOWN + seat]
    return S[b, HANDS + seat]


@jit
def _pend_push_front(S, b, kind, seat):
    np_ = S[b, NPEND]
    for i in range(np_, 0, -1):
        S[b, PEND_KIND + i] = S[b, PEND_KIND + i - 1]
        S[b, PEND_SEAT + i] = S[b, PEND_SEAT + i - 1]
    S[b, PEND_KIND] = kind
    S[b, PEND_SEAT] = seat
    S[b, NPEND] = np_ + 1


@jit
def _pend_pop(S, b):
    np_ = S[b, NPEND]
    for i in range(np_ - 1):
        S[b, PEND_KIND + i] = S[b, PEND_KIND + i + 1]
        S[b, PEND_SEAT + i] = S[b, PEND_SEAT + i + 1]
    S[b, PEND_KIND + np_ - 1] = -1
    S[b, PEND_SEAT + np_ - 1] = -1
    S[b, NPEND] = np_ - 1


@jit
def _add_event(S, b, seat, step, top):
    i = S[b, NEV]
    S[b, EV_SEAT + i] = seat
    S[b, EV_STEP + i] = step
    S[b, EV_TOP + i] = top
    S[b, NEV] = i + 1


# ---------------------------------------------------------------------------- deal
@jit
def reset_row(S, b):
    """Set row ``b`` to ``convert.empty_row()``: every field at its "nothing yet" value."""
    for i in range(ROW):
        S[b, i] = 0
    for i in range(MAXSTOCK):
        S[b, STOCK + i] = -1
    for i in range(MAXN):
        S[b, TRICK + i] = -1
        S[b, LAST_CALL + i] = -1
        S[b, ANNOUNCED + i] = -1
        S[b, CLAIM_CLS + i] = -1
        S[b, CLAIM_KEY + i] = -1
        S[b, CLAIM_SUIT + i] = -1
        S[b, CLAIM_TOP + i] = -1
        S[b, DECIDED + i] = -1
        S[b, ANN_ORDER + i] = -1
        S[b, AUTO_KEY + i] = -1
    for i in range(MAXPLAYS):
        S[b, PLAY_CARD + i] = -1
        S[b, PLAY_SEAT + i] = -1
    for i in range(MAXPEND):
        S[b, PEND_KIND + i] = -1
        S[b, PEND_SEAT + i] = -1
    for i in range(MAXEV):
        S[b, EV_SEAT + i] = -1
        S[b, EV_STEP + i] = -1
        S[b, EV_TOP + i] = -1
    for i in range(2 * 16):
        S[b, PILES + i] = -1
    for i in range(MAXCALLS):
        S[b, CALLS + i] = -1
    S[b, HIGH_SEAT] = -1
    S[b, HIGH_CALL] = -1
    S[b, C_SEAT] = -1
    S[b, C_STRAIN] = -1
    S[b, C_KIND] = -1
    S[b, C_CALL] = -1
    S[b, DLEADER] = -1


@jit
def deal_row(S, b, K, dealer, cards):
    """Start a deal in row ``b`` (``engine.deal_random`` after its shuffle; rules.md 2.1, 3, 4, 5.1, 6).

    Args:
        S: ``int64[B, ROW]`` batch; row ``b`` is overwritten.
        K: ``int64[NK]`` knobs.
        dealer: the dealer seat.
        cards: ``int64[deck]`` shuffled deck: seat ``s`` gets ``cards[s*k:(s+1)*k]`` (``k`` the hand
            size; Open Blot: bottom, top of piles 1..8), the rest is the stock in draw order.
    """
    reset_row(S, b)
    n = K[K_N]
    k = K[K_HAND]
    S[b, DEALER] = dealer
    S[b, SEAT] = (dealer + 1) % n
    for s in range(n):
        m = 0
        for j in range(k):
            m |= 1 << cards[s * k + j]
        S[b, HANDS + s] = m
        S[b, START_HANDS + s] = m
    ns = cards.shape[0] - n * k
    for i in range(ns):
        S[b, STOCK + i] = cards[n * k + i]
    S[b, NSTOCK] = ns
    if K[K_KAPUT] == KAPUT_RAISABLE:  # Ach of each seat per strain (rules.md 2.2), fixed for the auction
        for s in range(n):
            for st in range(K[K_NSTRAINS]):
                S[b, ACH + 5 * s + st] = achievable_plus(S[b, HANDS + s], st, K[K_LONG_RUN], K[K_CARRE])
    if K[K_AUCTION] == AUCTION_OPEN:
        S[b, HAS_PILES] = 1
        for s in range(n):
            fd = 0
            ul = 0
            for j in range(k):
                c = cards[s * k + j]
                S[b, PILES + 16 * s + j] = c
                if j % 2 == 0:
                    fd |= 1 << c
                elif j >= 9:  # tops of piles 5..8 (variants.OPEN_FIRST_TOPS = 4)
                    ul |= 1 << c
            S[b, FACE_DOWN + s] = fd
            S[b, UNLAID + s] = ul


# ---------------------------------------------------------------------------- seat, legality
@jit
def current_seat(S, b, K):
    """Seat to act in row ``b``, or -1 when the deal is over (``engine.current_seat``)."""
    ph = S[b, PHASE]
    if ph == PHASE_AUCTION:
        return S[b, SEAT]
    if ph == PHASE_PLAY:
        if S[b, NPEND] > 0:
            return S[b, PEND_SEAT]
        return (S[b, LEADER] + S[b, TRICK_LEN]) % K[K_N]
    return -1


@jit
def legal_cards_row(S, b, K):
    """Bitmask of the cards the seat to play may play (``play.legal_cards``, rules.md 1.3)."""
    n = K[K_N]
    me = (S[b, LEADER] + S[b, TRICK_LEN]) % n
    hand = S[b, HANDS + me]
    if S[b, HAS_PILES]:
        hand &= ~S[b, FACE_DOWN + me]
    tl = S[b, TRICK_LEN]
    if tl == 0:
        return hand
    trump = S[b, C_STRAIN]
    led = S[b, TRICK] >> 3
    follow = hand & (0xFF << (8 * led))
    if follow:
        if trump != NT and led == trump:
            over = _trumps_above(follow, trump, _top_trump_order(S, b, trump))
            if over:
                return over
            return follow
        return follow
    if trump == NT:
        return hand
    trumps = hand & (0xFF << (8 * trump))
    if not trumps:
        return hand
    if K[K_PARTNER_EX]:
        ws = (S[b, LEADER] + _trick_winner_index(S, b, trump)) % n
        if ws != me and (ws - me) % 2 == 0:
            return hand
    top = _top_trump_order(S, b, trump)
    if top >= 0:
        over = _trumps_above(trumps, trump, top)
        if over:
            return over
        if K[K_UNDERTRUMP] == UNDERTRUMP_FREE:
            return hand
        return trumps
    return trumps


@jit
def _kp_pos(n):
    """Position of kaput+N in ``ActionLayout.kaput_plus_values`` (2, 4, 5, 6, ...)."""
    if n == 2:
        return 0
    return n - 3


@jit
def _bid_floor(S, b, K):
    if S[b, HIGH_SEAT] >= 0:
        return S[b, HIGH_VALUE] + 1
    return K[K_BID_MIN]


@jit
def _forced_take(S, b, K):
    """Duel round 1: a turned jack passed by the non-dealer forces the dealer (RES-23)."""
    return (K[K_JACK_FORCES] != 0 and S[b, ROUND] == 0 and S[b, SEAT] == S[b, DEALER]
            and (S[b, STOCK] & 7) == RJ)


@jit
def legal_mask_row(S, b, K, block, p0, p1, bstart, out):
    """Fill ``out`` (``int8[A]``) with the legal mask of row ``b`` (``engine.legal_mask``).

    Auctions rules.md 2.2 / 3-6, declaration steps 2.4.3, cards 1.3; all zero when the deal is over.
    """
    A = K[K_NUM_ACTIONS]
    for a in range(A):
        out[a] = 0
    ph = S[b, PHASE]
    auc = K[K_AUCTION]
    if ph == PHASE_AUCTION:
        p = S[b, SEAT]
        if auc in (AUCTION_DUEL, AUCTION_OPEN):
            dealer_turn = p == S[b, DEALER]
            rnd = S[b, ROUND]
            if auc == AUCTION_DUEL:
                if rnd == 0:
                    out[bstart[B_TAKE]] = 1
                    if not _forced_take(S, b, K):
                        out[bstart[B_PASS]] = 1
                    return
                u_suit = S[b, STOCK] >> 3
                a = bstart[B_NAME]
                while a < A and block[a] == B_NAME:
                    if p0[a] != u_suit:
                        out[a] = 1
                    a += 1
            else:
                a = bstart[B_NAME]
                while a < A and block[a] == B_NAME:
                    out[a] = 1
                    a += 1
            if not (rnd == 1 and dealer_turn):
                out[bstart[B_PASS]] = 1
            return
        out[bstart[B_PASS]] = 1
        dbl = S[b, DOUBLE]
        hs = S[b, HIGH_SEAT]
        if dbl == DOUBLE_CONTRA:
            if hs % 2 == p % 2:
                out[bstart[B_RECONTRA]] = 1
            return
        if dbl:
            return
        has_high = hs >= 0
        if has_high and hs % 2 != p % 2:
            out[bstart[B_CONTRA]] = 1
        nstr = K[K_NSTRAINS]
        if not S[b, KAPUT_SEEN]:
            lo = _bid_floor(S, b, K)
            bmin = K[K_BID_MIN]
            step = K[K_BID_STEP]
            nvals = (K[K_BID_MAX] - bmin) // step + 1
            idx = 0
            if lo > bmin:
                idx = (lo - bmin + step - 1) // step
            for a in range(bstart[B_BID] + idx * nstr, bstart[B_BID] + nvals * nstr):
                out[a] = 1
            if K[K_KAPUT] != KAPUT_NONE and (not has_high or S[b, HIGH_VALUE] < KAPUT_VALUE):
                for a in range(bstart[B_KAPUT], bstart[B_KAPUT] + nstr):
                    out[a] = 1
        if K[K_KAPUT] == KAPUT_RAISABLE:
            nmax = K[K_BID_MAX] - KAPUT_VALUE
            nlo = 2
            if has_high and S[b, HIGH_VALUE] - KAPUT_VALUE + 1 > nlo:
                nlo = S[b, HIGH_VALUE] - KAPUT_VALUE + 1
            for s in range(nstr):
                ach = S[b, ACH + 5 * p + s] >> nlo  # cached at the deal (deal_row)
                nn = nlo
                while ach and nn <= nmax:
                    if ach & 1 and nn != 3:
                        out[bstart[B_KAPUT_PLUS] + _kp_pos(nn) * nstr + s] = 1
                    ach >>= 1
                    nn += 1
        return
    if ph != PHASE_PLAY:
        return
    if S[b, NPEND] > 0:
        kind = S[b, PEND_KIND]
        seat = S[b, PEND_SEAT]
        if kind == STEP_ANNOUNCE:
            cls = 1 | classes_held(_decl_hand(S, b, K, seat), S[b, C_STRAIN], K[K_LONG_RUN], K[K_CARRE])
            for c in range(5):
                if (cls >> c) & 1:
                    out[bstart[B_ANNOUNCE] + c] = 1
        elif kind == STEP_HEIGHT:
            out[bstart[B_HEIGHT]] = 1
            if S[b, CLAIM_CLS + seat] != CLS_CARRE and S[b, CLAIM_SUIT + seat] == S[b, C_STRAIN]:
                out[bstart[B_HEIGHT_TRUMP]] = 1
        elif kind == STEP_ANSWER:
            out[bstart[B_CONCEDE]] = 1
            out[bstart[B_REVEAL]] = 1
        else:
            out[bstart[B_SHOW]] = 1
            out[bstart[B_NOSHOW]] = 1
        return
    m = legal_cards_row(S, b, K)
    base = bstart[B_PLAY]
    for c in range(32):
        if (m >> c) & 1:
            out[base + c] = 1


@jit
def is_legal(S, b, K, block, p0, p1, bstart, a):
    """True when action id ``a`` is legal in row ``b`` (the same rules as :func:`legal_mask_row`)."""
    if a < 0 or a >= K[K_NUM_ACTIONS]:
        return False
    ph = S[b, PHASE]
    blk = block[a]
    auc = K[K_AUCTION]
    if ph == PHASE_AUCTION:
        p = S[b, SEAT]
        if auc in (AUCTION_DUEL, AUCTION_OPEN):
            rnd = S[b, ROUND]
            if auc == AUCTION_DUEL and rnd == 0:
                if blk == B_TAKE:
                    return True
                return blk == B_PASS and not _forced_take(S, b, K)
            if blk == B_PASS:
                return not (rnd == 1 and p == S[b, DEALER])
            if blk == B_NAME:
                return auc == AUCTION_OPEN or p0[a] != (S[b, STOCK] >> 3)
            return False
        if blk == B_PASS:
            return True
        dbl = S[b, DOUBLE]
        hs = S[b, HIGH_SEAT]
        if dbl == DOUBLE_CONTRA:
            return blk == B_RECONTRA and hs % 2 == p % 2
        if dbl:
            return False
        has_high = hs >= 0
        if blk == B_CONTRA:
            return has_high and hs % 2 != p % 2
        if blk == B_BID:
            return not S[b, KAPUT_SEEN] and p0[a] >= _bid_floor(S, b, K)
        if blk == B_KAPUT:
            return not S[b, KAPUT_SEEN] and (not has_high or S[b, HIGH_VALUE] < KAPUT_VALUE)
        if blk == B_KAPUT_PLUS:
            nn = p0[a]
            v = KAPUT_VALUE + nn
            if v > K[K_BID_MAX] or (has_high and v <= S[b, HIGH_VALUE]):
                return False
            return ((S[b, ACH + 5 * p + p1[a]] >> nn) & 1) != 0
        return False
    if ph != PHASE_PLAY:
        return False
    if S[b, NPEND] > 0:
        kind = S[b, PEND_KIND]
        seat = S[b, PEND_SEAT]
        if kind == STEP_ANNOUNCE:
            if blk != B_ANNOUNCE:
                return False
            c = p0[a]
            if c == 0:
                return True
            cls = classes_held(_decl_hand(S, b, K, seat), S[b, C_STRAIN], K[K_LONG_RUN], K[K_CARRE])
            return ((cls >> c) & 1) != 0
        if kind == STEP_HEIGHT:
            if blk == B_HEIGHT:
                return True
            return (blk == B_HEIGHT_TRUMP and S[b, CLAIM_CLS + seat] != CLS_CARRE
                    and S[b, CLAIM_SUIT + seat] == S[b, C_STRAIN])
        if kind == STEP_ANSWER:
            return blk in (B_CONCEDE, B_REVEAL)
        return blk in (B_SHOW, B_NOSHOW)
    if blk != B_PLAY:
        return False
    return ((legal_cards_row(S, b, K) >> p0[a]) & 1) != 0


# ---------------------------------------------------------------------------- transitions
@jit
def _begin_turn(S, b, K):
    """``engine._begin_turn`` / ``declarations.steps_for_turn`` (rules.md 2.4.3, 5.7.6)."""
    mode = K[K_DECL]
    if not S[b, HAS_DECL] or mode == DECL_AUTO:
        return
    n = K[K_N]
    seat = current_seat(S, b, K)
    t = S[b, TRICK_NO]
    if t == 0:
        if S[b, ANNOUNCED + seat] == -1:
            _pend_push_front(S, b, STEP_ANNOUNCE, seat)
        return
    if mode != DECL_MANUAL or t > 2 or S[b, DECIDED + seat] != -1 or S[b, RIGHTS + seat] == RIGHT_NONE:
        return
    if S[b, RIGHTS + seat] == RIGHT_PASS_ON:
        lead_team = S[b, DLEADER] % 2
        mine = _seniority(S, b, K, seat)
        for s in range(n):
            if s % 2 == lead_team and S[b, DECIDED + s] == 1 and not mine > _seniority(S, b, K, s):
                S[b, RIGHTS + seat] = RIGHT_NONE
                return
    _pend_push_front(S, b, STEP_SHOW, seat)


@jit
def _fix_leader(S, b, K):
    """End of trick 1 (``declarations.fix_leader``): the leader and the leading pair's rights."""
    if not S[b, HAS_DECL] or K[K_DECL] != DECL_MANUAL:
        return
    n = K[K_N]
    best = -1
    best_key = 0
    for s in range(n):
        if S[b, ANNOUNCED + s] > 0 and not S[b, CONCEDED + s]:
            k = _seniority(S, b, K, s)
            if best < 0 or k > best_key:
                best = s
                best_key = k
    if best < 0:
        return
    S[b, DLEADER] = best
    for s in range(n):
        if S[b, ANNOUNCED + s] > 0 and not S[b, CONCEDED + s] and s % 2 == best % 2:
            S[b, RIGHTS + s] = RIGHT_LEADING_PAIR


@jit
def _start_play(S, b, K, block, p0, p1, bstart):
    """``engine._start_play``: the duel draw / Open Blot's last tops, then trick 1 (rules.md 2.3, 5.1, 5.7.1)."""
    n = K[K_N]
    auc = K[K_AUCTION]
    if auc == AUCTION_DUEL:
        cs = S[b, C_SEAT]
        keep = S[b, C_KIND] == KIND_TAKE or p1[S[b, C_CALL]] != 0
        lo = 0 if keep else 1
        t = 0
        o = 0
        for i in range(3):
            t |= 1 << S[b, STOCK + lo + i]
            o |= 1 << S[b, STOCK + lo + 3 + i]
        S[b, HANDS + cs] |= t
        S[b, HANDS + 1 - cs] |= o
    elif S[b, HAS_PILES]:
        for s in range(n):
            S[b, UNLAID + s] = 0
    S[b, PHASE] = PHASE_PLAY
    S[b, NCALLS] = S[b, NHIST]
    S[b, LEADER] = (S[b, DEALER] + 1) % n
    S[b, TRICK_NO] = 0
    S[b, TRICK_LEN] = 0
    for s in range(n):
        S[b, PLAY_HANDS + s] = S[b, HANDS + s]
        S[b, TRICKS + s] = 0
        S[b, POINTS + s] = 0
    S[b, HAS_DECL] = 1
    if K[K_DECL] == DECL_AUTO:
        strain = S[b, C_STRAIN]
        for s in range(n):
            m, v, tk, _ = best_set(S[b, PLAY_HANDS + s], strain, K[K_LONG_RUN], K[K_CARRE], CLS_CARRE, 0)
            S[b, AUTO_MASK + s] = m
            S[b, AUTO_VALUE + s] = v
            S[b, AUTO_KEY + s] = tk
    _begin_turn(S, b, K)


@jit
def _apply_auction(S, b, K, block, p0, p1, bstart, a):
    """``auction.apply_call`` + ``contract_of`` (rules.md 2.2, 3-6); ends in _start_play or DONE."""
    n = K[K_N]
    p = S[b, SEAT]
    blk = block[a]
    auc = K[K_AUCTION]
    i = S[b, NCALLS]
    if i < MAXCALLS:
        S[b, CALLS + i] = a
    S[b, NCALLS] = i + 1
    S[b, LAST_CALL + p] = a
    S[b, NHIST] += 1
    end = 0  # 1 contract, 2 passed out
    if auc in (AUCTION_DUEL, AUCTION_OPEN):
        if blk != B_PASS:
            end = 1
            S[b, HIGH_SEAT] = p
            S[b, HIGH_CALL] = a
            S[b, PASSES] = 0
        else:
            S[b, PASSES] += 1
            if p == S[b, DEALER]:
                S[b, ROUND] = 1
                S[b, PASSES] = 0
                if S[b, HAS_PILES]:
                    for s in range(n):
                        S[b, UNLAID + s] = 0
    elif blk == B_PASS:
        passes = S[b, PASSES] + 1
        S[b, PASSES] = passes
        if S[b, DOUBLE] == DOUBLE_CONTRA:
            if passes >= K[K_CONTRA_END]:
                end = 1
        elif S[b, HIGH_SEAT] >= 0:
            if passes >= K[K_END_PASSES]:
                end = 1
        elif passes >= n:
            end = 2
    elif blk == B_CONTRA:
        S[b, DOUBLE] = DOUBLE_CONTRA
        S[b, PASSES] = 0
    elif blk == B_RECONTRA:
        S[b, DOUBLE] = DOUBLE_RECONTRA
        S[b, PASSES] = 0
        end = 1
    else:
        if blk == B_BID:
            v = p0[a]
        elif blk == B_KAPUT:
            v = KAPUT_VALUE
            S[b, KAPUT_SEEN] = 1
        else:
            v = KAPUT_VALUE + p0[a]
            S[b, KAPUT_SEEN] = 1
        S[b, HIGH_VALUE] = v
        S[b, HIGH_SEAT] = p
        S[b, HIGH_CALL] = a
        S[b, PASSES] = 0
    S[b, SEAT] = (p + 1) % n
    if end == 2:
        S[b, PHASE] = PHASE_DONE
        return
    if end == 0:
        return
    hc = S[b, HIGH_CALL]
    hb = block[hc]
    S[b, C_SEAT] = S[b, HIGH_SEAT]
    S[b, C_CALL] = hc
    if hb in (B_TAKE, B_NAME):
        if hb == B_TAKE:
            S[b, C_KIND] = KIND_TAKE
            S[b, C_STRAIN] = S[b, STOCK] >> 3
        else:
            S[b, C_KIND] = KIND_NAME
            S[b, C_STRAIN] = p0[hc]
        S[b, C_VALUE] = 0
        S[b, C_PLUS] = 0
        S[b, C_DOUBLE] = 0
    else:
        if hb == B_BID:
            S[b, C_KIND] = KIND_NUM
            S[b, C_STRAIN] = p1[hc]
            S[b, C_PLUS] = 0
        elif hb == B_KAPUT:
            S[b, C_KIND] = KIND_KAPUT
            S[b, C_STRAIN] = p0[hc]
            S[b, C_PLUS] = 0
        else:
            S[b, C_KIND] = KIND_KAPUT_PLUS
            S[b, C_STRAIN] = p1[hc]
            S[b, C_PLUS] = p0[hc]
        S[b, C_VALUE] = S[b, HIGH_VALUE]
        S[b, C_DOUBLE] = S[b, DOUBLE]
    _start_play(S, b, K, block, p0, p1, bstart)


@jit
def _apply_step(S, b, K, block, p0, a):
    """``declarations.apply_step``: one announce / height / answer / show decision (rules.md 2.4.3)."""
    n = K[K_N]
    kind = S[b, PEND_KIND]
    seat = S[b, PEND_SEAT]
    blk = block[a]
    S[b, NHIST] += 1
    _pend_pop(S, b)
    if kind == STEP_ANNOUNCE:
        cls = p0[a]
        earlier = False
        if cls > 0 and K[K_DECL] == DECL_MANUAL:
            for i in range(S[b, NANN]):
                q = S[b, ANN_ORDER + i]
                if q % 2 != seat % 2 and S[b, ANNOUNCED + q] == cls:
                    earlier = True
        S[b, ANNOUNCED + seat] = cls
        S[b, ANN_ORDER + S[b, NANN]] = seat
        S[b, NANN] += 1
        if cls > 0:
            hand = _decl_hand(S, b, K, seat)
            strain = S[b, C_STRAIN]
            _, value, mask, key, suit, top = best_of_class(hand, strain, cls, K[K_LONG_RUN], K[K_CARRE])
            S[b, CLAIM_CLS + seat] = cls
            S[b, CLAIM_VALUE + seat] = value
            S[b, CLAIM_MASK + seat] = mask
            S[b, CLAIM_KEY + seat] = key
            S[b, CLAIM_SUIT + seat] = suit
            S[b, CLAIM_TOP + seat] = top
            m, v, _, cnt = best_set(hand, strain, K[K_LONG_RUN], K[K_CARRE], cls, mask)
            S[b, SHOW_MASK + seat] = m
            S[b, SHOW_VALUE + seat] = v
            S[b, SHOW_N + seat] = cnt
            if earlier:
                _pend_push_front(S, b, STEP_HEIGHT, seat)
        return
    if kind == STEP_HEIGHT:
        _add_event(S, b, seat, EVENT_HEIGHT_TRUMP if blk == B_HEIGHT_TRUMP else EVENT_HEIGHT, S[b, CLAIM_TOP + seat])
        # answers in announce order go in front of the rest: push them in reverse
        for i in range(S[b, NANN] - 1, -1, -1):
            q = S[b, ANN_ORDER + i]
            if q % 2 != seat % 2 and S[b, ANNOUNCED + q] == S[b, ANNOUNCED + seat] and not S[b, CONCEDED + q]:
                _pend_push_front(S, b, STEP_ANSWER, q)
        return
    if kind == STEP_ANSWER:
        if blk == B_CONCEDE:
            S[b, CONCEDED + seat] = 1
            _add_event(S, b, seat, EVENT_CONCEDE, -1)
        else:
            _add_event(S, b, seat, EVENT_REVEAL, S[b, CLAIM_TOP + seat])
        return
    show = blk == B_SHOW
    old_right = S[b, RIGHTS + seat]
    S[b, DECIDED + seat] = 1 if show else 0
    if not show and seat == S[b, DLEADER]:
        for q in range(n):
            if q % 2 != seat % 2 and S[b, ANNOUNCED + q] > 0 and S[b, DECIDED + q] == -1:
                S[b, RIGHTS + q] = RIGHT_PASS_ON
    if show and (old_right in (RIGHT_PASS_ON, RIGHT_PARTNER)) and n == 4:
        partner = (seat + 2) % 4
        if S[b, ANNOUNCED + partner] > 0 and S[b, DECIDED + partner] == -1:
            S[b, RIGHTS + partner] = RIGHT_PARTNER


@jit
def _play_card(S, b, K, card):
    """``engine._play_card``: the card, Open Blot uncovering, the trick's end (rules.md 1.2, 2.3, 5.7.7)."""
    n = K[K_N]
    me = current_seat(S, b, K)
    S[b, NHIST] += 1
    S[b, HANDS + me] &= ~(1 << card)
    tl = S[b, TRICK_LEN]
    S[b, TRICK + tl] = card
    tl += 1
    S[b, TRICK_LEN] = tl
    npl = S[b, NPLAYS]
    S[b, PLAY_CARD + npl] = card
    S[b, PLAY_SEAT + npl] = me
    S[b, NPLAYS] = npl + 1
    S[b, PLAYED + me] |= 1 << card
    if S[b, HAS_PILES]:
        for i in range(16):
            if S[b, PILES + 16 * me + i] == card:
                if i % 2 == 1:
                    S[b, FACE_DOWN + me] &= ~(1 << S[b, PILES + 16 * me + i - 1])
                break
    if tl < n:
        _begin_turn(S, b, K)
        return
    strain = S[b, C_STRAIN]
    w = (S[b, LEADER] + _trick_winner_index(S, b, strain)) % n
    pts = 0
    for i in range(n):
        pts += _card_points(S[b, TRICK + i], strain)
    t = S[b, TRICK_NO]
    last = t == K[K_TRICKS] - 1
    if last:
        pts += LAST_TRICK_BONUS
    S[b, TRICKS + w] += 1
    S[b, POINTS + w] += pts
    kind = S[b, C_KIND]
    broken = S[b, KAPUT_BROKEN] != 0 or ((kind in (KIND_KAPUT, KIND_KAPUT_PLUS))
                                         and w % 2 != S[b, C_SEAT] % 2)
    for i in range(n):
        S[b, TRICK + i] = -1
    S[b, TRICK_LEN] = 0
    S[b, LEADER] = w
    S[b, KAPUT_BROKEN] = 1 if broken else 0
    if t == 0:
        _fix_leader(S, b, K)
    S[b, TRICK_NO] = t + 1
    if last or (broken and t >= 1):
        S[b, PHASE] = PHASE_DONE
        for i in range(S[b, NPEND]):
            S[b, PEND_KIND + i] = -1
            S[b, PEND_SEAT + i] = -1
        S[b, NPEND] = 0
        return
    _begin_turn(S, b, K)


@jit
def apply_row(S, b, K, block, p0, p1, bstart, a):
    """Apply action id ``a`` to row ``b`` in place (``engine.apply_action``).

    Returns 0 on success, or a negative code (``ERR_DONE`` the deal is over, ``ERR_RANGE`` an id
    outside ``0..A-1``, ``ERR_ILLEGAL`` not legal now) and then leaves the row untouched.
    """
    ph = S[b, PHASE]
    if ph == PHASE_DONE:
        return ERR_DONE
    if a < 0 or a >= K[K_NUM_ACTIONS]:
        return ERR_RANGE
    if not is_legal(S, b, K, block, p0, p1, bstart, a):
        return ERR_ILLEGAL
    apply_legal(S, b, K, block, p0, p1, bstart, a)
    return 0


@jit
def apply_legal(S, b, K, block, p0, p1, bstart, a):
    """:func:`apply_row` without the checks, for an action known to be legal (the batched
    engine checks every row against its legal mask first). An illegal ``a`` corrupts the row."""
    if S[b, PHASE] == PHASE_AUCTION:
        _apply_auction(S, b, K, block, p0, p1, bstart, a)
    elif S[b, NPEND] > 0:
        _apply_step(S, b, K, block, p0, a)
    else:
        _play_card(S, b, K, p0[a])
