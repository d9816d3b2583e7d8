"""How each preset lays its cards out in a record's ``hands``/``stock`` (spec/deal-record.md)."""

from __future__ import annotations

from .cards import cards_of, cards_str, mask_of
from .rules_config import RulesConfig
from .state import State


def hands_from_record(cfg: RulesConfig, hands: list[list[int]], stock: list[int]):
    """Bitmask hands, stock ids and face-down masks from parsed record fields."""
    return [mask_of(h) for h in hands], tuple(stock), ()


def record_hands(state: State) -> tuple[list[str], str]:
    """``hands`` strings and ``stock`` string of a deal as the record writes them."""
    return [cards_str(cards_of(h)) for h in state.start_hands], cards_str(state.stock)


def visible_open_card(state: State, seat: int) -> int:
    """The duel's turned card U as ``seat`` sees it (-1 where there is none)."""
    return -1
