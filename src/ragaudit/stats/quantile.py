"""A distribution-free confidence interval for a quantile (p95 latency), from order statistics.

Latency is skewed, heavy-tailed and unknown in shape, so its p95 gets an interval that assumes
nothing about the distribution: two order statistics of the sample.  With :math:`n` independent
draws from a continuous distribution and :math:`\\xi_q` its :math:`q`-quantile, the number of
draws at or below :math:`\\xi_q` is :math:`B \\sim \\mathrm{Binomial}(n, q)`, and for the order
statistics :math:`X_{(1)} \\le \\dots \\le X_{(n)}`

.. math::

    P(X_{(l)} > \\xi_q) = P(B \\le l - 1), \\qquad P(X_{(u)} < \\xi_q) = P(B \\ge u),

so :math:`[X_{(l)}, X_{(u)}]` covers :math:`\\xi_q` with probability
:math:`F(u-1) - F(l-1)`, :math:`F` the binomial CDF (Thompson 1936; Hahn & Meeker 1991,
*Statistical Intervals*, sec. 5.2).  :func:`quantile_interval` takes the equal-tailed choice:
the largest :math:`l` with :math:`F(l-1) \\le \\alpha/2` and the smallest :math:`u` with
:math:`1 - F(u-1) \\le \\alpha/2`.  Its coverage is at least the nominal level for every
continuous distribution (more when ties or discreteness make the ranks coarse); the exact
coverage is returned.

When :math:`n` is too small for a rank to exist, that end is unbounded: at :math:`q = 0.95`
and 95% confidence the upper end needs :math:`0.95^n \\le 0.025`, i.e. :math:`n \\ge 72`
(:func:`min_n_for_upper`).  The interval then says so instead of quoting the sample maximum,
whose coverage would be below the nominal level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import bdtr

from ragaudit.exceptions import InputError
from ragaudit.stats.resampling import ConfidenceInterval, check_confidence

__all__ = ["QuantileInterval", "min_n_for_upper", "quantile_interval"]

METHOD = "order statistics (binomial, distribution-free)"


@dataclass(frozen=True)
class QuantileInterval:
    """A sample quantile with its distribution-free confidence interval.

    Attributes
    ----------
    statistic : float
        The sample quantile (numpy's default linear interpolation, Hyndman & Fan type 7).
    confidence_interval : ConfidenceInterval
        ``[X_(l), X_(u)]``; ``-inf`` / ``inf`` where the sample is too small for that end.
    confidence : float
    coverage : float
        The exact coverage ``F(u-1) - F(l-1)`` of the chosen ranks (>= ``confidence``).
    ranks : tuple of (int or None, int or None)
        ``(l, u)``, 1-based ranks in the sorted sample; None for an unbounded end.
    n : int
    q : float
    method : str
    """

    statistic: float
    confidence_interval: ConfidenceInterval
    confidence: float
    coverage: float
    ranks: tuple[int | None, int | None]
    n: int
    q: float
    method: str = METHOD


def min_n_for_upper(q: float, confidence: float = 0.95) -> int:
    """The smallest sample size whose equal-tailed interval of the ``q``-quantile has an upper end.

    .. math:: n_{\\min} = \\lceil \\log(\\alpha / 2) / \\log q \\rceil

    >>> min_n_for_upper(0.95), min_n_for_upper(0.5)
    (72, 6)
    """
    alpha = 1.0 - check_confidence(confidence)
    return math.ceil(math.log(alpha / 2.0) / math.log(q))


def quantile_interval(
    values: np.ndarray | list[float], q: float = 0.95, confidence: float = 0.95
) -> QuantileInterval:
    """The ``q``-quantile of ``values`` with a distribution-free interval (module docstring).

    Parameters
    ----------
    values : array-like of float
        Independent observations (e.g. one latency per question); NaN are not allowed.
    q : float in (0, 1), default 0.95
    confidence : float in (0, 1), default 0.95

    Returns
    -------
    QuantileInterval

    Examples
    --------
    The median of 1..10: ranks 2 and 9 cover it with probability 1 - 2 * 11/1024.

    >>> r = quantile_interval(np.arange(1.0, 11.0), q=0.5)
    >>> r.statistic, r.confidence_interval, r.ranks, round(r.coverage, 4)
    (5.5, ConfidenceInterval(low=2.0, high=9.0), (2, 9), 0.9785)

    With 60 latencies the p95 has a lower end but no upper one (n < 72):

    >>> r = quantile_interval(np.arange(1.0, 61.0))
    >>> r.confidence_interval.low, r.confidence_interval.high, r.ranks
    (53.0, inf, (53, None))
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise InputError(f"values: expected a non-empty 1-d sequence, found shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise InputError("values: expected finite numbers, found NaN or infinity")
    if not 0.0 < q < 1.0:
        raise InputError(f"q: expected a number in (0, 1), found {q!r}")
    confidence = check_confidence(confidence)
    half = (1.0 - confidence) / 2.0
    n = int(x.size)
    ordered = np.sort(x)
    # F(j) = P(B <= j) for j = 0..n-1: the lower end X_(l) misses with F(l-1), the upper end
    # X_(u) misses with 1 - F(u-1)
    cdf = bdtr(np.arange(n), n, q)
    lower_ok = np.flatnonzero(cdf <= half)  # l - 1 candidates
    upper_ok = np.flatnonzero(1.0 - cdf <= half)  # u - 1 candidates
    low_rank = int(lower_ok[-1]) + 1 if lower_ok.size else None
    high_rank = int(upper_ok[0]) + 1 if upper_ok.size else None
    below = float(cdf[low_rank - 1]) if low_rank is not None else 0.0
    above = float(cdf[high_rank - 1]) if high_rank is not None else 1.0
    return QuantileInterval(
        statistic=float(np.quantile(x, q)),
        confidence_interval=ConfidenceInterval(
            float(ordered[low_rank - 1]) if low_rank is not None else -math.inf,
            float(ordered[high_rank - 1]) if high_rank is not None else math.inf,
        ),
        confidence=confidence,
        coverage=above - below,
        ranks=(low_rank, high_rank),
        n=n,
        q=float(q),
    )
