"""Random-play invariants for every preset (the checks of tests/oracles/invariants.py after
every action: cards conserved, the legal set never empty before the end, legal cards equal to
an independent rules.md 1.3, every legal action accepted and an illegal one refused, next
leader = last trick's winner, raw points adding up to 162, the kaput stop, records that
replay, and the score recomputed independently where nothing but cards counts).

The long runs (1,000,000 deals per preset) are ``python scripts/invariants.py`` (docs/rules.md,
"Random-play invariants").
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import InvariantError, check_deal, ref_points, ref_round, ref_two_player_score, ref_winner, run_deals

from blot_env.cards import parse_card
from blot_env.rules_config import make_rules

CHUNKS = 4
DEALS_PER_CHUNK = 2500


@pytest.mark.parametrize("chunk", range(CHUNKS))
@pytest.mark.parametrize("declarations", ["auto", "manual"])
def test_random_deals_bazar(declarations, chunk):
    cfg = make_rules("bazar", declarations=declarations)
    st = run_deals(cfg, seed=7 if declarations == "auto" else 11, deals=DEALS_PER_CHUNK,
                   start=chunk * DEALS_PER_CHUNK)
    assert st.deals == DEALS_PER_CHUNK
    # the random policy reaches the interesting cases
    assert st.passed_out > 0 and st.contra > 0 and st.made > 0 and st.nt > 0 and st.capot > 0
    assert st.score_recomputed > DEALS_PER_CHUNK // 10


def test_random_deals_bazar_reach_kaput():
    st = run_deals(make_rules("bazar", declarations="auto"), seed=3, deals=2000)
    assert st.kaput > 0 and st.kaput_stopped > 0


# deals per preset: about 10 s of one core each
@pytest.mark.parametrize(("preset", "deals"), [("bazar-app", 2000), ("duel", 4000), ("duel-app", 4000),
                                              ("open", 3000), ("belote", 4000)])
def test_random_deals_every_preset(preset, deals):
    st = run_deals(make_rules(preset), seed=5, deals=deals)
    assert st.deals == deals and 0 < st.made < deals
    assert st.all_tricks > deals // 2 and st.capot > 0 and st.records_replayed > 0
    assert st.score_recomputed > deals // 20
    if preset in ("bazar-app", "belote"):
        assert st.passed_out > 0 and st.contra > 0
    if preset == "bazar-app":
        assert st.kaput_stopped > 0


def test_runs_are_split_by_deal_index():
    """Deals 0..9 checked in one go or as 0..4 and 5..9 are the same deals."""
    cfg = make_rules("duel")
    whole = run_deals(cfg, seed=9, deals=10)
    halves = run_deals(cfg, seed=9, deals=5)
    halves.add(run_deals(cfg, seed=9, deals=5, start=5))
    assert whole == halves


def test_reference_functions_agree_with_the_rules_tables():
    assert ref_points(parse_card("JH"), 2) == 20 and ref_points(parse_card("AS"), 4) == 19
    assert [ref_round(x) for x in (85, 86, 125, 37, 136, 26)] == [8, 9, 12, 4, 14, 3]
    cards = [parse_card(c) for c in ("9H", "AH", "TH", "JH")]
    assert ref_winner(cards, 2) == 3
    # rules.md 3, B-1 shape (no combinations): c_t 84, c_o 58, undealt 20 -> 10 : 6
    assert ref_two_player_score(0, (5, 4), (84, 58), 20, "duel", 9, 21) == ([10, 6], True)
    # rules.md 5.5 D-5: c_t 96, c_o 66 -> t = 16 - r(66) = 9, o = 7
    assert ref_two_player_score(1, (9, 7), (66, 96), 0, "open", 16, 21) == ([7, 9], True)


@pytest.mark.parametrize("preset", ["bazar", "duel", "open", "belote"])
def test_invariant_checker_catches_a_broken_engine(monkeypatch, preset):
    """The checker is not vacuous: a wrong trick winner is reported for every family."""
    import oracles.invariants as inv

    monkeypatch.setattr(inv, "ref_winner", lambda cards, strain: 0)
    with pytest.raises(InvariantError, match="last trick's winner"):
        for seed in range(20):
            check_deal(make_rules(preset), np.random.default_rng(seed))


def test_invariant_checker_catches_a_wrong_score(monkeypatch):
    import oracles.invariants as inv

    monkeypatch.setattr(inv, "ref_two_player_score", lambda *a, **k: ([99, 0], True))
    with pytest.raises(InvariantError, match="reference"):
        for seed in range(20):
            check_deal(make_rules("duel-app"), np.random.default_rng(seed))


def _invariants_script():
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "invariants.py"
    spec = importlib.util.spec_from_file_location("invariants_script", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # the workers (forked) unpickle its functions by this name
    spec.loader.exec_module(mod)
    return mod


def test_long_run_on_two_workers_checks_the_same_deals_and_resumes(tmp_path, capsys):
    """scripts/invariants.py --workers 2: the same counts as one process over the same deals,
    a state file at the end of each chunk prefix, and a longer --count resuming from it."""
    import json

    script = _invariants_script()
    args = ["--preset", "duel", "--seed", "4", "--chunk", "7", "--state-dir", str(tmp_path), "--no-progress"]
    assert script.main(args + ["--count", "30", "--workers", "2"]) == 0
    saved = json.loads((tmp_path / "duel.json").read_text(encoding="utf-8"))
    assert saved["next"] == 30
    assert saved["stats"] == run_deals(make_rules("duel"), seed=4, deals=30).as_dict()
    # a longer run resumes at deal 30 and checks only deals 30..44
    assert script.main(args + ["--count", "45", "--workers", "2"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["next"] == 45 and out["deals"] == 45 and out["failures"] == 0
    assert out["steps"] == run_deals(make_rules("duel"), seed=4, deals=45).steps


def test_long_run_reports_a_failing_deal_from_a_worker(monkeypatch, tmp_path, capsys):
    script = _invariants_script()
    import oracles.invariants as inv

    monkeypatch.setattr(inv, "ref_winner", lambda cards, strain: 0)
    # one process: the monkeypatched checker runs in this process
    assert script.main(["--preset", "duel", "--count", "20", "--chunk", "10", "--no-progress"]) == 1
    assert "last trick's winner" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main(["--preset", "duel", "--count", "20", "--workers", "0"])
