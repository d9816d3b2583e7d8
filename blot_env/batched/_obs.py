"""Batched observation encoding: the numba port of :class:`~blot_env.observation.ObservationEncoder`.

``obs_tables(cfg, kind)`` turns an encoder (``match=False``, the per-deal episode) into a
tuple of numpy arrays, and ``encode_row`` / ``encode_batch`` write, from the int64 rows of
``_layout``, the ``float32[D]`` vector that ``ObservationEncoder(cfg, kind).encode(
seat_view(state, seat))`` gives, bit for bit, for every kind ("observation",
"information_state", "observation_voids"). The seat-view rules (what a seat may see, rules.md 2.4.2, 2.8, 3, 5)
are folded in here: own hand (Open Blot: own playable face-up cards), public plays and
calls, the public declaration information, the duel's turned card, Open Blot's face-up
cards and hidden counts.

The automatic-declaration "shown" cards (``seat_view`` under ``declarations="auto"``) are
not needed: the encoder has a ``shown`` piece only for ``manual`` and ``announce``.
``SeatView.dealt_hand``, ``high_value`` and ``legal`` are not encoded either.
"""

from __future__ import annotations

import numpy as np

from ..cards import FULL_DECK, NT, SHORT_DECK
from ..codes import EVENT_CONCEDE, UNDERTRUMP_FREE
from ..observation import ObservationEncoder
from ..rules_config import RulesConfig
from ._combos import TRUMP_ORDER, strength
from ._core import current_seat
from ._jit import jit, jit_inline
from ._layout import (
    ANNOUNCED,
    C_DOUBLE,
    C_KIND,
    C_SEAT,
    C_STRAIN,
    C_VALUE,
    CALLS,
    CLAIM_CLS,
    CLAIM_MASK,
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
    HIGH_CALL,
    HIGH_SEAT,
    K_N,
    K_PARTNER_EX,
    K_SHORT,
    K_UNDERTRUMP,
    LAST_CALL,
    LEADER,
    NCALLS,
    NEV,
    NPEND,
    NPLAYS,
    NSTOCK,
    PEND_KIND,
    PHASE,
    PLAY_CARD,
    PLAY_SEAT,
    PLAYED,
    POINTS,
    SHOW_MASK,
    SHOW_N,
    SHOW_VALUE,
    STOCK,
    TRICK,
    TRICK_LEN,
    TRICK_NO,
    TRICKS,
    UNLAID,
)

# ---------------------------------------------------------------------------- table indices
# Indices into ``ti`` (the int64 vector of ``obs_tables``). Offsets of absent pieces are -1.
(T_N, T_D, T_INFO, T_DECL, T_MANUAL, T_OPEN, T_DUEL, T_NUM_TRICKS, T_VALUE_SCALE,
 O_HAND, O_PLAYED, O_TRICK, O_SHOWN, O_OWN_CLAIM, O_OWN_SHOW, O_FACE_UP, O_OPEN_CARD,
 O_AUCTION, O_PASSES, T_GRID_W, O_LAST_CALL, T_CALL_W, O_HIGH, O_HIGH_SEAT, O_DOUBLE,
 O_C_STRAIN, O_C_VALUE, O_C_KIND, O_C_SEAT, O_SEQ, O_LEADER, O_TRICK_NO, O_TRICKS, O_POINTS,
 O_ANNOUNCED, O_CLAIM_CLS, O_SHOW_VALUE, T_N_EVENTS, O_EVENTS, O_CONCEDED, O_DECIDED, O_DECL_LEADER,
 O_HIDDEN, O_PHASE, O_TO_ACT, O_STEP, O_DEALER, T_HIGH_SIZE, T_QUANT, O_VOIDS) = range(50)
NTI = 50

_PIECE_OFF = {
    "hand": O_HAND, "played": O_PLAYED, "trick": O_TRICK, "shown": O_SHOWN, "own_claim_cards": O_OWN_CLAIM,
    "own_show_cards": O_OWN_SHOW, "face_up": O_FACE_UP, "open_card": O_OPEN_CARD, "auction_calls": O_AUCTION,
    "auction_passes": O_PASSES, "last_call": O_LAST_CALL, "standing_bid": O_HIGH,
    "standing_bid_seat": O_HIGH_SEAT, "double": O_DOUBLE, "contract_strain": O_C_STRAIN,
    "contract_value": O_C_VALUE, "contract_kind": O_C_KIND, "declarer": O_C_SEAT, "play_sequence": O_SEQ,
    "trick_leader": O_LEADER, "trick_no": O_TRICK_NO, "tricks_won": O_TRICKS, "points": O_POINTS,
    "announced": O_ANNOUNCED, "own_claim_class": O_CLAIM_CLS, "own_show_value": O_SHOW_VALUE,
    "height_events": O_EVENTS, "conceded": O_CONCEDED, "decided": O_DECIDED, "decl_leader": O_DECL_LEADER,
    "hidden_counts": O_HIDDEN, "phase": O_PHASE, "to_act": O_TO_ACT, "pending_step": O_STEP,
    "dealer": O_DEALER, "voids": O_VOIDS,
}

MAXF = 3
"""Most (index, value) features of one auction call (kind, value, strain / kind, keep, strain)."""


def obs_tables(cfg: RulesConfig, kind: str = "observation", quantized: bool = False):
    """The encoder of ``(cfg, kind)`` (``match=False``) as arrays for the compiled functions.

    With ``quantized=True`` the compiled encoder writes, into a ``uint8`` buffer, the integer
    numerator ``round(value / quantum)`` of every entry instead of its ``float32`` value
    (``ObservationEncoder.quantum``; ``ti[T_QUANT] = 1`` and ``cf_val`` holds numerators).

    Returns ``(ti, cf_idx, cf_val, grid, hpos)``:

    - ``ti``: ``int64[NTI]``, indexed by the ``T_*`` / ``O_*`` constants of this module: flags
      (``T_INFO`` information_state, ``T_DECL`` manual or announce, ``T_MANUAL``, ``T_OPEN``,
      ``T_DUEL``), sizes (``T_N`` players, ``T_D`` = D, ``T_NUM_TRICKS``, ``T_VALUE_SCALE`` (an
      integer), ``T_GRID_W`` auction-grid width, ``T_CALL_W`` last-call width, ``T_N_EVENTS``,
      ``T_HIGH_SIZE`` the standing-bid piece's size, ``T_QUANT`` 1 for the quantized encoding)
      and the offset of every piece (``O_*``; -1 when the piece is absent).
    - ``cf_idx``: ``int64[A, MAXF]``, per action id the feature indices (within one relative
      seat's ``last_call`` slot) of that call, -1 pad; ``cf_val``: ``float32[A, MAXF]`` their values.
    - ``grid``: ``int64[A]``, column of a non-pass auction call in ``auction_calls`` (-1: pass / no call).
    - ``hpos``: ``int64[A]``, position of a standing-bid call (BID, KAPUT, KAPUT_PLUS) in
      ``standing_bid`` (-1: not one).

    Raises:
        ValueError: unknown ``kind`` (from the encoder); ``num_players`` not 2 or 4.
    """
    enc = ObservationEncoder(cfg, kind, match=False)
    A = enc.layout.num_actions
    if cfg.num_players not in (2, 4):
        raise ValueError(f"num_players must be 2 or 4, got {cfg.num_players}")
    ti = np.full(NTI, -1, dtype=np.int64)
    ti[T_N] = cfg.num_players
    ti[T_D] = enc.size
    ti[T_INFO] = int(kind == "information_state")
    ti[T_DECL] = int(cfg.declarations in ("manual", "announce"))
    ti[T_MANUAL] = int(cfg.declarations == "manual")
    ti[T_OPEN] = int(cfg.auction == "open")
    ti[T_DUEL] = int(cfg.auction == "duel")
    ti[T_NUM_TRICKS] = cfg.num_tricks
    scale = enc.value_scale
    if scale != int(scale):
        raise ValueError(f"value_scale {scale} is not an integer")
    ti[T_VALUE_SCALE] = int(scale)
    for p in enc.pieces:
        ti[_PIECE_OFF[p.name]] = p.offset
    ti[T_CALL_W] = enc._call_feat_size
    ti[T_N_EVENTS] = getattr(enc, "n_events", 0)
    ti[T_QUANT] = int(bool(quantized))
    cf_idx = np.full((A, MAXF), -1, dtype=np.int64)
    cf_val = np.zeros((A, MAXF), dtype=np.float32)
    for a, feats in enc._call_feats.items():
        if len(feats) > MAXF:
            raise ValueError(f"call {a} has {len(feats)} features > {MAXF}")
        for j, (i, v) in enumerate(feats):
            cf_idx[a, j] = i
            cf_val[a, j] = round(v * enc.value_scale) if quantized and i == len(enc._call_kinds) else v
    grid = np.full(A, -1, dtype=np.int64)
    if enc.kind == "information_state":
        for a, g in enc._grid_ids.items():
            grid[a] = g
        ti[T_GRID_W] = len(enc._grid_ids)
    else:
        ti[T_GRID_W] = 0
    hpos = np.full(A, -1, dtype=np.int64)
    for a, i in enc._high_pos.items():
        hpos[a] = i
    ti[T_HIGH_SIZE] = len(enc._high_pos)
    return ti, cf_idx, cf_val, grid, hpos


# ---------------------------------------------------------------------------- compiled
_DEBRUIJN = np.array([0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8,
                      31, 27, 13, 23, 21, 19, 16, 7, 26, 12, 18, 6, 11, 5, 10, 9], dtype=np.int64)


@jit_inline
def _bits(m, out, off):
    """Set ``out[off + c] = 1`` for each bit ``c`` of the 32-bit card mask ``m``."""
    m &= 0xFFFFFFFF
    while m:
        low = m & -m
        out[off + _DEBRUIJN[((low * 0x077CB531) & 0xFFFFFFFF) >> 27]] = 1.0
        m ^= low


@jit_inline
def _q(num, den, quant):
    """An entry ``num / den`` of the float encoding, or its numerator ``num`` in the quantized one."""
    return float(num) if quant else num / den


@jit
def _popcount(m):
    c = 0
    while m:
        m &= m - 1
        c += 1
    return c


@jit
def encode_row(S, b, K, ti, cf_idx, cf_val, grid, hpos, seat, out):
    """Write the observation of ``seat`` for row ``b`` into ``out`` (``float32[D]``; zeroed first).

    ``S``: ``int64[B, ROW]``; ``K``: ``int64[NK]`` knobs (``_layout.knobs``); ``ti, cf_idx,
    cf_val, grid, hpos``: ``obs_tables(cfg, kind)``;
    ``seat``: absolute seat 0..n-1. Equals ``ObservationEncoder(cfg, kind).encode(
    seat_view(state, seat))`` for the state of the row (egocentric: relative seat
    ``(s - seat) % n``, side ``rel % 2``).
    """
    D = ti[T_D]
    for i in range(D):
        out[i] = 0.0
    _fill(S, b, K, ti, cf_idx, cf_val, grid, hpos, seat, out)


@jit
def _fill(S, b, K, ti, cf_idx, cf_val, grid, hpos, seat, out):
    """The body of :func:`encode_row` on a zeroed ``out``; returns the standing-bid position set (-1: none)."""
    n = ti[T_N]
    quant = ti[T_QUANT] != 0
    nm = n - 1  # n is 2 or 4: (x & nm) == x % n, negative x included
    info = ti[T_INFO] != 0
    decl = ti[T_DECL] != 0
    has_decl = S[b, HAS_DECL] != 0
    # ---- own hand (Open Blot: own playable face-up cards) and face-up / hidden
    if ti[T_OPEN] != 0:
        o_fu = ti[O_FACE_UP]
        o_hid = ti[O_HIDDEN]
        for s in range(n):
            r = (s - seat) & nm
            fd = S[b, FACE_DOWN + s]
            fu = S[b, HANDS + s] & ~fd & ~S[b, UNLAID + s]
            _bits(fu, out, o_fu + r * 32)
            if s == seat:
                _bits(fu, out, ti[O_HAND])
            out[o_hid + r] = _q(_popcount(fd), 8.0, quant)
    else:
        _bits(S[b, HANDS + seat], out, ti[O_HAND])
    # ---- plays
    o_played = ti[O_PLAYED]
    np_ = S[b, NPLAYS]
    if info:
        o_seq = ti[O_SEQ]
        slot = 32 + n
        for k in range(np_):
            c = S[b, PLAY_CARD + k]
            r = (S[b, PLAY_SEAT + k] - seat) & nm
            out[o_played + r * 32 + c] = 1.0
            base = o_seq + k * slot
            out[base + c] = 1.0
            out[base + 32 + r] = 1.0
    else:
        for s in range(n):  # the row keeps each seat's played cards as a mask
            _bits(S[b, PLAYED + s], out, o_played + ((s - seat) & nm) * 32)
    # ---- current trick
    tl = S[b, TRICK_LEN]
    leader = S[b, LEADER]
    o_trick = ti[O_TRICK]
    for i in range(tl):
        r = (leader + i - seat) & nm
        out[o_trick + r * 32 + S[b, TRICK + i]] = 1.0
    if tl > 0:
        out[ti[O_LEADER] + ((leader - seat) & nm)] = 1.0
    # ---- declaration card pieces
    manual = ti[T_MANUAL] != 0
    if decl and has_decl:
        o_shown = ti[O_SHOWN]
        for s in range(n):
            if S[b, DECIDED + s] == 1 or (not manual and S[b, ANNOUNCED + s] > 0):
                _bits(S[b, SHOW_MASK + s], out, o_shown + ((s - seat) & nm) * 32)
        cls = S[b, CLAIM_CLS + seat]
        if cls >= 0:
            _bits(S[b, CLAIM_MASK + seat], out, ti[O_OWN_CLAIM])
            out[ti[O_CLAIM_CLS] + cls] = 1.0
        if S[b, SHOW_N + seat] > 0:
            _bits(S[b, SHOW_MASK + seat], out, ti[O_OWN_SHOW])
            sv = S[b, SHOW_VALUE + seat]
            out[ti[O_SHOW_VALUE]] = float(sv // 10) if quant else sv / 100.0  # values are multiples of 10
    # ---- duel: the turned card, public from the deal on
    if ti[T_DUEL] != 0 and S[b, NSTOCK] > 0:
        out[ti[O_OPEN_CARD] + S[b, STOCK]] = 1.0
    # ---- auction
    ncalls = S[b, NCALLS]
    first = S[b, DEALER] + 1
    high = -1
    high_seat = -1
    if info:
        o_auc = ti[O_AUCTION]
        w = ti[T_GRID_W]
        p0 = 0
        p1 = 0
        p2 = 0
        p3 = 0
        for i in range(ncalls):
            s = (first + i) & nm
            a = S[b, CALLS + i]
            r = (s - seat) & nm
            g = grid[a]
            if g < 0:
                if r == 0:
                    p0 += 1
                elif r == 1:
                    p1 += 1
                elif r == 2:
                    p2 += 1
                else:
                    p3 += 1
            else:
                out[o_auc + r * w + g] = 1.0
                if hpos[a] >= 0:
                    high = a
                    high_seat = s
        o_p = ti[O_PASSES]
        out[o_p] = _q(p0, 10.0, quant)
        out[o_p + 1] = _q(p1, 10.0, quant)
        if n > 2:
            out[o_p + 2] = _q(p2, 10.0, quant)
            out[o_p + 3] = _q(p3, 10.0, quant)
    else:
        # seats call in turn, so the last call of each seat is among the last n calls
        l0 = -1
        l1 = -1
        l2 = -1
        l3 = -1
        for s in range(n):  # the row keeps each seat's last call
            a = S[b, LAST_CALL + s]
            r = (s - seat) & nm
            if r == 0:
                l0 = a
            elif r == 1:
                l1 = a
            elif r == 2:
                l2 = a
            else:
                l3 = a
        # the standing bid is the last call with a standing-bid position: the row's high_call
        hc = S[b, HIGH_CALL]
        if hc >= 0 and hpos[hc] >= 0:
            high = hc
            high_seat = S[b, HIGH_SEAT]
        w = ti[T_CALL_W]
        o_lc = ti[O_LAST_CALL]
        for r in range(n):
            a = l0 if r == 0 else (l1 if r == 1 else (l2 if r == 2 else l3))
            if a >= 0:
                base = o_lc + r * w
                for j in range(MAXF):
                    fi = cf_idx[a, j]
                    if fi >= 0:
                        out[base + fi] = cf_val[a, j]
    high_pos = -1
    if high >= 0:
        high_pos = hpos[high]
        out[ti[O_HIGH] + high_pos] = 1.0
        out[ti[O_HIGH_SEAT] + ((high_seat - seat) & nm)] = 1.0
    # ---- contract and doubling
    cseat = S[b, C_SEAT]
    if cseat >= 0:
        out[ti[O_DOUBLE] + S[b, C_DOUBLE]] = 1.0
        out[ti[O_C_STRAIN] + S[b, C_STRAIN]] = 1.0
        out[ti[O_C_VALUE]] = _q(S[b, C_VALUE], float(ti[T_VALUE_SCALE]), quant)
        out[ti[O_C_KIND] + S[b, C_KIND]] = 1.0
        out[ti[O_C_SEAT] + ((cseat - seat) & nm)] = 1.0
    else:
        out[ti[O_DOUBLE] + S[b, DOUBLE]] = 1.0
    # ---- play counters
    nt = ti[T_NUM_TRICKS]
    tn = S[b, TRICK_NO]
    out[ti[O_TRICK_NO] + (tn if tn < nt else nt)] = 1.0
    tw0 = 0
    tw1 = 0
    pw0 = 0
    pw1 = 0
    for s in range(n):
        if ((s - seat) & nm) & 1:
            tw1 += S[b, TRICKS + s]
            pw1 += S[b, POINTS + s]
        else:
            tw0 += S[b, TRICKS + s]
            pw0 += S[b, POINTS + s]
    o = ti[O_TRICKS]
    out[o] = _q(tw0, float(nt), quant)
    out[o + 1] = _q(tw1, float(nt), quant)
    o = ti[O_POINTS]
    out[o] = _q(pw0, 162.0, quant)
    out[o + 1] = _q(pw1, 162.0, quant)
    # ---- shown voids (the observation_voids kind; observation.shown_voids, rules.md 1.3)
    o_v = ti[O_VOIDS]
    strain = S[b, C_STRAIN]
    if o_v >= 0 and strain >= 0:
        trump_game = strain != NT
        exempt_ok = K[K_PARTNER_EX] != 0
        forced = K[K_UNDERTRUMP] != UNDERTRUMP_FREE
        deck = SHORT_DECK if K[K_SHORT] != 0 else FULL_DECK
        led = 0
        best = 0
        best_seat = 0
        top = -1
        seen = 0
        for k in range(np_):
            c = S[b, PLAY_CARD + k]
            s = S[b, PLAY_SEAT + k]
            suit = c >> 3
            if k % n == 0:
                led = suit
                best = strength(c, suit, strain)
                best_seat = s
                top = -1
            elif suit != led:
                r = (s - seat) & nm
                out[o_v + r * 4 + led] = 1.0
                partner_wins = exempt_ok and ((best_seat - s) & nm) == 2
                if trump_game and suit != strain and not partner_wins:
                    lower_out = False
                    if top >= 0 and not forced:
                        unseen = deck & ~seen
                        for rk in range(8):
                            if TRUMP_ORDER[rk] < top and (unseen >> (strain * 8 + rk)) & 1:
                                lower_out = True
                    if not lower_out:
                        out[o_v + r * 4 + strain] = 1.0
            st = strength(c, led, strain)
            if st > best:
                best = st
                best_seat = s
            if trump_game and suit == strain and TRUMP_ORDER[c & 7] > top:
                top = TRUMP_ORDER[c & 7]
            seen |= 1 << c
    # ---- declarations (public protocol)
    to_act = current_seat(S, b, K)
    if decl:
        o = ti[O_ANNOUNCED]
        for s in range(n):
            ann = S[b, ANNOUNCED + s] if has_decl else -1
            out[o + ((s - seat) & nm) * 6 + ann + 1] = 1.0
        if S[b, NPEND] > 0:
            out[ti[O_STEP] + S[b, PEND_KIND]] = 1.0
    if manual:
        ne = S[b, NEV] if has_decl else 0
        if ne > ti[T_N_EVENTS]:
            ne = ti[T_N_EVENTS]
        w = n + 12
        o_ev = ti[O_EVENTS]
        o_con = ti[O_CONCEDED]
        for k in range(ne):
            s = S[b, EV_SEAT + k]
            r = (s - seat) & nm
            step = S[b, EV_STEP + k]
            top = S[b, EV_TOP + k]
            base = o_ev + k * w
            out[base + r] = 1.0
            out[base + n + step] = 1.0
            if top >= 0:
                out[base + n + 4 + top] = 1.0
            if step == EVENT_CONCEDE:
                out[o_con + r] = 1.0
        o = ti[O_DECIDED]
        for s in range(n):
            dec = S[b, DECIDED + s] if has_decl else -1
            out[o + ((s - seat) & nm) * 3 + dec + 1] = 1.0
        dl = S[b, DLEADER] if has_decl else -1
        if dl >= 0:
            out[ti[O_DECL_LEADER] + ((dl - seat) & nm)] = 1.0
    # ---- turn
    out[ti[O_PHASE] + S[b, PHASE]] = 1.0
    if to_act >= 0:
        out[ti[O_TO_ACT] + ((to_act - seat) & nm)] = 1.0
    out[ti[O_DEALER] + ((S[b, DEALER] - seat) & nm)] = 1.0
    return high_pos


@jit
def privileged_rows(S, rows, seats, K, out2d):
    """Write the privileged (hidden) features of each ``rows[i]`` for ``seats[i]`` into ``out2d[i]``.

    ``out2d``: ``uint8[len(rows), P]`` with ``P = 32 * n + 32``: for each relative seat
    ``r = 0..n-1`` the 32-card mask of the cards seat ``(seat + r) % n`` holds now, then the
    cards still in the stock. Hidden information: for a critic during training only.
    """
    n = K[K_N]
    for i in range(rows.shape[0]):
        b = rows[i]
        seat = seats[i]
        out = out2d[i]
        for j in range(out.shape[0]):
            out[j] = 0
        if seat < 0:
            continue
        for r in range(n):
            _bits(S[b, HANDS + (seat + r) % n], out, r * 32)
        for k in range(S[b, NSTOCK]):
            out[n * 32 + S[b, STOCK + k]] = 1


@jit
def encode_batch(S, seats, K, ti, cf_idx, cf_val, grid, hpos, out2d):
    """Encode every row: ``out2d[b] = encode_row(S, b, ..., seats[b])``.

    ``S``: ``int64[B, ROW]``; ``seats``: ``int64[B]`` absolute seats (valid, 0..n-1);
    ``out2d``: ``float32[B, D]``; tables from ``obs_tables``.
    """
    for b in range(S.shape[0]):
        encode_row(S, b, K, ti, cf_idx, cf_val, grid, hpos, seats[b], out2d[b])


__all__ = ["NTI", "encode_batch", "encode_row", "obs_tables", "privileged_rows"]
