"""How each preset lays its cards out (docs/deal-record.md, rules.md 5.7.1 and 5.7.7).

* 4-player presets: ``hands`` are the 8-card hands; ``stock`` is empty.
* Duels (``cfg.auction == "duel"``): ``hands`` are the hands dealt before the trump choice
  (6 or 5 cards); ``stock`` is the open card U first, then the rest in draw order. The taker
  draws first (U and the next two cards, or the three after U when he leaves U), then the
  other player the next three; the rest stay undealt (5.7.1).
* Open Blot (``cfg.auction == "open"``): ``hands[s]`` lists 16 cards, bottom then top of
  piles 1..8. The bottoms are face down; the tops of piles 1-4 are laid face up before the
  trump choice, those of piles 5-8 after trump is chosen in round 1 or before round 2
  (5.1); playing a top turns the card under it face up at once (5.7.7).
"""

from __future__ import annotations

from .cards import cards_of, cards_str, mask_of
from .rules_config import RulesConfig
from .state import State

#: Open Blot: piles per player, and how many tops are face up before the trump choice
OPEN_PILES = 8
OPEN_FIRST_TOPS = 4


def has_piles(cfg: RulesConfig) -> bool:
    """True for the Open Blot table layout (rules.md 5.1): it comes with the open trump choice."""
    return cfg.auction == "open"


def hands_from_record(cfg: RulesConfig, hands: list[list[int]], stock: list[int]):
    """Bitmask hands, stock ids (draw order) and Open Blot piles from parsed record fields.

    Returns ``(masks, stock, piles)``; ``piles`` is ``()`` outside Open Blot.

    Raises:
        ValueError: an Open Blot hand that is not 16 cards (8 piles, rules.md 5.7.7).
    """
    piles: tuple[tuple[int, ...], ...] = ()
    if has_piles(cfg):
        for s, h in enumerate(hands):
            if len(h) != 2 * OPEN_PILES:
                raise ValueError(f"hands[{s}] has {len(h)} cards; open lists 16 (bottom, top of 8 piles)")
        piles = tuple(tuple(h) for h in hands)
    return [mask_of(h) for h in hands], tuple(stock), piles


def record_hands(state: State) -> tuple[list[str], str]:
    """``hands`` strings and ``stock`` string of a deal as the record writes them."""
    if state.piles:
        return [cards_str(p) for p in state.piles], ""
    return [cards_str(cards_of(h)) for h in state.start_hands], cards_str(state.stock)


def default_piles(hands: list[int] | tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Open Blot piles from bitmasks when no order is given: ascending card ids, paired."""
    return tuple(tuple(cards_of(h)) for h in hands)


def pile_tops(pile: tuple[int, ...], first: int = 0, stop: int = OPEN_PILES) -> int:
    """Bitmask of the tops of piles ``first+1 .. stop`` of one player's 16-card pile list."""
    return mask_of(pile[2 * i + 1] for i in range(first, stop))


def initial_table(piles: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Open Blot before the trump choice: ``(face_down, unlaid)`` masks per seat (rules.md 5.1).

    Face down: the 8 bottoms. Unlaid: the tops of piles 5-8 (not on the table yet).
    """
    face_down = tuple(mask_of(p[0::2]) for p in piles)
    unlaid = tuple(pile_tops(p, OPEN_FIRST_TOPS) for p in piles)
    return face_down, unlaid


def card_under(state: State, seat: int, card: int) -> int:
    """Open Blot: the card lying under ``card`` in ``seat``'s piles, or -1 (it is a bottom)."""
    pile = state.piles[seat]
    i = pile.index(card)
    return pile[i - 1] if i % 2 else -1


def duel_draw(stock: tuple[int, ...], keep: bool) -> tuple[int, int, int]:
    """Rules.md 5.7.1: ``(taker's draw, other's draw, undealt)`` as bitmasks.

    ``keep``: the taker takes U (``stock[0]``) and the next two cards; otherwise the three
    cards after U, and U stays face up among the undealt cards.
    """
    if keep:
        taker, other, rest = stock[0:3], stock[3:6], stock[6:]
    else:
        taker, other, rest = stock[1:4], stock[4:7], (stock[0],) + stock[7:]
    return mask_of(taker), mask_of(other), mask_of(rest)


def undealt_mask(state: State) -> int:
    """Cards that were never in a hand: the stock minus what was drawn (duels; 0 elsewhere)."""
    held = 0
    for h in (state.play_hands or state.hands):
        held |= h
    return mask_of(state.stock) & ~held


def visible_open_card(state: State, seat: int) -> int:
    """The duel's turned card U as ``seat`` sees it (-1 where there is none).

    U is turned face up before the trump choice and seen by both players; whether the
    taker then keeps it or leaves it face up among the undealt cards, it stays public.
    """
    if state.cfg.auction == "duel" and state.stock:
        return state.stock[0]
    return -1
