"""Long runs of blot-eval (``--save``, ``--deadline``, ``--summarize``, ``--paired``; agents/eval/saved.py on
the engine of agents/eval/board_pool.py): finished boards are saved, a resumed run skips them, a
record cut short by a kill is dropped while a damaged one is refused, files of the earlier layout
read, and the numbers equal blot-eval's without a save file, board for board.
``scripts/eval_long.py`` is an alias of blot-eval."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import signal
import subprocess
import sys
import time
import types
from dataclasses import replace
from pathlib import Path

import pytest

from agents.baselines.rules_agent import RulesAgent
from agents.eval import board_pool, boards, saved
from agents.eval.arena import evaluate, load_suite
from agents.eval.board_pool import SaveFormatError, load_records, read_records, record_key
from agents.eval.cli import main as cli_main
from agents.registry import make_agent
from blot_env.rules_config import make_rules

ROOT = Path(__file__).resolve().parents[1]
ALIAS = ROOT / "scripts" / "eval_long.py"


def _run(save: Path, n: int, *extra: str, agent: str = "rules", vs: str = "random") -> None:
    assert cli_main(["--agent", agent, "--vs", vs, "--boards", str(n), "--no-progress", "--save", str(save),
                     *extra]) == 0


def test_save_resume_and_summary(tmp_path, capsys):
    save = tmp_path / "runs" / "rules_vs_random.pkl"
    _run(save, 3)
    recs = load_records([save])
    assert sorted(r["index"] for r in recs) == [0, 1, 2]
    assert all(r["split"] == "test" and r["names"] == ("rules", "random") for r in recs)
    # a kill in the middle of a write leaves a partial record at the end: it is ignored, then
    # cut off before the resumed run appends
    whole = save.read_bytes()
    save.write_bytes(whole + pickle.dumps(recs[0])[:40])
    assert len(load_records([save])) == 3
    _run(save, 5)
    recs = load_records([save])
    assert sorted(r["index"] for r in recs) == [0, 1, 2, 3, 4]  # boards 0-2 were not replayed
    assert save.read_bytes()[:len(whole)] == whole
    (row,) = saved.summary(recs)
    want = evaluate("rules", "random", "bazar", load_suite("bazar", "test")[:5], factory=make_agent).metrics
    assert row["boards"] == 5 and row["boards_beyond_prefix"] == 0
    assert row["mean_board_score"] == want["mean_board_score"] and row["ci95"] == want["ci95"]
    assert row["diagnostics"] == want["diagnostics"]
    assert "2 boards finished" in capsys.readouterr().err


def test_a_saved_run_reports_what_blot_eval_reports_without_a_save_file(tmp_path, capsys):
    """``--save`` changes where the boards are kept, not the numbers: the rows equal those of
    the run without a save file (several opponents, on 1 and 2 workers), a rerun plays nothing
    and reports the same, and ``--boards`` below what the file holds reports that many."""
    args = ["--agent", "rules", "--vs", "random,rules", "--split", "dev", "--json", "--no-progress"]
    keys = ("agent", "opponent", "boards", "mean_board_score", "ci95", "board_win_rate", "win_rate_ci95",
            "match_win_rate", "matches", "diagnostics", "by_contract")

    def rows(argv):
        capsys.readouterr()
        assert cli_main(argv) == 0
        out = json.loads(capsys.readouterr().out)
        return [{k: r[k] for k in keys} for r in out["rows"]]

    plain = rows([*args, "--boards", "6"])
    save = tmp_path / "r.pkl"
    assert rows([*args, "--boards", "6", "--workers", "2", "--save", str(save)]) == plain
    assert sorted((r["vs"], r["index"]) for r in load_records([save])) == sorted(
        (vs, i) for vs in ("random", "rules") for i in range(6))
    capsys.readouterr()
    assert cli_main([*args, "--boards", "6", "--save", str(save)]) == 0
    assert "0 boards finished" in capsys.readouterr().err
    assert rows([*args, "--boards", "6", "--save", str(save)]) == plain
    assert rows([*args, "--boards", "4", "--save", str(save)]) == rows([*args, "--boards", "4"])
    capsys.readouterr()
    assert cli_main(["--agent", "rules", "--vs", "random", "--split", "dev", "--boards", "6", "--no-progress",
                     "--save", str(save)]) == 0
    text = capsys.readouterr().out
    assert "mean/deal" in text and "CPU s in the boards" in text


def test_summary_uses_the_prefix_of_consecutive_boards(tmp_path):
    save = tmp_path / "r.pkl"
    _run(save, 2)
    recs = load_records([save])
    gap = dict(recs[1], index=7)  # a board finished beyond a missing one
    (row,) = saved.summary([recs[0], gap])
    assert row["boards"] == 1 and row["boards_finished"] == 2 and row["boards_beyond_prefix"] == 1


def test_summarize_keeps_files_apart(tmp_path, capsys):
    """Two files of the same (agent, vs, preset, split, seed), e.g. two versions of an agent,
    give two rows: one file's boards never stand in for the other's."""
    a, b = tmp_path / "a.pkl", tmp_path / "b.pkl"
    _run(a, 3)
    recs = load_records([a])
    with open(b, "wb") as f:  # a second run that lost every board: 1 point per deal to the opponent
        for r in recs[:2]:
            worse = replace(r["board"], tables=tuple(
                replace(x, result=replace(x.result, score=(0, 1) if x.side == 0 else (1, 0)))
                for x in r["board"].tables))
            pickle.dump(dict(r, board=worse), f)
    capsys.readouterr()
    assert cli_main(["--summarize", str(a), str(b), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["file"], r["boards"]) for r in rows] == [(str(a), 3), (str(b), 2)]
    assert rows[1]["mean_board_score"] == -1.0 and rows[0]["mean_board_score"] > 0
    assert cli_main(["--summarize", str(a)]) == 0
    assert "not in prefix" in capsys.readouterr().out


@pytest.mark.parametrize("sig, group, workers, alias", [
    (signal.SIGINT, True, 2, False), (signal.SIGTERM, False, 2, True), (signal.SIGTERM, True, 2, False),
    (signal.SIGTERM, False, 1, False)])
def test_ctrl_c_stops_the_pool_and_keeps_the_finished_boards(tmp_path, sig, group, workers, alias):
    """SIGINT to the whole process group (what Ctrl-C sends), or SIGTERM to the parent or to the
    group (what a batch scheduler sends at a time limit): the parent stops the pool (or the
    board it plays itself, on one worker), saves what finished and exits; no worker goes on
    playing. One case runs through ``scripts/eval_long.py``, the alias."""
    save = tmp_path / "r.pkl"
    head = [str(ALIAS)] if alias else ["-m", "agents.eval.cli"]
    cmd = [sys.executable, *head, "--agent", "rules", "--vs", "rules", "--boards", "2000", "--workers", str(workers),
           "--save", str(save)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, cwd=ROOT)
    try:
        t0 = time.monotonic()
        while (not save.exists() or save.stat().st_size == 0) and time.monotonic() - t0 < 240:
            time.sleep(0.2)
        assert save.exists() and save.stat().st_size > 0, "no board finished"
        children = _children(proc.pid)
        assert len(children) == (workers if workers > 1 else 0)
        (os.killpg if group else os.kill)(proc.pid, sig)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, out
    assert "(interrupted)" in out and "warning" not in out  # the pool stopped in order
    n = len(load_records([save]))
    assert 1 <= n < 2000
    time.sleep(0.5)
    assert len(load_records([save])) == n  # nothing left running appends boards
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)
    assert not [pid for pid in children if _running(pid)]  # the workers (each in its own group) ended too


def _stat(proc: Path) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (state, parent pid, ...); [] once gone."""
    try:
        return proc.joinpath("stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def _running(pid: int) -> bool:
    fields = _stat(Path("/proc") / str(pid))
    return bool(fields) and fields[0] != "Z"


def _children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (Linux ``/proc``)."""
    return [int(p.name) for p in Path("/proc").glob("[0-9]*")
            if (f := _stat(p)) and int(f[1]) == pid and _running(int(p.name))]


class SlowRules(RulesAgent):
    """``rules`` waiting 20 ms a decision: a board takes about a second."""

    name = "slow"

    def act(self, view, rng):
        time.sleep(0.02)
        return super().act(view, rng)


def test_a_deadline_abandons_the_board_playing_in_this_process():
    """On one worker the boards play in this process; at the deadline the board in flight is
    abandoned (a SIGALRM), as a pool's workers are stopped with theirs, and the caller's
    SIGALRM handler is back afterwards."""
    cfg = make_rules("bazar")
    job = board_pool.BoardJob(cfg, load_suite("bazar", "dev"), agents={"slow": SlowRules()},
                              factory=make_agent)
    before = signal.getsignal(signal.SIGALRM)
    t0 = time.perf_counter()
    first = board_pool.play_boards(job, [("slow", "random", 0)], 1)
    one = time.perf_counter() - t0
    assert first.finished == 1 and not first.stopped
    t0 = time.perf_counter()
    stop = board_pool.play_boards(job, [("slow", "random", i) for i in range(1, 5)], 1,
                                  deadline_at=t0 + one / 4)
    assert stop.deadline and not stop.interrupted and stop.finished == 0
    assert time.perf_counter() - t0 < one  # it did not wait for the board to end
    assert signal.getsignal(signal.SIGALRM) is before


def test_a_deadline_on_the_command_line_keeps_what_finished(tmp_path, capsys):
    save = tmp_path / "r.pkl"
    assert cli_main(["--agent", "rules", "--vs", "random", "--boards", "3", "--no-progress", "--deadline", "0",
                     "--save", str(save)]) == 0
    assert "0 boards finished" in capsys.readouterr().err and load_records([save]) == []
    _run(save, 3)
    assert len(load_records([save])) == 3
    with pytest.raises(SystemExit):
        cli_main(["--agent", "rules", "--vs", "random", "--deadline", "10"])
    assert "--deadline needs --save FILE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["--agent", "rules", "--vs", "random", "--deadline", "-1", "--save", str(save)])
    assert "expected a finite number of seconds >= 0, got -1" in capsys.readouterr().err


def test_close_pool_kills_workers_when_terminate_hangs(capsys):
    """A worker killed while it held the result queue's lock leaves ``Pool.terminate`` waiting
    for ever; close_pool gives up after its timeout, kills the workers and warns. The lock is
    held here by the test itself, which is what a dead holder looks like to the pool."""
    pool = board_pool.make_pool(board_pool.BoardJob(cfg=None, deals=[]), 2)
    procs = list(pool._pool)
    assert all(p.is_alive() for p in procs)
    assert pool._outqueue._wlock.acquire(timeout=5)
    t0 = time.monotonic()
    try:
        board_pool.close_pool(pool, timeout=1.0)
    finally:
        pool._outqueue._wlock.release()  # lets the pool's own clean-up finish in its thread
    assert time.monotonic() - t0 < 10
    for p in procs:
        p.join(5)
    assert not any(p.is_alive() for p in procs)
    assert "did not stop within 1 s" in capsys.readouterr().err


def test_a_file_of_redealt_boards_is_refused_not_mixed(tmp_path, capsys):
    """Records without a format field come from the version that re-dealt passed-out boards:
    neither a resumed run nor the summary mixes them with boards scored under the new rule."""
    save = tmp_path / "old.pkl"
    _run(save, 1)
    (rec,) = load_records([save])
    old = {k: v for k, v in rec.items() if k != "format"}
    save.write_bytes(pickle.dumps(old))
    for argv in (["--agent", "rules", "--vs", "random", "--boards", "2", "--no-progress", "--save", str(save)],
                 ["--summarize", str(save)]):
        capsys.readouterr()
        assert cli_main(argv) == 2
        err = capsys.readouterr().err
        assert "has format 1" in err and "re-dealt" in err and "new file" in err, err
    assert save.read_bytes() == pickle.dumps(old)  # left as it was


def _old_layout(rec: dict, monkeypatch) -> bytes:
    """``rec`` pickled as the layout before agents/ was split in subpackages wrote it: its board
    classes under the module ``agents.arena``."""
    old = types.ModuleType("agents.arena")
    for cls in (boards.BoardResult, boards.TableResult, boards.Timing):
        setattr(old, cls.__name__, cls)
        monkeypatch.setattr(cls, "__module__", "agents.arena")
    monkeypatch.setitem(sys.modules, "agents.arena", old)
    data = pickle.dumps(rec)
    monkeypatch.undo()
    return data


def test_records_of_the_earlier_layouts_read_as_today(tmp_path, monkeypatch):
    save = tmp_path / "r.pkl"
    _run(save, 2)
    recs = load_records([save])
    data = _old_layout(recs[0], monkeypatch)
    assert b"agents.arena" in data and "agents.arena" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(data)  # what the plain unpickler made of such a file
    old = tmp_path / "old.pkl"
    old.write_bytes(data + pickle.dumps(recs[1]))
    got = load_records([old])
    assert [r["board"] for r in got] == [r["board"] for r in recs]
    assert type(got[0]["board"]) is boards.BoardResult and type(got[0]["timing"]) is boards.Timing
    assert saved.summary(got) == saved.summary(recs)


def test_a_damaged_record_is_an_error_naming_the_file_and_record(tmp_path, capsys):
    """Only a record cut short at the very end (a kill mid-write) is dropped: a record that
    cannot be decoded before it, or that names a class no board record holds, is a
    SaveFormatError naming the file and the record, and a resume leaves the file as it was."""
    save = tmp_path / "r.pkl"
    _run(save, 3)
    recs = load_records([save])
    parts = [pickle.dumps(r) for r in recs]
    start = len(parts[0])
    bad = bytearray(b"".join(parts))
    bad[start + 11] = 0xFF  # the first opcode of record 1, after its protocol and frame headers
    save.write_bytes(bytes(bad))
    with pytest.raises(SaveFormatError, match=rf"r\.pkl: record 1 \(from byte {start}\) is corrupt"):
        read_records(save)
    assert cli_main(["--agent", "rules", "--vs", "random", "--boards", "4", "--no-progress",
                     "--save", str(save)]) == 2
    assert "record 1" in capsys.readouterr().err and save.read_bytes() == bytes(bad)
    other = tmp_path / "other.pkl"  # a pickle that would call a function when loaded
    other.write_bytes(parts[0] + pickle.dumps({"format": 2, "run": os.getcwd}))
    with pytest.raises(SaveFormatError, match=r"record 1 .* names the class posix\.getcwd, which no board record"):
        read_records(other)
    cut = tmp_path / "cut.pkl"  # the same bytes cut short at the end: a kill, dropped
    cut.write_bytes(b"".join(parts)[:-10])
    assert len(read_records(cut)[0]) == 2
    assert cli_main(["--summarize", str(other)]) == 2
    assert "posix.getcwd" in capsys.readouterr().err


def test_a_save_file_from_git_history_summarizes_to_its_published_figures(tmp_path):
    """docs/results/bazar_stage12_vs_pimc-insane.pkl of commit d673463 (the board classes
    pickled under ``agents.arena``): 2,000 boards, -2.09 [-2.77, -1.41] per deal."""
    p = subprocess.run(["git", "show", "d673463:docs/results/bazar_stage12_vs_pimc-insane.pkl"], cwd=ROOT,
                       capture_output=True, timeout=120)
    if p.returncode != 0:
        pytest.skip(f"commit d673463 is not in this clone's history: {p.stderr.decode(errors='replace')[:200]}")
    f = tmp_path / "stage12.pkl"
    f.write_bytes(p.stdout)
    (row,) = saved.summary(load_records([f]))
    assert row["boards"] == 2000 and row["opponent"] == "pimc-insane"
    assert [round(x, 2) for x in (row["mean_board_score"], *row["ci95"])] == [-2.09, -2.77, -1.41]


def test_records_carry_format_and_cost(tmp_path):
    save = tmp_path / "r.pkl"
    _run(save, 2)
    recs = load_records([save])
    assert all(r["format"] == 2 and r["cpu_seconds"] > 0 for r in recs)
    (row,) = saved.summary(recs)
    assert row["cpu_seconds"] == pytest.approx(sum(r["cpu_seconds"] for r in recs))


def test_a_resume_with_other_network_weights_is_refused(tmp_path, capsys):
    """``ppo`` names whatever policy is shipped: boards saved under the name with other
    weights are never mixed with the new ones; boards saved before the digests only warn."""
    save = tmp_path / "r.pkl"
    _run(save, 1)
    (rec,) = load_records([save])
    assert rec["weights"] == (None, None)  # no network on either side
    save.write_bytes(pickle.dumps(dict(rec, weights=("0123456789ab", None))))
    capsys.readouterr()
    assert cli_main(["--agent", "rules", "--vs", "random", "--boards", "2", "--no-progress",
                     "--save", str(save)]) == 2
    err = capsys.readouterr().err
    assert "other network weights" in err and "0123456789ab" in err and "new file" in err, err
    assert len(load_records([save])) == 1
    save.write_bytes(pickle.dumps({k: v for k, v in rec.items() if k != "weights"}))
    _run(save, 2)
    assert "1 saved boards predate the weight digests" in capsys.readouterr().err
    assert sorted(r["index"] for r in load_records([save])) == [0, 1]


def test_weights_digest_tells_policies_apart():
    torch = pytest.importorskip("torch")
    from agents.eval.board_pool import weights_digest

    ppo = make_agent("ppo", "bazar")
    base = weights_digest(ppo)
    assert isinstance(base, str) and len(base) == 12
    assert weights_digest(make_agent("ppo", "bazar")) == base  # a fresh load of the same file
    assert weights_digest(make_agent("ppo-search-4", "bazar")) == base  # the network under the search
    assert weights_digest(make_agent("ppo", "duel")) != base
    assert weights_digest(make_agent("rules")) is None and weights_digest(make_agent("pimc-4")) is None
    split = make_agent("rules-medium+ppo", "bazar")         # a phase split: its parts' digests
    assert weights_digest(make_agent("rules-medium+rules")) is None
    assert len(weights_digest(split)) == 12 and weights_digest(split) not in (base, None)
    assert weights_digest(make_agent("ppo+rules-medium", "bazar")) != weights_digest(split)
    with torch.no_grad():
        next(ppo.policy.parameters()).view(-1)[0] += 1e-3
    assert weights_digest(ppo) != base
    split.player = ppo
    assert weights_digest(split) != weights_digest(make_agent("rules-medium+ppo", "bazar"))


@pytest.mark.parametrize("value", ["0", "-3"])
def test_worker_count_below_one_is_refused(tmp_path, capsys, value):
    with pytest.raises(SystemExit):
        cli_main(["--agent", "rules", "--vs", "random", "--workers", value, "--save", str(tmp_path / "x.pkl")])
    assert f"argument --workers: expected a positive integer, got {value}" in capsys.readouterr().err


@pytest.mark.parametrize("save", [True, False])
def test_address_without_ray_names_the_extra(tmp_path, capsys, save):
    # the main environment has no Ray; the run on Ray is tested in tests_integrations/rllib
    if importlib.util.find_spec("ray") is not None:
        pytest.skip("Ray is installed here")
    args = ["--agent", "rules", "--vs", "random", "--boards", "1", "--address", "auto", "--no-progress"]
    assert cli_main([*args, *(["--save", str(tmp_path / "x.pkl")] if save else [])]) == 2
    assert 'pip install "blot-env[ray]"' in capsys.readouterr().err


def test_paired_compares_two_candidates_board_by_board(tmp_path, capsys):
    """``--paired``: the difference of two runs against one opponent over the boards both
    finished, board by board; runs against different opponents or under different seeds are
    refused."""
    a, b, c = tmp_path / "a.pkl", tmp_path / "b.pkl", tmp_path / "c.pkl"
    _run(a, 3)
    _run(b, 2, agent="random", vs="random")
    _run(c, 2, agent="rules", vs="rules")
    ra, rb = load_records([a]), load_records([b])
    p = saved.paired(ra, rb, ("a", "b"))
    assert p["boards"] == 2 and p["opponent"] == "random"
    da = {r["index"]: r["board"].delta for r in ra}
    db = {r["index"]: r["board"].delta for r in rb}
    want = [(da[i] - db[i]) / 2 for i in range(2)]
    assert p["difference"]["mean"] == pytest.approx(sum(want) / 2)
    assert p["difference"]["mean"] == pytest.approx(p["a"]["mean_board_score"] - p["b"]["mean_board_score"])
    assert p["a"]["boards"] == 2 and p["a"]["agent"] == "rules" and p["b"]["agent"] == "random"
    assert p["difference"]["a_better"] == sum(w > 0 for w in want) / 2
    by = p["by_auction"]  # the groups cover every board once and their contributions add up to the mean
    assert sum(g["boards"] for g in by.values()) == 2
    assert by["same_contracts"]["boards"] < 2  # rules and random do not bid alike
    assert sum(g["contribution"] for g in by.values()) == pytest.approx(p["difference"]["mean"])
    same = saved.paired(ra, ra, ("a", "a"))["by_auction"]  # a run against itself: one group, no difference
    assert same["same_contracts"]["boards"] == len(ra) == 3 and same["same_contracts"]["mean"] == 0
    capsys.readouterr()
    assert cli_main(["--paired", str(a), str(b), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["difference"]["mean"] == pytest.approx(p["difference"]["mean"])
    assert cli_main(["--paired", str(a), str(b)]) == 0
    assert "difference (first - second)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli_main(["--paired", str(a), str(c)])
    assert "differ in opponent ('random'" in capsys.readouterr().err
    d = tmp_path / "d.pkl"  # the same boards under another seed: the opponent draws otherwise
    _run(d, 2, "--seed", "1", agent="random", vs="random")
    with pytest.raises(ValueError, match=r"differ in seed \(0 in a, 1 in d\)"):
        saved.paired(ra, load_records([d]), ("a", "d"))
    with pytest.raises(SystemExit):
        cli_main(["--paired", str(a), str(d)])
    assert "differ in seed (0 in" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["--paired", str(a), str(tmp_path / "missing.pkl")])
    assert "no file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["--paired", str(a), str(b), "--agent", "rules"])
    assert "--agent do not go with --summarize or --paired" in capsys.readouterr().err


def _table(side: int, seat: int | None, strain: int = 0, value: int = 10, kind: str = "num",
           score: tuple[int, int] = (0, 0)):
    from agents.eval.arena import TableResult
    from blot_env.scoring import DealResult
    from blot_env.state import Contract

    c = None if seat is None else Contract(seat=seat, strain=strain, value=value, kind=kind, plus=0, double=0, call=0)
    return TableResult(side=side, result=DealResult(contract=c, made=None if c is None else True, tricks=(4, 4),
                                                    card_points=(81, 81), combinations=(0, 0), score=score),
                       contra_seat=-1, recontra_seat=-1)


def test_auction_breakdown_groups_boards_by_the_two_runs_contracts():
    """``by_auction``: a board goes to ``same_contracts`` when every table ended in the same
    contract for both runs (the declaring side counts, not which partner declared; kaput+N
    counts the seat), else by how many tables each run's side declared. The candidate sits
    on side 0 at table 1 and side 1 at table 2."""
    from agents.eval.arena import BoardResult

    def board(t1, t2):
        return BoardResult(index=0, tables=(_table(0, *t1), _table(1, *t2)))

    pairs = [  # (a's board, b's board, the group)
        (board((0, 1, 10, "num", (20, 0)), (3, 1)), board((2, 1, 10, "num", (10, 0)), (3, 1)), "same_contracts"),
        (board((0, 1), (1, 2, 10, "num", (0, 30))), board((0, 1), (0, 2)), "a_declares_more"),
        (board((1, 1), (2, 0)), board((0, 1, 10, "num", (16, 0)), (2, 0)), "a_declares_fewer"),
        (board((0, 1), (0, 2)), board((0, 3), (0, 2)), "same_count"),
        (board((None,), (1, 2, 10, "num", (0, 8))), board((1, 0), (1, 2)), "same_count"),  # passed out at table 1
        (board((0, 1, 25, "kaput_plus"), (3, 1)), board((2, 1, 25, "kaput_plus"), (3, 1)), "same_count"),
    ]
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    by = saved.auction_breakdown(a, b)
    for g in by:
        want = [i for i, p in enumerate(pairs) if p[2] == g]
        assert by[g]["boards"] == len(want), g
        if want:
            assert by[g]["mean"] == pytest.approx(sum((a[i].delta - b[i].delta) / 2 for i in want) / len(want))
    assert by["same_contracts"]["mean"] == 5 and by["a_declares_more"]["mean"] == 15
    assert by["a_declares_fewer"]["mean"] == -8 and by["same_count"]["mean"] == pytest.approx(4 / 3)
    back = saved.auction_breakdown(b, a)  # swapping the runs swaps more and fewer and flips the signs
    assert back["a_declares_more"]["boards"] == 1 and back["a_declares_more"]["mean"] == 8
    assert back["a_declares_fewer"]["mean"] == -15 and back["same_contracts"]["mean"] == -5
    assert sum(g["contribution"] for g in by.values()) == pytest.approx(
        sum(x.delta - y.delta for x, y in zip(a, b)) / 2 / len(a))
    empty = saved.auction_breakdown(a[:1], b[:1])["a_declares_more"]
    assert empty["boards"] == 0 and empty["mean"] is None and empty["ci95"] == [None, None]


def test_a_phase_split_runs_saves_and_pairs(tmp_path, capsys):
    """``--agent BIDDER+PLAYER``: the board records equal agents.eval.arena.evaluate with a
    PhaseSplitAgent of the two parts on the same boards, and the run pairs with another."""
    from agents.base import PhaseSplitAgent

    a, b = tmp_path / "split.pkl", tmp_path / "rules.pkl"
    _run(a, 3, agent="rules+random")
    _run(b, 3)
    recs = load_records([a])
    assert {r["agent"] for r in recs} == {"rules+random"}
    split = PhaseSplitAgent(make_agent("rules"), make_agent("random"))
    want = evaluate(split, "random", "bazar", load_suite("bazar", "test")[:3], workers=1, factory=make_agent)
    got = sorted(recs, key=lambda r: r["index"])
    assert [r["board"].delta for r in got] == [x.delta for x in want.boards]
    rules = sorted(load_records([b]), key=lambda r: r["index"])
    assert [r["board"].delta for r in got] != [r["board"].delta for r in rules]   # random's cards, not rules'
    p = saved.paired(recs, load_records([b]), ("split", "rules"))
    assert p["boards"] == 3 and p["a"]["agent"] == "rules+random"


def test_mixed_runs_are_runs_of_their_own_and_match_blot_eval(tmp_path, capsys):
    """``--mixed --save``: the boards of blot-eval's mixed mode, saved and resumed apart from a
    plain run of the same agents in the same file; ``--paired`` refuses a plain run against a
    mixed one."""
    save, plain = tmp_path / "both.pkl", tmp_path / "plain.pkl"
    _run(save, 2)
    _run(plain, 2)
    _run(save, 2, "--mixed")
    _run(save, 3, "--mixed")  # resumes: only board 2 is new
    recs = load_records([save])
    assert sorted((r["mixed"], r["index"]) for r in recs) == [(False, 0), (False, 1), (True, 0), (True, 1), (True, 2)]
    rows = {r["mixed"]: r for r in saved.summary(recs)}
    deals = load_suite("bazar", "test")
    for mixed, n in ((False, 2), (True, 3)):
        want = evaluate("rules", "random", "bazar", deals[:n], mixed=mixed, factory=make_agent).metrics
        assert rows[mixed]["boards"] == n
        assert rows[mixed]["mean_board_score"] == want["mean_board_score"]
        assert rows[mixed]["diagnostics"] == want["diagnostics"]
    assert rows[True]["mean_board_score"] != rows[False]["mean_board_score"]
    # a record written before the mode was saved is a plain one
    old = {k: v for k, v in recs[0].items() if k != "mixed"}
    assert record_key(old) == record_key(recs[0])
    mixed_only, mixed_other = tmp_path / "mixed.pkl", tmp_path / "mixed_random.pkl"
    _run(mixed_only, 2, "--mixed")
    _run(mixed_other, 2, "--mixed", agent="random")
    capsys.readouterr()
    assert cli_main(["--summarize", str(mixed_only)]) == 0
    assert "mixed partnerships" in capsys.readouterr().out
    p = saved.paired(load_records([mixed_only]), load_records([mixed_other]))
    assert p["mixed"] and p["boards"] == 2
    assert p["difference"]["mean"] == pytest.approx(p["a"]["mean_board_score"] - p["b"]["mean_board_score"])
    assert cli_main(["--paired", str(mixed_only), str(mixed_other)]) == 0
    assert "against random, mixed partnerships:" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli_main(["--paired", str(mixed_only), str(plain)])
    assert "differ in mode (mixed partnerships in" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["--summarize", str(mixed_only), "--mixed"])
    assert "--mixed applies to a run" in capsys.readouterr().err
    assert cli_main(["--agent", "rules", "--vs", "random", "--preset", "duel", "--mixed", "--no-progress",
                     "--save", str(tmp_path / "d.pkl")]) == 2
    assert "4-player preset" in capsys.readouterr().err


def test_the_alias_forwards_to_blot_eval(tmp_path, capsys):
    """``scripts/eval_long.py`` takes blot-eval's options and prints what blot-eval prints."""
    save = tmp_path / "r.pkl"
    _run(save, 2)
    alias = subprocess.run([sys.executable, str(ALIAS), "--summarize", str(save), "--json"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert alias.returncode == 0, alias.stderr
    capsys.readouterr()
    assert cli_main(["--summarize", str(save), "--json"]) == 0
    assert json.loads(alias.stdout) == json.loads(capsys.readouterr().out)


def test_close_pool_raises_what_terminate_raised():
    class Broken:
        def terminate(self):
            raise RuntimeError("cluster gone")

        def join(self):
            raise AssertionError("not reached")

    with pytest.raises(RuntimeError, match="cluster gone"):
        board_pool.close_pool(Broken(), timeout=5.0)

