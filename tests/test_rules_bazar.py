"""Bazar Blot rules (rules.md 1.4, 2.1-2.8): combinations, seniority, Ach, the auction and the
worked examples A-1..A-44 of rules.md 2.7 that apply to automatic declarations.

Scoring examples are played as real deals: the golden records of tests/golden/ (hand-checked,
see their notes) or deals built here; each test states the seed's arithmetic.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import act, auto_finish, build, complete, deal, fill_hands, is_legal, legal, result
from hypothesis import given, settings
from hypothesis import strategies as st

from blot_env.actions import CLS_CARRE, CLS_FIFTY, CLS_HUNDRED, CLS_TERZ, UnknownActionError, layout_for
from blot_env.cards import NT, mask_of, parse_cards
from blot_env.combos import (
    achievable_plus,
    best_of_class,
    best_set,
    classes_held,
    has_blot,
    instances,
    seniority,
)
from blot_env.declarations import counted_sets
from blot_env.engine import deal_result, is_terminal
from blot_env.record import replay_record
from blot_env.rules_config import make_rules
from blot_env.state import Phase

C, D, H, S = range(4)
GOLDEN = Path(__file__).resolve().parent / "golden"
P4 = ["pass"] * 4


def m(text: str) -> int:
    return mask_of(parse_cards(text))


def golden(name: str) -> dict:
    rec = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    _, res = replay_record(rec)
    assert res == rec["result"]
    return res


def values(combos) -> list[int]:
    return [c.value for c in combos]


# ====================================================================== 1.4 combinations
def test_a14_terz_and_blot_in_trump():
    hand = m("QH KH AH 7C 9D JS 8S TC")
    assert values(best_set(hand, H)) == [20]  # terz Q-K-A
    assert has_blot(hand, H)  # K+Q of trumps, counted inside the terz too: 20 + 20 = 40 raw
    assert not has_blot(hand, S)
    assert not has_blot(hand, NT)  # no blot in no-trump
    assert 4 in achievable_plus(hand, H) and 4 not in achievable_plus(hand, S)


@pytest.mark.parametrize(
    ("cards", "cls", "value"),
    [("9C TC JC", CLS_TERZ, 20), ("TC JC QC KC", CLS_FIFTY, 50), ("7D 8D 9D TD JD", CLS_HUNDRED, 100)],
)
def test_a15_sequences(cards, cls, value):
    hand = m(cards + " " + {"C": "AS KH 8D 7H 9S", "D": "AS KH 8C 7H 9S"}[cards[-1]][: 3 * (8 - len(cards.split()))])
    top = best_set(hand, S)[0]
    assert (top.cls, top.value) == (cls, value)


def test_sequences_use_natural_order_and_do_not_wrap():
    assert not instances(m("KC AC 7C"), H)  # the ace is high only
    assert values(best_set(m("9S TS JS"), H)) == [20]  # 9-10-J in natural order
    assert not instances(m("JS 9S AS TS") & ~m("TS"), H)


def test_split_runs_ach():
    # 6 = 100 | two terzes | 50; 7 = 100 | 50+terz; 8 = 50+50 | terz+100 (rules.md 2.4.1)
    six, seven, eight = m("7C 8C 9C TC JC QC"), m("7C 8C 9C TC JC QC KC"), m("7C 8C 9C TC JC QC KC AC")
    assert {10, 4, 5} <= achievable_plus(six, H) == {2, 4, 5, 10}
    assert {10, 7} <= achievable_plus(seven, H) == {2, 4, 5, 7, 10}
    assert {10, 12} <= achievable_plus(eight, H) == {2, 4, 5, 7, 10, 12}
    assert 12 not in achievable_plus(seven, H) and 9 not in achievable_plus(eight, H)
    # the best split is worth most; in clubs (trump) the blot adds 2 to every sum
    assert sum(values(best_set(eight, H))) == 120
    assert sorted(values(best_set(eight, H))) == [20, 100]
    assert achievable_plus(eight, C) == {2, 4, 5, 6, 7, 9, 10, 12, 14}
    # flat runs (long_run="100", bazar-app / RES-11): a run of 5+ is one "100"
    assert achievable_plus(eight, H, "100") == {10}
    assert achievable_plus(m("TC JC QC KC"), H, "100") == {5}
    assert classes_held(m("TC JC QC KC"), H) == {CLS_TERZ, CLS_FIFTY}
    assert classes_held(m("TC JC QC KC"), H, "100") == {CLS_FIFTY}


@pytest.mark.parametrize(
    ("rank", "trump_value", "nt_value"),
    [("J", 200, 100), ("9", 140, None), ("A", 110, 190), ("T", 100, 100), ("K", 100, 100), ("Q", 100, 100),
     ("8", None, None), ("7", None, None)],
)
def test_carre_tables(rank, trump_value, nt_value):
    hand = m(" ".join(rank + s for s in "CDHS"))
    for strain, want in ((H, trump_value), (NT, nt_value)):
        got = [c for c in instances(hand, strain) if c.cls == CLS_CARRE]
        assert values(got) == ([] if want is None else [want]), (rank, strain)


def test_carre_classic_table_knob():
    nines, aces = m("9C 9D 9H 9S"), m("AC AD AH AS")
    assert values(instances(nines, H, "100", "classic")) == [150]
    assert values(instances(aces, H, "100", "classic")) == [100]
    assert instances(nines, H, "100", "none") == ()


def _key(cards: str, strain: int, pos: int = 0):
    return seniority(best_set(m(cards), strain)[0], pos)


@pytest.mark.parametrize(
    ("senior", "junior", "strain"),
    [
        ("QC QD QH QS", "7S 8S 9S TS JS", H),  # any carre beats any sequence (here a 100)
        ("QC QD QH QS", "TS JS QS KS", H),  # the seed's "50" vs carre of queens
        ("7C 8C 9C", "7D 8D 9D", C),  # same top, trump wins
        ("QD KD AD", "7C 8C 9C", C),  # top card beats trumpness
        ("JS QS KS", "TS JS QS", H),  # terz to K beats terz to Q
        ("7C 8C 9C TC", "QD KD AD", H),  # longer class wins
        ("7C 8C 9C TC JC", "JD QD KD AD", H),
    ],
)
def test_sequence_and_carre_seniority(senior, junior, strain):
    assert _key(senior, strain, 3) > _key(junior, strain, 0)


def test_carre_seniority_orders():
    trump = ["Q", "K", "T", "A", "9", "J"]  # rules.md 1.4 item 2, trump game (rules text 000)
    nt = ["J", "Q", "K", "T", "A"]
    for order, strain in ((trump, H), (nt, NT)):
        keys = [_key(" ".join(r + s for s in "CDHS"), strain) for r in order]
        assert keys == sorted(keys), strain


def test_equal_plain_sequences_go_to_the_earlier_seat():
    # both plain, same top: the player earlier in trick-1 order wins (rules.md 1.4 item 3)
    assert _key("7C 8C 9C", H, 0) > _key("7D 8D 9D", H, 1)
    assert _key("7C 8C 9C", H, 2) < _key("7D 8D 9D", H, 1)


def test_claim_is_the_senior_instance_of_the_class():
    hand = m("7C 8C 9C TC JC QC KC AC")
    assert best_of_class(hand, H, CLS_TERZ).top == 7  # Q-K-A
    assert best_of_class(hand, H, CLS_HUNDRED).top == 7
    assert best_of_class(hand, H, CLS_CARRE) is None


@st.composite
def _hands(draw):
    cards = draw(st.lists(st.integers(0, 31), min_size=8, max_size=8, unique=True))
    return mask_of(cards), draw(st.integers(0, 4)), draw(st.sampled_from(["split", "100"]))


@settings(max_examples=300, deadline=None)
@given(_hands())
def test_best_set_properties(args):
    hand, strain, long_run = args
    chosen = best_set(hand, strain, long_run)
    insts = instances(hand, strain, long_run)
    used = 0
    for c in chosen:
        assert c in insts
        assert c.mask & hand == c.mask
        assert not c.mask & used, "combinations in a set are card-disjoint"
        used |= c.mask
    assert sum(values(chosen)) >= max(values(insts), default=0)
    ach = achievable_plus(hand, strain, long_run)
    assert 1 not in ach and 3 not in ach  # "+1" and "+3" never exist
    if chosen:
        assert sum(values(chosen)) // 10 in ach
        assert max(ach) == sum(values(chosen)) // 10 + (2 if has_blot(hand, strain) else 0)
    else:
        assert ach == ({2} if has_blot(hand, strain) else set())


# ====================================================================== 2.2 auction
def test_a1_partner_raise_and_four_passes():
    s = build(complete({}), ["bid 8H", "pass", "bid 9H", "pass", "pass", "pass"])
    assert s.phase == Phase.AUCTION  # three passes: the last bidder (seat 2) still has the last word
    assert is_legal(s, "bid 10S") and is_legal(s, "pass")
    s = act(s, ["pass"])
    assert s.phase == Phase.PLAY
    c = s.contract
    assert (c.seat, c.strain, c.value, c.kind, c.double) == (2, H, 9, "num", 0)
    assert s.leader == 0  # first hand leads trick 1 whoever won the auction (rules.md 2.1)


def test_raise_own_bid_and_same_number_illegal():
    s = build(complete({}), ["bid 8H", "pass", "pass", "pass"])
    assert is_legal(s, "bid 9H")  # "Перебивать можно и партнёра, и свою ставку"
    s = build(complete({}), ["bid 9H"])
    assert not is_legal(s, "bid 9NT") and not is_legal(s, "bid 9S")  # suit carries no rank
    assert is_legal(s, "bid 10S") and is_legal(s, "bid 10NT")
    assert not is_legal(s, "bid 8C")


def test_a2_number_25_blocks_plain_kaput():
    hands = complete({0: "JC JD JH JS 8C TD 8H TS", 1: "KC KD KH KS 7C 9D 7H 9S"})
    s = build(hands, ["bid 25H"])
    ls = legal(s)
    assert not any(a.startswith("bid kaput ") for a in ls)
    assert [a for a in ls if a.startswith("bid kaput+")] == [f"bid kaput+10 {x}" for x in ("C", "D", "H", "S", "NT")]
    assert is_legal(s, "bid 26C") and is_legal(s, "bid 80NT") and not is_legal(s, "bid 25S")


def test_a3_kaput_plus_must_exceed_standing_number():
    hands = complete({0: "7D 8D", 1: "KC KD KH KS 7C 8C 9C"})
    s = build(hands, ["bid 30S"])
    assert is_legal(s, "bid kaput+10 S")  # 35 > 30
    assert is_legal(s, "bid kaput+12 S")  # carre + terz = 12
    assert not is_legal(s, "bid kaput+2 S")  # 27 <= 30


def test_a4_after_kaput_only_kaput_plus_of_own_hand():
    hands = complete({1: "7C 8C 9C KH QH 7D 9D JS"})
    s = build(hands, ["bid kaput S"])
    ls = legal(s)
    assert not any(a.startswith("bid ") and "kaput" not in a for a in ls)  # no "26", no "30"
    assert "contra" in ls and "pass" in ls
    kp = {a for a in ls if a.startswith("bid kaput+")}
    lay = layout_for(s.cfg)
    want = set()
    for strain in range(5):
        for n in achievable_plus(s.hands[1], strain):
            if n >= 2 and 25 + n <= 80:
                want.add(lay.describe(lay.kaput_plus_id(n, strain)))
    assert kp == want == {"bid kaput+2 C", "bid kaput+2 D", "bid kaput+2 S", "bid kaput+2 NT",
                          "bid kaput+2 H", "bid kaput+4 H"}
    assert not any(a.startswith("bid kaput ") for a in ls)


def test_a5_plus_values():
    lay = layout_for(make_rules("bazar"))
    for bad in ("bid kaput+1 H", "bid kaput+3 H"):
        with pytest.raises(UnknownActionError):
            lay.parse(bad)
    assert achievable_plus(m("7C 8C 9C"), H) == {2}  # terz -> +2
    assert achievable_plus(m("7C 8C 9C KH QH"), H) == {2, 4}  # terz and blot -> +4
    assert achievable_plus(m("KC KD KH KS"), S) == {10}  # carre of kings -> +10
    s = build(complete({0: "KC KD KH KS 7C 9D 7H 9S"}), [])
    assert {a for a in legal(s) if "kaput+" in a} == {f"bid kaput+10 {x}" for x in ("C", "D", "H", "S", "NT")}


def test_a6_kaput_plus_over_partner_kaput():
    s = build(complete({2: "7C 8C 9C"}), ["bid kaput H", "pass"])
    ls = legal(s)
    assert "bid kaput+2 H" in ls and "contra" not in ls
    assert not any(a.startswith("bid ") and "kaput+" not in a for a in ls)


def test_a7_kaput_over_24_not_over_25():
    assert is_legal(build(complete({}), ["bid 24H"]), "bid kaput C")
    assert not is_legal(build(complete({}), ["bid 25H"]), "bid kaput C")


def test_a8_contra_and_recontra():
    s = build(complete({}), ["bid 9H"])
    assert "contra" in legal(s)  # opponent, in turn, instead of a pass
    assert "contra" not in legal(act(s, ["pass"]))  # partner may not contra
    s = act(s, ["contra"])
    assert legal(s) == ["pass", "recontra"]  # seat 2, contracted pair
    s2 = act(s, ["pass"])
    assert legal(s2) == ["pass"]  # seat 3, contra pair: no bids
    s3 = act(s2, ["pass"])
    assert legal(s3) == ["pass", "recontra"]  # seat 0, the bidder
    done = act(s3, ["pass"])  # three passes after the contra end the auction (RES-3)
    assert done.phase == Phase.PLAY and done.contract.double == 1
    rec = act(s, ["recontra"])  # "Выше реконтры ничего нет: после неё торговля сразу кончается"
    assert rec.phase == Phase.PLAY and rec.contract.double == 2 and rec.contract.seat == 0


def test_contra_needs_a_bid_and_ends_bidding():
    s = build(complete({}), [])
    assert "contra" not in legal(s) and "recontra" not in legal(s)


def test_passed_out_deal():
    s = build(complete({}), P4)
    assert is_terminal(s)
    r = deal_result(s)
    assert r.contract is None and r.made is None and r.score == (0, 0)
    assert golden("passed_out")["score"] == [0, 0]


def test_bazar_app_kaput_is_terminal_and_ladder_to_24():
    s = build(complete({1: "7C 8C 9C"}), ["bid kaput H"], preset="bazar-app")
    assert legal(s) == ["pass", "contra"]
    lay = layout_for(s.cfg)
    assert not lay.has("KAPUT_PLUS")
    with pytest.raises(UnknownActionError):
        lay.parse("bid 25H")
    assert is_legal(build(complete({}), ["bid 24S"], preset="bazar-app"), "bid kaput NT")


# ====================================================================== 2.5 scoring: worked examples
def test_a9_contra_multiplies_only_the_bid():
    # the cards of golden a33 (seat 1 holds the only terz), bid 9H: made with 103 raw
    hands = json.loads((GOLDEN / "a33_10H_contra_made.json").read_text())["hands"]
    for calls, mult in ((["contra", "pass", "pass", "pass"], 2), (["contra", "recontra"], 4)):
        s = auto_finish(build(hands, ["bid 9H", *calls], declarations="auto"), lambda st, ls: ls[0])
        r = result(s)
        assert r["made"] and r["card_points"][0] == 103
        assert r["score"] == [9 * mult + 16 + 2, 0]  # 9 x 2 = 18, 9 x 4 = 36 (+16 +all combos)


def test_a22_made_with_terz_defenders_blot():
    r = golden("a22_9H_made_terz_vs_blot")
    assert r["card_points"] == [72, 90] and r["made"]  # 72 + 20 = 92 >= 90
    assert r["score"] == [9 + 7 + 2, 9 + 2]


def test_a23_failed():
    assert golden("a23_10S_failed")["score"] == [0, 10 + 16]


def test_a24_check_uses_raw_points():
    made, failed = golden("a24_8C_80_made"), golden("a24_8C_76_failed")
    assert made["card_points"][0] == 80 and made["made"] and made["score"] == [8 + 8, 8]
    assert failed["card_points"][0] == 76 and not failed["made"] and failed["score"] == [0, 8 + 16]


def test_a25_rounding_each_side():
    a, b = golden("a25_125_37"), golden("a25_136_26")
    assert a["card_points"] == [125, 37] and a["score"] == [8 + 12, 4]
    assert b["card_points"] == [136, 26] and b["score"] == [8 + 14, 3]  # 14 + 3 = 17


def test_a26_a27_capot_by_bidders():
    assert golden("a26_10H_capot")["score"] == [10 + 25, 0]
    r = golden("a27_20H_capot")
    assert r["made"] and r["card_points"][0] == 162 < 200 and r["score"] == [20 + 25, 0]


def test_a28_reverse_capot_always_fails():
    r = golden("a28_10H_reverse_capot")
    # the bidders' counted carre of queens (10 tp) would make V_A = 100, but capD fails the contract
    assert r["tricks"] == [0, 8] and not r["made"]
    assert r["score"] == [0, 10 + 25 + 10 + 0]


def test_a29_a30_kaput_made():
    assert golden("a29_kaput_H_terz")["score"] == [25 + 25 + 2, 0]
    assert golden("a30_kaput_plus2_made")["score"] == [27 + 25 + 2, 0]


def test_a31_a32_kaput_failed():
    r = golden("a31_kaput_failed_early_stop")
    assert r["tricks"] == [2, 0] and r["score"] == [25 + 16, 0]
    assert golden("a32_kaput_plus2_failed_terz_shown")["score"] == [27 + 16 + 2, 0]


def test_a33_a34_contra_recontra():
    assert golden("a33_10H_contra_made")["score"] == [10 * 2 + 16 + 2, 0]
    assert golden("a34_10H_recontra_made")["score"] == [10 * 4 + 16 + 2, 0]


def test_a35_a36_contra_with_capot():
    assert golden("a35_10H_contra_capot")["score"] == [10 * 2 + 25, 0]
    assert golden("a36_kaput_contra_made")["score"] == [25 * 2 + 25, 0]


def test_a37_to_a41_no_trump():
    assert golden("a37_10NT_made")["score"] == [10 * 2 + 11, 5]
    assert golden("a38_10NT_failed")["score"] == [0, 10 * 2 + 16]
    assert golden("a39_10NT_capot")["score"] == [10 * 2 + 25, 0]
    assert golden("a40_kaput_NT_made")["score"] == [25 * 2 + 25, 0]
    assert golden("a41_10NT_contra_made")["score"] == [10 * 3 + 16, 0]


def test_a44_blot_kept_or_handed_over():
    made, failed = golden("a44_11H_made"), golden("a44_11H_failed")
    assert made["card_points"] == [106, 56] and made["score"] == [11 + 11 + 2, 6 + 5]
    assert failed["score"] == [0, 11 + 16 + 5 + 2]  # BlotStar's 32 would keep the blot with A


# ------------------------------------------------------------------ resolution in real deals
@pytest.mark.parametrize(
    ("name", "partial", "strain", "winner_seat"),
    [
        # opponent's "50" vs your carre of queens: the carre passes, the "50" does not count
        ("A-17", {0: "QC QD QH QS", 1: "7S 8S 9S TS"}, S, 0),
        # trump C: partner 7C 8C 9C vs opponent 7D 8D 9D: the trump terz passes
        ("A-18", {2: "7C 8C 9C", 1: "7D 8D 9D"}, C, 2),
        # trump C: 7C 8C 9C vs Q-K-A of diamonds: the terz to the ace passes
        ("A-19", {1: "7C 8C 9C", 2: "QD KD AD"}, C, 2),
        # terz to K vs terz to Q
        ("A-20", {0: "JS QS KS", 1: "TH JH QH"}, D, 0),
    ],
)
def test_a17_to_a20_only_the_senior_side_counts(name, partial, strain, winner_seat):
    hands = fill_hands(partial, strain)
    bid = f"bid 8{'CDHS'[strain]}"
    s = auto_finish(build(hands, [bid, *P4], declarations="auto"), lambda st, ls: ls[0])
    sets = counted_sets(s)
    assert sets[winner_seat], name
    assert all(not sets[q] for q in range(4) if q % 2 != winner_seat % 2), name
    r = result(s)
    assert r["combinations"][1 - winner_seat % 2] == 0 or not r["made"]


def test_a42_a43_game_end():
    match = pytest.importorskip("blot_env.match")
    from blot_env.scoring import DealResult

    cfg = make_rules("bazar")
    contract = build(complete({}), ["bid 9H", *P4]).contract
    made = DealResult(contract, True, (5, 3), (90, 72), (0, 0), (18, 11))
    # 142 : 149, Us (team 0) made 9 -> 18 : 11 = 160 : 160, tie: the deal's winner
    assert match.decide(cfg, (142 + 18, 149 + 11), made)[0] == 0
    # 140 : 150, Us made 8 -> 16 : 8 = 156 : 158: both over 151, the higher total wins
    made8 = DealResult(contract, True, (5, 3), (86, 76), (0, 0), (16, 8))
    assert match.decide(cfg, (140 + 16, 150 + 8), made8)[0] == 1


def test_deal_helper_is_first_hand_seat0():
    s = deal(complete({}))
    assert s.first_hand == 0


def test_docs_rules_knob_table_up_to_date():
    """docs/rules.md's knob table is generated from RulesConfig: run scripts/gen_docs.py."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    p = subprocess.run([sys.executable, str(repo / "scripts" / "gen_docs.py"), "--check"], capture_output=True,
                       text=True, cwd=repo)
    assert p.returncode == 0, p.stderr
    text = (repo / "docs" / "rules.md").read_text(encoding="utf-8")
    from blot_env.rules_config import KNOBS

    for knob in KNOBS:
        assert f"| `{knob}` |" in text
    # every preset has a section (numbered as the rules.md citations of the code), and it is not empty
    for preset, head in (("bazar", "## 2. `bazar`"), ("bazar-app", "### 2.8 `bazar-app`"), ("duel", "## 3. `duel`"),
                         ("duel-app", "## 4. `duel-app`"), ("open", "## 5. `open`"), ("belote", "## 6. `belote`")):
        assert head in text, preset
        level = head.split()[0]
        body = text.split(head, 1)[1].split("\n" + level + " ", 1)[0]
        assert len(body) > 1000, preset
        if preset != "bazar-app":  # the worked examples (A-n, B-n, ...) that the tests cite
            assert "| # | situation | result |" in body, preset
