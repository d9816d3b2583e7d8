"""Classic Belote (`belote`, rules.md 6, rules text 002): the 80..160 auction with contra and
surcontra, automatic classic declarations, raw-point scoring, capot 250 + bid. Every E-n
case of the spec is a test here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from variant_cases import TESTS, finished, score

from blot_env.actions import layout_for
from blot_env.cards import card_points, mask_of, parse_cards
from blot_env.combos import best_set
from blot_env.declarations import counted_sets
from blot_env.engine import apply_action, current_seat, deal_random, deal_result, is_terminal, legal_actions, new_deal
from blot_env.errors import IllegalActionError
from blot_env.match import decide
from blot_env.record import make_record, replay_record
from blot_env.rules_config import make_rules
from blot_env.state import Phase

# No sequence, no carre anywhere; spades trump: Q S with seat 2, K S with seat 3 (no belote)
NO_BELOTE = ["7C 8C JC QC 7D 8D QD JS", "9C TC KC AC 9D TD KD AD",
             "7H 8H JH QH 7S 8S QS JD", "9H TH KH AH 9S TS KS AS"]
# the same with K S and J D exchanged: seat 2 (team 0) holds the belote in spades
BELOTE_02 = ["7C 8C JC QC 7D 8D QD JS", "9C TC KC AC 9D TD KD AD",
             "7H 8H JH QH 7S 8S QS KS", "9H TH KH AH 9S TS JD AS"]


def deal(hands=NO_BELOTE, dealer: int = 3):
    return new_deal(make_rules("belote"), dealer, [mask_of(parse_cards(h)) for h in hands])


def act(state, actions: str):
    lay = layout_for(state.cfg)
    for a in actions.split(","):
        if a.strip():
            state = apply_action(state, lay.parse(a))
    return state


def legal(state) -> list[str]:
    lay = layout_for(state.cfg)
    return [lay.describe(a) for a in legal_actions(state)]


def test_preset_table():
    c = make_rules("belote")
    assert (c.num_players, c.hand_size, c.num_tricks, c.short_deck) == (4, 8, 8, False)
    assert (c.bid_min, c.bid_max, c.bid_step, c.allow_nt, c.kaput_bid) == (80, 160, 10, False, "none")
    assert (c.auction_end_passes, c.contra_end_passes) == (3, 3)
    assert (c.declarations, c.long_run, c.carre_table, c.scoring) == ("auto", "100", "classic", "belote")
    assert (c.capot_tp, c.target, c.tie_at_target) == (250, 1000, "extra_deal")
    assert c.partner_exemption and c.undertrump == "free"


def test_hands_hold_no_combinations():
    for hands, strain in ((NO_BELOTE, 3), (BELOTE_02, 3)):
        for h in hands:
            assert best_set(mask_of(parse_cards(h)), strain, "100", "classic") == ()


# --- auction (rules.md 6) ------------------------------------------------------------------

def test_ladder_80_to_160_suits_only():
    s = deal()
    ls = legal(s)
    bids = [a for a in ls if a.startswith("bid")]
    assert len(bids) == 9 * 4 and bids[0] == "bid 80C" and bids[-1] == "bid 160S"
    assert "pass" in ls and "contra" not in ls and not any("NT" in a or "kaput" in a for a in ls)
    s = act(s, "bid 80H")
    ls = legal(s)
    assert "contra" in ls and "bid 80S" not in ls and "bid 90C" in ls  # higher value only; any suit
    with pytest.raises(IllegalActionError, match="higher"):
        apply_action(s, layout_for(s.cfg).parse("bid 80S"))


def test_E6_three_passes_end_no_last_word():
    """E-6: 80H then PASS x3 -> contract 80H (the bidder does not speak again)."""
    s = act(deal(), "bid 80H,pass,pass,pass")
    assert s.phase == Phase.PLAY
    c = s.contract
    assert (c.seat, c.value, c.strain, c.double, c.kind) == (0, 80, 2, 0, "num")
    assert current_seat(s) == 0  # the dealer's neighbour leads trick 1


def test_raise_then_three_passes():
    s = act(deal(), "bid 80H,pass,pass,bid 90S,pass,pass")
    assert s.phase == Phase.AUCTION
    s = act(s, "pass")
    assert s.contract.seat == 3 and s.contract.value == 90 and s.contract.strain == 3


def test_four_passes_redeal():
    s = act(deal(), "pass,pass,pass,pass")
    assert s.phase == Phase.DONE and s.contract is None
    r = deal_result(s).to_json(layout_for(s.cfg).describe)
    assert r["contract"] is None and r["score"] == [0, 0] and r["made"] is None


def test_contra_and_surcontra():
    s = act(deal(), "bid 100S,contra")
    assert legal(s) == ["pass", "recontra"]  # seat 2, the bidder's partner
    s2 = act(s, "pass")
    assert legal(s2) == ["pass"]  # seat 3, the contra pair
    s3 = act(s2, "pass")
    assert legal(s3) == ["pass", "recontra"]  # seat 0, the bidder
    done = act(s3, "pass")
    assert done.phase == Phase.PLAY and done.contract.double == 1  # 3 passes after the contra
    sur = act(s, "recontra")
    assert sur.phase == Phase.PLAY and sur.contract.double == 2
    assert layout_for(sur.cfg).describe(sur.history[-1]) == "recontra"  # the seed's "surcontra"
    with pytest.raises(IllegalActionError):
        act(s, "bid 110S")  # no bids after a contra


# --- scoring (rules.md 6), raw points -------------------------------------------------------

def bel(points, tricks, hands=NO_BELOTE, value=100, strain="S", double=0, seat=0):
    return score(finished("belote", seat=seat, strain=strain, value=value, double=double, hands=hands,
                          points=points, tricks=tricks, dealer=3))


def test_E1_made():
    """E-1: 100S, cards_A 110, cards_D 52 -> A = 210, D = 52."""
    r = bel((60, 30, 50, 22), (2, 2, 2, 2))
    assert r.card_points == (110, 52) and r.made is True and r.score == (210, 52)


def test_E2_belote_counts_towards_the_bid():
    """E-2: 100S, cards_A 90 + A's belote (110) -> made: A = 100 + 90 + 20 = 210; D = 72."""
    r = bel((50, 40, 40, 32), (2, 2, 2, 2), hands=BELOTE_02)
    assert r.made is True and r.score == (210, 72) and r.combinations == (20, 0)


def test_E3_failed_belote_kept():
    """E-3: 100S, cards_A 70 + belote (90) -> failed: D = 160 + 100 = 260; A = 20."""
    r = bel((40, 50, 30, 42), (2, 2, 2, 2), hands=BELOTE_02)
    assert r.made is False and r.score == (20, 260)


def test_E4_contra():
    """E-4: 100S contra, made -> A = (160 + 100) x 2 = 520; D = 0. Failed: the other way round."""
    assert bel((60, 30, 50, 22), (2, 2, 2, 2), double=1).score == (520, 0)
    r = bel((40, 50, 30, 42), (2, 2, 2, 2), hands=BELOTE_02, double=1)
    assert r.made is False and r.score == (20, 520)  # the belote is never multiplied, never moved
    assert bel((60, 30, 50, 22), (2, 2, 2, 2), double=2).score == (1040, 0)  # surcontra x4


def test_E5_capot():
    """E-5: 120H capot by A -> 250 + 120 = 370; D keeps only its belote."""
    r = bel((100, 0, 62, 0), (5, 0, 3, 0), value=120, strain="H")
    assert r.made is True and r.score == (370, 0)
    r = bel((100, 0, 62, 0), (5, 0, 3, 0), value=120, strain="H", double=1)
    assert r.score == (740, 0)
    # capot by the defenders: failed, D = 250 + v; A keeps its belote (RES-34)
    r = bel((0, 100, 0, 62), (0, 4, 0, 4), hands=BELOTE_02)
    assert r.made is False and r.score == (20, 350)


def test_E7_game_to_1000_tie_plays_on():
    """E-7: 1010 : 1040 -> the 1040 side wins; 1020 : 1020 -> another deal."""
    cfg = make_rules("belote")
    r = bel((60, 30, 50, 22), (2, 2, 2, 2))
    assert decide(cfg, (1010, 1040), r)[0] == 1
    assert decide(cfg, (1020, 1020), r)[0] == -1
    assert decide(cfg, (990, 999), r)[0] == -1


def test_E8_card_total():
    """E-8: 152 card points + 10 for the last trick = 162, in every trump suit."""
    for trump in range(4):
        assert sum(card_points(c, trump) for c in range(32)) == 152


def test_classic_declarations():
    """Carre values 9s 150, aces 100 (1.4 classic); the senior declaration's pair scores all of
    its own; a complete tie (equal plain terzes) scores for nobody (RES-36)."""
    assert best_set(mask_of(parse_cards("9C 9D 9H 9S")), 0, "100", "classic")[0].value == 150
    assert best_set(mask_of(parse_cards("AC AD AH AS")), 0, "100", "classic")[0].value == 100
    assert best_set(mask_of(parse_cards("7C 8C 9C TC JC QC")), 1, "100", "classic")[0].value == 100
    hands = ["TC JC QC 7D 8D 7H 8H 7S", "TD JD QD 7C 8C 9H TH 8S",
             "9S TS QS KS JH QH AC 9D", "JS AS KH AH KC 9C KD AD"]
    for trump, counted in (("H", [False] * 4), ("D", [False, True, False, False]), ("C", [True] + [False] * 3)):
        st = finished("belote", seat=0, strain=trump, value=80, hands=hands, points=(40, 40, 42, 40),
                      tricks=(2, 2, 2, 2), dealer=3)
        assert [bool(x) for x in counted_sets(st)] == counted, trump
    # trump D: D's trump terz counts for D; A's 82 card points make its 80
    r = score(finished("belote", seat=0, strain="D", value=80, hands=hands, points=(40, 40, 42, 40),
                       tricks=(2, 2, 2, 2), dealer=3))
    assert r.made is True and r.score == (80 + 82, 80 + 20) and r.combinations == (0, 20)
    # failed contract, the bidders' top declaration stays theirs (RES-35)
    r = score(finished("belote", seat=0, strain="C", value=120, hands=hands, points=(40, 40, 42, 40),
                       tricks=(2, 2, 2, 2), dealer=3))
    assert r.made is False and r.score == (20, 160 + 120)


def test_declaration_tie_knob():
    """``declaration_tie``: belote's "nobody" (RES-36) vs "trick1_order" (the earlier seat in
    trick 1 wins, 000): equal plain terzes T-J-Q of seats 0 and 1, trump H, dealer 3."""
    assert make_rules("belote").declaration_tie == "nobody"
    assert make_rules("bazar").declaration_tie == "trick1_order"
    hands = ["TC JC QC 7D 8D 7H 8H 7S", "TD JD QD 7C 8C 9H TH 8S",
             "9S TS QS KS JH QH AC 9D", "JS AS KH AH KC 9C KD AD"]
    kw = dict(seat=0, strain="H", value=80, hands=hands, points=(40, 40, 42, 40), tricks=(2, 2, 2, 2), dealer=3)
    assert [bool(x) for x in counted_sets(finished("belote", **kw))] == [False] * 4
    st = finished("belote", declaration_tie="trick1_order", **kw)
    assert [bool(x) for x in counted_sets(st)] == [True, False, False, False]


def test_random_deals_replay_and_total_162():
    cfg = make_rules("belote")
    rng = np.random.default_rng(3)
    played = 0
    for i in range(40):
        s = deal_random(cfg, rng, dealer=i % 4)
        while not is_terminal(s):
            s = apply_action(s, int(rng.choice(legal_actions(s))))
        rec = make_record(s)
        assert replay_record(json.loads(json.dumps(rec)))[1] == rec["result"]
        if s.contract is not None:
            played += 1
            assert sum(s.points) == 162 and sum(s.tricks) == 8
    assert played > 20


GOLDEN = sorted((TESTS / "golden_belote").glob("*.json"))


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_records(path):
    rec = json.loads(path.read_text())
    assert rec.get("note"), "every golden record explains its hand check"
    _, res = replay_record(rec)
    assert res == rec["result"]
