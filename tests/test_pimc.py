"""PIMC agents (agents/search/pimc.py): registry names, legal play in every preset, the time
budget, and the auction on the bazar ladder."""

from __future__ import annotations

import numpy as np
import pytest

from agents.arena import play_table
from agents.random_agent import RandomAgent
from agents.registry import UnknownAgentError, make_agent
from agents.search.pimc import PIMCAgent
from blot_env.engine import apply_action, current_seat, deal_random, legal_actions
from blot_env.rules_config import PRESETS, make_rules
from blot_env.state import Phase
from blot_env.view import seat_view


def test_registry_names():
    a = make_agent("pimc-64")
    assert isinstance(a, PIMCAgent) and a.k == 64 and not a.weighted and a.name == "pimc-64"
    b = make_agent("pimc-insane")
    assert isinstance(b, PIMCAgent) and b.k == 256 and b.weighted
    c = make_agent("pimc-8:0.25")
    assert c.k == 8 and c.time_budget == 0.25
    for bad in ("pimc-0", "pimc-x", "pimc-8:soon"):
        with pytest.raises(UnknownAgentError):
            make_agent(bad)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_pimc_plays_legal_cards_late_in_deals(preset):
    """From random positions near the end of deals, PIMC picks legal actions to the end."""
    cfg = make_rules(preset)
    rng = np.random.default_rng(31)
    agent = PIMCAgent(k=3)
    done = 0
    while done < 3:
        s = deal_random(cfg, rng, int(rng.integers(cfg.num_players)))
        ra = RandomAgent()
        while s.phase == Phase.AUCTION:
            s = apply_action(s, ra.act(seat_view(s, current_seat(s)), rng))
        if s.phase != Phase.PLAY:
            continue
        while s.phase == Phase.PLAY and s.trick_no < cfg.num_tricks - 3:
            a = legal_actions(s)
            s = apply_action(s, a[rng.integers(len(a))])
        while s.phase == Phase.PLAY:
            view = seat_view(s, current_seat(s))
            a = agent.act(view, rng)
            assert a in view.legal
            s = apply_action(s, a)
        done += 1


def test_pimc_full_bazar_deal_with_time_budget():
    """A whole bazar deal (auction included) with a zero time budget: one world per card."""
    cfg = make_rules("bazar")
    rng = np.random.default_rng(5)
    pimc = PIMCAgent(k=16, time_budget=0.0, bid_worlds=1)
    passer = RandomAgent(pass_prob=1.0)
    agents = [pimc, passer, pimc, passer]
    rngs = [np.random.default_rng(i) for i in range(4)]
    for _ in range(1):
        final, _, _ = play_table(deal_random(cfg, rng), agents, rngs)
        assert final.phase == Phase.DONE


def test_pimc_is_deterministic_given_the_generator():
    cfg = make_rules("bazar-app")
    s = deal_random(cfg, np.random.default_rng(3))
    ra = RandomAgent()
    rng = np.random.default_rng(0)
    while s.phase == Phase.AUCTION or s.trick_no < 5:
        if s.phase == Phase.DONE:
            s = deal_random(cfg, rng)
            continue
        s = apply_action(s, ra.act(seat_view(s, current_seat(s)), rng))
    view = seat_view(s, current_seat(s))
    a1 = PIMCAgent(k=6).act(view, np.random.default_rng(42))
    a2 = PIMCAgent(k=6).act(view, np.random.default_rng(42))
    assert a1 == a2
