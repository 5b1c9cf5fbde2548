"""The sign-flip verdict under skewed differences of mean 0 (issue 32, item 4).

The type-I errors come from ``benchmarks/signflip_null_skew.py`` (an exact sum over the number
of losses through compare's own exact p-value); the binomial weights are checked against
scipy.stats here, and the issue's two numbers (an independent re-simulation) are reproduced.
"""

import numpy as np
import pytest
from benchmarks import signflip_null_skew as skew
from scipy import stats

from ragaudit.reports.renderer import render
from ragaudit.reports.stats import comparison_report
from ragaudit.stats import PerQuestionMetrics, compare_runs
from ragaudit.stats.compare import skewness
from ragaudit.stats.permutation import exact_pvalue
from ragaudit.stats.verdicts import SKEW_LIMIT, SKEW_MAX_N


def test_type_one_error_of_skewed_mean_zero_differences_matches_the_issue():
    # +0.05 w.p. 0.8, -0.2 w.p. 0.2 (mean 0, skewness -1.5)
    assert skew.type_one_error(10, 0.2) == pytest.approx(0.114, abs=5e-4)
    assert skew.type_one_error(20, 0.2) == pytest.approx(0.072, abs=5e-4)
    # symmetric differences: never above alpha (the test is exact)
    assert all(skew.type_one_error(n, 0.5) <= 0.05 for n in (6, 10, 20, 30))


def test_type_one_error_is_the_binomial_sum_over_rejected_loss_counts():
    n, q = 12, 0.3
    rejected = [
        k
        for k in range(n + 1)
        if exact_pvalue(np.array([-(1 - q)] * k + [q] * (n - k)), 20)[0] < 0.05
    ]
    assert skew.type_one_error(n, q) == pytest.approx(stats.binom.pmf(rejected, n, q).sum())
    assert skewness([q] * 7 + [-(1 - q)] * 3) == pytest.approx(stats.skew([q] * 7 + [-0.7] * 3))


def _runs(a, b):
    ids = [f"q{i:02d}" for i in range(len(a))]
    return [
        PerQuestionMetrics(name, {q: {"m": v} for q, v in zip(ids, x, strict=True)})
        for name, x in (("A", a), ("B", b))
    ]


def test_a_small_skewed_fractional_row_carries_a_footnote():
    a = [0.5] * 10
    b = [0.55] * 8 + [0.3, 0.3]  # 8 small gains, 2 large losses: skewness -1.5
    result = compare_runs(*_runs(a, b))
    row = result.metrics[0]
    assert row.n < SKEW_MAX_N and row.skewness == pytest.approx(-1.5, abs=1e-9)
    assert abs(row.skewness) >= SKEW_LIMIT
    assert row.to_dict()["skew_warning"] == row.skew_warning is not None
    text = render(comparison_report(result), "table")
    assert "the differences are skewed (skewness -1.50)" in text
    # the same shape at n = 20 is not flagged; a 0/1 row never is (McNemar needs no symmetry)
    big = compare_runs(*_runs(a * 2, b * 2)).metrics[0]
    assert big.skewness == pytest.approx(-1.5, abs=1e-9) and big.skew_warning is None
    binary = compare_runs(*_runs([0.0] * 10 + [1.0] * 2, [1.0] * 12)).metrics[0]
    assert binary.skewness is None and binary.skew_warning is None
