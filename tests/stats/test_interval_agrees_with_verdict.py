"""Every row of ``compare`` agrees with itself: its interval excludes 0 exactly when its verdict
is SIGNIFICANT (issue 32, "Must hold"), for 0/1 and fractional metrics, with and without
clusters.

Hypothesis draws the two runs (0/1 values, fractional values on a coarse or a fine grid, one
shifted run, ties and unchanged questions) and, half of the time, cluster labels; the rows come
from :func:`ragaudit.stats.compare.compare_runs`, the function ``ragaudit compare`` calls.  A
few hundred random flips keep each example cheap; the agreement must hold for any number of
flips (the interval inverts the same flips as the p-value).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragaudit.stats import PerQuestionMetrics
from ragaudit.stats.compare import compare_runs
from ragaudit.stats.verdicts import SIGNIFICANT


@st.composite
def paired_runs(draw):
    n = draw(st.integers(min_value=2, max_value=45))
    kind = draw(st.sampled_from(["binary", "quarters", "fine"]))
    if kind == "binary":
        value = st.sampled_from([0.0, 1.0])
    elif kind == "quarters":
        value = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])
    else:
        value = st.floats(min_value=0.0, max_value=1.0, allow_nan=False).map(lambda x: round(x, 3))
    a = draw(st.lists(value, min_size=n, max_size=n))
    # B: mostly A's value (unchanged questions, as in real comparisons), else a new draw
    changed = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    fresh = draw(st.lists(value, min_size=n, max_size=n))
    b = [f if c else x for x, f, c in zip(a, fresh, changed, strict=True)]
    if draw(st.booleans()):  # a clear shift in favour of one run
        b = [1.0 if kind == "binary" and c else x for x, c in zip(b, changed, strict=True)]
    clusters = None
    if draw(st.booleans()):
        size = draw(st.integers(min_value=1, max_value=min(4, n // 2)))  # >= 2 clusters
        clusters = {f"q{i:02d}": f"c{i // size}" for i in range(n)}
    return a, b, clusters


def _runs(a, b):
    ids = [f"q{i:02d}" for i in range(len(a))]
    return (
        PerQuestionMetrics(name, {q: {"m": v} for q, v in zip(ids, x, strict=True)})
        for name, x in (("A", a), ("B", b))
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(paired_runs(), st.sampled_from([0.95, 0.9]))
def test_every_row_excludes_zero_exactly_when_significant(data, confidence):
    a, b, clusters = data
    row = compare_runs(
        *_runs(a, b),
        n_resamples=200,
        n_permutations=300,
        confidence=confidence,
        clusters=clusters,
        subsample_sizes=(),
    ).metrics[0]
    low, high = row.confidence_interval.low, row.confidence_interval.high
    excludes = low > 0 or high < 0
    assert excludes == (row.verdict == SIGNIFICANT), (row.verdict, row.pvalue, low, high, row)
    assert low <= row.statistic + 1e-12 and row.statistic <= high + 1e-12


def test_the_issue_tables_agree():
    # 4 of 4 discordant for B (McNemar p = 0.125), 7 of 8 at n = 10 (p = 0.070): Tango's
    # interval excluded 0 beside both verdicts
    for a, b in (
        ([0, 0, 0, 0, 1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 0, 0, 0]),
        ([0] * 7 + [1, 1, 1], [1] * 7 + [0, 1, 1]),
    ):
        row = compare_runs(*_runs([float(x) for x in a], [float(x) for x in b])).metrics[0]
        assert row.verdict != SIGNIFICANT
        assert row.confidence_interval.low < 0 < row.confidence_interval.high
    assert np.isclose(row.pvalue, 0.0703125)
