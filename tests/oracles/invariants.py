"""Random-play invariants for every preset (docs/rules.md 1-6; the checks of the test layer
"invariants after every action of many random deals").

:func:`check_deal` plays one random deal through ``blot_env.engine`` and checks, after every
action:

* the seat to act is a seat; the legal set is non-empty, sorted, unique and in range until
  the end of the deal, empty (and every action refused) after it;
* cards are conserved: every card of the preset's deck is in exactly one place (a hand,
  played, or undealt in the stock), and each hand holds ``hand_size`` cards in the auction
  and ``num_tricks`` minus the cards it has played afterwards;
* in card play, the legal cards equal :func:`~oracles.reference.ref_legal` (rules.md 1.3,
  with the preset's partner exemption and undertrump knobs) over the playable cards (Open
  Blot: the face-up tops only; playing a top turns the card under it face up, rules.md 5.1);
* at sampled steps every legal action is accepted and a random illegal one raises
  ``IllegalActionError``;
* the next leader is the last trick's winner (:func:`~oracles.reference.ref_winner`);
* the raw card points of the finished tricks add up (with the last trick's 10).

At the end of the deal: scores, combinations and card points non-negative; a passed-out
deal scores 0:0 after ``n`` passes; all tricks played except when a kaput contract stopped
after the defenders' first trick (rules.md 2.3); card points + undealt points = 162; under
a bazar contra exactly one side scores; the record of a sampled deal replays to the same
result; and, for a deal in which no combination and no blot can count, the whole score is
recomputed by the independent formula of its family (rules.md 2.5, 3-5, 6).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from blot_env.engine import (
    apply_action,
    current_seat,
    deal_random,
    deal_result,
    is_terminal,
    layout,
    legal_actions,
)
from blot_env.errors import IllegalActionError
from blot_env.record import make_record, replay_record
from blot_env.rules_config import RulesConfig
from blot_env.state import Phase

from .reference import (
    DEAL_RAW,
    LAST_TRICK,
    NT,
    holds_any_combo,
    holds_blot,
    ref_bazar_score,
    ref_belote_score,
    ref_legal,
    ref_points,
    ref_two_player_score,
    ref_winner,
)


class InvariantError(AssertionError):
    """An invariant failed; the message holds the deal (dealer, hands, actions) to reproduce it."""


def _fail(msg: str, state) -> None:
    lay = layout(state)
    acts = [lay.describe(a) for a in state.history]
    hands = [hex(h) for h in state.start_hands]
    raise InvariantError(f"{msg}\n  preset={state.cfg.preset} dealer={state.dealer} hands={hands} "
                         f"stock={list(state.stock)}\n  actions={acts}")


@dataclass
class Stats:
    """Counts over the deals checked (every field adds up across chunks)."""

    deals: int = 0
    steps: int = 0
    passed_out: int = 0
    made: int = 0
    contra: int = 0
    kaput: int = 0
    kaput_stopped: int = 0
    capot: int = 0
    nt: int = 0
    all_tricks: int = 0
    score_recomputed: int = 0
    records_replayed: int = 0

    def add(self, other: Stats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def choose(state, legal: list[int], rng: np.random.Generator, pass_prob: float) -> int:
    """The random policy. Auction: the first legal call (``pass`` where legal) with probability
    ``pass_prob``; contra/recontra 5 % of the time when legal; mostly a small raise (number
    bids up to two steps above the standing one); else any call. Everything else: uniform."""
    if state.phase == Phase.AUCTION:
        if rng.random() < pass_prob:
            return legal[0]  # PASS is id 0: the first legal call whenever it is legal
        lay = layout(state)
        doubles = [a for a in legal if lay.block_of[a] in ("CONTRA", "RECONTRA")]
        if doubles and rng.random() < 0.05:
            return doubles[int(rng.integers(len(doubles)))]
        if rng.random() < 0.9:
            step = state.cfg.bid_step
            cap = max(state.high_value, state.cfg.bid_min - step) + 2 * step
            small = [a for a in legal if lay.block_of[a] == "BID" and lay.params[a][0] <= cap]
            if small:
                return small[int(rng.integers(len(small)))]
    return legal[int(rng.integers(len(legal)))]


def _deck(cfg: RulesConfig) -> int:
    low = 2 if cfg.short_deck else 0  # the 24-card deck starts at the 9 (rules.md 3, 4)
    return sum(1 << (s * 8 + r) for s in range(4) for r in range(low, 8))


def _check_cards(state, cfg: RulesConfig, deck: int, stock: int) -> None:
    n = cfg.num_players
    played = 0
    played_by = [0] * n
    for s, c in state.plays:
        if played >> c & 1:
            _fail("a card was played twice", state)
        played |= 1 << c
        played_by[s] += 1
    held = 0
    for s in range(n):
        h = state.hands[s]
        if held & h or played & h:
            _fail("a card is in two places", state)
        held |= h
        want = cfg.hand_size if state.phase == Phase.AUCTION else cfg.num_tricks - played_by[s]
        if h.bit_count() != want:
            _fail(f"seat {s} holds {h.bit_count()} cards, expected {want}", state)
        if state.face_down and state.face_down[s] & ~h:
            _fail(f"seat {s} has a face-down card it does not hold", state)
    undealt = stock & ~held & ~played
    if held | played | undealt != deck or (held | played | stock) & ~deck:
        _fail("cards not conserved", state)


def _playable(state, seat: int) -> set[int]:
    hand = state.hands[seat]
    if state.face_down:
        hand &= ~state.face_down[seat]
    if state.unlaid:
        hand &= ~state.unlaid[seat]
    return {c for c in range(32) if hand >> c & 1}


def _try_actions(state, legal: list[int], num_actions: int, rng: np.random.Generator) -> None:
    sample = legal
    if len(legal) > 12:  # a long auction list: the lowest and highest calls and a random sample
        pick = rng.choice(len(legal), 10, replace=False)
        sample = [legal[0], legal[1], legal[-1]] + [legal[int(i)] for i in pick]
    for a in sample:
        apply_action(state, a)  # must not raise
    illegal = sorted(set(range(num_actions)) - set(legal))
    if illegal:
        bad = illegal[int(rng.integers(len(illegal)))]
        try:
            apply_action(state, bad)
        except IllegalActionError:
            pass
        else:
            _fail(f"illegal action {layout(state).describe(bad)} was accepted", state)


def _nothing_counts(state, cfg: RulesConfig, strain: int) -> bool:
    """No combination and no blot can count in this deal (judged from the cards and the
    announcements, not from the engine's result)."""
    if any(holds_blot(h, strain) for h in state.play_hands):
        return False
    if cfg.declarations == "auto":
        return not any(holds_any_combo(h, strain) for h in state.play_hands)
    # manual / announce: only announced classes can count
    lay = layout(state)
    return all(lay.describe(a) == "announce none" for a in state.history if lay.block_of[a] == "ANNOUNCE")


def _reference_score(state, cfg: RulesConfig, res, undealt_pts: int) -> tuple[list[int], bool]:
    c = res.contract
    if cfg.scoring == "bazar":
        return ref_bazar_score(c.seat, c.strain, c.value, c.kind, c.double, res.tricks, res.card_points,
                               cfg.num_tricks, cfg.capot_tp)
    if cfg.scoring in ("duel", "open"):
        return ref_two_player_score(c.seat, res.tricks, res.card_points, undealt_pts, cfg.scoring,
                                    cfg.num_tricks, cfg.capot_tp, cfg.taker_ge, cfg.open_complement)
    if cfg.scoring == "belote":
        return ref_belote_score(c.seat, c.value, c.double, res.tricks, res.card_points, cfg.num_tricks,
                                cfg.capot_tp)
    raise ValueError(f"no reference score for the scoring family {cfg.scoring!r}")


def check_deal(cfg: RulesConfig, rng: np.random.Generator, pass_prob: float = 0.6, check_all_prob: float = 0.05,
               record_prob: float = 0.02, stats: Stats | None = None) -> Stats:
    """Play one random deal of ``cfg`` with ``rng``, checking every invariant of the module
    docstring after every action.

    Returns ``stats`` (a new :class:`Stats` when None) with this deal added.

    Raises:
        InvariantError: an invariant failed (the message holds the deal to reproduce it).
    """
    stats = stats if stats is not None else Stats()
    lay = layout(cfg)
    n = cfg.num_players
    state = deal_random(cfg, rng, int(rng.integers(n)))
    deck = _deck(cfg)
    stock = 0
    for c in state.stock:
        stock |= 1 << c
    play_base = lay.blocks["PLAY"].start
    legal: list[int] = []
    counted = pts = 0  # tricks whose raw card points are in ``pts``
    while not is_terminal(state):
        legal = legal_actions(state)
        seat = current_seat(state)
        if not legal:
            _fail("empty legal set before the end", state)
        if legal != sorted(set(legal)) or legal[0] < 0 or legal[-1] >= lay.num_actions:
            _fail(f"legal set not sorted/unique/in range: {legal}", state)
        if not 0 <= seat < n:
            _fail(f"bad seat to act {seat}", state)
        _check_cards(state, cfg, deck, stock)
        if state.phase == Phase.PLAY and not state.pending:
            cards = [a - play_base for a in legal]
            if any(not 0 <= c < 32 for c in cards):
                _fail(f"non-card action in a card turn: {legal}", state)
            trick = [((state.leader + i) % n, c) for i, c in enumerate(state.trick)]
            want = ref_legal(_playable(state, seat), trick, state.contract.strain, seat, n,
                             cfg.partner_exemption, cfg.undertrump)
            if set(cards) != want:
                _fail(f"legal cards {sorted(cards)} != reference {sorted(want)} for seat {seat}", state)
        if rng.random() < check_all_prob:
            _try_actions(state, legal, lay.num_actions, rng)
        a = choose(state, legal, rng, pass_prob)
        prev = state
        state = apply_action(state, a)
        stats.steps += 1
        if prev.phase == Phase.PLAY and lay.block_of[a] == "PLAY":
            card = a - play_base
            if prev.face_down:  # Open Blot: a played top uncovers the card under it (rules.md 5.1)
                pile = prev.piles[seat]
                i = pile.index(card)
                if prev.face_down[seat] >> card & 1:
                    _fail(f"a face-down card {card} was played", state)
                if i % 2 and state.face_down[seat] >> pile[i - 1] & 1:
                    _fail(f"card {pile[i - 1]} stayed face down after its top was played", state)
            if len(prev.trick) == n - 1:
                full = list(prev.trick) + [card]
                w = (prev.leader + ref_winner(full, state.contract.strain)) % n
                if sum(state.tricks) != sum(prev.tricks) + 1:
                    _fail("trick count did not advance", state)
                if state.leader != w:
                    _fail(f"next leader {state.leader} != last trick's winner {w}", state)
                if state.trick:
                    _fail("trick not cleared", state)
        if state.phase != Phase.AUCTION and state.contract is not None:
            done = len(state.plays) // n
            if done > counted:  # a trick was completed: add its cards (and the last trick's 10)
                pts += sum(ref_points(c, state.contract.strain) for _, c in state.plays[counted * n: done * n])
                pts += LAST_TRICK if done == cfg.num_tricks else 0
                counted = done
            if sum(state.points) != pts:
                _fail(f"points {state.points} do not add up to {pts}", state)
    _check_end(state, cfg, rng, record_prob, stats, stock)
    return stats


def _check_end(state, cfg: RulesConfig, rng: np.random.Generator, record_prob: float, stats: Stats,
               stock: int) -> None:
    n = cfg.num_players
    if legal_actions(state) or current_seat(state) != -1:
        _fail("legal actions or a seat to act after the end", state)
    try:
        apply_action(state, 0)
    except IllegalActionError:
        pass
    else:
        _fail("an action was accepted after the end", state)
    res = deal_result(state)
    stats.deals += 1
    if min(res.score) < 0 or min(res.combinations) < 0 or min(res.card_points) < 0:
        _fail(f"negative entry in {res}", state)
    if rng.random() < record_prob:
        rec = make_record(state)
        if replay_record(rec)[1] != rec["result"]:
            _fail("the deal's record does not replay to its result", state)
        stats.records_replayed += 1
    c = res.contract
    if c is None:
        stats.passed_out += 1
        if res.score != (0, 0) or res.made is not None or len(state.history) != n:
            _fail(f"passed-out deal scored {res}", state)
        return
    stats.made += bool(res.made)
    stats.nt += c.strain == NT
    stats.contra += c.double > 0
    sides = 2
    side = [s % sides for s in range(n)]
    tricks_played = sum(res.tricks)
    if tricks_played != sum(state.tricks):
        _fail(f"result tricks {res.tricks} != tricks taken {state.tricks}", state)
    if max(res.tricks) == cfg.num_tricks:
        stats.capot += 1
    held = 0
    for h in state.play_hands:
        held |= h
    undealt_pts = sum(ref_points(x, c.strain) for x in range(32) if (stock & ~held) >> x & 1)
    if c.is_kaput:
        stats.kaput += 1
        # the deal stops after the defenders' first trick (after trick 2 if that was trick 1)
        first_d = None
        for t in range(tricks_played):
            cards = [cd for _, cd in state.plays[t * n:(t + 1) * n]]
            w = (state.plays[t * n][0] + ref_winner(cards, c.strain)) % n
            if side[w] != side[c.seat] and first_d is None:
                first_d = t
        want = cfg.num_tricks if first_d is None else max(first_d + 1, 2)
        if tricks_played != want:
            _fail(f"kaput contract stopped after {tricks_played} tricks, expected {want}", state)
        stats.kaput_stopped += tricks_played < cfg.num_tricks
    elif tricks_played != cfg.num_tricks:
        _fail(f"only {tricks_played} tricks played in a number contract", state)
    if tricks_played == cfg.num_tricks:
        stats.all_tricks += 1
        if sum(res.card_points) + undealt_pts != DEAL_RAW:
            _fail(f"card points {res.card_points} + undealt {undealt_pts} do not total {DEAL_RAW}", state)
        if any(state.hands):
            _fail("cards left in a hand after the last trick", state)
    if c.double and cfg.scoring == "bazar" and (sorted(res.score)[0] != 0 or max(res.score) <= 0):
        _fail(f"under contra exactly one side must score: {res.score}", state)
    if _nothing_counts(state, cfg, c.strain):
        stats.score_recomputed += 1
        want_score, want_made = _reference_score(state, cfg, res, undealt_pts)
        if list(res.score) != want_score or res.made != want_made or res.combinations != (0, 0):
            _fail(f"score {res.score} made={res.made} != reference {want_score} made={want_made}", state)


def deal_rng(seed: int, index: int) -> np.random.Generator:
    """The generator of deal ``index`` of a run seeded ``seed``: each deal has its own, so any
    range of deals can be checked (or re-checked) on its own."""
    return np.random.default_rng([seed, index])


def run_deals(cfg: RulesConfig, seed: int, deals: int, start: int = 0, pass_prob: float = 0.6,
              check_all_prob: float = 0.05, record_prob: float = 0.02) -> Stats:
    """Check deals ``start .. start + deals - 1`` of the run seeded ``seed`` (see :func:`deal_rng`).

    Raises:
        InvariantError: the first deal that breaks an invariant (its index in the message).
    """
    stats = Stats()
    for i in range(start, start + deals):
        try:
            check_deal(cfg, deal_rng(seed, i), pass_prob, check_all_prob, record_prob, stats)
        except InvariantError as e:
            raise InvariantError(f"deal {i} (seed {seed}): {e}") from None
    return stats
