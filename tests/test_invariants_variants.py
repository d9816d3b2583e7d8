"""Random-play invariants for `duel`, `duel-app`, `open` and `belote` (style.md rule 8).

After every action of many random deals: the legal set is non-empty until the end (and
every action taken from it is accepted), cards are conserved (hands + played + undealt =
the deck, no card twice), Open Blot's face-down cards are never playable and a played top
turns its bottom up, and after every trick the next leader is the trick's winner (an
independent trick-winner written from rules.md 1.2). At the end: all tricks played, and
trick points + undealt points = 162 (rules.md 1.1; 24-card deck: the 6 or 8 undealt cards),
the record replays with the same result.

``BLOT_VARIANT_DEALS`` sets the deals per preset (default 10,000: about 40 s of CPU for the
four presets, measured with ``time pytest tests/test_invariants_variants.py``).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from blot_env.cards import card_points
from blot_env.engine import apply_action, current_seat, deal_random, deal_result, is_terminal, legal_actions
from blot_env.record import make_record, replay_record
from blot_env.rules_config import make_rules
from blot_env.state import Phase

DEALS = int(os.environ.get("BLOT_VARIANT_DEALS", "10000"))

# rules.md 1.1/1.2, written independently of blot_env.cards: strength, high -> low
_TRUMP = {r: i for i, r in enumerate(reversed([4, 2, 7, 3, 6, 5, 1, 0]))}  # J 9 A T K Q 8 7
_PLAIN = {r: i for i, r in enumerate(reversed([7, 3, 6, 5, 4, 2, 1, 0]))}  # A T K Q J 9 8 7


def _winner_index(cards, trump: int) -> int:
    led = cards[0] // 8

    def key(c):
        s, r = divmod(c, 8)
        if trump < 4 and s == trump:
            return (2, _TRUMP[r])
        if s == led:
            return (1, _PLAIN[r])
        return (0, 0)

    return max(range(len(cards)), key=lambda i: key(cards[i]))


def _deck(cfg) -> int:
    return sum(1 << (s * 8 + r) for s in range(4) for r in range(2 if cfg.short_deck else 0, 8))


def _check_deal(cfg, rng, dealer: int, check_record: bool) -> tuple[bool, bool]:
    s = deal_random(cfg, rng, dealer)
    deck = _deck(cfg)
    n = cfg.num_players
    stock = 0
    for c in s.stock:
        stock |= 1 << c
    played = 0
    while not is_terminal(s):
        legal = legal_actions(s)
        assert legal, "empty legal set before the end"
        a = legal[int(rng.integers(len(legal)))]
        seat = current_seat(s)
        prev = s
        s = apply_action(s, a)
        if len(s.plays) > len(prev.plays):
            card = s.plays[-1][1]
            assert s.plays[-1][0] == seat and prev.hands[seat] >> card & 1
            played |= 1 << card
            if prev.face_down:
                assert not prev.face_down[seat] >> card & 1 and not prev.unlaid[seat] >> card & 1
                i = prev.piles[seat].index(card)
                if i % 2:  # a top: the card under it is now face up
                    assert not s.face_down[seat] >> prev.piles[seat][i - 1] & 1
            if len(s.plays) % n == 0 and s.trick == ():
                trick = [c for _, c in s.plays[-n:]]
                w = s.plays[-n + _winner_index(trick, s.contract.strain)][0]
                assert s.leader == w, "the next leader must be the last trick's winner"
        # cards conserved: every card once in a hand, played, or in the stock (undealt)
        held = 0
        total = 0
        for h in s.hands:
            assert not h & held
            held |= h
            total += h.bit_count()
        assert not held & played
        undealt = stock & ~held & ~played
        assert held | played | undealt == deck
        assert total + played.bit_count() + undealt.bit_count() == deck.bit_count()
        if s.face_down:
            for seat_ in range(n):
                assert s.face_down[seat_] & ~s.hands[seat_] == 0
    assert legal_actions(s) == [] and current_seat(s) == -1
    r = deal_result(s)
    if s.contract is None:
        return False, False
    assert s.phase == Phase.DONE and sum(s.tricks) == cfg.num_tricks
    assert all(h == 0 for h in s.hands)
    undealt_pts = sum(card_points(c, s.contract.strain) for c in range(32) if (stock & ~played) >> c & 1)
    assert sum(r.card_points) + undealt_pts == 162
    assert min(r.score) >= 0 and min(r.combinations) >= 0
    if check_record:
        rec = make_record(s)
        assert replay_record(rec)[1] == rec["result"]
    return True, bool(r.made)


@pytest.mark.parametrize("preset", ["duel", "duel-app", "open", "belote"])
def test_random_play_invariants(preset):
    cfg = make_rules(preset)
    rng = np.random.default_rng(20240611)
    played = made = 0
    for i in range(DEALS):
        p, m = _check_deal(cfg, rng, i % cfg.num_players, check_record=i % 50 == 0)
        played += p
        made += m
    assert played > DEALS // 2 and 0 < made < played
