"""The manual announce/show protocol (rules.md 2.4.2-2.4.3, rules text 000 "Объявить и показать").

Deals are built with fixed combination cards (the rest dealt so that nothing else combines),
driven with scripted decisions, and checked on the legal sets along the way and on the exact
final score. ``expect_score`` restates rules.md 2.5 for a deal with known counted combinations.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import act, build, drive, fill_hands, history, legal, result, seat

from blot_env.cards import mask_of, parse_cards, round_tens
from blot_env.errors import IllegalActionError
from blot_env.state import Right

C, D, H, S = range(4)
P4 = ["pass"] * 4
GOLDEN = Path(__file__).resolve().parent / "golden"


def m(text: str) -> int:
    return mask_of(parse_cards(text))


def expect_score(r: dict, k0: int, k1: int) -> list[int]:
    """rules.md 2.5 (no contra, number contract) with counted combinations k0/k1 per team."""
    c = r["contract"]
    a = c["seat"] % 2
    d = 1 - a
    b = int(c["bid"].split()[1][:-1].rstrip("NTCDHS") or 0)
    k = [k0, k1]
    cp = r["card_points"]
    out = [0, 0]
    if r["made"]:
        out[a] = b + round_tens(cp[a]) + k[a]
        out[d] = round_tens(cp[d]) + k[d]
    else:
        out[d] = b + 16 + k0 + k1
    return out


def golden_hands(name: str) -> list[str]:
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))["hands"]


# ---------------------------------------------------------------- trick-1 announce decisions
def test_every_seat_announces_even_when_only_none_is_legal():
    hands = fill_hands({}, H, seed=3)
    s = build(hands, ["bid 8H", *P4])
    seen = []
    for _ in range(4):
        assert legal(s) == ["announce none"]
        seen.append(seat(s))
        s = act(s, ["announce none"])
        s = act(s, [legal(s)[0]])
    assert seen == [0, 1, 2, 3]
    h = history(s)
    assert [a.split()[0] for a in h[5:13]] == ["announce", "play"] * 4
    # trick 2: nobody announced, so nobody has a show decision
    assert all(a.startswith("play") for a in legal(s))


def test_announce_classes_are_those_held():
    hands = fill_hands({0: "7S 8S 9S TS", 1: "AC AD AH AS", 2: "7D 8D 9D TD JD QD"}, H)
    s = build(hands, ["bid 8H", *P4])
    assert legal(s) == ["announce none", "announce terz", "announce 50"]  # a 4-run allows terz and 50
    with pytest.raises(IllegalActionError, match=r"2\.4\.3"):
        act(s, ["announce 100"])
    s = act(s, ["announce none"])
    s = act(s, [legal(s)[0]])
    assert legal(s) == ["announce none", "announce carre"]
    s = act(s, ["announce none"])
    s = act(s, [legal(s)[0]])
    assert legal(s) == ["announce none", "announce terz", "announce 50", "announce 100"]  # 6-run


def test_no_second_chance_at_trick_2():
    hands = fill_hands({0: "7S 8S 9S"}, H)
    s = drive(build(hands, ["bid 8H", *P4]), {0: ["announce none"]}, tricks=1)
    assert all(a.startswith("play") for a in legal(s))
    assert not any(a.startswith("announce") for a in history(s)[13:])


# ---------------------------------------------------------------- heights
def test_height_trump_only_when_true():
    hands = fill_hands({0: "7H 8H 9H", 1: "TH JH QH", 2: "7S 8S 9S", 3: "TS JS QS"}, H)
    s = build(hands, ["bid 8H", *P4, "announce terz"])
    s = act(s, [legal(s)[0], "announce terz"])
    assert legal(s) == ["height", "height trump"]  # seat 1's terz is in trump
    s = act(s, ["height trump"])
    assert legal(s) == ["concede", "reveal"]
    s = act(s, ["reveal"])
    s = act(s, [legal(s)[0], "announce terz"])
    assert legal(s) == ["height"]  # seat 2: a plain terz
    with pytest.raises(IllegalActionError, match="height"):
        act(s, ["height trump"])
    s = act(s, ["height"])
    assert seat(s) == 1 and legal(s) == ["concede", "reveal"]  # only seat 1 announced terz before, opposed


def test_height_for_a_carre_is_plain():
    hands = fill_hands({0: "JC JD JH JS", 1: "9C 9D 9H 9S"}, H)
    s = build(hands, ["bid 10H", *P4, "announce carre"])
    s = act(s, [legal(s)[0], "announce carre"])
    assert legal(s) == ["height"]


def test_higher_class_needs_no_height():
    hands = fill_hands({0: "7S 8S 9S", 1: "TC JC QC KC"}, H)
    s = build(hands, ["bid 8H", *P4, "announce terz"])
    s = act(s, [legal(s)[0], "announce 50"])
    assert all(a.startswith("play") for a in legal(s))


# ---------------------------------------------------------------- A-21 and pass-on
A21_DECISIONS = {0: ["announce terz", "reveal", "noshow"], 1: ["announce terz", "height", "reveal", "show"],
                 2: ["announce terz", "height", "show"], 3: ["announce none"]}


def test_a21_pass_on_in_trick_2():
    s = build(golden_hands("m_a21_pass_on"), ["bid 8H", *P4])
    s = drive(s, A21_DECISIONS, prefer={0: "TD", 1: "KD", 2: "AD", 3: "QD"})
    r = result(s)
    assert r["combinations"] == [0, 2]  # "вашей паре 0, соперникам 20"
    assert r["score"] == expect_score(r, 0, 2) == [18, 8]
    assert s.decl.decided == (0, 1, 1, -1)


def test_a21_pass_on_in_trick_3():
    # seat 1 wins trick 1 and so plays to trick 2 before the leader's noshow: it shows at trick 3
    s = build(golden_hands("m_a21_pass_on"), ["bid 8H", *P4])
    prefer = {0: "7C", 1: "AC", 2: "JC", 3: "QC"}
    s = drive(s, A21_DECISIONS, prefer=prefer, tricks=1)
    assert s.leader == 1 and s.decl.leader == 0
    s = act(s, [legal(s)[0]])  # seat 1 leads trick 2: no decision yet
    assert legal(s) == ["show", "noshow"]  # seat 2, leading pair
    s = act(s, ["show"])
    s = act(s, [legal(s)[0]])
    s = act(s, [legal(s)[0]])  # seat 3
    assert legal(s) == ["show", "noshow"]  # seat 0, the leader
    s = act(s, ["noshow"])
    assert s.decl.rights[1] == Right.PASS_ON
    s = act(s, [legal(s)[0]])
    # trick 3: at seat 1's own turn
    s = drive(s, {}, tricks=2)
    while seat(s) != 1:
        s = act(s, [legal(s)[0]])
    assert legal(s) == ["show", "noshow"]
    s = drive(act(s, ["show"]))
    r = result(s)
    assert r["combinations"] == [0, 2] and r["score"] == expect_score(r, 0, 2)


def test_best_claim_hidden_and_other_claim_not_shown():
    # the leader hides; the opponent with the right also declines: only the partner's terz counts
    s = build(golden_hands("m_a21_pass_on"), ["bid 8H", *P4])
    dec = {k: list(v) for k, v in A21_DECISIONS.items()}
    dec[1][-1] = "noshow"
    s = drive(s, dec, prefer={0: "TD", 1: "KD", 2: "AD", 3: "QD"})
    r = result(s)
    assert r["combinations"] == [2, 0] and r["score"] == expect_score(r, 2, 0)
    assert s.decl.decided == (0, 0, 1, -1)


def test_pass_on_needs_a_claim_above_what_was_shown():
    # seat 1's terz to 10 ranks below a shown terz to K: its right lapses
    hands = fill_hands({0: "QS KS AS", 1: "8C 9C TC", 2: "JD QD KD"}, H)
    s = build(hands, ["bid 8H", *P4])
    dec = {0: ["announce terz", "reveal", "noshow"], 1: ["announce terz", "height", "reveal"],
           2: ["announce terz", "height", "show"]}
    s = drive(s, dec, tricks=3)
    assert s.decl.decided[1] == -1 and s.decl.rights[1] == Right.NONE
    r = result(drive(s))
    assert r["score"] == expect_score(r, 2, 0)  # only seat 2's shown terz counts


# ---------------------------------------------------------------- two claimants on each side
FOUR = {0: "JS QS KS", 1: "QC KC AC", 2: "7D 8D 9D", 3: "TH JH QH"}  # trump D: seat 2's terz is trump
FOUR_T1 = {0: ["announce terz", "concede"], 1: ["announce terz", "height", "reveal"],
           2: ["announce terz", "height", "concede"], 3: ["announce terz", "height"]}


def test_two_claimants_each_side_heights_and_answers():
    s = build(fill_hands(FOUR, D), ["bid 8D", *P4])
    s = drive(s, {k: list(v) for k, v in FOUR_T1.items()}, tricks=1)
    h = [a for a in history(s) if not a.startswith(("play", "bid", "pass"))]
    assert h == ["announce terz", "announce terz", "height", "concede", "announce terz", "height", "reveal",
                 "announce terz", "height", "concede"]
    assert s.decl.conceded == (True, False, True, False)
    assert s.decl.leader == 1  # terz to A, the best non-conceded claim
    assert s.decl.rights[1] == s.decl.rights[3] == Right.LEADING_PAIR


def test_two_claimants_each_side_both_show():
    s = build(fill_hands(FOUR, D), ["bid 8D", *P4])
    dec = {k: list(v) for k, v in FOUR_T1.items()}
    dec[1].append("show")
    dec[3].append("show")
    r = result(drive(s, dec))
    assert r["combinations"] == [0, 4] and r["score"] == expect_score(r, 0, 4)


def test_conceded_claims_shown_by_pass_on_count():
    # the leader (seat 1) hides; seat 2 (conceded) shows by pass-on in trick 2, then its partner
    # seat 0 (conceded too, "даже если он говорил «Твой прошёл»") shows in trick 3 with a terz
    # to K that beats seat 3's shown terz to Q: team 0 counts both terzes
    s = build(fill_hands(FOUR, D), ["bid 8D", *P4])
    dec = {k: list(v) for k, v in FOUR_T1.items()}
    dec[1].append("noshow")
    dec[2].append("show")
    dec[3].append("show")
    dec[0].append("show")
    s = drive(s, dec)
    assert s.decl.decided == (1, 0, 1, 1)
    r = result(s)
    assert r["score"] == expect_score(r, 4, 0)
    assert r["made"] and r["combinations"] == [4, 0]


def test_conceded_member_of_leading_pair_gets_no_show():
    # seat 0 concedes its terz to seat 1; partner seat 2's 50 leads: only seat 2 decides (item 5)
    hands = fill_hands({0: "7S 8S 9S", 1: "JC QC KC", 2: "7D 8D 9D TD"}, H)
    s = build(hands, ["bid 8H", *P4])
    s = drive(s, {0: ["announce terz", "concede"], 1: ["announce terz", "height"], 2: ["announce 50"]}, tricks=1)
    assert s.decl.leader == 2 and s.decl.rights[0] == Right.NONE
    s = drive(s, {2: ["show"]})
    assert [a for a in history(s) if a in ("show", "noshow")] == ["show"]
    assert s.decl.decided == (-1, -1, 1, -1)
    r = result(s)
    assert r["score"] == expect_score(r, 5, 0)


# ---------------------------------------------------------------- what is claimed and shown
def test_announcing_less_than_held_shows_only_the_terz():
    hands = fill_hands({0: "7S 8S 9S TS"}, H)
    for ann, tp in (("announce terz", 2), ("announce 50", 5)):
        s = drive(build(hands, ["bid 8H", *P4]), {0: [ann, "show"]})
        r = result(s)
        assert r["score"] == expect_score(r, tp, 0)
        assert (r["combinations"][0] == tp) == bool(r["made"])


def test_carre_held_terz_announced_cannot_show_the_carre():
    hands = fill_hands({0: "JC JD JH JS 9S TS"}, C)
    s = build(hands, ["bid 8C", *P4])
    assert legal(s) == ["announce none", "announce terz", "announce carre"]
    s = drive(s, {0: ["announce terz"]}, tricks=1)
    assert [c.value for c in s.decl.show_set[0]] == [20]  # 9-10-J of spades only
    r = result(drive(s, {0: ["show"]}))
    assert r["score"] == expect_score(r, 2, 0)


def test_carre_announced_shows_carre():
    hands = fill_hands({0: "JC JD JH JS 9S TS"}, C)
    r = result(drive(build(hands, ["bid 8C", *P4]), {0: ["announce carre", "show"]}))
    assert r["made"] and r["combinations"][0] == 20 and r["score"] == expect_score(r, 20, 0)


# ---------------------------------------------------------------- kaput+N and the protocol
def test_kaput_plus_made_only_if_shown():
    hands = golden_hands("a30_kaput_plus2_made")  # seat 2's own terz 7-8-9 S; seat 0 takes every trick
    calls = ["pass", "pass", "bid kaput+2 H", *P4]
    lead = {0: "JH 9H AH AC TC KC AD TD"}
    shown = result(drive(build(hands, calls), {2: ["announce terz", "show"]}, prefer=lead))
    assert shown["made"] and shown["score"] == [27 + 25 + 2, 0]
    hidden = result(drive(build(hands, calls), {2: ["announce terz", "noshow"]}, prefer=lead))
    assert hidden["tricks"] == [8, 0] and not hidden["made"]
    assert hidden["score"] == [0, 27 + 16]  # capot but the terz was hidden: failed (RES-17)


def test_kaput_plus_failed_when_beaten():
    # seat 3's "50" (J-Q-K-A of spades) outranks the bidder's terz: the terz does not count
    hands = ["JH 9H AH AC TC KC AD TD", "TH 8H 7C 9C 7D 9D TS QC", "KH 7H 7S 8S 9S 8C JC JD",
             "QH QS 8D QD KD JS KS AS"]
    calls = ["pass", "pass", "bid kaput+2 H", *P4]
    s = drive(build(hands, calls), {2: ["announce terz", "show"], 3: ["announce 50", "show"]},
              prefer={0: "JH 9H AH AC TC KC AD TD"})
    r = result(s)
    assert s.decl.leader == 3 and s.decl.decided[2] == -1  # the leader showed: no pass-on
    assert r["tricks"] == [8, 0] and not r["made"]
    assert r["score"] == [0, 27 + 16 + 5] and r["combinations"] == [0, 5]


def test_early_kaput_stop_with_pass_on_pending():
    s = build(golden_hands("m_kaput_plus2_hidden_early_stop"), ["pass", "bid kaput+2 H", *P4])
    s = drive(s, {0: ["announce terz", "concede"], 1: ["announce terz", "height", "noshow"]},
              prefer={0: "JH AH"})
    assert len(s.plays) == 8  # stopped after trick 2
    assert s.decl.rights[0] == Right.PASS_ON and s.decl.decided[0] == -1  # lapsed (2.4.3 item 10)
    r = result(s)
    assert r["score"] == [27 + 16, 0] and r["combinations"] == [0, 0]
    # showing instead: 45
    s2 = build(golden_hands("m_kaput_plus2_hidden_early_stop"), ["pass", "bid kaput+2 H", *P4])
    r2 = result(drive(s2, {0: ["announce terz", "concede"], 1: ["announce terz", "height", "show"]},
                      prefer={0: "JH AH"}))
    assert r2["score"] == [27 + 16 + 2, 0]


def test_blot_counts_even_if_the_kaput_stops_before_its_second_card():
    # seat 1 holds KH+QH and bids kaput; seat 0 wins trick 1: stop after trick 2 with QH unplayed
    hands = fill_hands({0: "JH 9H AH TH", 1: "KH QH 8H 7H"}, H)
    s = build(hands, ["pass", "bid kaput H", *P4])
    s = drive(s, prefer={0: "JH 9H", 1: "8H 7H"})
    assert len(s.plays) == 8  # stopped after trick 2, KH and QH still in seat 1's hand
    assert s.hands[1] & m("KH QH") == m("KH QH")
    r = result(s)
    assert r["combinations"] == [2, 0] and r["score"] == [25 + 16 + 2, 0]


def test_nobody_decides_twice():
    s = build(golden_hands("m_a21_pass_on"), ["bid 8H", *P4])
    s = drive(s, A21_DECISIONS, prefer={0: "TD", 1: "KD", 2: "AD", 3: "QD"})
    decisions = [a for a in history(s) if a in ("show", "noshow")]
    assert decisions == ["show", "noshow", "show"]
