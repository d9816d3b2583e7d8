"""PhaseSplitAgent (one agent bids, another plays) and scripts/phase_swap.py: the calls come from
the bidder and everything after the auction from the player; the auction-agreement count
gives 1 for a deterministic agent against itself and less for a sampling one."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_script

from agents.arena import deal_state, evaluate, load_suite
from agents.base import CallableAgent, PhaseSplitAgent
from agents.registry import make_agent
from blot_env.engine import apply_action, current_seat, is_terminal
from blot_env.rules_config import make_rules
from blot_env.state import Phase
from blot_env.view import seat_view

phase_swap = load_script("phase_swap")


@pytest.mark.parametrize("preset", ["bazar", "duel"])
def test_calls_from_the_bidder_the_rest_from_the_player(preset):
    cfg = make_rules(preset)
    seen = {"bidder": [], "player": []}

    def recorder(who, pick):
        def fn(view, rng):
            seen[who].append(view.phase)
            return pick(view)
        return CallableAgent(fn, who)

    # the bidder takes the last legal call, the player the first legal action: both legal, and
    # each differs from what the other part would pick on most decisions
    agent = PhaseSplitAgent(recorder("bidder", lambda v: v.legal[-1]), recorder("player", lambda v: v.legal[0]))
    assert agent.name == "bidder+player"
    rng = np.random.default_rng(1)
    plays = 0
    for deal in load_suite(preset, "dev")[:6]:
        state = deal_state(cfg, deal)
        while not is_terminal(state):
            view = seat_view(state, current_seat(state))
            a = agent.act(view, rng)
            assert a == (view.legal[-1] if state.phase == Phase.AUCTION else view.legal[0])
            plays += state.phase != Phase.AUCTION
            state = apply_action(state, a)
    assert seen["bidder"] and set(seen["bidder"]) == {Phase.AUCTION}
    assert len(seen["player"]) == plays > 0 and Phase.AUCTION not in set(seen["player"])


def test_split_of_an_agent_with_itself_plays_as_the_agent():
    """rules-medium+rules-medium is the same agent as rules-medium, generator included (its
    calls sample deals): the same boards give the same scores."""
    cfg = make_rules("bazar")
    deals = load_suite("bazar", "dev")[:2]
    split = PhaseSplitAgent(make_agent("rules-medium", cfg), make_agent("rules-medium", cfg))
    a = evaluate(split, "random", cfg, deals, seed=3)
    b = evaluate("rules-medium", "random", cfg, deals, seed=3)
    assert [t.diff for x in a.boards for t in x.tables] == [t.diff for x in b.boards for t in x.tables]


def test_reset_reaches_both_parts():
    calls = []

    class Part(CallableAgent):
        def reset(self):
            calls.append(self.name)

    PhaseSplitAgent(Part(lambda v, r: v.legal[0], "a"), Part(lambda v, r: v.legal[0], "b")).reset()
    assert calls == ["a", "b"]


def test_make_spec_names_and_errors():
    agent = phase_swap.make_spec("rules-medium+rules", "bazar")
    assert isinstance(agent, PhaseSplitAgent) and agent.name == "rules-medium+rules"
    assert (agent.bidder.name, agent.player.name) == ("rules-medium", "rules")
    assert not isinstance(phase_swap.make_spec("rules", "bazar"), PhaseSplitAgent)
    for bad in ("rules+", "+rules", "rules+random+rules"):
        with pytest.raises(ValueError, match="BIDDER\\+PLAYER"):
            phase_swap.make_spec(bad, "bazar")
    with pytest.raises(ValueError, match="unknown agent"):
        phase_swap.make_spec("rules+nobody", "bazar")


def test_auction_agreement_counts():
    deals = load_suite("bazar", "dev")[:5]
    res = phase_swap.auction_agreement("rules", ["rules", "random"], "bazar", deals)
    same, n = res["rules (again)"]
    assert n > 5 * 4 - 1 and same == n  # deterministic: every call again
    assert res["rules"] == (n, n)
    assert res["random"][1] == n and res["random"][0] < n
    # each judge draws from its own generator: a judge listed after it changes no count
    alone = phase_swap.auction_agreement("random", ["random"], "bazar", deals)
    more = phase_swap.auction_agreement("random", ["random", "rules-medium"], "bazar", deals)
    assert more["random (again)"] == alone["random (again)"] and more["random"] == alone["random"]
    # a sampling agent disagrees with itself sometimes (as rules-medium, which bids from sampled deals)
    rnd = phase_swap.auction_agreement("random", [], "bazar", deals)
    assert rnd["random (again)"][0] < rnd["random (again)"][1]


def test_cli_table_and_errors(capsys):
    assert phase_swap.main(["--agent", "rules+random", "--vs", "random+rules", "--boards", "2", "--workers", "1",
                            "--json"]) == 0
    import json

    rep = json.loads(capsys.readouterr().out)
    assert rep["rows"][0]["agent"] == "rules+random" and rep["rows"][0]["opponent"] == "random+rules"
    assert rep["rows"][0]["boards"] == 2
    assert phase_swap.main(["--agreement", "random", "--with", "rules", "--deals", "2", "--json"]) == 0
    agr = json.loads(capsys.readouterr().out)
    assert [r["agent"] for r in agr["rows"]] == ["random (again)", "rules"] and agr["deals"] == 2
    assert all(0 <= r["same"] <= r["decisions"] and r["ci95"][0] <= r["agreement"] <= r["ci95"][1]
               for r in agr["rows"])
    for argv, msg in ((["--boards", "2"], "at least one --vs"),
                      (["--vs", "rules+nobody", "--boards", "2"], "unknown agent"),
                      (["--vs", "rules", "--preset", "duel", "--mixed", "--boards", "2"], "4-player"),
                      (["--agreement", "rules", "--vs", "random"], "--agreement plays REF's own deals"),
                      (["--vs", "rules", "--with", "random"], "--with is for --agreement"),
                      (["--agreement", "rules", "--deals", "999999"], "suite has"),
                      (["--vs", "rules", "--preset", "bazaar"], "invalid choice")):
        with pytest.raises(SystemExit) as e:
            phase_swap.main(argv)
        assert e.value.code == 2
        assert msg in capsys.readouterr().err, argv
