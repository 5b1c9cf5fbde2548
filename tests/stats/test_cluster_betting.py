"""The cluster betting interval (stats/cluster_betting.py): formulas checked independently."""

import numpy as np
import pytest
from scipy.optimize import brentq

from ragaudit.exceptions import InputError
from ragaudit.stats.bounded import bet_fractions, bounded_mean_interval
from ragaudit.stats.cluster_betting import METHOD, cluster_mean_bounds, cluster_mean_interval


def _capital(y, s, m):
    """K+(m) by the module's formula, a loop over bets and the two scales (an oracle)."""
    bets = bet_fractions(len(y))
    terms = [np.prod(1 + c * scale * (y / m - 1)) for c in bets for scale in (s, np.ones_like(s))]
    return np.mean(terms)


def test_equal_sizes_give_the_betting_interval_of_the_cluster_means():
    rng = np.random.default_rng(5)
    y = np.where(rng.random(40) < 0.8, 1.0, rng.random(40))
    labels = np.repeat(np.arange(10), 4)
    ours = cluster_mean_interval(y, labels).confidence_interval
    means = y.reshape(10, 4).mean(axis=1)
    theirs = bounded_mean_interval(means).confidence_interval
    assert ours.low == pytest.approx(theirs.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.high, abs=1e-12)


def test_lower_end_solves_the_capital_equation_with_unequal_sizes():
    # 54 questions right in 14 sources of sizes 1..7 (as the demo): K+(low) = 2 / alpha = 40.
    sizes = np.array([1, 2, 3, 4, 5, 6, 7, 7, 6, 5, 3, 2, 1, 2])
    labels = np.repeat(np.arange(14), sizes)
    r = cluster_mean_interval(np.ones(labels.size), labels)
    s = sizes / sizes.max()
    low = brentq(lambda m: _capital(np.ones(14), s, m) - 40.0, 0.05, 0.999, xtol=1e-14)
    assert r.confidence_interval.low == pytest.approx(low, abs=1e-12)
    assert r.confidence_interval.high == 1.0
    assert r.method == METHOD


def test_never_zero_width_and_contains_the_question_mean():
    labels = np.repeat(np.arange(8), [2, 3, 4, 5, 6, 7, 8, 2])
    for value in (0.0, 1.0):
        r = cluster_mean_interval(np.full(labels.size, value), labels)
        assert r.confidence_interval.high - r.confidence_interval.low > 0.2
    rng = np.random.default_rng(1)
    for _ in range(20):
        y = (rng.random(labels.size) < 0.9).astype(float)
        r = cluster_mean_interval(y, labels)
        assert r.confidence_interval.low <= y.mean() <= r.confidence_interval.high


def test_order_of_questions_and_cluster_names_does_not_matter():
    rng = np.random.default_rng(2)
    y = rng.random(30)
    labels = rng.integers(0, 9, 30)
    a = cluster_mean_interval(y, labels).confidence_interval
    order = rng.permutation(30)
    b = cluster_mean_interval(y[order], (100 - labels)[order]).confidence_interval
    assert a == b


def test_paired_differences_on_minus_one_one_and_vectorised_rows_agree():
    rng = np.random.default_rng(3)
    d = rng.choice([-1.0, 0.0, 0.0, 0.0, 0.5], size=24)
    labels = np.repeat(np.arange(6), 4)
    one = cluster_mean_interval(d, labels, bounds=(-1.0, 1.0)).confidence_interval
    sums = np.bincount(labels, weights=d)[None].repeat(2, axis=0)
    sizes = np.full((2, 6), 4.0)
    low, high = cluster_mean_bounds(sums, sizes, -1.0, 1.0, 0.95)
    assert (low[0], high[0]) == (one.low, one.high) == (low[1], high[1])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cluster_mean_interval([0.5, 1.5], ["a", "b"]), r"in \[0, 1\], found 1.5"),
        (lambda: cluster_mean_interval([0.5, 1.0], ["a", "a"]), "at least 2 clusters, found 1"),
        (lambda: cluster_mean_interval([0.5, 1.0], ["a"]), r"one label per value \(2\)"),
        (lambda: cluster_mean_interval([], []), "non-empty 1-D"),
        (lambda: cluster_mean_interval([1.0, 0.0], ["a", "b"], bounds=(1, 0)), "low < high"),
    ],
)
def test_bad_input_messages(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_rounding_slack_on_the_bounds_is_accepted_as_in_bounded_mean_interval():
    # A paired difference computed in floats can overshoot -1 or 1 by an ulp; the one-sample
    # betting interval accepts (and clips) it, so the clustered one of the same values must too.
    # Equal sizes: the answer is bounded_mean_interval of the cluster means of the clipped values.
    y = np.array([1 + 1e-12, 1.0, -1 - 1e-12, 0.5, 0.25, 1.0])
    labels = np.repeat(np.arange(3), 2)
    ours = cluster_mean_interval(y, labels, bounds=(-1.0, 1.0)).confidence_interval
    means = np.clip(y, -1, 1).reshape(3, 2).mean(axis=1)
    theirs = bounded_mean_interval(means, bounds=(-1.0, 1.0)).confidence_interval
    assert ours.low == pytest.approx(theirs.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.high, abs=1e-12)
