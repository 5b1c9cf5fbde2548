"""Exact sign-flip p-values: every method against brute force, statsmodels and Monte Carlo."""

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from ragaudit.exceptions import InputError
from ragaudit.stats import paired_permutation_test


def brute_force_pvalue(diffs):
    """Count all 2**n sign patterns of *every* difference (zeros included), in chunks."""
    d = np.asarray(diffs, dtype=float)
    n = d.size
    observed = abs(d.sum())
    tolerance = 1e-9 * max(np.abs(d).sum(), 1e-300)
    count = 0
    chunk = 1 << 14
    for start in range(0, 2**n, chunk):
        patterns = np.arange(start, min(2**n, start + chunk))
        signs = 1 - 2 * ((patterns[:, None] >> np.arange(n)) & 1)
        count += int(np.count_nonzero(np.abs(signs @ d) >= observed - tolerance))
    return count / 2**n


def _case(rng, kind, n):
    if kind == "continuous":
        d = rng.normal(0.1, 1.0, n)
    elif kind == "thirds":
        d = rng.choice([-2, -1, 0, 0, 1, 2, 3], n) / 3
    elif kind == "binary":
        d = rng.choice([-1.0, 0.0, 0.0, 1.0], n)
    else:  # few distinct irrational values
        d = rng.choice([-np.sqrt(2), 0.0, np.sqrt(3), np.pi / 7], n)
    d[rng.random(n) < 0.3] = 0.0
    return d


@pytest.mark.parametrize("kind", ["continuous", "thirds", "binary", "irrational"])
@pytest.mark.parametrize("seed", range(4))
def test_exact_pvalue_equals_brute_force_on_random_small_cases(kind, seed):
    rng = np.random.default_rng(100 * seed + len(kind))
    n = int(rng.integers(1, 15))
    d = _case(rng, kind, n)
    result = paired_permutation_test(np.zeros(n), d)
    assert result.exact
    assert result.n_differing == np.count_nonzero(d)
    assert result.pvalue == pytest.approx(brute_force_pvalue(d), rel=1e-9, abs=1e-15)


def test_distinct_value_method_equals_brute_force_when_enumeration_is_off():
    rng = np.random.default_rng(7)
    d = rng.choice([-np.sqrt(2), np.sqrt(3), np.pi / 7], 16)
    result = paired_permutation_test(np.zeros(16), d, exact_max_n=0)
    assert result.method == "exact (distinct values)"
    assert result.pvalue == pytest.approx(brute_force_pvalue(d), rel=1e-9)


def test_enumeration_is_over_the_nonzero_differences_only():
    # 60 questions, 12 non-zero irrational differences: exact, whatever n is.
    rng = np.random.default_rng(3)
    nonzero = rng.normal(0.3, 1.0, 12)
    d = np.zeros(60)
    d[rng.choice(60, 12, replace=False)] = nonzero
    result = paired_permutation_test(np.zeros(60), d)
    assert result.method == "exact (enumeration)" and result.n_permutations == 2**12
    assert result.pvalue == pytest.approx(brute_force_pvalue(nonzero), rel=1e-12)


def test_the_foreign_corpus_case_from_the_issue():
    # 42 questions, 3 non-zero differences all one way: exact p = 2 / 2**3, whatever the seed.
    d = np.array([1 / 3, 2 / 3, 1.0] + [0.0] * 39)
    for seed in (0, 1, 2):
        result = paired_permutation_test(np.zeros(42), d, rng=seed)
        assert result.pvalue == pytest.approx(0.25, rel=1e-12) and result.exact


@pytest.mark.parametrize("n", [25, 40, 100, 300, 1000])
def test_binary_pvalue_equals_statsmodels_exact_mcnemar(n):
    rng = np.random.default_rng(n)
    for shift in (0.0, 0.05, 0.15):
        a = (rng.random(n) < 0.6).astype(float)
        flip = rng.random(n) < 0.1 + shift
        b = np.where(flip, 1 - a, a)
        b[(a == 0) & (rng.random(n) < shift)] = 1.0
        table = [
            [np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
            [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))],
        ]
        expected = mcnemar(table, exact=True).pvalue
        result = paired_permutation_test(a, b)
        assert result.method == "exact (lattice)"
        assert result.pvalue == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_the_issue_n40_binary_case_is_mcnemar_whatever_the_seed():
    # 4 A-only vs 13 B-only discordant pairs among 40 questions: McNemar exact p = 0.049.
    a = np.array([1.0] * 4 + [0.0] * 13 + [1.0] * 23)
    b = np.array([0.0] * 4 + [1.0] * 13 + [1.0] * 23)
    expected = mcnemar([[23, 4], [13, 0]], exact=True).pvalue
    assert 0.04 < expected < 0.05
    for seed in range(5):
        assert paired_permutation_test(a, b, rng=seed).pvalue == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("values", [(-1, 1), (-2, -1, 1, 2), (-1 / 3, 1 / 3, 2 / 3, 1)])
@pytest.mark.parametrize("n", [12, 18, 20])
def test_lattice_pvalue_equals_the_full_2_to_the_n_count(values, n):
    rng = np.random.default_rng(n + len(values))
    d = rng.choice(np.array(values, dtype=float), n)
    d[: n // 4] = abs(d[: n // 4])  # a shift so the p-values are not all near 1
    result = paired_permutation_test(np.zeros(n), d)
    assert result.method == "exact (lattice)"
    assert result.pvalue == pytest.approx(brute_force_pvalue(d), rel=1e-9)


@pytest.mark.slow
def test_lattice_pvalue_agrees_with_a_high_resample_monte_carlo_at_n_500():
    rng = np.random.default_rng(11)
    d = rng.choice(np.array([-1.0, -0.5, 0.0, 0.5, 1.0]), 500, p=[0.2, 0.2, 0.2, 0.2, 0.2])
    d[:40] = 1.0  # a modest shift: p of a few percent
    exact = paired_permutation_test(np.zeros(500), d)
    assert exact.method == "exact (lattice)"
    trials, hits, observed = 200_000, 0, abs(d.sum())
    for _ in range(trials // 10_000):  # vectorised in chunks of 10,000 sign patterns
        signs = rng.integers(0, 2, size=(10_000, 500), dtype=np.int8) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d) >= observed - 1e-9))
    estimate = hits / trials
    error = np.sqrt(exact.pvalue * (1 - exact.pvalue) / trials)
    assert 0.005 < exact.pvalue < 0.5
    assert abs(estimate - exact.pvalue) < 4 * error


def test_no_differing_question_gives_p_one_exactly():
    result = paired_permutation_test([1.0, 0.5, 0.0], [1.0, 0.5, 0.0])
    assert (result.pvalue, result.exact, result.n_differing) == (1.0, True, 0)


def test_exact_max_n_is_validated():
    with pytest.raises(InputError, match=r"exact_max_n: expected an integer between 0 and 30"):
        paired_permutation_test([0, 1], [1, 1], exact_max_n=31)
