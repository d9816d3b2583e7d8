"""``blot-view`` without a browser (tests/test_view_browser.py drives the page with Chromium): bad
options and unreadable or malformed records give one clear message naming the file, the
record and the field, never a traceback."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("starlette", reason="blot-view needs starlette and uvicorn (the view extra)")
pytest.importorskip("uvicorn", reason="blot-view needs starlette and uvicorn (the view extra)")

from conftest import REPO

from agents.view.cli import main
from agents.view.server import create_app
from blot_env.errors import RecordError

GOOD = REPO / "tests" / "golden" / "a22_9H_made_terz_vs_blot.json"


def _record() -> dict:
    return json.loads(GOOD.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name, text, needle", [
    ("bad.json", "not json", "bad.json: not valid JSON"),
    ("three_hands.json", None, 'three_hands.json: field "hands": expected a list of 4 card strings'),
    ("match.json", None, 'match.json deal 1: field "dealer": expected a seat 0..3, got 9'),
])
def test_unreadable_or_malformed_records_name_the_file(tmp_path, capsys, name, text, needle):
    path = tmp_path / name
    if text is None:
        rec = _record()
        if name == "three_hands.json":
            rec["hands"] = rec["hands"][:3]
        else:
            rec = {"format": "blot-match/1", "preset": "bazar", "rules": rec["rules"], "deals": [rec | {"dealer": 9}]}
        text = json.dumps(rec)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecordError) as ei:
        create_app([path])
    assert needle in str(ei.value)
    assert main([str(path), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_a_port_outside_0_to_65535_is_refused(capsys, port):
    with pytest.raises(SystemExit) as e:
        main(["--port", port])
    assert e.value.code == 2
    assert "argument --port: expected a port number 0..65535, got" in capsys.readouterr().err


def test_a_save_dir_that_is_a_file_is_refused_before_serving(tmp_path, capsys):
    f = tmp_path / "records.json"
    f.write_text("{}")
    assert main(["--save-dir", str(f), "--port", "0"]) == 2
    assert f"--save-dir {f}: not a folder" in capsys.readouterr().err


def test_a_custom_rules_record_is_shown(tmp_path):
    """A record whose preset is a custom rules value (it lists every knob) replays in blot-replay;
    the page's deal request used to answer 'unknown preset' for it."""
    from starlette.requests import Request

    from blot_env.env import raw_env
    from blot_env.rules_config import RulesConfig

    e = raw_env(rules=RulesConfig(preset="mine", declarations="auto"))
    e.reset(seed=3)
    rng = np.random.default_rng(3)
    while not all(e.terminations.values()):
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(e.record()), encoding="utf-8")
    app = create_app([path])
    route = next(r for r in app.routes if getattr(r, "path", "") == "/api/deals/{id:int}")
    resp = route.endpoint(Request({"type": "http", "method": "GET", "path_params": {"id": 0}, "query_string": b"",
                                   "headers": []}))
    body = json.loads(resp.body)
    assert resp.status_code == 200, body
    assert body["record"]["preset"] == "mine" and len(body["frames"]) == len(e.record()["actions"]) + 1
