"""Statistics of duplicate evaluation (docs/evaluation.md "Metrics"): confidence intervals for a
mean (paired t, bootstrap), Wilson intervals for rates, the sample-size rule of thumb, and two
paired comparisons of rates (exact McNemar; a cluster-robust difference).

All functions are pure; the bootstrap takes an explicit ``numpy.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats


def mean_ci(values: Sequence[float] | np.ndarray, conf: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval ``(mean, lo, hi)`` of ``values``.

    For board scores the values are already paired differences (one per board), so this is
    the paired t interval. With fewer than 2 values the interval is ``(mean, mean)``.

    Raises:
        ValueError: empty ``values`` or ``conf`` outside (0, 1).
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("mean_ci needs at least one value")
    _check_conf(conf)
    m = float(x.mean())
    if x.size < 2:
        return m, m, m
    se = float(x.std(ddof=1)) / np.sqrt(x.size)
    if se == 0.0:
        return m, m, m
    lo, hi = stats.t.interval(conf, df=x.size - 1, loc=m, scale=se)
    return m, float(lo), float(hi)


def bootstrap_ci(values: Sequence[float] | np.ndarray, rng: np.random.Generator, conf: float = 0.95,
                 n_boot: int = 2000) -> tuple[float, float, float]:
    """Mean and percentile-bootstrap interval ``(mean, lo, hi)`` over resampled values."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    _check_conf(conf)
    idx = rng.integers(0, x.size, size=(n_boot, x.size))
    means = x[idx].mean(axis=1)
    a = (1.0 - conf) / 2.0
    return float(x.mean()), float(np.quantile(means, a)), float(np.quantile(means, 1.0 - a))


def wilson_interval(successes: float, n: int, conf: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n``.

    ``successes`` may be fractional (ties counted as one half). Returns ``(nan, nan)`` for
    ``n == 0``; agrees with ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``.

    Raises:
        ValueError: ``successes`` outside ``[0, n]`` or ``conf`` outside (0, 1).
    """
    _check_conf(conf)
    if n <= 0:
        return float("nan"), float("nan")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    z = float(stats.norm.ppf(1.0 - (1.0 - conf) / 2.0))
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def win_rate(deltas: Sequence[float] | np.ndarray) -> tuple[float, float, int]:
    """``(rate, wins, n)``: share of positive deltas, ties counting one half."""
    x = np.asarray(deltas, dtype=float)
    n = int(x.size)
    wins = float((x > 0).sum() + 0.5 * (x == 0).sum())
    return (wins / n if n else float("nan")), wins, n


def boards_needed(sd: float, edge: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Boards for ``power`` to detect a mean edge ``edge`` with per-board spread ``sd``
    (two-sided level ``alpha``): ``(z_{1-alpha/2} + z_power)^2 sd^2 / edge^2``, about
    ``7.85 sd^2 / edge^2`` at the defaults (docs/evaluation.md "Sample size")."""
    if edge == 0:
        return float("inf")
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    return z * z * sd * sd / (edge * edge)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value of two classifiers scored on the same items: a binomial
    test (p = 1/2) of ``b_only`` among the ``a_only + b_only`` discordant items (1.0 when there
    are none). It assumes independent items.

    Raises:
        ValueError: a negative count.
    """
    if a_only < 0 or b_only < 0:
        raise ValueError(f"counts must be >= 0, got a_only={a_only}, b_only={b_only}")
    n = a_only + b_only
    return float(stats.binomtest(b_only, n).pvalue) if n else 1.0


def clustered_rate_difference(diff: Sequence[float] | np.ndarray, size: Sequence[float] | np.ndarray
                              ) -> tuple[float, float, float]:
    """``(estimate, se, p)`` of a paired difference of rates whose items come in correlated
    clusters (the decisions of one deal): ``diff[i]`` is cluster i's summed per-item difference
    (each item +1, 0 or -1), ``size[i]`` its item count. The estimate is ``sum(diff) / sum(size)``;
    ``se`` the cluster-robust (ratio-estimator) standard error
    ``sqrt(k / (k - 1) * sum((diff_i - estimate * size_i)^2)) / sum(size)`` over k clusters; ``p``
    the two-sided normal p-value of ``estimate / se`` (1.0 when ``se`` is 0).

    Raises:
        ValueError: fewer than 2 clusters, arrays of different lengths, or no items.
    """
    d = np.asarray(diff, dtype=float)
    m = np.asarray(size, dtype=float)
    if d.shape != m.shape or d.ndim != 1:
        raise ValueError(f"diff and size must be 1-d of one length, got {d.shape} and {m.shape}")
    if d.size < 2 or m.sum() <= 0:
        raise ValueError(f"need at least 2 clusters and one item, got {d.size} clusters, {m.sum():g} items")
    k, total = d.size, float(m.sum())
    est = float(d.sum()) / total
    se = float(np.sqrt(k / (k - 1) * float(((d - est * m) ** 2).sum()))) / total
    p = float(2 * stats.norm.sf(abs(est) / se)) if se > 0 else 1.0
    return est, se, p


def _check_conf(conf: float) -> None:
    if not 0.0 < conf < 1.0:
        raise ValueError(f"conf must be in (0, 1), got {conf}")


__all__ = [
    "boards_needed",
    "bootstrap_ci",
    "clustered_rate_difference",
    "mcnemar_exact",
    "mean_ci",
    "wilson_interval",
    "win_rate",
]
