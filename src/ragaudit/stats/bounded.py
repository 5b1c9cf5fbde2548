"""Intervals for the mean of a bounded score, built to cover when most questions score the same.

Retrieval and judge scores live in [0, 1], and on a good system most questions sit at one value
(recall 1.0; precision@3 = 1/3 when each question has one relevant document).  The few
questions that differ carry all the uncertainty, and a percentile bootstrap cannot see a
deviation that no question in the sample shows: at n = 50 with 1% of questions at recall 0.5
it covers the true mean 40% of the time (zero-width ``[1, 1]`` whenever every question hit),
and a t interval does no better.  Paired differences of two runs have the same shape around
0: most questions do not change.

The interval here treats the mean as ``centre + E[up] - E[down]``, where ``centre`` is the
most common value (0 for a paired difference), ``up = max(x - centre, 0)`` and
``down = max(centre - x, 0)``, each rescaled to [0, 1] by the room it has:

1. Each side is a mean of [0, 1] values that are mostly 0, like a rare-event rate.  Its
   interval is Clopper-Pearson's with an effective sample size (Korn & Graubard 1998):
   ``n_eff = m (1 - m) / v`` with ``m`` the side's mean and ``v`` the variance of that mean,
   degrees-of-freedom adjusted by ``(z / t_{n-1})^2``; ``k_eff = m n_eff`` successes.  For 0/1
   values ``n_eff = n`` (before the adjustment) and it is the exact binomial interval; a side
   with small deviations gets a proportionally larger ``n_eff``.
2. A side where no question deviates gets the exact bound on what ``n`` clean questions
   allow: the share of deviating questions is below ``p0 = 1 - (alpha/2)^(1/n)``
   (Clopper-Pearson for 0 of ``n``, the exact "rule of three"), and a deviation can be as
   large as the room on that side.  So a sample where every value is equal still gets an
   interval of honest width, never the zero-width ``[v, v]``.
3. The two sides are combined with MOVER (Zou & Donner 2008; the construction behind
   Newcombe's 1998 hybrid interval) using their sample correlation.

Measured coverage (nominal 95%, 4,000 seeded datasets, ``tests/stats/test_coverage.py`` and
``docs/guide/stats.md``): 0.98-0.99 for recall-like means near 1 at n = 50 where the
percentile bootstrap covers 0.23-0.78, and 0.95-0.97 on dense scores (nDCG, precision) where
it matches the t interval's width.  Its one known weak spot is a mean near 1 whose rare
deviations vary widely in size (a faithfulness score with 5% of questions between 0 and 0.8
covered 0.91 at n = 50): a handful of deviations cannot show how large the unseen ones are.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import betaincinv, ndtri, stdtrit

from ragaudit.exceptions import InputError
from ragaudit.stats.intervals import IntervalResult
from ragaudit.stats.resampling import ConfidenceInterval, check_confidence

__all__ = [
    "METHOD",
    "bounded_mean_bounds",
    "bounded_mean_interval",
    "mode",
    "paired_mean_interval",
]

#: The name every printed row gives this interval.
METHOD = "Korn-Graubard MOVER"

# Values closer than this (relative to the range) count as equal: a paired difference such as
# 0.5 - 1/3 and 1/3 - 1/6 differs in the last bits.
_TOLERANCE = 1e-9
# Beyond this effective sample size the beta quantiles are a normal interval anyway.
_MAX_N_EFF = 1e12


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


def bounded_mean_bounds(
    x: np.ndarray, centre: np.ndarray, low: float, high: float, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised kernel of :func:`bounded_mean_interval`: one interval per row of ``x``.

    ``x`` has shape ``(rows, n)`` with values in ``[low, high]``; ``centre`` one value per row.
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


def _check_values(values: Sequence[float] | np.ndarray, low: float, high: float) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise InputError(f"values: expected a non-empty 1-D sequence, found shape {x.shape}")
    if not low < high:
        raise InputError(f"bounds: expected low < high, found ({low!r}, {high!r})")
    tolerance = 1e-9 * (high - low)
    bad = np.flatnonzero(~((x >= low - tolerance) & (x <= high + tolerance)))
    if bad.size:
        raise InputError(
            f"values: expected numbers in [{low:g}, {high:g}], found {float(x[bad[0]])!r} at "
            f"position {int(bad[0])}; pass bounds=(low, high) for another scale"
        )
    return np.clip(x, low, high)


def mode(x: np.ndarray, scale: float) -> float:
    """The most common value of ``x`` (the smallest on ties), the default centre.

    Values closer than ``1e-9 * scale`` (``scale``: the width of the range) count as one.

    Examples
    --------
    >>> abs(mode(np.array([0.5 - 1 / 3, 1 / 3 - 1 / 6, 0.0]), 2.0) - 1 / 6) < 1e-9
    True
    """
    values, counts = np.unique(np.round(x / (_TOLERANCE * scale)), return_counts=True)
    return float(values[int(np.argmax(counts))] * _TOLERANCE * scale)


def bounded_mean_interval(
    values: Sequence[float] | np.ndarray,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    centre: float | None = None,
    confidence: float = 0.95,
) -> IntervalResult:
    r"""Confidence interval for the mean of a score bounded in ``bounds`` (see the module doc).

    With ``c`` the centre (default: the most common value, smallest on ties), ``R_+ = high - c``,
    ``R_- = c - low``, ``u_i = max(x_i - c, 0) / R_+`` and ``d_i = max(c - x_i, 0) / R_-``:

    .. math::

        \hat\mu = c + R_+\bar u - R_-\bar d, \qquad
        L = \hat\mu - \sqrt{(R_+(\bar u - l_u))^2 + (R_-(h_d - \bar d))^2
                           - 2\rho R_+^2 \ldots}

    i.e. MOVER (Zou & Donner 2008) over the two sides' intervals ``[l_u, h_u]``,
    ``[l_d, h_d]``; each side is Clopper-Pearson with the Korn-Graubard effective sample size
    :math:`n^* = \bar y(1-\bar y)/\widehat{\mathrm{Var}}(\bar y)\cdot(z/t_{n-1})^2`, and a
    side with no deviation gets ``[0, 1 - (alpha/2)^{1/n}]``.

    Parameters
    ----------
    values : sequence of float
        Per-question scores, all within ``bounds``.
    bounds : (float, float), default (0, 1)
        The range the score can take (a difference of two [0, 1] scores: (-1, 1)).
    centre : float, optional
        The value most questions share; default the sample mode.
    confidence : float, default 0.95

    Returns
    -------
    IntervalResult
        ``method`` is ``"Korn-Graubard MOVER"``.

    References
    ----------
    Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small
    expected number of positive counts estimated from survey data. *Survey Methodology* 24,
    193-201.
    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits
    illustrated in the case of the binomial. *Biometrika* 26, 404-413.
    Zou, G. Y. & Donner, A. (2008). Construction of confidence limits about effect measures:
    a general approach. *Statistics in Medicine* 27, 1693-1702.
    Newcombe, R. G. (1998). Improved confidence intervals for the difference between binomial
    proportions based on paired data. *Statistics in Medicine* 17, 2635-2650.

    Examples
    --------
    Every one of 50 questions scored 1: the interval is Clopper-Pearson's for 50 of 50, not
    the zero-width ``[1, 1]`` of a bootstrap.

    >>> r = bounded_mean_interval([1.0] * 50)
    >>> round(r.confidence_interval.low, 4), r.confidence_interval.high
    (0.9289, 1.0)

    Forty-nine at 1 and one at 0.5 (mean 0.99):

    >>> r = bounded_mean_interval([1.0] * 49 + [0.5])
    >>> round(r.statistic, 3), [round(v, 3) for v in vars(r.confidence_interval).values()]
    (0.99, [0.944, 1.0])

    Every value 0.5: the share of questions elsewhere is below 1 - 0.025^(1/50) = 0.071.

    >>> [round(v, 3) for v in vars(bounded_mean_interval([0.5] * 50).confidence_interval).values()]
    [0.464, 0.536]
    """
    low, high = (float(b) for b in bounds)
    x = _check_values(values, low, high)
    confidence = check_confidence(confidence)
    c = mode(x, high - low) if centre is None else float(centre)
    if not low <= c <= high:
        raise InputError(f"centre: expected a value in [{low:g}, {high:g}], found {centre!r}")
    lower, upper = bounded_mean_bounds(x[None, :], np.array([c]), low, high, confidence)
    return IntervalResult(
        statistic=float(np.mean(x)),
        confidence_interval=ConfidenceInterval(float(lower[0]), float(upper[0])),
        confidence=confidence,
        method=METHOD,
    )


def paired_mean_interval(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    confidence: float = 0.95,
) -> IntervalResult:
    r"""Interval for the mean paired difference ``mean(b - a)`` of a score bounded in ``bounds``.

    :func:`bounded_mean_interval` of :math:`d_i = b_i - a_i` on ``(low - high, high - low)``,
    centred at the most common difference: 0 when most questions did not change (then the
    questions where B gained and those where A gained are the two sides), or a shift every
    question shares (precision@k when k doubles).  No question favouring A still leaves room for
    one in the population (``1 - (alpha/2)^{1/n}`` of the questions), so the interval never
    ends at exactly 0 the way a bootstrap does.

    Parameters
    ----------
    a, b : sequence of float
        Per-question scores of runs A and B on the same questions.
    bounds : (float, float), default (0, 1)
        Range of the score.
    confidence : float, default 0.95

    Returns
    -------
    IntervalResult

    References
    ----------
    See :func:`bounded_mean_interval` (Korn & Graubard 1998; Zou & Donner 2008).

    Examples
    --------
    One of 42 questions gained 0.5, none lost (the bootstrap gives ``[+0.000, +0.036]``):

    >>> r = paired_mean_interval([0.5] + [1.0] * 41, [1.0] * 42)
    >>> round(r.statistic, 4), [round(v, 3) for v in vars(r.confidence_interval).values()]
    (0.0119, [-0.073, 0.067])
    """
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape:
        raise InputError(
            f"expected two sequences of equal length, found {a_arr.size} and {b_arr.size}"
        )
    low, high = (float(v) for v in bounds)
    _check_values(a_arr, low, high)
    _check_values(b_arr, low, high)
    width = high - low
    return bounded_mean_interval(b_arr - a_arr, bounds=(-width, width), confidence=confidence)
