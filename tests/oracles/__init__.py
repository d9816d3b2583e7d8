"""Test oracles: independent reference rules (:mod:`oracles.reference`) and the random-play
invariant checker (:mod:`oracles.invariants`) used by tests/test_invariants.py,
tests/golden/make_golden.py and the long runs of scripts/invariants.py.

Importable as ``oracles`` with ``tests/`` on ``sys.path`` (pytest puts it there for the
test modules; the scripts add it themselves).
"""

from .invariants import InvariantError, Stats, check_deal, choose, deal_rng, run_deals
from .reference import (
    holds_any_combo,
    holds_blot,
    ref_bazar_score,
    ref_belote_score,
    ref_legal,
    ref_points,
    ref_round,
    ref_two_player_score,
    ref_winner,
)

__all__ = [
    "InvariantError",
    "Stats",
    "check_deal",
    "choose",
    "deal_rng",
    "holds_any_combo",
    "holds_blot",
    "ref_bazar_score",
    "ref_belote_score",
    "ref_legal",
    "ref_points",
    "ref_round",
    "ref_two_player_score",
    "ref_winner",
    "run_deals",
]
