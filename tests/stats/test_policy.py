"""The one interval policy (issue 23 item 2): every caller gets its method from one chooser."""

from __future__ import annotations

import numpy as np
import pytest

from ragaudit.exceptions import InputError
from ragaudit.stats.bounded import METHOD as BETTING
from ragaudit.stats.bounded import bounded_mean_interval, paired_mean_interval
from ragaudit.stats.intervals import paired_difference_interval, proportion_interval
from ragaudit.stats.policy import (
    choose_interval,
    is_binary,
    is_unit,
    mean_interval,
    paired_interval,
)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([0.0, 1.0, 1.0], True),
        ([0.0, 1.0, np.nan], True),  # NaN means "not applicable"
        ([np.nan, np.nan], False),  # nothing observed is not a rate
        ([], False),
        ([0.0, 0.5], False),
        ([True, False], True),
        ([2.0, 1.0], False),
    ],
)
def test_is_binary(values, expected):
    assert is_binary(np.array(values, dtype=float)) is expected


@pytest.mark.parametrize(
    ("samples", "method", "expected"),
    [
        (([1, 0, 1],), "auto", "exact"),
        (([1, 0, 1], [1, 1, 0]), "auto", "score"),
        (([1, 0, 1], [1, 1, 0]), "score", "score"),
        (([1, 0, 1],), "clopper-pearson", "exact"),
        (([1, 0, 1],), "wilson", "exact"),
        (([0.5, 1.0],), "auto", "betting"),
        # one fractional run: not a 2x2 table; the verdict's test inverted (issue 21)
        (([1, 0, 1], [0.5, 1, 1]), "auto", "signflip"),
        (([1, 0, 1], [0.5, 1, 1]), "betting", "betting"),  # on request, never a gate
        (([0.5, 1.0],), "betting", "betting"),
        (([1.5, 1.0],), "auto", "bootstrap"),
        (([1, 0, 1], [2.0, 1, 1]), "auto", "signflip"),
        (([1, 0, 1], [2.0, 1, 1]), "betting", "signflip"),  # betting needs [0, 1]
        (([1, 0, 1], [1, 1, 0]), "bootstrap", "bootstrap"),
        (([1, 0, 1],), "percentile", "bootstrap"),
        (([0.5, 1.0],), "bca", "bootstrap"),
    ],
)
def test_choose_interval(samples, method, expected):
    assert choose_interval(*samples, method=method) == expected


def test_choose_interval_wants_one_or_two_samples():
    with pytest.raises(InputError, match="samples: expected one sample or two"):
        choose_interval([1], [1], [1])


def test_is_unit():
    assert is_unit([0, 0.3, 1]) and not is_unit([-0.1, 0.5])


def test_mean_and_paired_interval_follow_the_chooser():
    """The applied policy equals the underlying intervals called directly."""
    rates = [1, 1, 0, 1, 0, 1]
    assert mean_interval(rates) == proportion_interval(4, 6)
    scores = [1, 0.5, 1, 0.25]
    assert mean_interval(scores) == bounded_mean_interval(scores)
    assert mean_interval(scores).method == BETTING
    a, b = [1, 1, 0, 1, 0], [1, 0, 1, 1, 1]
    # both = 2 (q1, q4), a_only = 1 (q2), b_only = 2 (q3, q5), neither = 0
    assert paired_interval(a, b) == paired_difference_interval(2, 1, 2, 0)
    # 3 of 5 differ: too few for the test to reject, so the inversion contains the betting one
    got = paired_interval(a, [1, 0.5, 1, 1, 1])
    betting = paired_mean_interval(a, [1, 0.5, 1, 1, 1]).confidence_interval
    assert got.method == "sign-flip inversion widened to betting (too few differ)"
    assert (
        got.confidence_interval.low <= betting.low and got.confidence_interval.high >= betting.high
    )
    rng = np.random.default_rng(0)
    a, b = rng.random(16).round(3), rng.random(16).round(3)  # 2^16 patterns: exact, no draw
    got = paired_interval(a, b)
    assert got.method == "sign-flip inversion"
    from ragaudit.stats import PerQuestionMetrics, compare_runs

    ids = [f"q{i:02d}" for i in range(16)]
    runs = [PerQuestionMetrics(k, {q: {"m": float(v)} for q, v in zip(ids, x, strict=True)})
            for k, x in (("A", a), ("B", b))]  # fmt: skip
    row = compare_runs(*runs, subsample_sizes=()).metrics[0]
    assert got.confidence_interval == row.confidence_interval  # one policy, one number
