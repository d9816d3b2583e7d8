"""Cards, hands and the point/order tables of rules.md 1.1.

A card is an ``int`` in ``0..31``: ``suit * 8 + rank`` with suits ``C D H S`` (0..3) and
ranks ``7 8 9 T J Q K A`` (0..7, the *natural* order used for sequences, rules.md 1.4).
A set of cards is an ``int`` bitmask with bit ``card`` set.
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "CDHS"
RANKS = "789TJQKA"
NT = 4  # the no-trump strain; strains are 0..3 (suits) and 4 (NT)
STRAINS = ("C", "D", "H", "S", "NT")

R7, R8, R9, RT, RJ, RQ, RK, RA = range(8)

#: card points, rules.md 1.1        7  8   9   T   J  Q  K   A
TRUMP_POINTS = (0, 0, 14, 10, 20, 3, 4, 11)  # suit total 62
PLAIN_POINTS = (0, 0, 0, 10, 2, 3, 4, 11)  # suit total 30
NT_POINTS = (0, 0, 0, 10, 2, 3, 4, 19)  # suit total 38

#: strength inside a trick (higher wins), rules.md 1.1 and 1.2
#:                7  8  9  T  J  Q  K  A
TRUMP_ORDER = (0, 1, 6, 4, 7, 2, 3, 5)  # J 9 A T K Q 8 7
PLAIN_ORDER = (0, 1, 2, 6, 3, 4, 5, 7)  # A T K Q J 9 8 7

LAST_TRICK_BONUS = 10
#: raw card points of a whole deal: 62 + 3*30 + 10 with a trump, 4*38 + 10 in no trump
DEAL_POINTS = 162
FULL_DECK = (1 << 32) - 1
#: the 24-card deck (9..A) of the duels, rules.md 3 and 4
SHORT_DECK = sum(1 << (s * 8 + r) for s in range(4) for r in range(R9, 8))
SUIT_MASKS = tuple(0xFF << (8 * s) for s in range(4))


def suit_of(card: int) -> int:
    return card >> 3


def rank_of(card: int) -> int:
    return card & 7


def make_card(suit: int, rank: int) -> int:
    return suit * 8 + rank


def card_str(card: int) -> str:
    """``"JH"`` style name of a card id."""
    if not 0 <= card < 32:
        raise ValueError(f"card id {card} out of range 0..31")
    return RANKS[card & 7] + SUITS[card >> 3]


def parse_card(text: str) -> int:
    """Parse ``"JH"``, ``"TS"`` or ``"10S"`` into a card id.

    Raises:
        ValueError: the text is not a card of the 32-card deck.
    """
    t = text.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise ValueError(f"not a card: {text!r} (expected rank 7 8 9 T J Q K A then suit C D H S)")
    return SUITS.index(t[1]) * 8 + RANKS.index(t[0])


def parse_cards(text: str) -> list[int]:
    """Parse a space-separated card list (``"JH 9H AH"``) into card ids, in order."""
    return [parse_card(tok) for tok in text.split()]


def cards_str(cards: Iterable[int]) -> str:
    return " ".join(card_str(c) for c in cards)


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    """Card ids of a bitmask, ascending (suit-major, natural rank order)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_str(mask: int) -> str:
    return cards_str(cards_of(mask))


def popcount(mask: int) -> int:
    return mask.bit_count()


def card_points(card: int, trump: int) -> int:
    """Raw card points of ``card`` when ``trump`` is the strain (0..3, or ``NT``)."""
    r = card & 7
    if trump == NT:
        return NT_POINTS[r]
    if card >> 3 == trump:
        return TRUMP_POINTS[r]
    return PLAIN_POINTS[r]


def points_table(trump: int) -> tuple[int, ...]:
    """Raw points of every card id (``int[32]``) for a strain."""
    return tuple(card_points(c, trump) for c in range(32))


def strength(card: int, led_suit: int, trump: int) -> int:
    """Trick strength of a card (rules.md 1.2): trumps above the led suit, others 0."""
    s = card >> 3
    r = card & 7
    if trump != NT and s == trump:
        return 16 + TRUMP_ORDER[r]
    if s == led_suit:
        return 8 + PLAIN_ORDER[r]
    return 0


def trick_winner_index(cards: list[int] | tuple[int, ...], trump: int) -> int:
    """Index (0-based) of the card that wins a trick, rules.md 1.2."""
    led = cards[0] >> 3
    best = 0
    best_s = strength(cards[0], led, trump)
    for i in range(1, len(cards)):
        st = strength(cards[i], led, trump)
        if st > best_s:
            best, best_s = i, st
    return best


def round_tens(x: int) -> int:
    """Table-point rounding r(x) of rules.md 0: last digit 0-5 down, 6-9 up (85->8, 86->9)."""
    return x // 10 + (1 if x % 10 >= 6 else 0)
