"""The duels: `duel` (rules.md 3, rules text 000 "1 на 1") and `duel-app` (rules.md 4, rules text 004
"Дуэль"), with the normative details of rules.md 5.7. Every B-n / C-n case of the spec is a
test here, plus the draw order, the calls, the result object and the open card's visibility.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from variant_cases import TESTS, finished, score

from blot_env.actions import UnknownActionError, layout_for
from blot_env.cards import NT, card_points, card_str, mask_of, mask_str, parse_cards, round_tens
from blot_env.declarations import counted_sets
from blot_env.engine import apply_action, deal_random, is_terminal, legal_actions, new_deal
from blot_env.errors import ConfigError, IllegalActionError
from blot_env.record import make_record, replay_record
from blot_env.rules_config import make_rules
from blot_env.state import Phase
from blot_env.view import seat_view


def duel_deal(hands: list[str], stock: str, preset: str = "duel", dealer: int = 1, **overrides):
    cfg = make_rules(preset, **overrides)
    return new_deal(cfg, dealer, [mask_of(parse_cards(h)) for h in hands], parse_cards(stock))


def act(state, actions: str):
    lay = layout_for(state.cfg)
    for a in actions.split(","):
        if a.strip():
            state = apply_action(state, lay.parse(a))
    return state


def legal(state) -> list[str]:
    lay = layout_for(state.cfg)
    return [lay.describe(a) for a in legal_actions(state)]


# --- presets (rules.md 8) -------------------------------------------------------------------

def test_presets_table():
    d, a = make_rules("duel"), make_rules("duel-app")
    assert (d.num_players, d.short_deck, d.hand_size, d.num_tricks) == (2, True, 6, 9)
    assert (a.num_players, a.short_deck, a.hand_size, a.num_tricks) == (2, True, 5, 8)
    assert d.declarations == "manual" and d.long_run == "split" and d.carre_table == "armenian"
    assert a.declarations == "auto" and a.long_run == "100" and a.carre_table == "none"
    assert d.allow_nt and not a.allow_nt
    assert d.jack_forces_dealer and not a.jack_forces_dealer
    assert d.duel_open_card_choice and not a.duel_open_card_choice
    assert d.capot_tp == a.capot_tp == 21
    assert (d.target, d.tie_at_target) == (151, "deal_winner")  # RES-9: B as A
    assert (a.target, a.tie_at_target) == (151, "extra_deal")  # 004
    assert not d.taker_ge and not a.taker_ge  # RES-19: strictly more


@pytest.mark.parametrize("preset,overrides", [
    ("duel", {"num_tricks": 8}),  # 6 + 3 cards make 9 tricks (5.7.1)
    ("duel", {"num_players": 4}),
    ("duel-app", {"scoring": "bazar"}),
    ("open", {"declarations": "manual"}),  # the cards are face up (5.7.6)
    ("open", {"short_deck": True}),
    ("belote", {"kaput_bid": "raisable"}),
    ("belote", {"hand_size": 6}),
])
def test_config_validation(preset, overrides):
    with pytest.raises(ConfigError):
        make_rules(preset, **overrides)
    make_rules("duel", jack_forces_dealer=False, duel_open_card_choice=False, allow_nt=False)  # knobs stay free


# --- B: duel (rules text 000) -----------------------------------------------------------------------

# 24 cards, trump H: the 6 undealt cards AS QC KD JC 9S 9D hold 11+3+4+2 = 20 raw
B1_HANDS = ["9C TC KC AC 9H TH JH QH TD", "KH AH JD QD AD TS JS QS KS"]


def test_B1_taker_adds_the_undealt_points():
    """B-1 (rules text 000): taker 84, opponent 58, undealt 20 -> 104 -> 10 and 6."""
    s = finished("duel", seat=1, strain="H", points=(58, 84), tricks=(3, 6), hands=B1_HANDS,
                 stock="AS QC KD JC 9S 9D", call="take")
    r = score(s)
    assert r.made is True
    assert r.score == (6, 10)
    assert r.card_points == (58, 84)  # tricks only (5.7.3)
    assert r.combinations == (0, 0)


BASE = ("9C JC KC TD QD AD", "TC QC AC 9D JD KD")


def test_B2_turned_jack_forces_the_dealer():
    """B-2: U = JS, the non-dealer passes: the dealer's only call is take; JS goes to him."""
    s = duel_deal(list(BASE), "JS 9H TH JH QH KH AH 9S TS QS KS AS")
    assert legal(s) == ["pass", "take"]
    s = act(s, "pass")
    assert legal(s) == ["take"]
    with pytest.raises(IllegalActionError, match="must take"):
        apply_action(s, layout_for(s.cfg).parse("pass"))
    s = act(s, "take")
    assert s.phase == Phase.PLAY and s.contract.strain == 3 and s.contract.seat == 1
    assert s.hands[1] == mask_of(parse_cards(BASE[1] + " JS 9H TH"))  # U + 2 (5.7.1)
    assert s.hands[0] == mask_of(parse_cards(BASE[0] + " JH QH KH"))  # the next 3
    assert [layout_for(s.cfg).describe(a) for a in s.history] == ["pass", "take"]  # forced take written


def test_B2_jack_not_forced_when_dealer_could_pass_otherwise():
    """The jack rule needs the non-dealer's pass: he may take it himself; duel-app has no rule."""
    s = duel_deal(list(BASE), "JS 9H TH JH QH KH AH 9S TS QS KS AS")
    assert act(s, "take").contract.seat == 0
    a = duel_deal(["9C JC KC TD QD", "TC QC AC 9D JD"], "JS KD 9H TH JH QH KH AH 9S TS QS KS AS AD",
                  preset="duel-app")
    assert legal(act(a, "pass")) == ["pass", "take"]  # RES-23: off in duel-app


B3_HANDS = ["9C JC KC 9D TD AD", "TC QC AC JD KD 9H"]
B3_STOCK = "QD TH JH QH KH AH 9S TS JS QS KS AS"


def test_B3_dealer_must_name_another_strain():
    """B-3: U = QD, all pass: the dealer must name C/H/S/NT, keeping or leaving U; D illegal."""
    s = duel_deal(B3_HANDS, B3_STOCK)
    s = act(s, "pass,pass")
    names = [f"name {x} {k}" for x in ("C", "H", "S", "NT") for k in ("keep", "leave")]
    assert sorted(legal(s)) == sorted(names + ["pass"])  # the non-dealer may still pass
    s = act(s, "pass")
    assert sorted(legal(s)) == sorted(names)
    lay = layout_for(s.cfg)
    for bad in ("name D keep", "name D leave", "pass", "take"):
        with pytest.raises(IllegalActionError):
            apply_action(s, lay.parse(bad))


def test_B3_keep_draws_two_leave_draws_three():
    """5.7.1: keep -> U + the next two; leave -> the three after U, U stays undealt."""
    s = act(duel_deal(B3_HANDS, B3_STOCK), "pass,pass,pass,name NT leave")
    assert s.contract.strain == 4 and s.contract.seat == 1
    assert mask_str(s.hands[1] & ~mask_of(parse_cards(B3_HANDS[1]))) == "TH JH QH"
    assert mask_str(s.hands[0] & ~mask_of(parse_cards(B3_HANDS[0]))) == "KH AH 9S"
    s2 = act(duel_deal(B3_HANDS, B3_STOCK), "pass,pass,pass,name H keep")
    assert mask_str(s2.hands[1] & ~mask_of(parse_cards(B3_HANDS[1]))) == "QD TH JH"
    assert mask_str(s2.hands[0] & ~mask_of(parse_cards(B3_HANDS[0]))) == "QH KH AH"
    # the non-dealer names in round 2 and leaves U: he draws first
    s3 = act(duel_deal(B3_HANDS, B3_STOCK), "pass,pass,name S leave")
    assert s3.contract.seat == 0
    assert mask_str(s3.hands[0] & ~mask_of(parse_cards(B3_HANDS[0]))) == "TH JH QH"
    assert mask_str(s3.hands[1] & ~mask_of(parse_cards(B3_HANDS[1]))) == "KH AH 9S"
    assert all(h.bit_count() == 9 for h in s3.hands)


# trump H; undealt AS TS KD QC JC 9S = 30 raw; the opponent (seat 0) holds the terz J-Q-K of spades
B4_HANDS = ["JS QS KS 9C TC KC AC QH TD", "9D JD QD AD 9H TH JH KH AH"]
B4_STOCK = "AS TS KD QC JC 9S"


def test_B4_equal_totals_fail():
    """B-4: T_t = T_o = 76 -> failed (strictly more needed, RES-19): o = 16 + all combos."""
    s = finished("duel", seat=1, strain="H", points=(56, 76), tricks=(4, 5), hands=B4_HANDS, stock=B4_STOCK,
                 shows={0: "JS QS KS"})
    r = score(s)
    assert r.made is False
    assert r.score == (18, 0)
    assert r.combinations == (2, 0)
    # the RES-19 flag: ">=" makes it; undealt points go to the taker: r(76 + 30) = 11
    s2 = finished("duel", seat=1, strain="H", points=(56, 76), tricks=(4, 5), hands=B4_HANDS, stock=B4_STOCK,
                  shows={0: "JS QS KS"}, taker_ge=True)
    r2 = score(s2)
    assert r2.made is True and r2.score == (6 + 2, 11)


def test_B5_opponent_takes_every_trick():
    """B-5: the opponent takes all 9 tricks: o = 21 + K_t + K_o (the taker's blot moves too)."""
    hands = ["JS QS KS 9C TC KC AC 9D TD", "JD QD AD 9H TH JH QH KH AH"]  # taker: blot QH KH
    s = finished("duel", seat=1, strain="H", points=(132, 0), tricks=(9, 0), hands=hands, stock=B4_STOCK,
                 shows={0: "JS QS KS"})
    r = score(s)
    assert r.made is False
    assert r.score == (21 + 2 + 2, 0)
    assert r.combinations == (4, 0)


def test_taker_capot_scores_21():
    """Rules.md 3: made with every trick: t = 21 + K_t, o = K_o (the undealt points are not added)."""
    hands = ["JS QS KS 9C TC KC AC 9D TD", "JD QD AD 9H TH JH QH KH AH"]
    r = score(finished("duel", seat=1, strain="H", points=(0, 132), tricks=(0, 9), hands=hands,
                       stock=B4_STOCK))
    assert r.made is True and r.score == (0, 21 + 2) and r.combinations == (0, 2)


def test_5_7_4_taker_with_every_trick_can_lose_the_comparison():
    """5.7.4: all 9 tricks but T_t < T_o (a carre of jacks): failed with 16, not 21."""
    hands = ["JC JD JH JS 9D TD QD AD TC", "KC AC 9H TH QH KH AH QS KS"]
    s = finished("duel", seat=1, strain="H", points=(0, 134), tricks=(0, 9), hands=hands,
                 stock="AS TS KD QC 9S 9C", shows={0: "JC JD JH JS"})
    r = score(s)
    assert r.made is False
    assert r.score == (16 + 20 + 2, 0)  # carre of jacks 200 = 20 tp, the taker's blot 2
    assert r.combinations == (22, 0)


# --- C: duel-app (rules text 004) -----------------------------------------------------------------

def test_C1_rounding():
    """C-1 (rules text 004): 86 -> 9, 85 -> 8."""
    assert round_tens(86) == 9 and round_tens(85) == 8


C_HANDS = ["9C JC QC 9D TD", "KC AC JD QD KD"]
C_STOCK = "TC AD 9H TH JH QH KH AH 9S TS JS QS KS AS"


def test_C2_dealer_takes():
    """C-2: U = TC; N passes, the dealer takes: trump C, dealer TC + 2, N 3, 8 undealt."""
    s = act(duel_deal(C_HANDS, C_STOCK, preset="duel-app"), "pass,take")
    assert s.contract.strain == 0 and s.contract.seat == 1 and s.contract.kind == "take"
    assert mask_str(s.hands[1] & ~mask_of(parse_cards(C_HANDS[1]))) == "TC AD 9H"
    assert mask_str(s.hands[0] & ~mask_of(parse_cards(C_HANDS[0]))) == "TH JH QH"
    held = s.hands[0] | s.hands[1]
    assert (mask_of(parse_cards(C_STOCK)) & ~held).bit_count() == 8
    assert s.cfg.num_tricks == 8 and all(h.bit_count() == 8 for h in s.hands)


def test_C3_named_taker_always_gets_the_open_card():
    """C-3: both pass round 1, N names H: N gets TC + 2, the dealer 3."""
    s = act(duel_deal(C_HANDS, C_STOCK, preset="duel-app"), "pass,pass,name H")
    assert s.contract.strain == 2 and s.contract.seat == 0
    assert mask_str(s.hands[0] & ~mask_of(parse_cards(C_HANDS[0]))) == "TC AD 9H"
    assert mask_str(s.hands[1] & ~mask_of(parse_cards(C_HANDS[1]))) == "TH JH QH"


def test_C4_dealer_must_name_a_suit_not_nt():
    """C-4: round 2, N passes: the dealer's calls are name D/H/S; C and NT illegal."""
    s = act(duel_deal(C_HANDS, C_STOCK, preset="duel-app"), "pass,pass")
    assert legal(s) == ["pass", "name D", "name H", "name S"]
    s = act(s, "pass")
    assert legal(s) == ["name D", "name H", "name S"]
    lay = layout_for(s.cfg)
    with pytest.raises(IllegalActionError, match="other than the open card"):
        apply_action(s, lay.parse("name C"))
    with pytest.raises(UnknownActionError):
        lay.parse("name NT")


# trump C; the 8 undealt cards AS TS KD QD JD 9D 9S JH hold 11+10+4+3+2+2 = 32 raw
C5_STOCK = "AS TS KD QD JD 9D 9S JH"


def test_C5_made_undealt_to_the_taker():
    """C-5: c_t 70, c_o 60, u 32, no combos: t = r(102) = 10, o = 6."""
    hands = ["9C TC QC AC TD 9H AH JS", "JC KC AD TH QH KH QS KS"]
    r = score(finished("duel-app", seat=0, strain="C", points=(70, 60), tricks=(4, 4), hands=hands,
                       stock=C5_STOCK))
    assert r.made is True and r.score == (10, 6) and r.combinations == (0, 0)


def test_C6_opponent_terz_makes_it_fail():
    """C-6: as C-5 but o holds a terz (J-Q-K of spades): T_o = 80 > 70 -> o = 16 + 2 = 18."""
    hands = ["9C TC QC AC TD 9H AH TH", "JC KC AD JS QH KH QS KS"]
    r = score(finished("duel-app", seat=0, strain="C", points=(70, 60), tricks=(4, 4), hands=hands,
                       stock=C5_STOCK))
    assert r.made is False and r.score == (0, 18) and r.combinations == (0, 2)


def test_C7_carres_are_ignored():
    """C-7: the taker's four kings count nothing in duel-app (RES-20), in the score or the comparison."""
    hands = ["KC KD KH KS 9C TC AD 9H", "JC QC AC TH QH AH JS QS"]
    stock = "AS TS QD JD 9D 9S JH TD"  # 38 raw
    r = score(finished("duel-app", seat=0, strain="C", points=(70, 54), tricks=(5, 3), hands=hands, stock=stock))
    assert r.made is True and r.score == (round_tens(70 + 38), 5) == (11, 5) and r.combinations == (0, 0)
    # the same deal under the duel's Armenian table would count the carre (10 tp)
    r2 = score(finished("duel-app", seat=0, strain="C", points=(70, 54), tricks=(5, 3), hands=hands, stock=stock,
                        carre_table="armenian"))
    assert r2.score == (21, 5)


def test_cap_duel_flag():
    """RES-22: cap_duel = 25 reproduces 004's 4-player "+90" clause."""
    hands = ["9C TC QC AC TD 9H AH JS", "JC KC AD TH QH KH QS KS"]
    r = score(finished("duel-app", seat=0, strain="C", points=(130, 0), tricks=(8, 0), hands=hands,
                       stock=C5_STOCK, capot_tp=25))
    assert r.score == (25, 0)


# --- result object, records, views --------------------------------------------------------

def test_5_7_3_result_object():
    s = act(duel_deal(B3_HANDS, B3_STOCK), "pass,pass,pass,name NT leave")
    rng = np.random.default_rng(1)
    lay = layout_for(s.cfg)
    while not is_terminal(s):
        s = apply_action(s, int(rng.choice(legal_actions(s))))
    rec = make_record(s)
    res = rec["result"]
    assert res["contract"] == {"seat": 1, "bid": "name NT leave", "double": "none"}
    assert sum(res["tricks"]) == 9
    undealt = sum(card_points(c, NT) for c in parse_cards("QD TS JS QS KS AS"))  # 3+10+2+3+4+19
    assert undealt == 41
    assert sum(res["card_points"]) + undealt == 162  # tricks only; 6 undealt cards never in them
    assert rec["hands"] == [" ".join(sorted_cards(h)) for h in B3_HANDS] and rec["stock"] == B3_STOCK
    assert replay_record(json.loads(json.dumps(rec)))[1] == res
    assert lay.describe(s.history[3]) == "name NT leave"


def sorted_cards(h: str) -> list[str]:
    return [card_str(c) for c in sorted(parse_cards(h))]


def test_open_card_is_public():
    """During the trump choice both seats see U; after the draw it stays public (kept or left)."""
    s = duel_deal(list(BASE), "JS 9H TH JH QH KH AH 9S TS QS KS AS")
    for seat in (0, 1):
        v = seat_view(s, seat)
        assert v.open_card == parse_cards("JS")[0]
        assert v.hand == s.hands[seat] and v.face_up == () and v.hidden_counts == ()
    s = act(s, "pass,take")
    assert seat_view(s, 0).open_card == parse_cards("JS")[0]
    assert seat_view(s, 0).hand == s.hands[0] and seat_view(s, 0).dealt_hand == s.hands[0]
    bazar = deal_random(make_rules("bazar"), np.random.default_rng(0))
    assert seat_view(bazar, 0).open_card == -1


@pytest.mark.parametrize("preset", ["duel", "duel-app"])
def test_views_hide_the_other_hand_and_the_stock(preset):
    """A seat's view is unchanged when the opponent's unseen cards and the undealt stock are
    resampled (the same public history replays): no hidden card leaks."""
    cfg = make_rules(preset)
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(30):
        s = deal_random(cfg, rng, dealer=int(rng.integers(2)))
        states = [s]
        while not is_terminal(s):
            s = apply_action(s, int(rng.choice(legal_actions(s))))
            states.append(s)
        k = int(rng.integers(len(states) - 1))
        cur = states[k]
        for me in (0, 1):
            alt = _resample_for(cur, me, rng)
            if alt is not None:
                assert seat_view(alt, me) == seat_view(cur, me)
                checked += 1
    assert checked >= 20


def _resample_for(state, me: int, rng):
    """The deal with the cards ``me`` has not seen permuted among their places, replayed; None if
    the permuted deal makes a past action illegal (that deal is not in ``me``'s information set)."""
    held = 0
    for h in (state.play_hands or ()):
        held |= h
    seen = state.start_hands[me] | (state.play_hands[me] if state.play_hands else 0)
    seen |= 1 << state.stock[0]
    for _, c in state.plays:
        seen |= 1 << c
    for cs in _auto_shown(state):
        seen |= sum(cb.mask for cb in cs)
    if state.decl is not None:  # shown combinations are public (rules.md 2.4.2)
        for s in range(2):
            if state.decl.decided[s] == 1:
                seen |= sum(cb.mask for cb in state.decl.show_set[s])
    deck = state.start_hands[0] | state.start_hands[1] | mask_of(state.stock)
    hidden = [c for c in range(32) if deck >> c & 1 and not seen >> c & 1]
    perm = dict(zip(hidden, rng.permutation(hidden).tolist()))
    hands = [sum(1 << perm.get(c, c) for c in range(32) if h >> c & 1) for h in state.start_hands]
    stock = [perm.get(c, c) for c in state.stock]
    alt = new_deal(state.cfg, state.dealer, hands, stock)
    try:
        for a in state.history:
            alt = apply_action(alt, a)
    except IllegalActionError:
        return None
    if alt.decl is not None and (alt.decl.events != state.decl.events or any(
            alt.decl.decided[s] == 1 and alt.decl.show_set[s] != state.decl.show_set[s] for s in range(2))):
        return None  # stated heights and shown sets are public: this deal contradicts them
    if _auto_shown(alt) != _auto_shown(state):
        return None  # automatic declarations shown after trick 1 are public (rules.md 2.8)
    return alt


def _auto_shown(state) -> tuple:
    if state.decl is None or state.cfg.declarations != "auto" or state.trick_no < 1:
        return ()
    return tuple(cs for cs in counted_sets(state))


# --- golden records (the conformance records: tests/test_conformance.py) ---------------------

GOLDEN = sorted((TESTS / "golden_2p").glob("*.json"))


@pytest.mark.parametrize("path", [p for p in GOLDEN if json.loads(p.read_text())["preset"].startswith("duel")],
                         ids=lambda p: p.stem)
def test_golden_records(path):
    rec = json.loads(path.read_text())
    assert rec.get("note"), "every golden record explains its hand check"
    _, res = replay_record(rec)
    assert res == rec["result"]
