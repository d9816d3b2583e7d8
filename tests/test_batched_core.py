"""The compiled transitions of ``blot_env.batched._core`` against the reference engine.

For every preset: random deals played by random legal actions on the reference; at each step
the batched legal mask and seat to act must equal the reference's, an illegal action must be
refused with the row untouched, and after each action the row must equal
``convert.from_state`` of the new reference state on every field.
"""

from __future__ import annotations

import numpy as np
import pytest

from blot_env.batched import _core as C
from blot_env.batched import _layout as L
from blot_env.batched.convert import from_state
from blot_env.cards import cards_of
from blot_env.engine import apply_action, current_seat, deal_random, deck_mask, legal_actions, legal_mask
from blot_env.rules_config import PRESETS, make_rules
from blot_env.state import Phase

DEALS = {"bazar": 400, "bazar-app": 300, "duel": 400, "duel-app": 300, "open": 200, "belote": 300}


def _diff(got: np.ndarray, want: np.ndarray) -> str:
    out = []
    for name, (o, size) in L.FIELDS.items():
        g, w = got[o:o + size], want[o:o + size]
        if not np.array_equal(g, w):
            out.append(f"{name}: got {g.tolist()} want {w.tolist()}")
    return "; ".join(out)


def _pick(rng: np.random.Generator, state, legal: list[int], block: np.ndarray, pass_id: int) -> int:
    """A random legal action, biased to reach rare branches: in the auction a pass half of the
    time, else often the lowest bids or a kaput (long auctions, kaput contracts); announcements
    often of the highest class held, and often ``noshow`` (pass-on and partner rights)."""
    u = rng.random()
    if state.phase == Phase.AUCTION:
        if pass_id in legal and u < 0.5:
            return pass_id
        kap = [a for a in legal if block[a] in (L.B_KAPUT, L.B_KAPUT_PLUS)]
        if kap and u < 0.58:
            return int(kap[rng.integers(len(kap))])
        bids = [a for a in legal if block[a] == L.B_BID]
        if bids and u < 0.9:
            return int(bids[rng.integers(min(len(bids), 6))])
    elif state.pending:
        if block[legal[0]] == L.B_ANNOUNCE and u < 0.6:
            return int(legal[-1])
        if block[legal[0]] == L.B_SHOW and u < 0.4:
            return int(legal[1])
    return int(legal[rng.integers(len(legal))])


def _play_deals(cfg, n_deals: int, seed: int) -> dict[str, int]:
    K = L.knobs(cfg)
    block, p0, p1, bstart = L.action_tables(cfg)
    A = int(K[L.K_NUM_ACTIONS])
    n = cfg.num_players
    S = np.zeros((2, L.ROW), dtype=np.int64)
    mask = np.zeros(A, dtype=np.int8)
    rng = np.random.default_rng(seed)
    deck = np.array(cards_of(deck_mask(cfg)), dtype=np.int64)
    stats = {"steps": 0, "decl_steps": 0, "done_early": 0}
    for d in range(n_deals):
        dealer = d % n
        dseed = int(rng.integers(2**31))
        st = deal_random(cfg, np.random.default_rng(dseed), dealer)
        cards = deck.copy()
        np.random.default_rng(dseed).shuffle(cards)
        C.deal_row(S, 1, K, dealer, cards)
        want = from_state(st)
        assert np.array_equal(S[1], want), f"deal {d}: {_diff(S[1], want)}"
        while True:
            C.legal_mask_row(S, 1, K, block, p0, p1, bstart, mask)
            ref = legal_mask(st)
            assert np.array_equal(mask, ref), (
                f"deal {d} step {stats['steps']}: legal mask got {np.flatnonzero(mask)} "
                f"want {np.flatnonzero(ref)}")
            assert C.current_seat(S, 1, K) == current_seat(st)
            before = S[1].copy()
            if st.phase == Phase.DONE:
                assert C.apply_row(S, 1, K, block, p0, p1, bstart, 0) == C.ERR_DONE
                assert np.array_equal(S[1], before)
                if st.trick_no < cfg.num_tricks and st.contract is not None:
                    stats["done_early"] += 1
                break
            legal = legal_actions(st)
            illegal = np.flatnonzero(ref == 0)
            if len(illegal):
                bad = int(illegal[rng.integers(len(illegal))])
                assert C.apply_row(S, 1, K, block, p0, p1, bstart, bad) == C.ERR_ILLEGAL
                assert np.array_equal(S[1], before)
            assert C.apply_row(S, 1, K, block, p0, p1, bstart, A) == C.ERR_RANGE
            assert C.apply_row(S, 1, K, block, p0, p1, bstart, -1) == C.ERR_RANGE
            assert np.array_equal(S[1], before)
            a = _pick(rng, st, legal, block, bstart[L.B_PASS])
            if st.phase == Phase.PLAY and st.pending:
                stats["decl_steps"] += 1
            st = apply_action(st, a)
            assert C.apply_row(S, 1, K, block, p0, p1, bstart, a) == 0
            want = from_state(st)
            assert np.array_equal(S[1], want), (
                f"deal {d} step {stats['steps']} action {a}: {_diff(S[1], want)}")
            stats["steps"] += 1
    return stats


@pytest.mark.parametrize("preset", list(PRESETS))
def test_core_matches_reference(preset):
    stats = _play_deals(PRESETS[preset], DEALS[preset], seed=1000 + list(PRESETS).index(preset))
    assert stats["steps"] > 0
    if PRESETS[preset].declarations in ("manual", "announce"):
        assert stats["decl_steps"] > 0


@pytest.mark.parametrize("overrides", [
    {"undertrump": "forced"},
    {"long_run": "100", "carre_table": "classic", "declaration_tie": "nobody"},
    {"kaput_bid": "terminal", "auction_end_passes": 3, "contra_end_passes": 4},
])
def test_core_bazar_variants(overrides):
    _play_deals(make_rules("bazar", **overrides), 40, seed=7)


def test_core_duel_variants():
    _play_deals(make_rules("duel", jack_forces_dealer=False, duel_open_card_choice=False), 40, seed=8)
    _play_deals(make_rules("duel-app", declarations="manual", carre_table="armenian", allow_nt=True), 40, seed=9)


def test_core_open_auto():
    _play_deals(make_rules("open", declarations="auto"), 20, seed=10)
