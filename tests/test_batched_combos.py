"""The batched engine's combinations and scoring (``blot_env/batched/_combos.py``,
``_score.py``) against the reference (``combos``, ``declarations.counted_sets``,
``scoring.score_deal``): random hands for every strain and knob, and finished deals from
random play of every preset (rules.md 1.4, 2.2, 2.4, 2.5, 2.8, 3-6)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from blot_env import PRESETS, combos
from blot_env.actions import layout_for
from blot_env.batched import _combos as BC
from blot_env.batched import _score as BS
from blot_env.batched._layout import combo_key, knobs
from blot_env.batched.convert import from_state
from blot_env.cards import FULL_DECK, SHORT_DECK, card_points, cards_of, strength, trick_winner_index
from blot_env.codes import CARRES, LONG_RUNS
from blot_env.codes import CONTRACT_KINDS as C_KINDS
from blot_env.declarations import counted_sets
from blot_env.engine import apply_action, deal_random, is_terminal, legal_actions
from blot_env.rules_config import make_rules
from blot_env.scoring import score_deal
from blot_env.state import Phase, Step

CFGS = {
    **PRESETS,
    "bazar-nobody": make_rules("bazar", declaration_tie="nobody"),
    "bazar-auto-100": make_rules("bazar", declarations="auto", long_run="100", carre_table="classic"),
    "open-auto": make_rules("open", declarations="auto"),
    "duel-nobody": make_rules("duel", declaration_tie="nobody", carre_table="none"),
    "open-nobody": make_rules("open", declaration_tie="nobody", long_run="split"),
}


def _hands(rng, deck: int, k: int, count: int):
    cards = np.array(cards_of(deck))
    for _ in range(count):
        yield int(sum(1 << int(c) for c in rng.choice(cards, k, replace=False)))


def _set_tuple(cs):
    m = v = 0
    for c in cs:
        m |= c.mask
        v += c.value
    return m, v, (combo_key(cs[0].key) if cs else -1), len(cs)


def _check_hand(h: int) -> None:
    for strain in range(5):
        assert BC.has_blot(h, strain) == combos.has_blot(h, strain)
        for flat, lr in enumerate(LONG_RUNS):
            for ct, tab in enumerate(CARRES):
                ins = combos.instances(h, strain, lr, tab)
                got = BC.instances(h, strain, flat, ct)
                assert [tuple(r) for r in got] == [(c.cls, c.value, c.mask, combo_key(c.key), c.suit, c.top)
                                                   for c in ins], (h, strain, lr, tab)
                ref_cls = combos.classes_held(h, strain, lr, tab)
                assert BC.classes_held(h, strain, flat, ct) == sum(1 << c for c in ref_cls)
                ach = combos.achievable_plus(h, strain, lr, tab)
                assert BC.achievable_plus(h, strain, flat, ct) == sum(1 << x for x in ach)
                for cls in range(1, 5):
                    ref = combos.best_set(h, strain, lr, tab, max_cls=cls)
                    assert BC.best_set(h, strain, flat, ct, cls, 0) == _set_tuple(ref), (h, strain, lr, tab, cls)
                    bc = combos.best_of_class(h, strain, cls, lr, tab)
                    got_c = BC.best_of_class(h, strain, cls, flat, ct)
                    if bc is None:
                        assert not got_c[0]
                        continue
                    assert got_c == (True, bc.value, bc.mask, combo_key(bc.key), bc.suit, bc.top)
                    ref = combos.best_set(h, strain, lr, tab, max_cls=cls, include=bc)
                    assert BC.best_set(h, strain, flat, ct, cls, bc.mask) == _set_tuple(ref)


def test_hand_functions_random_hands():
    rng = np.random.default_rng(6)
    for deck, k, count in ((FULL_DECK, 8, 2500), (SHORT_DECK, 9, 600), (SHORT_DECK, 8, 300),
                           (SHORT_DECK, 6, 200), (FULL_DECK, 16, 300), (FULL_DECK, 12, 100)):
        for h in _hands(rng, deck, k, count):
            _check_hand(h)


def test_hand_functions_special_hands():
    """Long runs, carres inside runs (flat extras), two carres, empty and full suits."""
    hands = [0, 0xFF, 0xFF00FF, 0x1F, 0x0F0F0F0F, 0xFFFF, 0x7E, 0xF8F8,
             0x01010101 << 3 | 0xF0, 0x01010101 << 4 | 0x3C3C, 0x01010101 * 0x30 | 0x0E,
             0x01010101 * 0x14 | 0xFF, 0x01010101 * 0xB0 | 0x6F6F]
    for r in range(8):
        hands.append((0x01010101 << r) | 0xFF)
        hands.append((0x01010101 << r) | (0x1F << 8))
    for h in hands:
        _check_hand(h & FULL_DECK)


def test_cards_helpers():
    for card in range(32):
        for strain in range(5):
            assert BC.card_points(card, strain) == card_points(card, strain)
            for led in range(4):
                assert BC.strength(card, led, strain) == strength(card, led, strain)
    rng = np.random.default_rng(1)
    for _ in range(500):
        k = int(rng.integers(2, 5))
        cards = [int(c) for c in rng.choice(32, k, replace=False)]
        strain = int(rng.integers(5))
        arr = np.array(cards + [-1] * (4 - k), dtype=np.int64)
        assert BC.trick_winner_index(arr, k, strain) == trick_winner_index(cards, strain)
        m = sum(1 << c for c in cards)
        assert BC.mask_points(m, strain) == sum(card_points(c, strain) for c in cards)


def _random_deals(cfg, seed: int, count: int):
    """Yield (play-phase states with declarations, finished state) per deal: random play that
    leans to announcing its highest class and to showing (more sets compete)."""
    rng = np.random.default_rng(seed)
    lay = layout_for(cfg)
    show = lay.id("SHOW") if "SHOW" in lay.blocks else -1
    for i in range(count):
        st = deal_random(cfg, rng, dealer=i % cfg.num_players)
        mids = []
        while not is_terminal(st):
            la = legal_actions(st)
            a = la[int(rng.integers(len(la)))]
            if st.pending and rng.random() < 0.7:
                a = show if show in la else (la[-1] if st.pending[0][0] == Step.ANNOUNCE else a)
            st = apply_action(st, a)
            if st.phase == Phase.PLAY and st.decl is not None and rng.random() < 0.1:
                mids.append(st)
        yield mids, st


def _mutants(st, rng):
    """The finished state with other tricks / points / doubles: reaches the capot branches."""
    n, c = st.n, st.contract
    out = []
    for _ in range(3):
        tricks = [0] * n
        pts = [0] * n
        mode = int(rng.integers(4))
        if mode < 2:  # one side takes everything
            s = (c.seat + mode) % n
            tricks[s] = st.cfg.num_tricks
            pts[s] = int(rng.integers(0, 260))
        else:
            for _ in range(st.cfg.num_tricks):
                tricks[int(rng.integers(n))] += 1
            for s in range(n):
                pts[s] = int(rng.integers(0, 90)) if rng.random() < 0.8 else 0
        kind = c.kind
        if st.cfg.scoring == "bazar":
            kind = C_KINDS[int(rng.integers(3))]
        c2 = dataclasses.replace(c, double=int(rng.integers(3)), kind=kind, plus=int(rng.integers(0, 8)))
        out.append(dataclasses.replace(st, tricks=tuple(tricks), points=tuple(pts), contract=c2))
    return out


def _check_score(st, K, out, masks):
    row = from_state(st)[None, :]
    BS.score_row(row, 0, K, out)
    ref = score_deal(st)
    exp = [-1 if ref.made is None else int(ref.made), *ref.tricks, *ref.card_points, *ref.combinations, *ref.score]
    assert out.tolist() == exp, (st.cfg.preset, out.tolist(), exp)
    if st.contract is not None:
        _check_counted(st, row, K, masks)


def _check_counted(st, row, K, masks):
    masks[:] = -7
    BS.counted_masks(row, 0, K, masks)
    exp = [sum(c.mask for c in cs) for cs in counted_sets(st)]
    assert masks[:st.n].tolist() == exp


@pytest.mark.parametrize("name", list(CFGS))
def test_score_row_random_deals(name):
    cfg = CFGS[name]
    K = knobs(cfg)
    out = np.zeros(BS.NRES, dtype=np.int64)
    masks = np.zeros(4, dtype=np.int64)
    rng = np.random.default_rng(11)
    n_played = 0
    for mids, st in _random_deals(cfg, sum(map(ord, name)), 300):
        for m in mids:
            _check_counted(m, from_state(m)[None, :], K, masks)
        _check_score(st, K, out, masks)
        if st.contract is not None:
            n_played += 1
            for mu in _mutants(st, rng):
                _check_score(mu, K, out, masks)
    assert n_played > 50


def _craft_tie(st, rng):
    """``play_hands`` where a seat of each side holds the same plain run (equal keys), the rest
    random: the declaration-tie rules get exercised (RES-36)."""
    n, strain = st.n, st.contract.strain
    deck = SHORT_DECK if st.cfg.short_deck else FULL_DECK
    sizes = [h.bit_count() for h in st.play_hands]
    plain = [x for x in range(4) if x != strain]
    sa, sb = (int(x) for x in rng.choice(plain, 2, replace=False))
    ln = int(rng.integers(3, 6))
    lo = int(rng.integers(2 if st.cfg.short_deck else 0, 9 - ln))
    run = (1 << ln) - 1 << lo
    x = int(rng.integers(n))
    y = (x + 1 + 2 * int(rng.integers(n // 2))) % n
    hands = [0] * n
    hands[x] = (run << 8 * sa) & deck
    hands[y] = (run << 8 * sb) & deck
    rest = [c for c in cards_of(deck & ~hands[x] & ~hands[y])]
    rng.shuffle(rest)
    for s in range(n):
        while hands[s].bit_count() < sizes[s]:
            hands[s] |= 1 << rest.pop()
    return dataclasses.replace(st, play_hands=tuple(hands))


@pytest.mark.parametrize("name", ["bazar", "bazar-nobody", "duel", "duel-nobody", "open", "open-nobody", "belote",
                                  "bazar-auto-100"])
def test_counted_sets_synthetic_declarations(name):
    """Random announced classes / show decisions / announce orders on finished deals (some with
    crafted equal runs on both sides): both sides' sets compete (random play rarely gets
    there), and equal keys meet the ``declaration_tie`` rule (RES-36)."""
    cfg = CFGS[name]
    K = knobs(cfg)
    out = np.zeros(BS.NRES, dtype=np.int64)
    masks = np.zeros(4, dtype=np.int64)
    rng = np.random.default_rng(5)
    lr, tab = cfg.long_run, cfg.carre_table
    for _, st in _random_deals(cfg, 7, 150):
        c = st.contract
        if c is None:
            continue
        for _ in range(4):
            if rng.random() < 0.5:
                st = _craft_tie(st, rng)
            ann, claim, show, decided = [], [], [], []
            for s in range(st.n):
                h = st.play_hands[s]
                held = sorted(combos.classes_held(h, c.strain, lr, tab))
                cls = held[int(rng.integers(len(held)))] if held and rng.random() < 0.9 else 0
                ann.append(cls)
                bc = combos.best_of_class(h, c.strain, cls, lr, tab) if cls else None
                claim.append(bc)
                show.append(combos.best_set(h, c.strain, lr, tab, max_cls=cls, include=bc) if cls else ())
                decided.append(int(rng.integers(-1, 2)) if cls else -1)
            order = tuple(int(x) for x in rng.permutation(st.n))
            d = dataclasses.replace(st.decl, announced=tuple(ann), claim=tuple(claim), show_set=tuple(show),
                                    decided=tuple(decided), announce_order=order)
            _check_score(dataclasses.replace(st, decl=d), K, out, masks)
