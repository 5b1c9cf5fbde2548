import numpy as np
import pytest
from scipy import stats

from ragaudit.exceptions import InputError
from ragaudit.stats import paired_bootstrap, paired_permutation_test


def _mean_diff(x, y, axis=-1):
    return np.mean(y - x, axis=axis)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [2, 5, 12])
def test_exact_permutation_matches_scipy_exhaustive(seed, n):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = a + rng.normal(0.15, 0.3, n)
    ours = paired_permutation_test(a, b)
    reference = stats.permutation_test(
        (a, b), _mean_diff, permutation_type="samples", n_resamples=np.inf, vectorized=True
    )
    assert ours.exact and ours.n_permutations == 2**n
    assert ours.pvalue == reference.pvalue


@pytest.mark.parametrize("seed", range(4))
def test_exact_permutation_with_ties_matches_scipy(seed):
    # 0/1 and graded metrics produce many exactly tied sums: ties must count as extreme.
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, 14) / 2
    b = rng.integers(0, 3, 14) / 2
    reference = stats.permutation_test(
        (a, b), _mean_diff, permutation_type="samples", n_resamples=np.inf, vectorized=True
    )
    assert paired_permutation_test(a, b).pvalue == reference.pvalue


@pytest.mark.slow
def test_exact_enumeration_splits_into_blocks_above_16_questions():
    rng = np.random.default_rng(7)
    a = rng.random(17)
    b = a + rng.normal(0.1, 0.3, 17)
    reference = stats.permutation_test(
        (a, b), _mean_diff, permutation_type="samples", n_resamples=np.inf, vectorized=True
    )
    assert paired_permutation_test(a, b).pvalue == pytest.approx(reference.pvalue, abs=0)


def test_monte_carlo_pvalue_is_add_one_and_close_to_exact():
    rng = np.random.default_rng(3)
    a = rng.random(22)
    b = a + rng.normal(0.12, 0.3, 22)
    exact = paired_permutation_test(a, b, exact_max_n=22).pvalue
    approx = paired_permutation_test(a, b, exact_max_n=20, n_permutations=20_000, rng=5)
    assert not approx.exact
    # Monte Carlo standard error sqrt(p(1-p)/N) < 0.0036; allow 4 standard errors.
    assert approx.pvalue == pytest.approx(exact, abs=0.015)
    # With a huge effect no random pattern is as extreme: p is 1/(N+1), never 0.  (Square
    # roots of distinct non-squares lie on no lattice, so this one is Monte Carlo.)
    far = paired_permutation_test(np.zeros(40), np.sqrt(np.arange(2, 42)), n_permutations=999)
    assert far.method == "Monte Carlo" and far.pvalue == 1 / 1000
    # On a lattice the same effect is exact: 2 of the 2**40 patterns are as extreme.
    lattice = paired_permutation_test(np.zeros(40), np.ones(40) + np.arange(40) / 100)
    assert lattice.method == "exact (lattice)"
    assert lattice.pvalue == pytest.approx(2 / 2**40, rel=1e-12)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
@pytest.mark.parametrize("seed", range(3))
def test_bootstrap_interval_agrees_with_scipy(method, seed):
    rng = np.random.default_rng(seed)
    a = rng.random(50)
    b = np.clip(a + rng.normal(0.05, 0.2, 50), 0, 1)
    ours = paired_bootstrap(a, b, method=method.lower(), n_resamples=20_000, rng=seed)
    reference = stats.bootstrap(
        (a, b),
        _mean_diff,
        paired=True,
        vectorized=True,
        method=method,
        n_resamples=20_000,
        rng=100 + seed,
    )
    # Different random streams: the endpoints agree up to Monte Carlo error (~0.003 here).
    assert ours.confidence_interval.low == pytest.approx(
        reference.confidence_interval.low, abs=0.006
    )
    assert ours.confidence_interval.high == pytest.approx(
        reference.confidence_interval.high, abs=0.006
    )
    assert ours.standard_error == pytest.approx(reference.standard_error, rel=0.05)
    assert ours.statistic == pytest.approx(np.mean(b - a))


def test_bca_differs_from_percentile_on_skewed_differences():
    rng = np.random.default_rng(11)
    a = np.zeros(40)
    b = rng.exponential(1.0, 40) ** 2
    percentile = paired_bootstrap(a, b, rng=1).confidence_interval
    bca = paired_bootstrap(a, b, method="bca", rng=1).confidence_interval
    # Right-skewed data: BCa moves both endpoints up relative to the percentile interval.
    assert bca.low > percentile.low and bca.high > percentile.high


def test_bootstrap_is_seeded_and_leaves_global_state_alone():
    rng = np.random.default_rng(0)
    a, b = rng.random(30), rng.random(30)
    np.random.seed(123)  # noqa: NPY002 - the legacy global state is what must stay untouched
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    first = paired_bootstrap(a, b, rng=42)
    assert np.array_equal(np.random.get_state()[1], before)  # noqa: NPY002
    assert paired_bootstrap(a, b, rng=42) == first
    assert paired_bootstrap(a, b, rng=43) != first


def test_bootstrap_equals_a_loop_oracle_for_the_same_indices():
    # The counts-matrix trick must give exactly the means of the resampled questions.
    rng = np.random.default_rng(4)
    a, b = rng.random(9), rng.random(9)
    result = paired_bootstrap(a, b, n_resamples=500, rng=8)
    indices = np.random.default_rng(8).integers(0, 9, size=(500, 9))
    oracle = np.array([np.mean((b - a)[row]) for row in indices])
    low, high = np.percentile(oracle, [2.5, 97.5])
    assert result.confidence_interval.low == pytest.approx(low, abs=1e-12)
    assert result.confidence_interval.high == pytest.approx(high, abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_interval_covers_the_true_difference_about_95_percent(method):
    # 1,000 synthetic paired datasets with a known mean difference of 0.1: the continuous,
    # unbounded case where compare still uses the bootstrap (--ci bootstrap / bca, or a metric
    # outside [0, 1]).
    rng = np.random.default_rng(2024)
    covered = 0
    trials = 1000
    for trial in range(trials):
        a = rng.random(60)
        b = a + 0.1 + rng.normal(0, 0.25, 60)
        ci = paired_bootstrap(a, b, n_resamples=1000, rng=trial, method=method)
        covered += ci.confidence_interval.low <= 0.1 <= ci.confidence_interval.high
    # Binomial sd at 0.95 is 0.007; the bootstrap undercovers slightly at n=60.
    assert 0.92 <= covered / trials <= 0.975


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"confidence": 1.5}, r"confidence: expected a number strictly between 0 and 1"),
        ({"confidence": 0}, r"confidence: expected a number strictly between 0 and 1"),
        ({"n_resamples": 0}, r"resamples: expected an integer >= 1, found 0"),
        ({"method": "normal"}, r"ci method: expected 'percentile' or 'bca', found 'normal'"),
    ],
)
def test_bootstrap_rejects_bad_arguments(kwargs, message):
    with pytest.raises(InputError, match=message):
        paired_bootstrap([0.1, 0.2], [0.3, 0.4], **kwargs)


def test_bad_values_are_named():
    with pytest.raises(InputError, match=r"found NaN or infinity at position\(s\) 1"):
        paired_bootstrap([0.1, np.nan], [0.3, 0.4])
    with pytest.raises(InputError, match=r"equal length, found shapes \(2,\) and \(3,\)"):
        paired_permutation_test([0.1, 0.2], [0.3, 0.4, 0.5])
    with pytest.raises(InputError, match=r"permutations: expected an integer >= 1, found -3"):
        paired_permutation_test([0.1], [0.2], n_permutations=-3)
    with pytest.raises(InputError, match=r"exact_max_n: expected an integer between 0 and 30"):
        paired_permutation_test([0.1], [0.2], exact_max_n=40)


def test_percentile_bootstrap_reproduces_scipy_given_the_same_seed():
    # scipy draws its paired indices with Generator.integers(0, n, (resamples, n)) too, and
    # int64 draws do not depend on our batch size, so with one seed both see the same
    # resamples and the percentile intervals coincide (a check of the whole index pipeline).
    rng = np.random.default_rng(12)
    a, b = rng.random(30), rng.random(30)
    ours = paired_bootstrap(a, b, n_resamples=3000, rng=77)
    reference = stats.bootstrap(
        (a, b),
        _mean_diff,
        paired=True,
        vectorized=True,
        n_resamples=3000,
        method="percentile",
        rng=77,
    )
    assert ours.confidence_interval.low == pytest.approx(
        reference.confidence_interval.low, abs=1e-12
    )
    assert ours.confidence_interval.high == pytest.approx(
        reference.confidence_interval.high, abs=1e-12
    )
