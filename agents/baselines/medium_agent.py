"""L2, "Medium": bids checked on sampled deals, card play that counts cards (rules text 004 "Средний").

Auction (bazar and belote bidding, rules.md 2.2 and 6): at each call the agent deals the
cards it cannot see to the other seats at random (``samples`` deals). The deals are read
softly against the calls: of up to ``condition_tries`` random deals it keeps the one that
best fits them, a bidder's L1 estimate reaching its bid and a seat that passed with no bid
standing lacking an L1 opening. Every deal is played out with the L1 card policy
(:func:`agents.baselines.rules_agent.greedy_card`) for each strain considered (the two best by the
L1 estimate, no trump, our side's standing strain), and each candidate call (pass, every
legal bid upwards, kaput, kaput+N, contra with the trump jack and nine, recontra) is scored
on every deal with the project's one scoring function :func:`blot_env.scoring.score_deal`.
The agent takes the call whose paired gain over passing (mean minus ``z`` standard errors,
so that the luckiest of many noisy estimates does not win) is highest and above
``margin``. Samples and playouts are cached per auction state, so passes cost nothing.
The 2-player trump choices (``take``/``name``) and the declaration steps use the L1 rules.

Card play (rules.md 1.3): it tracks played cards and voids (a seat that did not follow
suit is void in it; one that neither followed nor ruffed while an opponent was winning an
untrumped trick is void in trumps too), leads the master trump to draw trumps while the
opponents may still hold some (bidding side), cashes master side cards that no opponent
can ruff, never leads a ten under an ace still out, feeds points to its partner when the
partner's card cannot be beaten by the seats still to play, wins as cheaply as it can
surely win, and otherwise discards the card that costs least.

Call :meth:`MediumAgent.reset` before each deal (the arena does) so that a re-run draws
the same samples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from blot_env.actions import layout_for
from blot_env.cards import LAST_TRICK_BONUS, NT, SUIT_MASKS, card_points, cards_of, strength, trick_winner_index
from blot_env.codes import KAPUT_VALUE
from blot_env.declarations import initial as initial_declarations
from blot_env.engine import deck_mask
from blot_env.play import legal_cards
from blot_env.rules_config import RulesConfig
from blot_env.scoring import score_deal
from blot_env.state import Contract, Phase, State
from blot_env.view import SeatView

from .rules_agent import (
    RulesAgent,
    _by_block,
    discard_cost,
    greedy_card,
    holds_stoppers,
    raw_need,
    standing_contract,
    suit_order,
    team_estimate,
    team_of,
    weakest_winner,
)

# ---------------------------------------------------------------------------- knowledge


@dataclass(frozen=True)
class Knowledge:
    """What a seat has deduced from the public cards (rules.md 1.3 duties)."""

    played: int
    """Bitmask of every card played so far (current trick included)."""
    voids: tuple[int, ...]
    """Per seat: 4-bit mask of the suits the seat is known to lack."""
    outstanding: int
    """Cards neither played nor in the seat's own (playable) hand: held by the others or unseen."""


def knowledge(view: SeatView) -> Knowledge:
    """Played cards and known voids from ``view.plays`` (tricks are consecutive groups of n)."""
    n = view.cfg.num_players
    strain = view.contract_strain
    voids = [0] * n
    played = 0
    plays = view.plays
    for i in range(0, len(plays), n):
        trick = plays[i:i + n]
        led = trick[0][1] >> 3
        for j in range(1, len(trick)):
            seat, card = trick[j]
            played |= 1 << card
            suit = card >> 3
            if suit == led:
                continue
            voids[seat] |= 1 << led
            if strain == NT or strain < 0 or suit == strain:
                continue
            before = [c for _, c in trick[:j]]
            if any(c >> 3 == strain for c in before):
                continue  # an opponent's trump in the trick: any card was allowed (undertrump free)
            w = trick_winner_index(before, strain)
            partner_wins = n == 4 and (trick[w][0] - seat) % 2 == 0
            if not partner_wins:
                voids[seat] |= 1 << strain
        played |= 1 << trick[0][1]
    deck = deck_mask(view.cfg)
    outstanding = deck & ~played & ~view.hand
    return Knowledge(played, tuple(voids), outstanding)


def _higher_in_suit(card: int, strain: int, pool: int) -> int:
    """Cards of ``pool`` in ``card``'s suit that rank above it."""
    s = card >> 3
    o = suit_order(card, strain)
    out = 0
    for c in cards_of(pool & SUIT_MASKS[s]):
        if suit_order(c, strain) > o:
            out |= 1 << c
    return out


def may_beat(seat: int, best: int, led: int, strain: int, kn: Knowledge) -> bool:
    """Could ``seat`` (still to play) beat ``best``, given the cards out and its known voids?"""
    v = kn.voids[seat]
    trump_out = 0 if strain == NT else kn.outstanding & SUIT_MASKS[strain]
    may_trump = bool(trump_out) and not (strain != NT and v >> strain & 1)
    if strain != NT and best >> 3 == strain:
        return may_trump and bool(_higher_in_suit(best, strain, trump_out))
    led_out = kn.outstanding & SUIT_MASKS[led]
    if led_out and not v >> led & 1:
        # it follows suit; below the card unless it holds a higher one (an unshown void is a risk we take)
        return bool(_higher_in_suit(best, strain, led_out))
    return may_trump


def is_master(card: int, strain: int, kn: Knowledge) -> bool:
    """No card out ranks above ``card`` in its suit."""
    return not _higher_in_suit(card, strain, kn.outstanding)


# ---------------------------------------------------------------------------- card play


def medium_card(view: SeatView, legal_mask: int, kn: Knowledge | None = None) -> int:
    """The L2 card choice for ``view`` (a card id of ``legal_mask``)."""
    cards = cards_of(legal_mask)
    if len(cards) == 1:
        return cards[0]
    kn = kn or knowledge(view)
    n = view.cfg.num_players
    me = view.seat
    strain = view.contract_strain
    bid_team = team_of(view.contract_seat, n) if view.contract_seat >= 0 else -1
    my_team = team_of(me, n)
    trick = view.trick
    if not trick:
        return _lead(view, cards, kn, strain, my_team == bid_team)
    led = trick[0] >> 3
    w = trick_winner_index(trick, strain)
    best = trick[w]
    after = [(me + k) % n for k in range(1, n - len(trick))]
    opp_after = [q for q in after if team_of(q, n) != my_team]
    if n == 4 and team_of(view.trick_seats[w], n) == my_team:
        if not any(may_beat(q, best, led, strain, kn) for q in opp_after):
            return _feed(cards, strain, kn)
        return _discard(cards, strain, kn)
    best_s = strength(best, led, strain)
    winners = [c for c in cards if strength(c, led, strain) > best_s]
    if winners:
        sure = [c for c in winners if not any(may_beat(q, c, led, strain, kn) for q in opp_after)]
        if sure:
            return weakest_winner(sure, led, strain)
        pts = sum(card_points(c, strain) for c in trick)
        if pts >= 10:
            return max(winners, key=lambda c: (strength(c, led, strain), -c))
        losers = [c for c in cards if c not in winners]
        return _discard(losers or cards, strain, kn)
    return _discard(cards, strain, kn)


def _discard(cards: Sequence[int], strain: int, kn: Knowledge) -> int:
    """The cheapest card, keeping masters (they win later)."""
    def cost(c: int) -> tuple[float, int]:
        extra = 8.0 if is_master(c, strain, kn) and card_points(c, strain) > 0 else 0.0
        return discard_cost(c, strain) + extra, c
    return min(cards, key=cost)


def _feed(cards: Sequence[int], strain: int, kn: Knowledge) -> int:
    """Give points to a partner sure to win: tens and kings first, then aces; keep trumps."""
    def value(c: int) -> tuple[float, int]:
        v = float(card_points(c, strain))
        if strain != NT and c >> 3 == strain:
            v -= 40.0
        elif is_master(c, strain, kn) and c & 7 == 7:  # an ace that would win its own trick later
            v -= 6.0
        return v, -c
    return max(cards, key=value)


def _lead(view: SeatView, cards: list[int], kn: Knowledge, strain: int, bidding_side: bool) -> int:
    n = view.cfg.num_players
    me = view.seat
    opps = [q for q in range(n) if team_of(q, n) != team_of(me, n)]
    trumps = [c for c in cards if strain != NT and c >> 3 == strain]
    trump_out = 0 if strain == NT else kn.outstanding & SUIT_MASKS[strain]
    opp_may_trump = bool(trump_out) and any(not kn.voids[q] >> strain & 1 for q in opps) if strain != NT else False
    if bidding_side and trumps and opp_may_trump:
        top = max(trumps, key=lambda c: suit_order(c, strain))
        if is_master(top, strain, kn):
            return top  # draw trumps from the top
    # cash side masters nobody can ruff
    masters = []
    for c in cards:
        if strain != NT and c >> 3 == strain:
            continue
        if not is_master(c, strain, kn):
            continue
        s = c >> 3
        if not kn.outstanding & SUIT_MASKS[s] and not bidding_side:
            continue  # nobody else holds the suit: it only wins if nobody ruffs
        ruff = strain != NT and any(kn.voids[q] >> s & 1 and not kn.voids[q] >> strain & 1 for q in opps) \
            and bool(trump_out)
        if not ruff:
            masters.append(c)
    if masters:
        return max(masters, key=lambda c: (card_points(c, strain), -c))
    if bidding_side and trumps and opp_may_trump and len(trumps) >= 3:
        return min(trumps, key=lambda c: suit_order(c, strain))
    # a low card; never a ten under an ace that is still out
    plain = [c for c in cards if strain == NT or c >> 3 != strain]
    safe = [c for c in plain if not (c & 7 == 3 and kn.outstanding >> ((c >> 3) * 8 + 7) & 1)]
    pool = safe or plain or cards
    return min(pool, key=lambda c: (discard_cost(c, strain) + (8.0 if is_master(c, strain, kn) else 0.0), c))


# ---------------------------------------------------------------------------- sampling and playouts


def deal_unseen(unseen: Sequence[int], counts: dict[int, int], voids: dict[int, int],
                rng: np.random.Generator, tries: int = 50) -> dict[int, int]:
    """Deal ``unseen`` cards to seats: ``counts[seat]`` cards each, none of a suit in ``voids[seat]``.

    Returns ``{seat: bitmask}``. A uniform shuffle dealt in seat order is kept when it
    respects the voids; otherwise cards are placed one by one, most constrained suit first,
    on a random seat that may hold them (probability proportional to its free places). After
    ``tries`` dead ends the voids are ignored.

    Raises:
        ValueError: ``sum(counts) != len(unseen)``.
    """
    if sum(counts.values()) != len(unseen):
        raise ValueError(f"{len(unseen)} unseen cards for {sum(counts.values())} places")
    seats = sorted(counts)
    perm = [int(c) for c in rng.permutation(np.asarray(unseen, dtype=np.int64))]
    out = {}
    i = 0
    for q in seats:
        m = 0
        for c in perm[i:i + counts[q]]:
            m |= 1 << c
        out[q] = m
        i += counts[q]
    if not any(voids.get(q, 0) and _suits_of(out[q]) & voids[q] for q in seats):
        return out
    for _attempt in range(tries):
        free = dict(counts)
        out = dict.fromkeys(seats, 0)
        # cards of suits that many seats lack go first
        order = sorted(perm, key=lambda c: -sum(voids.get(q, 0) >> (c >> 3) & 1 for q in seats))
        ok = True
        for c in order:
            elig = [q for q in seats if free[q] > 0 and not voids.get(q, 0) >> (c >> 3) & 1]
            if not elig:
                ok = False
                break
            r = rng.random() * sum(free[q] for q in elig)
            for q in elig:
                r -= free[q]
                if r < 0:
                    break
            out[q] |= 1 << c
            free[q] -= 1
        if ok:
            return out
        perm = [int(c) for c in rng.permutation(np.asarray(unseen, dtype=np.int64))]
    out = {}
    i = 0
    for q in seats:
        out[q] = sum(1 << c for c in perm[i:i + counts[q]])
        i += counts[q]
    return out


def _suits_of(mask: int) -> int:
    return sum(1 << s for s in range(4) if mask & SUIT_MASKS[s])


def playout(cfg: RulesConfig, hands: Sequence[int], strain: int, leader: int, bid_team: int,
            policy=greedy_card) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Play a whole deal with full hands and ``policy`` at every seat (no declarations).

    Returns ``(tricks, points)`` per seat; points are raw and include the last-trick 10.
    """
    n = cfg.num_players
    hands = list(hands)
    tricks = [0] * n
    points = [0] * n
    exempt = cfg.partner_exemption and n == 4
    ntricks = min(h.bit_count() for h in hands)
    for t in range(ntricks):
        trick: list[int] = []
        seats: list[int] = []
        for k in range(n):
            me = (leader + k) % n
            legal = legal_cards(hands[me], tuple(trick), tuple(seats), strain, me, exempt, cfg.undertrump)
            c = policy(hands[me], legal, trick, seats, me, strain, bid_team, n)
            hands[me] &= ~(1 << c)
            trick.append(c)
            seats.append(me)
        w = seats[trick_winner_index(trick, strain)]
        tricks[w] += 1
        points[w] += sum(card_points(c, strain) for c in trick) + (LAST_TRICK_BONUS if t == ntricks - 1 else 0)
        leader = w
    return tuple(tricks), tuple(points)


@lru_cache(maxsize=32)
def scoring_rules(cfg: RulesConfig) -> RulesConfig:
    """The rules used to score sampled deals: every combination declared (auto, rules.md 2.8)."""
    if cfg.declarations == "manual":
        return cfg.replace(declarations="auto")
    return cfg


def sampled_score(cfg: RulesConfig, dealer: int, hands: Sequence[int], contract: Contract,
                  tricks: Sequence[int], points: Sequence[int]) -> tuple[int, int]:
    """Score of a played-out sample under ``contract`` via :func:`blot_env.scoring.score_deal`."""
    scfg = scoring_rules(cfg)
    n = cfg.num_players
    st = State(cfg=scfg, dealer=dealer, start_hands=tuple(hands), stock=(), phase=Phase.DONE, seat=0,
               history=(), hands=(0,) * n, contract=contract, play_hands=tuple(hands), tricks=tuple(tricks),
               points=tuple(points), decl=initial_declarations(n), trick_no=cfg.num_tricks)
    return score_deal(st).score


class MediumAgent(RulesAgent):
    """L2 "Medium" agent: sampled bid evaluation and card-counting play.

    Args:
        samples: sampled deals per auction state (8..16 keeps decisions at a few ms).
        margin: table points (score-sheet units) a bid, contra or recontra must gain over
            passing on the samples.
        z: the gain counted is its mean over the samples minus ``z`` standard errors, so that
            the best of many noisy estimates is not simply the luckiest.
        condition_tries: tries per sample to give a bidder a hand that fits its bid.
        condition_slack: raw points a bidder's L1 estimate may fall short of its bid.
        contra_needs_stoppers: contra only holding the trump jack and nine (three aces against
            no trump), as L1 does; the samples decide whether it pays. (Without this rule the
            samples, which under-read the bidders' strength, made contras right only 38% of the
            time against L1.)
        top_strains: strains simulated besides no trump, best first by the L1 estimate.
        always_nt: always simulate no trump.
    """

    def __init__(self, samples: int = 12, margin: float = 1.0, z: float = 1.0, condition_tries: int = 12,
                 condition_slack: float = 0.0, contra_needs_stoppers: bool = True, top_strains: int = 2,
                 always_nt: bool = True, name: str = "rules-medium"):
        super().__init__(name=name)
        self.contra_needs_stoppers = contra_needs_stoppers
        self.top_strains = top_strains
        self.always_nt = always_nt
        self.samples = samples
        self.margin = margin
        self.z = z
        self.condition_tries = condition_tries
        self.condition_slack = condition_slack
        self._cache: dict = {}

    def reset(self) -> None:
        self._cache.clear()

    # ------------------------------------------------------------------ card play
    def card(self, view: SeatView) -> int:
        lay = layout_for(view.cfg)
        legal = 0
        for a in view.legal:
            legal |= 1 << lay.card_of(a)
        return medium_card(view, legal)

    # ------------------------------------------------------------------ auction
    def call(self, view: SeatView, rng: np.random.Generator | None = None) -> int:
        cfg = view.cfg
        blocks = _by_block(view)
        if "TAKE" in blocks or "NAME" in blocks or cfg.num_players != 4 or cfg.auction not in ("bazar", "belote"):
            return super().call(view, rng)
        if rng is None:
            raise ValueError("the L2 auction samples deals: pass a numpy Generator")
        return self._bid(view, blocks, rng)

    def _bid(self, view: SeatView, blocks: dict[str, list[int]], rng: np.random.Generator) -> int:
        cfg = view.cfg
        lay = layout_for(cfg)
        me = view.seat
        my_team = me % 2
        pass_id = blocks["PASS"][0]
        bids, passed = self._reading(view)
        high_seat, high_strain, high_value, high_kind, high_plus = standing_contract(view)
        key = (cfg, me, view.dealer, view.hand, tuple(sorted(bids.items())), passed)
        if len(self._cache) > 64:
            self._cache.clear()
        samples = self._cache.get(key)
        if samples is None:
            samples = self._draw(view, bids, passed, rng)
            self._cache[key] = samples

        def scores(seat: int, strain: int, value: int, kind: str, plus: int, double: int) -> np.ndarray:
            """Per sample: our side's score minus theirs under this contract (score-sheet units)."""
            played = self._played(key, samples, cfg, view.dealer, strain, seat % 2)
            c = Contract(seat=seat, strain=strain, value=value, kind=kind, plus=plus, double=double, call=-1)
            out = np.empty(len(samples))
            for i, (hands, (tricks, points)) in enumerate(zip(samples, played)):
                sc = sampled_score(cfg, view.dealer, hands, c, tricks, points)
                out[i] = sc[my_team] - sc[1 - my_team]
            return out

        # passing keeps the standing contract (0 if nothing stands: the deal may be passed out)
        if high_seat >= 0:
            base = scores(high_seat, high_strain, high_value, high_kind, high_plus, view.double)
        else:
            base = np.zeros(len(samples))
        k = len(samples)

        def gain(x: np.ndarray) -> float:
            """Lower confidence bound of the paired gain over passing (noise-averse)."""
            d = x - base
            sd = float(d.std(ddof=1)) if k > 1 else 0.0
            return float(d.mean()) - self.z * sd / np.sqrt(k)

        best, best_gain = pass_id, self.margin
        if view.double:
            if "RECONTRA" in blocks and gain(scores(high_seat, high_strain, high_value, high_kind, high_plus, 2)) \
                    > best_gain:
                best = blocks["RECONTRA"][0]
            return best
        if "CONTRA" in blocks and high_seat >= 0 and (holds_stoppers(view.hand, high_strain)
                                                      or not self.contra_needs_stoppers):
            g = gain(scores(high_seat, high_strain, high_value, high_kind, high_plus, 1))
            if g > best_gain:
                best, best_gain = blocks["CONTRA"][0], g
        strains = self._strains(view, high_seat, high_strain)
        # number bids: per strain, levels upwards until two levels in a row gain nothing more
        by_strain: dict[int, list[tuple[int, int]]] = {}
        for a in blocks.get("BID", []):
            v, s = lay.params[a]
            if s in strains:
                by_strain.setdefault(s, []).append((v, a))
        for s, opts in by_strain.items():
            opts.sort()
            fails = 0
            for v, a in opts:
                g = gain(scores(me, s, v, "num", 0, 0))
                if g > best_gain:
                    best, best_gain = a, g
                    fails = 0
                else:
                    fails += 1
                    if fails >= 2:
                        break
        for a in blocks.get("KAPUT", []):
            s = lay.params[a][0]
            if s in strains and self._capot_possible(key, samples, cfg, view.dealer, s, my_team):
                g = gain(scores(me, s, KAPUT_VALUE, "kaput", 0, 0))
                if g > best_gain:
                    best, best_gain = a, g
        for a in blocks.get("KAPUT_PLUS", []):
            plus, s = lay.params[a]
            if s in strains and self._capot_possible(key, samples, cfg, view.dealer, s, my_team):
                g = gain(scores(me, s, KAPUT_VALUE + plus, "kaput_plus", plus, 0))
                if g > best_gain:
                    best, best_gain = a, g
        return best

    # ------------------------------------------------------------------ helpers
    def _strains(self, view: SeatView, high_seat: int, high_strain: int) -> list[int]:
        """Strains worth simulating: the ``top_strains`` best by the L1 estimate, no trump (its
        doubled bid makes it the most lucrative contract), and our side's standing strain."""
        lay = layout_for(view.cfg)
        est = {s: team_estimate(view.hand, s, view.cfg) for s in lay.strains}
        order = sorted(est, key=lambda s: -est[s])
        out = order[:self.top_strains]
        if NT in est and NT not in out and self.always_nt:
            out.append(NT)
        if high_strain >= 0 and high_strain not in out and high_seat % 2 == view.seat % 2:
            out.append(high_strain)
        return out

    @staticmethod
    def _reading(view: SeatView) -> tuple[dict[int, tuple[int, int]], frozenset[int]]:
        """What the other seats' calls say: per seat its highest bid ``(strain, value)``
        (kaputs count as 25), and the seats that passed when no bid stood (and never bid)."""
        lay = layout_for(view.cfg)
        bids: dict[int, tuple[int, int]] = {}
        passed: set[int] = set()
        standing = False
        for seat, a in view.calls:
            block = lay.block_of[a]
            if block == "PASS":
                if not standing and seat != view.seat:
                    passed.add(seat)
                continue
            if block == "BID":
                v, s = lay.params[a]
            elif block in ("KAPUT", "KAPUT_PLUS"):
                s, v = lay.params[a][-1], KAPUT_VALUE
            else:
                continue
            standing = True
            if seat != view.seat and (seat not in bids or v > bids[seat][1]):
                bids[seat] = (s, v)
        return bids, frozenset(passed - set(bids))

    def _draw(self, view: SeatView, bids: dict[int, tuple[int, int]], passed: frozenset[int],
              rng: np.random.Generator) -> list[tuple]:
        """``samples`` full deals consistent with the seat's hand and, softly, with the calls.

        Each sample is the best fit of up to ``condition_tries`` random deals: a bidder's L1
        estimate should reach its bid, and a seat that passed with no bid standing should not
        have had an opening bid by L1's count (``raw_need(bid_min) + 15``).
        """
        cfg = view.cfg
        n = cfg.num_players
        me = view.seat
        lay = layout_for(cfg)
        unseen = cards_of(deck_mask(cfg) & ~view.hand)
        counts = {q: cfg.hand_size for q in range(n) if q != me}
        cap = 16 if cfg.scoring != "belote" else 160
        open_need = raw_need(cfg, cfg.bid_min) + 15.0
        out = []
        tries = max(1, self.condition_tries) if bids or passed else 1
        for _ in range(self.samples):
            best, best_fit = None, None
            for _t in range(tries):
                d = deal_unseen(unseen, counts, {}, rng)
                fit = 0.0
                for q, (s, v) in bids.items():
                    gap = raw_need(cfg, min(v, cap)) - self.condition_slack - team_estimate(d[q], s, cfg)
                    fit -= max(0.0, gap)
                for q in passed:
                    top = max(team_estimate(d[q], s, cfg) for s in lay.strains)
                    fit -= max(0.0, top - open_need - self.condition_slack)
                if best_fit is None or fit > best_fit:
                    best, best_fit = d, fit
                if fit >= 0:
                    break
            out.append(tuple(view.hand if q == me else best[q] for q in range(n)))
        return out

    def _played(self, key, samples, cfg: RulesConfig, dealer: int, strain: int, bid_team: int):
        pk = (key, strain, bid_team)
        got = self._cache.get(pk)
        if got is None:
            leader = (dealer + 1) % cfg.num_players
            got = [playout(cfg, h, strain, leader, bid_team) for h in samples]
            self._cache[pk] = got
        return got

    def _capot_possible(self, key, samples, cfg, dealer: int, strain: int, team: int) -> bool:
        played = self._played(key, samples, cfg, dealer, strain, team)
        n = cfg.num_players
        return any(sum(t[q] for q in range(n) if q % 2 == team) == cfg.num_tricks for t, _ in played)


__all__ = ["Knowledge", "MediumAgent", "deal_unseen", "knowledge", "may_beat", "medium_card", "playout",
           "sampled_score"]
