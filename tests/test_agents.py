"""The baseline agents: legal actions everywhere, no hidden information, the rules they follow."""

from __future__ import annotations

import dataclasses
import inspect
from collections import Counter

import numpy as np
import pytest
from conftest import act, build, deal

from agents import as_policy, make_agent
from agents.base import Agent, CallableAgent, check_action
from agents.baselines.medium_agent import MediumAgent, deal_unseen, knowledge, may_beat, medium_card, playout
from agents.baselines.random_agent import RandomAgent
from agents.baselines.rules_agent import RulesAgent, greedy_card, no_losers, own_value, team_estimate
from agents.registry import UnknownAgentError, known_agents
from blot_env.actions import layout_for
from blot_env.cards import NT, cards_of, mask_of, parse_card, parse_cards
from blot_env.engine import apply_action, current_seat, deal_random, is_terminal, new_deal
from blot_env.rules_config import PRESETS, make_rules
from blot_env.view import SeatView, seat_view


def _agents():
    # a lighter L2 for the sweep: the legality of its answers does not depend on the sample count
    return [RandomAgent(), RulesAgent(), MediumAgent(samples=3, condition_tries=2)]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_agents_only_return_legal_actions(preset):
    """Every agent answers every decision of random deals with a legal action (all presets,
    declaration steps included); the deals are driven by a random mix of the agents."""
    cfg = make_rules(preset)
    lay = layout_for(cfg)
    agents = _agents()
    rng = np.random.default_rng(7)
    blocks = Counter()
    deals = 10 if cfg.num_players == 4 else 16
    for d in range(deals):
        state = deal_random(cfg, rng, d % cfg.num_players)
        drivers = [agents[int(rng.integers(len(agents)))] for _ in range(cfg.num_players)]
        for a in agents:
            a.reset()
        while not is_terminal(state):
            seat = current_seat(state)
            view = seat_view(state, seat)
            for a in agents:
                got = a.act(view, np.random.default_rng(int(rng.integers(1 << 30))))
                assert got in view.legal, (preset, a.name, lay.describe(got))
            blocks.update({lay.block_of[x] for x in view.legal})
            state = apply_action(state, drivers[seat].act(view, rng))
    assert blocks["PLAY"] > 0
    if cfg.declarations == "manual":
        assert blocks["ANNOUNCE"] > 0 and blocks["SHOW"] > 0


def test_default_medium_agent_plays_whole_deals_legally():
    cfg = make_rules("bazar")
    agent = MediumAgent()
    rng = np.random.default_rng(3)
    for d in range(3):
        state = deal_random(cfg, rng, d)
        agent.reset()
        while not is_terminal(state):
            view = seat_view(state, current_seat(state))
            a = agent.act(view, rng)
            assert a in view.legal
            state = apply_action(state, a)


def test_agents_take_only_a_seat_view():
    """Agents get a SeatView (no State); it holds no other seat's cards, and decisions do
    not change when the hidden cards are dealt differently."""
    for a in (RandomAgent(), RulesAgent(), MediumAgent()):
        assert isinstance(a, Agent)
        params = list(inspect.signature(a.act).parameters.values())
        assert [p.name for p in params] == ["view", "rng"]
        assert params[0].annotation in (SeatView, "SeatView")
    names = {f.name for f in dataclasses.fields(SeatView)}
    assert not names & {"hands", "start_hands", "play_hands", "stock", "state"}
    cfg = make_rules("bazar")
    rng = np.random.default_rng(11)
    for _ in range(15):
        s1 = deal_random(cfg, rng, 3)
        h = list(s1.hands)
        # swap hidden cards between seats 1 and 3 (seat 0 speaks first and sees neither)
        c1, c3 = cards_of(h[1]), cards_of(h[3])
        k = int(rng.integers(1, 8))
        h[1] = mask_of(c3[:k] + c1[k:])
        h[3] = mask_of(c1[:k] + c3[k:])
        s2 = new_deal(cfg, 3, h)
        v1, v2 = seat_view(s1, 0), seat_view(s2, 0)
        assert v1 == v2
        for a in (RulesAgent(), MediumAgent()):
            assert a.act(v1, np.random.default_rng(5)) == a.act(v2, np.random.default_rng(5))


def test_random_agent_passes_more_often_in_the_auction():
    cfg = make_rules("bazar")
    view = seat_view(deal_random(cfg, np.random.default_rng(0), 3), 0)
    lay = layout_for(cfg)
    agent = RandomAgent()
    rng = np.random.default_rng(1)
    picks = [agent.act(view, rng) for _ in range(2000)]
    share = sum(lay.block_of[a] == "PASS" for a in picks) / len(picks)
    assert 0.76 < share < 0.84
    assert len(set(picks)) > 50  # the bids are spread over the ladder
    with pytest.raises(ValueError):
        RandomAgent(pass_prob=1.5)


# ---------------------------------------------------------------------------- L1 rules

HANDS_KAPUT = ["JH 9H AH TH KH AC AD AS", "7C 8C 9C TC 7D 8D 9D TD", "JC QC KC JD QD KD 7H 8H",
               "9S TS JS QS KS 7S 8S QH"]


def test_rules_agent_bids_kaput_with_a_hand_without_losers():
    assert no_losers(parse_mask("JH 9H AH TH KH AC AD AS"), 2)
    assert not no_losers(parse_mask("JH 9H AH TH KH AC AD KS"), 2)
    for preset, want in (("bazar-app", "bid kaput H"), ("bazar", "bid kaput")):
        state = deal(HANDS_KAPUT, dealer=3, preset=preset)
        view = seat_view(state, 0)
        lay = layout_for(state.cfg)
        got = lay.describe(RulesAgent().act(view, np.random.default_rng(0)))
        assert got.startswith(want), (preset, got)


def parse_mask(text: str) -> int:
    return mask_of(parse_cards(text))


def test_rules_agent_opens_supports_and_passes():
    # seat 0: strong hearts; seat 1 weak; seat 2: partner with side aces; seat 3 the rest
    h0, h1, h2 = "JH 9H AH KH AC TC 7D 7S", "7C 8C 9C 8D 9D TD 8S 9S", "TH 8H 7H AS TS AD QC JC"
    h3 = "QH KC JD QD KD JS QS KS"
    state = deal([h0, h1, h2, h3], dealer=3)
    lay = layout_for(state.cfg)
    agent = RulesAgent()
    first = lay.describe(agent.act(seat_view(state, 0), np.random.default_rng(0)))
    assert first.startswith("bid ") and first.endswith("H")
    state = act(state, [first])
    assert lay.describe(agent.act(seat_view(state, 1), np.random.default_rng(0))) == "pass"
    state = act(state, ["pass"])
    support = lay.describe(agent.act(seat_view(state, 2), np.random.default_rng(0)))
    assert support.startswith("bid ") and support.endswith("H")
    assert int(support.split()[1][:-1]) > int(first.split()[1][:-1])
    # support once: the opener does not raise the partner's raise again
    state = act(state, [support, "pass"])
    assert lay.describe(agent.act(seat_view(state, 0), np.random.default_rng(0))) == "pass"


def test_rules_agent_contras_an_overbid_with_the_trump_jack_and_nine():
    hands = ["JS 9S 7C 8C AH AD 7D 8D", "AS TS KS QS 8S 7S KH QH", "9C TC JC QC KC AC 9D TD",
             "JD QD KD 7H 8H 9H TH JH"]
    # seat 0 passes, seat 1 bids 12 spades, seats 2 and 3 pass: seat 0 holds the J and 9 of
    # spades and two aces, too little to outbid 12 but enough to expect the bid to fail
    state = build(hands, ["pass", "bid 12S", "pass", "pass"], dealer=3)
    lay = layout_for(state.cfg)
    got = lay.describe(RulesAgent().act(seat_view(state, 0), np.random.default_rng(0)))
    assert got == "contra"
    # without the jack and nine of trumps L1 does not contra
    state2 = build(["AS 9S 7C 8C AH AD 7D 8D", "JS TS KS QS 8S 7S KH QH", hands[2], hands[3]],
                   ["pass", "bid 12S", "pass", "pass"], dealer=3)
    assert lay.describe(RulesAgent().act(seat_view(state2, 0), np.random.default_rng(0))) == "pass"


def test_greedy_card_wins_cheaply_and_discards_low():
    # trump hearts; seat 1 follows a led 7S; holds AS TS 8S: the cheapest winner is 8S
    hand = parse_mask("AS TS 8S 7D")
    legal = parse_mask("AS TS 8S")
    assert greedy_card(hand, legal, [parse_card("7S")], [0], 1, 2, 0, 4) == parse_card("8S")
    # partner (seat 0) winning: discard the cheapest card
    assert greedy_card(hand, legal, [parse_card("AS"), parse_card("9S")], [0, 1], 2, 2, 0, 4) == parse_card("8S")
    # cannot win: lowest cost
    hand2 = parse_mask("7S TS 8D")
    legal2 = parse_mask("7S TS")
    assert greedy_card(hand2, legal2, [parse_card("AS")], [1], 2, 2, 0, 4) == parse_card("7S")
    # bidding side leads the trump jack
    hand3 = parse_mask("JH 7H AS 8D")
    assert greedy_card(hand3, hand3, [], [], 0, 2, 0, 4) == parse_card("JH")


def test_hand_evaluation_orders_hands_sensibly():
    strong = parse_mask("JH 9H AH TH AS AD AC 7S")
    weak = parse_mask("7H 8C 9C 7D 8D 9S 8S 7C")
    assert own_value(strong, 2) > own_value(weak, 2) + 80
    assert team_estimate(strong, 2, make_rules("bazar")) > 130
    assert own_value(parse_mask("AS AH AD AC TS TH 7D 8D"), NT) > own_value(parse_mask("AS AH AD AC TS TH 7D 8D"), 0)


def test_manual_declarations_announce_best_class_and_concede_correctly():
    # seat 0 (first hand) and seat 1 both hold a terz; the contract is hearts
    hands = ["QS KS AS 7C 8C 9D 7H 8H", "9C TC JC 7D 8D TD QH KH", "JH 9H AH TH AC KC QC JD",
             "7S 8S 9S TS JS QD KD AD"]
    state = build(hands, ["pass", "pass", "bid 10H", "pass", "pass", "pass", "pass"], dealer=3)
    lay = layout_for(state.cfg)
    agent = RulesAgent()
    rng = np.random.default_rng(0)
    a0 = lay.describe(agent.act(seat_view(state, 0), rng))
    assert a0 == "announce terz"
    state = act(state, [a0, "play 7C"])
    a1 = lay.describe(agent.act(seat_view(state, 1), rng))
    assert a1 == "announce terz"
    state = act(state, [a1])
    # seat 1's terz tops at J of clubs, below seat 0's terz to the ace: it states its height
    assert lay.describe(agent.act(seat_view(state, 1), rng)) == "height"
    state = act(state, ["height"])
    # seat 0 answers: its terz to the ace beats a stated jack -> reveal
    assert current_seat(state) == 0
    assert lay.describe(agent.act(seat_view(state, 0), rng)) == "reveal"


def test_claim_comparison_concedes_to_a_higher_height():
    hands = ["9C TC JC 7D 8D TD 7H 8H", "QS KS AS 7C 8C 9D QH KH", "JH 9H AH TH AC KC QC JD",
             "7S 8S 9S TS JS QD KD AD"]
    state = build(hands, ["pass", "pass", "bid 10H", "pass", "pass", "pass", "pass",
                          "announce terz", "play 7D", "announce terz", "height"], dealer=3)
    lay = layout_for(state.cfg)
    assert current_seat(state) == 0
    assert lay.describe(RulesAgent().act(seat_view(state, 0), np.random.default_rng(0))) == "concede"


# ---------------------------------------------------------------------------- L2 medium


def test_knowledge_tracks_played_cards_and_voids():
    hands = ["JH 9H AH TH AC KC QC JD", "QS KS AS 7C 8C 9D QH KH", "9C TC JC 7D 8D TD 7H 8H",
             "7S 8S 9S TS JS QD KD AD"]
    # seat 0 leads AC; seat 1 follows 7C; seat 2 follows 9C; seat 3 has no clubs and no trump:
    state = build(hands, ["bid 10H", "pass", "pass", "pass", "pass", "announce none", "play AC",
                          "announce none", "play 7C", "announce none", "play 9C", "announce none",
                          "play 7S"], dealer=3)
    kn = knowledge(seat_view(state, 0))
    assert kn.played == parse_mask("AC 7C 9C 7S")
    assert kn.voids[3] == (1 << 0) | (1 << 2)  # clubs and hearts (it did not ruff an opponent's trick)
    assert kn.voids[1] == 0
    assert not kn.outstanding & kn.played


def test_may_beat_and_feeding_partner():
    hands = ["JH 9H AH TH AC KC QC JD", "QS KS AS 7C 8C 9D QH KH", "9C TC JC 7D 8D TD 7H 8H",
             "7S 8S 9S TS JS QD KD AD"]
    state = build(hands, ["bid 10H", "pass", "pass", "pass", "pass", "announce none", "play AC",
                          "announce none", "play 7C", "announce none"], dealer=3)
    view = seat_view(state, 2)
    kn = knowledge(view)
    # partner's AC is the top club; seat 3 might still ruff (no void known) but cannot overtake in clubs
    assert not may_beat(3, parse_card("AC"), 0, 2, kn)
    legal = sum(1 << (a - layout_for(state.cfg).blocks["PLAY"].start) for a in view.legal)
    # feed the partner the ten of clubs
    assert medium_card(view, legal, kn) == parse_card("TC")
    assert greedy_card(view.hand, legal, view.trick, view.trick_seats, 2, 2, 0, 4) == parse_card("9C")


def test_deal_unseen_respects_counts_and_voids():
    rng = np.random.default_rng(0)
    unseen = list(range(8, 32))  # all but clubs
    counts = {1: 8, 2: 8, 3: 8}
    voids = {1: 1 << 1, 3: 1 << 2}  # seat 1 no diamonds, seat 3 no hearts
    for _ in range(50):
        d = deal_unseen(unseen, counts, voids, rng)
        assert sorted(cards_of(d[1] | d[2] | d[3])) == unseen
        assert all(d[q].bit_count() == 8 for q in counts)
        assert not d[1] & (0xFF << 8)
        assert not d[3] & (0xFF << 16)
    with pytest.raises(ValueError):
        deal_unseen(unseen, {1: 3}, {}, rng)


def test_playout_conserves_points_and_tricks():
    cfg = make_rules("bazar")
    rng = np.random.default_rng(4)
    for strain in range(5):
        st = deal_random(cfg, rng, 3)
        tricks, points = playout(cfg, st.hands, strain, 0, 0)
        assert sum(tricks) == 8
        assert sum(points) == 162


# ---------------------------------------------------------------------------- registry and adapters


def test_registry_names_and_errors():
    for name in ("random", "rules", "rules-medium", "L1", "medium"):
        a = make_agent(name, preset="bazar")
        assert isinstance(a, Agent)
    assert make_agent("rules").name == "rules"
    assert make_agent("L2").name == "rules-medium"
    with pytest.raises(UnknownAgentError, match="known: random, rules, rules-medium"):
        make_agent("grandmaster")
    with pytest.raises(UnknownAgentError, match="not found"):
        make_agent("no/such/checkpoint.pt")
    assert "ppo" in known_agents()


def test_registry_splits_bidder_and_player():
    """``BIDDER+PLAYER`` is a PhaseSplitAgent of the two named agents (aliases resolved), named
    as written; a '+' that does not join two names is refused with the pattern named."""
    from agents.base import PhaseSplitAgent

    a = make_agent("L2+random", preset="bazar")
    assert isinstance(a, PhaseSplitAgent) and a.name == "L2+random"
    assert isinstance(a.bidder, MediumAgent) and isinstance(a.player, RandomAgent)
    assert "BIDDER+PLAYER" in known_agents()
    for bad in ("rules+", "+rules", "rules+random+rules", " + "):
        with pytest.raises(UnknownAgentError, match=r"expected BIDDER\+PLAYER"):
            make_agent(bad)
    with pytest.raises(UnknownAgentError, match="unknown agent 'nobody'"):
        make_agent("rules+nobody")
    with pytest.raises(UnknownAgentError, match=r"checkpoint 'no/such\+file.pt' not found"):
        make_agent("no/such+file.pt")


def test_a_policy_path_holding_a_plus_is_a_path(tmp_path):
    """A file whose path holds a '+' is that file, bare or after ``ppo:`` / ``ppo-search-K:``;
    ``ppo:PATH+rules`` splits into the file's calls and ``rules``' cards."""
    pytest.importorskip("torch")
    import shutil

    from agents.base import PhaseSplitAgent
    from agents.ppo.agent import PPOAgent, shipped_path

    path = tmp_path / "a+b" / "x+y.pt"
    path.parent.mkdir()
    shutil.copy(shipped_path("bazar"), path)
    for name in (str(path), f"ppo:{path}"):
        assert type(make_agent(name, preset="bazar")) is PPOAgent
    assert make_agent(f"ppo-search-2:{path}", preset="bazar").net is not None
    plain = tmp_path / "x.pt"                                     # a part of a split holds no '+'
    shutil.copy(shipped_path("bazar"), plain)
    split = make_agent(f"ppo:{plain}+rules", preset="bazar")
    assert isinstance(split, PhaseSplitAgent) and isinstance(split.bidder, PPOAgent)
    assert isinstance(split.player, RulesAgent)


def test_registry_resolves_ppo_lazily(monkeypatch, tmp_path):
    """"ppo", "ppo:NAME" and checkpoint paths go to agents.ppo.agent.load_ppo_agent(path_or_name, cfg)."""
    import sys
    import types

    calls = []

    def fake_load(path_or_name, cfg):
        calls.append((str(path_or_name), cfg.preset))
        return RulesAgent(name="")

    fake = types.ModuleType("agents.ppo.agent")
    fake.load_ppo_agent = fake_load
    monkeypatch.setitem(sys.modules, "agents.ppo.agent", fake)
    ckpt = tmp_path / "best.pt"
    ckpt.write_bytes(b"")
    assert make_agent("ppo", preset="bazar-app").name == "ppo"
    make_agent("ppo:other", preset="bazar")
    make_agent(str(ckpt), preset="bazar")
    assert calls == [("ppo", "bazar-app"), ("other", "bazar"), (str(ckpt), "bazar")]


def test_policy_adapter_and_callable_agent():
    cfg = make_rules("bazar")
    state = deal_random(cfg, np.random.default_rng(0), 3)
    pol = as_policy(RulesAgent(), 0)
    view = seat_view(state, 0)
    assert pol(view) in view.legal
    pol.reset()
    first = CallableAgent(lambda v, r: v.legal[0], name="first")
    assert first.act(view, np.random.default_rng(0)) == view.legal[0]
    assert check_action(view, view.legal[0]) == view.legal[0]
    with pytest.raises(ValueError, match="not legal"):
        check_action(view, layout_for(cfg).play_id(0))


def test_policy_adapter_plays_in_the_single_agent_env():
    """as_policy(agent, rng) is a Callable[[SeatView], int] the gym wrapper accepts as opponent."""
    gym_env = pytest.importorskip("blot_env.gym_env")
    import gymnasium

    e = gymnasium.make(gym_env.gym_id("bazar"), opponents=as_policy(MediumAgent(samples=3), 0))
    e.reset(seed=1)
    done, steps = False, 0
    while not done and steps < 200:
        mask = e.unwrapped.action_masks()
        a = int(np.flatnonzero(mask)[0])
        _, _, term, trunc, _ = e.step(a)
        done = term or trunc
        steps += 1
    assert done
