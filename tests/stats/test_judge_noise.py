"""Judge-noise variance decomposition: by hand, against statsmodels' REML and by simulation."""

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from ragaudit.exceptions import InputError
from ragaudit.stats.judge_noise import judge_noise


def test_hand_computed_components():
    scores = np.array([[1, 1, 1], [1, 0, 1], [0, 0, 1], [0, 0, 0], [1, 1, 1]], dtype=float)
    n, r = scores.shape
    means = scores.mean(axis=1)
    msw = ((scores - means[:, None]) ** 2).sum() / (n * (r - 1))
    msb = r * ((means - means.mean()) ** 2).sum() / (n - 1)
    result = judge_noise(scores)
    assert result.within_variance == pytest.approx(msw, abs=1e-15)
    assert result.between_variance == pytest.approx((msb - msw) / r, abs=1e-15)
    assert result.judge_component == pytest.approx(msw / (n * r), abs=1e-15)
    # Both components together are the usual variance of the mean of question means.
    assert result.variance == pytest.approx(stats.sem(means) ** 2, rel=1e-12)
    assert result.between_share + result.judge_share == pytest.approx(1.0, abs=1e-15)
    # Scores outside [0, 1] (here 0 or 5) get the t interval on n - 1 df.
    scaled = judge_noise(5 * scores)
    t = stats.t.ppf(0.975, n - 1)
    assert scaled.confidence_interval.high == pytest.approx(
        5 * means.mean() + t * 5 * stats.sem(means), rel=1e-12
    )
    assert scaled.sampling_only_interval.high - scaled.statistic == pytest.approx(
        t * 5 * np.sqrt((msb - msw) / r / n), rel=1e-12
    )
    assert result.repeats_to_halve_judge_variance == 6


def test_repeats_to_halve_share_by_brute_force():
    scores = np.array([[1, 1], [1, 0], [0, 0], [0, 1], [1, 1], [0, 0]], dtype=float)
    result = judge_noise(scores)
    b, w, r = result.between_variance, result.within_variance, 2

    def share(repeats):
        return (w / repeats) / (b + w / repeats)

    target = share(r) / 2
    expected = next(k for k in range(1, 1000) if share(k) <= target)
    assert result.repeats_to_halve_judge_share == expected


def test_deterministic_judge_has_no_judge_component():
    result = judge_noise([[1, 1], [0, 0], [1, 1]])
    assert result.judge_component == 0.0 and result.judge_share == 0.0
    assert result.repeats_to_halve_judge_share is None
    assert result.sampling_only_interval == result.confidence_interval


def test_truncates_negative_between_variance():
    # Question means vary less than the judge noise predicts: sigma_b^2 estimate is 0.
    result = judge_noise([[1, 0], [0, 1], [1, 0], [0, 1]])
    assert result.between_variance == 0.0
    assert result.judge_share == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_equals_statsmodels_reml_on_balanced_data(seed):
    # For a balanced one-way random model, REML equals the ANOVA estimators (when positive).
    rng = np.random.default_rng(seed)
    n, r = 30, 4
    scores = rng.normal(0, 0.5, (n, 1)) + rng.normal(0, 0.3, (n, r))
    model = sm.MixedLM(scores.ravel(), np.ones(n * r), groups=np.repeat(np.arange(n), r))
    fit = model.fit(reml=True)
    result = judge_noise(scores)
    assert result.between_variance == pytest.approx(float(np.asarray(fit.cov_re)[0, 0]), rel=1e-4)
    assert result.within_variance == pytest.approx(fit.scale, rel=1e-4)


@pytest.mark.slow
def test_recovers_known_components_within_monte_carlo_error():
    rng = np.random.default_rng(11)
    reps, n, r = 2000, 100, 3
    sigma_b2, sigma_w2 = 0.04, 0.09
    q = rng.normal(0.6, np.sqrt(sigma_b2), (reps, n, 1))
    scores = q + rng.normal(0, np.sqrt(sigma_w2), (reps, n, r))
    results = [judge_noise(s) for s in scores]
    between = np.array([x.between_variance for x in results])
    within = np.array([x.within_variance for x in results])
    # Unbiased estimators: the average is within 4 Monte-Carlo standard errors of the truth.
    assert abs(within.mean() - sigma_w2) < 4 * within.std(ddof=1) / np.sqrt(reps)
    assert abs(between.mean() - sigma_b2) < 4 * between.std(ddof=1) / np.sqrt(reps) + 1e-4
    # The decomposed standard error matches the spread of the judged mean across repetitions.
    true_var = sigma_b2 / n + sigma_w2 / (n * r)
    variance = np.array([x.variance for x in results])
    assert variance.mean() == pytest.approx(true_var, rel=0.05)
    shares = np.array([x.judge_share for x in results])
    assert shares.mean() == pytest.approx((sigma_w2 / (n * r)) / true_var, abs=0.02)
    coverage = np.mean(
        [x.confidence_interval.low <= 0.6 <= x.confidence_interval.high for x in results]
    )
    assert coverage >= 0.93


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([1, 0, 1], r"2-D array \(questions x repeats\)"),
        ([[1], [0]], "at least 2 questions and 2 repeats, found 2 x 1"),
        ([[1, np.nan], [0, 1]], "found nan at question 0, repeat 1"),
    ],
)
def test_error_messages(scores, message):
    with pytest.raises(InputError, match=message):
        judge_noise(scores)


def test_judged_rate_gets_the_korn_graubard_interval(korn_graubard_oracle):
    rng = np.random.default_rng(4)
    chance = rng.beta(4, 1, 30)
    scores = (rng.random((30, 3)) < chance[:, None]).astype(float)
    result = judge_noise(scores)
    n_eff, low, high = korn_graubard_oracle(scores.ravel(), np.repeat(np.arange(30), 3))
    assert abs(result.confidence_interval.low - low) < 1e-9
    assert abs(result.confidence_interval.high - high) < 1e-9
    # Without the judge component: the same beta interval on n* scaled by the variance ratio.
    size = n_eff * result.variance / result.between_component
    x = result.statistic * size
    assert result.sampling_only_interval.low == pytest.approx(
        stats.beta.ppf(0.025, x, size - x + 1), abs=1e-9
    )
    assert result.sampling_only_interval.high == pytest.approx(
        stats.beta.ppf(0.975, x + 1, size - x), abs=1e-9
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rate", "concentration", "n", "repeats"), [(0.6, 3, 60, 3), (0.95, 3, 54, 3), (0.98, 2, 40, 2)]
)
def test_judged_rate_interval_covers_near_1(rate, concentration, n, repeats):
    # Each question has a chance Beta(rate * c, (1 - rate) * c) that the sampling judge says
    # "correct"; the judged rate's expectation is `rate`.  Measured with seed 1, 1500
    # simulations: beta interval 0.956 / 0.954 / 0.992; the t interval 0.943 / 0.893 / 0.733.
    rng = np.random.default_rng(1)
    hits = t_hits = 0
    reps = 1500
    for _ in range(reps):
        chance = rng.beta(rate * concentration, (1 - rate) * concentration, n)
        scores = (rng.random((n, repeats)) < chance[:, None]).astype(float)
        result = judge_noise(scores)
        ci = result.confidence_interval
        hits += ci.low <= rate <= ci.high
        half = stats.t.ppf(0.975, n - 1) * result.standard_error
        t_hits += abs(result.statistic - rate) <= half
    print(f"rate {rate}: beta interval {hits / reps:.3f}, t interval {t_hits / reps:.3f}")
    assert hits / reps >= 0.93
    if rate >= 0.95:
        assert t_hits / reps < 0.91


def test_every_result_names_its_interval_method():
    from ragaudit.diagnose.judge_noise import JudgeNoiseComparison
    from ragaudit.reports.noise import judge_noise_lines

    rate = judge_noise([[1, 1], [1, 0], [0, 0]])
    scores = judge_noise([[1, 1], [1, -1], [0, 0]], difference=True)  # B - A in [-1, 1]
    assert rate.method == "Korn-Graubard beta, questions as clusters"
    assert scores.method == "betting on question means in [-1, 1] (Waudby-Smith-Ramdas)"
    assert judge_noise([[2, 1], [1, -1]]).method == "mean ± t(n-1) SE"
    lines = judge_noise_lines(JudgeNoiseComparison("correct", rate, rate, scores, 0), 0.95)
    assert lines[2].endswith("; Korn-Graubard beta, questions as clusters")
    assert lines[4].endswith("; betting on question means in [-1, 1] (Waudby-Smith-Ramdas)")
    assert JudgeNoiseComparison("correct", rate, None, None, 0).to_dict()["a"]["method"] == (
        rate.method
    )


def test_difference_gets_the_betting_interval_of_question_means():
    # B - A of two judged rates, 4 questions x 2 repeats: question means 1, 0, 0, -0.5.
    from ragaudit.stats.bounded import bounded_mean_interval

    d = np.array([[1, 1], [0, 0], [1, -1], [-1, 0]], dtype=float)
    got = judge_noise(d, difference=True).confidence_interval
    ref = bounded_mean_interval([1, 0, 0, -0.5], bounds=(-1, 1)).confidence_interval
    assert (got.low, got.high) == (min(ref.low, 0.125), max(ref.high, 0.125))
    # Deterministic judge, B fixes 30% of A's misses and breaks 5% of its hits, 20 questions:
    # the t interval covers 0.57 (measured); the betting interval at least 0.93.
    rng = np.random.default_rng(7)
    size, n, truth = 400, 20, 0.9 * 0.95 + 0.1 * 0.3 - 0.9
    a = rng.random((size, n)) < rng.beta(0.9, 0.1, (size, n))
    u = rng.random((size, n))
    b = np.where(a, u >= 0.05, u < 0.3)
    diff = np.repeat((b.astype(float) - a)[..., None], 2, axis=2)
    hits = [judge_noise(x, difference=True).confidence_interval for x in diff]
    assert np.mean([c.low <= truth <= c.high for c in hits]) >= 0.93


def test_compare_treats_b_minus_a_as_a_difference_even_without_a_minus_one():
    # B fixes two of A's misses and breaks none: every B - A is 0 or 1, still a difference.
    from ragaudit.data.saved_run import SavedRun
    from ragaudit.diagnose.judge_noise import judge_noise_comparison
    from ragaudit.stats.bounded import bounded_mean_interval

    def run(verdicts):
        return SavedRun.from_dict(
            {
                "config": {"k": 1},
                "rows": [
                    {
                        "id": f"q{i}",
                        "retrieved": [],
                        "judges": {"judge_repeat_verdicts": {"correct": v}},
                    }
                    for i, v in enumerate(verdicts)
                ],
            }
        )

    a = [[1, 1], [1, 1], [0, 0], [0, 0], [1, 1]]
    b = [[1, 1], [1, 1], [1, 1], [1, 0], [1, 1]]
    got = judge_noise_comparison(run(a), run(b), "correct").difference
    ref = bounded_mean_interval([0, 0, 1, 0.5, 0], bounds=(-1, 1)).confidence_interval
    assert got is not None and got.confidence_interval == ref
    assert got.confidence_interval.low < 0  # a rate interval would stop at 0


def test_unanimous_share_is_a_clopper_pearson_rate_over_questions():
    """Share of questions whose R verdicts all agree; a question missing a verdict is left
    out; the interval is scipy's exact binomial interval over the questions."""
    from scipy.stats import binomtest

    from ragaudit.stats import unanimous_share

    nan = float("nan")
    verdicts = [[1, 1, 1]] * 7 + [[0, 0, 0]] * 5 + [[1, 0, 1]] * 3 + [[1, nan, 1]] * 2
    found = unanimous_share(verdicts)
    ci = binomtest(12, 15).proportion_ci(method="exact")
    assert found.statistic == 12 / 15 and found.method == "Clopper-Pearson exact"
    assert (found.confidence_interval.low, found.confidence_interval.high) == pytest.approx(
        (ci.low, ci.high)
    )
    assert unanimous_share([[nan, 1.0]]) is None
    with pytest.raises(InputError, match=r"expected an \(n, R\) array with R >= 2"):
        unanimous_share([[1.0], [0.0]])
