"""Double-dummy solver on the deal-score objective, for every preset.

``solve(state)`` takes any play-phase :class:`~blot_env.state.State` (all hands known) and
returns the exact minimax value of the deal's final score difference for the side to move
(its score minus the other side's, in score-sheet units: table points for the Armenian
presets, raw points for belote, rules.md 2.5, 3-6), and the value of each legal action.

How the score objective is searched (docs/search.md has the argument):

* The kernel (:mod:`agents.search._kernel`, numba) computes the minimax of the **outcome
  code** ``X = 3 * p0 + c`` of team 0: ``p0`` its raw card points at the end of the deal,
  ``c`` 2 if it took every trick, 0 if team 1 did, 1 otherwise (and after an early kaput
  stop).
* Once the combinations that will count are fixed, the deal score is a non-decreasing
  function ``F`` of ``X`` for team 0 (checked for every preset by the tests), so
  ``minimax F(X) = F(minimax X)``: made/failed thresholds, rounding, capot and kaput stops
  all live in the table ``F`` (:func:`leaf_table`), built by :func:`leaf_scores`, which is
  tested against :func:`blot_env.scoring.score_deal` on finished deals of every preset.
* Declaration decisions still to come are taken by a fixed policy (:func:`policy_action`):
  announce the highest class held, state a plain height, reveal when asked, always show.
  Decisions already taken are part of the state. A decision pending at the root is solved
  as a choice: each legal declaration action gets its own value.
* With that policy the counted combinations are fixed by the position, except after the
  declaration leader's ``noshow`` in trick 2 (pass-on rights, rules.md 2.4.3 items 6-7):
  then the order of trick 3 matters, so the solver enumerates the rest of trick 2 in
  Python and runs the kernel from the end of trick 2.

Errors: ``ValueError`` when the state is not in the play phase.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from blot_env.actions import layout_for
from blot_env.cards import (
    DEAL_POINTS,
    LAST_TRICK_BONUS,
    NT,
    PLAIN_ORDER,
    TRUMP_ORDER,
    card_points,
    cards_of,
)
from blot_env.declarations import announce_classes
from blot_env.engine import apply_action, current_seat, legal_actions, legal_cards_mask
from blot_env.rules_config import RulesConfig
from blot_env.scoring import combination_tally, score_deal, score_outcome
from blot_env.state import Contract, Phase, State, Step

from . import _kernel as K

TT_BITS = 18
#: rows of the kernel's per-ply buffers: more than the 32 plies of a 16-trick deal
MAX_PLIES = 48
#: outcome codes X run over 0 .. 3 * 162 + 2
X_SIZE = 3 * DEAL_POINTS + 3


# ---------------------------------------------------------------------------- declaration policy


def policy_action(state: State) -> int:
    """The fixed choice for a pending declaration step (the solver's policy for future steps).

    ANNOUNCE: the highest class held (rules.md 2.4.3 item 1); HEIGHT: a plain height;
    ANSWER: reveal; SHOW: show.
    """
    lay = layout_for(state.cfg)
    kind, seat = state.pending[0]
    if kind == Step.ANNOUNCE:
        return lay.announce_id(max(announce_classes(state, seat)))
    if kind == Step.HEIGHT:
        return lay.id("HEIGHT")
    if kind == Step.ANSWER:
        return lay.id("REVEAL")
    return lay.id("SHOW")


def advance_declarations(state: State) -> State:
    """Apply :func:`policy_action` while a declaration step is pending."""
    while state.pending and state.phase == Phase.PLAY:
        state = apply_action(state, policy_action(state))
    return state


def _pass_on_open(state: State) -> bool:
    """True when the leader's ``noshow`` left rights whose use depends on trick-3 order."""
    cfg = state.cfg
    if cfg.declarations != "manual" or state.trick_no > 1:
        return False
    d = state.decl
    if d is None or d.leader < 0 or d.decided[d.leader] != 0:
        return False
    lt = d.leader % 2
    return any(q % 2 != lt and d.announced[q] > 0 and d.decided[q] == -1 for q in range(state.n))


def _decl_final(state: State) -> State:
    """A state whose declaration record is final under the policy (cards played: the lowest legal).

    Only valid when the counted combinations no longer depend on the play (see
    :func:`_pass_on_open`).
    """
    cfg = state.cfg
    if cfg.declarations == "auto":
        return state
    d = state.decl
    if cfg.declarations == "manual":
        if state.trick_no >= 3 and not state.pending:
            return state
        if state.trick_no >= 1 and all(a == 0 for a in d.announced):
            return state
    elif state.trick_no >= 1 and not state.pending:
        return state
    lay = layout_for(cfg)
    s = state
    limit = 3 if cfg.declarations == "manual" else 1
    while s.phase == Phase.PLAY and (s.trick_no < limit or s.pending):
        if s.pending:
            s = apply_action(s, policy_action(s))
        else:
            s = apply_action(s, lay.play_id(cards_of(legal_cards_mask(s))[0]))
    return s


@dataclass(frozen=True)
class ComboInfo:
    """What counts beside the cards, per seat, in score-sheet units (tp; raw in belote).

    ``combos[s]``: counted combinations of seat s; ``blots[s]``: its blot; ``undealt``: raw
    points of the cards never dealt (duels, rules.md 3-4); ``total``: raw points the tricks
    hold in a full deal (162 minus ``undealt``, last-trick 10 included).
    """

    combos: tuple[int, ...]
    blots: tuple[int, ...]
    undealt: int
    total: int


def combo_info(state: State) -> ComboInfo:
    """The :class:`ComboInfo` of a play-phase or finished state whose declarations are final."""
    cfg = state.cfg
    strain = state.contract.strain
    comb, blt = combination_tally(state)
    held = 0
    for h in state.play_hands:
        held |= h
    total = sum(card_points(c, strain) for c in cards_of(held)) + LAST_TRICK_BONUS
    undealt = DEAL_POINTS - total if cfg.scoring == "duel" else 0
    return ComboInfo(comb, blt, undealt, total)


# ---------------------------------------------------------------------------- leaf evaluator


def leaf_scores(cfg: RulesConfig, c: Contract, info: ComboInfo, p0: int, code: int) -> tuple[int, int]:
    """Deal score per side from team 0's raw card points ``p0`` and capot code ``code``.

    ``code``: ``K.CODE_SWEEP0`` team 0 took every trick, ``K.CODE_SWEEP1`` team 1 did,
    ``K.CODE_PLAIN`` otherwise. The deal's tally built from the code goes through
    :func:`blot_env.scoring.score_outcome`, the formulas ``score_deal`` applies (rules.md 2.5,
    3, 4, 5.5, 6); ``tests/test_solver.py`` checks the result against ``score_deal`` on
    finished deals of every preset.
    """
    swept = (code == K.CODE_SWEEP0, code == K.CODE_SWEEP1)
    return score_outcome(cfg, c, swept, (p0, info.total - p0), info.combos, info.blots, info.undealt)[2]


@lru_cache(maxsize=4096)
def leaf_table(cfg: RulesConfig, c: Contract, info: ComboInfo) -> np.ndarray:
    """``int64[X_SIZE]``: team 0's score minus team 1's for each final outcome code ``X``.

    Codes that cannot occur (a capot with points left to the other side) get the value of
    the same points without the capot, so that the table stays non-decreasing.
    """
    out = np.zeros(X_SIZE, dtype=np.int64)
    for x in range(X_SIZE):
        p0, code = divmod(x, 3)
        if p0 > info.total:
            p0, code = info.total, K.CODE_SWEEP0
        elif code == K.CODE_SWEEP0 and p0 != info.total:
            code = K.CODE_PLAIN
        if code == K.CODE_SWEEP1 and p0 != 0:
            code = K.CODE_PLAIN
        s0, s1 = leaf_scores(cfg, c, info, p0, code)
        out[x] = s0 - s1
    out.setflags(write=False)
    return out


# ---------------------------------------------------------------------------- kernel driver


@lru_cache(maxsize=8)
def _tables(strain: int) -> tuple[np.ndarray, ...]:
    pts = np.array([card_points(c, strain) for c in range(32)], dtype=np.int64)
    tstr = np.array([16 + TRUMP_ORDER[c & 7] if strain != NT and c >> 3 == strain else 0 for c in range(32)],
                    dtype=np.int64)
    pstr = np.array([8 + PLAIN_ORDER[c & 7] for c in range(32)], dtype=np.int64)
    desc = np.zeros((2, 8), dtype=np.int64)
    desc[0] = sorted(range(8), key=lambda r: -PLAIN_ORDER[r])
    desc[1] = sorted(range(8), key=lambda r: -TRUMP_ORDER[r])
    above = np.zeros(8, dtype=np.int64)
    for o in range(8):
        above[o] = sum(1 << r for r in range(8) if TRUMP_ORDER[r] > o)
    return pts, tstr, pstr, desc, above


class _TT:
    """The transposition table, shared by the solves of one process (a new generation each).

    ``table[i] = (key, lo | hi << 16 | (best card + 1) << 32 | generation << 40)``: one
    16-byte entry per slot, so a probe touches one cache line; ``key`` is
    :func:`agents.search._kernel._key` (64 bits: positions that differ only in which
    zero-point cards remain share it).
    """

    def __init__(self, bits: int = TT_BITS):
        self.bits = bits
        self.table = np.full((1 << bits, 2), -1, dtype=np.int64)
        self.gen = 0
        self.epoch = 0
        self.moves = np.zeros((MAX_PLIES, 16), dtype=np.int64)
        self.scores = np.zeros((MAX_PLIES, 16), dtype=np.int64)
        self.saved = np.zeros((MAX_PLIES, 10), dtype=np.int64)
        self.frames = np.zeros((11, MAX_PLIES), dtype=np.int64)  # the search's per-ply frames

    def next_gen(self) -> int:
        """The generation tag of a new solve (bits 40..49 of the value word). After 1023 tags the
        table is cleared and the tags start again (``epoch`` counts the restarts)."""
        self.gen += 1
        if self.gen >= 1 << 10:
            self.table.fill(-1)
            self.gen = 1
            self.epoch += 1
        return self.gen


_TT_SINGLETON: _TT | None = None


def _tt() -> _TT:
    global _TT_SINGLETON
    if _TT_SINGLETON is None:
        _TT_SINGLETON = _TT()
    return _TT_SINGLETON


@dataclass
class SearchStats:
    """Counters of the last kernel call of this process (:func:`card_codes`,
    :func:`card_scores`, :func:`position_code`); ``scripts/bench_solver.py --json`` prints them.

    ``nodes``: nodes visited; ``by_trick``: of those, per trick index (``_endgame2`` counts
    one node per call); ``boundary``: nodes at a trick boundary given the cheap bounds;
    ``bound_cuts``: of those, ended by a bound; ``tt_found``: table entries found;
    ``tt_cuts``: of those, entries that ended the node; ``cutoffs`` and ``cut_move_sum``:
    nodes that cut and the sum of the (0-based) move numbers that cut; ``searches``:
    null-window searches from the root (:func:`card_scores`; 0 for the other calls).
    """

    nodes: int = 0
    by_trick: tuple[int, ...] = ()
    boundary: int = 0
    bound_cuts: int = 0
    tt_found: int = 0
    tt_cuts: int = 0
    cutoffs: int = 0
    cut_move_sum: int = 0
    searches: int = 0


LAST = SearchStats()


def _record(ST: np.ndarray, tricks: int) -> None:
    LAST.nodes = int(ST[4])
    LAST.by_trick = tuple(int(x) for x in ST[16:16 + tricks])
    LAST.boundary = int(ST[9])
    LAST.bound_cuts = int(ST[10] + ST[11])
    LAST.tt_found = int(ST[12])
    LAST.tt_cuts = int(ST[13])
    LAST.cutoffs = int(ST[6])
    LAST.cut_move_sum = int(ST[7])
    LAST.searches = int(ST[14])


def _arrays(state: State):
    cfg = state.cfg
    n = state.n
    strain = state.contract.strain
    H = np.zeros(4, dtype=np.int64)
    CV = np.zeros(4, dtype=np.int64)
    for s in range(n):
        H[s] = state.hands[s]
        if state.face_down:
            CV[s] = state.face_down[s]
    UNDER = np.zeros(32, dtype=np.int64)
    if state.piles:
        for pile in state.piles:
            for i in range(0, len(pile), 2):
                UNDER[pile[i + 1]] = 1 << pile[i]
        # a bottom already uncovered no longer matters; a played top has left the hand
    TR = np.zeros(4, dtype=np.int64)
    for i, c in enumerate(state.trick):
        TR[i] = c
    flags = 0
    for s in range(n):
        if state.tricks[s]:
            flags |= 1 << (s % 2)
    tt = _tt()
    pts, tstr, pstr, desc, above = _tables(strain)
    ST = np.zeros(32, dtype=np.int64)
    ST[0] = state.leader
    ST[1] = len(state.trick)
    ST[2] = state.trick_no
    ST[3] = flags
    ST[5] = tt.next_gen()
    ST[8] = sum(pts[c] for s in range(n) for c in cards_of(state.hands[s]))
    c = state.contract
    P = np.zeros(9, dtype=np.int64)
    P[0] = n
    P[1] = strain
    P[2] = 1 if cfg.partner_exemption and n == 4 else 0
    P[3] = 1 if cfg.undertrump == "free" else 0
    P[4] = cfg.num_tricks
    P[5] = (1 - c.seat % 2) if c.is_kaput else -1
    P[6] = tt.bits
    P[8] = 0 if state.piles else 1
    return (H, CV, UNDER, TR, ST, P, pts, tstr, pstr, desc, above, tt.moves, tt.scores, tt.saved, tt.table,
            tt.frames)


def card_codes(state: State, cards: list[int] | None = None) -> dict[int, int]:
    """Kernel values: for each legal card (or ``cards``), the exact minimax outcome code ``V``
    of the rest of the deal after it (``X = 3 * team-0 points so far + V``), full windows."""
    if cards is None:
        cards = cards_of(legal_cards_mask(state))
    args = _arrays(state)
    arr = np.array(cards, dtype=np.int64)
    out = np.zeros(len(cards), dtype=np.int64)
    K.root_values(*args, arr, out)
    _record(args[4], state.cfg.num_tricks)
    return {c: int(v) for c, v in zip(cards, out)}


def _steps(table: np.ndarray, past: int) -> np.ndarray:
    """``V`` thresholds where ``table[past + V]`` changes (``int64[L]``, ascending)."""
    seg = table[past:]
    return (np.flatnonzero(seg[1:] != seg[:-1]) + 1).astype(np.int64)


def _root_order(args, cards: list[int]) -> tuple[list[int], dict[int, int]]:
    """The kernel's move order at the root and, for each legal card, the card it is
    equivalent to (same suit and points, nothing in play between: the same value)."""
    mv = args[11]
    cnt = K._gen_moves(*args[:13], 0, -1)
    reps = [int(c) for c in mv[0, :cnt]]
    rep_set = set(reps)
    same: dict[int, int] = {}
    H, TR, ST, P, PTS, DESC = args[0], args[3], args[4], args[5], args[6], args[9]
    present = 0
    for s in range(int(P[0])):
        present |= int(H[s])
    for i in range(int(ST[1])):
        present |= 1 << int(TR[i])
    legal = set(cards)
    for su in range(4):
        row = 1 if su == int(P[1]) else 0
        prev = -1
        for k in range(8):
            c = su * 8 + int(DESC[row, k])
            if not present >> c & 1:
                continue
            if c in rep_set:
                prev = c
            elif c in legal and prev >= 0 and PTS[c] == PTS[prev]:
                same[c] = prev
            else:
                prev = -1
    for c in cards:
        if c not in rep_set and c not in same:  # not merged by the kernel: search it as well
            reps.append(c)
            rep_set.add(c)
    return reps, same


def card_scores(state: State, table: np.ndarray, cards: list[int] | None = None) -> dict[int, int]:
    """Per card: ``table[X]`` of the minimax outcome after it, found with null-window searches
    at the thresholds of ``table`` only (cheaper than exact codes; same score). Cards are
    searched in the kernel's move order; a card equivalent to one already searched gets its
    value."""
    if cards is None:
        cards = cards_of(legal_cards_mask(state))
    past = _past_code(state)
    steps = _steps(table, past)
    args = _arrays(state)
    order, same = _root_order(args, cards)
    arr = np.array(order, dtype=np.int64)
    out = np.zeros(len(order), dtype=np.int64)
    K.root_levels(*args, arr, steps, out)
    _record(args[4], state.cfg.num_tricks)
    got = {c: int(table[past + (steps[k - 1] if k > 0 else 0)]) for c, k in zip(order, out)}
    return {c: got[same.get(c, c)] for c in cards}


def position_code(state: State) -> int:
    """Kernel minimax outcome code ``V`` of a position with no pending step (full window)."""
    args = _arrays(state)
    v = K.search(*args, 0, -K.INF, K.INF)
    _record(args[4], state.cfg.num_tricks)
    return int(v)


class CodeBounds:
    """Score tables read at a position's minimax outcome code, searching only as far as needed.

    ``lookup(table, past)`` returns ``table[past + V]``: ``V`` is the exact minimax outcome
    code of the position (what :func:`position_code` computes with a full window: 3 x the
    raw card points team 0 wins from here on, plus the capot code 0/1/2), ``past`` is 3 x
    team 0's raw card points already won (:func:`_past_code`; 0 at the first lead), and
    ``table`` is an ``int64[X_SIZE]`` table such as :func:`leaf_table`'s. It keeps an
    interval ``lo <= V <= hi`` and narrows it with null-window searches at the steps of
    ``table`` inside it, until ``table`` is constant there. Later lookups of other tables
    (another contract level, contra) start from the narrowed interval, so a bidding
    evaluation that reads many tables of one position costs a few null-window searches
    instead of one full-window search.

    Attributes: ``lo``, ``hi`` (the interval, outcome-code units) and ``nodes`` (kernel
    nodes searched so far).

    Args:
        state: a play-phase state with no pending declaration step.

    Raises:
        ValueError: the state is not in the play phase or has a pending step.
    """

    def __init__(self, state: State):
        if state.phase != Phase.PLAY or state.pending:
            raise ValueError("CodeBounds needs a play-phase state with no pending step "
                             f"(phase {state.phase.name}, pending {list(state.pending)})")
        self._args = _arrays(state)
        self._epoch = _tt().epoch
        ST, PTS, TR = self._args[4], self._args[6], self._args[3]
        left = int(ST[8]) + sum(int(PTS[TR[i]]) for i in range(int(ST[1]))) + LAST_TRICK_BONUS
        self.lo = 0
        self.hi = 3 * left + 2
        self.nodes = 0

    def at_least(self, t: int) -> bool:
        """Whether ``V >= t``; narrows the interval with the fail-soft bound the search returns."""
        if t <= self.lo:
            return True
        if t > self.hi:
            return False
        ST = self._args[4]
        tt = _tt()
        if tt.epoch != self._epoch:  # the table restarted its tags: ours may be reused
            ST[5] = tt.next_gen()
            self._epoch = tt.epoch
        before = int(ST[4])
        v = int(K.search(*self._args, 0, t - 1, t))
        self.nodes += int(ST[4]) - before
        if v >= t:
            self.lo = max(self.lo, v)
            return True
        self.hi = min(self.hi, v)
        return False

    def lookup(self, table: np.ndarray, past: int = 0) -> int:
        """``table[past + V]`` (``table`` long enough to hold ``past + hi``)."""
        while True:
            seg = table[past + self.lo: past + self.hi + 1]
            change = np.flatnonzero(seg[1:] != seg[:-1])
            if change.size == 0:
                return int(seg[0])
            self.at_least(self.lo + 1 + int(change[change.size // 2]))


def _past_code(state: State) -> int:
    return 3 * sum(state.points[s] for s in range(state.n) if s % 2 == 0)


# ---------------------------------------------------------------------------- public API


def _terminal_value(state: State) -> int:
    sc = score_deal(state).score
    return sc[0] - sc[1]


def value_team0(state: State) -> int:
    """Minimax score difference (team 0 minus team 1) of a play-phase or finished state,
    every declaration decision from here on taken by :func:`policy_action`."""
    if state.phase == Phase.DONE:
        return _terminal_value(state)
    state = advance_declarations(state)
    if state.phase == Phase.DONE:
        return _terminal_value(state)
    if _pass_on_open(state):
        return _enumerate_team0(state)
    table = leaf_table(state.cfg, state.contract, combo_info(_decl_final(state)))
    return int(table[_past_code(state) + position_code(state)])


def _enumerate_team0(state: State) -> int:
    """Minimax over the cards of trick 2 in Python (pass-on rights pending, see module doc)."""
    seat = current_seat(state)
    lay = layout_for(state.cfg)
    vals = [value_team0(apply_action(state, lay.play_id(c))) for c in cards_of(legal_cards_mask(state))]
    return max(vals) if seat % 2 == 0 else min(vals)


def card_values_team0(state: State) -> dict[int, int]:
    """Per legal card of the seat to play (no pending step): minimax team-0 score difference."""
    if _pass_on_open(state):
        lay = layout_for(state.cfg)
        return {c: value_team0(apply_action(state, lay.play_id(c))) for c in cards_of(legal_cards_mask(state))}
    table = leaf_table(state.cfg, state.contract, combo_info(_decl_final(state)))
    return card_scores(state, table)


def solve(state: State) -> tuple[int, dict[int, int]]:
    """Exact minimax value for the side to move and the value of each legal action.

    Args:
        state: a play-phase state (every hand known: the solver reads ``state.hands``).

    Returns:
        ``(value, {action_id: value})``: the deal's final score difference (the mover's side
        minus the other side, score-sheet units) under best play by both sides; declaration
        steps after the root follow :func:`policy_action`.

    Raises:
        ValueError: the state is not in the play phase.
    """
    if state.phase != Phase.PLAY:
        raise ValueError(f"solve needs a play-phase state, got phase {state.phase.name} (rules.md 2.3)")
    seat = current_seat(state)
    sign = 1 if seat % 2 == 0 else -1
    if state.pending:
        vals = {a: sign * value_team0(apply_action(state, a)) for a in legal_actions(state)}
    else:
        lay = layout_for(state.cfg)
        vals = {lay.play_id(c): sign * v for c, v in card_values_team0(state).items()}
    return max(vals.values()), vals


__all__ = ["CodeBounds", "ComboInfo", "advance_declarations", "card_codes", "card_values_team0", "combo_info",
           "leaf_scores", "leaf_table", "policy_action", "position_code", "solve", "value_team0"]
