"""Numba kernel of the double-dummy solver: alpha-beta over card play with a transposition table.

The kernel knows nothing about contracts or scoring. It returns, for a position with every
hand known, the minimax value of the **outcome code** of team 0 (seats 0/2; 2 players: seat 0)

    V = 3 * (raw card points team 0 wins from here on, last-trick 10 included) + c

where ``c`` is decided at the end of the deal: 2 if team 1 took no trick in the whole deal
(team 0 capot), 0 if team 0 took none (team 1 capot), 1 otherwise, and 1 after an early
kaput stop (rules.md 2.3). Team 0 maximizes V, team 1 minimizes it. ``solver.py`` adds the
points already won and maps the code to the deal score with a monotone table, which is why a
minimax over this code is the minimax over the score (see docs/search.md).

Why the kernel has its own move generation and trick resolution: a solve visits millions of
nodes, each a make/unmake of one card on bare masks in preallocated arrays. The engine's
``play.legal_cards`` and trick winner work on an immutable ``State`` in Python (about a
thousand times slower per node), and the batched engine's ``_core.legal_cards_row`` on a whole
deal row that would have to be copied and restored at every node (and is private to
``blot_env.batched``). So :func:`legal_mask` and :func:`_trick_result` mirror the rules' home,
``blot_env.play.legal_cards`` (rules.md 1.3: follow suit, overtrump, the partner exemption,
undertrump) and ``blot_env.cards.trick_winner_index`` / ``card_points`` (rules.md 1.1-1.2),
reading the same tables (``cards.TRUMP_ORDER``, ``PLAIN_ORDER``, ``SUIT_MASKS``, ``NT``,
``LAST_TRICK_BONUS``, via ``solver._tables``). ``tests/test_solver.py::
test_kernel_moves_and_tricks_match_the_engine`` ties them to the engine on every position of
random deals of every preset; the deal score is not computed here at all (``solver.leaf_scores``
applies ``blot_env.scoring.score_outcome``).

Hands are 32-bit card masks (card = suit * 8 + rank, rules.md 1.1). Open Blot piles are
handled by ``under``: the bit of the card lying under each card (0 if none); ``covered``
holds the cards still under a pile top (unplayable).

Arrays (all int64 unless noted):

* ``H[4]`` remaining cards per seat, ``CV[4]`` covered cards per seat, ``UNDER[32]``;
* ``TR[4]`` cards of the trick in progress, ``ST[32]``: 0 leader, 1 cards in the trick,
  2 index of the trick being played (0-based), 3 won flags (bit 0 team 0 has won a trick in
  this deal, bit 1 team 1), 4 node counter, 5 TT generation (1..1023, kept in bits 40-49
  of the entry's value word), 6 cutoffs and 7 the sum of the move numbers that cut
  (ordering diagnostics), 8 raw points of the cards still held, 9 nodes at a trick
  boundary given the cheap bounds, 10 and 11 of those cut by the lower and by the upper
  bound, 12 table entries found, 13 of those that ended the node, 14 null-window searches
  of :func:`root_levels`, 16 + t nodes visited in trick t;
* ``P[9]``: 0 players (2 or 4, so seats wrap with ``& (n - 1)``), 1 strain (0..3, 4 = no
  trump), 2 partner exemption (4 players), 3 undertrump free, 4 tricks in the deal,
  5 kaput-defending team (-1: not a kaput contract), 6 TT bits, 7 1 to search the
  second-to-last trick with the general search instead of ``_endgame2`` (for tests), 8 1
  to key the table on the zero-point cards' owners rather than the cards (:func:`_key`;
  0 with Open Blot piles);
* ``PTS[32]`` card points, ``TSTR[32]`` trick strength as a trump (0 if not a trump),
  ``PSTR[32]`` strength in its own suit when led, ``DESC[2, 8]`` ranks by strength
  (row 0 plain order, row 1 trump order), ``ABOVE[8]`` trump-rank masks above an order;
* ``MV``/``SC[plies, 16]`` move and ordering-score buffers, ``SV[plies, 10]`` undo records;
  ``TT[size, 2]`` the transposition table (see ``solver._TT``); ``FR[11, plies]`` the
  search's per-ply frames (rows: alpha, beta, the entry alpha and beta, best value, best
  card, move index, move count, points gained by the move, table key, table slot).
  ``plies`` is ``solver.MAX_PLIES`` (a 16-trick Open Blot deal has 32 plies).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blot_env.cards import LAST_TRICK_BONUS, NT, SUIT_MASKS, TRUMP_ORDER

#: No NRT: the kernel allocates nothing, and with NRT on, numba wraps every array handed to
#: a helper in atomic reference-count updates, which took most of the solver's time. (The
#: batched engine's settings, ``blot_env.batched._jit``, add ``error_model="numpy"``; the
#: kernel keeps numba's default, which checks integer division, and defines its own so that
#: the agents package does not reach into the env's private modules.)
_jit = njit(cache=True, _nrt=False)
_jit_inline = njit(cache=True, _nrt=False, inline="always")

INF = 1 << 20
#: the capot code ``c`` of the outcome code: team 1 took every trick, neither side did (or an
#: early kaput stop), team 0 took every trick
CODE_SWEEP1, CODE_PLAIN, CODE_SWEEP0 = 0, 1, 2
#: trump ranks from the strongest down (J 9 A T K Q 8 7), from ``cards.TRUMP_ORDER``
TRUMP_RANKS_DESC = tuple(sorted(range(8), key=lambda r: -TRUMP_ORDER[r]))
#: above every outcome code (3 * 162 + 2); "no upper bound" in the table
VMAX = 1023
SUIT = np.array(SUIT_MASKS, dtype=np.int64)
#: index of a single set bit b (0..31) from b % 37 (37 is prime and 2^k mod 37 are distinct)
BITPOS = np.zeros(37, dtype=np.int64)
for _i in range(32):
    BITPOS[(1 << _i) % 37] = _i


@_jit_inline
def _strength(c, led, P, TSTR, PSTR):
    if P[1] != NT and (c >> 3) == P[1]:
        return TSTR[c]
    if (c >> 3) == led:
        return PSTR[c]
    return 0


@_jit_inline
def legal_mask(hand, TR, tlen, leader, seat, P, TSTR, PSTR, ABOVE):
    """Legal cards of ``seat`` holding ``hand`` (playable cards), rules.md 1.3."""
    if tlen == 0:
        return hand
    trump = P[1]
    led = TR[0] >> 3
    follow = hand & SUIT[led]
    if follow != 0:
        if trump != NT and led == trump:
            top = 0
            for i in range(tlen):
                if (TR[i] >> 3) == trump and TSTR[TR[i]] > top:
                    top = TSTR[TR[i]]
            over = follow & (ABOVE[top - 16] << (8 * trump))
            if over != 0:
                return over
        return follow
    if trump == NT:
        return hand
    trumps = hand & SUIT[trump]
    if trumps == 0:
        return hand
    n = P[0]
    w = 0
    ws = _strength(TR[0], led, P, TSTR, PSTR)
    top = 0
    for i in range(tlen):
        s = _strength(TR[i], led, P, TSTR, PSTR)
        if s > ws:
            ws = s
            w = i
        if (TR[i] >> 3) == trump and TSTR[TR[i]] > top:
            top = TSTR[TR[i]]
    wseat = (leader + w) & (n - 1)
    if P[2] == 1 and (wseat - seat) % 2 == 0:
        return hand
    if top > 0:
        over = trumps & (ABOVE[top - 16] << (8 * trump))
        if over != 0:
            return over
        if P[3] == 1:
            return hand
        return trumps
    return trumps


@_jit_inline
def _gen_moves(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, ply, first):
    """Fill ``MV[ply]`` with the seat's moves, best-looking first; returns the count.

    Cards of one hand that are equivalent (same suit, same points, nothing still in play
    ranks between them, neither covers a face-down card) are generated once: playing either
    leads to the same outcomes. Cards of different points are never merged.
    """
    n = P[0]
    leader = ST[0]
    tlen = ST[1]
    seat = (leader + tlen) & (n - 1)
    hand = H[seat] & ~CV[seat]
    legal = legal_mask(hand, TR, tlen, leader, seat, P, TSTR, PSTR, ABOVE)
    present = 0
    for s in range(n):
        present |= H[s]
    for i in range(tlen):
        present |= 1 << TR[i]
    trump = P[1]
    # current winner of the trick
    led = -1
    ws = -1
    wteam = -1
    if tlen > 0:
        led = TR[0] >> 3
        w = 0
        ws = _strength(TR[0], led, P, TSTR, PSTR)
        for i in range(1, tlen):
            s = _strength(TR[i], led, P, TSTR, PSTR)
            if s > ws:
                ws = s
                w = i
        wteam = ((leader + w) & (n - 1)) % 2
    my_team = seat % 2
    last = tlen == n - 1
    cnt = 0
    scores = SC[ply]
    for su in range(4):
        if legal & SUIT[su] == 0:
            continue
        row = 1 if su == trump else 0
        prev_mine = False
        prev_pts = -1
        higher_out = False  # a card of this suit still held by another seat ranks above
        for k in range(8):
            c = su * 8 + DESC[row, k]
            b = 1 << c
            if present & b == 0:
                continue
            if legal & b != 0:
                p = PTS[c]
                if prev_mine and p == prev_pts and UNDER[c] == 0:
                    continue
                prev_mine = UNDER[c] == 0
                prev_pts = p
                # move-ordering score
                if tlen == 0:
                    if not higher_out:
                        sc = 60 + p
                    else:
                        sc = 20 - p
                else:
                    st = _strength(c, led, P, TSTR, PSTR)
                    if st > ws:
                        if wteam == my_team:
                            sc = 30 + p
                        elif last:
                            sc = 100 + p
                        else:
                            sc = 80 - p
                    elif wteam == my_team:
                        sc = 40 + p
                    else:
                        sc = 30 - p
                if c == first:
                    sc = 1000
                MV[ply, cnt] = c
                scores[cnt] = sc
                cnt += 1
            else:
                prev_mine = False
                if H[seat] & b == 0:
                    higher_out = True
    # insertion sort by score, descending
    for i in range(1, cnt):
        c = MV[ply, i]
        sc = scores[i]
        j = i - 1
        while j >= 0 and scores[j] < sc:
            scores[j + 1] = scores[j]
            MV[ply, j + 1] = MV[ply, j]
            j -= 1
        scores[j + 1] = sc
        MV[ply, j + 1] = c
    return cnt


@_jit_inline
def _tt_index(key, bits):
    h = key * 6364136223846793005
    return (h >> (64 - bits)) & ((1 << bits) - 1)


@_jit_inline
def _final_code(flags):
    """The capot code of a finished deal from its won flags (bit t: team t won a trick)."""
    if flags & 2 == 0:
        return CODE_SWEEP0
    if flags & 1 == 0:
        return CODE_SWEEP1
    return CODE_PLAIN


@_jit_inline
def _trick_result(TR, leader, P, PTS, TSTR, PSTR):
    """Winning seat and raw points (without the last-trick 10) of the complete trick ``TR``."""
    n = P[0]
    led = TR[0] >> 3
    w = 0
    ws = _strength(TR[0], led, P, TSTR, PSTR)
    pts = PTS[TR[0]]
    for j in range(1, n):
        s = _strength(TR[j], led, P, TSTR, PSTR)
        pts += PTS[TR[j]]
        if s > ws:
            ws = s
            w = j
    return (leader + w) & (n - 1), pts


@_jit_inline
def _do(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, c, SV, ply):
    """Play ``c`` for the seat to play. Returns ``(go_on, gain)``: ``go_on`` False when the
    deal is over (``gain`` then includes the final capot code). ``SV[ply]`` keeps what
    :func:`_undo` restores."""
    n = P[0]
    leader = ST[0]
    tlen = ST[1]
    flags = ST[3]
    seat = (leader + tlen) & (n - 1)
    H[seat] ^= 1 << c
    CV[seat] &= ~UNDER[c]
    ST[8] -= PTS[c]
    TR[tlen] = c
    SV[ply, 0] = leader
    SV[ply, 1] = tlen
    SV[ply, 2] = ST[2]
    SV[ply, 3] = flags
    SV[ply, 4] = seat
    if tlen + 1 < n:
        ST[1] = tlen + 1
        return True, 0
    wseat, pts = _trick_result(TR, leader, P, PTS, TSTR, PSTR)
    wteam = wseat % 2
    tno = ST[2]
    lastt = tno == P[4] - 1
    if lastt:
        pts += LAST_TRICK_BONUS
    gain = 3 * pts if wteam == 0 else 0
    nflags = flags | (1 << wteam)
    if lastt:
        return False, gain + _final_code(nflags)
    if P[5] >= 0 and (nflags >> P[5]) & 1 == 1 and tno >= 1:
        return False, gain + CODE_PLAIN  # early kaput stop (rules.md 2.3)
    for j in range(n):
        SV[ply, 5 + j] = TR[j]  # the next trick overwrites TR
    ST[0] = wseat
    ST[1] = 0
    ST[2] = tno + 1
    ST[3] = nflags
    return True, gain


@_jit_inline
def _undo(H, CV, UNDER, TR, ST, PTS, c, SV, ply):
    seat = SV[ply, 4]
    H[seat] ^= 1 << c
    ST[8] += PTS[c]
    CV[seat] |= UNDER[c]
    if ST[2] != SV[ply, 2]:
        for j in range(4):
            TR[j] = SV[ply, 5 + j]
    ST[0] = SV[ply, 0]
    ST[1] = SV[ply, 1]
    ST[2] = SV[ply, 2]
    ST[3] = SV[ply, 3]


@_jit_inline
def _key(H, ST, P, PTS, DESC):
    """Position key at a trick boundary (64 bits), the same for positions that differ only
    in which cards of no points remain.

    Card ownership is fixed within one solve, so the held cards of points give their hands
    (bits 0-31, the zero-point cards' bits cleared). In every suit the cards of no points rank
    below those with points (plain 9 8 7, trump 8 7, rules.md 1.1), so two positions whose
    zero-point cards of a suit are held by the same seats in the same order of strength play
    alike (map the i-th remaining one onto the i-th): the key holds, per suit, their owners
    in that order (base 5, 7 bits a suit: bits 36-63), the leader (bits 32-33) and the won
    flags (34-35). ``P[8] == 0`` (Open Blot piles, where a card may cover another) keeps
    the exact cards instead."""
    n = P[0]
    rem = 0
    for s in range(n):
        rem |= H[s]
    if P[8] == 0:
        return rem | (ST[0] << 32) | (ST[3] << 34)
    trump = P[1]
    z = 0
    for su in range(4):
        row = 1 if su == trump else 0
        e = 0
        mul = 1
        for k in range(5 + row, 8):
            c = su * 8 + DESC[row, k]
            if rem >> c & 1:
                owner = 0
                while (H[owner] >> c) & 1 == 0:
                    owner += 1
                e += (owner + 1) * mul
                mul *= 5
                rem ^= 1 << c
        z = (z << 7) | e
    return rem | (ST[0] << 32) | (ST[3] << 34) | (z << 36)


@_jit_inline
def _last_trick(H, TR, ST, P, PTS, TSTR, PSTR):
    """V of a position in the last trick: every remaining card is forced."""
    n = P[0]
    leader = ST[0]
    tlen = ST[1]
    for k in range(tlen, n):
        seat = (leader + k) & (n - 1)
        TR[k] = BITPOS[H[seat] % 37]
    wseat, pts = _trick_result(TR, leader, P, PTS, TSTR, PSTR)
    pts += LAST_TRICK_BONUS
    wteam = wseat % 2
    return (3 * pts if wteam == 0 else 0) + _final_code(ST[3] | (1 << wteam))


@_jit_inline
def _forced_last(H, leader, flags, P, PTS, TSTR, PSTR):
    """V of the last trick led by ``leader`` when every seat holds one card (``flags``: the
    won flags before it)."""
    n = P[0]
    c = BITPOS[H[leader] % 37]
    led = c >> 3
    ws = _strength(c, led, P, TSTR, PSTR)
    w = leader
    pts = PTS[c] + LAST_TRICK_BONUS
    for k in range(1, n):
        s = (leader + k) & (n - 1)
        c = BITPOS[H[s] % 37]
        pts += PTS[c]
        st = _strength(c, led, P, TSTR, PSTR)
        if st > ws:
            ws = st
            w = s
    wteam = w & 1
    return (3 * pts if wteam == 0 else 0) + _final_code(flags | (1 << wteam))


@_jit_inline
def _after_trick(H, TR, ST, P, PTS, TSTR, PSTR):
    """V once the second-to-last trick ``TR`` is complete: its points, then the early kaput
    stop (rules.md 2.3) or the forced last trick."""
    wseat, pts = _trick_result(TR, ST[0], P, PTS, TSTR, PSTR)
    wteam = wseat & 1
    gain = 3 * pts if wteam == 0 else 0
    nflags = ST[3] | (1 << wteam)
    if P[5] >= 0 and (nflags >> P[5]) & 1 == 1 and ST[2] >= 1:
        return gain + CODE_PLAIN
    return gain + _forced_last(H, wseat, nflags, P, PTS, TSTR, PSTR)


@_jit_inline
def _endgame2(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, ABOVE, alpha, beta):
    """Fail-soft alpha-beta value of V at the start of the second-to-last trick (every hand
    holds two cards): the trick's at most 2^n card orders in nested loops, the last trick
    being forced. Cheaper than the general search's nodes, move generation and table for
    these small trees. Counts as one node. Covered cards (``CV``) are updated for the first
    two plies only: piles exist only in 2-player Open Blot, where a trick has two cards."""
    n = P[0]
    leader = ST[0]
    s0 = leader
    s1 = (leader + 1) & (n - 1)
    s2 = (leader + 2) & (n - 1)
    s3 = (leader + 3) & (n - 1)
    x0 = s0 & 1 == 0
    x1 = s1 & 1 == 0
    x2 = s2 & 1 == 0
    x3 = s3 & 1 == 0
    a0 = alpha
    z0 = beta
    b0 = -INF if x0 else INF
    m0 = legal_mask(H[s0] & ~CV[s0], TR, 0, leader, s0, P, TSTR, PSTR, ABOVE)
    while m0 and a0 < z0:
        bit0 = m0 & -m0
        m0 ^= bit0
        c0 = BITPOS[bit0 % 37]
        TR[0] = c0
        H[s0] ^= bit0
        cv0 = CV[s0]
        CV[s0] &= ~UNDER[c0]
        a1 = a0
        z1 = z0
        b1 = -INF if x1 else INF
        m1 = legal_mask(H[s1] & ~CV[s1], TR, 1, leader, s1, P, TSTR, PSTR, ABOVE)
        while m1 and a1 < z1:
            bit1 = m1 & -m1
            m1 ^= bit1
            c1 = BITPOS[bit1 % 37]
            TR[1] = c1
            H[s1] ^= bit1
            cv1 = CV[s1]
            CV[s1] &= ~UNDER[c1]
            if n == 2:
                v1 = _after_trick(H, TR, ST, P, PTS, TSTR, PSTR)
            else:
                a2 = a1
                z2 = z1
                b2 = -INF if x2 else INF
                m2 = legal_mask(H[s2] & ~CV[s2], TR, 2, leader, s2, P, TSTR, PSTR, ABOVE)
                while m2 and a2 < z2:
                    bit2 = m2 & -m2
                    m2 ^= bit2
                    TR[2] = BITPOS[bit2 % 37]
                    H[s2] ^= bit2
                    a3 = a2
                    z3 = z2
                    b3 = -INF if x3 else INF
                    m3 = legal_mask(H[s3] & ~CV[s3], TR, 3, leader, s3, P, TSTR, PSTR, ABOVE)
                    while m3 and a3 < z3:
                        bit3 = m3 & -m3
                        m3 ^= bit3
                        TR[3] = BITPOS[bit3 % 37]
                        H[s3] ^= bit3
                        v = _after_trick(H, TR, ST, P, PTS, TSTR, PSTR)
                        H[s3] ^= bit3
                        if x3:
                            b3 = max(b3, v)
                            a3 = max(a3, v)
                        else:
                            b3 = min(b3, v)
                            z3 = min(z3, v)
                    H[s2] ^= bit2
                    if x2:
                        b2 = max(b2, b3)
                        a2 = max(a2, b3)
                    else:
                        b2 = min(b2, b3)
                        z2 = min(z2, b3)
                v1 = b2
            H[s1] ^= bit1
            CV[s1] = cv1
            if x1:
                b1 = max(b1, v1)
                a1 = max(a1, v1)
            else:
                b1 = min(b1, v1)
                z1 = min(z1, v1)
        H[s0] ^= bit0
        CV[s0] = cv0
        if x0:
            b0 = max(b0, b1)
            a0 = max(a0, b1)
        else:
            b0 = min(b0, b1)
            z0 = min(z0, b1)
    return b0


@_jit_inline
def _bounds(H, ST, P, PTS):
    """Cheap bounds ``(lo, hi)`` on V at a trick boundary.

    A trump that outranks every trump of the other side wins the trick it is played to, so
    its points are sure for its side (not used for the side to score after an early kaput
    stop, which may never come to play it).
    """
    n = P[0]
    trump = P[1]
    rem = 0
    t0 = 0
    t1 = 0
    for s in range(n):
        rem |= H[s]
        if s % 2 == 0:
            t0 |= H[s]
        else:
            t1 |= H[s]
    total = ST[8] + LAST_TRICK_BONUS
    sure0 = 0
    sure1 = 0
    n0 = 0
    n1 = 0
    if trump != NT:
        base = 8 * trump
        tr0 = (t0 >> base) & 0xFF
        tr1 = (t1 >> base) & 0xFF
        # a side's sure trumps: above every trump of the other side
        seen1 = False
        seen0 = False
        for k in range(8):
            rk = TRUMP_RANKS_DESC[k]
            if (tr1 >> rk) & 1:
                seen1 = True
            if (tr0 >> rk) & 1:
                seen0 = True
                if not seen1:
                    sure0 += PTS[base + rk]
                    n0 += 1
            if (tr1 >> rk) & 1 and not seen0:
                sure1 += PTS[base + rk]
                n1 += 1
    flags = ST[3]
    hi = 3 * (total - sure1) + (CODE_SWEEP0 if (flags & 2 == 0 and n1 == 0) else CODE_PLAIN)
    if P[5] >= 0:
        lo = 0
    else:
        lo = 3 * sure0 + (CODE_SWEEP1 if (flags & 1 == 0 and n0 == 0) else CODE_PLAIN)
    return lo, hi


@_jit
def search(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TT, FR, ply0,
           alpha0, beta0):
    """Fail-soft alpha-beta with a transposition table; returns V of the position.

    The arrays are described in the module docstring; ``ply0`` is the ply index of the
    position in the move, undo and frame buffers (0 at the root, 1 under
    :func:`child_value`), and ``alpha0``, ``beta0`` the window in outcome-code units.

    Iterative (an explicit stack of frames, one per ply) rather than recursive: numba's
    on-disk cache of recursive functions is not reliable, and compiling on every start
    would cost seconds.
    """
    n = P[0]
    gen = ST[5]
    # per-ply frame (rows of FR): alpha, beta, a0, b0, best, best card, move index, move
    # count, gain, key, tt index
    FA = FR[0]
    FB = FR[1]
    FA0 = FR[2]
    FB0 = FR[3]
    FBEST = FR[4]
    FBC = FR[5]
    FI = FR[6]
    FN = FR[7]
    FG = FR[8]
    FK = FR[9]
    FX = FR[10]
    ply = ply0
    alpha = alpha0
    beta = beta0
    entering = True
    ret = 0
    while True:
        if entering:
            # ---- enter the node at `ply` with window (alpha, beta)
            ST[4] += 1
            ST[16 + ST[2]] += 1
            hit = False
            key = 0
            idx = 0
            first = -1
            if ST[2] == P[4] - 1:
                ret = _last_trick(H, TR, ST, P, PTS, TSTR, PSTR)
                hit = True
            elif ST[2] == P[4] - 2 and ST[1] == 0 and P[7] == 0:
                ret = _endgame2(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, ABOVE, alpha, beta)
                hit = True
            elif ST[1] == 0:
                lo, hi = _bounds(H, ST, P, PTS)
                ST[9] += 1
                if lo >= beta:
                    ret = lo
                    hit = True
                    ST[10] += 1
                elif hi <= alpha:
                    ret = hi
                    hit = True
                    ST[11] += 1
            use_tt = ST[2] < P[4] - 1 and ST[1] == 0
            if not hit and use_tt:
                key = _key(H, ST, P, PTS, DESC)
                idx = _tt_index(key, P[6])
                if TT[idx, 0] == key and (TT[idx, 1] >> 40) == gen:
                    e = TT[idx, 1]
                    lo = e & 0xFFFF
                    hi = (e >> 16) & 0xFFFF
                    ST[12] += 1
                    if lo >= beta:
                        ret = lo
                        hit = True
                        ST[13] += 1
                    elif hi <= alpha:
                        ret = hi
                        hit = True
                        ST[13] += 1
                    elif lo == hi:
                        ret = lo
                        hit = True
                        ST[13] += 1
                    else:
                        if lo > alpha:
                            alpha = lo
                        if hi < beta:
                            beta = hi
                        first = ((e >> 32) & 0xFF) - 1
            if not hit:
                FA[ply] = alpha
                FB[ply] = beta
                FA0[ply] = alpha
                FB0[ply] = beta
                FK[ply] = key
                FX[ply] = idx if use_tt else -1
                FN[ply] = _gen_moves(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, ply, first)
                FI[ply] = 0
                seat = (ST[0] + ST[1]) & (n - 1)
                FBEST[ply] = -INF if seat % 2 == 0 else INF
                FBC[ply] = -1
                entering = False
                have_v = False
            else:
                # return `ret` to the parent
                if ply == ply0:
                    return ret
                ply -= 1
                c = MV[ply, FI[ply]]
                v = FG[ply] + ret
                _undo(H, CV, UNDER, TR, ST, PTS, c, SV, ply)
                have_v = True
        else:
            have_v = False
        # ---- at node `ply`: fold in a child value, then pick the next move or finish
        while True:
            if have_v:
                seat = SV[ply, 4]
                if seat % 2 == 0:
                    if v > FBEST[ply]:
                        FBEST[ply] = v
                        FBC[ply] = MV[ply, FI[ply]]
                        if v > FA[ply]:
                            FA[ply] = v
                else:
                    if v < FBEST[ply]:
                        FBEST[ply] = v
                        FBC[ply] = MV[ply, FI[ply]]
                        if v < FB[ply]:
                            FB[ply] = v
                FI[ply] += 1
                have_v = False
            if FI[ply] < FN[ply] and FA[ply] < FB[ply]:
                c = MV[ply, FI[ply]]
                go_on, gain = _do(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, c, SV, ply)
                if go_on:
                    FG[ply] = gain
                    alpha = FA[ply] - gain
                    beta = FB[ply] - gain
                    ply += 1
                    entering = True
                    break
                v = gain
                _undo(H, CV, UNDER, TR, ST, PTS, c, SV, ply)
                have_v = True
                continue
            # ---- node finished: store and return FBEST[ply]
            best = FBEST[ply]
            if FA[ply] >= FB[ply]:
                ST[6] += 1
                ST[7] += FI[ply]
            idx = FX[ply]
            key = FK[ply]
            if idx >= 0:
                if TT[idx, 0] == key and (TT[idx, 1] >> 40) == gen:
                    e = TT[idx, 1]
                    lo = e & 0xFFFF
                    hi = (e >> 16) & 0xFFFF
                else:
                    TT[idx, 0] = key
                    lo = 0
                    hi = VMAX
                if best <= FA0[ply]:
                    if best < hi:
                        hi = best
                elif best >= FB0[ply]:
                    if best > lo:
                        lo = best
                else:
                    lo = best
                    hi = best
                TT[idx, 1] = lo | (hi << 16) | ((FBC[ply] + 1) << 32) | (gen << 40)
            if ply == ply0:
                return best
            ply -= 1
            c = MV[ply, FI[ply]]
            v = FG[ply] + best
            _undo(H, CV, UNDER, TR, ST, PTS, c, SV, ply)
            have_v = True


@_jit
def child_value(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TT, FR,
                c, alpha, beta):
    """V after the seat to play plays ``c``, searched with the window ``alpha, beta``."""
    go_on, gain = _do(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, c, SV, 0)
    if go_on:
        v = gain + search(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TT,
                          FR, 1, alpha - gain, beta - gain)
    else:
        v = gain
    _undo(H, CV, UNDER, TR, ST, PTS, c, SV, 0)
    return v


@_jit
def root_values(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TT, FR,
                cards, out):
    """Exact V after each card of ``cards`` (legal at the root): ``out[i]`` (full windows)."""
    for i in range(cards.shape[0]):
        out[i] = child_value(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TT,
                             FR, cards[i], -INF, INF)


@_jit
def root_levels(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TT, FR,
                cards, steps, out):
    """For each root card, how many of the sorted thresholds ``steps`` its V reaches.

    ``out[i] = #{k : V_i >= steps[k]}``, found by bisection with null-window searches
    (each asks "V >= t?"); the score table is constant between thresholds, so this is all
    the score needs. The previous card's level is tried first.
    """
    L = steps.shape[0]
    guess = -1
    for i in range(cards.shape[0]):
        c = cards[i]
        lo = 0
        hi = L
        if 0 <= guess < L:
            t = steps[guess]
            ST[14] += 1
            v = child_value(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TT,
                            FR, c, t - 1, t)
            if v >= t:
                lo = guess + 1
            else:
                hi = guess
        if lo < hi and guess > 0 and hi == guess:
            t = steps[guess - 1]
            ST[14] += 1
            v = child_value(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TT,
                            FR, c, t - 1, t)
            if v >= t:
                lo = guess
            else:
                hi = guess - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            t = steps[mid - 1]
            ST[14] += 1
            v = child_value(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TT,
                            FR, c, t - 1, t)
            if v >= t:
                lo = mid
            else:
                hi = mid - 1
        out[i] = lo
        guess = lo

