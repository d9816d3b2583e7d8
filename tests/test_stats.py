"""Statistics of duplicate evaluation against known values (agents/stats.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from agents.stats import boards_needed, bootstrap_ci, mean_ci, wilson_interval, win_rate


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
