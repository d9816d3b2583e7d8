"""Property-based fuzzing of every user input, CI-sized (docs/reliability.md).

Each target of tests/oracles/fuzz.py (deal records and record files, rules configs and knob
overrides, training configs, action values through the AEC env, the Gymnasium env and the
batched engine, deal suites, save files of board records) runs under the Hypothesis profile
``fuzz-ci``: a few dozen derandomized examples each, so that the whole file takes seconds.
``BLOT_FUZZ_EXAMPLES=N`` raises the count; the long runs are ``scripts/fuzz.py --cases N``
(resumable), whose harness is tested here too.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import load_script
from hypothesis import HealthCheck, settings
from oracles.fuzz import TARGETS, FuzzFailure, Target, outcome

settings.register_profile(
    "fuzz-ci", parent=settings.get_profile("blot"), max_examples=int(os.environ.get("BLOT_FUZZ_EXAMPLES", "30")),
    derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                           HealthCheck.large_base_example],
)
CI = settings(settings.get_profile("fuzz-ci"))


@pytest.mark.parametrize("name", list(TARGETS))
def test_fuzz_target(name):
    """The target's property holds on the profile's examples (a refused input raises one of the
    target's errors with a message; an accepted one behaves)."""
    TARGETS[name].test(CI)()


def test_targets_cover_every_input_of_the_brief():
    assert set(TARGETS) == {"record", "record_file", "rules", "train_config", "aec", "gym", "batched", "suite",
                            "save_file"}
    assert all(t.doc for t in TARGETS.values())


def test_outcome_lets_unexpected_errors_through_and_refuses_empty_messages():
    assert outcome(lambda: 3, (ValueError,), "x") == ("ok", 3)
    assert outcome(lambda: int("z"), (ValueError,), "x")[:2] == ("error", "ValueError")
    with pytest.raises(KeyError):
        outcome(lambda: {}["k"], (ValueError,), "x")
    with pytest.raises(FuzzFailure, match="without a message"):
        outcome(lambda: (_ for _ in ()).throw(ValueError()), (ValueError,), "x")


# --------------------------------------------------------------------------- scripts/fuzz.py


@pytest.fixture
def fuzz_script():
    return load_script("fuzz")


def test_long_run_counts_cases_per_target_and_resumes(fuzz_script, tmp_path, capsys):
    state = tmp_path / "state.json"
    args = ["--targets", "rules,suite", "--chunk", "4", "--state", str(state), "--no-progress"]
    assert fuzz_script.main(args + ["--cases", "10"]) == 0
    saved = json.loads(state.read_text(encoding="utf-8"))
    assert {n: t["cases"] for n, t in saved["targets"].items()} == {"rules": 5, "suite": 5}
    assert saved["failures"] == []
    # a larger --cases goes on from the state: 5 more cases per target
    assert fuzz_script.main(args + ["--cases", "20"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(out[-1])
    assert summary["cases"] == 20 and summary["tracebacks"] == 0
    assert summary["targets"]["rules"]["cases"] == 10
    assert any(line.startswith("rules") and "10" in line for line in out)
    # another seed cannot resume this state
    assert fuzz_script.main(args + ["--cases", "30", "--seed", "5"]) == 2


def test_case_bytes_are_fixed_by_seed_target_and_case(fuzz_script):
    a = fuzz_script.case_bytes(0, "record", 7)
    assert a == fuzz_script.case_bytes(0, "record", 7) and len(a) == fuzz_script.BUFFER
    assert a != fuzz_script.case_bytes(0, "record", 8) != fuzz_script.case_bytes(1, "record", 7)
    assert a != fuzz_script.case_bytes(0, "rules", 7)


def _broken(text: str) -> None:
    """A target body with a bug: a KeyError on some inputs."""
    if "a" in text:
        raise KeyError("boom")


def test_long_run_reports_a_traceback_with_its_case_and_replays_it(fuzz_script, tmp_path, monkeypatch, capsys):
    import oracles.fuzz as F
    from hypothesis import strategies as st

    monkeypatch.setitem(F.TARGETS, "rules", Target("rules", _broken, {"text": st.text(alphabet="ab", max_size=6)}))
    state = tmp_path / "state.json"
    rc = fuzz_script.main(["--targets", "rules", "--cases", "40", "--chunk", "10", "--state", str(state),
                           "--no-progress"])
    assert rc == 1
    saved = json.loads(state.read_text(encoding="utf-8"))
    [fail] = saved["failures"]
    assert fail["kind"] == "KeyError" and "test_fuzz.py" in fail["where"] and "boom" in fail["traceback"]
    assert saved["targets"]["rules"]["failures"] == fail["count"] > 0 and saved["targets"]["rules"]["cases"] == 40
    assert "FAIL rules" in capsys.readouterr().out
    assert fuzz_script.main(["--replay", f"rules:{fail['cases'][0]}"]) == 1
    assert "KeyError" in capsys.readouterr().err


def test_a_crashing_case_is_a_failure_and_the_run_goes_on(fuzz_script, tmp_path, monkeypatch):
    """A case that kills its process (a segfault of compiled code would) is reported with its
    number; the cases after it still run."""
    import oracles.fuzz as F
    from hypothesis import strategies as st

    def dies(n: int) -> None:
        if n == 3:
            os._exit(9)

    monkeypatch.setitem(F.TARGETS, "rules", Target("rules", dies, {"n": st.integers(0, 3)}))
    state = fuzz_script.run(30, ["rules"], 0, 10, None, 60.0, 0.0, progress=False)
    crashes = [f for f in state["failures"] if f["kind"] == "Crash"]
    assert crashes and "exit code 9" in crashes[0]["error"]
    assert state["targets"]["rules"]["cases"] == 30


def test_state_file_is_written_whole(fuzz_script, tmp_path):
    path = tmp_path / "s.json"
    fuzz_script.save_state(path, fuzz_script.new_state(0, ["rules"]))
    assert json.loads(path.read_text(encoding="utf-8"))["targets"]["rules"]["cases"] == 0
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]  # no temporary file left
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not a fuzz state file"):
        fuzz_script.load_state(path, 0, ["rules"])
