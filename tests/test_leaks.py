"""No hidden information reaches an observation: observations are identical when the hidden
cards are resampled.

Method: play a random deal; pick an observer seat and a checkpoint step k. Every card the
observer has seen by step k (its own cards, cards played, shown or face-up cards, the duel's
open card) stays where it was; the cards of announced claims are also kept (so that the same
announcements stay legal); every other card is shuffled among the remaining positions of the
deal (other seats' hands, the stock, Open Blot's face-down bottoms). The same action sequence is
replayed on this alternative deal while it stays legal and while the *public transcript*
(computed from the engine state, not from the view: own visible cards, face-up cards, height
events, shown cards, own claim) agrees; at every such step the observer's encoding must be
identical. A deliberately leaky encoder must fail the same check.
"""

from __future__ import annotations

import numpy as np
import pytest

from blot_env import PRESETS, make_rules
from blot_env.cards import parse_cards
from blot_env.declarations import counted_sets
from blot_env.engine import apply_action, deal_random, is_terminal, legal_actions
from blot_env.observation import KINDS, ObservationEncoder
from blot_env.record import deal_fields, initial_state
from blot_env.rules_config import KNOBS
from blot_env.state import Phase, State
from blot_env.view import seat_view


def _masks(combos) -> int:
    m = 0
    for c in combos:
        m |= c.mask
    return m


def _shown(state: State) -> tuple[int, ...]:
    d = state.decl
    if d is None:
        return ()
    mode = state.cfg.declarations
    if mode == "auto":
        public = state.phase == Phase.DONE or (state.cfg.auto_reveal == "after_trick1" and state.trick_no >= 1)
        return tuple(_masks(cs) for cs in counted_sets(state)) if public else (0,) * state.n
    return tuple(_masks(d.show_set[s]) if (d.decided[s] == 1 or (mode == "announce" and d.announced[s] > 0)) else 0
                 for s in range(state.n))


def _visible(state: State, s: int) -> int:
    hidden = (state.face_down[s] if state.face_down else 0) | (state.unlaid[s] if state.unlaid else 0)
    return state.hands[s] & ~hidden


def transcript(state: State, o: int) -> tuple:
    """What seat ``o`` may know besides the (shared) action history, straight from the state."""
    d = state.decl
    own = (d.claim[o], d.show_set[o], d.events, d.announced) if d is not None else ()
    face_up = tuple(_visible(state, s) for s in range(state.n)) if state.face_down else ()
    u = state.stock[0] if state.cfg.auction == "duel" and state.stock else -1
    return (state.phase, _visible(state, o), face_up, own, _shown(state), u, len(state.history))


def seen_cards(state: State, o: int) -> int:
    """Cards to keep in place for a checkpoint ``state``: seen by ``o``, or claimed by anyone."""
    keep = state.start_hands[o] | state.hands[o] | (state.play_hands[o] if state.play_hands else 0)
    for _, c in state.plays:
        keep |= 1 << c
    for m in _shown(state):
        keep |= m
    d = state.decl
    if d is not None:
        for s in range(state.n):
            if d.claim[s] is not None:
                keep |= d.claim[s].mask
    if state.cfg.auction == "duel" and state.stock:
        keep |= 1 << state.stock[0]
    if state.face_down:  # Open Blot: only the bottoms still face down are unknown
        hidden = 0
        for fd in state.face_down:
            hidden |= fd
        keep = ~hidden & ((1 << 32) - 1)
    return keep


def alternative_deal(start: State, keep: int, rng: np.random.Generator) -> tuple[State, bool]:
    """The deal with every card outside ``keep`` shuffled among the positions of such cards."""
    f = deal_fields(start)
    lists = [h.split() for h in f["hands"]] + [f["stock"].split()]
    pos = [(i, j) for i, lst in enumerate(lists) for j, tok in enumerate(lst)
           if not keep >> parse_cards(tok)[0] & 1]
    cards = [lists[i][j] for i, j in pos]
    perm = [cards[k] for k in rng.permutation(len(cards))]
    for (i, j), tok in zip(pos, perm):
        lists[i][j] = tok
    cfg = start.cfg
    base = make_rules(cfg.preset)
    rules = {k: getattr(cfg, k) for k in KNOBS if k != "preset" and getattr(cfg, k) != getattr(base, k)}
    obj = {"format": "blot-record/1", "preset": cfg.preset, "rules": rules, "dealer": f["dealer"],
           "hands": [" ".join(h) for h in lists[:-1]], "stock": " ".join(lists[-1]), "actions": []}
    return initial_state(obj), perm != cards


def check_no_leak(cfg, encode, deals: int, seed: int, alts: int = 4) -> dict:
    """Run the resampling check; returns counters (compared steps, mismatches, phases covered)."""
    rng = np.random.default_rng(seed)
    stats = {"compared": 0, "mismatch": 0, "changed": 0, "pending": 0, "play": 0, "auction": 0, "late": 0}
    for d in range(deals):
        s = deal_random(cfg, rng, d % cfg.num_players)
        states = [s]
        while not is_terminal(s):
            s = apply_action(s, int(rng.choice(legal_actions(s))))
            states.append(s)
        hist = s.history
        for _ in range(3):
            o = int(rng.integers(cfg.num_players))
            k = int(rng.integers(len(states)))
            keep = seen_cards(states[k], o)
            for _ in range(alts):
                alt, changed = alternative_deal(states[0], keep, rng)
                stats["changed"] += changed
                for j in range(k + 1):
                    ref = states[j]
                    if transcript(alt, o) != transcript(ref, o):
                        break
                    stats["compared"] += 1
                    stats["pending"] += bool(ref.pending)
                    stats["auction" if ref.phase == Phase.AUCTION else "play"] += 1
                    stats["late"] += ref.trick_no >= 1
                    if not np.array_equal(encode(ref, o), encode(alt, o)):
                        stats["mismatch"] += 1
                        break
                    if j == k:
                        break
                    if hist[j] not in legal_actions(alt):
                        break
                    alt = apply_action(alt, hist[j])
    return stats


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("kind", KINDS)
def test_no_leak_under_resampling(preset, kind):
    cfg = make_rules(preset)
    enc = ObservationEncoder(cfg, kind, match=True)

    def encode(state, o):
        return enc.encode(seat_view(state, o), match=(12, 34))

    st = check_no_leak(cfg, encode, deals=25, seed=7)
    assert st["mismatch"] == 0, st
    assert st["compared"] > 300 and st["changed"] > 100, st
    assert st["auction"] > 50 and st["play"] > 50 and st["late"] > 20, st
    if cfg.declarations == "manual":
        assert st["pending"] > 10, st


@pytest.mark.parametrize("preset", list(PRESETS))
def test_leaky_encoder_is_caught(preset):
    """The check has teeth: an encoder that also reads the next seat's cards fails it."""
    cfg = make_rules(preset)
    enc = ObservationEncoder(cfg, "observation")

    def leaky(state, o):
        nxt = state.hands[(o + 1) % cfg.num_players]
        return np.concatenate([enc.encode(seat_view(state, o)), [nxt & 0xFFFF, nxt >> 16]])

    st = check_no_leak(cfg, leaky, deals=6, seed=1)
    assert st["mismatch"] > 0, st
