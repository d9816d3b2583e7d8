"""Egocentric observation encoders built from named pieces (seat 0 = the observer).

An :class:`ObservationEncoder` turns a :class:`~blot_env.view.SeatView` (never a
:class:`~blot_env.state.State`, so nothing hidden can leak) into a ``float32[D]`` vector.
Everything is **egocentric**: relative seat ``r = (seat - observer) % n`` (``r = 0`` is the
observer, ``r = 1`` the next seat in the direction of play, ``r = 2`` the partner in
4-player games); relative side ``r % 2`` (side 0 = the observer's team, side 1 = the
opponents; in 2-player games the player and the opponent).

Three kinds (OpenSpiel's observation / information-state distinction, and the observation with public voids):

``"observation"``
    What the seat sees now: its hand, which cards each relative seat has played, the current
    trick, per relative seat its last auction call, the standing bid, contract, public
    declaration information, points and tricks so far.
``"information_state"``
    Perfect recall: the same plus the full order of plays (one slot per card played, with the
    player) and the complete auction (which relative seat made each non-pass call, and how many
    times each passed; in the bidding auctions values rise strictly and the turn order is fixed,
    so this determines the call sequence).
``"observation_voids"``
    The ``"observation"`` pieces plus ``voids``: per relative seat, the suits it has shown it
    does not hold, read from the public play by the duties of rules.md 1.3 (a seat that did not
    follow the led suit holds none of it; one that neither followed nor ruffed when a trump
    was due holds no trump). It adds no hidden information, only what the play order told
    every seat; the ``"observation"`` kind keeps the played cards per seat but not the order.
    ``open`` has no ``voids`` piece: its duties bind the face-up cards, which every seat sees,
    and say nothing of the face-down ones (rules.md 5.3), so there the kind equals ``"observation"``.

The layout is a list of :class:`Piece` values (name, offset, size, description); the
documentation table (:func:`observation_layout_markdown`) is generated from the same list,
so code and docs cannot drift. Which pieces exist depends on behaviour knobs of the
:class:`~blot_env.rules_config.RulesConfig` (``num_players``, ``auction``, ``declarations``,
``num_tricks``), never on the preset name.

Units: points are raw card points divided by 162; contract values are score-sheet units
divided by ``value_scale`` = max(``cfg.bid_max``, 25 when kaput bids exist); match totals are divided by ``cfg.target``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .actions import AUCTION_BLOCKS, layout_for
from .cards import FULL_DECK, NT, SHORT_DECK, TRUMP_ORDER, strength
from .codes import CONTRACT_KINDS, EVENT_CONCEDE, KAPUT_VALUE
from .errors import ConfigError
from .rules_config import RulesConfig
from .state import State
from .view import SeatView

KINDS = ("observation", "information_state", "observation_voids")

#: auction blocks, in the order of the call-kind one-hot
_CALL_BLOCKS = AUCTION_BLOCKS
#: blocks whose call becomes the standing bid (rules.md 2.2, 6)
_HIGH_BLOCKS = ("BID", "KAPUT", "KAPUT_PLUS")
RAW_TOTAL = 162.0


class Piece(NamedTuple):
    """One named, contiguous slice of the observation vector: ``obs[offset:offset + size]``."""

    name: str
    offset: int
    size: int
    shape: tuple[int, ...]
    description: str
    high: float = 1.0
    """Upper bound of every entry (the lower bound is 0)."""
    unit: float = 1.0
    """Every entry is an integer multiple of this (1 for one-hot and bitmask entries); NaN where
    the values are not integral (the match pieces). :attr:`ObservationEncoder.quantum` is built
    from it."""


class ObservationEncoder:
    """Encoder of one rules config and kind: ``encode(view) -> float32[D]``.

    Args:
        cfg: the rules config (its behaviour knobs decide which pieces exist).
        kind: ``"observation"``, ``"information_state"`` or ``"observation_voids"``.
        match: add the match pieces (match totals and what is left to the target); then pass
            ``match=`` to :meth:`encode` in match play.

    Attributes:
        size: D, the vector length.
        pieces: the :class:`Piece` list, in offset order.

    Raises:
        ValueError: unknown ``kind``.
    """

    def __init__(self, cfg: RulesConfig, kind: str = "observation", match: bool = False):
        if kind not in KINDS:
            raise ValueError(f"observation kind must be one of {KINDS}, got {kind!r}")
        self.cfg = cfg
        self.kind = kind
        self.match = bool(match)
        self.n = n = cfg.num_players
        self.layout = lay = layout_for(cfg)
        info = kind == "information_state"
        voids = kind == "observation_voids" and cfg.auction != "open"  # open: the face-up cards are public
        decl = cfg.declarations in ("manual", "announce")
        manual = cfg.declarations == "manual"
        self.pieces: list[Piece] = []
        #: contract / bid values are divided by this (the top of the ladder, kaput 25 included)
        self.value_scale = float(max(cfg.bid_max, KAPUT_VALUE if cfg.kaput_bid != "none" else 1, 1))

        def add(name: str, shape: tuple[int, ...], desc: str, high: float = 1.0, unit: float = 1.0) -> int:
            off = self.size_so_far
            size = int(np.prod(shape))
            self.pieces.append(Piece(name, off, size, shape, desc, high, unit))
            self.size_so_far = off + size
            return off

        self.size_so_far = 0
        # ---- card bitmask pieces: contiguous, filled by one unpackbits call
        add("hand", (32,), "own cards held now, by card id suit*8+rank (Open Blot: own playable face-up cards)")
        add("played", (n, 32), "cards played so far (current trick included) by relative seat r")
        add("trick", (n, 32), "the card relative seat r played to the current trick (one-hot, zeros if none yet)")
        if decl:
            add("shown", (n, 32), "cards of the combinations relative seat r has made public (shown/announced)")
            add("own_claim_cards", (32,), "cards of own claimed combination (the best one of the announced class)")
            add("own_show_cards", (32,), "cards own show would reveal (claim plus lower combinations, RES-40)")
        if cfg.auction == "open":
            add("face_up", (n, 32), "face-up (public, playable) cards of relative seat r")
        if cfg.auction == "duel":
            add("open_card", (32,), "the turned card U (one-hot; zeros when none or not visible)")
        self._n_masks = self.size_so_far // 32

        # ---- auction
        call_ids = [a for b in _CALL_BLOCKS if b in lay.blocks
                    for a in range(lay.blocks[b].start, lay.blocks[b].stop)]
        self._call_kinds = [b for b in _CALL_BLOCKS if b in lay.blocks]
        keep = cfg.auction == "duel" and cfg.duel_open_card_choice
        self._call_feat_size = len(self._call_kinds) + 1 + 5 + (1 if keep else 0)
        feats: dict[int, list[tuple[int, float]]] = {}
        for a in call_ids:
            block = lay.block_of[a]
            p = lay.params[a]
            f = [(self._call_kinds.index(block), 1.0)]
            k0 = len(self._call_kinds)
            value, strain = 0, -1
            if block == "BID":
                value, strain = p
            elif block == "KAPUT":
                value, strain = KAPUT_VALUE, p[0]
            elif block == "KAPUT_PLUS":
                value, strain = KAPUT_VALUE + p[0], p[1]
            elif block == "NAME":
                strain = p[0]
                if keep and p[1]:
                    f.append((k0 + 6, 1.0))
            if value:
                f.append((k0, value / self.value_scale))
            if strain >= 0:
                f.append((k0 + 1 + strain, 1.0))
            feats[a] = f
        self._call_feats = feats
        if info:
            self._grid_ids = {a: i for i, a in enumerate(a for a in call_ids if lay.block_of[a] != "PASS")}
            self.o_auction = add("auction_calls", (n, len(self._grid_ids)),
                                 "1 where relative seat r made that non-pass call (columns: the layout's "
                                 "auction ids after PASS, in id order)")
            self.o_passes = add("auction_passes", (n,), "number of passes relative seat r made, / 10",
                                 high=100.0, unit=0.1)
        else:
            self.o_last_call = add(
                "last_call", (n, self._call_feat_size),
                "last auction call of relative seat r: kind one-hot (" + ", ".join(self._call_kinds)
                + "), value / value_scale, strain one-hot C D H S NT" + (", keep flag" if keep else ""))
        high_ids = [a for b in _HIGH_BLOCKS if b in lay.blocks
                    for a in range(lay.blocks[b].start, lay.blocks[b].stop)]
        self._high_pos = {a: i for i, a in enumerate(high_ids)}
        if high_ids:
            self.o_high = add("standing_bid", (len(high_ids),),
                              "one-hot of the standing bid (layout ids of BID, KAPUT, KAPUT_PLUS in order)")
            self.o_high_seat = add("standing_bid_seat", (n,), "relative seat that holds the standing bid")
        self.o_double = add("double", (3,), "doubling one-hot: none, contra, recontra")
        # ---- contract
        self.o_c_strain = add("contract_strain", (5,), "contract strain one-hot C D H S NT (zeros: no contract yet)")
        self.o_c_value = add("contract_value", (1,), "contract value b / value_scale (score-sheet units)",
                             unit=1.0 / self.value_scale)
        self.o_c_kind = add("contract_kind", (len(CONTRACT_KINDS),), "contract kind one-hot: "
                            + ", ".join(CONTRACT_KINDS))
        self.o_c_seat = add("declarer", (n,), "relative seat of the bidder / taker")
        # ---- play
        if info:
            slot = 32 + n
            self.o_seq = add("play_sequence", (cfg.num_tricks * n, slot),
                             f"k-th card played: card one-hot (32) then relative seat one-hot ({n})")
        self.o_leader = add("trick_leader", (n,), "relative seat that led the current trick (zeros if empty)")
        self.o_trick_no = add("trick_no", (cfg.num_tricks + 1,), "tricks completed so far, one-hot")
        self.o_tricks = add("tricks_won", (2,), "tricks won per relative side / num_tricks",
                            unit=1.0 / cfg.num_tricks)
        self.o_points = add("points", (2,), "raw card points won per relative side / 162", unit=1.0 / RAW_TOTAL)
        if voids:
            self.o_voids = add("voids", (n, 4), "1 where relative seat r has shown it holds no card of suit "
                               "C D H S: it did not follow that suit when led, or (trump) neither followed nor "
                               "ruffed when rules.md 1.3 made it ruff with any trump it held")
        # ---- declarations
        if decl:
            self.o_announced = add("announced", (n, 6), "announcement of relative seat r: not yet, none, terz, "
                                   "50, 100, carre")
            self.o_claim_cls = add("own_claim_class", (5,), "class of own claim one-hot: none (no claim), terz, "
                                   "50, 100, carre")
            self.o_show_value = add("own_show_value", (1,), "raw value of own show set / 100",
                                    high=4.0, unit=0.1)
        if manual:
            self.n_events = n * (1 + n // 2)
            self.o_events = add("height_events", (self.n_events, n + 4 + 8),
                                "height exchange in order: relative seat one-hot, step one-hot (height, "
                                "height trump, concede, reveal), stated top rank one-hot 7..A")
            self.o_conceded = add("conceded", (n,), "1 if relative seat r conceded its claim")
            self.o_decided = add("decided", (n, 3), "show decision of relative seat r: undecided, noshow, show")
            self.o_decl_leader = add("decl_leader", (n,), "relative seat whose claim leads after trick 1")
        if cfg.auction == "open":
            self.o_hidden = add("hidden_counts", (n,), "face-down cards of relative seat r / 8", unit=1.0 / 8)
        # ---- turn
        self.o_phase = add("phase", (3,), "phase one-hot: auction, play, done")
        self.o_to_act = add("to_act", (n,), "relative seat to act (zeros when the deal is over)")
        if decl:
            self.o_step = add("pending_step", (4,), "pending declaration step of the seat to act: announce, "
                              "height, answer, show")
        self.o_dealer = add("dealer", (n,), "relative seat of the dealer")
        if self.match:
            self.o_match = add("match_score", (2,), "match totals per relative side before this deal / target "
                               "(capped at 10)", high=10.0, unit=float("nan"))
            self.o_to_go = add("match_to_go", (2,), "max(target - total, 0) / target per relative side",
                               unit=float("nan"))
        self.size: int = self.size_so_far
        del self.size_so_far
        self.quantum = self._quantum()
        """``float32[D]``: every entry is an integer multiple ``q * quantum`` with ``0 <= q <= 255``
        (1 for the one-hot and bitmask entries; 1/162 for points, 1/num_tricks for tricks,
        1/value_scale for contract and bid values, 1/10 for show values and pass counts, 1/8
        for hidden counts), so :meth:`quantize` is exact. NaN for the match pieces (not
        integral)."""
        self._rel = tuple(tuple((s - me) % n for s in range(n)) for me in range(n))
        self._plus_info = info
        self._voids = voids

    # ------------------------------------------------------------------ encode
    def encode(self, view: SeatView, match: Sequence[int] | None = None) -> np.ndarray:
        """The ``float32[D]`` encoding of ``view`` (D = ``self.size``), egocentric to ``view.seat``.

        Args:
            view: the observer's :class:`SeatView`.
            match: with ``match=True`` at construction, the match totals per absolute side
                (team ``seat % 2``) before this deal, in score-sheet units; ``None`` encodes 0.
        """
        n = self.n
        cfg = self.cfg
        rel = self._rel[view.seat]
        obs = np.zeros(self.size, dtype=np.float32)
        one: list[int] = []
        # card masks
        played = [0] * n
        seq = self._plus_info
        if seq:
            o_seq, slot = self.o_seq, 32 + n
            for k, (s, c) in enumerate(view.plays):
                played[rel[s]] |= 1 << c
                base = o_seq + k * slot
                one.append(base + c)
                one.append(base + 32 + rel[s])
        else:
            for s, c in view.plays:
                played[rel[s]] |= 1 << c
        trick = [0] * n
        for s, c in zip(view.trick_seats, view.trick):
            trick[rel[s]] = 1 << c
        masks = [view.hand, *played, *trick]
        if view.trick_seats:
            one.append(self.o_leader + rel[view.trick_seats[0]])
        decl = cfg.declarations in ("manual", "announce")
        if decl:
            shown = [0] * n
            for s in range(n):
                shown[rel[s]] = view.shown[s]
            masks += shown
            oc = view.own_claim
            masks.append(oc.mask if oc is not None else 0)
            m = 0
            for cb in view.own_show_set:
                m |= cb.mask
            masks.append(m)
        if cfg.auction == "open":
            fu = [0] * n
            for s in range(len(view.face_up)):
                fu[rel[s]] = view.face_up[s]
            masks += fu
        if cfg.auction == "duel":
            masks.append(1 << view.open_card if view.open_card >= 0 else 0)
        obs[:32 * len(masks)] = np.unpackbits(np.array(masks, dtype="<u4").view(np.uint8), bitorder="little")

        # auction
        feats = self._call_feats
        high_pos = self._high_pos
        high, high_seat = -1, -1
        if seq:
            grid = self._grid_ids
            width = len(grid)
            passes = [0] * n
            o = self.o_auction
            for s, a in view.calls:
                g = grid.get(a)
                if g is None:
                    passes[rel[s]] += 1
                else:
                    one.append(o + rel[s] * width + g)
                    if a in high_pos:
                        high, high_seat = a, s
            for r in range(n):
                if passes[r]:
                    obs[self.o_passes + r] = passes[r] / 10.0
        else:
            last = [-1] * n
            for s, a in view.calls:
                last[rel[s]] = a
                if a in high_pos:
                    high, high_seat = a, s
            w = self._call_feat_size
            for r in range(n):
                if last[r] >= 0:
                    base = self.o_last_call + r * w
                    for i, v in feats[last[r]]:
                        obs[base + i] = v
        if high >= 0:
            one.append(self.o_high + high_pos[high])
            one.append(self.o_high_seat + rel[high_seat])
        one.append(self.o_double + view.double)
        # contract
        if view.contract_seat >= 0:
            one.append(self.o_c_strain + view.contract_strain)
            obs[self.o_c_value] = view.contract_value / self.value_scale
            one.append(self.o_c_kind + CONTRACT_KINDS.index(view.contract_kind))
            one.append(self.o_c_seat + rel[view.contract_seat])
        # play
        one.append(self.o_trick_no + min(view.trick_no, cfg.num_tricks))
        tw = [0, 0]
        pw = [0, 0]
        for s in range(n):
            side = rel[s] & 1
            tw[side] += view.tricks[s]
            pw[side] += view.points[s]
        obs[self.o_tricks] = tw[0] / cfg.num_tricks
        obs[self.o_tricks + 1] = tw[1] / cfg.num_tricks
        obs[self.o_points] = pw[0] / RAW_TOTAL
        obs[self.o_points + 1] = pw[1] / RAW_TOTAL
        if self._voids:
            for s, suit in shown_voids(cfg, view.plays, view.contract_strain):
                one.append(self.o_voids + rel[s] * 4 + suit)
        # declarations
        if decl:
            for s in range(n):
                one.append(self.o_announced + rel[s] * 6 + view.announced[s] + 1)
            if view.own_claim is not None:
                one.append(self.o_claim_cls + view.own_claim.cls)
            if view.own_show_set:
                obs[self.o_show_value] = sum(cb.value for cb in view.own_show_set) / 100.0
            if view.step >= 0:
                one.append(self.o_step + view.step)
        if cfg.declarations == "manual":
            w = n + 12
            for k, (s, step, top) in enumerate(view.events[:self.n_events]):
                base = self.o_events + k * w
                one.append(base + rel[s])
                one.append(base + n + step)
                if top >= 0:
                    one.append(base + n + 4 + top)
                if step == EVENT_CONCEDE:
                    one.append(self.o_conceded + rel[s])
            for s in range(n):
                one.append(self.o_decided + rel[s] * 3 + view.decided[s] + 1)
            if view.decl_leader >= 0:
                one.append(self.o_decl_leader + rel[view.decl_leader])
        if cfg.auction == "open":
            for s in range(len(view.hidden_counts)):
                obs[self.o_hidden + rel[s]] = view.hidden_counts[s] / 8.0
        # turn
        one.append(self.o_phase + int(view.phase))
        if view.to_act >= 0:
            one.append(self.o_to_act + rel[view.to_act])
        one.append(self.o_dealer + rel[view.dealer])
        if self.match:
            pieces = self.match_pieces(match)[view.seat & 1]
            obs[self.o_match:self.o_match + 2] = pieces[:2]
            obs[self.o_to_go:self.o_to_go + 2] = pieces[2:]
        obs[one] = 1.0
        return obs

    # ------------------------------------------------------------------ quantized form
    def _quantum(self) -> np.ndarray:
        q = np.ones(self.size, dtype=np.float64)
        for p in self.pieces:
            q[p.offset:p.offset + p.size] = p.unit
            if p.name == "last_call":  # the value column of each relative seat's slot: value / value_scale
                k0 = len(self._call_kinds)
                q[p.offset + k0:p.offset + p.size:self._call_feat_size] = 1.0 / self.value_scale
        return q.astype(np.float32)

    def quantize(self, obs: np.ndarray) -> np.ndarray:
        """``uint8[..., D]``: the integer numerators ``round(obs / quantum)`` of an encoding
        (``float32[..., D]`` from :meth:`encode`); what ``BatchedEngine(obs_dtype="uint8")``
        writes. ``numerators * quantum`` gives the values back (to float32 rounding).

        Raises:
            ValueError: an encoder built with ``match=True`` (match totals are not integral), or
                an entry that is not a multiple of its quantum in 0..255 (the piece is named).
        """
        if self.match:
            raise ValueError("the match pieces have no quantized form; use match=False")
        x = np.asarray(obs, dtype=np.float64)
        q = x / self.quantum
        r = np.rint(q)
        bad = (np.abs(q - r) > 1e-3) | (r < 0) | (r > 255)
        if bad.any():
            i = int(np.flatnonzero(bad.reshape(-1, self.size).any(axis=0))[0])
            p = next(p for p in self.pieces if p.offset <= i < p.offset + p.size)
            raise ValueError(f"observation entry {i} (piece {p.name!r}) is not an integer multiple 0..255 of its "
                             f"quantum {float(self.quantum[i]):g}")
        return r.astype(np.uint8)

    def match_pieces(self, match: Sequence[int] | None) -> np.ndarray:
        """``float32[2, 4]``: the match pieces of an observation, per observer side (row
        ``seat % 2``): ``match_score`` for the observer's side and the other (totals / target,
        capped at 10), then ``match_to_go`` (what is left to the target / target).

        ``match``: the match totals per absolute side (``None``: no deal played yet, both 0).
        :meth:`encode` writes these values; the compiled deal appends them to its per-deal
        observation (:class:`blot_env.batched.deal_row.DealRow`).
        """
        totals = (0, 0) if match is None else match
        t = float(self.cfg.target)
        out = np.zeros((2, 4), np.float32)
        for me in (0, 1):
            for side in (0, 1):
                tot = totals[me ^ side]
                out[me, side] = min(tot / t, 10.0)
                out[me, 2 + side] = max(t - tot, 0.0) / t
        return out

    # ------------------------------------------------------------------ helpers
    def upper_bounds(self) -> np.ndarray:
        """``float32[D]`` upper bounds of the entries (lower bounds are 0), for a ``Box`` space."""
        out = np.ones(self.size, dtype=np.float32)
        for p in self.pieces:
            out[p.offset:p.offset + p.size] = p.high
        return out

    def piece(self, name: str) -> Piece:
        """The piece called ``name``. Raises KeyError if this encoder has none."""
        for p in self.pieces:
            if p.name == name:
                return p
        raise KeyError(f"no observation piece {name!r}; pieces: {[p.name for p in self.pieces]}")

    def bid_label(self, action: int) -> str:
        """The action string of auction action ``action``, with the score unit appended to the
        bids (``bid 16H@tp``, ``bid 80C@raw``, ``bid kaput S@tp``): a bid means the same in two
        presets only in the same unit (bazar bids table points, belote raw points, rules.md 2.2, 6)."""
        from .scoring import score_unit

        s = self.layout.strings[action]
        return f"{s}@{score_unit(self.cfg)}" if self.layout.block_of[action] in _HIGH_BLOCKS else s

    def feature_labels(self) -> list[tuple[str, float]]:
        """What each of the D columns means, as ``(label, divisor)`` pairs (``list`` of length D).

        The column holds a quantity divided by ``divisor`` (1 for one-hot and bitmask entries;
        ``num_tricks`` for ``tricks_won``, ``value_scale`` for bid and contract values, 162 for
        ``points``; the match pieces are taken as the fractions of the target they are). Two
        encoders whose columns share a label encode the same quantity of the same relative seat,
        card, call or count, so a weight row moves between them times ``divisor_new / divisor_old``
        (agents/ppo/transfer.py). Labels are ``piece[index]`` for the pieces whose layout is
        fixed, and name the call for the layout-dependent ones: ``last_call[r]:kind=BID``,
        ``last_call[r]:value@tp``, ``last_call[r]:strain=2``, ``standing_bid:bid 16H@tp``,
        ``auction_calls[r]:contra``, ``contract_value@raw``; bids carry their score unit
        (:meth:`bid_label`)."""
        from .scoring import score_unit

        unit = score_unit(self.cfg)
        fixed = {"tricks_won": float(self.cfg.num_tricks), "points": RAW_TOTAL, "own_show_value": 100.0,
                 "auction_passes": 10.0, "hidden_counts": 8.0}
        out: list[tuple[str, float]] = []
        for p in self.pieces:
            if p.name == "last_call":
                k0, keep = len(self._call_kinds), self._call_feat_size > len(self._call_kinds) + 6
                cols = ([f"kind={k}" for k in self._call_kinds] + [f"value@{unit}"]
                        + [f"strain={s}" for s in range(5)] + (["keep"] if keep else []))
                out += [(f"last_call[{r}]:{c}", self.value_scale if i == k0 else 1.0)
                        for r in range(self.n) for i, c in enumerate(cols)]
            elif p.name == "standing_bid":
                ids = sorted(self._high_pos, key=self._high_pos.get)
                out += [(f"standing_bid:{self.bid_label(a)}", 1.0) for a in ids]
            elif p.name == "auction_calls":
                ids = sorted(self._grid_ids, key=self._grid_ids.get)
                out += [(f"auction_calls[{r}]:{self.bid_label(a)}", 1.0) for r in range(self.n) for a in ids]
            elif p.name == "contract_value":
                out.append((f"contract_value@{unit}", self.value_scale))
            else:
                d = fixed.get(p.name, 1.0)
                out += [(f"{p.name}{list(map(int, np.unravel_index(i, p.shape)))}", d) for i in range(p.size)]
        return out

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """``{piece name: obs[offset:offset+size] reshaped to the piece's shape}`` (for debugging)."""
        return {p.name: np.asarray(obs[p.offset:p.offset + p.size]).reshape(p.shape) for p in self.pieces}


def shown_voids(cfg: RulesConfig, plays: Sequence[tuple[int, int]], strain: int) -> set[tuple[int, int]]:
    """The ``(seat, suit)`` pairs the public play proves void (rules.md 1.3), absolute seats.

    ``plays``: ``(seat, card)`` in play order, each trick ``cfg.num_players`` consecutive plays;
    ``strain``: the contract's strain (0..3, or ``NT`` = 4; no contract, -1: the empty set). A
    seat that plays another suit to a trick led in suit L holds no L. In a trump contract, a
    seat that plays neither L nor a trump holds no trump when 1.3 made it ruff with any trump
    it held: its partner (4 players, knob ``partner_exemption``) was not winning the trick, and
    either no trump was in the trick yet, or ``undertrump`` is ``"forced"``, or every trump of
    the deck below the trick's highest had been played already (with a free undertrump a
    discard otherwise shows only that no trump could over-ruff, which this does not record).
    The inverse of ``play.legal_cards``; tests/test_observation.py
    (``test_voids_are_what_the_duties_of_1_3_prove``) holds the two together, and
    ``blot_env/batched/_obs.py`` is the compiled twin.

    Returns:
        the set of ``(seat, suit)``, seat 0..n-1 and suit 0..3 (C D H S).

    Raises:
        ConfigError: ``cfg`` is an ``open`` game, whose duties bind the face-up cards only, so
            its play proves nothing of the face-down ones (rules.md 5.3).
        ValueError: ``strain`` outside -1..4.
    """
    if cfg.auction == "open":
        raise ConfigError("shown_voids: in open (auction='open') the duties bind the face-up cards only, rules.md 5.3")
    if not -1 <= strain <= NT:
        raise ValueError(f"strain must be -1 (no contract), 0..3 or NT=4, got {strain}")
    if strain < 0:
        return set()
    n = cfg.num_players
    exempt_ok = cfg.partner_exemption and n == 4
    forced = cfg.undertrump == "forced"
    trump_game = strain != NT
    deck = SHORT_DECK if cfg.short_deck else FULL_DECK
    out: set[tuple[int, int]] = set()
    led = best = best_seat = 0
    top = -1  # TRUMP_ORDER of the highest trump in the trick, -1: none
    seen = 0  # cards played before this play
    for k, (seat, card) in enumerate(plays):
        suit = card >> 3
        if k % n == 0:
            led, best, best_seat, top = suit, strength(card, suit, strain), seat, -1
        elif suit != led:
            out.add((seat, led))
            partner_wins = exempt_ok and (best_seat - seat) % n == 2
            if trump_game and suit != strain and not partner_wins:
                unseen = deck & ~seen
                lower_out = top >= 0 and not forced and any(
                    TRUMP_ORDER[r] < top and unseen >> (strain * 8 + r) & 1 for r in range(8))
                if not lower_out:
                    out.add((seat, strain))
        st = strength(card, led, strain)
        if st > best:
            best, best_seat = st, seat
        if trump_game and suit == strain:
            top = max(top, TRUMP_ORDER[card & 7])
        seen |= 1 << card
    return out


def privileged_size(num_players: int) -> int:
    """P, the length of :func:`privileged_features`: 32 cards per seat, then the stock."""
    return 32 * num_players + 32


def privileged_features(state: State, seat: int) -> np.ndarray:
    """``uint8[P]`` (P = :func:`privileged_size`): what ``seat`` cannot see, egocentric: for each
    relative seat ``r`` the 32-card mask of the cards seat ``(seat + r) % n`` holds now (``r = 0``
    is the seat's own hand), then the cards still in the stock.

    **Hidden information**, read from a :class:`~blot_env.state.State` (not a SeatView): for a
    critic that sees all hands during training (PerfectDou's scheme), or for the hands of a
    sampled world. A policy must never read it. The compiled twin is
    ``BatchedEngine.privileged`` (tested equal in tests/test_ppo_leaks.py).
    """
    n = state.cfg.num_players
    out = np.zeros(privileged_size(n), dtype=np.uint8)
    bits = np.arange(32)
    for r in range(n):
        out[32 * r:32 * r + 32] = (state.hands[(seat + r) % n] >> bits) & 1
    for c in state.stock:
        out[32 * n + c] = 1
    return out


def observation_layout_markdown(cfg: RulesConfig, kind: str = "observation", match: bool = False) -> str:
    """The Markdown table of the layout (piece, offsets, shape, description), from the encoder's pieces."""
    enc = ObservationEncoder(cfg, kind, match=match)
    lines = [f"D = {enc.size} (`{kind}`{', match' if match else ''})", "",
             "| piece | offset | size | shape | range | description |", "|---|---|---|---|---|---|"]
    for p in enc.pieces:
        shape = "x".join(str(d) for d in p.shape)
        rng = f"0..{p.high:g}"
        lines.append(f"| `{p.name}` | {p.offset} | {p.size} | {shape} | {rng} | {p.description} |")
    return "\n".join(lines) + "\n"


__all__ = ["CONTRACT_KINDS", "KINDS", "ObservationEncoder", "Piece", "observation_layout_markdown",
           "privileged_features", "privileged_size", "shown_voids"]
