"""blot-play: the input parser, and a whole deal played through a pseudo-terminal."""

from __future__ import annotations

import os
import sys

import pytest
from conftest import REPO

from agents.play.game import Game, agents_for
from agents.play.terminal import InputError, parse_choice
from blot_env.actions import layout_for
from blot_env.record import load_records, replay_record
from blot_env.rules_config import make_rules


def test_parse_choice_accepts_names_numbers_and_symbols():
    lay = layout_for(make_rules("bazar"))
    legal = [lay.parse("pass"), lay.parse("bid 10S")]
    assert parse_choice("2", legal, lay) == lay.parse("bid 10S")
    assert parse_choice("  bid 10 s ", legal, lay) == lay.parse("bid 10S")
    assert parse_choice("9H", legal, lay) == lay.parse("play 9H")
    assert parse_choice("10♥", legal, lay) == lay.parse("play TH")
    assert parse_choice("kaput NT", legal, lay) == lay.parse("bid kaput NT")
    assert parse_choice("Announce Terz", legal, lay) == lay.parse("announce terz")
    assert parse_choice("CONTRA", legal, lay) == lay.parse("contra")
    with pytest.raises(InputError, match="no choice 3"):
        parse_choice("3", legal, lay)
    with pytest.raises(InputError, match="'xyz' is not an action of bazar"):
        parse_choice("xyz", legal, lay)
    with pytest.raises(InputError, match="nothing typed"):
        parse_choice("   ", legal, lay)


def test_game_match_rotates_dealer_and_keeps_totals():
    cfg = make_rules("duel-app", target=60)
    game = Game(cfg, agents_for(cfg, [], "rules"), seed=2, match=True)
    dealers = []
    while True:
        while not game.deal_over:
            game.bot_step()
        dealers.append(game.state.dealer)
        if game.over:
            break
        game.next_deal()
    rec = game.record()
    assert rec["format"] == "blot-match/1" and len(rec["deals"]) == len(dealers) >= 2
    assert dealers == [(dealers[0] + i) % 2 for i in range(len(dealers))]
    totals = [sum(replay_record({"preset": "duel-app", "rules": rec["rules"]} | d)[1]["score"][s]
                  for d in rec["deals"]) for s in (0, 1)]
    assert totals == rec["totals"] and max(totals) >= 60 and rec["winner"] in (0, 1)


def test_blot_play_in_a_pty_to_the_end_of_a_deal(tmp_path):
    pexpect = pytest.importorskip("pexpect", reason="the pseudo-terminal test needs pexpect (the test extra)")
    pytest.importorskip("rich", reason="blot-play needs rich (the play extra)")
    out = tmp_path / "deal.json"
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1", COLUMNS="120")
    child = pexpect.spawn(sys.executable, ["-m", "agents.play", "--preset", "duel-app", "--seat", "0",
                                           "--agents", "rules", "--seed", "5", "--save", str(out)],
                          env=env, cwd=str(tmp_path), encoding="utf-8", timeout=60, dimensions=(60, 120))
    try:
        child.expect("Your move> ")
        assert "Your choices" in child.before and "You (seat 0)" in child.before
        assert any(sym in child.before for sym in "♣♦♥♠")  # the hand is drawn with suit symbols
        child.sendline("xyzzy")  # mistyped
        child.expect("Not understood: 'xyzzy' is not an action of duel-app")
        child.expect("Your move> ")
        child.sendline("99")  # no such choice
        child.expect("there is no choice 99")
        child.expect("Your move> ")
        child.sendline("play 7C")  # an action of the preset, illegal in the auction
        child.expect("Not legal now: 'play 7C': the auction is not over")
        child.expect("Your move> ")
        moves = 0
        while True:
            child.sendline("1")
            moves += 1
            i = child.expect(["Your move> ", "record saved to"])
            if i == 1:
                break
            assert moves < 40
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0, child.before
    (rec,) = load_records(out)
    assert rec["players"] == ["human", "rules"]
    _, result = replay_record(rec)
    assert result is not None and result == rec["result"]
    assert moves >= 5  # the human took every one of seat 0's decisions of the deal


@pytest.mark.parametrize("args, needle", [
    (["--seed", "-1"], "argument --seed: expected an integer >= 0, got -1"),  # numpy's ValueError traceback
    (["--seed", "x"], "argument --seed: expected an integer >= 0, got 'x'"),
])
def test_blot_play_refuses_a_negative_seed(capsys, args, needle):
    from agents.play.cli import main

    with pytest.raises(SystemExit) as e:
        main([*args, "--no-save"])
    assert e.value.code == 2
    assert needle in capsys.readouterr().err


def test_blot_play_refuses_a_save_path_that_is_a_folder_before_the_game(tmp_path, capsys):
    """It used to fail with IsADirectoryError when saving, after the game, losing the record."""
    from agents.play.cli import main

    assert main(["--save", str(tmp_path), "--seed", "1"]) == 2
    assert f"--save {tmp_path} is a folder; give the record's file name" in capsys.readouterr().err
