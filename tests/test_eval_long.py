"""scripts/eval_long.py: finished boards are saved, a resumed run skips them, a record cut
short by a kill is dropped, and the summary matches blot-eval's metrics on the same boards."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from agents.eval.arena import evaluate, load_suite
from agents.registry import make_agent

_PATH = Path(__file__).resolve().parents[1] / "scripts" / "eval_long.py"
_SPEC = importlib.util.spec_from_file_location("eval_long", _PATH)
eval_long = importlib.util.module_from_spec(_SPEC)
sys.modules["eval_long"] = eval_long  # the pool's workers find its functions by module name
_SPEC.loader.exec_module(eval_long)


def _run(save: Path, boards: int) -> None:
    assert eval_long.main(["--agent", "rules", "--vs", "random", "--boards", str(boards), "--workers", "1",
                           "--save", str(save)]) == 0


def test_save_resume_and_summary(tmp_path, capsys):
    save = tmp_path / "runs" / "rules_vs_random.pkl"
    _run(save, 3)
    recs = eval_long.load_records([str(save)])
    assert sorted(r["index"] for r in recs) == [0, 1, 2]
    assert all(r["split"] == "test" and r["names"] == ("rules", "random") for r in recs)
    # a kill in the middle of a write leaves a partial record at the end: it is ignored, then
    # cut off before the resumed run appends
    whole = save.read_bytes()
    save.write_bytes(whole + pickle.dumps(recs[0])[:40])
    assert len(eval_long.load_records([str(save)])) == 3
    _run(save, 5)
    recs = eval_long.load_records([str(save)])
    assert sorted(r["index"] for r in recs) == [0, 1, 2, 3, 4]  # boards 0-2 were not replayed
    assert save.read_bytes()[:len(whole)] == whole
    (row,) = eval_long.summary(recs)
    want = evaluate("rules", "random", "bazar", load_suite("bazar", "test")[:5], factory=make_agent).metrics
    assert row["boards"] == 5 and row["boards_beyond_prefix"] == 0
    assert row["mean_board_score"] == want["mean_board_score"] and row["ci95"] == want["ci95"]
    assert row["diagnostics"] == want["diagnostics"]


def test_summary_uses_the_prefix_of_consecutive_boards(tmp_path):
    save = tmp_path / "r.pkl"
    _run(save, 2)
    recs = eval_long.load_records([str(save)])
    gap = dict(recs[1], index=7)  # a board finished beyond a missing one
    (row,) = eval_long.summary([recs[0], gap])
    assert row["boards"] == 1 and row["boards_finished"] == 2 and row["boards_beyond_prefix"] == 1


def test_summarize_keeps_files_apart(tmp_path, capsys):
    """Two files of the same (agent, vs, preset, split, seed), e.g. two versions of an agent,
    give two rows: one file's boards never stand in for the other's."""
    a, b = tmp_path / "a.pkl", tmp_path / "b.pkl"
    _run(a, 3)
    recs = eval_long.load_records([str(a)])
    with open(b, "wb") as f:  # a second run that lost every board: 1 point per deal to the opponent
        for r in recs[:2]:
            worse = replace(r["board"], tables=tuple(
                replace(x, result=replace(x.result, score=(0, 1) if x.side == 0 else (1, 0)))
                for x in r["board"].tables))
            pickle.dump(dict(r, board=worse), f)
    capsys.readouterr()
    assert eval_long.main(["--summarize", str(a), str(b), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["file"], r["boards"]) for r in rows] == [(str(a), 3), (str(b), 2)]
    assert rows[1]["mean_board_score"] == -1.0 and rows[0]["mean_board_score"] > 0


@pytest.mark.parametrize("sig, group", [(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGTERM, True)])
def test_ctrl_c_stops_the_pool_and_keeps_the_finished_boards(tmp_path, sig, group):
    """SIGINT to the whole process group (what Ctrl-C sends), or SIGTERM to the parent or to the
    group (what a batch scheduler sends at a time limit): the parent stops the pool, saves what
    finished and exits; no worker goes on playing."""
    save = tmp_path / "r.pkl"
    cmd = [sys.executable, str(_PATH), "--agent", "rules", "--vs", "rules", "--boards", "2000", "--workers", "2",
           "--save", str(save)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, cwd=_PATH.parents[1])
    try:
        t0 = time.monotonic()
        while (not save.exists() or save.stat().st_size == 0) and time.monotonic() - t0 < 240:
            time.sleep(0.2)
        assert save.exists() and save.stat().st_size > 0, "no board finished"
        workers = _children(proc.pid)
        assert len(workers) == 2
        (os.killpg if group else os.kill)(proc.pid, sig)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, out
    assert "(interrupted)" in out and "warning" not in out  # the pool stopped in order
    n = len(eval_long.load_records([str(save)]))
    assert 1 <= n < 2000
    time.sleep(0.5)
    assert len(eval_long.load_records([str(save)])) == n  # nothing left running appends boards
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)
    assert not [pid for pid in workers if _running(pid)]  # the workers (each in its own group) ended too


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


def test_close_pool_kills_workers_when_terminate_hangs(capsys):
    """A worker killed while it held the result queue's lock leaves ``Pool.terminate`` waiting
    for ever; close_pool gives up after its timeout, kills the workers and warns. The lock is
    held here by the test itself, which is what a dead holder looks like to the pool."""
    from agents.eval import board_pool

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
    (rec,) = eval_long.load_records([str(save)])
    old = {k: v for k, v in rec.items() if k != "format"}
    save.write_bytes(pickle.dumps(old))
    for argv in (["--agent", "rules", "--vs", "random", "--boards", "2", "--workers", "1", "--save", str(save)],
                 ["--summarize", str(save)]):
        capsys.readouterr()
        assert eval_long.main(argv) == 2
        err = capsys.readouterr().err
        assert "has format 1" in err and "re-dealt" in err and "new file" in err, err
    assert save.read_bytes() == pickle.dumps(old)  # left as it was


def test_records_carry_format_and_cost(tmp_path):
    save = tmp_path / "r.pkl"
    _run(save, 2)
    recs = eval_long.load_records([str(save)])
    assert all(r["format"] == 2 and r["cpu_seconds"] > 0 for r in recs)
    (row,) = eval_long.summary(recs)
    assert row["cpu_seconds"] == pytest.approx(sum(r["cpu_seconds"] for r in recs))


def test_a_resume_with_other_network_weights_is_refused(tmp_path, capsys):
    """``ppo`` names whatever policy is shipped: boards saved under the name with other
    weights are never mixed with the new ones; boards saved before the digests only warn."""
    save = tmp_path / "r.pkl"
    _run(save, 1)
    (rec,) = eval_long.load_records([str(save)])
    assert rec["weights"] == (None, None)  # no network on either side
    save.write_bytes(pickle.dumps(dict(rec, weights=("0123456789ab", None))))
    capsys.readouterr()
    assert eval_long.main(["--agent", "rules", "--vs", "random", "--boards", "2", "--workers", "1",
                           "--save", str(save)]) == 2
    err = capsys.readouterr().err
    assert "other network weights" in err and "0123456789ab" in err and "new file" in err, err
    assert len(eval_long.load_records([str(save)])) == 1
    save.write_bytes(pickle.dumps({k: v for k, v in rec.items() if k != "weights"}))
    _run(save, 2)
    assert "1 saved boards predate the weight digests" in capsys.readouterr().out
    assert sorted(r["index"] for r in eval_long.load_records([str(save)])) == [0, 1]


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
        eval_long.main(["--agent", "rules", "--vs", "random", "--workers", value, "--save", str(tmp_path / "x.pkl")])
    assert f"argument --workers: expected a positive integer, got {value}" in capsys.readouterr().err


def test_address_without_ray_names_the_extra(tmp_path, capsys):
    # the main environment has no Ray; the run on Ray is tested in tests_integrations/rllib
    if importlib.util.find_spec("ray") is not None:
        pytest.skip("Ray is installed here")
    assert eval_long.main(["--agent", "rules", "--vs", "random", "--boards", "1", "--address", "auto",
                           "--save", str(tmp_path / "x.pkl")]) == 2
    assert 'pip install "blot-env[ray]"' in capsys.readouterr().err


def test_paired_compares_two_candidates_board_by_board(tmp_path, capsys):
    """``--paired``: the difference of two runs against one opponent over the boards both
    finished, board by board; runs against different opponents or under different seeds are
    refused."""
    a, b, c = tmp_path / "a.pkl", tmp_path / "b.pkl", tmp_path / "c.pkl"
    _run(a, 3)
    for save, agent, vs in ((b, "random", "random"), (c, "rules", "rules")):
        assert eval_long.main(["--agent", agent, "--vs", vs, "--boards", "2", "--workers", "1",
                               "--save", str(save)]) == 0
    ra, rb = eval_long.load_records([str(a)]), eval_long.load_records([str(b)])
    p = eval_long.paired(ra, rb, ("a", "b"))
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
    same = eval_long.paired(ra, ra, ("a", "a"))["by_auction"]  # a run against itself: one group, no difference
    assert same["same_contracts"]["boards"] == len(ra) == 3 and same["same_contracts"]["mean"] == 0
    capsys.readouterr()
    assert eval_long.main(["--paired", str(a), str(b), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["difference"]["mean"] == pytest.approx(p["difference"]["mean"])
    with pytest.raises(SystemExit):
        eval_long.main(["--paired", str(a), str(c)])
    assert "differ in opponent ('random'" in capsys.readouterr().err
    d = tmp_path / "d.pkl"  # the same boards under another seed: the opponent draws otherwise
    assert eval_long.main(["--agent", "random", "--vs", "random", "--boards", "2", "--workers", "1",
                           "--seed", "1", "--save", str(d)]) == 0
    with pytest.raises(ValueError, match=r"differ in seed \(0 in a, 1 in d\)"):
        eval_long.paired(ra, eval_long.load_records([str(d)]), ("a", "d"))
    with pytest.raises(SystemExit):
        eval_long.main(["--paired", str(a), str(d)])
    assert "differ in seed (0 in" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        eval_long.main(["--paired", str(a), str(tmp_path / "missing.pkl")])
    assert "no file" in capsys.readouterr().err


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
    by = eval_long.auction_breakdown(a, b)
    for g in by:
        want = [i for i, p in enumerate(pairs) if p[2] == g]
        assert by[g]["boards"] == len(want), g
        if want:
            assert by[g]["mean"] == pytest.approx(sum((a[i].delta - b[i].delta) / 2 for i in want) / len(want))
    assert by["same_contracts"]["mean"] == 5 and by["a_declares_more"]["mean"] == 15
    assert by["a_declares_fewer"]["mean"] == -8 and by["same_count"]["mean"] == pytest.approx(4 / 3)
    back = eval_long.auction_breakdown(b, a)  # swapping the runs swaps more and fewer and flips the signs
    assert back["a_declares_more"]["boards"] == 1 and back["a_declares_more"]["mean"] == 8
    assert back["a_declares_fewer"]["mean"] == -15 and back["same_contracts"]["mean"] == -5
    assert sum(g["contribution"] for g in by.values()) == pytest.approx(
        sum(x.delta - y.delta for x, y in zip(a, b)) / 2 / len(a))
    empty = eval_long.auction_breakdown(a[:1], b[:1])["a_declares_more"]
    assert empty["boards"] == 0 and empty["mean"] is None and empty["ci95"] == [None, None]


def test_a_phase_split_runs_saves_and_pairs(tmp_path, capsys):
    """``--agent BIDDER+PLAYER``: the board records equal agents.eval.arena.evaluate with a
    PhaseSplitAgent of the two parts on the same boards, and the run pairs with another."""
    from agents.base import PhaseSplitAgent

    a, b = tmp_path / "split.pkl", tmp_path / "rules.pkl"
    assert eval_long.main(["--agent", "rules+random", "--vs", "random", "--boards", "3", "--workers", "1",
                           "--save", str(a)]) == 0
    _run(b, 3)
    recs = eval_long.load_records([str(a)])
    assert {r["agent"] for r in recs} == {"rules+random"}
    split = PhaseSplitAgent(make_agent("rules"), make_agent("random"))
    want = evaluate(split, "random", "bazar", load_suite("bazar", "test")[:3], workers=1, factory=make_agent)
    got = sorted(recs, key=lambda r: r["index"])
    assert [r["board"].delta for r in got] == [x.delta for x in want.boards]
    rules = sorted(eval_long.load_records([str(b)]), key=lambda r: r["index"])
    assert [r["board"].delta for r in got] != [r["board"].delta for r in rules]   # random's cards, not rules'
    p = eval_long.paired(recs, eval_long.load_records([str(b)]), ("split", "rules"))
    assert p["boards"] == 3 and p["a"]["agent"] == "rules+random"


def test_mixed_runs_are_runs_of_their_own_and_match_blot_eval(tmp_path, capsys):
    """``--mixed``: the boards of blot-eval's mixed mode, saved and resumed apart from a plain
    run of the same agents in the same file; ``--paired`` refuses a plain run against a mixed one."""
    save, plain = tmp_path / "both.pkl", tmp_path / "plain.pkl"
    _run(save, 2)
    _run(plain, 2)
    args = ["--agent", "rules", "--vs", "random", "--workers", "1", "--save", str(save), "--mixed"]
    assert eval_long.main([*args, "--boards", "2"]) == 0
    assert eval_long.main([*args, "--boards", "3"]) == 0  # resumes: only board 2 is new
    recs = eval_long.load_records([str(save)])
    assert sorted((r["mixed"], r["index"]) for r in recs) == [(False, 0), (False, 1), (True, 0), (True, 1), (True, 2)]
    rows = {r["mixed"]: r for r in eval_long.summary(recs)}
    deals = load_suite("bazar", "test")
    for mixed, n in ((False, 2), (True, 3)):
        want = evaluate("rules", "random", "bazar", deals[:n], mixed=mixed, factory=make_agent).metrics
        assert rows[mixed]["boards"] == n
        assert rows[mixed]["mean_board_score"] == want["mean_board_score"]
        assert rows[mixed]["diagnostics"] == want["diagnostics"]
    assert rows[True]["mean_board_score"] != rows[False]["mean_board_score"]
    # a record written before the mode was saved is a plain one
    old = {k: v for k, v in recs[0].items() if k != "mixed"}
    assert eval_long.record_key(old) == eval_long.record_key(recs[0])
    mixed_only, mixed_other = tmp_path / "mixed.pkl", tmp_path / "mixed_random.pkl"
    assert eval_long.main([*args[:-3], "--save", str(mixed_only), "--mixed", "--boards", "2"]) == 0
    assert eval_long.main(["--agent", "random", "--vs", "random", "--workers", "1", "--save", str(mixed_other),
                           "--mixed", "--boards", "2"]) == 0
    capsys.readouterr()
    assert eval_long.main(["--summarize", str(mixed_only)]) == 0
    assert "mixed partnerships" in capsys.readouterr().out
    p = eval_long.paired(eval_long.load_records([str(mixed_only)]), eval_long.load_records([str(mixed_other)]))
    assert p["mixed"] and p["boards"] == 2
    assert p["difference"]["mean"] == pytest.approx(p["a"]["mean_board_score"] - p["b"]["mean_board_score"])
    assert eval_long.main(["--paired", str(mixed_only), str(mixed_other)]) == 0
    assert "against random, mixed partnerships:" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        eval_long.main(["--paired", str(mixed_only), str(plain)])
    assert "differ in mode (mixed partnerships in" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        eval_long.main(["--summarize", str(mixed_only), "--mixed"])
    assert "--mixed applies to a run" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        eval_long.main(["--agent", "rules", "--vs", "random", "--preset", "duel", "--mixed", "--save",
                        str(tmp_path / "d.pkl")])
    assert "4-player preset" in capsys.readouterr().err


def test_close_pool_raises_what_terminate_raised():
    from agents.eval import board_pool

    class Broken:
        def terminate(self):
            raise RuntimeError("cluster gone")

        def join(self):
            raise AssertionError("not reached")

    with pytest.raises(RuntimeError, match="cluster gone"):
        board_pool.close_pool(Broken(), timeout=5.0)
