"""A mean's interval when questions come in clusters: betting over whole clusters.

Questions that share a source document succeed or fail together, so ``n`` questions carry the
information of fewer.  When the clusters (documents, tags) are an independent sample of
clusters, the cluster means :math:`\\bar y_g` are independent draws, whatever happens inside a
cluster; this module bets over them as :mod:`ragaudit.stats.bounded` bets over questions
(Waudby-Smith & Ramdas 2024), so the interval covers for *every* distribution of scores in
``bounds`` and every intra-cluster correlation, with nothing estimated from few clusters (no
design effect, no degrees of freedom).

For a candidate mean ``m`` (scores rescaled to [0, 1]) the capital is

.. math:: K^+(m) = \\frac1{2C} \\sum_c \\sum_{s \\in \\{s^{(1)}, s^{(2)}\\}} \\prod_g
          \\bigl(1 + c\\, s_g (\\bar y_g / m - 1)\\bigr)

with two bet scales per cluster: in proportion to its size, :math:`s^{(1)}_g = n_g / \\max_h
n_h`, and one equal bet per cluster, :math:`s^{(2)}_g = 1`; :math:`K^-` is the same on
:math:`1 - \\bar y_g` against :math:`1 - m`.  Given the sizes,
each factor has expectation 1 when the clusters' expected mean is ``m`` (cluster size does not
predict a cluster's mean: the usual assumption of a cluster sample), so
:math:`\\{m : K^\\pm(m) < 2/\\alpha\\}` covers with probability at least :math:`1 - \\alpha`.
Bets by size are flat to first order at the question-level mean
:math:`\\sum_g n_g \\bar y_g / \\sum_g n_g` and give the large clusters their share; equal
bets win fastest when every cluster sits at one end (54 of 54 right in 14 sources of unequal
size: size bets alone proved a rate above 0.51, the mixture above 0.705).
A mixture of capitals of expectation 1 has expectation 1, so both together stay valid.  With
equal sizes the two scales coincide and it is
:func:`~ragaudit.stats.bounded.bounded_mean_interval` of the ``G`` cluster means.  The bet
grid is :func:`~ragaudit.stats.bounded.bet_fractions` of ``G``; the capital is a product over
clusters, so the interval does not depend on their order.

Every value equal (54 of 54 questions right, 14 sources): :math:`K^+(m) \\approx m^{-G}` at
the largest equal bets, so the lower end is near :math:`(\\alpha/2)^{1/G}`, Clopper-Pearson's
on ``G`` draws (0.705 against 0.768 for the demo's 14 sources; the mixture over bets costs a
little): one independent draw per cluster, which is all such a sample can prove.

Coverage on clustered RAG-like data (8-30 clusters, intra-cluster correlation 0-0.5, rates and
scores 0.8-0.99): ``benchmarks/coverage_clustered.py``, ``tests/stats/test_coverage_clustered.py``.

References
----------
Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by betting.
*Journal of the Royal Statistical Society Series B* 86(1), 1-27 (arXiv:2010.09686).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragaudit.exceptions import InputError
from ragaudit.stats.bounded import _bisect_lower, _check_values, bet_fractions
from ragaudit.stats.intervals import IntervalResult
from ragaudit.stats.resampling import ConfidenceInterval, check_confidence

__all__ = ["METHOD", "cluster_mean_bounds", "cluster_mean_interval"]

#: The name every printed row gives this interval.
METHOD = "cluster betting (Waudby-Smith-Ramdas over clusters)"


def _log_capital(y: np.ndarray, s: np.ndarray, m: np.ndarray, bets: np.ndarray) -> np.ndarray:
    """``log K+(m)`` per row: cluster means ``y`` (rows, G), bet scales ``s`` (schemes, rows,
    G); the capital is the mean over every (bet fraction, scheme) pair."""
    step = y / m[:, None] - 1.0
    scaled = bets[:, None, None, None] * s[None]  # (C, schemes, rows, G)
    per_bet = np.log1p(scaled * step).sum(axis=-1).reshape(-1, y.shape[0])
    top = per_bet.max(axis=0)
    return top + np.log(np.exp(per_bet - top).mean(axis=0))


def _lower(y: np.ndarray, s: np.ndarray, threshold: float) -> np.ndarray:
    """Per row: the smallest ``m`` that ``K+(m) >= threshold`` rejects not (the bisection of
    :mod:`ragaudit.stats.bounded`)."""
    bets = bet_fractions(y.shape[1])
    return _bisect_lower(lambda m: _log_capital(y, s, m, bets), y.shape[0], threshold)


def cluster_mean_bounds(
    sums: np.ndarray, sizes: np.ndarray, low: float, high: float, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised kernel of :func:`cluster_mean_interval`: one interval per row.

    ``sums`` and ``sizes`` have shape ``(rows, G)``: each cluster's sum of values and number
    of questions (every size at least 1).
    """
    sums = np.atleast_2d(np.asarray(sums, dtype=float))
    sizes = np.atleast_2d(np.asarray(sizes, dtype=float))
    y = np.clip((sums / sizes - low) / (high - low), 0.0, 1.0)
    s = sizes / sizes.max(axis=1, keepdims=True)
    # Sum in a fixed order (by value, then size) so the digits do not depend on cluster order.
    order = np.lexsort((s, y), axis=1)
    y, s = np.take_along_axis(y, order, 1), np.take_along_axis(s, order, 1)
    scales = np.stack([s, np.ones_like(s)])  # by size, and one bet per cluster
    threshold = float(np.log(2.0 / (1.0 - confidence)))
    lower = _lower(y, scales, threshold)
    upper = 1.0 - _lower(1.0 - y, scales, threshold)
    return low + (high - low) * lower, low + (high - low) * upper


def cluster_mean_interval(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    confidence: float = 0.95,
) -> IntervalResult:
    r"""Interval for the mean of clustered scores in ``bounds`` (see the module doc).

    Parameters
    ----------
    values : sequence of float, shape (n,)
        Per-question scores within ``bounds`` (0/1 verdicts, nDCG, a paired difference on
        ``(-1, 1)``).
    clusters : sequence, shape (n,)
        Each question's cluster label; at least 2 clusters.
    bounds : (float, float), default (0, 1)
    confidence : float, default 0.95

    Returns
    -------
    IntervalResult
        ``statistic`` is the question-level mean; ``method`` is :data:`METHOD`.

    References
    ----------
    Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
    betting. *JRSS-B* 86(1), 1-27.

    Examples
    --------
    Every one of 8 questions right in 4 clusters: the lower end is where the capital of the
    bets on the 4 cluster means, ``mean_c (1 + c (1/m - 1))**4``, reaches ``2/alpha = 40``
    (Clopper-Pearson on 4 draws would give ``0.025 ** (1 / 4) = 0.398``):

    >>> import numpy as np
    >>> from ragaudit.stats.bounded import _bisect_lower, _check_values, bet_fractions
    >>> r = cluster_mean_interval([1] * 8, list("aabbccdd"))
    >>> low = r.confidence_interval.low
    >>> round(low, 3), r.confidence_interval.high
    (0.362, 1.0)
    >>> round(float(np.mean((1 + bet_fractions(4) * (1 / low - 1)) ** 4)), 6)
    40.0

    Equal cluster sizes: the betting interval of the cluster means.

    >>> from ragaudit.stats.bounded import bounded_mean_interval
    >>> y = [1, 1, 1, 0, 1, 1, 0.5, 1]
    >>> a = cluster_mean_interval(y, list("aabbccdd")).confidence_interval
    >>> a == bounded_mean_interval([1, 0.5, 1, 0.75]).confidence_interval
    True
    """
    confidence = check_confidence(confidence)
    low, high = (float(b) for b in bounds)
    x = _check_values(values, low, high)  # the same check (and rounding slack) as bounded's
    labels = np.asarray(clusters)
    if labels.shape != x.shape:
        raise InputError(
            f"clusters: expected one label per value ({x.size}), found shape {labels.shape}"
        )
    _, codes = np.unique(labels, return_inverse=True)
    codes = codes.reshape(-1)
    n_clusters = int(codes.max()) + 1
    if n_clusters < 2:
        raise InputError("clusters: expected at least 2 clusters, found 1")
    sums = np.bincount(codes, weights=x, minlength=n_clusters)
    sizes = np.bincount(codes, minlength=n_clusters).astype(float)
    lo, hi = cluster_mean_bounds(sums[None], sizes[None], low, high, confidence)
    mean = float(x.mean())
    return IntervalResult(
        statistic=mean,
        confidence_interval=ConfidenceInterval(min(float(lo[0]), mean), max(float(hi[0]), mean)),
        confidence=confidence,
        method=METHOD,
    )
