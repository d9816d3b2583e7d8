"""The double-dummy solver (agents/search/solver.py): leaf evaluator against score_deal, the
monotone score table, and exactness against a brute-force minimax over the engine.

Counts scale with ``BLOT_SOLVER_CHECKS`` (default 1; e.g. 20 for the long run reported in
docs/search.md).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from agents.baselines.random_agent import RandomAgent
from agents.search import _kernel as K
from agents.search import solver
from blot_env.actions import layout_for
from blot_env.cards import LAST_TRICK_BONUS
from blot_env.engine import apply_action, current_seat, deal_random, legal_actions, legal_cards_mask
from blot_env.rules_config import PRESETS, make_rules
from blot_env.scoring import score_deal
from blot_env.state import Phase
from blot_env.view import seat_view

SCALE = int(os.environ.get("BLOT_SOLVER_CHECKS", "1"))


def _random_play_state(cfg, rng, min_trick: int, extra: int = 0):
    """A play-phase state at trick ``min_trick`` (or later), reached by random play."""
    ag = RandomAgent()
    while True:
        s = deal_random(cfg, rng, int(rng.integers(cfg.num_players)))
        while s.phase == Phase.AUCTION:
            s = apply_action(s, ag.act(seat_view(s, current_seat(s)), rng))
        if s.phase != Phase.PLAY:
            continue
        while s.phase == Phase.PLAY and (s.trick_no < min_trick or s.pending):
            a = legal_actions(s)
            s = apply_action(s, a[rng.integers(len(a))])
        for _ in range(extra):
            if s.phase != Phase.PLAY:
                break
            a = legal_actions(s)
            s = apply_action(s, a[rng.integers(len(a))])
        if s.phase == Phase.PLAY:
            return s


def _finished(cfg, rng):
    s = _random_play_state(cfg, rng, 0)
    while s.phase == Phase.PLAY:
        a = legal_actions(s)
        s = apply_action(s, a[rng.integers(len(a))])
    return s


def _code(state) -> int:
    n = state.n
    p0 = sum(state.points[s] for s in range(n) if s % 2 == 0)
    t0 = sum(state.tricks[s] for s in range(n) if s % 2 == 0)
    t1 = sum(state.tricks[s] for s in range(n) if s % 2 == 1)
    nt = state.cfg.num_tricks
    return 3 * p0 + (2 if t0 == nt else 0 if t1 == nt else 1)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_leaf_scores_match_score_deal(preset):
    """The leaf evaluator gives score_deal's score on random finished deals of every preset."""
    cfg = make_rules(preset)
    rng = np.random.default_rng(11)
    for _ in range(150 * SCALE):
        s = _finished(cfg, rng)
        info = solver.combo_info(s)
        x = _code(s)
        p0, code = divmod(x, 3)
        got = solver.leaf_scores(cfg, s.contract, info, p0, code)
        assert got == score_deal(s).score, (preset, s.contract, s.points, s.tricks)
        table = solver.leaf_table(cfg, s.contract, info)
        assert table[x] == got[0] - got[1]
        # the minimax over codes is the minimax over scores only because the table is monotone
        assert np.all(np.diff(table) >= 0), (preset, s.contract)


def _brute(state, memo: dict) -> int:
    """Plain minimax (team 0 minus team 1) over the engine; declarations by the solver's policy."""
    if state.phase == Phase.DONE:
        sc = score_deal(state).score
        return sc[0] - sc[1]
    if state.pending:
        return _brute(apply_action(state, solver.policy_action(state)), memo)
    key = (state.hands, state.trick, state.leader, state.trick_no, state.points, state.tricks, state.decl,
           state.kaput_broken, state.face_down)
    got = memo.get(key)
    if got is None:
        vals = [_brute(apply_action(state, a), memo) for a in legal_actions(state)]
        got = max(vals) if current_seat(state) % 2 == 0 else min(vals)
        memo[key] = got
    return got


def _check_exact(state) -> int:
    """Compare every action value of ``solve`` with brute force; returns the number checked."""
    value, per = solver.solve(state)
    sign = 1 if current_seat(state) % 2 == 0 else -1
    memo: dict = {}
    for a, v in per.items():
        b = sign * _brute(apply_action(state, a), memo)
        assert v == b, (state.cfg.preset, layout_for(state.cfg).describe(a), v, b, state.contract, state.trick_no)
    assert value == max(per.values())
    assert sorted(per) == legal_actions(state)
    return len(per)


#: (tricks left, positions per preset); 2-player presets also get 4 tricks left
CASES = [(1, 20), (2, 60), (3, 6)]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_solver_matches_brute_force(preset):
    cfg = make_rules(preset)
    rng = np.random.default_rng(5)
    cases = list(CASES) + ([(4, 4)] if cfg.num_players == 2 else [])
    positions = 0
    for left, count in cases:
        for _ in range(count * SCALE):
            s = _random_play_state(cfg, rng, cfg.num_tricks - left, extra=int(rng.integers(cfg.num_players)))
            _check_exact(s)
            positions += 1
    assert positions > 0


@pytest.mark.parametrize("preset", ["bazar", "duel"])
def test_declaration_steps_at_root(preset):
    """A pending show/noshow decision at the root is solved as a choice between the two."""
    cfg = make_rules(preset)
    rng = np.random.default_rng(3)
    lay = layout_for(cfg)
    for _ in range(300):
        s = _random_play_state(cfg, rng, 0)
        while s.phase == Phase.PLAY and s.trick_no < 3 and not (s.pending and s.pending[0][0] == 3):
            a = legal_actions(s)
            s = apply_action(s, a[rng.integers(len(a))])
        if s.phase == Phase.PLAY and s.pending and s.pending[0][0] == 3:
            value, per = solver.solve(s)
            assert {lay.describe(a) for a in per} == {"show", "noshow"}
            assert value == max(per.values())
            sign = 1 if current_seat(s) % 2 == 0 else -1
            show = lay.parse("show")
            assert per[show] == sign * solver.value_team0(apply_action(s, show))
            return
    pytest.skip("no show decision reached")


def test_kernel_codes_match_brute_force():
    """The kernel's exact outcome code (full window) equals the brute-force code."""
    cfg = make_rules("bazar-app")
    rng = np.random.default_rng(9)
    lay = layout_for(cfg)

    def brute_code(s):
        if s.phase == Phase.DONE:
            return _code(s)
        vals = [brute_code(apply_action(s, a)) for a in legal_actions(s)]
        return max(vals) if current_seat(s) % 2 == 0 else min(vals)

    for _ in range(30 * SCALE):
        s = _random_play_state(cfg, rng, cfg.num_tricks - 2)
        past = solver._past_code(s)
        for c, v in solver.card_codes(s).items():
            assert past + v == brute_code(apply_action(s, lay.play_id(c)))


def test_full_deal_solve_is_consistent():
    """From the first lead: the best card's value equals the value after playing it and
    solving the next position (minimax consistency on full 8-trick deals)."""
    cfg = make_rules("bazar-app")
    rng = np.random.default_rng(21)
    lay = layout_for(cfg)
    for _ in range(3):
        s = _random_play_state(cfg, rng, 0)
        value, per = solver.solve(s)
        best = max(per, key=per.get)
        nxt = apply_action(s, best)
        v2 = solver.value_team0(nxt)
        sign = 1 if current_seat(s) % 2 == 0 else -1
        assert sign * v2 == value
        assert lay.block_of[best] == "PLAY"


def test_endgame_loops_match_the_general_search():
    """The nested-loop search of the second-to-last trick (``_kernel._endgame2``) gives the
    general search's answers: exact values with full windows, the same side of every
    threshold with null windows; on every preset, with and without a kaput early stop."""
    from agents.search import _kernel as K

    def value(s, kaput_team, general, alpha, beta):
        args = solver._arrays(s)  # a fresh table generation for every search
        args[5][5] = kaput_team
        args[5][7] = general
        return int(K.search(*args, 0, alpha, beta))

    checked = 0
    for preset in sorted(PRESETS):
        cfg = make_rules(preset)
        rng = np.random.default_rng(31)
        for i in range(6 * SCALE):
            s = _random_play_state(cfg, rng, cfg.num_tricks - 3 + i % 2, extra=int(rng.integers(0, 3)))
            for kaput_team in (-1, 0, 1):
                full = value(s, kaput_team, 1, -K.INF, K.INF)
                assert value(s, kaput_team, 0, -K.INF, K.INF) == full, (preset, i, kaput_team)
                for t in rng.integers(0, full + 40, size=6).tolist() + [full, full + 1]:
                    got = value(s, kaput_team, 0, t - 1, t) >= t
                    assert got == (value(s, kaput_team, 1, t - 1, t) >= t) == (full >= t)
                    checked += 1
    assert checked >= 6 * 6 * 3 * 8


def test_code_bounds_read_tables_at_the_minimax_code():
    """``CodeBounds.lookup`` gives ``table[past + V]`` with ``V`` the full-window minimax code,
    for leaf tables of several contracts and for random step tables, on every preset; its
    interval always holds ``V``."""
    from dataclasses import replace

    from blot_env.state import Contract

    for preset in sorted(PRESETS):
        cfg = make_rules(preset)
        rng = np.random.default_rng(41)
        for _ in range(3 * SCALE):
            s = _random_play_state(cfg, rng, cfg.num_tricks - 4)
            v = solver.position_code(s)
            past = solver._past_code(s)
            info = solver.combo_info(solver._decl_final(s))
            c = s.contract
            tables = [solver.leaf_table(cfg, replace(c, double=d), info) for d in (0, 1, 2)]
            tables += [np.cumsum(rng.integers(0, 2, size=solver.X_SIZE) * rng.integers(1, 9, size=solver.X_SIZE))
                       for _ in range(3)]
            cb = solver.CodeBounds(s)
            for table in tables:
                assert cb.lookup(table, past) == table[past + v]
                assert cb.lo <= v <= cb.hi
            assert isinstance(c, Contract)
    with pytest.raises(ValueError, match="play-phase"):
        solver.CodeBounds(deal_random(make_rules("bazar"), np.random.default_rng(0)))


def test_solve_rejects_auction_state():
    s = deal_random(make_rules("bazar"), np.random.default_rng(0))
    with pytest.raises(ValueError, match="play-phase"):
        solver.solve(s)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_kernel_moves_and_tricks_match_the_engine(preset):
    """The kernel's own move generation and trick resolution (``_kernel.legal_mask``,
    ``_kernel._trick_result``) against the engine (``legal_cards_mask``, ``apply_action``) on
    every position of random deals: the same legal cards, and for the last card of a trick
    the same winner and the same points."""
    cfg = make_rules(preset)
    rng = np.random.default_rng(23)
    positions = tricks = 0
    for _ in range(6 * SCALE):
        s = _random_play_state(cfg, rng, 0)
        while s.phase == Phase.PLAY:
            if not s.pending:
                H, CV, _under, TR, _st, P, PTS, TSTR, PSTR, _desc, ABOVE = solver._arrays(s)[:11]
                seat = current_seat(s)
                tlen, leader = len(s.trick), s.leader
                got = K.legal_mask(H[seat] & ~CV[seat], TR, tlen, leader, seat, P, TSTR, PSTR, ABOVE)
                want = legal_cards_mask(s)
                assert got == want, (preset, s.trick, seat)
                positions += 1
                if tlen == s.n - 1:
                    for c in (c for c in range(32) if want >> c & 1):
                        TR[tlen] = c
                        winner, pts = K._trick_result(TR, leader, P, PTS, TSTR, PSTR)
                        after = apply_action(s, layout_for(cfg).play_id(c))
                        gained = [a - b for a, b in zip(after.points, s.points)]
                        last = s.trick_no == cfg.num_tricks - 1
                        assert gained[winner] == pts + (LAST_TRICK_BONUS if last else 0), (preset, s.trick, c)
                        assert sum(gained) == gained[winner]
                        tricks += 1
            a = legal_actions(s)
            s = apply_action(s, a[rng.integers(len(a))])
    assert positions > 50 and tricks > 10


def test_zero_point_cards_rank_lowest_in_every_strain():
    """The table key (``_kernel._key``) merges positions that differ only in which zero-point
    cards of a suit remain; that is sound because those cards rank below every card with
    points (rules.md 1.1): plain 9 8 7 and trump 8 7, the last ranks of ``DESC``."""
    for strain in range(5):
        pts, _tstr, _pstr, desc, _above = solver._tables(strain)
        for su in range(4):
            row = 1 if su == strain else 0
            zero = [k for k in range(8) if pts[su * 8 + desc[row, k]] == 0]
            assert zero == list(range(5 + row, 8)), (strain, su)


def test_positions_differing_in_zero_point_cards_share_key_and_value():
    """At a trick boundary, give a seat another zero-point card of the same suit (one already
    played, with no remaining zero-point card of that suit ranking between the two): the
    table key stays the same and so does the full-window minimax code, on every preset
    without piles."""
    from dataclasses import replace

    checked = 0
    for preset in sorted(PRESETS):
        cfg = make_rules(preset)
        rng = np.random.default_rng(52)
        for _ in range(40 * SCALE):
            s = _random_play_state(cfg, rng, 2 + int(rng.integers(0, 3)))
            if s.piles or s.trick or s.pending:
                continue
            _pts, _t, _p, desc, _a = solver._tables(s.contract.strain)
            held = 0
            for h in s.hands:
                held |= h
            swaps = []
            for seat in range(s.n):
                for su in range(4):
                    row = 1 if su == s.contract.strain else 0
                    zero = [su * 8 + int(desc[row, k]) for k in range(5 + row, 8)]
                    for i, c in enumerate(zero):
                        if not s.hands[seat] >> c & 1:
                            continue
                        for j in (i - 1, i + 1):  # a neighbour in rank that is no longer held
                            if 0 <= j < len(zero) and not held >> zero[j] & 1:
                                swaps.append((seat, c, zero[j]))
            if not swaps:
                continue
            seat, c, z = swaps[int(rng.integers(len(swaps)))]
            hands = list(s.hands)
            hands[seat] = hands[seat] ^ (1 << c) ^ (1 << z)
            t = replace(s, hands=tuple(hands))
            a, b = solver._arrays(s), solver._arrays(t)
            assert K._key(a[0], a[4], a[5], a[6], a[9]) == K._key(b[0], b[4], b[5], b[6], b[9])
            assert solver.position_code(s) == solver.position_code(t), (preset, seat, c, z)
            checked += 1
    assert checked >= 20
