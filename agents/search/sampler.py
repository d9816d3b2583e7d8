"""Belief sampling: full deals consistent with what one seat has observed (its SeatView).

``sample_worlds(view, k, rng)`` returns up to ``k`` :class:`World` objects. Each is a full
deal (the ``dealer``/``hands``/``stock`` of a deal record, plus Open Blot piles) together with
the engine :class:`~blot_env.state.State` reached by replaying the public history of the deal
on it. A world is kept only if

1. every public action replays legally on it (the calls, the declaration steps and the
   cards: so voids and trump ceilings revealed by the duties of rules.md 1.3, announced
   classes, stated heights and shown combinations all hold), and
2. ``seat_view(world_state, view.seat) == view``: the seat would have seen exactly the same.

How worlds are drawn (docs/search.md):

* The unseen cards are the deck minus the seat's own cards, the cards played, the cards
  shown in declarations (they go to their owners), the duel's open card and Open Blot's
  face-up cards. Each unseen card has a set of places it may go: a seat that played a card
  which would have been illegal had it held the unseen card cannot hold it (a per-card rule:
  ``c`` is legal in a hand ``H`` iff ``H`` holds none of the cards that make ``c`` illegal).
* The cards are dealt to the places **uniformly over all deals that respect those sets and
  the counts**, by counting completions (a dynamic programme over cards and remaining counts)
  and drawing card by card with probabilities proportional to the completions.
* Declarations (classes, heights, shows) and auction calls that need held combinations
  (kaput+N) are checked by the replay, i.e. by rejection, which keeps the draw uniform over
  the consistent deals.
* Optional ``weight(view, hands)``: each world carries a weight (e.g. the likelihood of the
  other seats' calls under a bidding model, :func:`bidding_weight`); the draw itself stays
  uniform and the weight is used by the caller (importance weighting).

Open Blot: a SeatView does not say which face-up card covers which face-down one, so the
pile structure of a world is drawn at random and kept only if the history replays on it;
late in a deal few structures fit and fewer than ``k`` worlds may come back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from blot_env.actions import layout_for
from blot_env.batched.deal_row import DealRow, capacity_problem, lay_cards
from blot_env.cards import cards_of
from blot_env.codes import EVENT_CONCEDE, EVENT_HEIGHT_TRUMP
from blot_env.combos import classes_held
from blot_env.engine import apply_action, current_seat, deck_mask, new_deal
from blot_env.errors import BlotError
from blot_env.play import legal_cards
from blot_env.state import Phase, State, Step
from blot_env.view import SeatView, seat_view

#: place index of the undealt cards (duels) in a 2-player deal
UNDEALT = 2


@dataclass(frozen=True)
class World:
    """One sampled deal and the state it gives at the observed point.

    ``hands``: bitmask per seat as the deal record has it (Open Blot: 16 cards per seat in
    ``piles``); ``stock``: undealt cards in draw order; ``state``: the replayed state;
    ``weight``: 1.0, or the caller's weight.
    """

    dealer: int
    hands: tuple[int, ...]
    stock: tuple[int, ...]
    piles: tuple[tuple[int, ...], ...] | None
    state: State
    weight: float = 1.0


class SamplingError(ValueError):
    """The view cannot be sampled (for example a finished deal)."""


# ---------------------------------------------------------------------------- constraints


def forbidden_by_play(hand_known: int, trick: Sequence[int], seats: Sequence[int], strain: int, me: int,
                      card: int, cfg) -> int:
    """Cards whose presence in ``me``'s hand would have made playing ``card`` illegal then.

    ``legal_cards`` (rules.md 1.3) admits ``card`` in a hand ``H`` iff ``H`` holds none of a
    set of cards fixed by the trick (the led suit when discarding, the trumps or the trumps
    above the top one), so that set is found by trying each card next to ``card``.
    """
    out = 0
    exempt = cfg.partner_exemption and cfg.num_players == 4
    for x in cards_of(deck_mask(cfg) & ~hand_known & ~(1 << card)):
        legal = legal_cards((1 << card) | (1 << x), tuple(trick), tuple(seats), strain, me, exempt, cfg.undertrump)
        if not legal >> card & 1:
            out |= 1 << x
    return out


def play_constraints(view: SeatView) -> dict[int, int]:
    """Per seat (other than the viewer): the union of the cards it cannot hold now."""
    cfg = view.cfg
    n = cfg.num_players
    out: dict[int, int] = {}
    plays = view.plays
    if view.contract_strain < 0:
        return out
    played_all = 0
    for _, c in plays:
        played_all |= 1 << c
    for i in range(0, len(plays), n):
        trick = plays[i:i + n]
        for j in range(1, len(trick)):
            seat, card = trick[j]
            if seat == view.seat:
                continue
            prefix = [c for _, c in trick[:j]]
            seats = [q for q, _ in trick[:j]]
            f = forbidden_by_play(0, prefix, seats, view.contract_strain, seat, card, cfg)
            out[seat] = out.get(seat, 0) | (f & ~played_all)
    return out


# ---------------------------------------------------------------------------- uniform assignment


class UniformAssigner:
    """Places each card on one place so that place ``p`` gets ``counts[p]`` cards and card
    ``i`` only goes to a place in the bitmask ``allowed[i]``; :meth:`draw` is uniform over
    all such placements.

    Exact: completions are counted once by a dynamic programme over (card index, remaining
    counts); each draw then picks card by card with probabilities proportional to them.
    """

    def __init__(self, cards: Sequence[int], allowed: Sequence[int], counts: Sequence[int]):
        if sum(counts) != len(cards):
            raise ValueError(f"{len(cards)} cards for {sum(counts)} places")
        self.cards = list(cards)
        self.allowed = list(allowed)
        self.counts = tuple(counts)
        self._memo: dict[tuple, int] = {}
        self.total = self._ways(0, self.counts)

    def _ways(self, i: int, rem: tuple[int, ...]) -> int:
        if i == len(self.cards):
            return 1
        key = (i, rem)
        got = self._memo.get(key)
        if got is None:
            got = 0
            for p in range(len(rem)):
                if rem[p] and self.allowed[i] >> p & 1:
                    got += self._ways(i + 1, rem[:p] + (rem[p] - 1,) + rem[p + 1:])
            self._memo[key] = got
        return got

    def draw(self, rng: np.random.Generator) -> list[int] | None:
        """The place of each card, or None when no placement exists."""
        if self.total == 0:
            return None
        rem = self.counts
        out = []
        for i in range(len(self.cards)):
            opts = []
            for p in range(len(rem)):
                if rem[p] and self.allowed[i] >> p & 1:
                    r = rem[:p] + (rem[p] - 1,) + rem[p + 1:]
                    w = self._ways(i + 1, r)
                    if w:
                        opts.append((p, r, w))
            tot = sum(w for _, _, w in opts)
            x = int(rng.integers(tot)) if tot < 2**62 else int(rng.random() * tot)
            for p, r, w in opts:
                if x < w:
                    out.append(p)
                    rem = r
                    break
                x -= w
        return out


def uniform_assignment(cards: Sequence[int], allowed: Sequence[int], counts: Sequence[int],
                       rng: np.random.Generator) -> list[int] | None:
    """One uniform placement (see :class:`UniformAssigner`), or None when none exists."""
    return UniformAssigner(cards, allowed, counts).draw(rng)


# ---------------------------------------------------------------------------- world construction


def _contract_keeps_open_card(view: SeatView) -> bool:
    """Duels: did the taker take the open card U (rules.md 5.7.1)?"""
    lay = layout_for(view.cfg)
    for _, a in reversed(view.calls):
        block = lay.block_of[a]
        if block == "TAKE":
            return True
        if block == "NAME":
            return bool(lay.params[a][1])
    return True


def _played_by(view: SeatView) -> list[int]:
    out = [0] * view.cfg.num_players
    for s, c in view.plays:
        out[s] |= 1 << c
    return out


def _problem(view: SeatView) -> tuple[list[int], list[int], list[int], list[int], str]:
    """The sampling problem of a non-Open view: ``(unseen cards, allowed place masks, counts,
    known cards per place, kind)``; places are seats (and ``UNDEALT`` in duels)."""
    cfg = view.cfg
    n = cfg.num_players
    deck = deck_mask(cfg)
    me = view.seat
    duel = cfg.auction == "duel"
    places = n + (1 if duel else 0)
    known = [0] * places
    counts = [0] * places
    if view.phase == Phase.AUCTION:
        known[me] = view.hand
        if duel:
            u = view.open_card
            seen = view.hand | (1 << u)
            counts = [cfg.hand_size] * n + [len(cards_of(deck)) - n * cfg.hand_size - 1]
            counts[me] = 0
        else:
            seen = view.hand
            counts = [cfg.hand_size] * n
            counts[me] = 0
        unseen = cards_of(deck & ~seen)
        allowed = [sum(1 << p for p in range(places) if p != me)] * len(unseen)
        return unseen, allowed, counts, known, "auction"
    # play phase: hands at the start of play
    played = _played_by(view)
    play_size = cfg.num_tricks
    for s in range(n):
        known[s] = played[s] | view.shown[s]
    known[me] = view.dealt_hand
    if duel:
        u = view.open_card
        keep = _contract_keeps_open_card(view)
        if keep:
            known[view.contract_seat] |= 1 << u
        else:
            known[UNDEALT] |= 1 << u
        counts = [play_size - known[s].bit_count() for s in range(n)] + \
                 [len(cards_of(deck)) - n * play_size - known[UNDEALT].bit_count()]
    else:
        counts = [play_size - known[s].bit_count() for s in range(n)]
    counts[me] = 0
    seen = 0
    for k in known:
        seen |= k
    unseen = cards_of(deck & ~seen)
    cons = play_constraints(view)
    allowed = []
    for c in unseen:
        m = 0
        for p in range(places):
            if p == me or counts[p] == 0:
                continue
            if p < n and cons.get(p, 0) >> c & 1:
                continue
            m |= 1 << p
        allowed.append(m)
    return unseen, allowed, counts, known, "play"


def _deal_from(view: SeatView, places_masks: list[int], rng: np.random.Generator, kind: str):
    """Deal fields ``(hands, stock)`` for ``new_deal`` from the cards of each place."""
    cfg = view.cfg
    n = cfg.num_players
    if cfg.auction != "duel":
        return tuple(places_masks[:n]), ()
    u = view.open_card
    rest = [c for c in cards_of(places_masks[UNDEALT]) if c != u]
    rng.shuffle(rest)
    if kind == "auction":
        return tuple(places_masks[:n]), tuple([u] + [int(c) for c in rest])
    # play phase: split the play hands into dealt cards and draws (rules.md 5.7.1)
    taker = view.contract_seat
    other = 1 - taker
    keep = _contract_keeps_open_card(view)
    t_cards = [c for c in cards_of(places_masks[taker]) if not (keep and c == u)]
    o_cards = cards_of(places_masks[other])
    rng.shuffle(t_cards)
    rng.shuffle(o_cards)
    t_draw = [int(c) for c in t_cards[:2 if keep else 3]]
    o_draw = [int(c) for c in o_cards[:3]]
    hands = [0, 0]
    hands[taker] = places_masks[taker] & ~sum(1 << c for c in t_draw) & ~((1 << u) if keep else 0)
    hands[other] = places_masks[other] & ~sum(1 << c for c in o_draw)
    # keep: U, the taker's 2, the other's 3, the rest; leave: U, the taker's 3, the other's 3, the rest
    stock = [u] + t_draw + o_draw + [int(c) for c in rest]
    return tuple(hands), tuple(stock)


def _open_world(view: SeatView, rng: np.random.Generator):
    """Open Blot: piles per seat (bottom, top of piles 1..8) with the unseen cards face down."""
    cfg = view.cfg
    n = cfg.num_players
    deck = deck_mask(cfg)
    played = _played_by(view)
    face_up = view.face_up
    seen = 0
    for s in range(n):
        seen |= played[s] | face_up[s]
    unseen = [int(c) for c in cards_of(deck & ~seen)]
    rng.shuffle(unseen)
    piles = []
    k = 0
    for s in range(n):
        up = [int(c) for c in cards_of(face_up[s])]
        rng.shuffle(up)
        hidden = view.hidden_counts[s]
        if view.phase == Phase.AUCTION:
            # piles 1-4 (or all 8 in round 2): a laid top over a hidden bottom; piles not laid yet
            # (round 1, piles 5-8, rules.md 5.1) are entirely unseen; the order matters here
            order = []
            for top in up:
                order.append((unseen[k], top))
                k += 1
            for _ in range(8 - len(up)):
                order.append((unseen[k], unseen[k + 1]))
                k += 2
        else:
            covered = up[:hidden]
            lone = up[hidden:]  # uncovered bottoms: their tops were played
            order = []
            for top in covered:
                order.append((unseen[k], top))
                k += 1
            pl = [int(c) for q, c in view.plays if q == s]  # in play order
            pick = sorted(rng.choice(len(pl), size=len(lone), replace=False).tolist()) if lone else []
            for b, i in zip(lone, pick):
                order.append((b, pl[i]))
            rest = [c for i, c in enumerate(pl) if i not in set(pick)]
            for i in range(0, len(rest) - 1, 2):
                order.append((rest[i + 1], rest[i]))  # the earlier card was the top
            rng.shuffle(order)
        piles.append(tuple(c for pair in order for c in pair))
    hands = tuple(sum(1 << c for c in p) for p in piles)
    return hands, (), tuple(piles)


# ---------------------------------------------------------------------------- replay


def replay_public(view: SeatView, dealer: int, hands, stock, piles=None) -> State | None:
    """The state reached by replaying ``view``'s public history on a deal, or None if some
    action is illegal there or the result does not give the same view."""
    cfg = view.cfg
    lay = layout_for(cfg)
    try:
        s = new_deal(cfg, dealer, hands, stock, piles) if piles else new_deal(cfg, dealer, hands, stock)
        for _, a in view.calls:
            s = apply_action(s, a)
        if view.phase == Phase.AUCTION:
            return s if seat_view(s, view.seat) == view else None
        ev = list(view.events)
        ei = 0
        pi = 0
        plays = view.plays
        while s.phase == Phase.PLAY:
            if s.pending:
                kind, q = s.pending[0]
                if kind == Step.ANNOUNCE:
                    if view.announced[q] < 0:
                        break
                    a = lay.announce_id(view.announced[q])
                elif kind == Step.HEIGHT:
                    if ei >= len(ev):
                        break
                    a = lay.id("HEIGHT_TRUMP" if ev[ei][1] == EVENT_HEIGHT_TRUMP else "HEIGHT")
                    ei += 1
                elif kind == Step.ANSWER:
                    if ei >= len(ev):
                        break
                    a = lay.id("CONCEDE" if ev[ei][1] == EVENT_CONCEDE else "REVEAL")
                    ei += 1
                else:
                    if view.decided[q] < 0:
                        break
                    a = lay.id("SHOW" if view.decided[q] == 1 else "NOSHOW")
            else:
                if pi >= len(plays):
                    break
                q, c = plays[pi]
                if current_seat(s) != q:
                    return None
                a = lay.play_id(c)
                pi += 1
            s = apply_action(s, a)
    except (BlotError, ValueError):
        return None
    return s if seat_view(s, view.seat) == view else None


class _Replayer:
    """:func:`replay_public` for many deals of one view, on the compiled engine after the first.

    The actions that replay the public history on a consistent deal are the same for every
    consistent deal (the calls, the plays, and declaration steps read from the view), so once
    one deal has been accepted, its ``State.history`` is replayed on the others by a compiled
    deal (:meth:`blot_env.batched.deal_row.DealRow.replay`); a deal on which
    that sequence is legal and ``seat_view`` gives the view is consistent, and a consistent
    deal replays that sequence. The accepted states are those :func:`replay_public` gives
    (``tests/test_sampler.py`` compares the two).
    """

    def __init__(self, view: SeatView):
        self.view = view
        self.actions: np.ndarray | None = None
        self._row: DealRow | None = None
        self._compiled = capacity_problem(view.cfg) is None  # else the config stays on the Python replay

    def __call__(self, hands, stock, piles=None) -> State | None:
        """The replayed state of the deal (``hands``: bitmask per seat as dealt, ``stock``:
        undealt cards in draw order, ``piles``: Open Blot's), or None if it is inconsistent
        with the view."""
        view = self.view
        if self.actions is None or not self._compiled:
            st = replay_public(view, view.dealer, hands, stock, piles)
            if st is not None and self.actions is None:
                self.actions = np.array(st.history, dtype=np.int64)
            return st
        if self._row is None:
            self._row = DealRow(view.cfg)
        row = self._row
        if row.replay(view.dealer, lay_cards(hands, stock, piles), self.actions) < self.actions.shape[0]:
            return None
        try:
            st = row.state()
        except ValueError:
            return None
        return st if seat_view(st, view.seat) == view else None


# ---------------------------------------------------------------------------- public API


def _declaration_ok(view: SeatView, play_hands: Sequence[int]) -> bool:
    """Cheap pre-check before the replay: announced classes are held."""
    cfg = view.cfg
    if cfg.declarations not in ("manual", "announce") or view.contract_strain < 0:
        return True
    for q, cls in enumerate(view.announced):
        if q == view.seat or cls <= 0:
            continue
        if cfg.declarations == "announce":
            continue  # open: announced from face-up cards, all public
        if cls not in classes_held(play_hands[q], view.contract_strain, cfg.long_run, cfg.carre_table):
            return False
    return True


def sample_worlds(view: SeatView, k: int, rng: np.random.Generator,
                  weight: Callable[[SeatView, tuple[int, ...]], float] | None = None,
                  max_tries: int | None = None) -> list[World]:
    """Up to ``k`` full deals consistent with ``view`` (see the module docstring).

    Args:
        view: what the seat has observed (auction or play phase, any preset).
        k: worlds wanted.
        rng: the generator of every random choice.
        weight: optional ``weight(view, hands) -> float`` stored in each world (``hands``:
            the bitmask per seat at the start of play, or as dealt during the auction).
        max_tries: draws before giving up (default ``50 * k``); fewer than ``k`` worlds come
            back only when the declarations or the Open Blot piles reject most draws.

    Raises:
        SamplingError: the deal is over (nothing is hidden any more that matters).
    """
    if view.phase == Phase.DONE:
        raise SamplingError("the deal is over; nothing to sample")
    cfg = view.cfg
    tries = max_tries if max_tries is not None else 50 * k
    out: list[World] = []
    replay = _Replayer(view)
    if cfg.auction == "open":
        for _ in range(tries):
            if len(out) >= k:
                break
            hands, stock, piles = _open_world(view, rng)
            st = replay(hands, stock, piles)
            if st is not None:
                w = 1.0 if weight is None else float(weight(view, hands))
                out.append(World(view.dealer, hands, stock, piles, st, w))
        return out
    unseen, allowed, counts, known, kind = _problem(view)
    assigner = UniformAssigner(unseen, allowed, counts)
    for _ in range(tries):
        if len(out) >= k:
            break
        places = assigner.draw(rng)
        if places is None:
            raise SamplingError("no deal is consistent with the view's card constraints")
        masks = list(known)
        for c, p in zip(unseen, places):
            masks[p] |= 1 << c
        play_hands = tuple(masks[:cfg.num_players])
        if kind == "play" and not _declaration_ok(view, play_hands):
            continue
        hands, stock = _deal_from(view, masks, rng, kind)
        st = replay(hands, stock)
        if st is None:
            continue
        w = 1.0 if weight is None else float(weight(view, play_hands))
        out.append(World(view.dealer, hands, stock, None, st, w))
    return out


def bidding_weight(view: SeatView, hands: Sequence[int], tau: float = 10.0) -> float:
    """Likelihood-style weight of the other seats' bids under the L2 bidding model's reading.

    The L2 agent (agents/baselines/medium_agent.py) conditions its samples on each bidder holding a
    hand whose L1 estimate (:func:`agents.baselines.rules_agent.team_estimate`) reaches the bid's
    promise; here the shortfall ``gap`` of each other seat's highest bid gives a factor
    ``exp(-gap / tau)`` (raw points). Bazar and belote auctions only; 1.0 elsewhere.
    """
    cfg = view.cfg
    if cfg.auction not in ("bazar", "belote"):
        return 1.0
    from agents.baselines.rules_agent import raw_need, team_estimate

    lay = layout_for(cfg)
    best: dict[int, tuple[int, int]] = {}
    for seat, a in view.calls:
        if seat == view.seat:
            continue
        block = lay.block_of[a]
        if block == "BID":
            v, s = lay.params[a]
        elif block in ("KAPUT", "KAPUT_PLUS"):
            s, v = lay.params[a][-1], 25
        else:
            continue
        if seat not in best or v > best[seat][1]:
            best[seat] = (s, v)
    logw = 0.0
    cap = 16 if cfg.scoring != "belote" else 160
    for seat, (s, v) in best.items():
        gap = raw_need(cfg, min(v, cap)) - team_estimate(hands[seat], s, cfg)
        logw -= max(0.0, gap) / tau
    return float(np.exp(logw))


__all__ = ["UNDEALT", "SamplingError", "World", "bidding_weight", "forbidden_by_play", "play_constraints",
           "replay_public", "sample_worlds", "uniform_assignment"]
