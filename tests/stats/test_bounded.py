"""The bounded-mean intervals (stats/bounded.py) against formulas computed here independently.

Betting (the default): a scalar reference written here with ``math`` and
``scipy.optimize.brentq`` (pure-Python products over the questions, one bet fraction at a
time, root of ``log K(m) = log(2/alpha)``), and closed forms for n = 1 and equal values.
(The Korn-Graubard MOVER interval it replaced lives in ``benchmarks/coverage_stats.py``; its
oracle test is in ``test_coverage.py``.)
"""

import math

import numpy as np
import pytest
from scipy import optimize
from statsmodels.stats.proportion import proportion_confint

from ragaudit.exceptions import InputError
from ragaudit.stats.bounded import (
    METHOD,
    bet_fractions,
    bounded_mean_bounds,
    bounded_mean_interval,
    paired_mean_interval,
)


def _bets(n):
    """The grid, from its definition: 2^-j (j = 2..J) and 1 - 2^-k (k = 1..max(8, J))."""
    big_j = 2
    while 2.0**big_j < 2 * math.sqrt(n):  # smallest J >= 2 with 2^J >= 2 sqrt(n)
        big_j += 1
    return [2.0**-j for j in range(big_j, 1, -1)] + [
        1 - 2.0**-k for k in range(1, max(8, big_j) + 1)
    ]


def _log_k_plus(y, m, bets):
    """log of the mean over bets c of prod_i (1 + c (y_i / m - 1)), in plain Python."""
    logs = [sum(math.log(1 + c * (v / m - 1)) for v in y) for c in bets]
    top = max(logs)
    return top + math.log(sum(math.exp(v - top) for v in logs) / len(logs))


def _reference(values, lo=0.0, hi=1.0, confidence=0.95):
    """The betting interval by root-finding on the scalar capital, one end at a time."""
    y = [(v - lo) / (hi - lo) for v in values]
    bets = _bets(len(y))
    threshold = math.log(2 / (1 - confidence))

    def lower(z):
        f = lambda m: _log_k_plus(z, m, bets) - threshold  # noqa: E731
        if f(1e-15) < 0:
            return 0.0
        mean = sum(z) / len(z)
        if mean <= 0:
            return 0.0
        return optimize.brentq(f, 1e-15, mean, xtol=1e-14)

    low = lower(y)
    high = 1 - lower([1 - v for v in y])
    return lo + (hi - lo) * low, lo + (hi - lo) * high


def test_bet_grid_matches_its_definition():
    for n in (1, 2, 4, 5, 50, 54, 200, 1000, 10_000, 1_000_000):
        assert bet_fractions(n).tolist() == _bets(n)


@pytest.mark.parametrize(
    "values,bounds",
    [
        ([1.0] * 40 + [0.5, 0.5, 2 / 3, 0.0], (0.0, 1.0)),  # recall near 1
        ([1 / 3] * 30 + [2 / 3] * 3 + [0.0] * 2, (0.0, 1.0)),  # precision@3
        (list(np.linspace(0.05, 0.95, 19)) + [0.4] * 3, (0.0, 1.0)),  # spread-out scores
        ([0.2, 0.9], (0.0, 1.0)),  # n = 2
        ([0.0] * 45 + [0.5, -0.5, 1 / 3, -1.0, 0.25], (-1.0, 1.0)),  # a paired difference
        ([2.0, 3.5, 5.0, 4.0], (1.0, 5.0)),  # another scale
    ],
)
def test_betting_matches_a_scalar_reference(values, bounds):
    r = bounded_mean_interval(values, bounds=bounds)
    low, high = _reference(values, *bounds)
    assert r.method == METHOD == "betting (Waudby-Smith-Ramdas)"
    assert r.statistic == pytest.approx(np.mean(values))
    assert r.confidence_interval.low == pytest.approx(low, abs=1e-9)
    assert r.confidence_interval.high == pytest.approx(high, abs=1e-9)
    # the bisection reports the outer end of its last bracket: never inside the exact set
    assert r.confidence_interval.low <= low + 1e-12 and r.confidence_interval.high >= high - 1e-12


def test_one_question_has_a_closed_form():
    # n = 1, y = 1: K+(m) = mean_c (1 - c + c/m) = 1 - cbar + cbar/m = 40  =>  m = cbar/(cbar+39)
    cbar = float(np.mean(_bets(1)))
    r = bounded_mean_interval([1.0])
    assert r.confidence_interval.low == pytest.approx(cbar / (cbar + 39), abs=1e-12)
    assert r.confidence_interval.high == 1.0
    zero = bounded_mean_interval([0.0])  # the mirror image
    assert zero.confidence_interval.low == 0.0
    assert zero.confidence_interval.high == pytest.approx(1 - cbar / (cbar + 39), abs=1e-12)


@pytest.mark.parametrize("n", [1, 10, 50, 200])
def test_all_ones_and_all_zeros_mirror_each_other(n):
    # all 1: K- is (1 - c)^n < 1 for every m, so the upper end is 1; the lower end solves
    # mean_c (1 - c + c/m)^n = 2/alpha (brentq here)
    bets = _bets(n)
    root = optimize.brentq(
        lambda m: math.log(np.mean([(1 - c + c / m) ** n for c in bets])) - math.log(40),
        0.5 if n >= 10 else 1e-3,  # a bracket where the powers stay finite
        1 - 1e-12,
        xtol=1e-15,
    )
    ones, zeros = bounded_mean_interval([1.0] * n), bounded_mean_interval([0.0] * n)
    assert ones.confidence_interval.low == pytest.approx(root, abs=1e-10)
    assert ones.confidence_interval.high == 1.0
    assert zeros.confidence_interval.low == 0.0
    assert zeros.confidence_interval.high == pytest.approx(1 - root, abs=1e-10)
    # never tighter than Clopper-Pearson for n of n, which is exact for 0/1 data
    assert root <= proportion_confint(n, n, alpha=0.05, method="beta")[0]


def test_equal_values_get_an_interval_of_honest_width():
    r = bounded_mean_interval([0.5] * 54)
    low, high = _reference([0.5] * 54)
    assert (r.confidence_interval.low, r.confidence_interval.high) == (
        pytest.approx(low, abs=1e-9),
        pytest.approx(high, abs=1e-9),
    )
    assert low < 0.5 < high and high - 0.5 == pytest.approx(0.5 - low)  # symmetric about 0.5


def test_the_interval_does_not_depend_on_the_order_of_the_questions():
    rng = np.random.default_rng(7)
    x = np.concatenate([np.ones(40), rng.random(9), [0.0]])
    first = bounded_mean_interval(x).confidence_interval
    rows = np.stack([rng.permutation(x) for _ in range(20)])
    low, high = bounded_mean_bounds(rows, 0.0, 1.0, 0.95)
    assert np.all(low == first.low) and np.all(high == first.high)  # bit for bit
    big = rng.random(5000)  # past 4096 questions: counted on a grid, still order-free
    a = bounded_mean_interval(big).confidence_interval
    b = bounded_mean_interval(big[::-1]).confidence_interval
    assert (a.low, a.high) == (b.low, b.high)


def test_large_samples_are_rounded_outward():
    # past 4096 questions the values are rounded down (K+) / up (K-) to a 1/4096 grid: the
    # interval contains the one from the unrounded values and is at most ~1/4096 wider
    rng = np.random.default_rng(8)
    x = rng.beta(8, 3, 5000)
    r = bounded_mean_interval(x).confidence_interval
    low, high = _reference(list(x))
    assert r.low <= low + 1e-12 and r.high >= high - 1e-12
    assert low - r.low < 2 / 4096 and r.high - high < 2 / 4096


def test_betting_interval_contains_the_mean_and_stays_in_bounds():
    rng = np.random.default_rng(4)
    for _ in range(100):
        n = int(rng.integers(1, 40))
        x = rng.choice([0.0, 0.25, 1 / 3, 0.5, 1.0], size=n)
        r = bounded_mean_interval(x)
        ci = r.confidence_interval
        assert 0.0 <= ci.low <= r.statistic <= ci.high <= 1.0
        assert ci.high > ci.low


def test_paired_difference_is_the_betting_interval_on_minus_one_to_one():
    a = [1.0] * 40 + [0.5, 1.0, 0.0]
    b = [1.0] * 40 + [1.0, 0.5, 0.5]
    r = paired_mean_interval(a, b)
    d = np.subtract(b, a)
    low, high = _reference(list(d), -1.0, 1.0)
    assert r.statistic == pytest.approx(d.mean())
    assert (r.confidence_interval.low, r.confidence_interval.high) == (
        pytest.approx(low, abs=1e-9),
        pytest.approx(high, abs=1e-9),
    )
    # no change on any question: symmetric about 0, never the zero-width [0, 0]
    none = paired_mean_interval([0.5] * 30, [0.5] * 30)
    assert none.confidence_interval.low == pytest.approx(-none.confidence_interval.high)
    assert none.confidence_interval.low < 0 < none.confidence_interval.high


def test_kernel_rows_equal_the_public_function():
    rng = np.random.default_rng(3)
    x = rng.choice([0.0, 0.5, 1.0], p=[0.05, 0.1, 0.85], size=(6, 30))
    low, high = bounded_mean_bounds(x, 0.0, 1.0, 0.95)
    for i, row in enumerate(x):
        ci = bounded_mean_interval(row).confidence_interval
        assert (low[i], high[i]) == (ci.low, ci.high)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"values": []}, "values: expected a non-empty 1-D sequence"),
        ({"values": [0.5, 1.2]}, r"values: expected numbers in \[0, 1\], found 1.2 at position 1"),
        ({"values": [0.5], "bounds": (1.0, 0.0)}, "bounds: expected low < high"),
        ({"values": [0.5], "confidence": 1.5}, "confidence: expected a number strictly"),
    ],
)
def test_bad_input_messages(kwargs, match):
    values = kwargs.pop("values")
    with pytest.raises(InputError, match=match):
        bounded_mean_interval(values, **kwargs)


def test_paired_lengths_must_match():
    with pytest.raises(InputError, match="expected two sequences of equal length, found 2 and 1"):
        paired_mean_interval([0.1, 0.2], [0.3])


@pytest.mark.parametrize("metric", ["recall@k", "ndcg@k", "precision@k"])
def test_compare_ci_betting_gives_fractional_scores_the_paired_interval(metric):
    import json
    from pathlib import Path

    from ragaudit import compare_runs  # the public one reads files

    k3, k6 = (Path(__file__).parents[1] / "data" / "stats" / f"{k}.json" for k in ("k3", "k6"))
    a, b = (
        {r["id"]: r["metrics"][metric] for r in json.loads(p.read_text())["rows"]} for p in (k3, k6)
    )
    d = np.array([b[q] - a[q] for q in sorted(a)])
    low, high = _reference(list(d), -1.0, 1.0)
    row = compare_runs(k3, k6, [metric], method="betting").metrics[0]
    assert row.ci_method == "betting (Waudby-Smith-Ramdas)"
    assert row.confidence_interval.low == pytest.approx(low, abs=1e-7)
    assert row.confidence_interval.high == pytest.approx(high, abs=1e-7)
    assert row.confidence_interval.low < row.statistic < row.confidence_interval.high


def test_compare_inverts_the_sign_flip_test_for_metrics_outside_0_1():
    from ragaudit.stats import PerQuestionMetrics
    from ragaudit.stats import compare_runs as compare_loaded

    ids = [f"q{i}" for i in range(20)]
    runs = [
        PerQuestionMetrics(
            name,
            {q: {"latency_s": 1.0 + shift + i / 10, "score": 0.5} for i, q in enumerate(ids)},
        )
        for name, shift in (("A", 0.0), ("B", 0.3))
    ]
    rows = {r.metric: r for r in compare_loaded(*runs, n_resamples=200).metrics}
    # 20 equal shifts of +0.3: the test rejects every other shift, on any scale
    assert rows["latency_s"].ci_method == "sign-flip inversion"
    assert rows["latency_s"].confidence_interval.low == pytest.approx(0.3, abs=1e-6)
    assert rows["latency_s"].verdict == "SIGNIFICANT"
    assert rows["score"].ci_method == "sign-flip inversion widened to betting (too few differ)"
    ci = rows["score"].confidence_interval  # no question changed: not the zero-width [0, 0]
    assert ci.low < 0 < ci.high
