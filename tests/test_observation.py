"""Observation encoders: layout from named pieces, egocentric values, bounds, docs kept current."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from blot_env import PRESETS, make_rules
from blot_env.actions import layout_for
from blot_env.cards import parse_cards
from blot_env.engine import apply_action, deal_random, is_terminal, legal_actions, new_deal
from blot_env.observation import KINDS, ObservationEncoder, observation_layout_markdown
from blot_env.view import seat_view

ROOT = Path(__file__).resolve().parents[1]


def _random_views(cfg, deals: int, seed: int):
    """Every seat's view at every step of ``deals`` random deals."""
    rng = np.random.default_rng(seed)
    for d in range(deals):
        s = deal_random(cfg, rng, d % cfg.num_players)
        while True:
            for seat in range(cfg.num_players):
                yield s, seat_view(s, seat)
            if is_terminal(s):
                break
            s = apply_action(s, int(rng.choice(legal_actions(s))))


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("kind", KINDS)
def test_pieces_tile_the_vector(preset, kind):
    for match in (False, True):
        enc = ObservationEncoder(make_rules(preset), kind, match=match)
        off = 0
        for p in enc.pieces:
            assert p.offset == off, p
            assert p.size == int(np.prod(p.shape)) and p.size > 0
            off += p.size
        assert off == enc.size
        assert len({p.name for p in enc.pieces}) == len(enc.pieces)
        assert enc.upper_bounds().shape == (enc.size,)


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("kind", KINDS)
def test_encodings_in_bounds_and_consistent(preset, kind):
    cfg = make_rules(preset)
    enc = ObservationEncoder(cfg, kind, match=True)
    hi = enc.upper_bounds()
    for state, view in _random_views(cfg, deals=6, seed=3):
        x = enc.encode(view, match=(40, 170))
        assert x.dtype == np.float32 and x.shape == (enc.size,)
        assert (x >= 0).all() and (x <= hi).all()
        parts = enc.split(x)
        # own hand, egocentric
        hand = np.flatnonzero(parts["hand"])
        assert list(hand) == [c for c in range(32) if view.hand >> c & 1]
        # cards played: relative seat r of (seat + r) % n
        n = cfg.num_players
        for s, c in state.plays:
            assert parts["played"][(s - view.seat) % n, c] == 1
        assert parts["played"].sum() == len(state.plays)
        assert parts["phase"].argmax() == int(state.phase)
        assert parts["dealer"].argmax() == (state.dealer - view.seat) % n
        if kind == "information_state":
            seq = parts["play_sequence"]
            for k, (s, c) in enumerate(state.plays):
                assert seq[k, c] == 1 and seq[k, 32 + (s - view.seat) % n] == 1
            assert seq.sum() == 2 * len(state.plays)


def test_egocentric_rotation_known_deal():
    """Seat 1 sees seat 0's play at relative seat 3 and its partner seat 3 at relative seat 2."""
    cfg = make_rules("bazar-app")
    hands = [parse_cards(h) for h in ("JH 9H AH TH KS QS 7C 8D", "7H 8H QH KH 7S 8S 9S TS",
                                      "JS AS 9C TC JC QC KC AC", "7D 9D TD JD QD KD AD 8C")]
    masks = [sum(1 << c for c in h) for h in hands]
    s = new_deal(cfg, 3, masks)  # seat 0 speaks first
    lay = layout_for(cfg)
    for a in ("bid 9H", "pass", "pass", "pass", "pass"):
        s = apply_action(s, lay.parse(a))
    s = apply_action(s, lay.parse("play JH"))  # seat 0 leads
    enc = ObservationEncoder(cfg, "observation")
    p1 = enc.split(enc.encode(seat_view(s, 1)))
    assert p1["played"][3, parse_cards("JH")[0]] == 1
    assert p1["trick"][3].sum() == 1 and p1["trick_leader"].argmax() == 3
    assert p1["declarer"].argmax() == 3 and p1["contract_strain"].argmax() == 2
    assert p1["to_act"].argmax() == 0  # seat 1 itself
    assert p1["last_call"][3][0] == 1  # seat 0's last call: its own 4th pass (rules.md 2.2)
    assert p1["standing_bid_seat"].argmax() == 3
    assert p1["standing_bid"].argmax() == lay.parse("bid 9H") - lay.blocks["BID"].start
    p0 = enc.split(enc.encode(seat_view(s, 0)))
    assert p0["declarer"].argmax() == 0 and p0["to_act"].argmax() == 1
    # tricks/points per relative side: after seat 0 wins the trick, seat 2 (partner) sees side 0
    for card in ("play 7H", "play 9C", "play 7D"):
        s = apply_action(s, lay.parse(card))
    p2 = enc.split(enc.encode(seat_view(s, 2)))
    p3 = enc.split(enc.encode(seat_view(s, 3)))
    assert p2["tricks_won"][0] > 0 and p2["tricks_won"][1] == 0
    assert p3["tricks_won"][1] > 0 and p3["tricks_won"][0] == 0


@pytest.mark.parametrize("preset", list(PRESETS))
def test_information_state_distinguishes_histories(preset):
    """Perfect recall: two different action histories of one seat's view never encode alike."""
    cfg = make_rules(preset)
    enc = ObservationEncoder(cfg, "information_state")
    seen: dict[tuple[int, bytes], tuple] = {}
    for state, view in _random_views(cfg, deals=8, seed=11):
        key = (view.seat, enc.encode(view).tobytes())
        info = (state.history, view.hand)  # every action is public; the hand is the seat's own
        assert seen.setdefault(key, info) == info
    assert len(seen) > 100


def test_match_pieces_encode_totals_egocentric():
    cfg = make_rules("bazar")
    enc = ObservationEncoder(cfg, "observation", match=True)
    s = deal_random(cfg, np.random.default_rng(0), 0)
    p0 = enc.split(enc.encode(seat_view(s, 0), match=(30, 120)))
    p1 = enc.split(enc.encode(seat_view(s, 1), match=(30, 120)))
    assert p0["match_score"][0] == pytest.approx(30 / 151) and p0["match_score"][1] == pytest.approx(120 / 151)
    assert p1["match_score"][0] == pytest.approx(120 / 151)
    assert p1["match_to_go"][1] == pytest.approx(121 / 151)


def test_bad_kind():
    with pytest.raises(ValueError, match="observation kind"):
        ObservationEncoder(make_rules("bazar"), "full")


def test_layout_markdown_lists_every_piece():
    cfg = make_rules("bazar")
    md = observation_layout_markdown(cfg, "information_state")
    for p in ObservationEncoder(cfg, "information_state").pieces:
        assert f"`{p.name}`" in md


def test_docs_are_current():
    spec = importlib.util.spec_from_file_location("gen_env_docs", ROOT / "scripts" / "gen_env_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = (ROOT / "docs" / "env.md").read_text(encoding="utf-8")
    assert mod.updated_doc(text) == text, "docs/env.md is stale: run python scripts/gen_env_docs.py"


VOID_RULES = [(p, {}) for p in PRESETS if p != "open"] + [("bazar", {"undertrump": "forced"}),
                                                           ("bazar", {"partner_exemption": False})]


@pytest.mark.parametrize(("preset", "knobs"), VOID_RULES, ids=[f"{p}{k or ''}" for p, k in VOID_RULES])
def test_voids_are_what_the_duties_of_1_3_prove(preset, knobs):
    """``voids`` (observation_voids) against ``legal_cards`` (rules.md 1.3). At each play, a suit's
    candidates are its cards of the deck not yet played: the play proves the seat void in the
    suit when the played card would be illegal beside any one of them. Every proof found is in
    the piece (and every led suit not followed), every bit is such a proof, and the seat never
    holds a suit shown void."""
    from blot_env.cards import NT, SUIT_MASKS
    from blot_env.engine import deck_mask
    from blot_env.play import legal_cards

    cfg = make_rules(preset, **knobs)
    n = cfg.num_players
    deck = deck_mask(cfg)
    enc = ObservationEncoder(cfg, "observation_voids")
    proofs = 0
    for state, view in _random_views(cfg, deals=12, seed=11):
        proven, allowed = set(), set()
        plays = state.plays
        strain = state.contract.strain if state.contract is not None else NT
        seen = 0
        for k, (seat, card) in enumerate(plays):
            start = k - k % n
            trick = tuple(c for _, c in plays[start:k])
            seats = tuple(s for s, _ in plays[start:k])
            for suit in range(4):
                if suit == card >> 3 or not trick:
                    continue
                cands = [c for c in range(32) if (deck & ~seen & SUIT_MASKS[suit]) >> c & 1]
                illegal = [not legal_cards((1 << card) | (1 << c), trick, seats, strain, seat,
                                           cfg.partner_exemption, cfg.undertrump) >> card & 1 for c in cands]
                if all(illegal):
                    allowed.add((seat, suit))  # a proof (or nothing left of the suit)
                    if cands or suit == trick[0] >> 3:
                        proven.add((seat, suit))
            seen |= 1 << card
        got = enc.split(enc.encode(view))["voids"]
        bits = {((view.seat + r) % n, int(s)) for r, s in zip(*np.nonzero(got))}
        assert proven <= bits <= allowed, (sorted(proven - bits), sorted(bits - allowed))
        for seat, suit in bits:
            assert not state.hands[seat] & SUIT_MASKS[suit], (seat, suit)
        proofs += len(proven)
    assert proofs > 0  # random play shows voids


@pytest.mark.parametrize(("tricks", "strain", "knobs", "expected"), [
    # hearts trump; seat 1 ruffs the club lead with the lowest trump: seat 2 had to over-ruff
    ("AC 7H 7S", 2, {}, {(1, 0), (2, 0), (2, 2)}),
    # ruffed with the queen: seat 2 may hold the 7 or 8 of hearts and undertrump freely
    ("AC QH 7S", 2, {}, {(1, 0), (2, 0)}),
    # ... unless undertrumping is forced (knob undertrump)
    ("AC QH 7S", 2, {"undertrump": "forced"}, {(1, 0), (2, 0), (2, 2)}),
    # seat 2's partner (seat 0) wins with the ace: seat 2 need not ruff (partner exemption)
    ("AC KC 7S", 2, {}, {(2, 0)}),
    ("AC KC 7S", 2, {"partner_exemption": False}, {(2, 0), (2, 2)}),
    # no trump: only the led suit
    ("AC KC 7S 8D", 4, {}, {(2, 0), (3, 0)}),
    # a trump lead not followed shows no trump
    ("JH 7S", 2, {}, {(1, 2)}),
])
def test_shown_voids_worked_cases(tricks, strain, knobs, expected):
    """Worked cases of rules.md 1.3 on bazar, seat 0 leading; suits C=0 D=1 H=2 S=3."""
    from blot_env.observation import shown_voids

    cfg = make_rules("bazar", **knobs)
    plays = [(i % 4, c) for i, c in enumerate(parse_cards(tricks))]
    assert shown_voids(cfg, plays, strain) == expected


def test_no_voids_piece_in_open():
    """Open Blot's duties bind the public face-up cards (rules.md 5.3): the kind adds nothing there."""
    cfg = make_rules("open")
    a, b = ObservationEncoder(cfg, "observation_voids"), ObservationEncoder(cfg, "observation")
    assert [p.name for p in a.pieces] == [p.name for p in b.pieces] and a.size == b.size


def test_voids_batched_twin_under_rule_knobs():
    """The compiled encoder writes the same ``voids`` under the knobs that change the duties."""
    from blot_env.batched import _obs
    from blot_env.batched._layout import knobs
    from blot_env.batched.convert import from_state

    for over in ({"undertrump": "forced"}, {"partner_exemption": False}, {}):
        cfg = make_rules("bazar", **over)
        enc = ObservationEncoder(cfg, "observation_voids")
        tabs = _obs.obs_tables(cfg, "observation_voids")
        K = knobs(cfg)
        for state, view in _random_views(cfg, deals=3, seed=5):
            S = from_state(state)[None, :]
            out = np.zeros((1, enc.size), dtype=np.float32)
            _obs.encode_batch(S, np.array([view.seat], dtype=np.int64), K, *tabs, out)
            assert np.array_equal(out[0], enc.encode(view)), (over, view.seat)


def test_shown_voids_refuses_open_and_a_bad_strain():
    from blot_env.errors import ConfigError
    from blot_env.observation import shown_voids

    with pytest.raises(ConfigError, match=r"rules\.md 5\.3"):
        shown_voids(make_rules("open"), [], 0)
    with pytest.raises(ValueError, match="got 5"):
        shown_voids(make_rules("bazar"), [], 5)
    assert shown_voids(make_rules("bazar"), [], -1) == set()
