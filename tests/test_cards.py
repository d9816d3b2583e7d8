"""Unit tables for rules.md 1.1-1.3: card points, trick winner, legal play, rounding."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blot_env.cards import (
    FULL_DECK,
    NT,
    SHORT_DECK,
    card_points,
    card_str,
    cards_of,
    cards_str,
    mask_of,
    parse_card,
    parse_cards,
    round_tens,
    trick_winner_index,
)
from blot_env.play import legal_cards, trick_winner

C, D, H, S = range(4)


def m(text: str) -> int:
    return mask_of(parse_cards(text))


def cs(text: str) -> tuple[int, ...]:
    return tuple(parse_cards(text))


# ------------------------------------------------------------------ 1.1 card points
@pytest.mark.parametrize(
    ("card", "strain", "points"),
    [
        # trump J 9 A 10 K Q 8 7 = 20 14 11 10 4 3 0 0 (rules.md 1.1)
        ("JH", H, 20), ("9H", H, 14), ("AH", H, 11), ("TH", H, 10), ("KH", H, 4), ("QH", H, 3),
        ("8H", H, 0), ("7H", H, 0),
        # plain suit in a trump game: A 10 K Q J 9 8 7 = 11 10 4 3 2 0 0 0
        ("AS", H, 11), ("TS", H, 10), ("KS", H, 4), ("QS", H, 3), ("JS", H, 2), ("9S", H, 0),
        ("8S", H, 0), ("7S", H, 0),
        # no-trump: the ace is 19 (rules text 000 "без козыря ... туз стоит 19"; D-1)
        ("AC", NT, 19), ("TC", NT, 10), ("KC", NT, 4), ("QC", NT, 3), ("JC", NT, 2), ("9C", NT, 0),
        ("8C", NT, 0), ("7C", NT, 0),
    ],
)
def test_card_points_table(card, strain, points):
    assert card_points(parse_card(card), strain) == points


@pytest.mark.parametrize("trump", [C, D, H, S])
def test_trump_game_totals_162(trump):
    suit_totals = [sum(card_points(s * 8 + r, trump) for r in range(8)) for s in range(4)]
    assert suit_totals[trump] == 62
    assert sorted(suit_totals) == [30, 30, 30, 62]
    assert sum(suit_totals) + 10 == 162  # 62 + 3*30 + 10


def test_nt_totals_162():
    suit_totals = [sum(card_points(s * 8 + r, NT) for r in range(8)) for s in range(4)]
    assert suit_totals == [38, 38, 38, 38]
    assert sum(suit_totals) + 10 == 162  # 4*38 + 10


@pytest.mark.parametrize("strain", [C, D, H, S, NT])
def test_short_deck_totals_162(strain):
    # the 24-card deck drops 7s and 8s, which are worth 0 (rules.md 1.1)
    assert len(cards_of(SHORT_DECK)) == 24
    assert sum(card_points(c, strain) for c in cards_of(SHORT_DECK)) + 10 == 162
    assert sum(card_points(c, strain) for c in cards_of(FULL_DECK)) + 10 == 162


# ------------------------------------------------------------------ card strings
def test_parse_and_print_cards():
    assert parse_cards("JH 9H 10S TS 7c") == [parse_card(x) for x in ("JH", "9H", "TS", "TS", "7C")]
    assert card_str(parse_card("10D")) == "TD"
    assert cards_str(parse_cards("AS KS QS")) == "AS KS QS"
    for bad in ("1H", "JX", "", "JHH", "11S"):
        with pytest.raises(ValueError):
            parse_card(bad)


@given(st.integers(min_value=0, max_value=31))
def test_card_string_roundtrip(card):
    assert parse_card(card_str(card)) == card


@given(st.integers(min_value=0, max_value=FULL_DECK))
def test_mask_roundtrip(mask):
    assert mask_of(cards_of(mask)) == mask
    assert mask_of(parse_cards(cards_str(cards_of(mask)))) == mask


# ------------------------------------------------------------------ rounding r(x), rules.md 0
@pytest.mark.parametrize(("raw", "tp"), [(85, 8), (86, 9), (125, 12), (37, 4), (136, 14), (26, 3), (0, 0),
                                         (5, 0), (6, 1), (162, 16), (76, 8), (72, 7), (90, 9), (106, 11),
                                         (56, 6), (110, 11), (52, 5)])
def test_round_tens_table(raw, tp):
    assert round_tens(raw) == tp


@given(st.integers(min_value=0, max_value=400))
def test_round_tens_property(x):
    r = round_tens(x)
    # last digit 0-5 rounds down, 6-9 up
    assert r == (x // 10 if x % 10 <= 5 else x // 10 + 1)
    assert abs(10 * r - x) <= 5
    assert round_tens(10 * r) == r


@given(st.integers(min_value=0, max_value=162))
def test_rounded_card_tp_sum_16_or_17(c_a):
    # rules.md 2.5 / RES-7: each side rounded independently; 17 only when both end in 6
    total = round_tens(c_a) + round_tens(162 - c_a)
    assert total in (16, 17)
    assert (total == 17) == (c_a % 10 == 6 and (162 - c_a) % 10 == 6)


# ------------------------------------------------------------------ 1.2 trick winner
@pytest.mark.parametrize(
    ("trick", "trump", "winner"),
    [
        ("7S AS TS KS", H, 1),  # plain: highest of the led suit (A)
        ("TS KS AS QS", H, 2),
        ("7S AD AC AH", H, 3),  # the only trump wins
        ("7S 7H JH 9H", H, 2),  # J is the top trump
        ("9H AH TH JH", H, 3),
        ("9H AH TH KH", H, 0),  # 9 beats A in trump
        ("AS 7D 8D 9D", H, 0),  # off-suit discards never win
        ("JS AS 9S TS", NT, 1),  # NT: plain order, A top
        ("7C JD JH JS", NT, 0),
        ("QD KD JD 9D", D, 2),
        ("8C 7C 9C 7H", C, 2),
    ],
)
def test_trick_winner(trick, trump, winner):
    assert trick_winner_index(cs(trick), trump) == winner
    seats = (1, 2, 3, 0)
    assert trick_winner(cs(trick), seats, trump) == seats[winner]


# ------------------------------------------------------------------ 1.3 legal play
def legal(hand: str, trick: str, trump: int, me: int = 3, leader: int = 0) -> set[str]:
    t = cs(trick)
    seats = tuple((leader + i) % 4 for i in range(len(t)))
    return {card_str(c) for c in cards_of(legal_cards(m(hand), t, seats, trump, me))}


@pytest.mark.parametrize(
    ("name", "hand", "trick", "trump", "me", "expected"),
    [
        # trump D, 7S led, opponent ruffed with QD; no spades, hold KD 7D -> must over-ruff
        ("A-10", "KD 7D AC", "7S QD", D, 0, {"KD"}),
        # same trick; hold 7D 8D AC -> cannot over-ruff: any card, "even the 8"
        ("A-11", "7D 8D AC", "7S QD", D, 0, {"7D", "8D", "AC"}),
        # trump H, 9H led; hold JH 7H -> must beat: JH
        ("A-12", "JH 7H AS", "9H", H, 1, {"JH"}),
        # trump H, 9H led; hearts only 8H 7H -> any heart
        ("A-13", "8H 7H AS", "9H", H, 1, {"8H", "7H"}),
        # trump led and partner winning: still must beat (RES-38)
        ("partner-trump-led", "JH 7H", "9H 8H", H, 2, {"JH"}),
        # plain suit led: follow with any card of it even when partner wins
        ("follow-any", "AS 7S JH", "KS", H, 1, {"AS", "7S"}),
        ("follow-under", "7S 8S JH", "AS TH", H, 2, {"7S", "8S"}),
        # void, partner winning: partner exemption, any card
        ("partner-exempt", "JH 7H AC", "AS 7S", H, 3, {"JH", "7H", "AC"}),  # seat 1 (partner) leads AS
        ("partner-exempt-2", "JH 7H AC", "7S AS 8S", H, 3, {"JH", "7H", "AC"}),
        # void, opponent winning with a plain card: must ruff, any trump
        ("must-ruff", "JH 7H AC", "AS", H, 1, {"JH", "7H"}),
        ("must-ruff-3rd", "JH 7H AC", "7S AS", H, 0, {"JH", "7H"}),  # seat 3 (opponent of 0) wins
        # void, partner ruffed and wins: exemption even over a trump
        ("partner-ruffed", "JH 7H AC", "AS 9H 7S", H, 3, {"JH", "7H", "AC"}),  # seat 1 ruffed
        # opponent ruffed: must over-ruff
        ("opp-ruffed", "JH 7H AC", "AS 9H", H, 3, {"JH"}),
        # opponent over-ruffed partner: must over-ruff the opponent if able
        ("over-ruff", "JH 7H AC", "7S 8H 9H", H, 3, {"JH"}),
        # free undertrump (RES-13)
        ("undertrump-free", "8H 7H AC", "7S 8S JH", H, 3, {"8H", "7H", "AC"}),
        # no trumps at all: anything
        ("no-trumps", "AC 7D", "AS", H, 1, {"AC", "7D"}),
        # NT: void means any card
        ("nt-void", "AC 7D", "AS", NT, 1, {"AC", "7D"}),
        ("nt-follow", "AS 7S 7D", "KS", NT, 1, {"AS", "7S"}),
        # leading: anything
        ("lead", "JH 7H AC", "", H, 0, {"JH", "7H", "AC"}),
    ],
)
def test_legal_cards_table(name, hand, trick, trump, me, expected):
    leader = (me - len(trick.split())) % 4
    assert legal(hand, trick, trump, me, leader) == expected, name


def test_forced_undertrump_knob():
    # undertrump="forced": unable to over-ruff an opponent, must still play a trump
    t = cs("7S QD")
    got = legal_cards(m("7D 8D AC"), t, (2, 3), D, 0, True, "forced")
    assert {card_str(c) for c in cards_of(got)} == {"7D", "8D"}


def test_no_partner_exemption_knob():
    t = cs("AS 7S")  # seat 2 (partner of 0) leads and wins; without the exemption seat 0 must ruff
    got = legal_cards(m("JH 7H AC"), t, (2, 3), H, 0, partner_exemption=False)
    assert {card_str(c) for c in cards_of(got)} == {"JH", "7H"}


@st.composite
def _hand_and_trick(draw):
    cards = draw(st.permutations(list(range(32))))
    k = draw(st.integers(min_value=1, max_value=8))
    t = draw(st.integers(min_value=0, max_value=3))
    return mask_of(cards[:k]), tuple(cards[8:8 + t]), draw(st.integers(min_value=0, max_value=4))


@given(_hand_and_trick())
def test_legal_cards_nonempty_subset(args):
    hand, trick, trump = args
    me = len(trick)  # leader seat 0
    seats = tuple(range(len(trick)))
    got = legal_cards(hand, trick, seats, trump, me)
    assert got and got & ~hand == 0
    if trick:
        led = trick[0] >> 3
        if hand & (0xFF << 8 * led):  # holding the led suit: only that suit
            assert got & ~(0xFF << 8 * led) == 0
