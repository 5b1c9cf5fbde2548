"""Prediction-powered intervals: a judged mean corrected by a few human labels (PPI++).

An automatic judge scores every question; people label only some.  The judge-only mean is
biased by exactly the judge's average error; the human-only mean is unbiased but wide.
Prediction-powered inference uses the labelled questions to *measure* the judge's bias and
subtracts it, so the interval is valid however biased the judge is, and narrower than the
human-only one when the judge is informative.  PPI++ adds a power-tuning weight
``lam`` in [0, 1] that lets an uninformative judge fall back to the human-only interval.

* :func:`ppi_mean`: the power-tuned PPI++ interval (equal to ``ppi_py.ppi_mean_ci``);
* :func:`ppi_rate_small_sample`: PPI for 0/1 verdicts with limits that keep their coverage
  with few labels and rates near 1 (Wilson + Tango combined by MOVER);
* :func:`human_only_mean`: the classical interval from the human labels alone;
  :func:`human_only_rate`: the exact (Clopper-Pearson) one for 0/1 labels;
* :func:`judge_only_mean`: the judge's mean over every question, *assuming the judge is
  right* (labelled as such; it is not a valid interval for the true correctness rate).

No file I/O.

References
----------
.. [1] Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023).
   Prediction-powered inference. *Science* 382(6671), 669-674.
.. [2] Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2024). PPI++: Efficient
   prediction-powered inference. arXiv:2311.01453.
.. [3] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640.
.. [4] Zou, G. Y. & Donner, A. (2008). Construction of confidence limits about effect
   measures: a general approach. *Statistics in Medicine* 27(10), 1693-1702.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtri

from ragaudit.exceptions import InputError
from ragaudit.stats._vectors import finite_vector
from ragaudit.stats.intervals import paired_difference_interval, proportion_interval
from ragaudit.stats.policy import is_unit, mean_interval
from ragaudit.stats.resampling import ConfidenceInterval, check_confidence

__all__ = [
    "PPIResult",
    "human_only_mean",
    "human_only_rate",
    "judge_only_mean",
    "ppi_mean",
    "ppi_rate_small_sample",
]


@dataclass(frozen=True)
class PPIResult:
    """A mean with a normal-approximation interval, labelled by how it was obtained.

    Attributes
    ----------
    statistic : float
        Point estimate.
    standard_error : float
    confidence_interval : ConfidenceInterval
        ``statistic ± z_{(1+c)/2} * standard_error``.
    method : {"ppi++", "ppi small-sample", "human only", "human only exact", "judge only"}
    label : str
        What the interval is, in words (shown next to it in reports).
    lam : float
        Power-tuning weight of the judge (``nan`` for the human-only and judge-only intervals).
    n_labeled : int
        Questions with a human label.
    n_unlabeled : int
        Questions with only a judge verdict.
    confidence : float
    """

    statistic: float
    standard_error: float
    confidence_interval: ConfidenceInterval
    method: str
    label: str
    lam: float
    n_labeled: int
    n_unlabeled: int
    confidence: float


def _interval(statistic: float, se: float, confidence: float) -> ConfidenceInterval:
    half = float(ndtri(0.5 + confidence / 2)) * se
    return ConfidenceInterval(statistic - half, statistic + half)


def _tuned_lam(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray) -> float:
    n, big_n = y.size, yhat_unlabeled.size
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var = float(np.var(np.concatenate([yhat, yhat_unlabeled]), ddof=1))
    if var == 0.0:
        return 0.0  # a constant judge carries no information: fall back to the humans
    return float(np.clip(cov / ((1.0 + n / big_n) * var), 0.0, 1.0))


def _binary(values: Any, name: str, minimum: int) -> np.ndarray:
    array = finite_vector(values, name, minimum)
    if not np.all((array == 0) | (array == 1)):
        bad = array[(array != 0) & (array != 1)][0]
        raise InputError(f"{name}: expected 0/1 verdicts, found {bad:g}")
    return array


def _ppi_iv(
    y: Any,
    yhat: Any,
    yhat_unlabeled: Any,
    vector: Callable[[Any, str, int], np.ndarray],
    minimum: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate human labels, the judge on them (same length) and the judge on the rest."""
    y_arr = vector(y, "human labels", minimum)
    yhat_arr = vector(yhat, "judge verdicts on labelled questions", minimum)
    unlabeled = vector(yhat_unlabeled, "judge verdicts on unlabelled questions", 1)
    if yhat_arr.shape != y_arr.shape:
        raise InputError(
            f"judge verdicts on labelled questions: expected one per human label ({y_arr.size}), "
            f"found {yhat_arr.size}"
        )
    return y_arr, yhat_arr, unlabeled


def ppi_mean(
    y: Any,
    yhat: Any,
    yhat_unlabeled: Any,
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> PPIResult:
    r"""Power-tuned prediction-powered (PPI++) interval for a mean.

    ``y`` are human labels of ``n`` questions, ``yhat`` the judge's verdicts on the same
    questions, ``yhat_unlabeled`` the judge's verdicts on ``N`` other questions.  For a
    weight :math:`\lambda`,

    .. math:: \hat\theta_\lambda = \lambda\,\overline{\hat y^{u}}
              + \overline{(y - \lambda \hat y)},\qquad
              \widehat{\mathrm{SE}}^2 = \frac{\lambda^2 \hat\sigma^2_{\hat y^u}}{N}
              + \frac{\hat\sigma^2_{y - \lambda \hat y}}{n}

    (population variances, ``ddof = 0``) and the interval is
    :math:`\hat\theta_\lambda \pm z_{(1+c)/2}\,\widehat{\mathrm{SE}}`.  The second term of
    :math:`\hat\theta_\lambda` is the *rectifier*: the judge's measured bias, removed.
    :math:`\lambda = 1` is the original PPI [1]_, :math:`\lambda = 0` the human-only interval.
    By default :math:`\lambda` minimises the variance [2]_,

    .. math:: \hat\lambda = \mathrm{clip}_{[0,1]}\,
              \frac{\widehat{\mathrm{Cov}}(y, \hat y)}{(1 + n/N)\,
              \widehat{\mathrm{Var}}(\hat y \cup \hat y^u)}

    with the covariance over the labelled questions (``ddof = 0``) and the variance over
    every judge verdict (``ddof = 1``), exactly as ``ppi_py.ppi_mean_ci`` computes it; a
    constant judge gets :math:`\lambda = 0`.

    Parameters
    ----------
    y : array_like of float, shape (n,)
        Human labels (e.g. 0/1 correct); ``n >= 2``.
    yhat : array_like of float, shape (n,)
        The judge's verdicts on the same questions.
    yhat_unlabeled : array_like of float, shape (N,)
        The judge's verdicts on the questions without a human label; ``N >= 1``.
    confidence : float, default 0.95
    lam : float in [0, 1], optional
        Fixed weight instead of the tuned one.

    Returns
    -------
    PPIResult

    References
    ----------
    .. [1] Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023), "Prediction-powered
       inference", *Science* 382, 669-674.
    .. [2] Angelopoulos, Duchi & Zrnic (2024), "PPI++: Efficient prediction-powered
       inference", arXiv:2311.01453, example 6.1 (mean estimation).

    Examples
    --------
    A judge that says "correct" one time too many out of four: the rectifier removes it.

    >>> r = ppi_mean([1, 0, 1, 0], [1, 1, 1, 0], [1, 1, 0, 1, 0, 1, 1, 0], lam=1.0)
    >>> r.statistic             # 5/8 - 1/4
    0.375
    >>> round(r.standard_error, 6)   # sqrt(0.234375 / 8 + 0.1875 / 4)
    0.275993
    """
    confidence = check_confidence(confidence)
    y_arr, yhat_arr, unlabeled = _ppi_iv(y, yhat, yhat_unlabeled, finite_vector, 2)
    if lam is None:
        weight = _tuned_lam(y_arr, yhat_arr, unlabeled)
    elif isinstance(lam, bool) or not 0.0 <= float(lam) <= 1.0:
        raise InputError(f"lam: expected a number between 0 and 1, found {lam!r}")
    else:
        weight = float(lam)
    rectifier = y_arr - weight * yhat_arr
    statistic = float(np.mean(weight * unlabeled) + np.mean(rectifier))
    se = math.sqrt(
        float(np.var(weight * unlabeled)) / unlabeled.size + float(np.var(rectifier)) / y_arr.size
    )
    return PPIResult(
        statistic=statistic,
        standard_error=se,
        confidence_interval=_interval(statistic, se, confidence),
        method="ppi++",
        label=f"prediction-powered (PPI++, lambda {weight:.2f}): judge corrected by human labels",
        lam=weight,
        n_labeled=int(y_arr.size),
        n_unlabeled=int(unlabeled.size),
        confidence=confidence,
    )


def ppi_rate_small_sample(
    y: Any, yhat: Any, yhat_unlabeled: Any, *, confidence: float = 0.95
) -> PPIResult:
    r"""Prediction-powered rate for 0/1 verdicts, with limits that hold for few labels.

    The estimate is the original PPI's (:math:`\lambda = 1`) [1]_: the judge's rate on the
    unlabelled questions plus the rectifier, the human rate minus the judge's rate on the
    labelled ones,

    .. math:: \hat\theta = \hat p_u + \hat d,\qquad \hat p_u = \overline{\hat y^{u}},
              \qquad \hat d = \bar y - \bar{\hat y}.

    :math:`\hat p_u` gets Wilson's interval :math:`[l_1, u_1]`; :math:`\hat d` is a difference
    of two paired rates (human and judge on the same questions) and gets Tango's score
    interval :math:`[l_2, u_2]`.  The two samples are disjoint, so MOVER [2]_ combines them:

    .. math:: L = \hat\theta - \sqrt{(\hat p_u - l_1)^2 + (\hat d - l_2)^2},\qquad
              U = \hat\theta + \sqrt{(u_1 - \hat p_u)^2 + (u_2 - \hat d)^2},

    intersected with [0, 1] (where the rate lies).  With 16 labels and rates 0.8-0.98 the
    normal-theory PPI++ interval covers only 0.3-0.85 (it sees no disagreement and believes
    the judge); this one covers at least 0.95 there (``tests/stats/test_ppi.py``), at the
    price of width.  ``standard_error`` is the equivalent ``(U - L) / (2 z)``.

    Parameters
    ----------
    y : array_like of 0/1, shape (n,)
        Human verdicts; ``n >= 1``.
    yhat : array_like of 0/1, shape (n,)
        The judge's verdicts on the same questions.
    yhat_unlabeled : array_like of 0/1, shape (N,)
        The judge's verdicts on the other questions; ``N >= 1``.
    confidence : float, default 0.95

    Returns
    -------
    PPIResult
        ``method="ppi small-sample"``, ``lam = 1``.

    References
    ----------
    .. [1] Angelopoulos et al. (2023), "Prediction-powered inference", *Science* 382.
    .. [2] Zou & Donner (2008), *Statistics in Medicine* 27, 1693-1702 (MOVER); Newcombe
       (1998) for Wilson; Tango (1998), *Statistics in Medicine* 17, 891-908.

    Examples
    --------
    Judge and humans agree on all 4 labelled questions, so the rectifier is 0, but Tango's
    interval for it is not: the limits stay wide.

    >>> r = ppi_rate_small_sample([1, 1, 0, 1], [1, 1, 0, 1], [1, 1, 1, 0, 1, 1, 1, 1])
    >>> r.statistic, r.confidence_interval.high
    (0.875, 1.0)
    >>> round(r.confidence_interval.low, 3)
    0.275
    """
    confidence = check_confidence(confidence)
    y_arr, yhat_arr, unlabeled = _ppi_iv(y, yhat, yhat_unlabeled, _binary, 1)
    both = int(np.sum((y_arr == 1) & (yhat_arr == 1)))
    human_only = int(np.sum((y_arr == 1) & (yhat_arr == 0)))
    judge_only = int(np.sum((y_arr == 0) & (yhat_arr == 1)))
    neither = y_arr.size - both - human_only - judge_only
    # Tango's interval of p_B - p_A with B = the humans, A = the judge.
    d = paired_difference_interval(
        both, judge_only, human_only, neither, confidence=confidence, method="tango"
    )
    u = proportion_interval(
        int(unlabeled.sum()), unlabeled.size, confidence=confidence, method="wilson"
    )
    p_u, diff = u.statistic, d.statistic
    statistic = p_u + diff
    low = statistic - math.hypot(p_u - u.confidence_interval.low, diff - d.confidence_interval.low)
    high = statistic + math.hypot(
        u.confidence_interval.high - p_u, d.confidence_interval.high - diff
    )
    low, high = max(0.0, low), min(1.0, high)
    return PPIResult(
        statistic=statistic,
        standard_error=(high - low) / (2 * float(ndtri(0.5 + confidence / 2))),
        confidence_interval=ConfidenceInterval(low, high),
        method="ppi small-sample",
        label="prediction-powered, small-sample limits (Wilson + Tango, MOVER; lambda 1)",
        lam=1.0,
        n_labeled=int(y_arr.size),
        n_unlabeled=int(unlabeled.size),
        confidence=confidence,
    )


def human_only_rate(y: Any, *, confidence: float = 0.95) -> PPIResult:
    r"""The exact (Clopper-Pearson) interval from 0/1 human labels alone.

    .. math:: \Big[B^{-1}\big(\tfrac{1-c}{2}; k, n-k+1\big),\
              B^{-1}\big(\tfrac{1+c}{2}; k+1, n-k\big)\Big],\qquad k = \sum_i y_i

    Unlike :func:`human_only_mean` it stays inside [0, 1] and covers at least ``confidence``
    for every true rate, however few the labels.

    References
    ----------
    Clopper, C. J. & Pearson, E. S. (1934). *Biometrika* 26(4), 404-413.

    Examples
    --------
    >>> r = human_only_rate([1, 1, 1, 1])
    >>> r.statistic, round(r.confidence_interval.low, 6), r.confidence_interval.high
    (1.0, 0.397635, 1.0)
    """
    confidence = check_confidence(confidence)
    array = _binary(y, "human labels", 1)
    exact = proportion_interval(int(array.sum()), array.size, confidence=confidence)
    ci = exact.confidence_interval
    return PPIResult(
        statistic=exact.statistic,
        standard_error=(ci.high - ci.low) / (2 * float(ndtri(0.5 + confidence / 2))),
        confidence_interval=ci,
        method="human only exact",
        label="human labels only, Clopper-Pearson exact (unbiased, ignores the judge)",
        lam=math.nan,
        n_labeled=int(array.size),
        n_unlabeled=0,
        confidence=confidence,
    )


def _classical(
    values: Any, confidence: float, name: str, method: str, label: str, *, labeled: bool
) -> PPIResult:
    """The interval both baselines print: the one interval policy's for values in [0, 1].

    0/1 values get Clopper-Pearson's exact interval and other values in [0, 1] the betting
    interval (:func:`~ragaudit.stats.policy.mean_interval`), so a bound never leaves [0, 1]
    (the CLT interval printed [0.883, 1.006] for 54 labels of which 51 were 1); values outside
    [0, 1] keep the CLT interval ``mean ± z * std(ddof=0) / sqrt(n)`` (``ppi_py``'s
    ``classical_mean_ci``).  ``standard_error`` is the CLT one in every case.
    """
    confidence = check_confidence(confidence)
    array = finite_vector(values, name, 2)
    statistic = float(array.mean())
    se = float(np.std(array)) / math.sqrt(array.size)
    interval = _interval(statistic, se, confidence)
    if is_unit(array):
        chosen = mean_interval(array, confidence=confidence)
        interval = chosen.confidence_interval
        label = f"{label}, {chosen.method}"
    return PPIResult(
        statistic=statistic,
        standard_error=se,
        confidence_interval=interval,
        method=method,
        label=label,
        lam=math.nan,
        n_labeled=int(array.size) if labeled else 0,
        n_unlabeled=0 if labeled else int(array.size),
        confidence=confidence,
    )


def human_only_mean(y: Any, *, confidence: float = 0.95) -> PPIResult:
    r"""The interval from the human labels alone, by the one interval policy.

    0/1 labels: Clopper-Pearson exact; other labels in [0, 1]: the betting interval; labels
    outside [0, 1]: the classical CLT interval

    .. math:: \bar y \pm z_{(1+c)/2}\, \hat\sigma_y / \sqrt n \qquad (\text{ddof} = 0),

    the same as ``ppi_py.classical_mean_ci`` (PPI++ with :math:`\lambda = 0`), which can leave
    [0, 1] for a rate.  ``standard_error`` is always the CLT one.

    Parameters
    ----------
    y : array_like of float, shape (n,), n >= 2
    confidence : float, default 0.95

    Returns
    -------
    PPIResult

    References
    ----------
    Angelopoulos et al. (2023), *Science* 382 (the "classical" baseline).

    Examples
    --------
    >>> r = human_only_mean([1, 0, 1, 1])
    >>> r.statistic, round(r.standard_error, 6)   # sqrt(0.1875 / 4)
    (0.75, 0.216506)
    >>> r = human_only_mean([1] * 51 + [0] * 3)   # the CLT interval reached 1.006
    >>> round(r.confidence_interval.high, 4), r.label
    (0.9884, 'human labels only (unbiased, ignores the judge), Clopper-Pearson exact')
    """
    return _classical(
        y, confidence, "human labels", "human only",
        "human labels only (unbiased, ignores the judge)", labeled=True,
    )  # fmt: skip


def judge_only_mean(yhat: Any, *, confidence: float = 0.95) -> PPIResult:
    r"""The judge's mean over every question, *as if the judge were always right*.

    The interval is the one interval policy's, as :func:`human_only_mean` (Clopper-Pearson for
    0/1 verdicts, betting for other values in [0, 1]; else
    :math:`\bar{\hat y} \pm z_{(1+c)/2}\, \hat\sigma_{\hat y} / \sqrt N`).

    This interval covers the judge's own average, not the true correctness rate: it is off by
    the judge's bias, which no amount of questions removes.  Reports label it as such.

    Parameters
    ----------
    yhat : array_like of float, shape (N,), N >= 2
        The judge's verdicts on every question (labelled or not).
    confidence : float, default 0.95

    Returns
    -------
    PPIResult

    References
    ----------
    Angelopoulos et al. (2023), *Science* 382 (the "imputation" baseline, shown to be invalid
    under judge bias).

    Examples
    --------
    >>> judge_only_mean([1, 1, 1, 0]).statistic
    0.75
    """
    return _classical(
        yhat, confidence, "judge verdicts", "judge only",
        "judge only (assumes the judge is always right; biased if it is not)", labeled=False,
    )  # fmt: skip
