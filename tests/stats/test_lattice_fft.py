"""FFT lattice p-values against the direct convolution, scipy's exact permutation test and
Monte Carlo; grouped random sign patterns against exact p-values."""

import numpy as np
import pytest
from scipy import stats

from ragaudit.stats.lattice_fft import FLOOR, fft_lattice_pvalue
from ragaudit.stats.permutation import (
    EXACT_FFT,
    EXACT_LATTICE,
    _lattice_pvalue,
    exact_pvalue,
    grouped_flip_sums,
    monte_carlo_pvalues,
)


def _steps(d):
    """Integer steps of differences rounded to 4 decimals, and their signs."""
    k = np.rint(np.abs(d) * 1e4).astype(np.int64)
    return k, np.sign(d).astype(np.int64)


def _rounded(rng, n, shift, sd):
    d = np.round(rng.normal(shift, sd, n), 4)
    return d[d != 0]


@pytest.mark.parametrize(
    ("n", "shift", "sd"),
    [(50, 0.0, 0.1), (80, 0.05, 0.3), (200, 0.02, 0.1), (300, 0.004, 0.03), (60, 0.2, 0.3)],
)
def test_fft_equals_the_direct_convolution(n, shift, sd):
    k, s = _steps(_rounded(np.random.default_rng(n), n, shift, sd))
    direct, _ = _lattice_pvalue(k, s)
    fft, _ = fft_lattice_pvalue(k, s)
    # measured: |difference| <= 2.3e-14 on these cases (round-off of the FFT)
    assert abs(fft - direct) <= 1e-12 + 1e-9 * direct


@pytest.mark.parametrize("seed", range(5))
def test_fft_equals_scipy_exact_permutation_test(seed):
    rng = np.random.default_rng(100 + seed)
    d = np.round(rng.normal(0.03, 0.05, 14), 4)
    d[d == 0] = 0.0001
    expected = stats.permutation_test(
        (d,), np.sum, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    ).pvalue  # all 2^14 sign patterns
    p, _ = fft_lattice_pvalue(*_steps(d))
    assert abs(p - expected) < 1e-9


def test_tiny_p_is_reported_as_the_floor():
    # 500 differences all positive: the exact p is 2 / 2^500, far below the round-off.
    d = np.round(np.random.default_rng(3).uniform(0.0001, 0.3, 500), 4)
    p, _ = fft_lattice_pvalue(*_steps(d))
    assert p == FLOOR


def test_exact_pvalue_names_the_fft_method_and_agrees_with_monte_carlo():
    d = _rounded(np.random.default_rng(7), 3000, 0.001, 0.03)  # past the direct cost cap
    p, method, _ = exact_pvalue(d, 20)
    assert method == EXACT_FFT
    mc = monte_carlo_pvalues(d[:, None], 20_000, np.random.default_rng(8))[0]
    assert abs(p - mc) <= 4 * np.sqrt(p * (1 - p) / 20_000) + 1e-4


def test_coarse_lattices_keep_the_direct_method():
    d = np.random.default_rng(1).choice([-1, 0, 1, 2], 5000) / 3
    assert exact_pvalue(d, 20)[1] == EXACT_LATTICE


def test_grouped_patterns_have_the_sign_flip_distribution():
    # 3,000 questions of three values on a lattice of 0.05: the exact p is known, and the
    # grouped Monte Carlo p (one binomial per distinct value) agrees within its error.
    rng = np.random.default_rng(11)
    d = rng.choice([0.3, -0.1, 0.05, 0.0], 3000, p=[0.1, 0.25, 0.15, 0.5])
    p_exact, method, _ = exact_pvalue(d, 20)
    assert method == EXACT_LATTICE
    sums = grouped_flip_sums(d[:, None], 20_000, np.random.default_rng(12))
    assert sums is not None
    p_mc = (np.count_nonzero(np.abs(sums[:, 0]) >= abs(d.sum()) - 1e-9) + 1) / 20_001
    assert abs(p_mc - p_exact) <= 4 * np.sqrt(p_exact * (1 - p_exact) / 20_000) + 1e-4
    # The mean and variance of the sums are those of sum(s_i d_i): 0 and sum(d_i^2).
    assert abs(sums.mean()) < 5 * np.sqrt(np.sum(d**2) / 20_000)
    assert abs(sums.var() / np.sum(d**2) - 1) < 0.05


def test_a_column_p_does_not_depend_on_the_other_columns():
    rng = np.random.default_rng(5)
    d = np.column_stack(
        [
            rng.choice([0.3, -0.1, 0.0], 4000),
            rng.normal(0, 0.1, 4000),
            rng.choice([0.5, -0.4], 4000),
        ]
    )
    together = monte_carlo_pvalues(d, 2000, np.random.default_rng(9))
    alone = [monte_carlo_pvalues(d[:, [j]], 2000, np.random.default_rng(9))[0] for j in range(3)]
    assert np.array_equal(together, alone)


def test_a_compare_row_names_the_fft_method():
    from ragaudit.stats import PerQuestionMetrics, compare_runs
    from ragaudit.stats.options import short_method

    rng = np.random.default_rng(21)
    a = rng.uniform(0.2, 0.8, 3000).round(4)
    b = np.clip(a + rng.normal(0.002, 0.03, 3000), 0, 1).round(4)
    runs = [
        PerQuestionMetrics(name, {f"q{i}": {"m": float(v)} for i, v in enumerate(values)})
        for name, values in (("A", a), ("B", b))
    ]
    row = compare_runs(*runs, subsample_sizes=()).metrics[0]
    assert row.p_method == EXACT_FFT and row.exact
    assert short_method(row.p_method) == "exact"
    assert row.pvalue == exact_pvalue(b - a, 20)[0]
