"""compare's default widens to betting when the sample may hide a rare large change (issue 21).

Expected values: the betting interval is the library's own kernel called directly on the same
differences (its coverage is tested in test_bounded.py); the exact sign-flip p of ``m`` equal
gains and zeros elsewhere is ``2 / 2**m`` by hand (only the two all-same-sign patterns of the
``m`` non-zero values reach the observed sum).
"""

from __future__ import annotations

import numpy as np
import pytest

from ragaudit.stats import PerQuestionMetrics, compare_runs
from ragaudit.stats.bounded import bounded_mean_bounds
from ragaudit.stats.policy import paired_interval
from ragaudit.stats.signflip_interval import FEW_METHOD, METHOD, signflip_interval
from ragaudit.stats.unseen_tail import TAIL_METHOD, may_hide_tail
from ragaudit.testing import assert_not_worse


def _pair(changes: list[float], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Run A scores 0.5 on ``n`` questions; B moves the first ones by ``changes``."""
    a = np.full(n, 0.5)
    b = a.copy()
    b[: len(changes)] += np.asarray(changes)
    return a, b


def _runs(a: np.ndarray, b: np.ndarray) -> tuple[PerQuestionMetrics, PerQuestionMetrics]:
    ids = [f"q{i:03d}" for i in range(a.size)]
    return tuple(  # type: ignore[return-value]
        PerQuestionMetrics(name, {q: {"m": float(v)} for q, v in zip(ids, x, strict=True)})
        for name, x in (("A", a), ("B", b))
    )


def _betting(d: np.ndarray) -> tuple[float, float]:
    low, high = bounded_mean_bounds(d[None, :], -1.0, 1.0, 0.95)
    return float(low[0]), float(high[0])


@pytest.mark.parametrize(
    ("d", "expected"),
    [
        ([0.0] * 10 + [0.25] * 5 + [-0.25] * 5, True),  # exactly half unchanged, changes 0.25
        ([0.0] * 9 + [0.05] * 11, False),  # fewer than half unchanged (a dense shift)
        ([0.0] * 10 + [0.05] * 9 + [0.2501], False),  # the sample shows a change beyond 0.25
        ([0.0] * 18 + [0.05, -1.0], False),  # ... such as the drop itself
        ([0.0] * 20, True),
        ([], False),
    ],
)
def test_may_hide_tail_thresholds(d, expected):
    assert may_hide_tail(np.array(d, dtype=float)) is expected


def test_a_sample_that_may_hide_a_drop_contains_the_betting_interval():
    # 200 questions: 10 drop by 0.05, 8 gain 0.05, none by more (the rare -1 unseen)
    a, b = _pair([-0.05] * 10 + [0.05] * 8, 200)
    d = b - a
    got = paired_interval(a, b)
    plain = signflip_interval(d).confidence_interval  # the inversion before any widening
    low, high = _betting(d)
    assert got.method == TAIL_METHOD
    ci = got.confidence_interval
    assert ci.low <= min(low, plain.low) and ci.high >= max(high, plain.high)
    # the betting interval is what widened it: several times the sign-flip width here
    assert high - low > 3 * (plain.high - plain.low)


def test_a_sample_that_shows_its_drop_is_not_widened():
    a, b = _pair([-0.05] * 10 + [0.05] * 8 + [-0.5], 200)
    got = paired_interval(a, b)
    low, high = _betting(b - a)
    assert got.method == METHOD
    assert got.confidence_interval.high - got.confidence_interval.low < high - low


def test_a_dense_shift_is_not_widened():
    rng = np.random.default_rng(3)
    a = np.full(50, 0.5)
    got = paired_interval(a, a + np.round(rng.normal(0.05, 0.03, 50), 4))
    assert got.method == METHOD


def test_too_few_differing_keeps_its_own_name():
    a, b = _pair([0.05] * 5, 40)  # 5 differ: no result could be significant
    assert paired_interval(a, b).method == FEW_METHOD


def test_the_verdict_stays_with_the_exact_test_when_betting_reaches_past_zero():
    # 30 of 200 questions gain 0.05: exact p = 2 / 2**30, SIGNIFICANT, while the betting
    # interval (mean 0.0075 on a range of 2) still reaches below 0.  The printed interval
    # contains the betting one above and ends at 0, open, below: it excludes 0 as the verdict.
    a, b = _pair([0.05] * 30, 200)
    low, high = _betting(b - a)
    assert low < 0.0 < high  # the case this test is about
    row = compare_runs(*_runs(a, b), seed=0).metrics[0]
    assert row.pvalue == pytest.approx(2 * 0.5**30, rel=1e-9)
    assert row.verdict == "SIGNIFICANT" and row.ci_method == TAIL_METHOD
    assert 0.0 < row.confidence_interval.low < 1e-300
    assert row.confidence_interval.high >= high


def test_the_gate_fires_on_a_sparse_small_regression():
    a, b = _pair([-0.05] * 30, 200)
    with pytest.raises(AssertionError):
        assert_not_worse(*_runs(a, b))
    assert_not_worse(*_runs(b, a))  # the improvement passes
