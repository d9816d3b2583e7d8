"""Numba kernel of the double-dummy solver: alpha-beta over card play with a transposition table.

The kernel knows nothing about contracts or scoring. It returns, for a position with every
hand known, the minimax value of the **outcome code** of team 0 (seats 0/2; 2 players: seat 0)

    V = 3 * (raw card points team 0 wins from here on, last-trick 10 included) + c

where ``c`` is decided at the end of the deal: 2 if team 1 took no trick in the whole deal
(team 0 capot), 0 if team 0 took none (team 1 capot), 1 otherwise, and 1 after an early
kaput stop (rules.md 2.3). Team 0 maximizes V, team 1 minimizes it. ``solver.py`` adds the
points already won and maps the code to the deal score with a monotone table, which is why a
minimax over this code is the minimax over the score (see docs/search.md).

Hands are 32-bit card masks (card = suit * 8 + rank, rules.md 1.1). Open Blot piles are
handled by ``under``: the bit of the card lying under each card (0 if none); ``covered``
holds the cards still under a pile top (unplayable).

Arrays (all int64 unless noted):

* ``H[4]`` remaining cards per seat, ``CV[4]`` covered cards per seat, ``UNDER[32]``;
* ``TR[4]`` cards of the trick in progress, ``ST[8]``: 0 leader, 1 cards in the trick,
  2 index of the trick being played (0-based), 3 won flags (bit 0 team 0 has won a trick in
  this deal, bit 1 team 1), 4 node counter, 5 TT generation;
* ``P[8]``: 0 players, 1 strain (0..3, 4 = no trump), 2 partner exemption (4 players),
  3 undertrump free, 4 tricks in the deal, 5 kaput-defending team (-1: not a kaput
  contract), 6 TT bits;
* ``PTS[32]`` card points, ``TSTR[32]`` trick strength as a trump (0 if not a trump),
  ``PSTR[32]`` strength in its own suit when led, ``DESC[2, 8]`` ranks by strength
  (row 0 plain order, row 1 trump order), ``ABOVE[8]`` trump-rank masks above an order;
* ``MV[plies, 16]`` move buffers; TT arrays ``TK`` (key), ``TLO``/``THI`` (bounds),
  ``TBM`` (best card, -1 none).
"""

from __future__ import annotations

import numpy as np
from numba import njit

INF = 1 << 20
SUIT = np.array([0xFF << (8 * s) for s in range(4)], dtype=np.int64)


@njit(cache=True, inline="always")
def _strength(c, led, P, TSTR, PSTR):
    if P[1] != 4 and (c >> 3) == P[1]:
        return TSTR[c]
    if (c >> 3) == led:
        return PSTR[c]
    return 0


@njit(cache=True)
def legal_mask(hand, TR, tlen, leader, seat, P, TSTR, PSTR, ABOVE):
    """Legal cards of ``seat`` holding ``hand`` (playable cards), rules.md 1.3."""
    if tlen == 0:
        return hand
    trump = P[1]
    led = TR[0] >> 3
    follow = hand & SUIT[led]
    if follow != 0:
        if trump != 4 and led == trump:
            top = 0
            for i in range(tlen):
                if (TR[i] >> 3) == trump and TSTR[TR[i]] > top:
                    top = TSTR[TR[i]]
            over = follow & (ABOVE[top - 16] << (8 * trump))
            if over != 0:
                return over
        return follow
    if trump == 4:
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
    wseat = (leader + w) % n
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


@njit(cache=True)
def _gen_moves(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, ply, first):
    """Fill ``MV[ply]`` with the seat's moves, best-looking first; returns the count.

    Cards of one hand that are equivalent (same suit, same points, nothing still in play
    ranks between them, neither covers a face-down card) are generated once: playing either
    leads to the same outcomes. Cards of different points are never merged.
    """
    n = P[0]
    leader = ST[0]
    tlen = ST[1]
    seat = (leader + tlen) % n
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
        wteam = ((leader + w) % n) % 2
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


@njit(cache=True)
def _tt_index(key, bits):
    h = key * 6364136223846793005
    return (h >> (64 - bits)) & ((1 << bits) - 1)


@njit(cache=True)
def _final_code(flags):
    if flags & 2 == 0:
        return 2
    if flags & 1 == 0:
        return 0
    return 1


@njit(cache=True)
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
    return (leader + w) % n, pts


@njit(cache=True)
def _do(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, c, SV, ply):
    """Play ``c`` for the seat to play. Returns ``(go_on, gain)``: ``go_on`` False when the
    deal is over (``gain`` then includes the final capot code). ``SV[ply]`` keeps what
    :func:`_undo` restores."""
    n = P[0]
    leader = ST[0]
    tlen = ST[1]
    flags = ST[3]
    seat = (leader + tlen) % n
    H[seat] ^= 1 << c
    CV[seat] &= ~UNDER[c]
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
        pts += 10
    gain = 3 * pts if wteam == 0 else 0
    nflags = flags | (1 << wteam)
    if lastt:
        return False, gain + _final_code(nflags)
    if P[5] >= 0 and (nflags >> P[5]) & 1 == 1 and tno >= 1:
        return False, gain + 1  # early kaput stop (rules.md 2.3)
    ST[0] = wseat
    ST[1] = 0
    ST[2] = tno + 1
    ST[3] = nflags
    return True, gain


@njit(cache=True)
def _undo(H, CV, UNDER, ST, c, SV, ply):
    seat = SV[ply, 4]
    H[seat] ^= 1 << c
    CV[seat] |= UNDER[c]
    ST[0] = SV[ply, 0]
    ST[1] = SV[ply, 1]
    ST[2] = SV[ply, 2]
    ST[3] = SV[ply, 3]


@njit(cache=True)
def _key(H, TR, ST, n):
    rem = 0
    for s in range(n):
        rem |= H[s]
    tlen = ST[1]
    key = rem | (tlen << 32) | (ST[0] << 34) | (ST[3] << 36)
    for i in range(tlen):
        key |= TR[i] << (38 + 5 * i)
    return key


@njit(cache=True)
def search(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TK, TG, TLO, THI, TBM, ply, alpha, beta):
    """Fail-soft alpha-beta; returns V of the position (see the module docstring)."""
    ST[4] += 1
    n = P[0]
    tlen = ST[1]
    leader = ST[0]
    gen = ST[5]
    key = _key(H, TR, ST, n)
    idx = _tt_index(key, P[6])
    first = -1
    if TK[idx] == key and TG[idx] == gen:
        lo = np.int64(TLO[idx])
        hi = np.int64(THI[idx])
        if lo >= beta:
            return lo
        if hi <= alpha:
            return hi
        if lo == hi:
            return lo
        if lo > alpha:
            alpha = lo
        if hi < beta:
            beta = hi
        first = TBM[idx]
    a0 = alpha
    b0 = beta
    cnt = _gen_moves(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, ply, first)
    seat = (leader + tlen) % n
    maxing = seat % 2 == 0
    best = -INF if maxing else INF
    best_card = -1
    for i in range(cnt):
        c = MV[ply, i]
        go_on, gain = _do(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, c, SV, ply)
        if go_on:
            v = gain + search(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TK, TG, TLO, THI,
                              TBM, ply + 1, alpha - gain, beta - gain)
        else:
            v = gain
        _undo(H, CV, UNDER, ST, c, SV, ply)
        if maxing:
            if v > best:
                best = v
                best_card = c
                if v > alpha:
                    alpha = v
        else:
            if v < best:
                best = v
                best_card = c
                if v < beta:
                    beta = v
        if alpha >= beta:
            break
    if TK[idx] != key or TG[idx] != gen:
        TK[idx] = key
        TG[idx] = gen
        TLO[idx] = -30000
        THI[idx] = 30000
    if best <= a0:
        if best < THI[idx]:
            THI[idx] = best
    elif best >= b0:
        if best > TLO[idx]:
            TLO[idx] = best
    else:
        TLO[idx] = best
        THI[idx] = best
    TBM[idx] = best_card
    return best


@njit(cache=True)
def child_value(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TK, TG, TLO, THI, TBM, c,
                alpha, beta):
    """V after the seat to play plays ``c``, searched with the window ``alpha, beta``."""
    go_on, gain = _do(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, c, SV, 0)
    if go_on:
        v = gain + search(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TK, TG, TLO, THI, TBM,
                          1, alpha - gain, beta - gain)
    else:
        v = gain
    _undo(H, CV, UNDER, ST, c, SV, 0)
    return v


@njit(cache=True)
def root_values(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TK, TG, TLO, THI, TBM, cards,
                out):
    """Exact V after each card of ``cards`` (legal at the root): ``out[i]`` (full windows)."""
    for i in range(cards.shape[0]):
        out[i] = child_value(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TK, TG, TLO, THI,
                             TBM, cards[i], -INF, INF)


@njit(cache=True)
def root_levels(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TK, TG, TLO, THI, TBM, cards,
                steps, out):
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
            v = child_value(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TK, TG, TLO, THI,
                            TBM, c, t - 1, t)
            if v >= t:
                lo = guess + 1
            else:
                hi = guess
        if lo < hi and guess > 0 and hi == guess:
            t = steps[guess - 1]
            v = child_value(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TK, TG, TLO, THI,
                            TBM, c, t - 1, t)
            if v >= t:
                lo = guess
            else:
                hi = guess - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            t = steps[mid - 1]
            v = child_value(H, CV, UNDER, TR, ST, P, PTS, TSTR, PSTR, DESC, ABOVE, MV, SC, SV, TK, TG, TLO, THI,
                            TBM, c, t - 1, t)
            if v >= t:
                lo = mid
            else:
                hi = mid - 1
        out[i] = lo
        guess = lo
