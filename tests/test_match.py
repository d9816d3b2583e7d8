"""Match rules (rules.md 2.6, 2.8, RES-8, RES-9): totals, dealer rotation, target and tie rules."""

from __future__ import annotations

import pytest

from blot_env import make_rules
from blot_env.match import after_deal, decide, new_match
from blot_env.scoring import DealResult, passed_out_result
from blot_env.state import Contract


def result(seat: int, made: bool, score: tuple[int, int], tricks=(5, 3), kind="num", double=0) -> DealResult:
    c = Contract(seat=seat, strain=2, value=9, kind=kind, plus=0, double=double, call=0)
    return DealResult(c, made, tricks, (80, 82), (0, 0), score)


def test_a42_exact_tie_goes_to_the_deal_winner():
    # Before: Us 142, Them 149; Us (side 0) made 9 -> 18 : 11; 160 : 160 -> Us win
    cfg = make_rules("bazar")
    m = new_match(cfg, 0)
    m = after_deal(m, result(0, True, (142, 149)))
    assert not m.over
    m = after_deal(m, result(0, True, (18, 11)))
    assert m.totals == (160, 160) and m.winner == 0 and m.reason == "tie_deal_winner"


def test_a43_both_cross_higher_total_wins():
    cfg = make_rules("bazar")
    m = after_deal(new_match(cfg, 1), result(2, True, (140, 150)))
    m = after_deal(m, result(2, True, (16, 8)))
    assert m.totals == (156, 158) and m.winner == 1 and m.reason == "higher_total"


def test_one_side_crosses():
    cfg = make_rules("bazar")
    assert decide(cfg, (151, 20), result(0, True, (30, 5))) == (0, "target")
    assert decide(cfg, (150, 20), result(0, True, (30, 5))) == (-1, "")
    assert decide(cfg, (10, 151), result(0, False, (0, 30))) == (1, "target")


def test_exact_tie_extra_deal():
    cfg = make_rules("bazar-app")
    assert cfg.tie_at_target == "extra_deal"
    assert decide(cfg, (160, 160), result(0, True, (18, 11))) == (-1, "")
    m = new_match(cfg, 3)
    m = after_deal(m, result(0, True, (142, 149)))
    m = after_deal(m, result(0, True, (18, 11)))
    assert not m.over and m.dealer == 1
    m = after_deal(m, passed_out_result())  # a passed-out deal changes nothing; the next dealer deals
    assert not m.over and m.dealer == 2 and m.totals == (160, 160)
    m = after_deal(m, result(1, True, (4, 20)))
    assert m.winner == 1 and m.num_deals == 4


def test_dealer_rotation_two_players():
    m = new_match(make_rules("duel"), 1)
    m = after_deal(m, passed_out_result())
    assert m.dealer == 0


def test_instant_match_end():
    cfg = make_rules("bazar-app", instant_match_end=True)
    # a bidding side that takes no trick loses the match, whatever the score
    assert decide(cfg, (10, 40), result(1, False, (60, 0), tricks=(8, 0))) == (0, "instant_no_trick")
    # a kaput contract made under contra wins it
    assert decide(cfg, (0, 140), result(0, True, (75, 0), tricks=(8, 0), kind="kaput", double=1)) == (
        0, "instant_kaput_contra")
    # off by default
    assert decide(make_rules("bazar-app"), (10, 40), result(1, False, (60, 0), tricks=(8, 0))) == (-1, "")


def test_errors():
    cfg = make_rules("bazar")
    with pytest.raises(ValueError):
        new_match(cfg, 4)
    m = after_deal(new_match(cfg, 0), result(0, True, (200, 0)))
    with pytest.raises(ValueError, match="over"):
        after_deal(m, result(0, True, (1, 0)))
