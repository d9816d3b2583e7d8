"""L1, "Easy": point-count bidding and greedy card play (docs/evaluation.md, rules text 004 "Лёгкий").

The agent reads only a :class:`~blot_env.view.SeatView`. Every decision is dispatched on the
action layout's named blocks (``lay.block_of`` / ``lay.params``), never on a preset's name,
so the same code plays every preset: bazar and belote bids (``BID``, ``KAPUT``,
``KAPUT_PLUS``, ``CONTRA``, ``RECONTRA``), the 2-player trump choices (``TAKE``, ``NAME``),
the manual declaration protocol (``ANNOUNCE``, ``HEIGHT``, ``HEIGHT_TRUMP``, ``CONCEDE``,
``REVEAL``, ``SHOW``, ``NOSHOW``) and cards (``PLAY``).

Bidding (rules.md 2.2, 6): :func:`own_value` scores the hand for each strain in raw points
(trump honours, length, side aces and guarded tens, ruffing shape, combinations, blot);
:func:`team_estimate` maps it to the expected raw points of the side (partner average
included; the linear map was fitted on playouts, see the constants). The agent bids the
highest level the estimate affords minus a safety margin, raises its partner's strain by
what its hand adds over an average hand, contras when the opponents' bid is clearly above
what the two defending hands leave them, recontras when its own bid is clearly safe, and
bids kaput (kaput+N with its own sure combinations) when the hand has no loser.

Card play (rules.md 1.3): lead trumps from the top as the bidding side, otherwise side aces,
otherwise a low card; follow by winning as cheaply as possible when an opponent is winning,
else discard the cheapest card. The pure function :func:`greedy_card` is also the playout
policy of the L2 agent's bid evaluation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from blot_env.actions import CLS_CARRE, CLS_TERZ, layout_for
from blot_env.cards import (
    NT,
    PLAIN_ORDER,
    R9,
    RA,
    RJ,
    RK,
    RQ,
    RT,
    TRUMP_ORDER,
    card_points,
    cards_of,
    strength,
    trick_winner_index,
)
from blot_env.codes import KAPUT_VALUE
from blot_env.combos import CARRE_ORDER_NT, CARRE_ORDER_TRUMP, best_set, has_blot
from blot_env.state import Phase
from blot_env.view import SeatView

from ..base import BaseAgent, legal_or_raise

# ---------------------------------------------------------------------------- card helpers


def bit(suit: int, rank: int) -> int:
    return 1 << (suit * 8 + rank)


def suit_order(card: int, strain: int) -> int:
    """Rank of a card inside its own suit (higher wins): trump order for trumps, else plain."""
    if strain != NT and card >> 3 == strain:
        return TRUMP_ORDER[card & 7]
    return PLAIN_ORDER[card & 7]


def discard_cost(card: int, strain: int) -> float:
    """How much it hurts to throw ``card`` away: its points, more for trumps and aces."""
    pts = card_points(card, strain)
    cost = float(pts)
    if strain != NT and card >> 3 == strain:
        cost += 12.0 + suit_order(card, strain)
    else:
        cost += 0.1 * PLAIN_ORDER[card & 7]
    return cost


def cheapest(cards: Sequence[int], strain: int) -> int:
    return min(cards, key=lambda c: (discard_cost(c, strain), c))


def weakest_winner(cards: Sequence[int], led: int, strain: int) -> int:
    """The winning card that costs least: fewest points, then lowest trick strength."""
    return min(cards, key=lambda c: (card_points(c, strain), strength(c, led, strain), c))


def team_of(seat: int, n: int) -> int:
    return seat % 2 if n == 4 else seat


def greedy_card(hand: int, legal: int, trick: Sequence[int], trick_seats: Sequence[int], me: int,
                strain: int, bid_team: int, n: int) -> int:
    """The L1 card choice (a card id from the ``legal`` bitmask).

    Args:
        hand: bitmask of the seat's playable cards.
        legal: bitmask of the legal cards (rules.md 1.3), non-empty.
        trick, trick_seats: cards of the current trick and who played them.
        me: the seat to play; ``bid_team``: the side holding the contract (``seat % 2``; in
            2-player games the taker's seat), -1 if unknown.
        strain: contract strain 0..3 or ``NT``.
        n: players at the table.
    """
    cards = cards_of(legal)
    if len(cards) == 1:
        return cards[0]
    if not trick:
        return _greedy_lead(hand, cards, strain, team_of(me, n) == bid_team)
    led = trick[0] >> 3
    w = trick_winner_index(trick, strain)
    best = trick[w]
    if n == 4 and (trick_seats[w] - me) % 2 == 0:
        return cheapest(cards, strain)
    best_s = strength(best, led, strain)
    winners = [c for c in cards if strength(c, led, strain) > best_s]
    if winners:
        return weakest_winner(winners, led, strain)
    return cheapest(cards, strain)


def _greedy_lead(hand: int, cards: list[int], strain: int, bidding_side: bool) -> int:
    if strain != NT:
        trumps = [c for c in cards if c >> 3 == strain]
        if bidding_side and trumps:
            top = max(trumps, key=lambda c: TRUMP_ORDER[c & 7])
            if top & 7 in (RJ, R9):
                return top
        aces = [c for c in cards if c & 7 == RA and c >> 3 != strain]
        if aces:
            return aces[0]
        plain = [c for c in cards if c >> 3 != strain]
        return cheapest(plain or cards, strain)
    aces = [c for c in cards if c & 7 == RA]
    if aces:
        return aces[0]
    return cheapest(cards, strain)


# ---------------------------------------------------------------------------- hand evaluation

#: raw-point weights of :func:`own_value`, trump suit       7  8  9   T  J   Q  K  A
TRUMP_WEIGHT = (3, 3, 18, 9, 26, 4, 5, 12)
#: weight of the trump 9 without the jack and with fewer than 3 trumps
TRUMP_NINE_ALONE = 12
TRUMP_LENGTH_BONUS = 8
"""Per trump beyond the third."""
SIDE_ACE = 14
SIDE_TEN_WITH_ACE = 11
SIDE_TEN_GUARDED = 4
SIDE_TEN_BARE = 2
SIDE_KING_WITH_AT = 4
RUFF_VOID = 8
RUFF_SINGLETON = 4
NT_ACE = 25
NT_TEN_WITH_ACE = 14
NT_TEN_GUARDED = 5
NT_KING_WITH_AT = 6
NT_LONG_SUIT = 6
"""Per card beyond the third in a suit headed by the ace (no trump)."""
#: share of a combination's raw value expected to count (it may lose to a senior one)
COMBO_SHARE = {CLS_TERZ: 0.6, 2: 0.8, 3: 0.9, CLS_CARRE: 1.0}
BLOT_RAW = 20

#: ``team_estimate = TEAM_BASE + TEAM_SLOPE * own_value`` (4 players, raw points incl. the
#: partner's average hand and the side's counted combinations); fitted by least squares on
#: 4,000 random bazar deals played out with :func:`greedy_card`, the estimating seat's side
#: holding the contract: suit 48.3 + 1.03 x, no trump 70.9 + 0.67 x, residual sd 42 raw.
TEAM_BASE = {False: 48.0, True: 70.0}
TEAM_SLOPE = {False: 1.0, True: 0.67}
"""Keys: is the strain no-trump."""
#: expected raw points of the defending side = ``DEFENCE_BASE + own_value`` of a defender's hand
#: in the bidders' strain; the unconditional fit is 53.5 + 1.02 x (sd 41), lowered because a
#: bid against us means the partner's hand is weaker than average.
DEFENCE_BASE = 40.0


def own_value(hand: int, strain: int, long_run: str = "split", carre_table: str = "armenian") -> float:
    """Raw points the cards of ``hand`` bring to their side if ``strain`` is the contract.

    A heuristic count (not a probability): trump honours and length, side aces, guarded
    tens, ruffing shape, plus the expected share of the hand's combinations and the blot.
    """
    v = 0.0
    if strain != NT:
        t = (hand >> (8 * strain)) & 0xFF
        nt = t.bit_count()
        for r in range(8):
            if t >> r & 1:
                w = TRUMP_WEIGHT[r]
                if r == R9 and not (t >> RJ & 1) and nt < 3:
                    w = TRUMP_NINE_ALONE
                v += w
        v += TRUMP_LENGTH_BONUS * max(0, nt - 3)
        for s in range(4):
            if s == strain:
                continue
            b = (hand >> (8 * s)) & 0xFF
            ln = b.bit_count()
            if b >> RA & 1:
                v += SIDE_ACE
                if b >> RT & 1:
                    v += SIDE_TEN_WITH_ACE
                    if b >> RK & 1:
                        v += SIDE_KING_WITH_AT
            elif b >> RT & 1:
                v += SIDE_TEN_GUARDED if ln >= 3 else SIDE_TEN_BARE
            if nt >= 2:
                if ln == 0:
                    v += RUFF_VOID
                elif ln == 1:
                    v += RUFF_SINGLETON
    else:
        for s in range(4):
            b = (hand >> (8 * s)) & 0xFF
            ln = b.bit_count()
            if b >> RA & 1:
                v += NT_ACE
                if b >> RT & 1:
                    v += NT_TEN_WITH_ACE
                    if b >> RK & 1:
                        v += NT_KING_WITH_AT
                v += NT_LONG_SUIT * max(0, ln - 3)
            elif b >> RT & 1 and ln >= 3:
                v += NT_TEN_GUARDED
    v += combo_value(hand, strain, long_run, carre_table)
    return v


def combo_value(hand: int, strain: int, long_run: str = "split", carre_table: str = "armenian") -> float:
    """Expected raw points of the hand's combinations (shared by seniority risk) plus the blot."""
    v = 0.0
    for c in best_set(hand, strain, long_run, carre_table):
        v += COMBO_SHARE.get(c.cls, 1.0) * c.value
    if has_blot(hand, strain):
        v += BLOT_RAW
    return v


def team_estimate(hand: int, strain: int, cfg) -> float:
    """Expected raw points (cards + combinations) of the side holding ``hand`` in ``strain``.

    4 players: ``TEAM_BASE + TEAM_SLOPE * own_value`` (partner's average hand included);
    2 players: the hand's own value scaled to its share of the cards in play.
    """
    v = own_value(hand, strain, cfg.long_run, cfg.carre_table)
    if cfg.num_players == 4:
        return TEAM_BASE[strain == NT] + TEAM_SLOPE[strain == NT] * v
    return v


def raw_need(cfg, value: int) -> int:
    """Raw points a bid of ``value`` promises: tens in the Armenian presets, raw in belote."""
    return value if cfg.scoring == "belote" else 10 * value


def no_losers(hand: int, strain: int) -> bool:
    """True when the hand should take every trick by itself (a kaput hand).

    Trumps: at least 5 with the jack and the nine, or 4 headed J 9 A; every side card is
    a top card of its suit (A, then T under the A, then K under A T, ...). No trump: every
    card is a top card of its suit.
    """
    for s in range(4):
        b = (hand >> (8 * s)) & 0xFF
        if not b:
            continue
        if strain != NT and s == strain:
            nt = b.bit_count()
            jn = b >> RJ & 1 and b >> R9 & 1
            if not (jn and (nt >= 5 or (nt >= 4 and b >> RA & 1))):
                return False
            continue
        # plain order A T K Q J 9 8 7: the suit's cards must be a prefix of it
        order = sorted(range(8), key=lambda r: -PLAIN_ORDER[r])
        k = b.bit_count()
        if any(not b >> r & 1 for r in order[:k]):
            return False
    return strain == NT or (hand >> (8 * strain)) & 0xFF != 0


def holds_stoppers(hand: int, strain: int) -> bool:
    """A hand that can contra ``strain``: the trump jack and nine, or three aces against no trump."""
    if strain == NT:
        return sum(hand >> (8 * s + RA) & 1 for s in range(4)) >= 3
    return bool(hand >> (8 * strain + RJ) & 1 and hand >> (8 * strain + R9) & 1)


# ---------------------------------------------------------------------------- auction helpers


def standing_contract(view: SeatView) -> tuple[int, int, int, str, int]:
    """``(seat, strain, value, kind, plus)`` of the standing bid from the public calls
    (rules.md 2.2: ``kind`` ``"num"``, ``"kaput"`` or ``"kaput_plus"``, ``value`` in tens, kaput
    25 and kaput+N 25 + N), or ``(-1, -1, 0, "", 0)`` while no bid stands."""
    lay = layout_for(view.cfg)
    for seat, a in reversed(view.calls):
        block = lay.block_of[a]
        if block == "BID":
            v, s = lay.params[a]
            return seat, s, v, "num", 0
        if block == "KAPUT":
            return seat, lay.params[a][0], KAPUT_VALUE, "kaput", 0
        if block == "KAPUT_PLUS":
            n, s = lay.params[a]
            return seat, s, KAPUT_VALUE + n, "kaput_plus", n
    return -1, -1, 0, "", 0


def standing_bid(view: SeatView) -> tuple[int, int, int]:
    """``(seat, strain, value)`` of the standing bid (:func:`standing_contract`), or ``(-1, -1, 0)``."""
    return standing_contract(view)[:3]


def partner_of(seat: int, n: int) -> int:
    return (seat + 2) % 4 if n == 4 else -1


def _by_block(view: SeatView) -> dict[str, list[int]]:
    lay = layout_for(view.cfg)
    out: dict[str, list[int]] = {}
    for a in view.legal:
        out.setdefault(lay.block_of[a], []).append(a)
    return out


class RulesAgent(BaseAgent):
    """L1 "Easy" rules agent (deterministic: it never draws from ``rng``).

    Args:
        open_margin: raw points the team estimate must exceed a bid's promise by.
        raise_margin: the same for raising the partner's strain.
        contra_margin: raw points by which the opponents must be expected to fall short.
        recontra_margin: raw points by which the own bid must be expected to be made.
    """

    def __init__(self, open_margin: float = 15.0, raise_margin: float = 10.0, contra_margin: float = 20.0,
                 recontra_margin: float = 20.0, name: str = "rules"):
        self.open_margin = open_margin
        self.raise_margin = raise_margin
        self.contra_margin = contra_margin
        self.recontra_margin = recontra_margin
        self.name = name

    # ------------------------------------------------------------------ entry point
    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = legal_or_raise(view)
        if len(legal) == 1:
            return legal[0]
        if view.phase == Phase.AUCTION:
            return self.call(view, rng)
        lay = layout_for(view.cfg)
        block = lay.block_of[legal[0]]
        if block == "PLAY":
            return lay.play_id(self.card(view))
        return self.declare(view, _by_block(view))

    # ------------------------------------------------------------------ card play
    def card(self, view: SeatView) -> int:
        """The card to play (a card id)."""
        lay = layout_for(view.cfg)
        legal = 0
        for a in view.legal:
            legal |= 1 << lay.card_of(a)
        bid_team = team_of(view.contract_seat, view.cfg.num_players) if view.contract_seat >= 0 else -1
        return greedy_card(view.hand, legal, view.trick, view.trick_seats, view.seat, view.contract_strain,
                           bid_team, view.cfg.num_players)

    # ------------------------------------------------------------------ declarations
    def declare(self, view: SeatView, blocks: dict[str, list[int]]) -> int:
        """Manual declarations (rules.md 2.4.3): announce the best class held, say "trump"
        when true, concede a height exchange only to a claim that beats ours, always show."""
        lay = layout_for(view.cfg)
        if "ANNOUNCE" in blocks:
            return max(blocks["ANNOUNCE"], key=lambda a: lay.params[a][0])
        if "HEIGHT_TRUMP" in blocks:
            return blocks["HEIGHT_TRUMP"][0]
        if "HEIGHT" in blocks:
            return blocks["HEIGHT"][0]
        if "CONCEDE" in blocks and "REVEAL" in blocks:
            return blocks["CONCEDE"][0] if self.claim_loses(view) else blocks["REVEAL"][0]
        if "SHOW" in blocks:
            return blocks["SHOW"][0]
        return view.legal[0]

    @staticmethod
    def claim_loses(view: SeatView) -> bool:
        """True when the height just stated by an opponent beats our claim (public info only:
        the announced class, the stated top rank and whether "trump" was said)."""
        mine = view.own_claim
        if mine is None:
            return False
        n = view.cfg.num_players
        for seat, step, top in reversed(view.events):
            if step in (0, 1) and team_of(seat, n) != team_of(view.seat, n):
                cls = view.announced[seat]
                if cls == CLS_CARRE:
                    order = CARRE_ORDER_NT if view.contract_strain == NT else CARRE_ORDER_TRUMP
                    theirs = (1, order[top], top, 0)
                else:
                    theirs = (0, cls, top, 1 if step == 1 else 0)
                # the answerer announced first, so an exact tie goes to us (rules.md 1.4 item 3)
                return theirs > tuple(mine.key)
        return False

    # ------------------------------------------------------------------ auction
    def call(self, view: SeatView, rng: np.random.Generator | None = None) -> int:
        """An auction call (any auction family; dispatched on the legal blocks)."""
        blocks = _by_block(view)
        if "TAKE" in blocks or "NAME" in blocks:
            return self.trump_choice(view, blocks)
        return self.bid(view, blocks)

    def strain_estimates(self, view: SeatView) -> dict[int, float]:
        lay = layout_for(view.cfg)
        return {s: team_estimate(view.hand, s, view.cfg) for s in lay.strains}

    def bid(self, view: SeatView, blocks: dict[str, list[int]]) -> int:
        """A bazar or belote call (rules.md 2.2, 6)."""
        cfg = view.cfg
        lay = layout_for(cfg)
        n = cfg.num_players
        me = view.seat
        pass_id = blocks["PASS"][0]
        high_seat, high_strain, high_value = standing_bid(view)
        est = self.strain_estimates(view)
        if view.double:
            if "RECONTRA" in blocks and high_seat == me and \
                    est[high_strain] >= raw_need(cfg, high_value) + self.recontra_margin:
                return blocks["RECONTRA"][0]
            return pass_id
        # kaput with a hand that has no loser
        kaput = self.kaput_call(view, blocks)
        if kaput is not None:
            return kaput
        bids = blocks.get("BID", [])
        partner_high = high_seat >= 0 and high_seat == partner_of(me, n)
        if partner_high:
            if any(seat == me and lay.block_of[a] in ("BID", "KAPUT", "KAPUT_PLUS") for seat, a in view.calls):
                return pass_id  # support once: the partner's raise already counts our hand
            # support: the partner's bid stands for an average partner; add what we hold over it
            extra = est[high_strain] - team_estimate(AVERAGE_HAND[high_strain], high_strain, cfg)
            target = raw_need(cfg, high_value) + extra - self.raise_margin
            choice = self._highest_affordable(bids, lay, cfg, {high_strain: target})
            return choice if choice is not None else pass_id
        if high_seat == me:
            return pass_id  # our own bid stands: keep it (the last word, rules.md 2.2)
        choice = self._highest_affordable(bids, lay, cfg, {s: e - self.open_margin for s, e in est.items()})
        if choice is not None:
            return choice
        if "CONTRA" in blocks and high_strain >= 0 and n == 4:
            # what the defending side is expected to take leaves the bidders short by a margin
            defence = DEFENCE_BASE + own_value(view.hand, high_strain, cfg.long_run, cfg.carre_table)
            short = raw_need(cfg, high_value) - (162 - defence)
            if holds_stoppers(view.hand, high_strain) and short > self.contra_margin:
                return blocks["CONTRA"][0]
        return pass_id

    @staticmethod
    def _highest_affordable(bids: list[int], lay, cfg, budget: dict[int, float]) -> int | None:
        """The legal bid with the highest value whose promise fits the strain's budget."""
        best, best_key = None, None
        for a in bids:
            v, s = lay.params[a]
            if s not in budget or raw_need(cfg, v) > budget[s]:
                continue
            key = (v, budget[s] - raw_need(cfg, v))
            if best_key is None or key > best_key:
                best, best_key = a, key
        return best

    def kaput_call(self, view: SeatView, blocks: dict[str, list[int]]) -> int | None:
        """Kaput (or kaput+N with the hand's sure combinations) when the hand has no loser."""
        lay = layout_for(view.cfg)
        hand = view.hand
        options = [(a, lay.params[a][-1]) for a in blocks.get("KAPUT", [])]
        plus = [(a, lay.params[a][0], lay.params[a][1]) for a in blocks.get("KAPUT_PLUS", [])]
        strains = {s for _, s in options} | {s for _, _, s in plus}
        good = [s for s in strains if no_losers(hand, s)]
        if not good:
            return None
        s = max(good, key=lambda x: own_value(hand, x, view.cfg.long_run, view.cfg.carre_table))
        # kaput+N: N must be covered by what surely counts (blot) or by a big combination
        sure = 2 if has_blot(hand, s) else 0
        big = sum(c.value // 10 for c in best_set(hand, s, view.cfg.long_run, view.cfg.carre_table) if c.cls >= 2)
        cands = [(n, a) for a, n, st in plus if st == s and n <= max(sure, big + sure)]
        if cands:
            return max(cands)[1]
        for a, st in options:
            if st == s:
                return a
        return None

    # ------------------------------------------------------------------ 2-player trump choice
    def trump_choice(self, view: SeatView, blocks: dict[str, list[int]]) -> int:
        """Duels' take/name and Open Blot's name (rules.md 3, 4, 5.2, 5.7.2)."""
        lay = layout_for(view.cfg)
        cfg = view.cfg
        hand = view.hand
        forced = "PASS" not in blocks
        u = view.open_card
        if "TAKE" in blocks:
            s = u >> 3 if u >= 0 else -1
            if s >= 0:
                h = hand | (1 << u)
                if forced or self.worth_taking(h, s, cfg):
                    return blocks["TAKE"][0]
            return blocks["PASS"][0] if not forced else blocks["TAKE"][0]
        names = blocks.get("NAME", [])
        if not names:
            return view.legal[0]
        best, best_v = None, None
        for a in names:
            s, keep = lay.params[a][0], lay.params[a][1]
            h = hand | (1 << u) if keep and u >= 0 else hand
            v = own_value(h, s, cfg.long_run, cfg.carre_table) * (1.0 if keep or u < 0 else 1.03)
            if keep and u >= 0 and not self.keep_open_card(u, s):
                v -= 1.0
            if best_v is None or v > best_v:
                best, best_v = a, v
        s_best, keep_best = lay.params[best][0], lay.params[best][1]
        h_best = hand | (1 << u) if keep_best and u >= 0 else hand
        if forced or self.worth_taking(h_best, s_best, cfg):
            return best
        return blocks["PASS"][0]

    @staticmethod
    def keep_open_card(u: int, strain: int) -> bool:
        """Keep the open card when it is a trump or carries points."""
        return (strain != NT and u >> 3 == strain) or card_points(u, strain) >= 10

    @staticmethod
    def worth_taking(hand: int, strain: int, cfg) -> bool:
        """2-player: the visible cards are clearly above an average hand of the same size.

        The taker must beat the opponent (rules.md 3, 4, 5.5), so a hand is taken when its
        value per card exceeds the average hand's by 30%.
        """
        k = hand.bit_count()
        if k == 0:
            return False
        v = own_value(hand, strain, cfg.long_run, cfg.carre_table)
        avg = own_value(AVERAGE_HAND[strain], strain, cfg.long_run, cfg.carre_table) / 8.0
        return v / k >= 1.3 * avg


def _average_hands() -> dict[int, int]:
    """A typical 8-card hand per strain for "what an average partner holds" comparisons:
    two trumps (T, 8), one side ace, and small cards (no combinations)."""
    out = {}
    for s in range(4):
        side = [x for x in range(4) if x != s]
        h = bit(s, RT) | bit(s, 1) | bit(side[0], RA) | bit(side[0], 0) | bit(side[1], RQ) | bit(side[1], 0) \
            | bit(side[2], R9) | bit(side[2], 1)
        out[s] = h
    # no trump: one ace, one guarded ten, small cards
    out[NT] = bit(0, RA) | bit(0, 0) | bit(1, RT) | bit(1, 1) | bit(1, 0) | bit(2, R9) | bit(2, RQ) | bit(3, 1)
    return out


AVERAGE_HAND = _average_hands()

__all__ = [
    "AVERAGE_HAND",
    "RulesAgent",
    "cheapest",
    "greedy_card",
    "no_losers",
    "own_value",
    "raw_need",
    "standing_bid",
    "standing_contract",
    "team_estimate",
    "weakest_winner",
]
