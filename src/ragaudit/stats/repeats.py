"""Repeated generations of one question: pass@k, pass^k, flaky questions and a variance budget.

A pipeline run ``R`` times on each of ``n`` questions gives an ``(n, R)`` array of outcomes
(0/1 verdicts, or scores in [0, 1]); with ``J`` judge calls on each answer, ``(n, R, J)``.
Repeats of one question are correlated (the question is hard or easy for every repeat), so
the question, never the (question, repeat) pair, is the unit of every interval here: the
pooled Wilson interval over all ``nR`` outcomes, as some evaluation tools print, is too
narrow by the square root of the design effect ``1 + (R - 1) ICC``
(``benchmarks/coverage_repeats.py``).  No file I/O.

References
----------
.. [1] Chen, M. et al. (2021). Evaluating large language models trained on code.
   arXiv:2107.03374, section 2.1 (the unbiased estimator of pass@k).
.. [2] Yao, S. et al. (2024). tau-bench: a benchmark for tool-agent-user interaction in
   real-world domains. arXiv:2406.12045, section 5 (pass^k and its unbiased estimator).
.. [3] Searle, S. R., Casella, G. & McCulloch, C. E. (1992). *Variance Components*, ch. 4
   (ANOVA estimators for balanced nested random models).
.. [4] Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., section 10.6 (two-stage
   sampling: the best number of second-stage units for a fixed cost).
.. [5] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640, section 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.special import comb

from ragaudit.exceptions import InputError
from ragaudit.stats.clustered import clustered_rate
from ragaudit.stats.intervals import IntervalResult, clopper_pearson_bounds
from ragaudit.stats.policy import mean_interval
from ragaudit.stats.resampling import ConfidenceInterval, check_confidence

__all__ = [
    "REPEATED_METHOD",
    "FlakyQuestion",
    "PassKResult",
    "RepeatAllocation",
    "VarianceBudget",
    "allocate_repeats",
    "allocation_grid",
    "flaky_questions",
    "nested_components",
    "pass_k",
    "per_question_pass_k",
    "repeated_mean_interval",
    "variance_budget",
]

PassKind = Literal["pass^k", "pass@k"]

#: Method of the interval of a mean over repeats (the name judge repeats print too).
REPEATED_METHOD = "Korn-Graubard beta, questions as clusters"


def _outcomes_iv(outcomes: Any, *, levels: tuple[int, ...] = (2,)) -> np.ndarray:
    y = np.asarray(outcomes, dtype=float)
    if y.ndim not in levels:
        shapes = " or ".join(
            {2: "(questions, repeats)", 3: "(questions, repeats, judge calls)"}[d] for d in levels
        )
        raise InputError(f"outcomes: expected an array of shape {shapes}, found shape {y.shape}")
    if y.shape[0] < 1 or y.shape[1] < 1:
        raise InputError(f"outcomes: expected at least one question and repeat, found {y.shape}")
    bad = np.argwhere(~np.isfinite(y) | (y < 0) | (y > 1))
    if bad.size:
        where = ", ".join(str(int(i)) for i in bad[0])
        raise InputError(
            f"outcomes: expected values in [0, 1], found {y[tuple(bad[0])]} at [{where}] "
            "(a failed generation is a question to drop or count as 0, not a number to guess)"
        )
    return y


def per_question_pass_k(outcomes: Any, k: int, kind: PassKind = "pass^k") -> np.ndarray:
    r"""Unbiased per-question estimates of pass^k (all ``k`` tries right) or pass@k (any).

    With ``c`` of ``R`` repeats right, sampling ``k <= R`` of them without replacement:

    .. math:: \widehat{\mathrm{pass}^k} = \binom{c}{k} \Big/ \binom{R}{k}, \qquad
              \widehat{\mathrm{pass@}k} = 1 - \binom{R-c}{k} \Big/ \binom{R}{k}

    unbiased for :math:`p^k` and :math:`1-(1-p)^k` when the repeats are independent draws
    with success probability :math:`p` (Yao et al. 2024; Chen et al. 2021).  No unbiased
    estimator exists for ``k > R``.  Outcomes must be 0/1.

    Parameters
    ----------
    outcomes : array_like of 0/1, shape (n, R)
    k : int, 1 <= k <= R
    kind : {"pass^k", "pass@k"}

    Returns
    -------
    ndarray of float, shape (n,)

    Examples
    --------
    >>> per_question_pass_k([[1, 1, 0], [1, 1, 1]], 2)        # C(2,2)/C(3,2), C(3,2)/C(3,2)
    array([0.33333333, 1.        ])
    >>> per_question_pass_k([[1, 0, 0], [0, 0, 0]], 2, "pass@k")  # 1 - C(2,2)/C(3,2)
    array([0.66666667, 0.        ])
    """
    y = _outcomes_iv(outcomes)
    if not np.all((y == 0) | (y == 1)):
        raise InputError("outcomes: pass^k and pass@k need 0/1 outcomes (a verdict per try)")
    repeats = y.shape[1]
    if not 1 <= k <= repeats:
        raise InputError(
            f"k: expected 1 <= k <= {repeats} (the repeats per question), found {k}; "
            "no unbiased estimator exists for k > R: run more repeats"
        )
    right = y.sum(axis=1)
    total = comb(repeats, k, exact=False)
    if kind == "pass^k":
        return np.asarray(comb(right, k, exact=False) / total, dtype=float)
    if kind == "pass@k":
        return np.asarray(1.0 - comb(repeats - right, k, exact=False) / total, dtype=float)
    raise InputError(f"kind: expected 'pass^k' or 'pass@k', found {kind!r}")


@dataclass(frozen=True)
class PassKResult:
    """Result of :func:`pass_k`: the run's pass^k or pass@k with the question as the unit.

    Attributes
    ----------
    statistic : float
        Mean over questions of the per-question unbiased estimates.
    confidence_interval : ConfidenceInterval
    k, n_questions, n_repeats : int
    kind : str
        ``"pass^k"`` or ``"pass@k"``.
    per_question : ndarray
    confidence : float
    method : str
    """

    statistic: float
    confidence_interval: ConfidenceInterval
    k: int
    n_questions: int
    n_repeats: int
    kind: str
    per_question: np.ndarray
    confidence: float
    method: str


def pass_k(
    outcomes: Any, k: int, kind: PassKind = "pass^k", *, confidence: float = 0.95
) -> PassKResult:
    """The run's pass^k (or pass@k): the mean of :func:`per_question_pass_k`, with its interval.

    The per-question estimates lie in [0, 1] and are independent across questions, so the
    interval is the one policy's interval of a mean in [0, 1]
    (:func:`~ragaudit.stats.policy.mean_interval`: Clopper-Pearson when every estimate is
    0 or 1, else the betting interval), valid whatever the questions' success rates.

    Examples
    --------
    >>> r = pass_k([[1, 1], [1, 0], [0, 0], [1, 1]], 2)
    >>> r.statistic, r.kind, r.method                   # (1 + 0 + 0 + 1) / 4
    (0.5, 'pass^k', 'Clopper-Pearson exact')
    """
    estimates = per_question_pass_k(outcomes, k, kind)
    confidence = check_confidence(confidence)
    interval = mean_interval(estimates, confidence=confidence)
    n, repeats = np.shape(outcomes)[:2]
    return PassKResult(
        statistic=float(estimates.mean()),
        confidence_interval=interval.confidence_interval,
        k=k,
        n_questions=int(n),
        n_repeats=int(repeats),
        kind=kind,
        per_question=estimates,
        confidence=confidence,
        method=interval.method,
    )


def repeated_mean_interval(outcomes: Any, *, confidence: float = 0.95) -> IntervalResult:
    """The interval of a run's mean score over ``R`` repeats: the question is the unit.

    With ``R >= 2`` the ``nR`` outcomes are clustered by question and the interval is Korn
    and Graubard's beta interval on the cluster-robust variance
    (:func:`~ragaudit.stats.clustered.clustered_rate`), the interval judge repeats already
    get (:func:`~ragaudit.stats.judge_noise.judge_noise`): its variance is that of the ``n``
    question means, never that of ``nR`` draws treated as independent.  With ``R = 1`` it is
    the interval of an unrepeated run (:func:`~ragaudit.stats.policy.mean_interval`).

    On 200 questions x 5 repeats it covers 0.947-0.974 in the three scenarios of
    ``benchmarks/coverage_repeats.py`` (no question effect, a strong one, rare flaky
    questions), where the pooled Wilson interval covers 0.65-0.95 (docs/guide/stats.md); the
    betting interval of the question means covers too, at 1.7-1.9x the width.

    Examples
    --------
    >>> r = repeated_mean_interval([[1, 1, 1], [1, 0, 1], [0, 0, 0], [1, 1, 1]])
    >>> round(r.statistic, 4), r.method
    (0.6667, 'Korn-Graubard beta, questions as clusters')
    >>> repeated_mean_interval([[1], [0], [1]]).method       # R = 1: an unrepeated run
    'Clopper-Pearson exact'
    """
    y = _outcomes_iv(outcomes, levels=(2, 3))
    flat = y.reshape(y.shape[0], -1)
    confidence = check_confidence(confidence)
    if flat.shape[1] == 1:
        return mean_interval(flat[:, 0], confidence=confidence)
    if flat.shape[0] < 2:
        raise InputError("outcomes: expected at least 2 questions for an interval over questions")
    questions = np.repeat(np.arange(flat.shape[0]), flat.shape[1])
    rate = clustered_rate(flat.ravel(), questions, confidence=confidence)
    return IntervalResult(float(flat.mean()), rate.confidence_interval, confidence, REPEATED_METHOD)


@dataclass(frozen=True)
class FlakyQuestion:
    """One question whose repeats disagree: ``right`` of ``repeats`` correct.

    ``disagreement`` is the chance that two different repeats disagree,
    ``2 c (R - c) / (R (R - 1))``: 0 for a stable question, highest at ``c = R / 2``.
    """

    index: int
    right: int
    repeats: int
    rate: float
    confidence_interval: ConfidenceInterval
    disagreement: float


def flaky_questions(outcomes: Any, *, confidence: float = 0.95) -> list[FlakyQuestion]:
    """Questions right on some repeats and wrong on others, most changeable first.

    Each carries ``right/repeats`` with its Clopper-Pearson exact interval; ties in
    disagreement keep question order.

    Examples
    --------
    >>> [(f.index, f.right, round(f.disagreement, 3)) for f in
    ...  flaky_questions([[1, 1, 1, 1], [1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]])]
    [(2, 2, 0.667), (1, 1, 0.5)]
    """
    y = _outcomes_iv(outcomes)
    if not np.all((y == 0) | (y == 1)):
        raise InputError("outcomes: flaky questions need 0/1 outcomes (a verdict per try)")
    confidence = check_confidence(confidence)
    repeats = y.shape[1]
    right = y.sum(axis=1).astype(int)
    flaky = np.flatnonzero((right > 0) & (right < repeats))
    if flaky.size == 0:
        return []
    disagreement = 2 * right[flaky] * (repeats - right[flaky]) / (repeats * (repeats - 1))
    low, high = clopper_pearson_bounds(right[flaky], np.full(flaky.size, repeats), confidence)
    order = np.lexsort((flaky, -disagreement))
    return [
        FlakyQuestion(
            index=int(flaky[i]),
            right=int(right[flaky[i]]),
            repeats=repeats,
            rate=float(right[flaky[i]] / repeats),
            confidence_interval=ConfidenceInterval(float(low[i]), float(high[i])),
            disagreement=float(disagreement[i]),
        )
        for i in order
    ]


@dataclass(frozen=True)
class VarianceBudget:
    r"""Result of :func:`variance_budget`.

    ``components`` maps each source to its variance :math:`\hat\sigma^2` (between questions,
    between generations of one question, between judge calls on one answer); ``shares`` to
    its share of the variance of the run's mean,
    :math:`\sigma^2_q/n + \sigma^2_g/(nR) + \sigma^2_j/(nRJ)`.
    """

    statistic: float
    n_questions: int
    n_repeats: int
    n_judge_calls: int
    components: dict[str, float]
    shares: dict[str, float]
    variance_of_mean: float
    method: str

    def narrowing(self, *, questions: int | None = None, repeats: int | None = None) -> float:
        """Fraction by which the interval's width shrinks with ``questions`` questions and
        ``repeats`` repeats (either left as is when None): ``1 - sqrt(V' / V)``.

        >>> budget = variance_budget([[1, 1], [0, 1], [0, 0], [1, 0]])
        >>> round(budget.narrowing(questions=8), 4)         # 1 - sqrt(1/2)
        0.2929
        """
        n = self.n_questions if questions is None else questions
        r = self.n_repeats if repeats is None else repeats
        projected = _variance_of_mean(self.components, n, r, self.n_judge_calls)
        if self.variance_of_mean == 0:
            return 0.0
        return 1.0 - math.sqrt(projected / self.variance_of_mean)

    def sentence(self) -> str:
        """What the budget means for the next run, in one line."""
        calls = self.n_questions * self.n_repeats
        more_repeats = self.narrowing(repeats=2 * self.n_repeats)
        more_questions = self.narrowing(questions=2 * self.n_questions)
        return (
            f"for the same {calls:,} extra generations, repeating each question "
            f"{2 * self.n_repeats} times instead of {self.n_repeats} would narrow this "
            f"interval by {100 * more_repeats:.0f}%; doubling the questions to "
            f"{2 * self.n_questions:,} by {100 * more_questions:.0f}%"
        )


def _variance_of_mean(components: dict[str, float], n: int, r: int, j: int) -> float:
    return (
        components["questions"] / n
        + components["generations"] / (n * r)
        + components.get("judge", 0.0) / (n * r * j)
    )


def variance_budget(outcomes: Any) -> VarianceBudget:
    r"""Split the variance of a run's mean between questions, generations and judge calls.

    Under the balanced nested random-effects model
    :math:`y_{qgj} = \mu + a_q + b_{qg} + e_{qgj}` (``n`` questions, ``R`` generations each,
    ``J`` judge calls on each answer) the ANOVA mean squares

    .. math:: \mathrm{MS}_q = \frac{RJ \sum_q (\bar y_{q} - \bar y)^2}{n - 1},\quad
              \mathrm{MS}_g = \frac{J \sum_{qg} (\bar y_{qg} - \bar y_q)^2}{n (R - 1)},\quad
              \mathrm{MS}_e = \frac{\sum_{qgj} (y_{qgj} - \bar y_{qg})^2}{n R (J - 1)}

    give :math:`\hat\sigma^2_j = \mathrm{MS}_e`,
    :math:`\hat\sigma^2_g = \max(0, (\mathrm{MS}_g - \mathrm{MS}_e)/J)`,
    :math:`\hat\sigma^2_q = \max(0, (\mathrm{MS}_q - \mathrm{MS}_g)/(RJ))` (Searle, Casella &
    McCulloch 1992, ch. 4; truncated at 0).  With a 2-D ``(n, R)`` array there is no judge
    level: the generation component then holds the judge's noise too.

    Parameters
    ----------
    outcomes : array_like in [0, 1], shape (n, R) or (n, R, J)
        ``n >= 2`` and ``R >= 2``; ``J >= 2`` when given.

    Examples
    --------
    >>> b = variance_budget([[1, 1], [1, 0], [0, 0], [0, 0]])
    >>> b.components["generations"]                     # MS_g = (0.25 + 0.25) / 4
    0.125
    >>> round(b.components["questions"], 6)             # (MS_q - MS_g) / 2, MS_q = 2 * 0.6875 / 3
    0.166667
    >>> round(b.shares["generations"], 4)               # (0.125 / 8) / (MS_q / 8)
    0.2727
    """
    y = _outcomes_iv(outcomes, levels=(2, 3))
    judged = y.ndim == 3
    if not judged:
        y = y[:, :, None]
    n, repeats, calls = y.shape
    if n < 2 or repeats < 2 or (judged and calls < 2):
        raise InputError(
            f"outcomes: expected at least 2 questions and 2 repeats (and 2 judge calls when "
            f"judge calls are given), found shape {y.shape[:3] if judged else y.shape[:2]}"
        )
    components = nested_components(y)
    variance = _variance_of_mean(components, n, repeats, calls)
    parts = {
        "questions": components["questions"] / n,
        "generations": components["generations"] / (n * repeats),
    }
    if calls > 1:
        parts["judge"] = components["judge"] / (n * repeats * calls)
    shares = {name: (part / variance if variance > 0 else 0.0) for name, part in parts.items()}
    return VarianceBudget(
        statistic=float(y.mean()),
        n_questions=n,
        n_repeats=repeats,
        n_judge_calls=calls,
        components=components,
        shares=shares,
        variance_of_mean=variance,
        method="balanced nested random effects, ANOVA estimators (Searle et al. 1992, ch. 4)",
    )


def nested_components(y: np.ndarray) -> dict[str, float]:
    """The ANOVA variance components of a balanced ``(n, R, J)`` array of finite values
    (see :func:`variance_budget`; no range check, so judge-noise differences in [-1, 1] and
    unbounded scores use it too).  ``"judge"`` is present only when ``J >= 2``.

    >>> nested_components(np.array([[1, 1], [1, 0], [0, 0], [0, 0]], float)[:, :, None])
    {'questions': 0.16666666666666666, 'generations': 0.125}
    """
    n, repeats, calls = y.shape
    answer_means = y.mean(axis=2)
    question_means = answer_means.mean(axis=1)
    grand = float(question_means.mean())
    ms_q = repeats * calls * float(np.sum((question_means - grand) ** 2)) / (n - 1)
    ms_g = (
        calls * float(np.sum((answer_means - question_means[:, None]) ** 2)) / (n * (repeats - 1))
    )
    components = {"questions": max(0.0, (ms_q - ms_g) / (repeats * calls))}
    if calls > 1:
        ms_e = float(np.sum((y - answer_means[:, :, None]) ** 2)) / (n * repeats * (calls - 1))
        components["generations"] = max(0.0, (ms_g - ms_e) / calls)
        components["judge"] = ms_e
    else:
        components["generations"] = ms_g
    return components


@dataclass(frozen=True)
class RepeatAllocation:
    """Result of :func:`allocate_repeats`: the questions and repeats that minimise the
    variance of the mean for a budget, and that variance relative to the current design."""

    questions: int
    repeats: int
    calls: int
    variance_of_mean: float
    relative_width: float


def allocation_grid(
    components: dict[str, float],
    calls: int,
    *,
    judge_calls: int = 1,
    questions_available: int | None = None,
    question_cost: float = 0.0,
    max_repeats: int = 50,
) -> list[tuple[int, int, float]]:
    """Every design :func:`allocate_repeats` weighs, ``(questions, repeats, variance)`` for
    ``R = 1..max_repeats`` while ``calls`` pay for a question (same formulas).

    >>> grid = allocation_grid({"questions": 0.2, "generations": 0.1}, 6, questions_available=3)
    >>> [(n, r, round(v, 4)) for n, r, v in grid[:3]]     # 0.2/3 + 0.1/6 = 0.0833 at R = 2
    [(3, 1, 0.1), (3, 2, 0.0833), (2, 3, 0.1167)]
    """
    if calls < 1:
        raise InputError(f"calls: expected a positive number of generations, found {calls}")
    if question_cost < 0:
        raise InputError(f"question_cost: expected >= 0, found {question_cost}")
    grid = []
    for repeats in range(1, max_repeats + 1):
        n = int(calls // (repeats + question_cost))
        n = n if questions_available is None else min(n, questions_available)
        if n < 1:
            break
        grid.append((n, repeats, _variance_of_mean(components, n, repeats, judge_calls)))
    if not grid:
        raise InputError(f"calls: {calls} generations cannot pay for one question")
    return grid


def allocate_repeats(
    budget: VarianceBudget,
    calls: int,
    *,
    questions_available: int | None = None,
    question_cost: float = 0.0,
    max_repeats: int = 50,
) -> RepeatAllocation:
    r"""How many questions and repeats minimise the interval for ``calls`` generations.

    Minimises :math:`V(n, R) = \sigma^2_q/n + \sigma^2_g/(nR) + \sigma^2_j/(nRJ)` over
    ``R = 1..max_repeats`` with :math:`n = \lfloor \text{calls} / (R + c) \rfloor` (``c`` =
    ``question_cost``, the cost of one more labelled question in generations), capped at
    ``questions_available`` (:func:`allocation_grid`).  With free questions more questions
    always win; with costly ones the optimum is near Cochran's
    :math:`R^* = \sqrt{c\,\sigma^2_g / \sigma^2_q}` (1977, section 10.6).  An exhaustive
    search over ``R``: exact, and cheap; ties go to fewer repeats.

    Examples
    --------
    >>> b = variance_budget([[1, 1], [1, 0], [0, 0], [0, 0]])
    >>> allocate_repeats(b, 40, questions_available=10).repeats    # questions run out at 10
    4
    >>> allocate_repeats(b, 40).repeats                             # unlimited free questions
    1
    """
    grid = allocation_grid(
        budget.components, calls, judge_calls=budget.n_judge_calls,
        questions_available=questions_available, question_cost=question_cost,
        max_repeats=max_repeats,
    )  # fmt: skip
    n, repeats, variance = grid[0]
    for point in grid[1:]:
        if point[2] < variance - 1e-15:
            n, repeats, variance = point
    ratio = variance / budget.variance_of_mean if budget.variance_of_mean > 0 else 1.0
    return RepeatAllocation(n, repeats, n * repeats, variance, math.sqrt(ratio))
