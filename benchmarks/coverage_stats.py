"""Coverage of ragaudit's 95% intervals on the data RAG evaluations have (issue 11).

Each scenario draws ``--datasets`` seeded datasets from a known truth, computes the interval
ragaudit prints, and counts how often it contains the truth.  The Monte Carlo error of a
coverage ``c`` estimated from ``R`` datasets is ``sqrt(c (1 - c) / R)``.  The previous default
of each row is measured too, for comparison.

Scenarios
---------
* paired binary difference (``compare``, a 0/1 metric), n = 30, P(A only) = 3%, P(B only) = 5%
  (and 10% / 15%); the rest split evenly between "both right" and "both wrong";
* a funnel stage rate of 0.98 at n = 50 (and the unanswerable block: rate 0.9 at n = 6);
* the funnel's gap ``stage-1 rate - end-to-end correct`` at n = 50: stage 1 passes with
  probability 0.98, a question that passed is answered correctly with probability 0.85, one
  that did not with probability 0.3 (luck); Tango's paired score interval from the
  (stage 1 passed but wrong, lucky) counts, and the paired percentile bootstrap it replaced.

* the dashboard's means of fractional scores (recall@k, nDCG@k, precision@k, faithfulness):
  datasets of per-question scores where most questions share one value, and a harsher family
  (95% at 1, 4% at 0.95, 1% at 0: a judge's rare total failure) at n = 10, 20, 50, 200; the
  betting interval (``stats/bounded.py``, Waudby-Smith & Ramdas 2024), the Korn-Graubard MOVER
  interval it replaced and the percentile bootstrap before that.

* ``compare``'s paired differences of fractional scores (``d = b - a`` in [-1, 1]): most
  questions do not change (recall, MRR), or all shift together (precision@k when k doubles),
  and rare large drops (90% unchanged, 5% +0.05, 4% -0.05, 1% -1) at n = 20, 50, 200; the same
  three intervals.  ``width`` is the mean width of the intervals: the price of a guarantee for
  every distribution.

* the interval *switch*: the dashboard (``_mean_row``) gives a mean whose observed values are
  all 0/1 Clopper-Pearson, else betting; ``compare`` gives a metric whose observed values are
  all 0/1 in both runs McNemar's exact test inverted, else the sign-flip inversion.  A
  fractional metric whose population is nearly binary (recall@k with two gold documents: a
  few questions at 0.5) often gives all-0/1 samples, so the printed interval is a
  data-dependent mixture of two methods.  Measured through the real dispatch code
  (``_mean_row``, ``compare_runs``) at n = 10, 20, 50, 200:
  means near 1, 0.5 and 0, and paired differences with few changes, some of them half-steps.
  Both intervals depend on the counts of each value only, so each distinct count vector is
  computed once.  The note gives the share of datasets that got the 0/1 method (and its
  coverage on them) and the share missed on each side ("low": the interval lies below the
  truth).

Usage::

    uv run python benchmarks/coverage_stats.py            # prints the markdown table

* clustered questions (``report``/``funnel``/``compare --cluster-by``): the rows of
  ``benchmarks/coverage_clustered.py`` (8-30 clusters, intra-cluster correlation 0-0.5, rates
  and scores 0.8-0.99, binary and fractional), printed after the others.

The slow tests in ``tests/stats/test_coverage.py`` and ``tests/stats/test_coverage_switch.py``
load this file by path and assert coverage on the same scenarios and simulation (fewer
datasets, their own seeds).
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import numpy as np
from scipy.special import betaincinv, ndtri, stdtrit

from ragaudit.diagnose.dashboard import _mean_row
from ragaudit.stats import PerQuestionMetrics, compare_runs
from ragaudit.stats._group import SIGNFLIP, group_signflip
from ragaudit.stats.bounded import bounded_mean_bounds
from ragaudit.stats.intervals import (
    clopper_pearson_bounds,
    mcnemar_exact_bounds,
    tango_bounds,
    wilson_bounds,
)
from ragaudit.stats.resampling import _interval, bootstrap_means
from ragaudit.stats.unseen_tail import TAIL_METHOD

# Korn-Graubard MOVER: values closer than this (relative to the range) count as equal (a paired
# difference such as 0.5 - 1/3 and 1/3 - 1/6 differs in the last bits), and beyond this
# effective sample size the beta quantiles are a normal interval anyway.
_TOLERANCE = 1e-9
_MAX_N_EFF = 1e12


def paired_tables(rng: np.random.Generator, n: int, a_only: float, b_only: float, size: int):
    """``(a_only, b_only, n)`` counts of ``size`` paired 2x2 tables."""
    rest = (1.0 - a_only - b_only) / 2
    counts = rng.multinomial(n, [a_only, b_only, rest, rest], size=size)
    return counts[:, 0], counts[:, 1]


def bootstrap_paired_binary(rng, n, a_only, b_only, size, n_resamples=2000):
    """The previous default: percentile bootstrap of the per-question differences."""
    lows, highs = np.empty(size), np.empty(size)
    c, b = paired_tables(rng, n, a_only, b_only, size)
    for i in range(size):
        d = np.concatenate([-np.ones(c[i]), np.ones(b[i]), np.zeros(n - c[i] - b[i])])[:, None]
        theta = bootstrap_means(d, n_resamples, rng)
        low, high = _interval(theta, d, 0.95, "percentile")
        lows[i], highs[i] = low[0], high[0]
    return lows, highs


def gap_datasets(rng, n, size):
    """Per dataset: the per-question gap indicator ``hit - correct`` (values -1, 0, 1)."""
    hit = rng.random((size, n)) < 0.98
    correct = np.where(hit, rng.random((size, n)) < 0.85, rng.random((size, n)) < 0.3)
    truth = 0.98 - (0.98 * 0.85 + 0.02 * 0.3)
    return hit.astype(float) - correct.astype(float), truth


def gap_tango(rng, n, size):
    diffs, truth = gap_datasets(rng, n, size)
    low, high = tango_bounds(
        (diffs > 0).sum(axis=1), (diffs < 0).sum(axis=1), np.full(size, n), 0.95
    )
    return coverage(low, high, truth)


def gap_bootstrap(rng, n, size, n_resamples=2000):
    diffs, truth = gap_datasets(rng, n, size)
    inside = 0
    for row in diffs:
        d = row[:, None]
        theta = bootstrap_means(d, n_resamples, rng)
        low, high = _interval(theta, d, 0.95, "percentile")
        inside += bool(low[0] <= truth <= high[0])
    return inside / size


# name: (values, probabilities, n) of one question's score
MEAN_SCENARIOS = {
    "recall@k near 1 (97% at 1, 2% at 0.5, 1% at 0), n=50": ([1, 0.5, 0], [0.97, 0.02, 0.01], 50),
    "recall@k, 99% at 1 and 1% at 0.5, n=50": ([1, 0.5], [0.99, 0.01], 50),
    "nDCG@k (85% at 1, rest 0.63/0.5/0), n=54": (
        [1, 0.63, 0.5, 0],
        [0.85, 0.08, 0.04, 0.03],
        54,
    ),
    "precision@3 (97% at 1/3, 3% at 2/3), n=54": ([1 / 3, 2 / 3], [0.97, 0.03], 54),
    "precision@3, dense (0, 1/3, 2/3, 1), n=54": ([0, 1 / 3, 2 / 3, 1], [0.1, 0.6, 0.25, 0.05], 54),
    "faithfulness (95% at 1, 5% spread over 0-0.8), n=50": (
        [1, 0.8, 0.6, 0.4, 0.2, 0],
        [0.95, 0.02, 0.01, 0.01, 0.005, 0.005],
        50,
    ),
    **{
        f"95% at 1, 4% at 0.95, 1% at 0, n={n}": ([1, 0.95, 0], [0.95, 0.04, 0.01], n)
        for n in (10, 20, 50, 200)
    },
}


# name: (values, probabilities, n) of one question's paired difference b - a
PAIRED_SCENARIOS = {
    "recall@k, 5% of questions change, n=50": ([0, 0.5, -0.5, 1], [0.95, 0.03, 0.01, 0.01], 50),
    "MRR, 8% change, n=50": (
        [0, 0.5, -0.5, 1 / 3, -1 / 6, 1],
        [0.92, 0.02, 0.02, 0.02, 0.01, 0.01],
        50,
    ),
    "precision@k, k doubled (85% at -1/6), n=54": (
        [-1 / 6, -1 / 3, 0, 1 / 6],
        [0.85, 0.08, 0.05, 0.02],
        54,
    ),
    "nDCG@k, 30% change, n=54": (
        [0, 0.37, -0.37, 0.13, -0.13, 0.5, -1],
        [0.7, 0.08, 0.05, 0.07, 0.04, 0.04, 0.02],
        54,
    ),
    **{
        f"rare large drops (1% at -1, 4% at -0.05, 5% at +0.05), n={n}": (
            [0, 0.05, -0.05, -1],
            [0.9, 0.05, 0.04, 0.01],
            n,
        )
        for n in (20, 50, 200)
    },
}


def mean_datasets(rng, values, probs, n, size):
    """``size`` datasets of scores, each row's median (the centre), and the true mean."""
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    x = values[rng.choice(len(values), size=(size, n), p=probs)]
    return x, np.median(x, axis=1), float(values @ probs)


def mean_bootstrap(x, n_resamples=2000, rng=None):
    """The previous dashboard interval: percentile bootstrap of each row's mean."""
    lows, highs = np.empty(len(x)), np.empty(len(x))
    for i, row in enumerate(x):
        theta = bootstrap_means(row[:, None], n_resamples, rng)
        low, high = _interval(theta, row[:, None], 0.95, "percentile")
        lows[i], highs[i] = low[0], high[0]
    return lows, highs


def _side_bounds(y: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and effective-sample-size Clopper-Pearson bounds of each row of ``y`` in [0, 1]."""
    n = y.shape[-1]
    alpha = 1.0 - confidence
    mean = y.mean(axis=-1)
    # Equal values can leave a variance of 1e-35 in floating point: spread means a real range.
    spread = np.ptp(y, axis=-1) > _TOLERANCE
    var_mean = np.where(spread, y.var(axis=-1) / n, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(spread, np.minimum(mean * (1.0 - mean) / var_mean, _MAX_N_EFF), n)
        if n > 1:
            n_eff = n_eff * (ndtri(1.0 - alpha / 2) / stdtrit(n - 1, 1.0 - alpha / 2)) ** 2
        k_eff = mean * n_eff
        low = np.where(k_eff > 0, betaincinv(k_eff, n_eff - k_eff + 1, alpha / 2), 0.0)
        high = np.where(k_eff < n_eff, betaincinv(k_eff + 1, n_eff - k_eff, 1 - alpha / 2), 1.0)
    # No spread: every value equal (all 0 is the usual case).  At most p0 of the population
    # deviates, by at most the whole range: the exact bound of 0 (or n) successes in n.
    p0 = 1.0 - (alpha / 2) ** (1.0 / n)
    low = np.where(spread, low, mean * (1.0 - p0))
    high = np.where(spread, high, mean + (1.0 - mean) * p0)
    return mean, np.clip(low, 0.0, mean), np.clip(high, mean, 1.0)


def kg_mover_bounds(
    x: np.ndarray, centre: np.ndarray, low: float, high: float, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """The former default (Korn-Graubard MOVER), one interval per row of ``x``.

    Not in the library any more (ragaudit prints the betting interval): kept here for the
    "before" rows and for the slow test that checks this simulation tells a good interval from
    a bad one.  Each side of ``centre`` (the row's median) is a mostly-zero mean in [0, 1] that
    gets Clopper-Pearson with Korn & Graubard's (1998) effective sample size
    ``n* = m(1 - m) / Var(m) * (z / t_{n-1})^2``; a side where no value deviates gets
    ``1 - (alpha/2)^(1/n)``; the two are combined by MOVER (Zou & Donner 2008).  Why it was
    replaced: with 1% of questions at 0 and 4% at 0.95 (the rest at 1) it covers 0.47 at
    n = 50.  ``x`` has shape ``(rows, n)`` with values in ``[low, high]``; ``centre`` one value
    per row.
    """
    x = np.atleast_2d(np.asarray(x, dtype=float))
    centre = np.broadcast_to(np.asarray(centre, dtype=float), x.shape[:1])
    room_up = np.maximum(high - centre, 0.0)[:, None]
    room_down = np.maximum(centre - low, 0.0)[:, None]
    offset = x - centre[:, None]
    offset = np.where(np.abs(offset) <= _TOLERANCE * (high - low), 0.0, offset)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(room_up > 0, np.maximum(offset, 0.0) / room_up, 0.0)
        down = np.where(room_down > 0, np.maximum(-offset, 0.0) / room_down, 0.0)
    m_up, l_up, h_up = (v * room_up[:, 0] for v in _side_bounds(up, confidence))
    m_down, l_down, h_down = (v * room_down[:, 0] for v in _side_bounds(down, confidence))
    sd_up, sd_down = up.std(axis=-1), down.std(axis=-1)
    cov = ((up - up.mean(-1, keepdims=True)) * (down - down.mean(-1, keepdims=True))).mean(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where((sd_up > 0) & (sd_down > 0), cov / (sd_up * sd_down), 0.0)
    estimate = centre + m_up - m_down
    # MOVER for (centre + up) - down: each limit recovers the variance from the nearer ends.
    below = (
        (m_up - l_up) ** 2 + (h_down - m_down) ** 2 - 2 * rho * (m_up - l_up) * (h_down - m_down)
    )
    above = (
        (h_up - m_up) ** 2 + (m_down - l_down) ** 2 - 2 * rho * (h_up - m_up) * (m_down - l_down)
    )
    lower = estimate - np.sqrt(np.maximum(below, 0.0))
    upper = estimate + np.sqrt(np.maximum(above, 0.0))
    return np.clip(lower, low, high), np.clip(upper, low, high)


def bounded_rows(rng, prefix, scenarios, bounds, before, size, bootstrap_size):
    """Table rows of the betting interval, Korn-Graubard MOVER and the bootstrap, per scenario."""
    rows = []
    for label, (values, probs, n) in scenarios.items():
        x, centres, truth = mean_datasets(rng, values, probs, n, size)
        for scenario, name, (low, high), count in (
            (
                f"{prefix}: {label}",
                "betting, Waudby-Smith-Ramdas (default)",
                bounded_mean_bounds(x, *bounds, 0.95),
                size,
            ),
            ("", "Korn-Graubard MOVER (before)", kg_mover_bounds(x, centres, *bounds, 0.95), size),
            ("", before, mean_bootstrap(x[:bootstrap_size], rng=rng), bootstrap_size),
        ):
            zero = f"width {np.mean(high - low):.3f}; {int(np.sum(high - low <= 0))} zero-width"
            rows.append((scenario, name, coverage(low, high, truth), count, zero))
    return rows


# name: (values, probabilities) of one question's score (the dashboard's switch)
SWITCH_MEANS = {
    "near 1 (97% at 1, 2% at 0.5, 1% at 0)": ([1.0, 0.5, 0.0], [0.97, 0.02, 0.01]),
    "near 0.5 (48% at 1, 48% at 0, 4% at 0.5)": ([1.0, 0.0, 0.5], [0.48, 0.48, 0.04]),
    "near 0 (95% at 0, 5% at 0.5)": ([0.0, 0.5], [0.95, 0.05]),
}

# name: ((a, b) pairs, probabilities) of one question (compare's switch)
SWITCH_PAIRS = {
    "93% unchanged, 3% 0->1, 1% 1->0, 3% 0.5->1": (
        [(1.0, 1.0), (0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (0.5, 1.0)],
        [0.5, 0.43, 0.03, 0.01, 0.03],
    ),
    "97% at (1, 1), 1% 1->0, 2% 1->0.5": ([(1.0, 1.0), (1.0, 0.0), (1.0, 0.5)], [0.97, 0.01, 0.02]),
}


def switch_mean(values, counts):
    """The dashboard's interval of a sample with ``counts`` of each of ``values``."""
    row = _mean_row("m", "m", np.repeat(values, counts).tolist(), "benchmark", "")
    return row.ci_low, row.ci_high, row.interval


def switch_paired(pairs, counts):
    """``compare``'s interval of ``B - A`` for ``counts`` of each ``(a, b)`` pair."""
    drawn = np.repeat(np.asarray(pairs), counts, axis=0)
    ids = [f"q{i:03d}" for i in range(len(drawn))]
    runs = [
        PerQuestionMetrics(name, {q: {"m": float(v)} for q, v in zip(ids, col, strict=True)})
        for name, col in (("A", drawn[:, 0]), ("B", drawn[:, 1]))
    ]
    row = compare_runs(*runs, n_resamples=1, n_permutations=1, subsample_sizes=()).metrics[0]
    return row.confidence_interval.low, row.confidence_interval.high, row.ci_method


SWITCH_SIZES = (10, 20, 50, 200)


class SwitchCoverage(NamedTuple):
    """Coverage of the switched interval on ``size`` datasets of one scenario.

    ``below``/``above``: share of datasets whose interval lies below/above the truth;
    ``methods``: each dataset's method; ``binary_share``: share that got the 0/1 method and
    ``binary_coverage`` its coverage there.
    """

    coverage: float
    below: float
    above: float
    methods: np.ndarray
    binary_share: float
    binary_coverage: float


def switch_coverage(rng, interval, values, probs, n, size, binary_method) -> SwitchCoverage:
    """Draw ``size`` datasets of ``n`` questions and measure the interval each is printed.

    ``interval(values, counts)`` is :func:`switch_mean` or :func:`switch_paired`.  Both
    intervals depend on the counts of each value only, so each distinct count vector is
    computed once and weighted by how many datasets drew it.
    """
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    diff = values if values.ndim == 1 else values[:, 1] - values[:, 0]
    truth = float(diff @ probs)
    unique, weight = np.unique(rng.multinomial(n, probs, size=size), axis=0, return_counts=True)
    low, high, methods = zip(*(interval(values, counts) for counts in unique), strict=True)
    low, high, weight = np.array(low), np.array(high), weight / size
    is_binary = np.array(methods) == binary_method
    missed_low, missed_high = high < truth - 1e-12, low > truth + 1e-12
    binary = weight[is_binary].sum()
    below, above = weight[missed_low].sum(), weight[missed_high].sum()
    there = weight[is_binary & ~missed_low & ~missed_high].sum() / max(binary, 1e-300)
    return SwitchCoverage(1.0 - below - above, below, above, np.array(methods), binary, there)


SWITCHES = (
    ("dashboard mean", SWITCH_MEANS, switch_mean, "Clopper-Pearson exact"),
    ("compare, paired difference", SWITCH_PAIRS, switch_paired, "McNemar exact inverted"),
)


def switch_rows(rng, size):
    """Rows of the observed-data switch: coverage of the interval each dataset is printed."""
    rows = []
    for prefix, scenarios, interval, binary_method in SWITCHES:
        for label, (values, probs) in scenarios.items():
            for n in SWITCH_SIZES:
                c = switch_coverage(rng, interval, values, probs, n, size, binary_method)
                share = (
                    f"{c.binary_share:.1%} (covers {c.binary_coverage:.3f} there)"
                    if c.binary_share
                    else "0%"
                )
                rows.append(
                    (
                        f"switch, {prefix}: {label}, n={n}",
                        f"{binary_method} if all 0/1, else "
                        + ("betting" if prefix == "dashboard mean" else "sign-flip inversion")
                        + " (default)",
                        c.coverage,
                        size,
                        f"0/1 method on {share}; missed low {c.below:.4f}, high {c.above:.4f}",
                    )
                )
    return rows


# compare's default for paired differences that are not 0/1 (issue 21): the exact sign-flip
# test inverted, united with t and Hall, widened to betting when fewer than 6 questions differ
# or when at least half are unchanged and no change exceeds 0.25 (stats/unseen_tail.py).  Each
# sampler returns (differences of shape (datasets, n), the true mean difference).
def _discrete(values, probs, n):
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)

    def draw(rng, size):
        return values[rng.choice(len(values), size=(size, n), p=probs)], float(values @ probs)

    return draw


def _dense(n):
    def draw(rng, size):  # every question moves by about +0.05 (sd 0.03), 4 decimals
        return np.round(rng.normal(0.05, 0.03, (size, n)), 4), 0.05

    return draw


def _dense_drop(n):
    def draw(rng, size):  # the dense shift, but 1% of questions drop by 1 instead
        d = np.round(rng.normal(0.05, 0.03, (size, n)), 4)
        return np.where(rng.random((size, n)) < 0.01, -1.0, d), 0.99 * 0.05 - 0.01

    return draw


def _skewed(n):
    def draw(rng, size):  # every question gains a Beta(0.3, 3) amount: strongly skewed
        return np.round(rng.beta(0.3, 3.0, (size, n)), 4), 0.3 / 3.3

    return draw


def _faithfulness_pair(rng, count):
    """A faithfulness-like score (70% at 1, else uniform) and B, which changes 30% of them."""
    a = np.where(rng.random(count) < 0.7, 1.0, rng.random(count))
    moved = np.clip(a + rng.normal(0.1, 0.25, count), 0.0, 1.0)
    return a, np.where(rng.random(count) < 0.3, moved, a)


def _faithfulness(n):
    # the truth by a seeded 4-million-question draw (standard error 1e-4)
    a, b = _faithfulness_pair(np.random.default_rng(123), 4_000_000)
    truth = float(np.mean(b - a))

    def draw(rng, size):
        a, b = _faithfulness_pair(rng, size * n)
        return np.round((b - a).reshape(size, n), 4), truth

    return draw


def _exchangeable(values, probs, n):
    """Null: A and B independent draws of the same nDCG-like score (truth 0, symmetric)."""
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)

    def draw(rng, size):
        a, b = (values[rng.choice(len(values), size=(size, n), p=probs)] for _ in range(2))
        return np.round(b - a, 4), 0.0

    return draw


NDCG_SCORES = ([1, 0.63, 0.5, 0], [0.85, 0.08, 0.04, 0.03])

SIGNFLIP_SCENARIOS = {
    **{label: _discrete(*spec) for label, spec in PAIRED_SCENARIOS.items()},
    "faithfulness-like, 30% of questions change, n=20": _faithfulness(20),
    "sparse nDCG change (30% change), n=20": _discrete(
        *PAIRED_SCENARIOS["nDCG@k, 30% change, n=54"][:2], 20
    ),
    **{f"dense shift, every question +0.05 (sd 0.03), n={n}": _dense(n) for n in (20, 50, 200)},
    **{f"skew: every question gains Beta(0.3, 3), n={n}": _skewed(n) for n in (20, 50, 200)},
    **{
        f"null: A, B independent nDCG-like scores, n={n}": _exchangeable(*NDCG_SCORES, n)
        for n in (20, 54, 200)
    },
    # Probes of the unseen-tail rule (stats/unseen_tail.py): rare drops among fewer unchanged
    # questions, what the rule costs where the small changes have no tail, and the drop it
    # cannot see (hidden in a dense shift: no interval that keeps the dense width covers it).
    "rare large drops, 80% unchanged (10% +0.05, 9% -0.05, 1% -1), n=50": _discrete(
        [0, 0.05, -0.05, -1], [0.8, 0.1, 0.09, 0.01], 50
    ),
    "rare large drops, 70% unchanged (15% +0.05, 14% -0.05, 1% -1), n=100": _discrete(
        [0, 0.05, -0.05, -1], [0.7, 0.15, 0.14, 0.01], 100
    ),
    "small changes, no tail (90% unchanged, 5% +0.05, 5% -0.05), n=200": _discrete(
        [0, 0.05, -0.05], [0.9, 0.05, 0.05], 200
    ),
    "dense shift +0.05 (sd 0.03) with 1% at -1, n=200": _dense_drop(200),
}


def signflip_intervals(d, n_permutations=2000, methods=False):
    """compare's default interval and verdict p for each row of ``d`` (the real kernel), and
    with ``methods`` each row's interval method."""
    size, n = d.shape
    out = group_signflip(
        np.ascontiguousarray(d.T), list(range(size)), [True] * size, n_permutations, 20, 0.95,
        0, np.ones(n, dtype=bool), [],
    )  # fmt: skip
    low = np.array([out[j][0][-1].confidence_interval.low for j in range(size)])
    high = np.array([out[j][0][-1].confidence_interval.high for j in range(size)])
    p = np.array([out[j][2][0] for j in range(size)])
    return (low, high, p) + ((np.array([out[j][1] for j in range(size)]),) if methods else ())


def t_bounds(d):
    half = stdtrit(d.shape[1] - 1, 0.975) * d.std(axis=1, ddof=1) / np.sqrt(d.shape[1])
    return d.mean(axis=1) - half, d.mean(axis=1) + half


def signflip_rows(rng, size, betting=True):
    """Rows of compare's default on :data:`SIGNFLIP_SCENARIOS`, beside betting and t."""
    rows = []
    for label, draw in SIGNFLIP_SCENARIOS.items():
        d, truth = draw(rng, size)
        low, high, p, methods = signflip_intervals(d, methods=True)
        t_low, t_high = t_bounds(d)
        width, t_width = np.mean(high - low), np.mean(t_high - t_low)
        note = (
            f"width {width:.4f} = {width / t_width:.2f}x t; verdict SIGNIFICANT in "
            f"{np.mean(p < 0.05):.3f}; widened to betting in {np.mean(methods != SIGNFLIP):.3f} "
            f"({np.mean(methods == TAIL_METHOD):.3f} by the unseen-tail rule)"
        )
        rows.append((f"compare default: {label}", "sign-flip inversion (default)",
                     coverage(low, high, truth), size, note))  # fmt: skip
        others = [("t interval (reference)", (t_low, t_high))]
        if betting:
            others.insert(0, ("betting (--ci betting)", bounded_mean_bounds(d, -1.0, 1.0, 0.95)))
        for name, (lo, hi) in others:
            rows.append(("", name, coverage(lo, hi, truth), size, f"width {np.mean(hi - lo):.4f}"))
    return rows


def coverage(low, high, truth) -> float:
    return float(np.mean((low <= truth + 1e-12) & (truth - 1e-12 <= high)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--bootstrap-datasets", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--signflip-datasets", type=int, default=2_000)
    parser.add_argument("--only-signflip", action="store_true", help="only compare's default")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    if args.only_signflip:
        print_rows(args.seed, signflip_rows(rng, args.signflip_datasets))
        return
    size = args.datasets
    rows = []
    for a_only, b_only in ((0.03, 0.05), (0.10, 0.15)):
        c, b = paired_tables(rng, 30, a_only, b_only, size)
        for label, bounds in (
            ("McNemar exact inverted (default)", mcnemar_exact_bounds),
            ("Tango score (before issue 32)", tango_bounds),
        ):
            low, high = bounds(b, c, np.full(size, 30), 0.95)
            zero = int(np.sum(high - low <= 0))
            rows.append(
                (
                    f"paired binary difference, n=30, {a_only:.0%} A only / {b_only:.0%} B only"
                    if label.endswith("(default)")
                    else "",
                    label,
                    coverage(low, high, b_only - a_only),
                    size,
                    f"{zero} zero-width",
                )
            )
        boot_low, boot_high = bootstrap_paired_binary(
            rng, 30, a_only, b_only, args.bootstrap_datasets
        )
        rows.append(
            (
                "",
                "percentile bootstrap (before)",
                coverage(boot_low, boot_high, b_only - a_only),
                args.bootstrap_datasets,
                f"{int(np.sum(boot_high - boot_low <= 0))} zero-width",
            )
        )
    for rate, n in ((0.98, 50), (0.9, 6)):
        k = rng.binomial(n, rate, size)
        label = f"single rate {rate} at n={n}" + (" (stage 1)" if n == 50 else " (unanswerable)")
        for name, (low, high) in (
            ("Clopper-Pearson (default)", clopper_pearson_bounds(k, np.full(size, n), 0.95)),
            ("Wilson", wilson_bounds(k, np.full(size, n), 0.95)),
            (
                "Wilson, continuity-corrected",
                wilson_bounds(k, np.full(size, n), 0.95, correction=True),
            ),
        ):
            rows.append((label, name, coverage(low, high, rate), size, ""))
            label = ""
    rows.append(
        (
            "funnel gap, n=50 (stage-1 0.98, correct 0.85 / luck 0.3)",
            "Tango score, paired (default)",
            gap_tango(rng, 50, size),
            size,
            "",
        )
    )
    rows.append(
        (
            "",
            "paired percentile bootstrap (before)",
            gap_bootstrap(rng, 50, args.bootstrap_datasets),
            args.bootstrap_datasets,
            "",
        )
    )
    for prefix, scenarios, bounds, before in (
        ("dashboard mean", MEAN_SCENARIOS, (0.0, 1.0), "percentile bootstrap (earlier)"),
        (
            "compare, paired difference",
            PAIRED_SCENARIOS,
            (-1.0, 1.0),
            "paired percentile bootstrap (earlier)",
        ),
    ):
        rows += bounded_rows(rng, prefix, scenarios, bounds, before, size, args.bootstrap_datasets)
    rows += switch_rows(rng, size)
    rows += signflip_rows(rng, args.signflip_datasets)
    # Clustered questions (the noise section): its own seeded simulation, same table.
    from coverage_clustered import rows as clustered_rows  # benchmarks/ is sys.path[0]

    rows += clustered_rows(args.seed, 2000, 500)
    print_rows(args.seed, rows)


def print_rows(seed, rows) -> None:
    print(f"seed {seed}; nominal level 0.95; error = Monte Carlo standard error")
    print()
    print("| scenario | interval | coverage | ± error | datasets | note |")
    print("|---|---|---:|---:|---:|---|")
    for scenario, name, value, count, note in rows:
        error = np.sqrt(value * (1 - value) / count)
        print(f"| {scenario} | {name} | {value:.3f} | {error:.3f} | {count} | {note} |")


if __name__ == "__main__":
    main()
