"""Open Blot (`open`, rules.md 5 and 5.7, rules text 003): the pile layout, the trump choice, the
trick-1 announcements, kaput by points (5.7.5) and the 162-minus scoring. Every D-n case of
the spec is a test here, plus the face-down cards' visibility.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from variant_cases import TESTS, finished, open_deal, score

from blot_env.actions import layout_for
from blot_env.cards import NT, card_points, mask_of, mask_str, parse_cards
from blot_env.declarations import blots, counted_sets
from blot_env.engine import apply_action, current_seat, deal_random, deal_result, is_terminal, legal_actions, new_deal
from blot_env.errors import IllegalActionError
from blot_env.record import make_record, replay_record
from blot_env.rules_config import make_rules
from blot_env.state import Phase
from blot_env.view import seat_view

# Seat 0 (the non-dealer, dealer = 1), piles (bottom, top) 1..8: tops QH JH TH 7S | 9C JC 8S KS;
# K and 9 of hearts lie face down under QH and JH.
D2_PILES = ["KH QH 9H JH 7C TH 8D 7S AC 9C 7D JC AD 8S TD KS",
            "8C 9D TC JD QC QD KC KD 7H 9S 8H TS AH JS QS AS"]


def act(state, actions: str):
    lay = layout_for(state.cfg)
    for a in actions.split(","):
        if a.strip():
            state = apply_action(state, lay.parse(a))
    return state


def legal(state) -> list[str]:
    lay = layout_for(state.cfg)
    return [lay.describe(a) for a in legal_actions(state)]


def first_legal_to_end(state):
    while not is_terminal(state):
        state = apply_action(state, legal_actions(state)[0])
    return state


def test_preset_table():
    c = make_rules("open")
    assert (c.num_players, c.short_deck, c.hand_size, c.num_tricks) == (2, False, 16, 16)
    assert c.auction == "open" and c.allow_nt and c.declarations == "announce" and c.long_run == "100"
    assert c.carre_table == "armenian" and c.scoring == "open" and c.capot_tp == 21 and c.open_complement
    assert (c.target, c.tie_at_target) == (51, "extra_deal")  # RES-24, RES-9


def test_D1_nt_card_values():
    """D-1 (rules text 003 table): NT A 10 K Q J 9 8 7 = 19 10 4 3 2 0 0 0."""
    ranks = ["A", "T", "K", "Q", "J", "9", "8", "7"]
    assert [card_points(parse_cards(r + "S")[0], NT) for r in ranks] == [19, 10, 4, 3, 2, 0, 0, 0]
    assert sum(card_points(c, NT) for c in range(32)) + 10 == 162


def test_D2_terz_declared_at_trick_1_is_not_upgraded():
    """D-2: trump H, face-up Q J 10 of hearts at trick 1: a terz (20). K and 9 of hearts turn up
    later but cannot make it a 50/100 (strict profile, RES-28). Blot: K+Q of hearts are this
    player's, +20 automatically."""
    s = act(open_deal(D2_PILES), "name H")
    assert current_seat(s) == 0
    assert legal(s) == ["announce none", "announce terz"]  # from the 8 face-up cards only
    s = act(s, "announce terz,play TH")
    assert mask_str(s.face_down[0]) == "AC 7D 8D TD AD 9H KH"  # 7C under TH turned up
    s = act(s, "announce none")
    s = first_legal_to_end(s)
    assert not any(a in range(layout_for(s.cfg).blocks["ANNOUNCE"].start,
                              layout_for(s.cfg).blocks["ANNOUNCE"].stop) for a in s.history[4:])
    sets = counted_sets(s)
    assert [(c.cls, c.value, mask_str(c.mask)) for c in sets[0]] == [(1, 20, "TH JH QH")]
    assert blots(s) == [True, False]
    r = deal_result(s)
    assert sum(r.combinations) == 2 + 2


def test_D3_layout_and_16_tricks():
    """D-3: after the deal 8 down + 4 up per player; after the trump choice 8 down + 8 up."""
    s = open_deal(D2_PILES)
    for seat in (0, 1):
        v = seat_view(s, seat)
        assert v.hidden_counts == (8, 8)
        assert [f.bit_count() for f in v.face_up] == [4, 4]
    assert mask_str(seat_view(s, 1).face_up[0]) == "TH JH QH 7S"
    s = act(s, "name NT")
    v = seat_view(s, 1)
    assert v.hidden_counts == (8, 8) and [f.bit_count() for f in v.face_up] == [8, 8]
    assert mask_str(v.face_up[0]) == "9C JC TH JH QH 7S 8S KS"
    s = first_legal_to_end(act(s, "announce none"))
    assert sum(s.tricks) == 16 and len(s.plays) == 32 and sum(s.points) == 162


def test_D4_both_pass_round_1():
    """D-4: N and the dealer pass: 4 more face-up cards each; in round 2 after N's pass the
    dealer must choose among C, D, H, S, NT."""
    s = open_deal(D2_PILES)
    assert legal(s) == ["pass", "name C", "name D", "name H", "name S", "name NT"]
    s = act(s, "pass,pass")
    assert s.round == 1 and [f.bit_count() for f in seat_view(s, 0).face_up] == [8, 8]
    assert "pass" in legal(s)
    s = act(s, "pass")
    assert legal(s) == ["name C", "name D", "name H", "name S", "name NT"]
    with pytest.raises(IllegalActionError, match="must name"):
        apply_action(s, layout_for(s.cfg).parse("pass"))
    s = act(s, "name D")
    assert s.phase == Phase.PLAY and s.contract.seat == 1 and s.contract.strain == 1
    assert current_seat(s) == 0  # the non-dealer leads whoever chose (5.3)


# D-5..D-8 use the D-2 cards with spades trump (K S with seat 0, Q S with seat 1: no blot)
HANDS = D2_PILES


def test_D5_made_162_minus_rule():
    """D-5: c_t 96, c_o 66: o = r(66) = 7, t = 16 - 7 = 9 (not r(96) = 10)."""
    r = score(finished("open", seat=0, strain="S", points=(96, 66), tricks=(9, 7), hands=HANDS))
    assert r.made is True and r.score == (9, 7)
    r2 = score(finished("open", seat=0, strain="S", points=(96, 66), tricks=(9, 7), hands=HANDS,
                        open_complement=False))
    assert r2.score == (10, 7)  # RES-30 flag


def test_D6_failed_combinations_move():
    """D-6: c_t 70 + terz (90) vs c_o 92: failed, o = 16 + 2 = 18, t = 0."""
    r = score(finished("open", seat=0, strain="S", points=(70, 92), tricks=(7, 9), hands=HANDS,
                       shows={0: "TH JH QH"}))
    assert r.made is False and r.score == (0, 18) and r.combinations == (0, 2)


def test_D7_tie_fails():
    """D-7: T_t = T_o = 81 -> failed (strict, RES-29)."""
    r = score(finished("open", seat=0, strain="S", points=(81, 81), tricks=(8, 8), hands=HANDS))
    assert r.made is False and r.score == (0, 16)


def test_D8_kaput_by_the_taker():
    """D-8: the taker wins all 16 tricks with his terz counted: t = 21 + 2 = 23; o = 0."""
    r = score(finished("open", seat=0, strain="S", points=(162, 0), tricks=(16, 0), hands=HANDS,
                       shows={0: "TH JH QH"}))
    assert r.made is True and r.score == (23, 0) and r.combinations == (2, 0)


def test_5_7_5_kaput_is_zero_card_points():
    """5.7.5: a player whose tricks hold 0 card points is kaput, even with tricks (overrides RES-31)."""
    r = score(finished("open", seat=1, strain="S", points=(0, 162), tricks=(3, 13), hands=HANDS))
    assert r.made is True and r.score == (0, 21)
    # one point is enough not to be kaput: 162-minus rule again
    r = score(finished("open", seat=1, strain="S", points=(10, 152), tricks=(1, 15), hands=HANDS))
    assert r.score == (1, 15)


def test_5_7_5_a_kaput_taker_cannot_make():
    """A taker with 0 card points fails even when his combinations beat the opponent's total:
    o = 21 + K_t + K_o (carre of jacks 20, the opponent's blot 2)."""
    hands = ["7C 8C 9C TC JC 7D 8D 9D TD JD JH JS 7H 8H 7S 8S", "QC KC AC QD KD AD 9H TH QH KH AH 9S TS QS KS AS"]
    r = score(finished("open", seat=0, strain="S", points=(0, 162), tricks=(0, 16), hands=hands,
                       shows={0: "JC JD JH JS"}))
    assert r.made is False and r.score == (0, 21 + 20 + 2) and r.combinations == (0, 22)


def test_5_7_6_ties_trump_then_first_announcer():
    """Equal terzes: the trump one wins; both plain: the first to announce (the non-dealer)."""
    hands = ["TC JC QC 7D 8D AD 7H 8H 9H 7S 8S 9S AC AH AS KD", "TD JD QD 9C 8C 7C KC KH QH JH TH QS KS JS TS 9D"]
    for trump, winner in (("D", 1), ("S", 0), ("H", 0)):
        sets = counted_sets(finished("open", seat=0, strain=trump, points=(81, 81), tricks=(8, 8), hands=hands,
                                     shows={0: "TC JC QC", 1: "TD JD QD"}))
        assert [bool(x) for x in sets] == [winner == 0, winner == 1], trump


def test_announce_is_from_the_face_up_cards_and_flat():
    """5.7.6: flat runs (a face-up 4-run is only a 50); face-down cards never count."""
    piles = ["7C 9H 8C TH 7D JH 8D QH AD 8S KD 9C 7S KS 9D AC",
             "TC 7H JC 8H QC AH KC 9S TD TS JD JS QD QS KH AS"]
    s = act(open_deal(piles), "name S")
    assert legal(s) == ["announce none", "announce 50"]  # 9-10-J-Q of hearts face up


def test_playing_a_top_turns_the_card_under_it():
    s = act(open_deal(D2_PILES), "name H,announce none")
    v0 = seat_view(s, 0)
    assert mask_str(v0.hand) == "9C JC TH JH QH 7S 8S KS"
    s = act(s, "play QH")
    v = seat_view(s, 1)
    assert v.face_up[0] & mask_of(parse_cards("KH")) and v.hidden_counts == (7, 8)
    # seat 1 plays 9D (8C under it turns up); a turned-up bottom is playable and turns nothing
    s = act(s, "announce none,play 9D,play KH")
    assert s.face_down[0] == mask_of(parse_cards("9H 7C 8D AC 7D AD TD"))
    assert not s.face_down[1] & mask_of(parse_cards("8C"))


@pytest.mark.parametrize("seed", range(3))
def test_views_never_show_face_down_cards(seed):
    """Permuting every unseen card (face-down bottoms, unlaid tops) among their places and
    replaying the public history gives identical views for both seats (no leaks)."""
    cfg = make_rules("open")
    rng = np.random.default_rng(seed)
    for _ in range(10):
        s = deal_random(cfg, rng, dealer=int(rng.integers(2)))
        states = [s]
        while not is_terminal(s):
            s = apply_action(s, int(rng.choice(legal_actions(s))))
            states.append(s)
        cur = states[int(rng.integers(len(states) - 1))]
        hidden = [c for seat in (0, 1) for c in range(32) if (cur.face_down[seat] | cur.unlaid[seat]) >> c & 1]
        perm = dict(zip(hidden, rng.permutation(hidden).tolist()))
        piles = tuple(tuple(perm.get(c, c) for c in p) for p in cur.piles)
        alt = new_deal(cfg, cur.dealer, [mask_of(p) for p in piles], (), piles)
        for a in cur.history:
            alt = apply_action(alt, a)
        for seat in (0, 1):
            assert seat_view(alt, seat) == seat_view(cur, seat)


def test_record_lists_the_piles():
    """5.7.7: ``hands`` are the 16 cards bottom, top of piles 1..8; the record replays."""
    s = first_legal_to_end(act(open_deal(D2_PILES), "pass,pass,pass,name NT"))
    rec = make_record(s)
    assert rec["hands"] == D2_PILES and rec["stock"] == ""
    assert rec["actions"][:6] == ["pass", "pass", "pass", "name NT", "announce none", rec["actions"][5]]
    assert replay_record(json.loads(json.dumps(rec)))[1] == rec["result"]
    assert rec["result"]["contract"] == {"seat": 1, "bid": "name NT", "double": "none"}


def test_record_refuses_short_piles():
    from blot_env.errors import RecordError

    rec = {"format": "blot-record/1", "preset": "open", "dealer": 0, "hands": ["7C 8C", "9C TC"], "actions": []}
    with pytest.raises(RecordError, match="16"):
        replay_record(rec)


# --- golden records (the conformance records: tests/test_conformance.py) ---------------------

GOLDEN = sorted((TESTS / "golden_2p").glob("*.json"))


@pytest.mark.parametrize("path", [p for p in GOLDEN if json.loads(p.read_text())["preset"] == "open"],
                         ids=lambda p: p.stem)
def test_golden_records(path):
    rec = json.loads(path.read_text())
    assert rec.get("note"), "every golden record explains its hand check"
    _, res = replay_record(rec)
    assert res == rec["result"]
