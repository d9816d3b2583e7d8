"""Golden deal records (tests/golden/*.json): hand-checked results replayed through the engine.

Every record carries a ``note`` with the hand check (rules text 000 passage and the arithmetic of
rules.md 2.5) and a ``trace`` of its tricks from the independent reference code in
tests/oracles/reference.py. tests/golden/make_golden.py writes them from its case table.

Every golden record of the project (tests/golden, tests/golden_2p, tests/golden_belote) is
also replayed through both deal engines (blot_env/deal.py: the reference engine and the
compiled row) in lockstep: the same seat to act and the same legal mask before each action,
and the recorded result from both.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from blot_env.batched.deal_row import DealRow, lay_cards
from blot_env.deal import ReferenceDeal
from blot_env.record import compare_result, initial_state, load_records, parse_actions, replay_record

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = sorted(GOLDEN.glob("*.json"))
ALL_GOLDEN = sorted(p for d in ("golden", "golden_2p", "golden_belote")
                    for p in (GOLDEN.parent / d).glob("*.json"))


def _make_golden():
    spec = importlib.util.spec_from_file_location("make_golden", GOLDEN / "make_golden.py")
    mod = sys.modules.get("make_golden") or importlib.util.module_from_spec(spec)
    if "make_golden" not in sys.modules:
        sys.modules["make_golden"] = mod
        spec.loader.exec_module(mod)
    return mod


def test_enough_golden_records():
    assert len(FILES) >= 20
    recs = [json.loads(p.read_text(encoding="utf-8")) for p in FILES]
    presets = {(r["preset"], (r.get("rules") or {}).get("declarations", "preset default")) for r in recs}
    assert ("bazar", "auto") in presets
    assert ("bazar", "preset default") in presets  # manual declarations
    assert ("bazar-app", "preset default") in presets


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_record_replays(path):
    (rec,) = load_records(path)
    assert rec["format"] == "blot-record/1"
    assert rec.get("note"), "every golden record explains its hand check"
    _, got = replay_record(rec)
    assert got is not None, "the deal must be finished"
    assert compare_result(rec["result"], got) == []
    assert got == rec["result"]


def test_golden_records_up_to_date():
    """The files are exactly what the hand-checked case table produces."""
    mg = _make_golden()
    names = {c.name for c in mg.CASES}
    assert names == {p.stem for p in FILES}
    for case in mg.CASES:
        rec, problems = mg.build_record(case)
        assert problems == [], case.name
        assert json.loads((GOLDEN / f"{case.name}.json").read_text(encoding="utf-8")) == rec


def test_golden_coverage():
    """Contra, recontra, NT, kaput, kaput+N, capot both ways, passed out, every combination class."""
    recs = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in FILES}
    res = [r["result"] for r in recs.values()]
    doubles = {r["contract"]["double"] for r in res if r["contract"]}
    assert {"none", "contra", "recontra"} <= doubles
    bids = [r["contract"]["bid"] for r in res if r["contract"]]
    assert any(b.endswith("NT") for b in bids)
    assert any(b.startswith("bid kaput ") for b in bids)
    assert any(b.startswith("bid kaput+") for b in bids)
    assert any(r["contract"] is None for r in res)
    assert any(r["tricks"][r["contract"]["seat"] % 2] == 8 for r in res if r["contract"])  # capA
    assert any(r["tricks"][1 - r["contract"]["seat"] % 2] == 8 for r in res if r["contract"])  # capD
    assert any(sum(r["tricks"]) < 8 for r in res if r["contract"])  # early kaput stop
    notes = " ".join(r["note"] for r in recs.values()).lower()
    for word in ("terz", "'50'", "100", "carre of jacks", "nines", "blot"):
        assert word in notes, word


def test_every_golden_folder_is_replayed_through_both_engines():
    folders = {p.parent.name for p in ALL_GOLDEN}
    assert folders == {"golden", "golden_2p", "golden_belote"} and len(ALL_GOLDEN) >= 50


@pytest.mark.parametrize("path", ALL_GOLDEN, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden_record_replays_identically_on_both_engines(path):
    (rec,) = load_records(path)
    state = initial_state(rec)
    cfg = state.cfg
    actions = parse_actions(rec, cfg)
    ref, fast = ReferenceDeal(cfg), DealRow(cfg)
    assert ref.start(state) == fast.start(state)
    for i, a in enumerate(actions):
        seat = ref.seat
        assert fast.seat == seat >= 0, (i, a)
        assert (ref.observe(seat)[1] == fast.observe(seat)[1]).all(), (i, a)
        assert ref.step(a) == fast.step(a)
    assert ref.seat == fast.seat == -1
    describe = ref.layout.describe
    assert ref.result().to_json(describe) == fast.result().to_json(describe) == rec["result"]
    # the compiled replay of the whole record in one call gives the same deal
    again = DealRow(cfg)
    assert again.replay(state.dealer, lay_cards(state.start_hands, state.stock, state.piles),
                        actions) == len(actions)
    assert again.result() == fast.result() and again.state() == ref.state()
