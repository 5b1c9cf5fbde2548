"""Judge noise versus sampling noise: a variance decomposition of a judged mean.

When a (sampling) judge scores every question ``R`` times, the judged mean
``theta = mean_ir y_ir`` varies for two reasons: which questions are in the golden set
(between-question variance) and what the judge happened to say this time (within-question,
judge variance).  :func:`judge_noise` separates them with the one-way random-effects ANOVA and
says how much each contributes, the interval with both included and how many repeats would
shrink the judge's part.  No file I/O.

References
----------
.. [1] Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
   evaluations. arXiv:2411.00640, section 3 ("resampling answers": the variance of a mean over
   questions with K samples each is Var(x)/n + E[sigma_i^2]/(n K)).
.. [2] Searle, S. R., Casella, G. & McCulloch, C. E. (1992). *Variance Components*, ch. 3
   (ANOVA estimators for the balanced one-way random model).
.. [3] Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
   betting. JRSS-B 86(1), 1-27 (the interval of a difference B - A).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import stdtrit

from ragaudit.exceptions import InputError
from ragaudit.stats.bounded import bounded_mean_interval
from ragaudit.stats.clustered import clustered_rate
from ragaudit.stats.intervals import IntervalResult, clopper_pearson_bounds
from ragaudit.stats.policy import mean_interval
from ragaudit.stats.repeats import REPEATED_METHOD, nested_components
from ragaudit.stats.resampling import ConfidenceInterval, check_confidence

__all__ = [
    "DIFFERENCE_METHOD",
    "RATE_METHOD",
    "T_METHOD",
    "JudgeNoiseResult",
    "judge_noise",
    "unanimous_share",
]

#: Method of the interval of a judged rate (verdicts in [0, 1]).
RATE_METHOD = REPEATED_METHOD  # judge repeats and generation repeats: one interval
#: Method of the interval of a difference B - A (values in [-1, 1], not all in [0, 1]).
DIFFERENCE_METHOD = "betting on question means in [-1, 1] (Waudby-Smith-Ramdas)"
#: Method of the interval of other judged scores.
T_METHOD = "mean ± t(n-1) SE"


@dataclass(frozen=True)
class JudgeNoiseResult:
    """Result of :func:`judge_noise`.

    Attributes
    ----------
    statistic : float
        The judged mean over every question and repeat.
    n_questions, n_repeats : int
    between_variance : float
        :math:`\\hat\\sigma^2_b`, variance of the questions' true (judge-averaged) scores.
    within_variance : float
        :math:`\\hat\\sigma^2_w`, variance of one verdict around its question's average
        (the judge's noise).
    between_component, judge_component : float
        Their contributions to the variance of ``statistic``: :math:`\\hat\\sigma^2_b/n` and
        :math:`\\hat\\sigma^2_w/(nR)`.
    variance : float
        Their sum, the variance of ``statistic``.
    between_share, judge_share : float
        Each component's share of ``variance`` (0 and 0 when it is 0).
    standard_error : float
        ``sqrt(variance)``.
    confidence_interval : ConfidenceInterval
        Both sources included: ``statistic ± t_{n-1} * standard_error``, or for verdicts in
        [0, 1] the Korn-Graubard beta interval of
        :func:`~ragaudit.stats.clustered.clustered_rate` over every verdict with the questions
        as clusters (same variance when MSB >= MSW; stays in [0, 1], keeps its coverage near 1);
        for differences B - A in [-1, 1] the betting interval of the question means on
        [-1, 1] (Waudby-Smith & Ramdas 2024; the ``t`` interval covered 0.57 at n = 20).
    sampling_only_interval : ConfidenceInterval
        The interval without the judge component (what an infinitely repeated judge would give);
        for verdicts in [0, 1] the beta interval on the effective n scaled by
        ``variance / between_component``.
    repeats_to_halve_judge_variance : int
        ``2R``: the judge component is :math:`\\sigma^2_w/(nR)`.
    repeats_to_halve_judge_share : int or None
        Smallest ``R'`` whose judge share is at most half of the current one,
        ``ceil(2R + sigma_w^2 / sigma_b^2)``; ``None`` when there is no between-question
        variance (the share is then 1 for every ``R``) or no judge variance.
    confidence : float
    method : str
        The interval's method, named on every printed row: :data:`RATE_METHOD` for verdicts in
        [0, 1], else :data:`T_METHOD`.
    """

    statistic: float
    n_questions: int
    n_repeats: int
    between_variance: float
    within_variance: float
    between_component: float
    judge_component: float
    variance: float
    between_share: float
    judge_share: float
    standard_error: float
    confidence_interval: ConfidenceInterval
    sampling_only_interval: ConfidenceInterval
    repeats_to_halve_judge_variance: int
    repeats_to_halve_judge_share: int | None
    confidence: float
    method: str = ""


def _judge_noise_iv(scores: Any, confidence: float) -> tuple[np.ndarray, float]:
    confidence = check_confidence(confidence)
    y = np.asarray(scores, dtype=float)
    if y.ndim != 2:
        raise InputError(
            f"scores: expected a 2-D array (questions x repeats), found shape {y.shape}"
        )
    n, repeats = y.shape
    if n < 2 or repeats < 2:
        raise InputError(
            f"scores: expected at least 2 questions and 2 repeats, found {n} x {repeats} "
            "(judge with --judge-repeats 2 or more)"
        )
    bad = np.argwhere(~np.isfinite(y))
    if bad.size:
        i, r = bad[0]
        raise InputError(
            f"scores: expected finite values, found {y[i, r]} at question {i}, repeat {r} "
            "(drop questions whose repeats failed)"
        )
    return y, confidence


def judge_noise(
    scores: Any, *, confidence: float = 0.95, difference: bool = False
) -> JudgeNoiseResult:
    r"""Decompose the variance of a judged mean into question sampling and judge noise.

    ``scores[i, r]`` is the judge's ``r``-th verdict on question ``i`` (``n`` questions,
    ``R`` repeats).  Under the one-way random-effects model
    :math:`y_{ir} = \mu + q_i + e_{ir}` with :math:`\mathrm{Var}\, q_i = \sigma^2_b` and
    :math:`\mathrm{Var}\, e_{ir} = \sigma^2_w`, the grand mean has

    .. math:: \mathrm{Var}(\bar y) = \frac{\sigma^2_b}{n} + \frac{\sigma^2_w}{nR}

    and the ANOVA mean squares give unbiased estimates

    .. math:: \hat\sigma^2_w = \mathrm{MSW} = \frac{\sum_{ir} (y_{ir} - \bar y_i)^2}{n(R-1)},
              \qquad
              \hat\sigma^2_b = \max\Big(0, \frac{\mathrm{MSB} - \mathrm{MSW}}{R}\Big),
              \quad \mathrm{MSB} = \frac{R \sum_i (\bar y_i - \bar y)^2}{n-1}

    When :math:`\mathrm{MSB} \ge \mathrm{MSW}` the two components add up to
    :math:`\mathrm{MSB}/(nR) = s^2_{\bar y_i}/n`, the usual standard error of the question
    means, so the interval :math:`\bar y \pm t_{n-1}\sqrt{\cdot}` includes both sources.
    For verdicts in [0, 1] (a judged rate) the interval is instead Korn and Graubard's beta
    interval on the same CR1 variance (:func:`~ragaudit.stats.clustered.clustered_rate`,
    questions as clusters): the ``t`` interval crosses 1 and covers only 0.73-0.89 for judged
    rates of 0.95-0.98, the beta interval at least 0.95 (``tests/stats/test_judge_noise.py``).
    Repeating the judge only shrinks the second term; doubling ``R`` halves it.

    Parameters
    ----------
    scores : array_like of float, shape (n, R)
        Every repeat of every question; at least 2 of each, all finite.
    confidence : float, default 0.95
    difference : bool, default False
        ``scores`` are differences B - A of two judged rates (values in [-1, 1]): the interval
        is then the betting interval of the question means on [-1, 1], whatever values this
        sample happens to hold (a sample with no -1 is still a difference, not a rate).

    Returns
    -------
    JudgeNoiseResult

    References
    ----------
    Miller (2024), "Adding error bars to evals", arXiv:2411.00640, section 3; Searle, Casella &
    McCulloch (1992), *Variance Components*, ch. 3.

    Examples
    --------
    A judge that flips a coin on question 2 and agrees with itself elsewhere:

    >>> r = judge_noise([[1, 1], [1, 0], [0, 0], [0, 0]])
    >>> r.statistic, r.within_variance          # MSW = (0.25 + 0.25) / (4 * 1)
    (0.375, 0.125)
    >>> round(r.between_variance, 6)            # (MSB - MSW) / R, MSB = 2 * 0.6875 / 3
    0.166667
    >>> round(r.judge_share, 4)                 # (0.125 / 8) / (MSB / 8)
    0.2727
    >>> r.repeats_to_halve_judge_variance, r.repeats_to_halve_judge_share  # 2R; ceil(4 + 0.75)
    (4, 5)
    """
    y, confidence = _judge_noise_iv(scores, confidence)
    n, repeats = y.shape
    question_means = y.mean(axis=1)
    grand = float(question_means.mean())
    # The one-way model is the nested one with no judge level below the repeats: one
    # estimator for both (the judge's repeats play the part of the generations there).
    components = nested_components(y[:, :, None])
    msw, between = components["generations"], components["questions"]
    between_component = between / n
    judge_component = msw / (n * repeats)
    variance = between_component + judge_component
    se = math.sqrt(variance)
    t = float(stdtrit(n - 1, 0.5 + confidence / 2))
    sampling_half = t * math.sqrt(between_component)
    if between > 0 and msw > 0:
        to_halve_share: int | None = math.ceil(2 * repeats + msw / between - 1e-9)
    else:
        to_halve_share = None
    interval = ConfidenceInterval(grand - t * se, grand + t * se)
    sampling_only = ConfidenceInterval(grand - sampling_half, grand + sampling_half)
    method = T_METHOD
    if difference:
        if y.min() < -1 or y.max() > 1:
            raise InputError(
                f"scores: expected differences in [-1, 1], found {float(np.abs(y).max())}"
            )
        mean_ci = bounded_mean_interval(question_means, bounds=(-1.0, 1.0), confidence=confidence)
        interval = ConfidenceInterval(
            min(mean_ci.confidence_interval.low, grand),
            max(mean_ci.confidence_interval.high, grand),
        )
        method = DIFFERENCE_METHOD
    elif y.min() >= 0 and y.max() <= 1:  # judged rates: an interval that stays in [0, 1]
        rate = clustered_rate(y.ravel(), np.repeat(np.arange(n), repeats), confidence=confidence)
        interval = rate.confidence_interval
        method = RATE_METHOD
        if between_component > 0 and rate.effective_n is not None:
            size = np.array([rate.effective_n * variance / between_component])
            low, high = clopper_pearson_bounds(grand * size, size, confidence)
            sampling_only = ConfidenceInterval(float(low[0]), float(high[0]))
        else:
            sampling_only = ConfidenceInterval(grand, grand)
    return JudgeNoiseResult(
        statistic=grand,
        n_questions=n,
        n_repeats=repeats,
        between_variance=between,
        within_variance=msw,
        between_component=between_component,
        judge_component=judge_component,
        variance=variance,
        between_share=between_component / variance if variance > 0 else 0.0,
        judge_share=judge_component / variance if variance > 0 else 0.0,
        standard_error=se,
        confidence_interval=interval,
        sampling_only_interval=sampling_only,
        repeats_to_halve_judge_variance=2 * repeats,
        repeats_to_halve_judge_share=to_halve_share,
        confidence=confidence,
        method=method,
    )


def unanimous_share(verdicts: Any, *, confidence: float = 0.95) -> IntervalResult | None:
    """The share of questions whose ``R`` repeated verdicts all agree, with its interval.

    ``verdicts`` is ``(n, R)``, NaN where a repeat has no verdict (that question is left
    out).  Agreement is 0/1 per question, and questions are the sampled units, so the
    interval is that of a rate over questions (:func:`ragaudit.stats.policy.mean_interval`:
    Clopper-Pearson exact); None when no question has all ``R`` verdicts.

    >>> found = unanimous_share([[1, 1, 1], [1, 0, 1], [0, 0, float("nan")]])
    >>> found.statistic, found.method, round(found.confidence_interval.low, 4)
    (0.5, 'Clopper-Pearson exact', 0.0126)
    """
    x = np.asarray(verdicts, dtype=float)
    if x.ndim != 2 or x.shape[1] < 2:
        raise InputError(f"verdicts: expected an (n, R) array with R >= 2, found shape {x.shape}")
    whole = x[~np.isnan(x).any(axis=1)]
    if not len(whole):
        return None
    agree = (whole == whole[:, :1]).all(axis=1).astype(float)
    return mean_interval(agree, confidence=confidence)

