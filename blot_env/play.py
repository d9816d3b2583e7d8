"""The legal-play function of rules.md 1.3 and the trick winner of 1.2 (pure)."""

from __future__ import annotations

from .cards import NT, SUIT_MASKS, TRUMP_ORDER, trick_winner_index


def _trump_rank_mask_above(trumps: int, trump: int, order: int) -> int:
    """Trumps in ``trumps`` (bitmask of one suit) ranking above trick strength ``order``."""
    out = 0
    base = 8 * trump
    for r in range(8):
        if trumps >> (base + r) & 1 and TRUMP_ORDER[r] > order:
            out |= 1 << (base + r)
    return out


def legal_cards(hand: int, trick: tuple[int, ...], seats: tuple[int, ...], trump: int, me: int,
                partner_exemption: bool = True, undertrump: str = "free") -> int:
    """Bitmask of the cards ``me`` may play, rules.md 1.3.

    Args:
        hand: bitmask of the playable cards.
        trick: cards already in the trick, in play order.
        seats: the seats that played them.
        trump: trump suit 0..3 or ``NT``.
        partner_exemption: a player void in the led suit need not ruff while his partner wins.
        undertrump: ``"free"`` (any card when an opponent's trump cannot be beaten) or ``"forced"``.
    """
    if not trick:
        return hand
    led = trick[0] >> 3
    follow = hand & SUIT_MASKS[led]
    if follow:
        if trump != NT and led == trump:
            top = max(TRUMP_ORDER[c & 7] for c in trick if c >> 3 == trump)
            over = _trump_rank_mask_above(follow, trump, top)
            return over or follow
        return follow
    if trump == NT:
        return hand
    trumps = hand & SUIT_MASKS[trump]
    if not trumps:
        return hand
    w = trick_winner_index(trick, trump)
    if partner_exemption and len(seats) > 0 and (seats[w] - me) % 2 == 0 and seats[w] != me:
        return hand
    trick_trumps = [c for c in trick if c >> 3 == trump]
    if trick_trumps:
        top = max(TRUMP_ORDER[c & 7] for c in trick_trumps)
        over = _trump_rank_mask_above(trumps, trump, top)
        if over:
            return over
        return hand if undertrump == "free" else trumps
    return trumps


def explain_illegal_card(hand: int, trick: tuple[int, ...], seats: tuple[int, ...], trump: int,
                         me: int, card: int, partner_exemption: bool = True) -> str:
    """Why ``card`` is not legal: the duty of rules.md 1.3 it breaks."""
    from .cards import STRAINS, card_str

    if not hand >> card & 1:
        return f"seat {me} does not hold {card_str(card)}"
    led = trick[0] >> 3
    if hand & SUIT_MASKS[led]:
        if trump != NT and led == trump and card >> 3 == trump:
            return "trump led: must beat the highest trump in the trick when able (rules.md 1.3)"
        return f"must follow suit {STRAINS[led]} (rules.md 1.3)"
    if card >> 3 == trump:
        return "must over-ruff the opponent's trump when able (rules.md 1.3)"
    return f"void in {STRAINS[led]}: must ruff with a trump (rules.md 1.3)"


def trick_winner(trick: tuple[int, ...], seats: tuple[int, ...], trump: int) -> int:
    """Seat that wins a complete trick (rules.md 1.2)."""
    return seats[trick_winner_index(trick, trump)]
