"""Random-play invariants (style.md rule 8) over 10,000 deals with automatic and 10,000 with
manual declarations, plus bazar-app: the checks of scripts/invariants.py after every action
(cards conserved, reference legal cards, every legal action accepted and an illegal one
refused, next leader = last trick's winner, raw points adding up to 162, non-negative scores,
exactly one side 0 under contra, the early kaput stop, and rules.md 2.5 recomputed
independently for deals without combinations)."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import REPO

from blot_env.rules_config import make_rules


def _invariants():
    name = "blot_invariants"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / "invariants.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


CHUNKS = 4
DEALS_PER_CHUNK = 2500


@pytest.mark.parametrize("chunk", range(CHUNKS))
@pytest.mark.parametrize("declarations", ["auto", "manual"])
def test_random_deals_bazar(declarations, chunk):
    inv = _invariants()
    cfg = make_rules("bazar", declarations=declarations)
    st = inv.run_deals(cfg, seed=1000 * chunk + (7 if declarations == "auto" else 11), deals=DEALS_PER_CHUNK)
    assert st.deals == DEALS_PER_CHUNK
    # the random policy reaches the interesting cases
    assert st.passed_out > 0 and st.contra > 0 and st.kaput > 0 and st.made > 0 and st.nt > 0
    assert st.no_combo_checked > DEALS_PER_CHUNK // 10


def test_random_deals_bazar_app():
    inv = _invariants()
    st = inv.run_deals(make_rules("bazar-app"), seed=5, deals=1000)
    assert st.deals == 1000 and st.kaput > 0


def test_reference_functions_agree_with_seed_tables():
    inv = _invariants()
    from blot_env.cards import parse_card

    assert inv.ref_points(parse_card("JH"), 2) == 20 and inv.ref_points(parse_card("AS"), 4) == 19
    assert [inv.ref_round(x) for x in (85, 86, 125, 37, 136, 26)] == [8, 9, 12, 4, 14, 3]
    cards = [parse_card(c) for c in ("9H", "AH", "TH", "JH")]
    assert inv.ref_winner(cards, 2) == 3


def test_invariant_checker_catches_a_broken_engine(monkeypatch):
    """The checker is not vacuous: a wrong trick winner is reported."""
    inv = _invariants()
    import numpy as np

    monkeypatch.setattr(inv, "ref_winner", lambda cards, strain: 0)
    with pytest.raises(inv.InvariantError):
        for seed in range(20):
            inv.check_deal(make_rules("bazar", declarations="auto"), np.random.default_rng(seed))
