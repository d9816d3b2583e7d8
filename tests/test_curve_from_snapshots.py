"""scripts/curve_from_snapshots.py: a learning curve from a run's kept policies, read by plot_curves."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from conftest import load_script  # noqa: E402

from agents.arena import evaluate, load_suite  # noqa: E402
from agents.board_pool import weights_digest  # noqa: E402
from agents.ppo.agent import load_ppo_agent  # noqa: E402
from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.config import load_config  # noqa: E402
from blot_env.rules_config import make_rules  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A tiny bazar run without periodic evaluations that keeps a policy at every update."""
    out = tmp_path_factory.mktemp("curve") / "run"
    cfg = load_config(REPO / "configs" / "ppo_tiny.yaml",
                      ["total_steps=400", "keep_checkpoints=true", "eval.every=0", "eval.boards=3",
                       "eval.opponents=[random]"])
    build_trainer(cfg, out).train()
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_points_are_the_trainers_evaluation_of_each_kept_policy(run_dir, tmp_path):
    kept = sorted(run_dir.glob("policy_0*.pt"))
    updates = [int(p.stem[len("policy_"):]) for p in kept]
    assert len(updates) >= 3
    start = tmp_path / "start.pt"
    start.write_bytes(kept[0].read_bytes())
    assert load_script("curve_from_snapshots").main([str(run_dir), "--every", "2", "--start", str(start)]) == 0
    rows = _rows(run_dir / "curve.csv")
    # every second update, and the final policy.pt (the last update's) whatever its number, once
    want = [0] + sorted({u for u in updates if u % 2 == 0} | {updates[-1]})
    assert [int(r["update"]) for r in rows] == want
    # each point is what the trainer's evaluation gives that policy: same boards, same seed
    deals = load_suite("bazar", "dev")[:3]
    for r in rows[1:]:
        f = run_dir / f"policy_{int(r['update']):06d}.pt"
        meta = torch.load(f, weights_only=True)["meta"]
        assert int(r["global_step"]) == meta["global_step"]
        assert float(r["wall_time"]) == pytest.approx(meta["wall_time"])
        m = evaluate(load_ppo_agent(f, "bazar"), "random", make_rules("bazar"), deals, seed=12345).metrics
        assert float(r["eval_random_mean"]) == pytest.approx(m["mean_board_score"])
        assert float(r["eval_random_lo"]) <= float(r["eval_random_mean"]) <= float(r["eval_random_hi"])
        assert r["weights"] == weights_digest(load_ppo_agent(f, "bazar"))
    assert rows[0]["global_step"] == "0" and float(rows[0]["wall_time"]) == 0.0

    # plot_curves reads the file for a run whose metrics.csv holds no evaluation
    curve = load_script("plot_curves").load(run_dir, "random")
    assert [p["step"] for p in curve] == [float(r["global_step"]) for r in rows]
    with pytest.raises(KeyError, match="no evaluations against 'rules'"):
        load_script("plot_curves").load(run_dir, "rules")

    # a rerun keeps the points it has (marked here) and evaluates only the new ones
    rows[1]["eval_random_mean"] = "123.5"
    with open(run_dir / "curve.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert load_script("curve_from_snapshots").main([str(run_dir), "--every", "1"]) == 0
    again = _rows(run_dir / "curve.csv")
    assert [int(r["update"]) for r in again] == sorted(set(want) | set(updates))
    assert {r["update"]: r["eval_random_mean"] for r in again}[rows[1]["update"]] == "123.5"
    # another start: its point at update 0 is evaluated again, the others kept
    other = tmp_path / "other_start.pt"
    other.write_bytes(kept[-1].read_bytes())
    assert load_script("curve_from_snapshots").main([str(run_dir), "--every", "1", "--start", str(other)]) == 0
    third = {r["update"]: r for r in _rows(run_dir / "curve.csv")}
    assert third["0"]["weights"] == weights_digest(load_ppo_agent(other, "bazar")) != rows[0]["weights"]
    assert third[rows[1]["update"]]["eval_random_mean"] == "123.5"
    # other boards are refused for this file (its points would be lost) and go to a file of their own
    with pytest.raises(SystemExit) as e:
        load_script("curve_from_snapshots").main([str(run_dir), "--every", "4", "--boards", "2"])
    assert e.value.code == 2
    out = tmp_path / "b2.csv"
    assert load_script("curve_from_snapshots").main([str(run_dir), "--every", "4", "--boards", "2",
                                                     "--out", str(out)]) == 0
    assert {r["boards"] for r in _rows(out)} == {"2"} and len(_rows(run_dir / "curve.csv")) == len(again)


def test_refusals(run_dir, tmp_path, capsys):
    script = load_script("curve_from_snapshots")
    data = torch.load(sorted(run_dir.glob("policy_0*.pt"))[0], weights_only=True)
    data["config"]["network"]["oracle"] = True
    oracle = tmp_path / "oracle.pt"
    torch.save(data, oracle)
    garbage = tmp_path / "garbage.csv"
    garbage.write_text("update,global_step,wall_time,boards,weights,eval_random_mean,eval_random_lo,eval_random_hi\n"
                       "x,1,1.0,3,abc,0.5,0.0,1.0\n", encoding="utf-8")
    other_settings = tmp_path / "rules.csv"
    other_settings.write_text("update,global_step,wall_time,boards,weights,eval_rules_mean,eval_rules_lo,"
                              "eval_rules_hi\n1,10,1.0,3,abc,0.5,0.0,1.0\n", encoding="utf-8")
    for argv, msg in (([str(tmp_path)], "holds no policy_<update>.pt"),
                      ([str(tmp_path / "nope")], "is not a directory"),
                      ([str(run_dir), "--every", "0"], "--every must be >= 1"),
                      ([str(run_dir), "--start", str(tmp_path / "none.pt")], "is not a file"),
                      ([str(run_dir), "--start", str(REPO / "agents" / "data" / "ppo_belote.pt")],
                       "is a 'belote' policy"),
                      ([str(run_dir), "--vs", "random", "no-such-agent"], "no-such-agent"),
                      ([str(run_dir), "--start", str(oracle)], "is an oracle"),
                      ([str(run_dir), "--out", str(garbage)], "not a curve file"),
                      ([str(run_dir), "--out", str(other_settings)], "holds points of other settings")):
        with pytest.raises(SystemExit) as e:
            script.main(argv)
        assert e.value.code == 2
        assert msg in capsys.readouterr().err


def test_training_curve_weights_each_update_by_its_deals(tmp_path, capsys):
    rows = [  # update, global_step, wall_time, vs_rules_tp, vs_rules_deals
        (1, 100, 6.0, 2.0, 10), (2, 200, 12.0, "", ""), (3, 300, 18.0, -1.0, 30),
        (4, 400, 24.0, 5.0, 5), (5, 450, 30.0, 1.0, 15)]
    path = tmp_path / "metrics.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["update", "global_step", "wall_time", "vs_rules_tp", "vs_rules_deals"])
        w.writerows(rows)
    plot = load_script("plot_curves")
    curve = plot.load_training(tmp_path, "vs_rules", 250)
    # windows end at the first update at or past 250 and 500 learner steps (the last row closes the run)
    assert [p["step"] for p in curve] == [300.0, 450.0]
    assert curve[0]["mean"] == pytest.approx((2.0 * 10 - 1.0 * 30) / 40) and curve[0]["deals"] == 40
    assert curve[1]["mean"] == pytest.approx((5.0 * 5 + 1.0 * 15) / 20) and curve[1]["minutes"] == 0.5
    with pytest.raises(KeyError, match="it has: vs_rules"):
        plot.load_training(tmp_path, "mixed_rules", 250)
    assert plot.main([str(tmp_path), "--training", "vs_rules", "--window", "250", "--table"]) == 0
    assert "| 300 | 0.3 | -0.25 | 40 |" in capsys.readouterr().out
    for argv, msg in (([str(tmp_path), "--window", "250"], "--window needs --training"),
                      ([str(tmp_path), "--training", "vs_rules", "--window", "nan"], "finite number"),
                      ([str(REPO / "agents" / "data" / "ppo_bazar.pt")], "ppo_bazar.pt")):
        with pytest.raises(SystemExit) as e:
            plot.main(argv)
        assert e.value.code == 2
        assert msg in capsys.readouterr().err


def test_a_run_with_no_evaluation_yet_has_an_empty_curve(tmp_path):
    """A metrics.csv that has the evaluation's columns but no row yet (a run just started)."""
    (tmp_path / "metrics.csv").write_text("update,global_step,wall_time,eval_rules_mean,eval_rules_lo,eval_rules_hi\n",
                                          encoding="utf-8")
    assert load_script("plot_curves").load(tmp_path, "rules") == []
