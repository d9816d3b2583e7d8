"""Conformance records of ../shared/conformance/*.jsonl (an independent implementation of
rules.md): every record whose preset exists here must replay with its exact result.

shared/ is found as ``Path(__file__).parents[2] / "shared"`` or ``$BLOT_SHARED``; the tests
skip when it is absent. Records of presets not (yet) in ``PRESETS`` are skipped with a reason.
"""

from __future__ import annotations

import pytest
from conftest import shared_dir

from blot_env.record import compare_result, load_records, replay_record
from blot_env.rules_config import PRESETS

SHARED = shared_dir()
FILES = sorted((SHARED / "conformance").glob("*.jsonl")) if SHARED else []


def _cases():
    for path in FILES:
        for i, rec in enumerate(load_records(path)):
            yield pytest.param(rec, id=f"{path.stem}-{i}")


CASES = list(_cases())


@pytest.mark.skipif(SHARED is None, reason="shared/ not found (set BLOT_SHARED)")
def test_conformance_files_present():
    names = {p.name for p in FILES}
    assert {"bazar_manual.jsonl", "bazar_auto.jsonl", "bazar_app.jsonl"} <= names


@pytest.mark.skipif(SHARED is None, reason="shared/ not found (set BLOT_SHARED)")
@pytest.mark.parametrize("rec", CASES)
def test_conformance_record(rec):
    if rec.get("preset") not in PRESETS:
        pytest.skip(f"preset {rec.get('preset')!r} is not implemented yet")
    _, got = replay_record(rec)
    assert got is not None, "the record's deal is not finished"
    assert compare_result(rec["result"], got) == []


@pytest.mark.skipif(SHARED is None, reason="shared/ not found (set BLOT_SHARED)")
def test_bazar_conformance_count():
    bazar = [c for c in CASES if c.values[0]["preset"] in ("bazar", "bazar-app")]
    assert len(bazar) == 120
