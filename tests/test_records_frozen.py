"""Record compatibility: the frozen records of tests/records_frozen/ (written once by
``make_frozen.py``) replay to their stored results on both engines, cover what every preset
has (auto and manual declarations, contra, kaput, passed out, ...), and a record of another
format version is refused naming the field and the version read (docs/deal-record.md)."""

from __future__ import annotations

import copy
import io
import json
import sys
from pathlib import Path

import pytest
from conftest import REPO

from blot_env.errors import RecordError
from blot_env.record import FORMAT, MATCH_FORMAT, compare_result, load_records, replay_record
from blot_env.replay import CompiledReplay, replay_file
from blot_env.rules_config import KNOBS, PRESETS

FROZEN = REPO / "tests" / "records_frozen"
FILES = sorted(FROZEN.glob("*.jsonl"))
sys.path.insert(0, str(FROZEN))
from make_frozen import CONFIGS, features, possible  # noqa: E402

sys.path.remove(str(FROZEN))


def _deals() -> list[tuple[str, dict]]:
    out = []
    for path in FILES:
        for i, rec in enumerate(load_records(path)):
            if rec["format"] == MATCH_FORMAT:
                out += [(f"{path.name}:{i}:{j}", {"preset": rec["preset"], "rules": rec["rules"]} | d)
                        for j, d in enumerate(rec["deals"])]
            else:
                out.append((f"{path.name}:{i}", rec))
    return out


DEALS = _deals()


def test_every_config_file_is_there():
    assert {p.stem for p in FILES} == {stem for stem, _, _ in CONFIGS} | {"match", "custom_rules"}
    assert {preset for _, preset, _ in CONFIGS} == set(PRESETS)


@pytest.mark.parametrize(("where", "rec"), DEALS, ids=[w for w, _ in DEALS])
def test_frozen_record_replays_to_its_result(where, rec):
    _, result = replay_record(copy.deepcopy(rec))
    assert result is not None, f"{where}: the deal does not finish"
    assert compare_result(rec["result"], result) == []
    assert CompiledReplay().replay(copy.deepcopy(rec)) == rec["result"]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_blot_replay_accepts_every_frozen_file(path, engine):
    out, err = io.StringIO(), io.StringIO()
    count, fails = replay_file(str(path), out, err, engine=engine)
    assert (fails, err.getvalue()) == (0, "")
    assert count == len(out.getvalue().splitlines()) > 0


@pytest.mark.parametrize(("stem", "preset", "overrides"), CONFIGS, ids=[c[0] for c in CONFIGS])
def test_frozen_set_covers_what_the_config_has(stem, preset, overrides):
    from blot_env.rules_config import make_rules

    recs = load_records(FROZEN / f"{stem}.jsonl")
    assert all(r["preset"] == preset for r in recs)
    cfg = make_rules(preset, **overrides)
    assert all(r["rules"]["declarations"] == cfg.declarations for r in recs)
    seen = set().union(*(features(r) for r in recs))
    assert possible(cfg) <= seen
    if cfg.auction in ("bazar", "belote"):
        assert {"passed_out", "contra"} <= seen
    if cfg.kaput_bid != "none":
        assert "kaput" in seen


def test_custom_rules_and_match_records_are_kept():
    custom = load_records(FROZEN / "custom_rules.jsonl")
    assert custom[0]["rules"]["target"] == 301 and custom[0]["rules"]["undertrump"] == "forced"
    assert custom[1]["preset"] not in PRESETS and set(custom[1]["rules"]) == set(KNOBS) - {"preset"}
    [match] = load_records(FROZEN / "match.jsonl")
    assert match["format"] == MATCH_FORMAT and len(match["deals"]) == 3


@pytest.mark.parametrize("fmt", ["blot-record/2", "blot-record/0", "blot-record/1.1", "blot-match/2"])
def test_another_format_version_is_refused_naming_field_and_version(fmt, tmp_path):
    rec = DEALS[0][1]
    bad = dict(rec, format=fmt)
    with pytest.raises(RecordError) as e:
        replay_record(bad)
    msg = str(e.value)
    assert msg.startswith('field "format"') and repr(fmt) in msg and f'"{FORMAT}"' in msg
    # blot-replay: one line naming the file, the record and the field; exit status 1
    path = tmp_path / "newer.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    for engine in ("compiled", "reference"):
        err = io.StringIO()
        assert replay_file(str(path), io.StringIO(), err, engine=engine) == (1, 1)
        assert err.getvalue().count("\n") == 1 and 'record 0: field "format"' in err.getvalue()
        assert FORMAT in err.getvalue()


def test_a_match_record_given_as_a_deal_is_explained():
    [match] = load_records(FROZEN / "match.jsonl")
    with pytest.raises(RecordError, match='"blot-match/1" is a match record'):
        replay_record(match)


def test_record_without_format_is_refused():
    rec = {k: v for k, v in DEALS[0][1].items() if k != "format"}
    with pytest.raises(RecordError, match=f'field "format": missing; .*"{FORMAT}"'):
        replay_record(rec)


def test_frozen_files_are_json_lines_of_plain_records():
    """Plain JSON Lines: one object per line, nothing but record fields (no notes a reader
    of the format would have to skip)."""
    allowed = {"format", "preset", "rules", "dealer", "hands", "stock", "actions", "result"}
    for path in FILES:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        for line in lines:
            rec = json.loads(line)
            if rec["format"] == FORMAT:
                assert set(rec) == allowed, path.name
