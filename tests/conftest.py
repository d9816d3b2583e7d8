"""Shared test helpers: build deals from card strings and drive them with action strings.

Seats: with the default ``dealer=3`` seat 0 is the first hand (speaks first, leads trick 1);
teams are ``seat % 2`` (seat 0 and 2 = team 0).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from blot_env.actions import layout_for
from blot_env.cards import mask_of, parse_cards
from blot_env.engine import apply_action, current_seat, deal_random, deal_result, is_terminal, legal_actions, new_deal
from blot_env.rules_config import RulesConfig, make_rules
from blot_env.state import Phase, State

REPO = Path(__file__).resolve().parents[1]


def load_script(name: str):
    """The module of ``scripts/<name>.py`` (the scripts are not a package), loaded afresh."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"script_{name}", REPO / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def play_legal_deal(agent, preset: str = "bazar", seed: int = 0, bidder=None, dealer: int = 0,
                    rng: np.random.Generator | None = None) -> State:
    """One random deal of ``preset`` with ``agent`` in every seat (outside the card play
    ``bidder`` instead, if given), asserting that each action is legal; returns the final state.
    ``rng`` (default: seeded by ``seed``) draws the deal and the agents' choices."""
    from blot_env.view import seat_view

    rng = np.random.default_rng(seed) if rng is None else rng
    s = deal_random(make_rules(preset), rng, dealer)
    while not is_terminal(s):
        view = seat_view(s, current_seat(s))
        who = agent if bidder is None or s.phase == Phase.PLAY else bidder
        a = who.act(view, rng)
        assert a in view.legal, (a, view.legal)
        s = apply_action(s, a)
    return s


# the machine is shared and loaded: no per-example deadline (examples stay small and fast)
settings.register_profile("blot", deadline=None)
settings.load_profile("blot")


def rules(preset: str = "bazar", **overrides) -> RulesConfig:
    return make_rules(preset, **overrides)


def deal(hands: list[str], dealer: int = 3, preset: str = "bazar", **overrides) -> State:
    """A deal from four hand strings (``"JH 9H AH ..."``), before the first call."""
    cfg = make_rules(preset, **overrides)
    return new_deal(cfg, dealer, [mask_of(parse_cards(h)) for h in hands])


def act(state: State, actions: Iterable[str] | str) -> State:
    """Apply action strings (``"bid 9H"``, ``"play JH"``; a single string may hold several
    actions separated by commas). Raises IllegalActionError like the engine."""
    lay = layout_for(state.cfg)
    if isinstance(actions, str):
        actions = [a for a in actions.split(",") if a.strip()]
    for a in actions:
        state = apply_action(state, lay.parse(a))
    return state


def build(hands: list[str], actions: Iterable[str] | str = (), dealer: int = 3, preset: str = "bazar",
          **overrides) -> State:
    """``deal`` then ``act``: the state after the given actions."""
    return act(deal(hands, dealer, preset, **overrides), actions)


def legal(state: State) -> list[str]:
    """Legal actions of the seat to act, as strings."""
    lay = layout_for(state.cfg)
    return [lay.describe(a) for a in legal_actions(state)]


def cards_legal(state: State) -> set[str]:
    """The legal ``play`` cards as card strings (``{"KD"}``)."""
    return {a.split()[1] for a in legal(state) if a.startswith("play ")}


def is_legal(state: State, action: str) -> bool:
    lay = layout_for(state.cfg)
    return lay.parse(action) in legal_actions(state)


def auto_finish(state: State, choose: Callable[[State, list[str]], str] | None = None) -> State:
    """Play to the end: ``choose(state, legal_strings)`` or, by default, the first legal action
    in the order show > announce (highest class) > play (lowest card id) > pass."""
    while not is_terminal(state):
        ls = legal(state)
        a = choose(state, ls) if choose else _default_choice(ls)
        state = act(state, [a])
    return state


def _default_choice(ls: list[str]) -> str:
    for pref in ("show", "reveal", "height"):
        if pref in ls:
            return pref
    ann = [a for a in ls if a.startswith("announce")]
    if ann:
        order = ["announce carre", "announce 100", "announce 50", "announce terz", "announce none"]
        return next(a for a in order if a in ann)
    return ls[0]


def result(state: State) -> dict:
    """The deal result as record JSON (``score``, ``card_points``, ...)."""
    lay = layout_for(state.cfg)
    return deal_result(state).to_json(lay.describe)


def history(state: State) -> list[str]:
    lay = layout_for(state.cfg)
    return [lay.describe(a) for a in state.history]


def random_deal(cfg: RulesConfig, seed: int, dealer: int = 3) -> State:
    return deal_random(cfg, np.random.default_rng(seed), dealer)


def seat(state: State) -> int:
    return current_seat(state)


def in_play(state: State) -> bool:
    return state.phase == Phase.PLAY


@pytest.fixture
def bazar() -> RulesConfig:
    return make_rules("bazar")


@pytest.fixture
def bazar_auto() -> RulesConfig:
    return make_rules("bazar", declarations="auto")


def complete(partial: dict[int, str], n: int = 4, hand_size: int = 8) -> list[str]:
    """Hands with the given seats' cards fixed and the rest of the deck dealt in card order
    (clubs 7.. first) to the other seats, in seat order."""
    used = set()
    for t in partial.values():
        used |= set(parse_cards(t))
    rest = [c for c in range(32) if c not in used]
    out = []
    for s in range(n):
        cards = parse_cards(partial.get(s, ""))
        need = hand_size - len(cards)
        cards += rest[:need]
        rest = rest[need:]
        out.append(" ".join(sorted((card_name(c) for c in cards), key=lambda x: parse_cards(x)[0])))
    return out


def card_name(c: int) -> str:
    from blot_env.cards import card_str

    return card_str(c)


def fill_hands(partial: dict[int, str], strain: int, seed: int = 0) -> list[str]:
    """Hands with ``partial`` fixed and the other cards dealt by a seeded RNG so that the only
    combinations and blots of the deal (for a contract in ``strain``) are those inside the
    fixed cards. Deterministic for a given seed."""
    from blot_env.cards import card_str
    from blot_env.combos import has_blot, instances

    rng = np.random.default_rng(seed)
    fixed = {s: parse_cards(t) for s, t in partial.items()}
    used = {c for cs in fixed.values() for c in cs}
    rest = [c for c in range(32) if c not in used]
    want = [(instances(mask_of(fixed.get(s, [])), strain), has_blot(mask_of(fixed.get(s, [])), strain))
            for s in range(4)]
    for _ in range(20_000):
        rng.shuffle(rest)
        hands, k = [], 0
        for s in range(4):
            need = 8 - len(fixed.get(s, []))
            hands.append(fixed.get(s, []) + rest[k:k + need])
            k += need
        masks = [mask_of(h) for h in hands]
        if all((instances(mk, strain), has_blot(mk, strain)) == want[s] for s, mk in enumerate(masks)):
            return [" ".join(card_str(c) for c in sorted(h)) for h in hands]
    raise AssertionError(f"no deal without extra combinations for {partial}")


def drive(state: State, decisions: dict[int, list[str]] | None = None, prefer: dict[int, str] | None = None,
          tricks: int | None = None) -> State:
    """Play on with scripted declaration decisions (per seat, in order; when a seat's list is
    used up: announce none / height / reveal / show) and, for cards, the first legal card of
    ``prefer[seat]`` else the lowest legal card. Stops at the end of the deal or, if ``tricks``
    is given, as soon as that many tricks are complete."""
    decisions = {s: list(v) for s, v in (decisions or {}).items()}
    prefer = prefer or {}
    while not is_terminal(state):
        if tricks is not None and state.phase == Phase.PLAY and state.trick_no >= tricks and not state.trick:
            break
        me = current_seat(state)
        ls = legal(state)
        if state.phase == Phase.PLAY and state.pending:
            q = decisions.get(me)
            if q:
                state = act(state, [q.pop(0)])
                continue
            for d in ("announce none", "height", "reveal", "show"):
                if d in ls:
                    state = act(state, [d])
                    break
            else:
                state = act(state, [ls[0]])
            continue
        pick = ls[0]
        for c in (prefer.get(me) or "").split():
            if f"play {c}" in ls:
                pick = f"play {c}"
                break
        state = act(state, [pick])
    return state


@pytest.fixture(scope="session", params=["bazar", "duel"])
def policy_file(request, tmp_path_factory):
    """(preset, path of a tiny trained ``policy.pt`` with a privileged critic), per preset: the
    network of the search tests (tests/test_net_search.py, tests/test_belief.py)."""
    from test_ppo import TINY

    from agents.ppo.build import build_trainer
    from agents.ppo.config import load_config

    out = tmp_path_factory.mktemp(f"net_{request.param}")
    cfg = load_config(TINY, [f"preset={request.param}", "total_steps=200", "network.critic=privileged",
                             "pool.opponent_prob=0"])
    build_trainer(cfg, out).train()
    return request.param, out / "policy.pt"
