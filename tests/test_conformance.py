"""Conformance records of tests/conformance_data/*.jsonl (written by an independent
implementation of docs/rules.md, see its README): every record replays with its exact result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from blot_env.record import compare_result, load_records, replay_record
from blot_env.rules_config import PRESETS

DATA = Path(__file__).resolve().parent / "conformance_data"
FILES = sorted(DATA.glob("*.jsonl"))
EXPECTED = {"bazar_manual.jsonl": "bazar", "bazar_auto.jsonl": "bazar", "bazar_app.jsonl": "bazar-app",
            "duel.jsonl": "duel", "duel_app.jsonl": "duel-app", "open.jsonl": "open"}


def _cases():
    for path in FILES:
        for i, rec in enumerate(load_records(path)):
            yield pytest.param(rec, id=f"{path.stem}-{i}")


CASES = list(_cases())


def test_conformance_files_present():
    assert {p.name for p in FILES} == set(EXPECTED)
    for p in FILES:
        recs = load_records(p)
        assert len(recs) == 40 and {r["preset"] for r in recs} == {EXPECTED[p.name]}
    assert len(CASES) == 240


@pytest.mark.parametrize("rec", CASES)
def test_conformance_record(rec):
    assert rec["preset"] in PRESETS
    _, got = replay_record(rec)
    assert got is not None, "the record's deal is not finished"
    assert compare_result(rec["result"], got) == []
