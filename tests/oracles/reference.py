"""Independent reference rules: written from docs/rules.md, importing nothing from blot_env.

Cards are ids ``suit * 8 + rank`` (suits C D H S, ranks 7 8 9 T J Q K A) as in the engine's
records, but every table and rule here is typed again from the rules text, so that a slip in
``blot_env.cards``/``play``/``scoring`` shows up as a disagreement instead of being copied.
"""

from __future__ import annotations

from collections.abc import Sequence

RANKS = "789TJQKA"
NT = 4  # the no-trump strain (strains 0..3 are the suits C D H S)
# rules.md 1.1: strength inside a trick, lowest first
TRUMP_STRENGTH = {r: i for i, r in enumerate("78QKTA9J")}
PLAIN_STRENGTH = {r: i for i, r in enumerate("789JQKTA")}
# rules.md 1.1: card points
TRUMP_PTS = {"7": 0, "8": 0, "9": 14, "T": 10, "J": 20, "Q": 3, "K": 4, "A": 11}
PLAIN_PTS = {"7": 0, "8": 0, "9": 0, "T": 10, "J": 2, "Q": 3, "K": 4, "A": 11}
NT_PTS = dict(PLAIN_PTS, A=19)
LAST_TRICK = 10
DEAL_RAW = 162
# rules.md 2.5 (bazar, tp): multiplier M by contra level, suit / no-trump
MULT_SUIT = (1, 2, 4)
MULT_NT = (2, 3, 5)
# rules.md 6 (belote, raw): contra multiplier k, and what the side that was right gets beside the bid
MULT_BELOTE = (1, 2, 4)
BELOTE_BASE = 160
# rules.md 3-5: card tp of a 2-player deal (162 raw is about 16 tp)
TWO_PLAYER_DEAL_TP = 16


def rank(card: int) -> str:
    return RANKS[card % 8]


def ref_points(card: int, strain: int) -> int:
    """Raw points of a card (rules.md 1.1)."""
    if strain == NT:
        return NT_PTS[rank(card)]
    return (TRUMP_PTS if card // 8 == strain else PLAIN_PTS)[rank(card)]


def ref_winner(cards: Sequence[int], strain: int) -> int:
    """Index of the winning card of a trick, in play order (rules.md 1.2)."""
    led = cards[0] // 8

    def key(c: int) -> tuple[int, int]:
        if strain != NT and c // 8 == strain:
            return (2, TRUMP_STRENGTH[rank(c)])
        if c // 8 == led:
            return (1, PLAIN_STRENGTH[rank(c)])
        return (0, 0)

    return max(range(len(cards)), key=lambda i: key(cards[i]))


def ref_legal(playable: set[int], trick: Sequence[tuple[int, int]], strain: int, me: int, n: int,
              partner_exemption: bool = True, undertrump: str = "free") -> set[int]:
    """The cards ``me`` may play (rules.md 1.3): ``trick`` is ``[(seat, card), ...]`` so far.

    Follow suit (trump led: beat the highest trump if you can); void: ruff, over-ruffing an
    opponent's trump when you can; unable to over-ruff: any card (``free``) or any trump
    (``forced``); void while the partner wins the trick (4 players, ``partner_exemption``):
    any card. In no-trump only following suit is required.
    """
    if not trick:
        return set(playable)
    led = trick[0][1] // 8
    follow = {c for c in playable if c // 8 == led}
    cards = [c for _, c in trick]
    trumps_in_trick = [c for c in cards if strain != NT and c // 8 == strain]
    top = max((TRUMP_STRENGTH[rank(c)] for c in trumps_in_trick), default=-1)
    if follow:
        if strain != NT and led == strain:
            over = {c for c in follow if TRUMP_STRENGTH[rank(c)] > top}
            return over or follow
        return follow
    if strain == NT:
        return set(playable)
    trumps = {c for c in playable if c // 8 == strain}
    if not trumps:
        return set(playable)
    winner_seat = trick[ref_winner(cards, strain)][0]
    if n == 4 and partner_exemption and winner_seat % 2 == me % 2:
        return set(playable)
    if trumps_in_trick:
        over = {c for c in trumps if TRUMP_STRENGTH[rank(c)] > top}
        if over:
            return over
        return set(trumps) if undertrump == "forced" else set(playable)
    return trumps


def ref_round(x: int) -> int:
    """r(x) of rules.md 0: the last digit 0-5 rounds down, 6-9 up."""
    return (x + 4) // 10


def holds_any_combo(hand: int, strain: int) -> bool:
    """Conservative: any 3-run in a suit, any carre of 9..A, or the trump K+Q (rules.md 1.4).

    True whenever the hand could hold something that counts in any preset (a carre of 8s or
    7s never counts; duel-app counts no carre at all, which only makes this over-cautious).
    """
    for s in range(4):
        bits = (hand >> (8 * s)) & 0xFF
        if bits & (bits >> 1) & (bits >> 2):
            return True
    for r in range(2, 8):
        if all(hand >> (s * 8 + r) & 1 for s in range(4)):
            return True
    return holds_blot(hand, strain)


def holds_blot(hand: int, strain: int) -> bool:
    """The trump K and Q in one hand (rules.md 1.4; none in no-trump)."""
    if strain == NT:
        return False
    return bool(hand >> (strain * 8 + 6) & 1 and hand >> (strain * 8 + 5) & 1)


def ref_bazar_score(seat: int, strain: int, value: int, kind: str, double: int, tricks: Sequence[int],
                    card_points: Sequence[int], num_tricks: int = 8, capot: int = 25) -> tuple[list[int], bool]:
    """rules.md 2.5 with no combination and no blot (K_A = K_D = 0): (score per team, made).

    ``kind``: ``num``, ``kaput`` or ``kaput_plus`` (the last can never be made without the
    bidder's own combinations).
    """
    A = seat % 2
    D = 1 - A
    b = value
    mult = (MULT_NT if strain == NT else MULT_SUIT)[double]
    capA = tricks[A] == num_tricks
    capD = tricks[D] == num_tricks
    V = 250 if capA else card_points[A]
    made = not capD and V >= 10 * b and (kind == "num" or capA) and kind != "kaput_plus"
    score = [0, 0]
    if double == 0:
        if made:
            score[A] = mult * b + (capot if capA else ref_round(card_points[A]))
            score[D] = 0 if capA else ref_round(card_points[D])
        else:
            score[D] = mult * b + (capot if capD else 16)
    else:
        w, capw = (A, capA) if made else (D, capD)
        score[w] = mult * b + (capot if capw else 16)
    return score, made


def ref_two_player_score(taker: int, tricks: Sequence[int], card_points: Sequence[int], undealt_points: int,
                         family: str, num_tricks: int, capot: int, taker_ge: bool = False,
                         open_complement: bool = True) -> tuple[list[int], bool]:
    """rules.md 3-5 with no combination and no blot: (score per player, made).

    The taker makes when his card points beat the opponent's (strictly unless ``taker_ge``)
    and the opponent did not capot him: in the duels a capot is taking every trick; in Open
    Blot a player whose tricks hold no card point is kaput. Made: a capot writes ``capot``;
    otherwise the duel taker writes r(c_t + undealt), the Open Blot taker 16 - r(c_o)
    (``open_complement``), the opponent r(c_o). Failed: the opponent writes 16 (``capot``
    when the taker was capotted), the taker 0.
    """
    o = 1 - taker
    if family == "open":
        capped_by = [card_points[1 - s] == 0 for s in (0, 1)]
    else:
        capped_by = [tricks[s] == num_tricks for s in (0, 1)]
    beats = card_points[taker] >= card_points[o] if taker_ge else card_points[taker] > card_points[o]
    made = beats and not capped_by[o]
    score = [0, 0]
    if made:
        if capped_by[taker]:
            score[taker] = capot
        elif family == "open":
            ro = ref_round(card_points[o])
            score[o] = ro
            score[taker] = TWO_PLAYER_DEAL_TP - ro if open_complement else ref_round(card_points[taker])
        else:
            score[taker] = ref_round(card_points[taker] + undealt_points)
            score[o] = ref_round(card_points[o])
    else:
        score[o] = capot if capped_by[o] else TWO_PLAYER_DEAL_TP
    return score, made


def ref_belote_score(seat: int, value: int, double: int, tricks: Sequence[int], card_points: Sequence[int],
                     num_tricks: int = 8, capot: int = 250) -> tuple[list[int], bool]:
    """rules.md 6 (raw points) with no declaration and no belote: (score per team, made).

    Made when the bidders' card points reach the bid and the defenders did not take every
    trick. A capot pays (capot + v)·k to the pair that took every trick; otherwise a doubled
    deal pays (160 + v)·k to the side that was right; undoubled: made v + cards to the
    bidders and cards to the defenders, failed 160 + v to the defenders.
    """
    A = seat % 2
    D = 1 - A
    k = MULT_BELOTE[double]
    capA = tricks[A] == num_tricks
    capD = tricks[D] == num_tricks
    made = not capD and card_points[A] >= value
    score = [0, 0]
    if capA or capD:
        score[A if capA else D] = (capot + value) * k
    elif double:
        score[A if made else D] = (BELOTE_BASE + value) * k
    elif made:
        score[A] = value + card_points[A]
        score[D] = card_points[D]
    else:
        score[D] = BELOTE_BASE + value
    return score, made
