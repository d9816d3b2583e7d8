"""Statistics of duplicate evaluation against known values (agents/eval/stats.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from agents.eval.stats import (
    boards_needed,
    bootstrap_ci,
    clustered_rate_difference,
    mcnemar_exact,
    mean_ci,
    wilson_interval,
    win_rate,
)


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (55, 100), (1234, 2000), (1, 1)])
def test_wilson_matches_scipy(k, n):
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)


def test_wilson_known_value_and_fractional_ties():
    # textbook: 81 of 263 -> (0.2553, 0.3662) at 95%
    lo, hi = wilson_interval(81, 263)
    assert (round(lo, 4), round(hi, 4)) == (0.2553, 0.3662)
    lo2, hi2 = wilson_interval(5.5, 10)  # half wins from ties
    assert 0 < lo2 < 0.55 < hi2 < 1
    assert math.isnan(wilson_interval(0, 0)[0])
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_mean_ci_is_the_paired_t_interval():
    rng = np.random.default_rng(0)
    a = rng.normal(3.0, 10.0, size=200)
    b = a - rng.normal(1.0, 4.0, size=200)
    d = a - b
    m, lo, hi = mean_ci(d)
    ref = sps.ttest_rel(a, b).confidence_interval(0.95)
    assert m == pytest.approx(d.mean())
    assert lo == pytest.approx(ref.low)
    assert hi == pytest.approx(ref.high)


def test_mean_ci_degenerate_cases():
    assert mean_ci([0, 0, 0]) == (0.0, 0.0, 0.0)
    assert mean_ci([2.5]) == (2.5, 2.5, 2.5)
    with pytest.raises(ValueError):
        mean_ci([])


def test_bootstrap_close_to_t_interval():
    rng = np.random.default_rng(1)
    x = rng.normal(1.0, 5.0, size=400)
    _, lo, hi = mean_ci(x)
    m, blo, bhi = bootstrap_ci(x, np.random.default_rng(2), n_boot=4000)
    assert m == pytest.approx(x.mean())
    assert blo == pytest.approx(lo, abs=0.1)
    assert bhi == pytest.approx(hi, abs=0.1)


def test_win_rate_counts_ties_half():
    rate, wins, n = win_rate([4, -2, 0, 0, 6])
    assert (wins, n) == (3.0, 5)
    assert rate == pytest.approx(0.6)


def test_boards_needed_rule_of_thumb():
    # docs/evaluation.md: about 7.85 s^2 / d^2 boards for 80% power at the 5% level
    assert boards_needed(1.0, 1.0) == pytest.approx(7.85, abs=0.01)
    assert boards_needed(20.0, 1.0) == pytest.approx(7.85 * 400, rel=1e-3)


def test_mcnemar_exact_known_values():
    # 1 against 9 discordant: 2 * P(X <= 1), X ~ Binomial(10, 1/2) = 2 * 11 / 1024
    assert mcnemar_exact(9, 1) == pytest.approx(22 / 1024)
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024)
    assert mcnemar_exact(5, 5) == pytest.approx(1.0)
    assert mcnemar_exact(0, 0) == 1.0
    with pytest.raises(ValueError, match="a_only=-1"):
        mcnemar_exact(-1, 3)


def test_clustered_rate_difference_known_values():
    # four clusters of one item: estimate 0.5; residuals 0.5, -1.5, 0.5, 0.5 -> se^2 = 4/3 * 3 / 16
    est, se, p = clustered_rate_difference([1, -1, 1, 1], [1, 1, 1, 1])
    assert (est, se) == (pytest.approx(0.5), pytest.approx(0.5))
    assert p == pytest.approx(2 * sps.norm.sf(1.0))
    # the same items in two clusters that move together: a wider interval than if independent
    est2, se2, _ = clustered_rate_difference([2, 0], [2, 2])
    assert est2 == pytest.approx(0.5) and se2 == pytest.approx(0.5)
    with pytest.raises(ValueError, match="2 clusters"):
        clustered_rate_difference([1], [1])
    with pytest.raises(ValueError, match="one length"):
        clustered_rate_difference([1, 2], [1])
