"""``stats.quantile_interval``: the p95 latency's distribution-free interval.

Expected ranks come from a direct search written here with scipy.stats.binom (every pair of
order statistics, its coverage P(l <= B < u) for B ~ Binomial(n, q)), independent of the
vectorised rank choice in the library; coverage is checked by seeded simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ragaudit.exceptions import InputError
from ragaudit.stats.quantile import min_n_for_upper, quantile_interval


def direct_ranks(n: int, q: float, confidence: float) -> tuple[int | None, int | None]:
    """Equal-tailed ranks by brute force: each tail's miss probability <= alpha / 2."""
    half = (1 - confidence) / 2
    # X_(l) > xi  <=>  fewer than l draws at or below xi  <=>  B <= l - 1
    lows = [r for r in range(1, n + 1) if stats.binom.cdf(r - 1, n, q) <= half]
    # X_(u) < xi  <=>  at least u draws below xi  <=>  B >= u
    highs = [u for u in range(1, n + 1) if stats.binom.sf(u - 1, n, q) <= half]
    return (max(lows) if lows else None, min(highs) if highs else None)


@pytest.mark.parametrize("n", [1, 5, 20, 54, 60, 71, 72, 100, 250, 1000])
@pytest.mark.parametrize("q", [0.5, 0.9, 0.95, 0.99])
def test_ranks_and_ends_equal_the_direct_order_statistic_computation(n, q):
    rng = np.random.default_rng(n)
    latencies = rng.lognormal(3.0, 1.0, size=n)
    result = quantile_interval(latencies, q=q)
    low, high = direct_ranks(n, q, 0.95)
    assert result.ranks == (low, high)
    ordered = np.sort(latencies)
    assert result.confidence_interval.low == (ordered[low - 1] if low else -math.inf)
    assert result.confidence_interval.high == (ordered[high - 1] if high else math.inf)
    below = stats.binom.cdf(low - 1, n, q) if low else 0.0
    above = stats.binom.cdf(high - 1, n, q) if high else 1.0
    assert result.coverage == pytest.approx(above - below, abs=1e-12)
    assert result.coverage >= 0.95
    assert result.statistic == pytest.approx(np.quantile(latencies, q))


def test_the_upper_end_of_p95_exists_from_72_questions():
    # 0.95**71 = 0.026 > 0.025 >= 0.95**72 = 0.0249
    assert 0.95**71 > 0.025 >= 0.95**72
    assert min_n_for_upper(0.95) == 72
    assert quantile_interval(np.arange(71.0)).confidence_interval.high == math.inf
    assert quantile_interval(np.arange(72.0)).ranks[1] == 72


@pytest.mark.slow
@pytest.mark.parametrize("n", [80, 200, 1000])
def test_coverage_of_the_true_p95_of_skewed_latencies(n):
    # lognormal(3, 1) latencies: the true p95 is exp(3 + z_0.95)
    truth = math.exp(3.0 + stats.norm.ppf(0.95))
    rng = np.random.default_rng(20261201)
    hits = 0
    replicates = 2000
    for _ in range(replicates):
        ci = quantile_interval(rng.lognormal(3.0, 1.0, size=n)).confidence_interval
        hits += ci.low <= truth <= ci.high
    assert hits / replicates >= 0.94  # nominal 0.95; the exact coverage is >= 0.95


@pytest.mark.parametrize(
    ("values", "kwargs", "message"),
    [
        ([], {}, r"values: expected a non-empty 1-d sequence"),
        ([1.0, float("nan")], {}, r"values: expected finite numbers"),
        ([1.0, 2.0], {"q": 1.0}, r"q: expected a number in \(0, 1\), found 1.0"),
        ([1.0, 2.0], {"confidence": 1.5}, r"confidence: expected"),
    ],
)
def test_bad_input_is_named(values, kwargs, message):
    with pytest.raises(InputError, match=message):
        quantile_interval(values, **kwargs)
