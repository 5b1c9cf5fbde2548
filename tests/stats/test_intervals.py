"""Score and exact intervals against statsmodels, scipy root-finding and the papers' formulas."""

import math

import numpy as np
import pytest
from scipy import optimize, stats
from statsmodels.stats.proportion import proportion_confint

from ragaudit.exceptions import InputError
from ragaudit.stats import paired_difference_interval, proportion_interval

TABLES = [  # (both, a_only, b_only, neither)
    (35, 1, 1, 5),  # the chapter's `correct`
    (25, 2, 0, 3),  # no question favours B
    (1, 7, 1, 12),  # Bentur et al. (2009), Fagerland et al. (2014)
    (59, 16, 6, 80),  # Cavo et al. (2012), Fagerland et al. (2014)
    (0, 0, 0, 30),  # nobody right, nothing differs
    (10, 0, 5, 0),
    (20, 3, 9, 8),
    (400, 12, 25, 563),
]


@pytest.mark.parametrize("table", TABLES)
def test_tango_interval_equals_brute_force_score_inversion(table, tango_oracle):
    result = paired_difference_interval(*table, method="tango")
    low, high = tango_oracle(*table)
    assert result.statistic == (table[2] - table[1]) / sum(table)
    assert result.confidence_interval.low == pytest.approx(low, abs=1e-7)
    assert result.confidence_interval.high == pytest.approx(high, abs=1e-7)
    assert result.method == "Tango score"


@pytest.mark.parametrize("table", TABLES)
def test_default_interval_equals_the_scipy_inversion_of_mcnemar(table, mcnemar_oracle):
    result = paired_difference_interval(*table)
    low, high = mcnemar_oracle(*table)
    assert result.method == "McNemar exact inverted"
    assert result.confidence_interval.low == pytest.approx(low, abs=1e-9)
    assert result.confidence_interval.high == pytest.approx(high, abs=1e-9)


def test_mcnemar_interval_agrees_with_the_exact_test_on_every_table_up_to_60():
    """Issue 32: Tango printed [+0.011, +0.687] beside McNemar's p = 0.125 at (3, 0, 4, 3).

    Every (b, c) with b + c <= n for every n <= 60 (39,711 tables, vectorised): the interval
    excludes 0 exactly when scipy's exact binomial test of b of b + c at 1/2 has p < 0.05, and
    contains the estimate; at a dyadic level (p = alpha exactly is possible) too.
    """
    from ragaudit.stats.intervals import mcnemar_exact_bounds

    b, c, n = (
        np.array(v)
        for v in zip(
            *[(x, y, t) for t in range(1, 61) for x in range(t + 1) for y in range(t + 1 - x)],
            strict=True,
        )
    )
    # McNemar's two-sided p: scipy's binomtest on the discordant pairs (symmetric at 1/2)
    pvalue = {
        (x, y): stats.binomtest(x, x + y).pvalue if x + y else 1.0
        for x, y in {(int(x), int(y)) for x, y in zip(b, c, strict=True)}
    }
    p = np.array([pvalue[int(x), int(y)] for x, y in zip(b, c, strict=True)])
    for confidence in (0.95, 0.875):
        low, high = mcnemar_exact_bounds(b, c, n, confidence)
        excludes = (low > 0) | (high < 0)
        assert np.array_equal(excludes, p < 1 - confidence - 1e-12)
        assert np.all((low <= (b - c) / n + 1e-12) & ((b - c) / n <= high + 1e-12))
    low, high = mcnemar_exact_bounds(np.array([4]), np.array([0]), np.array([10]), 0.95)
    assert low[0] < 0 < high[0]  # the (3, 0, 4, 3): p = 0.125


def _newcombe_by_formula(both, a_only, b_only, neither, confidence=0.95):
    # Newcombe (1998b), method 10, with statsmodels' Wilson limits for the two margins.
    n = both + a_only + b_only + neither
    p_b, p_a = (both + b_only) / n, (both + a_only) / n
    l_b, u_b = proportion_confint(both + b_only, n, alpha=1 - confidence, method="wilson")
    l_a, u_a = proportion_confint(both + a_only, n, alpha=1 - confidence, method="wilson")
    margins = (both + b_only) * (a_only + neither) * (both + a_only) * (b_only + neither)
    phi = (both * neither - a_only * b_only) / math.sqrt(margins) if margins else 0.0
    d_low = math.sqrt(
        max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2)
    )
    d_high = math.sqrt(
        max(0.0, (u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2)
    )
    return p_b - p_a - d_low, p_b - p_a + d_high


@pytest.mark.parametrize("table", TABLES)
def test_newcombe_hybrid_score_interval_matches_the_formula(table):
    result = paired_difference_interval(*table, method="newcombe")
    low, high = _newcombe_by_formula(*table)
    assert result.confidence_interval.low == pytest.approx(low, abs=1e-12)
    assert result.confidence_interval.high == pytest.approx(high, abs=1e-12)


@pytest.mark.parametrize("k,n", [(0, 6), (6, 6), (50, 50), (49, 50), (81, 263), (1, 1000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_single_rate_intervals_equal_statsmodels(k, n, confidence):
    for ours, theirs in (("clopper-pearson", "beta"), ("wilson", "wilson")):
        result = proportion_interval(k, n, confidence=confidence, method=ours)
        low, high = proportion_confint(k, n, alpha=1 - confidence, method=theirs)
        assert result.confidence_interval.low == pytest.approx(low, abs=1e-12)
        assert result.confidence_interval.high == pytest.approx(high, abs=1e-12)


@pytest.mark.parametrize("k,n", [(1, 6), (5, 6), (49, 50), (81, 263), (10, 20)])
def test_continuity_corrected_wilson_solves_its_defining_equation(k, n):
    # Limits are the roots of |k/n - pi| - 1/(2n) = z sqrt(pi (1 - pi) / n) (Newcombe 1998a).
    z = stats.norm.ppf(0.975)

    def gap(pi):
        return abs(k / n - pi) - 1 / (2 * n) - z * math.sqrt(pi * (1 - pi) / n)

    low = optimize.brentq(gap, 1e-12, k / n - 1 / (2 * n))
    high = optimize.brentq(gap, k / n + 1 / (2 * n), 1 - 1e-12)
    result = proportion_interval(k, n, method="wilson-cc").confidence_interval
    assert (result.low, result.high) == (
        pytest.approx(low, abs=1e-9),
        pytest.approx(high, abs=1e-9),
    )


def test_intervals_have_width_where_the_truth_is_uncertain():
    # 50 of 50: the bootstrap says [1, 1]; the rate may well be 0.95.
    every = proportion_interval(50, 50).confidence_interval
    assert every.low == pytest.approx(0.025 ** (1 / 50)) and every.high == 1.0
    # No question favours B: B may still be slightly better.
    one_sided = paired_difference_interval(25, 2, 0, 3).confidence_interval
    assert one_sided.low < -2 / 30 < 0 < one_sided.high
    # Nothing differs at all: the interval is symmetric around 0 and not a point.
    nothing = paired_difference_interval(20, 0, 0, 10).confidence_interval
    assert nothing.low == pytest.approx(-nothing.high) and nothing.high > 0.05


def test_tango_interval_is_vectorised_identically():
    from ragaudit.stats.intervals import tango_bounds

    tables = np.array(TABLES)
    low, high = tango_bounds(tables[:, 2], tables[:, 1], tables.sum(axis=1), 0.95)
    for i, table in enumerate(TABLES):
        single = paired_difference_interval(*map(int, table), method="tango").confidence_interval
        assert (low[i], high[i]) == (single.low, single.high)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: proportion_interval(3, 2), r"expected 0 <= k <= n and n >= 1, found k=3, n=2"),
        (lambda: proportion_interval(-1, 2), r"k: expected a count >= 0, found -1"),
        (lambda: proportion_interval(1, 2, method="agresti"), r"expected one of clopper-pearson"),
        (lambda: paired_difference_interval(0, 0, 0, 0), r"expected at least one pair"),
        (
            lambda: paired_difference_interval(1, 2, 3, 4, method="wald"),
            r"one of exact, tango, newcombe",
        ),
        (lambda: paired_difference_interval(1.5, 2, 3, 4), r"both: expected a count >= 0"),
        (lambda: proportion_interval(1, 2, confidence=95), r"strictly between 0 and 1"),
    ],
)
def test_bad_arguments_say_what_was_expected(call, message):
    with pytest.raises(InputError, match=message):
        call()
