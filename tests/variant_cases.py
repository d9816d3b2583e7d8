"""Helpers for the 2-player and belote rule tests (tests/test_rules_duel.py, _open.py, _belote.py).

``finished`` builds a finished deal state from card strings and raw points, so that the
scoring clauses of rules.md 3-6 can be checked one by one with ``score_deal`` (the one
scoring function); ``open_deal`` builds an Open Blot deal from pile strings (rules.md 5.7.7).
"""

from __future__ import annotations

from pathlib import Path

from blot_env import declarations
from blot_env.actions import layout_for
from blot_env.cards import STRAINS, mask_of, parse_cards
from blot_env.combos import best_set
from blot_env.engine import new_deal
from blot_env.rules_config import make_rules
from blot_env.scoring import DealResult, score_deal
from blot_env.state import Contract, Declarations, Phase, State

TESTS = Path(__file__).resolve().parent


def strain_of(text: str) -> int:
    return STRAINS.index(text)


def shown_decl(cfg, n: int, strain: int, shows: dict[int, str], order: tuple[int, ...] = ()) -> Declarations:
    """Declarations in which ``shows[seat]`` (a card string) was announced and shown.

    The set is the best split of those cards (rules.md 2.4.3 item 2); ``order`` is the
    announce order (default: seats ascending).
    """
    d = declarations.initial(n)
    announced = list(d.announced)
    claim, show_set, decided = list(d.claim), list(d.show_set), list(d.decided)
    for s, cards in shows.items():
        combos = best_set(mask_of(parse_cards(cards)), strain, cfg.long_run, cfg.carre_table)
        assert combos, f"{cards} holds no combination"
        show_set[s] = combos
        claim[s] = combos[0]
        announced[s] = max(c.cls for c in combos)
        decided[s] = 1
    order = order or tuple(range(n))
    return Declarations(announced=tuple(announced), claim=tuple(claim), show_set=tuple(show_set),
                        conceded=d.conceded, events=(), leader=-1, rights=d.rights, decided=tuple(decided),
                        announce_order=order)


def finished(preset: str, seat: int, strain: str, points: tuple[int, ...], tricks: tuple[int, ...],
             hands: list[str], stock: str = "", call: str | None = None, value: int = 0, double: int = 0,
             shows: dict[int, str] | None = None, dealer: int | None = None, **overrides) -> State:
    """A finished deal: contract by ``seat`` in ``strain``; raw ``points`` and ``tricks`` per seat.

    ``hands`` are the hands at the start of play (combinations and blots are found there);
    ``stock`` holds the undealt cards (duels). ``call`` is the action string that fixed the
    contract (default ``name X`` / ``bid vX``).
    """
    cfg = make_rules(preset, **overrides)
    lay = layout_for(cfg)
    n = cfg.num_players
    st = strain_of(strain)
    if call is None:
        call = f"bid {value}{strain}" if cfg.auction in ("bazar", "belote") else (
            f"name {strain} keep" if cfg.duel_open_card_choice else f"name {strain}")
    kind = {"take": "take", "name": "name", "bid": "num"}[call.split()[0]]
    contract = Contract(seat=seat, strain=st, value=value, kind=kind, plus=0, double=double, call=lay.parse(call))
    masks = tuple(mask_of(parse_cards(h)) for h in hands)
    decl = shown_decl(cfg, n, st, shows or {}) if shows else declarations.initial(n)
    dealer = (seat + 1) % n if dealer is None else dealer
    return State(cfg=cfg, dealer=dealer, start_hands=masks, stock=tuple(parse_cards(stock)), phase=Phase.DONE,
                 seat=0, history=(), hands=(0,) * n, contract=contract, play_hands=masks, tricks=tuple(tricks),
                 points=tuple(points), decl=decl)


def score(state: State) -> DealResult:
    return score_deal(state)


def open_deal(piles: list[str], dealer: int = 1, **overrides) -> State:
    """An Open Blot deal from two 16-card pile strings (bottom, top of piles 1..8)."""
    cfg = make_rules("open", **overrides)
    lists = [parse_cards(p) for p in piles]
    return new_deal(cfg, dealer, [mask_of(c) for c in lists], (), tuple(tuple(c) for c in lists))
