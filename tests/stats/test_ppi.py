"""PPI++ intervals against ppi-python, and their coverage when the judge is biased."""

import numpy as np
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci
from statsmodels.stats.proportion import proportion_confint

from ragaudit.exceptions import InputError
from ragaudit.stats.ppi import (
    human_only_mean,
    human_only_rate,
    judge_only_mean,
    ppi_mean,
    ppi_rate_small_sample,
)


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


def test_human_only_equals_classical_mean_ci_outside_the_unit_interval():
    y = np.random.default_rng(7).normal(0.5, 2.0, 30)  # not rates: the CLT interval stays
    low, high = classical_mean_ci(y, alpha=0.05)
    ours = human_only_mean(y)
    assert abs(ours.confidence_interval.low - float(low)) < 1e-12
    assert abs(ours.confidence_interval.high - float(high)) < 1e-12
    assert "human labels only" in ours.label


@pytest.mark.parametrize("baseline", [human_only_mean, judge_only_mean])
@pytest.mark.parametrize(("k", "n"), [(51, 54), (54, 54), (0, 20), (3, 40), (19, 20)])
def test_rate_baselines_are_clopper_pearson_inside_the_unit_interval(baseline, k, n):
    y = np.array([1.0] * k + [0.0] * (n - k))
    low, high = proportion_confint(k, n, alpha=0.05, method="beta")  # statsmodels
    ours = baseline(y).confidence_interval
    assert abs(ours.low - low) < 1e-9 and abs(ours.high - high) < 1e-9
    assert 0.0 <= ours.low <= ours.high <= 1.0
    assert baseline(y).label.endswith("Clopper-Pearson exact")


@pytest.mark.parametrize("seed", range(20))
def test_baseline_bounds_never_leave_the_unit_interval(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 200))
    for y in (
        (rng.random(n) < rng.choice([0.01, 0.5, 0.97])).astype(float),
        np.clip(rng.beta(5, 0.3, n), 0, 1),  # fractional scores near 1: betting
    ):
        for baseline in (human_only_mean, judge_only_mean):
            ci = baseline(y).confidence_interval
            assert 0.0 <= ci.low <= ci.high <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("truth", [0.95, 0.5, 0.03])
def test_rate_baselines_cover_in_a_seeded_simulation(truth):
    # Seed 2121, 2,000 label sets of 54 questions each: Clopper-Pearson covered 0.985, 0.955
    # and 0.979 at true rates 0.95, 0.5 and 0.03; the CLT interval it replaced 0.935, 0.919
    # and 0.804.
    rng = np.random.default_rng(2121)
    hits = 0
    for _ in range(2000):
        ci = human_only_mean((rng.random(54) < truth).astype(float)).confidence_interval
        hits += ci.low <= truth <= ci.high
    assert hits / 2000 >= 0.93


def test_judge_only_is_labelled_as_such():
    result = judge_only_mean([1, 1, 0, 1])
    assert result.method == "judge only"
    assert "assumes the judge is always right" in result.label


def test_constant_judge_falls_back_to_humans():
    y = np.array([1, 0, 1, 1, 0], dtype=float)
    ours = ppi_mean(y, np.ones(5), np.ones(20))
    assert ours.lam == 0.0
    low, high = classical_mean_ci(y, alpha=0.05)  # PPI++ with lambda = 0
    assert abs(ours.confidence_interval.low - float(low)) < 1e-12
    assert abs(ours.confidence_interval.high - float(high)) < 1e-12


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


# --- small samples: the MOVER PPI interval and the exact human-only one ----------------------


@pytest.mark.parametrize(
    ("y", "yhat", "unlabeled"),
    [
        ([1] * 13 + [0] * 3, [1] * 13 + [0] * 3, [1] * 36 + [0] * 8),  # the guide's example
        ([1, 1, 0, 1, 0, 1, 1, 0, 1, 1], [1, 1, 1, 1, 0, 0, 1, 1, 1, 1], [1] * 30 + [0] * 10),
        ([1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [1] * 50),
    ],
)
def test_small_sample_ppi_is_mover_of_wilson_and_tango(y, yhat, unlabeled, tango_oracle):
    y, yhat, unlabeled = (np.array(v, dtype=float) for v in (y, yhat, unlabeled))
    ours = ppi_rate_small_sample(y, yhat, unlabeled, confidence=0.9)
    # Independent pieces: statsmodels' Wilson interval, the scipy Tango oracle (conftest).
    p_u = unlabeled.mean()
    l1, u1 = proportion_confint(int(unlabeled.sum()), unlabeled.size, alpha=0.1, method="wilson")
    cells = [
        int(np.sum((y == h) & (yhat == j))) for h, j in ((1, 1), (0, 1), (1, 0), (0, 0))
    ]  # both, judge only (A), human only (B), neither
    l2, u2 = tango_oracle(*cells, confidence=0.9)
    d = y.mean() - yhat.mean()
    theta = p_u + d
    low = max(0.0, theta - np.hypot(p_u - l1, d - l2))
    high = min(1.0, theta + np.hypot(u1 - p_u, u2 - d))
    assert ours.statistic == pytest.approx(theta, abs=1e-12)
    assert abs(ours.confidence_interval.low - low) < 1e-7  # Tango limits found by bisection
    assert abs(ours.confidence_interval.high - high) < 1e-7
    assert ours.lam == 1.0 and ours.method == "ppi small-sample"


def test_human_only_rate_is_clopper_pearson():
    y = np.array([1] * 13 + [0] * 3, dtype=float)
    low, high = proportion_confint(13, 16, alpha=0.05, method="beta")
    ours = human_only_rate(y)
    assert ours.statistic == 13 / 16
    assert abs(ours.confidence_interval.low - low) < 1e-12
    assert abs(ours.confidence_interval.high - high) < 1e-12


def test_small_sample_intervals_reject_non_binary_verdicts():
    with pytest.raises(InputError, match=r"human labels: expected 0/1 verdicts, found 0\.5"):
        ppi_rate_small_sample([1, 0.5], [1, 0], [1])
    with pytest.raises(InputError, match=r"human labels: expected 0/1 verdicts, found 2"):
        human_only_rate([1, 2])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("truth", "n", "big_n", "tpr", "fpr"),
    [(0.8, 16, 44, 0.95, 0.1), (0.95, 16, 44, 0.97, 0.3), (0.95, 50, 500, 0.97, 0.3)],
)
def test_small_sample_ppi_covers_where_ppi_plus_plus_does_not(truth, n, big_n, tpr, fpr):
    # A judge that misses 1 - tpr of the correct answers and passes fpr of the wrong ones.
    # Measured with seed 14, 1000 simulations each: small-sample PPI 0.998 / 1.000 / 0.991,
    # PPI++ 0.856 / 0.535 / 0.892 (it sees few disagreements and trusts the judge); 400 keep
    # both bars (issue 32: the suite's time), the first with room for 28 misses.
    rng = np.random.default_rng(14)
    hits = plus_hits = 0
    reps = 400
    for _ in range(reps):
        y = (rng.random(n) < truth).astype(float)
        truth_u = (rng.random(big_n) < truth).astype(float)
        yhat, unlabeled = (
            np.where(t == 1, rng.random(t.size) < tpr, rng.random(t.size) < fpr).astype(float)
            for t in (y, truth_u)
        )
        ci = ppi_rate_small_sample(y, yhat, unlabeled).confidence_interval
        hits += ci.low <= truth <= ci.high
        plus = ppi_mean(y, yhat, unlabeled).confidence_interval
        plus_hits += plus.low <= truth <= plus.high
    print(f"truth {truth}, n {n}: small-sample PPI {hits / reps:.3f}, PPI++ {plus_hits / reps:.3f}")
    assert hits / reps >= 0.93
    assert plus_hits / reps < 0.92
