"""PPI++ intervals against ppi-python, and their coverage when the judge is biased."""

import numpy as np
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci

from ragaudit.exceptions import InputError
from ragaudit.stats.ppi import human_only_mean, judge_only_mean, ppi_mean


def _biased_judge(rng, size, truth=0.6, bias=0.1, miss=0.05):
    """0/1 truth and a judge with P(judge = 1) = truth + bias."""
    y = (rng.random(size) < truth).astype(float)
    false_yes = (truth + bias - truth * (1 - miss)) / (1 - truth)
    yhat = np.where(y == 1, rng.random(size) >= miss, rng.random(size) < false_yes)
    return y, yhat.astype(float)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("n", "big_n"), [(20, 200), (100, 1000), (50, 30)])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_equals_ppi_python(seed, n, big_n, confidence):
    rng = np.random.default_rng(seed)
    y, yhat = _biased_judge(rng, n)
    _, unlabeled = _biased_judge(rng, big_n)
    ours = ppi_mean(y, yhat, unlabeled, confidence=confidence)
    low, high = ppi_mean_ci(y, yhat, unlabeled, alpha=1 - confidence)
    assert abs(ours.confidence_interval.low - float(low[0])) < 1e-9
    assert abs(ours.confidence_interval.high - float(high[0])) < 1e-9
    assert 0.0 <= ours.lam <= 1.0


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_fixed_lambda_equals_ppi_python(lam):
    rng = np.random.default_rng(5)
    y = rng.normal(size=40)
    yhat = y + rng.normal(0.2, 0.5, 40)
    unlabeled = rng.normal(0.2, 1.1, 300)
    ours = ppi_mean(y, yhat, unlabeled, lam=lam)
    low, high = ppi_mean_ci(y, yhat, unlabeled, alpha=0.05, lam=lam)
    assert abs(ours.confidence_interval.low - float(low[0])) < 1e-9
    assert abs(ours.confidence_interval.high - float(high[0])) < 1e-9


def test_human_only_equals_classical_mean_ci():
    y = np.array([1, 0, 1, 1, 0, 1, 1, 1], dtype=float)
    low, high = classical_mean_ci(y, alpha=0.05)
    ours = human_only_mean(y)
    assert abs(ours.confidence_interval.low - float(low)) < 1e-12
    assert abs(ours.confidence_interval.high - float(high)) < 1e-12
    assert "human labels only" in ours.label


def test_judge_only_is_labelled_as_such():
    result = judge_only_mean([1, 1, 0, 1])
    assert result.method == "judge only"
    assert "assumes the judge is always right" in result.label


def test_constant_judge_falls_back_to_humans():
    y = np.array([1, 0, 1, 1, 0], dtype=float)
    ours = ppi_mean(y, np.ones(5), np.ones(20))
    assert ours.lam == 0.0
    assert ours.confidence_interval == human_only_mean(y).confidence_interval


@pytest.mark.slow
def test_ppi_covers_under_judge_bias_where_judge_only_does_not():
    rng = np.random.default_rng(2023)
    reps, n, big_n, truth = 2000, 100, 1000, 0.6
    ppi_hits = judge_hits = 0
    widths = []
    for _ in range(reps):
        y, yhat = _biased_judge(rng, n)
        _, unlabeled = _biased_judge(rng, big_n)
        ppi = ppi_mean(y, yhat, unlabeled).confidence_interval
        judge = judge_only_mean(np.concatenate([yhat, unlabeled])).confidence_interval
        human = human_only_mean(y).confidence_interval
        ppi_hits += ppi.low <= truth <= ppi.high
        judge_hits += judge.low <= truth <= judge.high
        widths.append((ppi.high - ppi.low, human.high - human.low))
    print(f"coverage: PPI++ {ppi_hits / reps:.3f}, judge only {judge_hits / reps:.3f}")
    assert ppi_hits / reps >= 0.93
    assert judge_hits / reps < 0.5
    ppi_width, human_width = np.mean(widths, axis=0)
    assert ppi_width < human_width  # an informative judge narrows the interval


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ppi_mean([1, 0, 1], [1, 0], [1, 0]), r"one per human label \(3\), found 2"),
        (lambda: ppi_mean([1], [1], [1, 0]), "human labels: expected at least 2 values"),
        (lambda: ppi_mean([1, 0], [1, 0], []), "unlabelled questions: expected at least 1"),
        (lambda: ppi_mean([1, 0], [1, 0], [1], lam=2), "lam: expected a number between 0"),
        (lambda: ppi_mean([1, np.nan], [1, 0], [1]), "NaN or infinity at position"),
    ],
)
def test_error_messages(call, message):
    with pytest.raises(InputError, match=message):
        call()
