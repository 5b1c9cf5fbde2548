"""Hall's skew-corrected statistic, its sign-flip test and the interval that inverts it."""

import itertools

import numpy as np
import pytest
from scipy import optimize, stats

from ragaudit.stats.hall_signflip import (
    PATTERNS,
    _moment_patterns,
    _pvalue,
    hall_asymptotic_bounds,
    hall_bounds,
    hall_statistic,
)


def _hall_by_hand(y):
    """Hall (1992): sqrt(n) (W + g W^2 / 3 + g^2 W^3 / 27 + g / (6 n)), g = scipy's G1."""
    n = y.size
    w = y.mean() / y.std(ddof=1)
    g = stats.skew(y, bias=False)
    return np.sqrt(n) * (w + g * w * w / 3 + g * g * w**3 / 27 + g / (6 * n))


@pytest.mark.parametrize("seed", range(5))
def test_statistic_equals_the_formula(seed):
    y = np.random.default_rng(seed).beta(0.3, 3, 15) - 0.05
    ours = hall_statistic(np.asarray(y.sum()), float((y**2).sum()), np.asarray((y**3).sum()), 15)
    assert float(ours) == pytest.approx(_hall_by_hand(y), rel=1e-10)


@pytest.mark.parametrize("delta", [0.0, 0.05, 0.12])
def test_exact_pvalue_equals_brute_force_over_all_sign_patterns(delta):
    d = np.array([0.01, 0.3, 0.02, 0.0, 0.05, 0.4, 0.01, 0.08, 0.15, 0.02])
    sums, weight, exact = _moment_patterns(d, 10_000, np.random.default_rng(0))
    assert exact
    y = d - delta
    observed = abs(_hall_by_hand(y))
    hits = [
        abs(_hall_by_hand(np.array(signs) * y)) >= observed * (1 - 1e-9) - 1e-9
        for signs in itertools.product([-1.0, 1.0], repeat=d.size)
    ]
    assert _pvalue(d, delta, sums, weight) == pytest.approx(np.mean(hits), abs=1e-12)


def test_interval_ends_are_where_the_test_stops_rejecting():
    rng = np.random.default_rng(3)
    d = rng.beta(0.3, 3, 20)
    low, high, exact = hall_bounds(d, 0.05, 4000, np.random.default_rng(4))
    assert not exact  # 20 distinct values: 2^20 outcomes, random patterns
    sums, weight, _ = _moment_patterns(d, PATTERNS, np.random.default_rng(4))  # its patterns
    step = 1e-5  # the ends are bisected to 2^-14 of a bracket of a few standard errors
    assert _pvalue(d, low + step, sums, weight) >= 0.05 > _pvalue(d, low - 1e-3, sums, weight)
    assert _pvalue(d, high - step, sums, weight) >= 0.05 > _pvalue(d, high + 1e-3, sums, weight)
    t_half = stats.t.ppf(0.975, 19) * d.std(ddof=1) / np.sqrt(20)
    assert high > d.mean() + t_half  # right skew: reaches above t


def test_asymptotic_bounds_solve_halls_equation():
    d = np.random.default_rng(6).beta(0.3, 3, 3000)
    low, high = hall_asymptotic_bounds(d, 0.95)
    z = stats.norm.ppf(0.975)
    for end, target in ((low, z), (high, -z)):
        assert _hall_by_hand(d - end) == pytest.approx(target, abs=1e-8)
    # and brentq finds the same root of sqrt(n) g(W) = z independently
    root = optimize.brentq(lambda m: _hall_by_hand(d - m) - z, d.mean() - 0.1, d.mean())
    assert root == pytest.approx(low, abs=1e-10)


def test_no_spread_adds_nothing():
    assert hall_bounds(np.full(30, 0.08), 0.05, 100, np.random.default_rng(0)) == (
        pytest.approx(0.08),
        pytest.approx(0.08),
        True,
    )
