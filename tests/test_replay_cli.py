"""``python -m blot_env.replay`` as a user runs it (docs/deal-record.md "Replay command"):
results printed one JSON per record, exit status, and one clear line per bad record, never a
traceback."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from blot_env.actions import layout_for
from blot_env.engine import apply_action, current_seat, legal_actions
from blot_env.record import initial_state, iter_records, replay_record

GOLDEN = REPO / "tests" / "golden"


def base_record() -> dict:
    g = json.loads((GOLDEN / "a22_9H_made_terz_vs_blot.json").read_text(encoding="utf-8"))
    return {k: g[k] for k in ("format", "preset", "rules", "dealer", "hands", "stock", "actions", "result")}


def run_replay(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "blot_env.replay", *map(str, paths)], capture_output=True,
                          text=True, timeout=120, cwd=REPO)


def error_lines(p: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in p.stderr.splitlines() if ln and "records replayed with their results" not in ln]


def write(tmp_path: Path, name: str, obj=None, raw: str | None = None) -> Path:
    path = tmp_path / name
    path.write_text(raw if raw is not None else json.dumps(obj), encoding="utf-8")
    return path


def test_good_record_prints_its_result(tmp_path):
    rec = base_record()
    p = run_replay(write(tmp_path, "good.json", rec))
    assert p.returncode == 0, p.stderr
    assert [json.loads(ln) for ln in p.stdout.splitlines()] == [rec["result"]]
    assert "1 of 1 records" in p.stderr


def test_list_and_jsonl_one_json_per_record(tmp_path):
    rec = base_record()
    other = json.loads((GOLDEN / "a31_kaput_failed_early_stop.json").read_text(encoding="utf-8"))
    lst = write(tmp_path, "two.json", [rec, other])
    jl = write(tmp_path, "two.jsonl", raw=json.dumps(rec) + "\n\n" + json.dumps(other) + "\n")
    p = run_replay(lst, jl)
    assert p.returncode == 0, p.stderr
    out = [json.loads(ln) for ln in p.stdout.splitlines()]
    assert out == [rec["result"], other["result"]] * 2


def _illegal_held_card(rec: dict) -> tuple[int, str, int]:
    """(index, action, seat) of a card that the seat holds but may not play at that point."""
    state = initial_state(rec)
    lay = layout_for(state.cfg)
    for i, a in enumerate(rec["actions"]):
        if a.startswith("play") and state.trick:
            me = current_seat(state)
            legal = set(legal_actions(state))
            for c in range(32):
                if state.hands[me] >> c & 1 and lay.play_id(c) not in legal:
                    return i, lay.describe(lay.play_id(c)), me
        state = apply_action(state, lay.parse(a))
    raise AssertionError("no illegal card found")


def test_illegal_action_one_clear_line(tmp_path):
    rec = base_record()
    i, action, seat = _illegal_held_card(rec)
    rec["actions"][i] = action
    path = write(tmp_path, "illegal.json", rec)
    p = run_replay(path)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    (line,) = error_lines(p)
    assert str(path) in line and f'action {i} "{action}" by seat {seat}' in line
    assert "rules.md 1.3" in line and ("must" in line)  # the reason, with its rule


_MALFORMED = [
    ("unknown_preset", lambda r: r.update(preset="bazaar"), '"preset"'),
    ("unknown_knob", lambda r: r["rules"].update(foo=1), '"rules"'),
    ("bad_knob_value", lambda r: r["rules"].update(declarations="sometimes"), '"rules"'),
    ("duplicated_card", lambda r: r["hands"].__setitem__(1, r["hands"][1].replace("7C", "TC")), '"hands"'),
    ("repeated_in_hand", lambda r: r["hands"].__setitem__(0, r["hands"][0].replace("TC", "9H")), '"hands"'),
    ("missing_card", lambda r: r["hands"].__setitem__(1, " ".join(r["hands"][1].split()[:7])), '"hands"'),
    ("wrong_hand_size", lambda r: (r["hands"].__setitem__(1, r["hands"][1] + " " + r["hands"][0].split()[0]),
                                   r["hands"].__setitem__(0, " ".join(r["hands"][0].split()[1:]))), '"hands"'),
    ("not_a_card", lambda r: r["hands"].__setitem__(2, r["hands"][2].replace("8C", "XX")), '"hands[2]"'),
    ("unknown_action", lambda r: r["actions"].__setitem__(3, "bid 9X"), '"actions"[3]'),
    ("action_not_string", lambda r: r["actions"].__setitem__(0, 7), '"actions"[0]'),
    ("actions_after_end", lambda r: r["actions"].append("play 7C"), "already over"),
    ("bad_dealer", lambda r: r.update(dealer=7), '"dealer"'),
    ("bad_format", lambda r: r.update(format="blot-record/9"), '"format"'),
    ("no_hands", lambda r: r.pop("hands"), '"hands"'),
    ("wrong_result", lambda r: r["result"].update(score=[1, 2]), '"result.score"'),
    ("unfinished", lambda r: r.update(actions=r["actions"][:20]), "not finished"),
    ("bad_knob_type", lambda r: r["rules"].update(target="x"), '"rules"'),
    ("no_format", lambda r: r.pop("format"), '"format"'),
    ("rules_a_list", lambda r: r.update(rules=[]), 'field "rules": expected an object of knob overrides, got list'),
    ("rules_false", lambda r: r.update(rules=False), 'field "rules": expected an object of knob overrides, got bool'),
    ("rules_other_preset", lambda r: r["rules"].update(preset="duel"),
     'field "rules": its "preset" is \'duel\' but the record\'s "preset" is \'bazar\''),
    ("misspelt_result_field", lambda r: r["result"].update(scor=[1, 2]),
     '"result.scor": not a result field; the fields are contract, made,'),
]


@pytest.mark.parametrize(("name", "mutate", "field"), _MALFORMED)
def test_malformed_record_refused(tmp_path, name, mutate, field):
    rec = copy.deepcopy(base_record())
    mutate(rec)
    p = run_replay(write(tmp_path, f"{name}.json", rec))
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    lines = error_lines(p)
    assert len(lines) == 1, p.stderr
    assert f"{name}.json" in lines[0] and field in lines[0], lines[0]


@pytest.mark.parametrize(("name", "raw"), [("bad_json", '{"format": "blot-record/1", "preset": '), ("empty", "")])
def test_unreadable_file_refused(tmp_path, name, raw):
    path = write(tmp_path, f"{name}.json", raw=raw)
    p = run_replay(path)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    (line,) = error_lines(p)
    assert path.name in line and "JSON" in line
    assert p.stderr.splitlines()[-1] == ("0 of 0 records replayed with their results; 1 file(s) could not be read "
                                         "or held no record")


def test_bad_jsonl_line_is_one_failed_record_and_the_others_replay(tmp_path):
    rec = base_record()
    path = write(tmp_path, "bad.jsonl", raw=json.dumps(rec) + "\n{oops\n" + json.dumps(rec) + "\n")
    p = run_replay(path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    (line,) = error_lines(p)
    assert line.startswith(f"{path}: line 2: not valid JSON")
    assert [json.loads(ln) for ln in p.stdout.splitlines()] == [rec["result"]] * 2
    assert "2 of 3 records" in p.stderr


@pytest.mark.parametrize("name", ["empty.jsonl", "blank.jsonl", "empty_list.json"])
def test_file_without_records_is_an_error(tmp_path, name):
    raw = {"empty.jsonl": "", "blank.jsonl": "\n  \n\n", "empty_list.json": "[]"}[name]
    path = write(tmp_path, name, raw=raw)
    p = run_replay(path)
    assert p.returncode == 1 and "Traceback" not in p.stderr and p.stdout == ""
    (line,) = error_lines(p)
    assert line == f"{path}: no records (an empty file); expected JSON deal records (docs/deal-record.md)"


@pytest.mark.parametrize("name", ["model.pt", "records.jsonl", "records.json"])
def test_binary_file_is_refused_naming_the_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"PK\x03\x04\x14\x00\x08\x00\xa3\xfe\x00\xff" * 50)
    p = run_replay(path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    (line,) = error_lines(p)
    assert line.startswith(f"cannot read {path}: line 1 is not UTF-8 text") or line.startswith(f"{path}: ")
    assert str(path) in line and "binary file" in line


def test_record_without_format_is_refused():
    from blot_env.errors import RecordError
    from blot_env.record import replay_record

    rec = base_record()
    del rec["format"]
    with pytest.raises(RecordError, match=r'field "format": missing; a deal record starts with "format": '
                                          r'"blot-record/1"'):
        replay_record(rec)


def test_help_names_the_console_script():
    p = subprocess.run([sys.executable, "-m", "blot_env.replay", "--help"], capture_output=True, text=True,
                       timeout=60, cwd=REPO)
    assert p.returncode == 0 and p.stdout.startswith("usage: blot-replay ")


def test_jsonl_is_streamed(tmp_path):
    """The records of a .jsonl come one line at a time: the first is out before a bad byte
    further down the file is read."""
    from blot_env.errors import RecordError
    from blot_env.record import iter_records

    rec = base_record()
    path = tmp_path / "long.jsonl"
    path.write_bytes((json.dumps(rec) + "\n").encode() * 3 + b"\xff\xfe\n" + b" " * 100_000)
    it = iter_records(path)
    assert next(it) == ("line 1", rec)
    with pytest.raises(RecordError, match=r"line 4 is not UTF-8 text"):
        list(it)


def test_missing_file_and_non_object_records(tmp_path):
    p = run_replay(tmp_path / "nope.json")
    assert p.returncode != 0 and "Traceback" not in p.stderr and len(error_lines(p)) == 1
    p = run_replay(write(tmp_path, "ints.json", [1, "x"]))
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert len(error_lines(p)) == 2 and all("JSON object" in ln for ln in error_lines(p))


def test_all_golden_records_replay_through_the_cli():
    files = sorted(GOLDEN.glob("*.json"))
    p = run_replay(*files)
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.splitlines()) == len(files)


@pytest.mark.parametrize("deals", [{"a": 1}, "x", None, 3, []])
def test_match_record_whose_deals_is_not_a_list_is_an_error(tmp_path, deals):
    rec = {"format": "blot-match/1", "preset": "bazar", "rules": {}, "totals": None, "winner": None}
    if deals is not None:
        rec["deals"] = deals
    p = run_replay(write(tmp_path, "m.json", rec))
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert len(error_lines(p)) == 1 and '"deals"' in error_lines(p)[0]
    assert "0 of 1 records" in p.stderr


def test_custom_rules_value_record_replays_through_the_cli(tmp_path):
    import numpy as np

    from blot_env.env import raw_env
    from blot_env.rules_config import RulesConfig

    e = raw_env(rules=RulesConfig(preset="mine", declarations="auto"))
    e.reset(seed=3)
    rng = np.random.default_rng(3)
    while not all(e.terminations.values()):
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    p = run_replay(write(tmp_path, "mine.json", e.record()), write(tmp_path, "match.json", e.match_record()))
    assert p.returncode == 0, p.stderr
    assert "2 of 2 records" in p.stderr


def _cases_of_both_engines():
    files = sorted(GOLDEN.glob("*.json")) + sorted((REPO / "tests").glob("golden_*/*.json"))
    files += sorted((REPO / "tests" / "conformance_data").glob("*.jsonl"))
    return [rec for f in files for _, rec in iter_records(f)]


def test_compiled_replay_gives_the_reference_results():
    from blot_env.replay import CompiledReplay

    fast = CompiledReplay()
    recs = _cases_of_both_engines()
    assert len(recs) > 290 and {r["preset"] for r in recs} == {"bazar", "bazar-app", "duel", "duel-app", "open",
                                                                "belote"}
    for rec in recs:
        assert fast.replay(rec) == replay_record(rec)[1] == rec["result"]
    assert fast.compiled == len(recs) and fast.by_reference == 0  # none needed the reference path


@pytest.mark.parametrize("name", [c[0] for c in _MALFORMED] + ["illegal", "ten_spelling"])
def test_both_engines_print_the_same_results_and_messages(tmp_path, name):
    from blot_env.replay import replay_file

    rec = copy.deepcopy(base_record())
    if name == "illegal":
        i, action, _ = _illegal_held_card(rec)
        rec["actions"][i] = action
    elif name == "ten_spelling":  # "10S" is accepted on input: the reference path reads it
        rec["hands"] = [" ".join("10" + c[1] if c[0] == "T" else c for c in h.split()) for h in rec["hands"]]
        assert "10" in "".join(rec["hands"])
    else:
        next(c[1] for c in _MALFORMED if c[0] == name)(rec)
    path = write(tmp_path, f"{name}.jsonl", raw=json.dumps(rec) + "\n" + json.dumps(base_record()) + "\n")
    got = {}
    for engine in ("compiled", "reference"):
        out, err = io.StringIO(), io.StringIO()
        got[engine] = (replay_file(str(path), out, err, engine=engine), out.getvalue(), err.getvalue())
    assert got["compiled"] == got["reference"]
    (n, fails), _, err = got["compiled"]
    assert n == 2 and fails == (0 if name == "ten_spelling" else 1)


def test_rules_too_big_for_a_compiled_row_replay_on_the_reference():
    from blot_env.errors import RecordError
    from blot_env.replay import CompiledReplay

    rec = copy.deepcopy(base_record())
    rec["rules"]["auction_end_passes"] = 8  # an auction that may outgrow a compiled row
    fast = CompiledReplay()

    def outcome(replay):
        try:
            return "ok", replay(rec)
        except RecordError as e:
            return "error", str(e)

    assert outcome(fast.replay) == outcome(lambda r: replay_record(r)[1])
    assert fast.by_reference == 1 and fast.compiled == 0
