"""The league (agents/eval/league.py, blot-eval --league): Bradley-Terry ratings, the schedule, resuming."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace

import numpy as np
import pytest
from scipy import optimize

from agents.eval.arena import BoardResult
from agents.eval.board_pool import SaveFormatError, load_records
from agents.eval.cli import main as cli_main
from agents.eval.league import (
    ELO,
    Schedule,
    bootstrap_ratings,
    expected_score,
    fit_ratings,
    format_league,
    oriented,
    pair_cpu,
    pair_deltas,
    pair_state,
    play_league,
    score_ratings,
    win_matrix,
)
from agents.registry import make_agent


def test_fit_recovers_the_ratings_that_made_the_results():
    """Board wins equal to their expectation under known ratings give those ratings back."""
    true = np.array([1500.0, 1720.0, 1180.0, 1555.0])
    n = 1000.0
    wins = np.array([[0.0 if i == j else n * expected_score(true[i], true[j]) for j in range(4)] for i in range(4)])
    got = fit_ratings(wins, anchor=0, prior=0.0)
    assert got == pytest.approx(true, abs=1e-6)
    shifted = fit_ratings(wins, anchor=2, prior=0.0)  # another anchor: the same differences
    assert shifted[2] == 1500.0 and shifted - shifted[0] == pytest.approx(true - true[0], abs=1e-6)


def test_fit_is_the_maximum_likelihood_that_scipy_finds():
    rng = np.random.default_rng(4)
    wins = rng.integers(0, 40, size=(5, 5)).astype(float) + 0.5 * rng.integers(0, 3, size=(5, 5))
    np.fill_diagonal(wins, 0.0)
    w = wins + (wins + wins.T > 0) * 0.5  # the one virtual tied board per pair

    def nll(x):
        theta = np.concatenate([[0.0], x])
        return float((w * np.logaddexp(0.0, -(theta[:, None] - theta[None, :]))).sum())

    ref = optimize.minimize(nll, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    got = fit_ratings(wins, anchor=0)
    assert got[1:] == pytest.approx(1500.0 + ELO * ref.x, abs=1e-3)


def test_an_agent_that_won_every_board_has_a_finite_rating():
    wins = np.array([[0.0, 200.0], [0.0, 0.0]])
    r = fit_ratings(wins, anchor=1)
    assert np.isfinite(r).all() and r[0] > r[1] + 800  # 200.5 : 0.5 is about 1040 points
    with pytest.raises(ValueError, match="played no board"):
        fit_ratings(np.zeros((3, 3)) + np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]), anchor=0)


def test_bootstrap_intervals_cover_the_estimate_and_narrow_with_boards():
    names = ["a", "b", "c"]
    widths = []
    for n in (50, 800):
        counts = {(0, 1): (0.6 * n, 0.1 * n, 0.3 * n), (0, 2): (0.5 * n, 0.0, 0.5 * n), (1, 2): (0.45 * n, 0.1 * n,
                                                                                               0.45 * n)}
        r = fit_ratings(win_matrix(names, counts), anchor=0)
        lo, hi = bootstrap_ratings(names, counts, 0, np.random.default_rng(0), n_boot=400)
        assert lo[0] == hi[0] == 1500.0
        assert (lo[1:] < r[1:]).all() and (r[1:] < hi[1:]).all()
        widths.append(hi[1] - lo[1])
    assert widths[1] < widths[0] / 3  # 16 times the boards: about a quarter of the width


def test_score_ratings_fit_the_mean_board_scores():
    """Pair means that agree with scores u give u back; the anchor is 0 and the bootstrap
    interval covers the fit."""
    u = np.array([0.0, 3.0, -45.0])
    rng = np.random.default_rng(1)
    per_deal = {}
    for i, j in ((0, 1), (0, 2), (1, 2)):
        noise = rng.normal(0.0, 15.0, size=400)
        per_deal[(i, j)] = u[i] - u[j] + noise - noise.mean()  # the mean is exactly u_i - u_j
    got, lo, hi = score_ratings(3, per_deal, anchor=0, rng=np.random.default_rng(2), n_boot=300)
    assert got == pytest.approx(u, abs=1e-9)
    assert lo[0] == hi[0] == 0.0 and (lo[1:] < got[1:]).all() and (got[1:] < hi[1:]).all()
    assert (hi - lo)[1] < 4.0  # about 2 x 1.96 x 15 / sqrt(400 x 2), two pairs informing it
    per_deal[(1, 2)] = per_deal[(1, 2)] + 6.0  # inconsistent pairs: the weighted least-squares compromise
    got, _, _ = score_ratings(3, per_deal, anchor=0)
    assert got[1] - got[2] == pytest.approx(48.0 + 6.0 * 2 / 3)


def test_schedule_stops_a_separated_pair_and_plays_a_close_one_to_the_end():
    s = Schedule(round_boards=10, max_boards=30, separated=0.6)
    assert s.round_ends() == [10, 20, 30]
    lopsided = {i: -5 for i in range(10)}  # a lost every board: Wilson interval [0, 0.28]
    st = pair_state(lopsided, "a", "b", s)
    assert (st.status, st.boards, st.missing) == ("separated", 10, [])
    close = {i: (1 if i % 2 else -1) for i in range(25)}
    st = pair_state(close, "a", "b", s)
    assert (st.status, st.boards, st.missing, st.round_end) == ("playing", 20, [25, 26, 27, 28, 29], 30)
    close.update({i: 0 for i in range(25, 30)})
    assert pair_state(close, "a", "b", s).status == "max_boards"
    assert pair_state({}, "a", "b", s).missing == list(range(10))
    for bad in ({"round_boards": 0}, {"max_boards": 5, "round_boards": 10}, {"separated": 0.4}):
        with pytest.raises(ValueError, match="Schedule"):
            Schedule(**bad)


def test_a_board_of_the_reversed_pair_counts_negated():
    def rec(agent, vs, index, delta, preset="bazar"):
        from agents.eval.arena import TableResult
        from blot_env.scoring import passed_out_result

        t = TableResult(0, replace(passed_out_result(), score=(delta, 0)), -1, -1)
        return {"agent": agent, "vs": vs, "preset": preset, "split": "test", "seed": 0, "index": index,
                "board": BoardResult(index, (t, TableResult(1, passed_out_result(), -1, -1)))}

    records = [rec("a", "b", 0, 7), rec("b", "a", 1, 4), rec("a", "b", 2, -3, preset="duel"), rec("a", "c", 3, 1),
               {**rec("a", "b", 4, 9), "mixed": True}]  # eval_long.py --mixed: not a league board
    assert pair_deltas(records, "a", "b", "bazar", "test", 0) == {0: 7, 1: -4}
    assert pair_deltas(records, "b", "a", "bazar", "test", 0) == {0: -7, 1: 4}
    for r in records:
        r["cpu_seconds"] = 1.0
    assert pair_cpu(records, "a", "b", "bazar", "test", 0, boards=10) == 2.0  # boards 0 and 1, not the mixed 4
    b = records[1]["board"]
    flipped = oriented(b)
    assert flipped.tables[0].result == b.tables[1].result and [t.side for t in flipped.tables] == [0, 1]
    assert oriented(flipped) == b


def _league(save, schedule, **kw):
    return play_league(["random", "rules", "easy"], save, split="dev", schedule=schedule, progress=False,
                       n_boot=200, factory=make_agent, **kw)


def test_league_plays_the_schedule_rates_and_resumes(tmp_path):
    """``easy`` is another name of ``rules``: their boards all tie, so they play to the end and
    rate equal; random is separated from both after the first round."""
    save = tmp_path / "league.pkl"
    stopped = _league(save, Schedule(10, 20, separated=0.6), deadline=0.0)
    assert stopped["stopped"] == "deadline" and stopped["agents"] == []
    first = _league(save, Schedule(10, 20, separated=0.6))
    assert first["stopped"] is None
    pairs = {(p["a"], p["b"]): p for p in first["pairs"]}
    assert pairs[("random", "rules")]["status"] == pairs[("random", "easy")]["status"] == "separated"
    assert pairs[("random", "rules")]["boards"] == 10
    assert pairs[("rules", "easy")]["status"] == "max_boards" and pairs[("rules", "easy")]["ties"] == 20
    r = {a["name"]: a for a in first["agents"]}
    assert r["rules"]["rating"] == 1500.0 and r["easy"]["rating"] == pytest.approx(1500.0, abs=1e-6)
    assert r["random"]["ci95"][1] < 1500.0 and first["agents"][-1]["name"] == "random"
    assert first["cpu_seconds"] > 0 and first["boards"] == 40
    assert r["easy"]["score"] == pytest.approx(0.0, abs=1e-9) and r["random"]["score_ci95"][1] < 0
    assert pairs[("rules", "easy")]["match_win_rate"] is None or pairs[("rules", "easy")]["match_win_rate"] == 0.5
    n_records = len(load_records([save]))
    # a longer schedule resumes: only the new rounds are played, no board twice
    longer = _league(save, Schedule(10, 40, separated=0.6))
    recs = load_records([save])
    keys = [(x["agent"], x["vs"], x["index"]) for x in recs]
    assert len(keys) == len(set(keys)) == n_records + 20
    assert {(p["a"], p["b"]): p["boards"] for p in longer["pairs"]} == {
        ("random", "rules"): 10, ("random", "easy"): 10, ("rules", "easy"): 40}
    assert "rules" in format_league(longer) and "separated" in format_league(longer)


def test_league_refuses_boards_of_other_weights_under_a_name(tmp_path):
    save = tmp_path / "league.pkl"
    _league(save, Schedule(2, 2, separated=0.6))
    recs = load_records([save])
    assert recs and all(r["weights"] == (None, None) for r in recs)
    save.write_bytes(b"".join(pickle.dumps(dict(r, weights=(None, "feedc0ffee00") if i == 1 else r["weights"]))
                              for i, r in enumerate(recs)))
    with pytest.raises(SaveFormatError, match="other network weights") as err:
        _league(save, Schedule(2, 4, separated=0.6))
    assert f"board {recs[1]['index']} of {recs[1]['agent']} vs {recs[1]['vs']}" in str(err.value)
    assert "feedc0ffee00" in str(err.value) and "new file" in str(err.value)
    assert len(load_records([save])) == len(recs)  # nothing played


def test_league_cli_writes_json_and_plot(tmp_path, capsys):
    save, png = tmp_path / "l.pkl", tmp_path / "l.png"
    assert cli_main(["--league", "random,rules", "--boards", "10", "--round", "10", "--split", "dev", "--save",
                     str(save), "--plot", str(png), "--bootstrap", "100", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "rank" in out and "Bradley-Terry" in out
    report = json.loads(save.with_suffix(".json").read_text())
    assert [a["name"] for a in report["agents"]] == ["rules", "random"]
    assert report["pairs"][0]["boards"] == 10 and report["anchor"] == "rules"
    assert png.stat().st_size > 1000


@pytest.mark.parametrize("args, needle", [
    (["--league", "random,rules-medium"], "the anchor 'rules' (pinned at 1500) is not in the league"),
    (["--league", "random,rules,random"], "agents named twice in the league: random"),
    (["--league", "rules"], "a league needs at least 2 agents"),
    (["--league", "random,nobody,rules"], "unknown agent 'nobody'"),
    (["--league", "random,rules", "--anchor", "ppo"], "the anchor 'ppo'"),
])
def test_league_cli_errors(tmp_path, capsys, args, needle):
    assert cli_main([*args, "--save", str(tmp_path / "x.pkl"), "--no-progress"]) == 2
    assert needle in capsys.readouterr().err


@pytest.mark.parametrize("args, needle", [
    (["--agent", "rules", "--round", "10"], "--round only go with --league"),
    (["--league", "random,rules", "--agent", "rules"], "--league takes no --agent"),
    (["--league", "random,rules", "--separated", "0.3"], "expected a number in (0.5, 1), got 0.3"),
])
def test_league_cli_usage_errors(capsys, args, needle):
    with pytest.raises(SystemExit):
        cli_main(args)
    assert needle in capsys.readouterr().err
