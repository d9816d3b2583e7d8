"""The flat row layout of the batched engine: one ``int64`` row per deal, named fields.

A batch of deals is an ``int64[B, ROW]`` array; each deal is one row, and each field is a
fixed slice of the row (module-level ``int`` constants, which numba folds into compiled
code). The row is a canonical image of a reference :class:`~blot_env.state.State`:
``convert.from_state`` builds it and ``convert.to_state`` inverts it, so the differential
test can compare the two engines field by field.

Also here: the rules knobs as an ``int64[NK]`` array (``knobs(cfg)``) and the action layout
as arrays (``action_tables(cfg)``), the inputs of the compiled functions.

Conventions: seats are absolute (egocentric views are the encoder's business); card masks
are bit ``card`` set (cards ``suit * 8 + rank``); absent cards / seats / ids are ``-1``;
unused slots of fixed-size lists hold ``-1`` (card/seat/id lists) or ``0`` (masks, counts).
"""

from __future__ import annotations

import numpy as np

from ..actions import layout_for
from ..codes import (
    AUCTIONS,
    CARRES,
    DECLS,
    KAPUT_VALUE,
    KAPUTS,
    LONG_RUNS,
    REVEALS,
    SCORINGS,
    TIES,
    UNDERTRUMPS,
)
from ..rules_config import RulesConfig

# ---------------------------------------------------------------------------- row fields
_fields: dict[str, tuple[int, int]] = {}
_off = 0


def _f(name: str, size: int = 1) -> int:
    global _off
    o = _off
    _fields[name] = (o, size)
    _off += size
    return o


MAXN = 4
"""Seats per row (2-player presets leave seats 2, 3 unused)."""
MAXT = 16
"""Tricks per deal (Open Blot plays 16)."""
MAXPLAYS = 32
MAXSTOCK = 16
MAXPEND = 6
MAXEV = 16
MAXCALLS = 400
"""Auction calls a row holds (``max_calls`` bounds a config's auction; presets need <= 301)."""

# Fields are ordered hot first: those that the transitions, the masks and the observation
# encoder read at every step sit together at the start of the row (a handful of cache lines),
# the long lists (stock, events, plays, piles, calls) at the end.
# --- deal and auction scalars
DEALER = _f("dealer")
PHASE = _f("phase")
"""``PHASE_AUCTION``, ``PHASE_PLAY`` or ``PHASE_DONE`` (:mod:`blot_env.codes`, ``state.Phase``)."""
SEAT = _f("seat")
"""Seat to act in the auction (``State.seat``; kept as the reference updates it)."""
NCALLS = _f("ncalls")
"""Auction calls made so far (``len(history)`` during the auction, ``State.n_calls`` after)."""
NHIST = _f("nhist")
"""``len(State.history)``: every action taken in the deal."""
HIGH_VALUE = _f("high_value")
HIGH_SEAT = _f("high_seat")
HIGH_CALL = _f("high_call")
KAPUT_SEEN = _f("kaput_seen")
DOUBLE = _f("double")
PASSES = _f("passes")
ROUND = _f("round")
# --- contract (C_SEAT = -1: none yet); these seven stay adjacent and in this order
C_SEAT = _f("c_seat")
C_STRAIN = _f("c_strain")
C_VALUE = _f("c_value")
C_KIND = _f("c_kind")
"""``KIND_*`` of :mod:`blot_env.codes` (the index in ``CONTRACT_KINDS``)."""
C_PLUS = _f("c_plus")
C_DOUBLE = _f("c_double")
C_CALL = _f("c_call")
# --- play and protocol scalars
TRICK_LEN = _f("trick_len")
LEADER = _f("leader")
TRICK_NO = _f("trick_no")
NPLAYS = _f("nplays")
KAPUT_BROKEN = _f("kaput_broken")
NPEND = _f("npend")
HAS_DECL = _f("has_decl")
"""0 while ``State.decl is None`` (the declaration fields then hold their initial values)."""
NEV = _f("nev")
DLEADER = _f("dleader")
NANN = _f("nann")
NSTOCK = _f("nstock")
HAS_PILES = _f("has_piles")
# --- per seat, hot
HANDS = _f("hands", MAXN)
"""Bitmask per seat of the cards held now."""
PLAYED = _f("played", MAXN)
"""Bitmask per seat of the cards it has played (current trick included; derived from the plays)."""
LAST_CALL = _f("last_call", MAXN)
"""Per seat, its last auction call (action id; -1 none yet; derived from the calls)."""
TRICK = _f("trick", MAXN)
"""Cards of the current trick in play order (-1 pad)."""
TRICKS = _f("tricks", MAXN)
POINTS = _f("points", MAXN)
ANNOUNCED = _f("announced", MAXN)
DECIDED = _f("decided", MAXN)
CLAIM_CLS = _f("claim_cls", MAXN)
"""Class of the claim (-1: no claim), its value (raw), mask, seniority key (see
``combo_key``), suit (-1 for a carre) and top rank."""
CLAIM_MASK = _f("claim_mask", MAXN)
SHOW_MASK = _f("show_mask", MAXN)
"""Union of the masks of ``show_set[s]``; SHOW_VALUE its raw value; SHOW_N its size."""
SHOW_VALUE = _f("show_value", MAXN)
SHOW_N = _f("show_n", MAXN)
CONCEDED = _f("conceded", MAXN)
RIGHTS = _f("rights", MAXN)
# --- pending declaration steps (queue; kinds state.Step 0..3)
PEND_KIND = _f("pend_kind", MAXPEND)
PEND_SEAT = _f("pend_seat", MAXPEND)
# --- Open Blot table
FACE_DOWN = _f("face_down", MAXN)
UNLAID = _f("unlaid", MAXN)
# --- raisable kaput (bazar): each seat's Ach per strain, rules.md 2.2 (derived, from the dealt hands)
ACH = _f("ach", MAXN * 5)
"""``ACH[5 * s + strain]``: bit N set iff kaput+N is backed by seat s's dealt hand
(``combos.achievable_plus``); 0 unless ``kaput_bid == "raisable"``."""
# --- colder per-seat fields
CLAIM_VALUE = _f("claim_value", MAXN)
CLAIM_KEY = _f("claim_key", MAXN)
CLAIM_SUIT = _f("claim_suit", MAXN)
CLAIM_TOP = _f("claim_top", MAXN)
ANN_ORDER = _f("ann_order", MAXN)
# --- automatic declarations: each seat's best set at the start of play (derived; 0 before)
AUTO_MASK = _f("auto_mask", MAXN)
AUTO_VALUE = _f("auto_value", MAXN)
AUTO_KEY = _f("auto_key", MAXN)
"""``combo_key`` of the set's senior combination (-1: empty set)."""
START_HANDS = _f("start_hands", MAXN)
PLAY_HANDS = _f("play_hands", MAXN)
"""Hands at the start of play (0 before play starts, as the reference's ``()``)."""
# --- lists
STOCK = _f("stock", MAXSTOCK)
EV_SEAT = _f("ev_seat", MAXEV)
EV_STEP = _f("ev_step", MAXEV)
EV_TOP = _f("ev_top", MAXEV)
PLAY_CARD = _f("play_card", MAXPLAYS)
PLAY_SEAT = _f("play_seat", MAXPLAYS)
PILES = _f("piles", 2 * 16)
"""Per seat (2 players) the 16 card ids bottom, top of piles 1..8 (-1 outside Open Blot)."""
CALLS = _f("calls", MAXCALLS)
"""Auction calls (action ids, -1 pad)."""

ROW = _off
"""Length of a row."""
FIELDS = dict(_fields)
"""``{name: (offset, size)}`` of every field, in row order."""

# ---------------------------------------------------------------------------- knobs
(K_N, K_SHORT, K_HAND, K_TRICKS, K_AUCTION, K_BID_MIN, K_BID_MAX, K_BID_STEP, K_ALLOW_NT, K_KAPUT,
 K_END_PASSES, K_CONTRA_END, K_DECL, K_AUTO_REVEAL, K_LONG_RUN, K_CARRE, K_SCORING, K_TIE, K_CAPOT,
 K_PARTNER_EX, K_UNDERTRUMP, K_JACK_FORCES, K_OPEN_CHOICE, K_TAKER_GE, K_OPEN_COMPLEMENT,
 K_NSTRAINS, K_NUM_ACTIONS) = range(27)
NK = 27

def knobs(cfg: RulesConfig) -> np.ndarray:
    """``int64[NK]``: the rules knobs the compiled code reads, as codes (index = ``K_*``).

    String knobs become their index in the tuples of :mod:`blot_env.codes` (``AUCTIONS`` and so on);
    ``K_PARTNER_EX`` already folds in ``num_players == 4``.
    """
    k = np.zeros(NK, dtype=np.int64)
    k[K_N] = cfg.num_players
    k[K_SHORT] = int(cfg.short_deck)
    k[K_HAND] = cfg.hand_size
    k[K_TRICKS] = cfg.num_tricks
    k[K_AUCTION] = AUCTIONS.index(cfg.auction)
    k[K_BID_MIN] = cfg.bid_min
    k[K_BID_MAX] = cfg.bid_max
    k[K_BID_STEP] = cfg.bid_step
    k[K_ALLOW_NT] = int(cfg.allow_nt)
    k[K_KAPUT] = KAPUTS.index(cfg.kaput_bid)
    k[K_END_PASSES] = cfg.auction_end_passes
    k[K_CONTRA_END] = cfg.contra_end_passes
    k[K_DECL] = DECLS.index(cfg.declarations)
    k[K_AUTO_REVEAL] = REVEALS.index(cfg.auto_reveal)
    k[K_LONG_RUN] = LONG_RUNS.index(cfg.long_run)
    k[K_CARRE] = CARRES.index(cfg.carre_table)
    k[K_SCORING] = SCORINGS.index(cfg.scoring)
    k[K_TIE] = TIES.index(cfg.declaration_tie)
    k[K_CAPOT] = cfg.capot_tp
    k[K_PARTNER_EX] = int(cfg.partner_exemption and cfg.num_players == 4)
    k[K_UNDERTRUMP] = UNDERTRUMPS.index(cfg.undertrump)
    k[K_JACK_FORCES] = int(cfg.jack_forces_dealer)
    k[K_OPEN_CHOICE] = int(cfg.duel_open_card_choice)
    k[K_TAKER_GE] = int(cfg.taker_ge)
    k[K_OPEN_COMPLEMENT] = int(cfg.open_complement)
    k[K_NSTRAINS] = 5 if cfg.allow_nt else 4
    k[K_NUM_ACTIONS] = layout_for(cfg).num_actions
    return k


# ---------------------------------------------------------------------------- action tables
BLOCKS = ("PASS", "CONTRA", "RECONTRA", "BID", "KAPUT", "KAPUT_PLUS", "TAKE", "NAME", "ANNOUNCE",
          "HEIGHT", "HEIGHT_TRUMP", "CONCEDE", "REVEAL", "SHOW", "NOSHOW", "PLAY")
(B_PASS, B_CONTRA, B_RECONTRA, B_BID, B_KAPUT, B_KAPUT_PLUS, B_TAKE, B_NAME, B_ANNOUNCE, B_HEIGHT,
 B_HEIGHT_TRUMP, B_CONCEDE, B_REVEAL, B_SHOW, B_NOSHOW, B_PLAY) = range(16)
NB = 16

def action_tables(cfg: RulesConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The action layout as arrays: ``(block[A], p0[A], p1[A], bstart[NB])``, all ``int64``.

    ``block[a]`` is the block code ``B_*`` of id ``a``; ``p0``/``p1`` its params
    (BID: value, strain; KAPUT: strain, -; KAPUT_PLUS: N, strain; NAME: strain, keep;
    ANNOUNCE: class, -; PLAY: card, -; others -1); ``bstart[code]`` the first id of a block
    (-1 when the preset has no such block). A block's ids are contiguous, ``bstart[code]``
    to ``bstart[code] + size``; ``bsize`` is recovered as the count of ``block == code``.
    """
    lay = layout_for(cfg)
    A = lay.num_actions
    block = np.full(A, -1, dtype=np.int64)
    p0 = np.full(A, -1, dtype=np.int64)
    p1 = np.full(A, -1, dtype=np.int64)
    bstart = np.full(NB, -1, dtype=np.int64)
    for name, b in lay.blocks.items():
        code = BLOCKS.index(name)
        bstart[code] = b.start
        for a in range(b.start, b.stop):
            block[a] = code
            params = lay.params[a]
            if len(params) > 0:
                p0[a] = int(params[0])
            if len(params) > 1:
                p1[a] = int(params[1])
    return block, p0, p1, bstart


def max_calls(cfg: RulesConfig) -> int:
    """An upper bound on the number of calls of one auction under ``cfg`` (rules.md 2.2, 3-6).

    Trump choices: every player passes or chooses in each of two rounds. Bidding auctions:
    each raise bids a strictly higher value, so there are at most as many raises as distinct
    values; before each raise and at the end come at most ``max(auction_end_passes, n)``
    calls, and a contra/recontra sequence adds ``contra_end_passes + 2``.
    """
    n = cfg.num_players
    if cfg.auction in ("duel", "open"):
        return 2 * n
    values = set(range(cfg.bid_min, cfg.bid_max + 1, cfg.bid_step))
    if cfg.kaput_bid != "none":
        values.add(KAPUT_VALUE)
    if cfg.kaput_bid == "raisable":
        values |= {KAPUT_VALUE + k for k in layout_for(cfg).kaput_plus_values}
    return (len(values) + 1) * max(cfg.auction_end_passes, n) + cfg.contra_end_passes + 2


def capacity_problem(cfg: RulesConfig) -> str | None:
    """Why a deal of ``cfg`` may not fit in a row (``None`` when it always fits).

    The row has fixed room for the auction calls (``MAXCALLS``) and the stock
    (``MAXSTOCK``); knob overrides such as a long bid ladder, many closing passes or a full
    deck in a duel can exceed them.
    """
    m = max_calls(cfg)
    if m > MAXCALLS:
        return (f"its auction may run to {m} calls (bids {cfg.bid_min}..{cfg.bid_max} step {cfg.bid_step}, "
                f"auction_end_passes={cfg.auction_end_passes}); a row holds {MAXCALLS}")
    deck = 24 if cfg.short_deck else 32
    stock = deck - cfg.num_players * cfg.hand_size
    if stock > MAXSTOCK:
        return (f"its stock has {stock} cards (short_deck={cfg.short_deck}, hand_size={cfg.hand_size}); "
                f"a row holds {MAXSTOCK}")
    return None


def combo_key(key: tuple[int, int, int, int]) -> int:
    """One ``int`` for a :class:`~blot_env.combos.Combo` key ``(is_carre, class or carre order,
    top rank, is_trump)`` that orders the same way: ``((k0 * 8 + k1) * 8 + k2) * 2 + k3``."""
    return ((key[0] * 8 + key[1]) * 8 + key[2]) * 2 + key[3]
