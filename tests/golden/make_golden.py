"""Write the golden deal records of tests/golden/ from the hand-checked cases below.

Each case gives the cards, the auction, the declaration decisions and a card preference per
seat (the rest of the play is "the first preferred legal card, else the lowest legal card").
The ``expected`` result of every case was worked out BY HAND from rules text 000 and rules.md 2.5
(the arithmetic is in its ``note``); the tricks and raw card points were checked with the
independent trick code of tests/oracles/reference.py (``ref_winner``/``ref_points``), whose
trick-by-trick trace is written into the note. The script refuses to write a record when
the engine disagrees with the hand result.

    python tests/golden/make_golden.py          # (re)write tests/golden/*.json
    python tests/golden/make_golden.py --check  # only compare
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from blot_env.actions import layout_for
from blot_env.cards import card_str, mask_of, parse_cards
from blot_env.engine import apply_action, current_seat, deal_result, is_terminal, legal_actions, new_deal
from blot_env.rules_config import make_rules
from blot_env.state import Phase

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script: tests/ holds the oracles package
    sys.path.insert(0, str(HERE.parent))
import oracles as inv  # noqa: E402

P4 = ["pass"] * 4

# --- reusable hands (seat 0 = first hand with dealer 3) -----------------------------------
# seat 0 takes every trick in hearts when it leads JH 9H AH then its clubs and diamonds;
# nobody holds a sequence, a carre or the blot (KH at seat 2, QH at seat 3).
CAP = ["JH 9H AH AC TC KC AD TD", "TH 8H 7C 9C 7D 9D 8S QS", "KH 7H 7S 9S TS 8C JC JD",
       "QH QC 8D QD KD JS KS AS"]
# the same, but the spades 7-8-9 (a plain terz) sit with seat 2
CAP_TERZ2 = ["JH 9H AH AC TC KC AD TD", "TH 8H 7C 9C 7D 9D TS QS", "KH 7H 7S 8S 9S 8C JC JD",
             "QH QC 8D QD KD JS KS AS"]
# the spades 7-8-9 sit with seat 1 (a defender of seat 0, a possible kaput+2 bidder)
CAP_TERZ1 = ["JH 9H AH AC TC KC AD TD", "TH 8H 7C 9C 7D 7S 8S 9S", "KH 7H 9D TS QS 8C JC JD",
             "QH QC 8D QD KD JS KS AS"]
# no-trump capot hand for seat 0: A-10-K of clubs and diamonds, A-10 of hearts, no carre
NTCAP = ["AC TC KC AD TD KD AH TH", "7C 9C 8D JD 7H 9H 8S TS", "8C JC 7D 9D QD 8H JH QS",
         "QC QH KH 7S 9S JS KS AS"]
LEAD_CAP = {0: "JH 9H AH AC TC KC AD TD"}


@dataclass
class Case:
    name: str
    hands: list[str]
    auction: list[str]
    expected: dict
    note: str
    preset: str = "bazar"
    rules: dict = field(default_factory=dict)
    dealer: int = 3
    prefer: dict = field(default_factory=dict)
    decisions: dict = field(default_factory=dict)
    """Per seat, the declaration actions it takes in order (announce/height/answer/show)."""


def _res(contract_seat, bid, double, made, tricks, cp, comb, score) -> dict:
    return {"contract": None if bid is None else {"seat": contract_seat, "bid": bid, "double": double},
            "made": made, "tricks": tricks, "card_points": cp, "combinations": comb, "score": score}


CASES: list[Case] = [
    Case("a22_9H_made_terz_vs_blot", ["TC 9H TH 7S 8S 9S JS KS", "7C 9C KC 7D JD QH KH AS",
                                       "8C QC AC 8D 9D KD 8H JH", "JC TD QD AD 7H AH TS QS"],
         ["bid 9H"] + P4, _res(0, "bid 9H", "none", True, [3, 5], [72, 90], [2, 2], [18, 11]),
         "A-22 (rules text 000 'ставка «9». Карт на 72, у пары терз; у соперников 90 и блот. 72 + 20 = 92 — "
         "сыграли ... 9 + 7 + 2 = 18, соперникам 9 + 2 = 11'). Seat 0 holds the terz 7S-8S-9S (the only "
         "sequence), seat 1 the blot KH+QH. c_A = 72, V_A = 72 + 20 = 92 >= 90: made. "
         "A = 9 + r(72)=7 + 2 = 18; D = r(90)=9 + blot 2 = 11.", rules={"declarations": "auto"}),
    Case("a23_10S_failed", ["8C 9C JC 9D QH 9S TS AS", "KC 8D QD KD 8H 9H KH 8S",
                            "7C QC AC TD AD 7H TH QS", "TC 7D JD JH AH 7S JS KS"],
         ["bid 10S"] + P4, _res(0, "bid 10S", "none", False, [3, 5], [80, 82], [0, 0], [0, 26]),
         "A-23 ('ставка 10, набрали меньше 100, комбинаций нет — соперникам 10 + 16 = 26'). No sequence, "
         "carre or blot anywhere. c_A = 80 < 100: failed; D = 10 + 16 = 26, A = 0.",
         rules={"declarations": "auto"}),
    Case("a24_8C_80_made", ["TC JC KC 7D 9D JD KH 8S", "7C QC AC AD 7H 9H JH QS",
                            "8C 8D QD KD AH 7S 9S JS", "9C TD 8H TH QH TS KS AS"],
         ["bid 8C"] + P4, _res(0, "bid 8C", "none", True, [5, 3], [80, 82], [0, 0], [16, 8]),
         "A-24 ('Ставка 8: взяли 80 — сыграли'). No combinations. c_A = 80 >= 80: made. "
         "A = 8 + r(80)=8 = 16; D = r(82) = 8.", rules={"declarations": "auto"}),
    Case("a24_8C_76_failed", ["8C QC AC TD KD 8H AH AS", "9C JC 7D JD QD KH 7S QS",
                              "7C KC 8D 7H 9H JH 9S JS", "TC 9D AD TH QH 8S TS KS"],
         ["bid 8C"] + P4, _res(0, "bid 8C", "none", False, [4, 4], [76, 86], [0, 0], [0, 24]),
         "A-24 ('76 — не сыграли, хотя после округления 76 дало бы 8'). No combinations; the check "
         "uses raw points: 76 < 80, failed. D = 8 + 16 = 24; A = 0.", rules={"declarations": "auto"}),
    Case("a25_125_37", ["QC TD QD JH AH 7S 9S TS", "7C 9C JC AC 9D TH 8S AS",
                        "TC KC 8D JD KD AD 7H JS", "8C 7D 8H 9H QH KH QS KS"],
         ["bid 8D"] + P4, _res(0, "bid 8D", "none", True, [7, 1], [125, 37], [0, 0], [20, 4]),
         "A-25 ('125 и 37 → 12 и 4. Вместе выходит 16'). No combinations (KH+QH are not trumps in a "
         "diamond game). Made: A = 8 + r(125)=12 = 20; D = r(37) = 4.", rules={"declarations": "auto"}),
    Case("a25_136_26", ["7C TD JD 8H 8S 9S JS AS", "8C QC KC 7D 7H TH QH AH",
                        "9C 9D QD AD 9H KH TS KS", "TC JC AC 8D KD JH 7S QS"],
         ["bid 8D"] + P4, _res(0, "bid 8D", "none", True, [5, 3], [136, 26], [0, 0], [22, 3]),
         "A-25 ('17 — только когда обе на 6: 136 и 26 → 14 и 3'). No combinations. Made: "
         "A = 8 + r(136)=14 = 22; D = r(26) = 3; the card tp add up to 17.", rules={"declarations": "auto"}),
    Case("a26_10H_capot", CAP, ["bid 10H"] + P4, _res(0, "bid 10H", "none", True, [8, 0], [162, 0], [0, 0],
                                                       [35, 0]),
         "A-26 ('Ставка 10 — 10 + 25 = 35 и свои комбинации'). Seat 0 draws trumps with JH 9H AH "
         "and cashes AC TC KC AD TD: all 8 tricks, no combinations. A = 10 + 25 = 35; D = 0.",
         rules={"declarations": "auto"}, prefer=LEAD_CAP),
    Case("a27_20H_capot", CAP, ["bid 20H"] + P4, _res(0, "bid 20H", "none", True, [8, 0], [162, 0], [0, 0],
                                                       [45, 0]),
         "A-27 ('«20» без комбинаций и все 8 взяток — 250 не меньше 200, сыграли'). c_A = 162 < 200 but "
         "the capot counts 250 in the check. A = 20 + 25 = 45; D = 0.",
         rules={"declarations": "auto"}, prefer=LEAD_CAP),
    Case("a28_10H_reverse_capot", ["QC QD QH QS 7C 9D JS TC", "JH 9H AH TH KH 8H 7H AC",
                                   "8C JC 7D TD KD 7S 9S KS", "9C KC 8D JD AD 8S TS AS"],
         ["bid 10H"] + P4, _res(0, "bid 10H", "none", False, [0, 8], [0, 162], [0, 10], [0, 45]),
         "A-28 ('Обратный капут ... Это всегда «не сыграли», даже если комбинаций хватало. Ставка 10 — "
         "соперникам 10 + 25 = 35'). Seat 0 (bidder) holds the carre of queens (100 = 10 tp), which beats "
         "seat 1's trump 100 (7H-JH) because any carre beats a sequence; V_A = 0 + 100 >= 100 'would "
         "suffice', but seat 1 takes all 8 tricks (AC, then seven trumps from JH down): failed. "
         "D = 10 + 25 + K_A 10 + K_D 0 = 45; A = 0; the combinations entry of D holds both pairs' 10.",
         rules={"declarations": "auto"}, prefer={1: "AC JH 9H AH TH KH 8H 7H"}),
    Case("a29_kaput_H_terz", CAP_TERZ2, ["pass", "pass", "bid kaput H", "pass", "pass", "pass", "pass"],
         _res(2, "bid kaput H", "none", True, [8, 0], [162, 0], [2, 0], [52, 0]),
         "A-29 ('«Капут» с терзом — 25 + 25 + 2 = 52'). Seat 2 bids kaput in hearts; partner seat 0 takes "
         "all 8 tricks; seat 2's plain terz 7S-8S-9S is the only combination. A = 25 + 25 + 2 = 52.",
         rules={"declarations": "auto"}, prefer=LEAD_CAP),
    Case("a30_kaput_plus2_made", CAP_TERZ2, ["pass", "pass", "bid kaput+2 H", "pass", "pass", "pass", "pass"],
         _res(2, "bid kaput+2 H", "none", True, [8, 0], [162, 0], [2, 0], [54, 0]),
         "A-30 ('«капут + 2» с терзом — 27 + 25 + 2 = 54'). kaput+2 is legal for seat 2 because its own "
         "terz is worth 2 (Ach); capot and the bidder's own terz counted: made. A = 27 + 25 + 2 = 54.",
         rules={"declarations": "auto"}, prefer=LEAD_CAP),
    Case("a31_kaput_failed_early_stop", CAP, ["pass", "bid kaput H", "pass", "pass", "pass", "pass"],
         _res(1, "bid kaput H", "none", False, [2, 0], [54, 0], [0, 0], [41, 0]),
         "A-31 ('Капут не сделали: соперникам 25 + 16 = 41'). Seat 1 bids kaput; seat 0 wins trick 1 "
         "with JH (JH 8H 7H QH = 23), so the deal stops after trick 2, which is still played (9H TH KH QC "
         "= 14+10+4+3 = 31; 'Случилось на первой взятке — играют ещё вторую'). Only 54 raw are "
         "counted. D = 25 + 16 = 41; A = 0.", rules={"declarations": "auto"}, prefer=LEAD_CAP),
    Case("a32_kaput_plus2_failed_terz_shown", CAP_TERZ1, ["pass", "bid kaput+2 H"] + P4,
         _res(1, "bid kaput+2 H", "none", False, [2, 0], [54, 0], [2, 0], [45, 0]),
         "A-32 ('«Капут + 2» не сделали — 27 + 16 = 43, и ещё 2, если показали терз'). Seat 1's own terz "
         "7S-8S-9S makes kaput+2 legal; seat 0 wins trick 1 with JH; stop after trick 2. Automatic "
         "declarations show the terz: D = 27 + 16 + 2 = 45; A = 0.",
         rules={"declarations": "auto"}, prefer=LEAD_CAP),
    Case("a33_10H_contra_made", ["9C JC 9D TD 7H JH KS AS", "TC KC QH AH 7S 8S 9S JS",
                                 "7C QC AC 7D JD QD 9H TH", "8C 8D KD AD 8H KH TS QS"],
         ["bid 10H", "contra", "pass", "pass", "pass"],
         _res(0, "bid 10H", "contra", True, [4, 4], [103, 59], [2, 0], [38, 0]),
         "A-33 ('«10» с контрой, сыграли, терз у соперников. Паре со ставкой 10 × 2 + 16 + 2 = 38'). "
         "Defender seat 1 holds the only combination, the terz 7S-8S-9S (no blot: KH and QH are split). "
         "c_A = 103 >= 100: made; under contra the winner takes all combinations. A = 20 + 16 + 2 = 38; "
         "D = 0. Three passes after the contra end the auction (RES-3).", rules={"declarations": "auto"}),
    Case("a34_10H_recontra_made", ["9C JC 9D TD 7H JH KS AS", "TC KC QH AH 7S 8S 9S JS",
                                   "7C QC AC 7D JD QD 9H TH", "8C 8D KD AD 8H KH TS QS"],
         ["bid 10H", "contra", "recontra"],
         _res(0, "bid 10H", "recontra", True, [4, 4], [103, 59], [2, 0], [58, 0]),
         "A-34 ('С реконтрой — 10 × 4 + 16 + 2 = 58'). Same cards and play as a33; the recontra ends "
         "the auction at once ('после неё торговля сразу кончается'). A = 40 + 16 + 2 = 58; D = 0.",
         rules={"declarations": "auto"}),
    Case("a35_10H_contra_capot", CAP, ["bid 10H", "contra", "pass", "pass", "pass"],
         _res(0, "bid 10H", "contra", True, [8, 0], [162, 0], [0, 0], [45, 0]),
         "A-35 ('«10» с контрой, все 8 взяток — 10 × 2 + 25 = 45'). A = 20 + 25 = 45; D = 0.",
         rules={"declarations": "auto"}, prefer=LEAD_CAP),
    Case("a36_kaput_contra_made", CAP, ["bid kaput H", "contra", "pass", "pass", "pass"],
         _res(0, "bid kaput H", "contra", True, [8, 0], [162, 0], [0, 0], [75, 0]),
         "A-36 ('Контру можно сказать и на капут: сделали — 25 × 2 + 25 = 75'). A = 50 + 25 = 75.",
         rules={"declarations": "auto"}, prefer=LEAD_CAP),
    Case("a37_10NT_made", ["JC AC 7D 9D TD QH JS AS", "9C 8D JD KD 9H JH AH 7S",
                           "7C 8C TC KC AD 8S QS KS", "QC QD 7H 8H TH KH 9S TS"],
         ["bid 10NT"] + P4, _res(0, "bid 10NT", "none", True, [4, 4], [110, 52], [0, 0], [31, 5]),
         "A-37 ('Сыграли «10 A», карты дали 11 — 10 × 2 + 11 = 31'). NT multiplier 2, aces 19. No "
         "combinations. A = 20 + r(110)=11 = 31; D = r(52) = 5.", rules={"declarations": "auto"}),
    Case("a38_10NT_failed", ["7C TC 7D 8D 7H JH 9S AS", "KC 9D JD KD AD TH AH TS",
                             "9C AC TD QD 8H 9H KH JS", "8C JC QC QH 7S 8S QS KS"],
         ["bid 10NT"] + P4, _res(0, "bid 10NT", "none", False, [3, 5], [91, 71], [0, 0], [0, 36]),
         "A-38 ('Не сыграли — соперникам 10 × 2 + 16 = 36 и комбинации обеих пар'). c_A = 91 < 100. "
         "D = 20 + 16 = 36; A = 0.", rules={"declarations": "auto"}),
    Case("a39_10NT_capot", NTCAP, ["bid 10NT"] + P4, _res(0, "bid 10NT", "none", True, [8, 0], [162, 0], [0, 0],
                                                           [45, 0]),
         "A-39 ('Все 8 взяток — 10 × 2 + 25 = 45'). Seat 0 holds eight NT winners and no carre "
         "(three aces, three tens). A = 20 + 25 = 45.", rules={"declarations": "auto"}),
    Case("a40_kaput_NT_made", NTCAP, ["bid kaput NT"] + P4,
         _res(0, "bid kaput NT", "none", True, [8, 0], [162, 0], [0, 0], [75, 0]),
         "A-40 ('Капут без козыря сделали — 25 × 2 + 25 = 75'). A = 50 + 25 = 75.",
         rules={"declarations": "auto"}),
    Case("a41_10NT_contra_made", ["JC AC 7D 9D TD QH JS AS", "9C 8D JD KD 9H JH AH 7S",
                                  "7C 8C TC KC AD 8S QS KS", "QC QD 7H 8H TH KH 9S TS"],
         ["bid 10NT", "contra", "pass", "pass", "pass"],
         _res(0, "bid 10NT", "contra", True, [4, 4], [110, 52], [0, 0], [46, 0]),
         "A-41 ('Контра, сыграли — 10 × 3 + 16 + все комбинации, соперникам 0'). Same cards as a37. "
         "A = 30 + 16 = 46; D = 0.", rules={"declarations": "auto"}),
    Case("a44_11H_made", ["KC 8D 9D TD AD QH KH JS", "7C 8C 9C TC 9H AH 8S KS",
                          "JC QC 7D JD KD 7H JH QS", "AC QD 8H TH 7S 9S TS AS"],
         ["bid 11H"] + P4, _res(0, "bid 11H", "none", True, [4, 4], [106, 56], [2, 5], [24, 11]),
         "A-44 (rules.md, DERIVED). Seat 0: terz 8D-9D-TD and blot KH+QH; seat 1: the '50' 7C-TC, which "
         "beats the terz, so only the blot counts for A. V_A = 106 + 20 = 126 >= 110: made. "
         "A = 11 + r(106)=11 + 2 = 24; D = r(56)=6 + 5 = 11.", rules={"declarations": "auto"}),
    Case("a44_11H_failed", ["AC 8D 9D TD TH QH KH 8S", "7C 8C 9C TC KD 7S TS JS",
                            "KC 7D QD AD 7H 8H KS AS", "JC QC JD 9H JH AH 9S QS"],
         ["bid 11H"] + P4, _res(0, "bid 11H", "none", False, [3, 5], [50, 112], [0, 7], [0, 34]),
         "A-44 failed branch: same combinations (A: terz + blot, D: '50'); V_A = 50 + 20 = 70 < 110. "
         "D = 11 + 16 + 5 + 2 = 34 (the bidders' blot is handed over, RES-15); A = 0.",
         rules={"declarations": "auto"}),
    Case("passed_out", CAP, P4, _res(None, None, None, None, [0, 0], [0, 0], [0, 0], [0, 0]),
         "Four passes with no bid: 'Ставку не сказал никто — карты пересдаёт следующий игрок'. "
         "A passed-out record: contract null, made null, score 0:0 (docs/deal-record.md)."),
]

# --- manual declarations (preset bazar's default) and bazar-app ---------------------------
A21 = ["7C QS KS AS TD JD 7H 8H", "8C 9C TC AC KD TH QH 9S", "JC 7D 8D 9D AD 9H 7S JS",
       "QC KC QD 8S TS JH KH AH"]
KP2_HIDDEN = ["JH TH 9H AH AC TC KC AD", "TD 8H 7C 9C 7D 7S 8S 9S", "KH 7H 9D TS QS 8C JC JD",
              "QH QC 8D QD KD JS KS AS"]
CARRES = ["JC JD JH JS 7C 8D KH AS", "9C 9D 9H 9S 8C KD AH 7S", "TC QC 7D TD 7H 8H TS QS",
          "KC AC QD AD TH QH 8S KS"]
NINES = ["JC JD JH TS 7C 8D KH AS", "9C 9D 9H 9S 8C KD AH 7S", "TC QC 7D TD 7H 8H JS QS",
         "KC AC QD AD TH QH 8S KS"]
CLUBS8 = ["7C 8C 9C TC JC QC KC AC", "7D TD KD 9H QH 8S JS AS", "8D JD AD 7H TH KH 9S QS",
          "9D QD 8H JH AH 7S TS KS"]
NONE3 = {3: ["announce none"]}

MANUAL_CASES: list[Case] = [
    Case("m_a21_pass_on", A21, ["bid 8H"] + P4,
         _res(0, "bid 8H", "none", True, [5, 3], [101, 61], [0, 2], [18, 8]),
         "A-21 ('у вас терз до A, у партнёра до 9, у соперника после вас до 10. Партнёр показал, вы нет, "
         "соперник показал: вашей паре 0, соперникам 20'). Seat 0 terz Q-K-A S (leader), seat 1 terz "
         "8-9-T C, seat 2 terz 7-8-9 D; heights: seat 1 vs seat 0 (reveal), seat 2 vs seat 1 (reveal). "
         "Trick 2 (led by seat 2, winner of trick 1): seat 2 show, seat 0 noshow, seat 1 shows by pass-on "
         "(its terz to 10 beats the shown terz to 9). Best shown = seat 1: team 1 counts 2, team 0 none. "
         "c_A = 101 >= 80 made: A = 8 + r(101)=10 + 0 = 18; D = r(61)=6 + 2 = 8.",
         decisions={0: ["announce terz", "reveal", "noshow"], 1: ["announce terz", "height", "reveal", "show"],
                    2: ["announce terz", "height", "show"], 3: ["announce none"]},
         prefer={0: "TD", 1: "KD", 2: "AD", 3: "QD"}),
    Case("m_kaput_plus2_hidden_early_stop", KP2_HIDDEN, ["pass", "bid kaput+2 H"] + P4,
         _res(1, "bid kaput+2 H", "none", False, [2, 0], [41, 0], [0, 0], [43, 0]),
         "A-32 manual ('«Капут + 2» не сделали — 27 + 16 = 43, и ещё 2, если показали терз'). Seat 1 bids "
         "kaput+2 with its own terz 7-8-9 S. Trick 1: seat 0 announces terz, seat 1 terz + height, seat 0 "
         "concedes; seat 0 wins trick 1 (JH), so the deal stops after trick 2 (rules.md 2.3). Trick 2: "
         "seat 1 (leader) noshow; the pass-on right of seat 0 (announced, conceded) falls due at trick 3, "
         "which is never played, so it lapses (2.4.3 item 10). Nothing shown: D = 27 + 16 = 43; A = 0; "
         "41 raw counted (T1 23 + T2 18).",
         decisions={0: ["announce terz", "concede"], 1: ["announce terz", "height", "noshow"]} | {2: ["announce none"]}
         | NONE3, prefer={0: "JH AH"}),
    Case("m_carre_jacks_over_nines", CARRES, ["bid 10H"] + P4,
         _res(0, "bid 10H", "none", True, [4, 4], [98, 64], [20, 0], [40, 6]),
         "Carre of jacks (200) vs carre of nines (140), trump game: 'Каре с козырем, от младшего к "
         "старшему: дамы, короли, десятки, тузы, девятки, валеты'. Seat 1 announces the same class after "
         "seat 0, states its height, seat 0 reveals; seat 0 leads and shows at trick 2. K_A = 20; "
         "V_A = 98 + 200 >= 100 made: A = 10 + r(98)=10 + 20 = 40; D = r(64) = 6.",
         decisions={0: ["announce carre", "reveal", "show"], 1: ["announce carre", "height"], 2: ["announce none"]}
         | NONE3),
    Case("m_8run_announce_100", CLUBS8, ["bid 10NT"] + P4,
         _res(0, "bid 10NT", "none", True, [8, 0], [162, 0], [12, 0], [57, 0]),
         "Run of 8 split by the player ('8 — две «50» или терз и «100»'): announced '100' it shows "
         "100 + terz = 120 (rules.md 2.4.3 item 2). 10 NT with all 8 tricks: A = 10 x 2 + 25 + 12 = 57.",
         decisions={0: ["announce 100", "show"]}),
    Case("m_8run_announce_terz", CLUBS8, ["bid 10NT"] + P4,
         _res(0, "bid 10NT", "none", True, [8, 0], [162, 0], [4, 0], [49, 0]),
         "Same 8-run announced as 'terz' ('Меньше, чем есть, — можно'): the show is two terzes = 4 tp "
         "(rules.md 2.4.3 item 2). A = 20 + 25 + 4 = 49.",
         decisions={0: ["announce terz", "show"]}),
    Case("app_kaput_recontra_capot", CAP, ["bid kaput H", "contra", "recontra"],
         _res(0, "bid kaput H", "recontra", True, [8, 0], [162, 0], [0, 0], [125, 0]),
         "bazar-app (rules text 004): kaput is the top bid, contra and recontra still possible (rules.md 2.8). "
         "Made under recontra with all 8 tricks, no combinations: A = 25 x 4 + 25 = 125; D = 0.",
         preset="bazar-app",
         prefer=LEAD_CAP),
    Case("app_8run_flat_100", CLUBS8, ["bid 10NT"] + P4,
         _res(0, "bid 10NT", "none", True, [8, 0], [162, 0], [10, 0], [55, 0]),
         "bazar-app: long_run = 100, a run of 8 is one '100' (RES-11; compare m_8run_announce_100). "
         "A = 20 + 25 + 10 = 55.", preset="bazar-app"),
    Case("app_carre_jacks_over_nines", CARRES, ["bid 10H"] + P4,
         _res(0, "bid 10H", "none", True, [4, 4], [98, 64], [20, 0], [40, 6]),
         "Automatic declarations: same cards and result as m_carre_jacks_over_nines. Jacks (200) beat "
         "nines (140); A = 10 + 10 + 20 = 40; D = 6.", preset="bazar-app"),
    Case("app_carre_nines_counts", NINES, ["bid 8H"] + P4,
         _res(0, "bid 8H", "none", True, [4, 4], [98, 64], [0, 14], [18, 20]),
         "Carre of nines = 140 ('девятки 140') and nothing else in the deal: it counts for the defenders. "
         "c_A = 98 >= 80 made: A = 8 + r(98)=10 = 18; D = r(64)=6 + 14 = 20.", preset="bazar-app"),
    Case("app_10S_contra_failed", ["8C 9C JC 9D QH 9S TS AS", "KC 8D QD KD 8H 9H KH 8S",
                                   "7C QC AC TD AD 7H TH QS", "TC 7D JD JH AH 7S JS KS"],
         ["bid 10S", "contra", "pass", "pass", "pass"],
         _res(0, "bid 10S", "contra", False, [3, 5], [80, 82], [0, 0], [0, 36]),
         "bazar-app, contra on a failed 10S (cards as a23): 'Не сыграли — то же соперникам': "
         "D = 10 x 2 + 16 = 36; A = 0.", preset="bazar-app"),
]
CASES += MANUAL_CASES


def _decide(state, lay, case: Case, used: dict) -> int:
    me = current_seat(state)
    legal = legal_actions(state)
    if state.phase == Phase.PLAY and state.pending:
        queue = case.decisions.get(me, [])
        k = used.get(me, 0)
        if k < len(queue):
            used[me] = k + 1
            a = lay.parse(queue[k])
            if a not in legal:
                raise SystemExit(f"{case.name}: decision {queue[k]!r} of seat {me} is not legal: "
                                 f"{[lay.describe(x) for x in legal]}")
            return a
        names = [lay.describe(a) for a in legal]
        for pref in ("announce none", "height", "reveal", "show"):
            if pref in names:
                return lay.parse(pref)
        return legal[0]
    pref = case.prefer.get(me)
    if pref:
        for c in parse_cards(pref):
            if lay.play_id(c) in legal:
                return lay.play_id(c)
    return legal[0]


def play_case(case: Case):
    """The final state and the action strings of a case."""
    cfg = make_rules(case.preset, **case.rules)
    lay = layout_for(cfg)
    state = new_deal(cfg, case.dealer, [mask_of(parse_cards(h)) for h in case.hands])
    for a in case.auction:
        state = apply_action(state, lay.parse(a))
    used: dict = {}
    while not is_terminal(state):
        state = apply_action(state, _decide(state, lay, case, used))
    return state, [lay.describe(a) for a in state.history]


def trick_trace(state) -> tuple[list[str], list[int], list[int]]:
    """Independent trick-by-trick trace (tests/oracles/reference.py)."""
    if state.contract is None:
        return [], [0, 0], [0, 0]
    strain = state.contract.strain
    lines, tricks, pts = [], [0, 0], [0, 0]
    plays = state.plays
    n = state.cfg.num_players
    for t in range(len(plays) // n):
        tp = plays[t * n:(t + 1) * n]
        cards = [c for _, c in tp]
        w = tp[inv.ref_winner(cards, strain)][0]
        p = sum(inv.ref_points(c, strain) for c in cards) + (10 if t == state.cfg.num_tricks - 1 else 0)
        tricks[w % 2] += 1
        pts[w % 2] += p
        lines.append(f"T{t + 1}: " + " ".join(f"s{s}:{card_str(c)}" for s, c in tp) + f" -> s{w} +{p}")
    return lines, tricks, pts


def build_record(case: Case) -> tuple[dict, list[str]]:
    state, actions = play_case(case)
    lay = layout_for(state.cfg)
    got = deal_result(state).to_json(lay.describe)
    lines, tricks, pts = trick_trace(state)
    problems = []
    if got != case.expected:
        problems.append(f"engine {got} != hand result {case.expected}")
    if [tricks, pts] != [case.expected["tricks"], case.expected["card_points"]] and state.contract:
        problems.append(f"reference trace tricks {tricks} points {pts} != hand result")
    rec = {
        "format": "blot-record/1",
        "preset": case.preset,
        "rules": case.rules,
        "dealer": case.dealer,
        "hands": case.hands,
        "stock": "",
        "actions": actions,
        "result": case.expected,
        "note": case.note,
        "trace": lines,
    }
    return rec, problems


def dump_record(rec: dict) -> str:
    """One top-level field per line (compact values): easy to diff and to read."""
    body = ",\n".join(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in rec.items())
    return "{\n" + body + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare only, write nothing")
    args = ap.parse_args(argv)
    bad = 0
    for case in CASES:
        rec, problems = build_record(case)
        for p in problems:
            print(f"{case.name}: {p}", file=sys.stderr)
        bad += bool(problems)
        path = HERE / f"{case.name}.json"
        text = dump_record(rec)
        if args.check:
            if not path.exists() or json.loads(path.read_text(encoding="utf-8")) != rec:
                print(f"{path.name}: out of date", file=sys.stderr)
                bad += 1
        elif not problems:
            path.write_text(text, encoding="utf-8")
    print(f"{len(CASES)} cases, {bad} with problems", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
