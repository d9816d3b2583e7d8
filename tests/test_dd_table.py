"""agents/search/dd_table.py and scripts/dd_table.py: the double-dummy table of a deal scores
every contract as ``solve`` does; X does not depend on a number contract's level, declarer or
contra (kaput contracts search another game); the command resumes and refuses bad input."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import deal

from agents.search import dd_table as T
from agents.search import solver
from blot_env.actions import layout_for
from blot_env.cards import DEAL_POINTS
from blot_env.engine import current_seat, legal_actions
from blot_env.rules_config import make_rules
from blot_env.state import Contract

_PATH = Path(__file__).resolve().parents[1] / "scripts" / "dd_table.py"
_SPEC = importlib.util.spec_from_file_location("dd_table_script", _PATH)
script = importlib.util.module_from_spec(_SPEC)
sys.modules["dd_table_script"] = script
_SPEC.loader.exec_module(script)


def _solve_team0(state) -> int:
    """``solve``'s value at a first-lead state, turned to team 0's side."""
    value, _ = solver.solve(state)
    return value if current_seat(state) % 2 == 0 else -value


def _x(state) -> int:
    return solver.position_code(solver.advance_declarations(state))


def _sweep(x: int, total: int, team: int) -> bool:
    return x == (3 * total + 2 if team == 0 else 0)


def test_number_contracts_share_x_kaput_contracts_do_not():
    """The claim dd_score rests on: for number contracts of one strain, X from the first lead
    is the same whatever the level, the declarer's team and the contra; a kaput contract's
    early stop gives another X, but the declarers sweep in it iff they sweep in the number
    contract's X."""
    differs = 0
    for preset, deals in (("bazar", 2), ("belote", 1)):
        cfg = make_rules(preset)
        lay = layout_for(cfg)
        for i in range(deals):
            st0 = T.deal_state(cfg, 11, i)
            fh = st0.first_hand
            for strain in lay.strains:
                xs = {_x(T.contract_state(st0, seat, strain, value, double=dbl))
                      for seat, value, dbl in ((fh, cfg.bid_min, 0), ((fh + 1) % 4, cfg.bid_min + 4 * cfg.bid_step, 1),
                                               ((fh + 2) % 4, cfg.bid_min + cfg.bid_step, 2),
                                               ((fh + 3) % 4, cfg.bid_min + 2 * cfg.bid_step, 0))}
                assert len(xs) == 1, (preset, i, strain, xs)
                if not lay.has("KAPUT"):
                    continue
                (x,) = xs
                for seat in (fh, (fh + 1) % 4):
                    xk = _x(T.contract_state(st0, seat, strain, kind="kaput"))
                    differs += xk != x
                    assert _sweep(xk, DEAL_POINTS, seat % 2) == _sweep(x, DEAL_POINTS, seat % 2)
    assert differs > 0  # the early stop does change X (here in most cases)


def test_dd_score_matches_solve_bazar():
    """Number contracts (every declarer's team, levels, contra, recontra), kaput, kaput under
    contra and kaput+N, on seeded deals and on a deal where the first hand sweeps and has
    declaration choices at the first lead."""
    cfg = make_rules("bazar")
    lay = layout_for(cfg)
    sweep = deal(["7H 8H 9H 10H JH QH KH AH", "7C 8C 9C 10C JC QC KC AC", "7D 8D 9D 10D JD QD KD AD",
                  "7S 8S 9S 10S JS QS KS AS"])
    cases = [(T.deal_state(cfg, 3, i), T.build_row(cfg, 3, i)) for i in range(2)]
    cases.append((sweep, T.row_of_deal(sweep)))
    checked = kaputs = made_kaputs = 0
    for st0, row in cases:
        fh = st0.first_hand
        for strain in (lay.strains if st0 is not sweep else (2, 0)):
            contracts = [dict(seat=fh, value=9), dict(seat=(fh + 1) % 4, value=12, double=1),
                         dict(seat=(fh + 2) % 4, value=8, double=2), dict(seat=(fh + 1) % 4, kind="kaput"),
                         dict(seat=fh, kind="kaput", double=1)]
            kp = [a for a in legal_actions(st0) if lay.block_of[a] == "KAPUT_PLUS" and lay.params[a][1] == strain]
            contracts += [dict(seat=fh, kind="kaput_plus", plus=lay.params[a][0]) for a in kp[:2]]
            for spec in contracts:
                st = T.contract_state(st0, strain=strain, **spec)
                got = T.dd_score(row, st.contract)
                assert got == _solve_team0(st), (spec, strain)
                checked += 1
                kaputs += st.contract.is_kaput
                made_kaputs += st.contract.is_kaput and (got > 0) == (st.contract.seat % 2 == 0)
    assert int(cases[-1][1]["options"][2]) > 1  # the first hand chooses between announcements
    assert checked >= 50 and kaputs >= 20 and made_kaputs >= 2


@pytest.mark.parametrize("preset", ["bazar-app", "belote"])
def test_dd_score_matches_solve_auto_presets(preset):
    cfg = make_rules(preset)
    lay = layout_for(cfg)
    st0 = T.deal_state(cfg, 4, 0)
    row = T.build_row(cfg, 4, 0)
    top = cfg.bid_min + 6 * cfg.bid_step
    for strain in lay.strains:
        specs = [dict(seat=st0.first_hand, value=cfg.bid_min), dict(seat=(st0.first_hand + 3) % 4, value=top, double=1)]
        if lay.has("KAPUT"):
            specs.append(dict(seat=(st0.first_hand + 1) % 4, kind="kaput"))
        for spec in specs:
            st = T.contract_state(st0, strain=strain, **spec)
            assert T.dd_score(row, st.contract) == _solve_team0(st), (spec, strain)


def test_dd_score_matches_solve_duel():
    """Every outcome of the duel's trump choice (taker, keep / leave) on seeded deals,
    including first hands with declaration choices."""
    cfg = make_rules("duel")
    slots = choices = 0
    for i in range(4):
        row = T.build_row(cfg, 0, i)
        states = T.first_lead_states(T.row_deal(row))
        assert sorted(states) == [u for u in range(len(T.slot_keys(cfg))) if row["strain"][u] >= 0]
        for u, st in states.items():
            assert T.dd_score(row, st.contract) == _solve_team0(st), (i, T.slot_keys(cfg)[u])
            slots += 1
            choices += int(row["options"][u]) > 1
    assert slots >= 40 and choices >= 5


def test_rows_rebuild_their_deal_and_refuse_what_they_cannot_score():
    cfg = make_rules("duel")
    row = T.build_row(cfg, 2, 5)
    st = T.deal_state(cfg, 2, 5)
    back = T.row_deal(row)
    assert (back.dealer, back.start_hands, back.stock) == (st.dealer, st.start_hands, st.stock)
    empty = [u for u, s in enumerate(row["strain"]) if s < 0]
    assert empty  # the open card's suit cannot be named
    seat, call = T.slot_keys(cfg)[empty[0]]
    with pytest.raises(T.DDTableError, match="cannot reach"):
        T.dd_score(row, Contract(seat=seat, strain=0, value=0, kind="name", plus=0, double=0, call=call))
    belote = T.build_row(make_rules("belote"), 0, 0)
    with pytest.raises(T.DDTableError, match="no slot"):
        T.dd_score(belote, T.number_contract(0, 4, 80))  # belote has no no-trump
    with pytest.raises(T.DDTableError, match="is a bid"):
        T.dd_score(belote, Contract(seat=0, strain=0, value=0, kind="take", plus=0, double=0, call=-1))
    with pytest.raises(T.DDTableError, match="got kind 'kaput'"):
        T.dd_score(belote, T.kaput_contract(0, 1))  # belote has no kaput bid


def _run(out: Path, deals: int, *extra: str) -> int:
    return script.main(["--preset", "duel", "--deals", str(deals), "--workers", "1", "--out", str(out), *extra])


def test_script_builds_resumes_and_matches_build_row(tmp_path, capsys):
    out = tmp_path / "t" / "duel.ddt"
    assert _run(out, 3) == 0
    head, rows = T.read_table(out)
    assert head["preset"] == "duel" and head["seed"] == 0 and list(rows["index"]) == [0, 1, 2]
    whole = out.read_bytes()
    out.write_bytes(whole + rows[0].tobytes()[:50])  # a row cut short by a kill
    assert list(T.read_table(out)[1]["index"]) == [0, 1, 2]
    assert _run(out, 5) == 0
    assert "2 deals solved" in capsys.readouterr().out  # deals 0-2 were not solved again
    assert out.read_bytes()[:len(whole)] == whole
    _, rows = T.read_table(out)
    assert list(rows["index"]) == [0, 1, 2, 3, 4]
    for r in rows:
        want = T.build_row(make_rules("duel"), 0, int(r["index"]))
        for name in want.dtype.names:
            if name != "cpu_seconds":
                assert np.array_equal(r[name], want[name]), name
    assert script.main(["--info", str(out), "--json"]) == 0
    assert '"rows": 5' in capsys.readouterr().out


def test_script_refuses_bad_arguments(tmp_path, capsys):
    out = tmp_path / "duel.ddt"
    assert _run(out, 1) == 0
    capsys.readouterr()
    assert script.main(["--preset", "bazar", "--deals", "1", "--out", str(out)]) == 2
    assert "preset duel seed 0, not bazar seed 0" in capsys.readouterr().err
    assert _run(out, 1, "--seed", "7") == 2
    assert "not duel seed 7" in capsys.readouterr().err
    junk = tmp_path / "junk.ddt"
    junk.write_bytes(b"hello\n")
    assert _run(junk, 1) == 2
    assert "not a double-dummy table" in capsys.readouterr().err
    for argv, msg in ((["--deals", "0"], "--deals: expected a positive integer"),
                      (["--deals", "2", "--workers", "0"], "--workers: expected a positive integer"),
                      (["--deals", "2", "--preset", "nope"], "invalid choice: 'nope'"),
                      (["--deals", "2", "--seed", "-1"], "--seed: expected an integer >= 0"),
                      (["--deals", "2"], "--deals and --out are required")):
        with pytest.raises(SystemExit) as e:
            script.main(argv + (["--out", str(out)] if argv != ["--deals", "2"] else []))
        assert e.value.code == 2
        assert msg in capsys.readouterr().err
