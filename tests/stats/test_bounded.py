"""The bounded-mean interval (stats/bounded.py) against formulas computed here independently.

Oracles: each side's Korn-Graubard interval is statsmodels' Clopper-Pearson
(``proportion_confint(method="beta")``) at the effective counts, with the degrees-of-freedom
factor from ``scipy.stats.t``; the two sides are combined by the MOVER formula of Zou & Donner
(2008) written out below; a side with no deviation is ``1 - (alpha/2)^(1/n)``.
"""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from ragaudit.exceptions import InputError
from ragaudit.stats.bounded import bounded_mean_bounds, bounded_mean_interval, paired_mean_interval


def _side(y, n):
    """(mean, low, high) of one side: Korn & Graubard (1998) effective-n Clopper-Pearson."""
    y = np.asarray(y, dtype=float)
    m = y.mean()
    v = y.var() / n
    if v == 0:
        p0 = 1 - 0.025 ** (1 / n)
        return m, m * (1 - p0), m + (1 - m) * p0
    n_eff = m * (1 - m) / v * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, n - 1)) ** 2
    low, high = proportion_confint(m * n_eff, n_eff, alpha=0.05, method="beta")
    return m, low, high


def _oracle(x, centre, lo, hi):
    x = np.asarray(x, dtype=float)
    n = x.size
    up_room, down_room = hi - centre, centre - lo
    up = np.maximum(x - centre, 0) / up_room if up_room else np.zeros(n)
    down = np.maximum(centre - x, 0) / down_room if down_room else np.zeros(n)
    mu, lu, hu = (v * up_room for v in _side(up, n))
    md, ld, hd = (v * down_room for v in _side(down, n))
    rho = np.corrcoef(up, down)[0, 1] if up.std() > 0 and down.std() > 0 else 0.0
    est = centre + mu - md
    low = est - np.sqrt((mu - lu) ** 2 + (hd - md) ** 2 - 2 * rho * (mu - lu) * (hd - md))
    high = est + np.sqrt((hu - mu) ** 2 + (md - ld) ** 2 - 2 * rho * (hu - mu) * (md - ld))
    return max(low, lo), min(high, hi)


@pytest.mark.parametrize(
    "values",
    [
        [1.0] * 40 + [0.5, 0.5, 2 / 3, 0.0],  # recall near 1: deviations on one side
        [1 / 3] * 30 + [2 / 3] * 3 + [0.0] * 2,  # precision@3: both sides of the mode
        list(np.linspace(0.05, 0.95, 19)) + [0.4] * 3,  # spread-out scores
        [0.2, 0.9],  # n = 2
    ],
)
def test_matches_the_korn_graubard_and_mover_formulas(values):
    x = np.asarray(values)
    uniq, counts = np.unique(x, return_counts=True)
    centre = float(uniq[np.argmax(counts)])
    r = bounded_mean_interval(values)
    assert r.statistic == pytest.approx(x.mean())
    low, high = _oracle(x, centre, 0.0, 1.0)
    assert r.confidence_interval.low == pytest.approx(low, abs=1e-9)
    assert r.confidence_interval.high == pytest.approx(high, abs=1e-9)
    assert r.method == "Korn-Graubard MOVER"


@pytest.mark.parametrize("n,v", [(1, 0.3), (50, 1.0), (54, 0.5), (20, 0.0)])
def test_all_equal_values_get_the_exact_zero_of_n_bound_not_zero_width(n, v):
    r = bounded_mean_interval([v] * n)
    p0 = 1 - 0.025 ** (1 / n)  # Clopper-Pearson upper limit for 0 events in n
    assert r.confidence_interval.low == pytest.approx(v - v * p0)
    assert r.confidence_interval.high == pytest.approx(v + (1 - v) * p0)
    if v == 1.0:  # all ones: identical to Clopper-Pearson for n of n
        assert r.confidence_interval.low == pytest.approx(
            proportion_confint(n, n, alpha=0.05, method="beta")[0]
        )


def test_paired_difference_is_centred_at_zero_on_minus_one_to_one():
    a = [1.0] * 40 + [0.5, 1.0, 0.0]
    b = [1.0] * 40 + [1.0, 0.5, 0.5]
    r = paired_mean_interval(a, b)
    d = np.subtract(b, a)
    low, high = _oracle(d, 0.0, -1.0, 1.0)
    assert r.statistic == pytest.approx(d.mean())
    assert (r.confidence_interval.low, r.confidence_interval.high) == (
        pytest.approx(low, abs=1e-9),
        pytest.approx(high, abs=1e-9),
    )
    # no change on any question: symmetric, the exact 0-of-n bound on each side
    none = paired_mean_interval([0.5] * 30, [0.5] * 30)
    p0 = 1 - 0.025 ** (1 / 30)
    assert none.confidence_interval.high == pytest.approx(p0)
    assert none.confidence_interval.low == pytest.approx(-p0)


def test_kernel_rows_equal_the_public_function():
    rng = np.random.default_rng(3)
    x = rng.choice([0.0, 0.5, 1.0], p=[0.05, 0.1, 0.85], size=(6, 30))
    centre = np.array([float(np.argmax(np.bincount((r * 2).astype(int)))) / 2 for r in x])
    low, high = bounded_mean_bounds(x, centre, 0.0, 1.0, 0.95)
    for i, row in enumerate(x):
        ci = bounded_mean_interval(row).confidence_interval
        assert (low[i], high[i]) == (pytest.approx(ci.low), pytest.approx(ci.high))


def test_interval_contains_the_estimate_and_stays_in_bounds():
    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        x = rng.choice([0.0, 0.25, 1 / 3, 0.5, 1.0], size=n)
        r = bounded_mean_interval(x)
        ci = r.confidence_interval
        assert 0.0 <= ci.low <= r.statistic <= ci.high <= 1.0
        assert ci.high > ci.low


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"values": []}, "values: expected a non-empty 1-D sequence"),
        ({"values": [0.5, 1.2]}, r"values: expected numbers in \[0, 1\], found 1.2 at position 1"),
        ({"values": [0.5], "bounds": (1.0, 0.0)}, "bounds: expected low < high"),
        ({"values": [0.5], "centre": 2.0}, r"centre: expected a value in \[0, 1\], found 2.0"),
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
def test_compare_gives_fractional_scores_the_paired_interval(metric):
    import json
    from pathlib import Path

    from ragaudit import compare_runs  # the public one reads files

    k3, k6 = (Path(__file__).parents[1] / "data" / "stats" / f"{k}.json" for k in ("k3", "k6"))
    a, b = (
        {r["id"]: r["metrics"][metric] for r in json.loads(p.read_text())["rows"]} for p in (k3, k6)
    )
    d = np.array([b[q] - a[q] for q in sorted(a)])
    values, counts = np.unique(np.round(d, 9), return_counts=True)
    low, high = _oracle(d, float(values[np.argmax(counts)]), -1.0, 1.0)
    row = compare_runs(k3, k6, [metric]).metrics[0]
    assert row.ci_method == "Korn-Graubard MOVER"
    assert row.confidence_interval.low == pytest.approx(low, abs=1e-7)
    assert row.confidence_interval.high == pytest.approx(high, abs=1e-7)
    assert row.confidence_interval.low < row.statistic < row.confidence_interval.high


def test_compare_keeps_the_bootstrap_for_metrics_outside_0_1():
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
    assert rows["latency_s"].ci_method == "bootstrap percentile"
    assert rows["score"].ci_method == "Korn-Graubard MOVER"
    ci = rows["score"].confidence_interval  # no question changed: not the zero-width [0, 0]
    assert ci.low < 0 < ci.high
