"""Cluster-robust intervals for means and paired differences of correlated questions.

Golden-set questions that share a source document, a tag or a template are not independent
draws: a system that misreads one document tends to miss every question about it.  The naive
standard error ``s / sqrt(n)`` then understates the uncertainty.  This module gives

* :func:`clustered_mean` and :func:`clustered_paired_difference`: the CR1 cluster-robust
  standard error (the Liang-Zeger sandwich with Stata's small-sample factor), a ``t`` interval
  with ``G - 1`` degrees of freedom, the number of clusters and the design effect;
* :func:`clustered_rate`: the same variance for a rate or a score in [0, 1], turned into an
  interval that stays inside [0, 1] and keeps its coverage near 1 (Korn & Graubard's beta
  interval on the effective number of questions);
* :func:`cluster_bootstrap`: the cluster bootstrap (resample whole clusters with replacement,
  keeping each question's pair of values together), percentile interval, seeded.

What ``--cluster-by`` prints for values in [0, 1] is neither of the last two intervals but
:func:`ragaudit.stats.cluster_betting.cluster_mean_interval` (betting over clusters): with 8-30
clusters, intra-cluster correlation up to 0.5 and rates near 1, the Korn-Graubard interval
covered as little as 0.91 and the cluster bootstrap 0.15 (mostly the zero-width ``[1, 1]``),
the betting interval at least 0.996 (``benchmarks/coverage_clustered.py``).  The CR1 standard
error and design effect are still what the report prints beside it.

No file I/O: the caller maps questions to cluster labels (``ragaudit compare --cluster-by``).

References
----------
.. [1] Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust
   inference. *Journal of Human Resources* 50(2), 317-372.
.. [2] Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
   evaluations. arXiv:2411.00640.
.. [3] Liang, K.-Y. & Zeger, S. L. (1986). Longitudinal data analysis using generalized linear
   models. *Biometrika* 73(1), 13-22.
.. [4] Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small
   expected number of positive counts estimated from survey data. *Survey Methodology* 24(2),
   193-201.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.special import stdtrit

from ragaudit.exceptions import InputError
from ragaudit.stats._vectors import finite_vector
from ragaudit.stats.intervals import clopper_pearson_bounds
from ragaudit.stats.resampling import (
    ConfidenceInterval,
    SeedLike,
    _paired_differences,
    as_generator,
    bootstrap_means,
    check_confidence,
    check_count,
)

__all__ = [
    "ClusterBootstrapResult",
    "ClusteredResult",
    "cluster_bootstrap",
    "clustered_mean",
    "clustered_paired_difference",
    "clustered_rate",
]

# An interval is "widened" by clustering when its half-width grows by more than this share.
WIDENING_THRESHOLD = 0.10


@dataclass(frozen=True)
class ClusteredResult:
    """Result of :func:`clustered_mean` and :func:`clustered_paired_difference`.

    Attributes
    ----------
    statistic : float
        The mean (or the mean paired difference ``mean(b - a)``).
    standard_error : float
        CR1 cluster-robust standard error.
    confidence_interval : ConfidenceInterval
        ``statistic ± t_{G-1} * standard_error``.
    naive_standard_error : float
        ``s / sqrt(n)`` with ``ddof = 1``: the standard error that treats questions as independent.
    naive_confidence_interval : ConfidenceInterval
        ``statistic ± t_{n-1} * naive_standard_error``.
    n : int
        Questions.
    n_clusters : int
        Clusters ``G``.
    design_effect : float
        ``(standard_error / naive_standard_error)**2``; 1 means clustering changes nothing,
        ``n / design_effect`` is the effective number of independent questions.
    widening : float
        Relative growth of the interval, ``width / naive width - 1``.
    confidence : float
    method : str
        How the interval was formed: ``"t"`` (``statistic ± t_{G-1} SE``) or
        ``"korn-graubard"`` (:func:`clustered_rate`).
    effective_n : float or None
        The effective number of questions behind a ``"korn-graubard"`` interval.
    """

    statistic: float
    standard_error: float
    confidence_interval: ConfidenceInterval
    naive_standard_error: float
    naive_confidence_interval: ConfidenceInterval
    n: int
    n_clusters: int
    design_effect: float
    widening: float
    confidence: float
    method: str = "t"
    effective_n: float | None = None

    @property
    def widened(self) -> bool:
        """Whether clustering widens the interval by more than 10%."""
        return self.widening > WIDENING_THRESHOLD


@dataclass(frozen=True)
class ClusterBootstrapResult:
    """Result of :func:`cluster_bootstrap`.

    Attributes
    ----------
    statistic : float
        Observed mean (or mean paired difference).
    confidence_interval : ConfidenceInterval
        Percentile interval of the resampled statistics.
    standard_error : float
        Standard deviation of the bootstrap distribution.
    n_resamples : int
    n_clusters : int
    confidence : float
    """

    statistic: float
    confidence_interval: ConfidenceInterval
    standard_error: float
    n_resamples: int
    n_clusters: int
    confidence: float


def _clustered_iv(
    values: Any, clusters: Sequence[Any] | np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray, int, float]:
    """Validate; return values, integer cluster codes ``0..G-1``, ``G`` and the confidence."""
    confidence = check_confidence(confidence)
    y = finite_vector(values, "values")
    labels = np.asarray(clusters)
    if labels.shape != y.shape:
        raise InputError(
            f"clusters: expected one label per value ({y.size}), found shape {labels.shape}"
        )
    if y.size < 2:
        raise InputError(f"values: expected at least 2 questions, found {y.size}")
    _, codes = np.unique(labels, return_inverse=True)
    codes = codes.reshape(-1)
    n_clusters = int(codes.max()) + 1
    if n_clusters < 2:
        raise InputError(
            "clusters: expected at least 2 clusters, found 1 (every question in the same "
            "cluster: no between-cluster variation to estimate)"
        )
    return y, codes, n_clusters, confidence


def _cr1(y: np.ndarray, codes: np.ndarray, n_clusters: int, confidence: float) -> ClusteredResult:
    n = y.size
    mean = float(y.mean())
    residuals = y - mean
    # Sandwich for an intercept-only OLS: (X'X)^-1 = 1/n, meat = sum_g (sum_{i in g} u_i)^2.
    cluster_sums = np.bincount(codes, weights=residuals, minlength=n_clusters)
    correction = n_clusters / (n_clusters - 1)  # (n - 1)/(n - k) = 1 with k = 1 regressor
    se = float(np.sqrt(correction * np.sum(cluster_sums**2)) / n)
    naive_se = float(np.sqrt(np.sum(residuals**2) / (n - 1) / n))
    tail = 0.5 + confidence / 2
    half = float(stdtrit(n_clusters - 1, tail)) * se
    naive_half = float(stdtrit(n - 1, tail)) * naive_se
    if naive_se > 0:
        design_effect = (se / naive_se) ** 2
        widening = half / naive_half - 1.0
    else:  # every value equal: no spread, nothing to widen
        design_effect, widening = 1.0, 0.0
    return ClusteredResult(
        statistic=mean,
        standard_error=se,
        confidence_interval=ConfidenceInterval(mean - half, mean + half),
        naive_standard_error=naive_se,
        naive_confidence_interval=ConfidenceInterval(mean - naive_half, mean + naive_half),
        n=n,
        n_clusters=n_clusters,
        design_effect=float(design_effect),
        widening=float(widening),
        confidence=confidence,
    )


def clustered_mean(
    values: Any, clusters: Sequence[Any] | np.ndarray, *, confidence: float = 0.95
) -> ClusteredResult:
    r"""Mean with a CR1 cluster-robust standard error and ``t_{G-1}`` interval.

    With residuals :math:`u_i = y_i - \bar y`, cluster sums :math:`U_g = \sum_{i \in g} u_i`
    and :math:`G` clusters,

    .. math:: \widehat{\mathrm{Var}}_{CR1}(\bar y) = \frac{G}{G-1}\,\frac{1}{n^2}
              \sum_{g=1}^{G} U_g^2,
              \qquad \bar y \pm t_{G-1,\,(1+c)/2}\ \widehat{\mathrm{SE}}_{CR1}

    This is the sandwich :math:`(X'X)^{-1} (\sum_g X_g' u_g u_g' X_g) (X'X)^{-1}` of an
    intercept-only regression with the factor :math:`\frac{G}{G-1}\frac{n-1}{n-k}` (here
    :math:`k = 1`), i.e. ``statsmodels`` OLS with ``cov_type="cluster"`` [1]_.  With every
    question its own cluster it is exactly the naive :math:`s/\sqrt n`.  The design effect is
    :math:`\mathrm{SE}_{CR1}^2 / (s^2/n)`; for equal clusters of size :math:`m` and
    intra-cluster correlation :math:`\rho` it is about :math:`1 + (m - 1)\rho` [2]_.

    Parameters
    ----------
    values : array_like of float, shape (n,)
        Per-question values.
    clusters : array_like, shape (n,)
        Cluster label of each question (any sortable labels).  At least 2 clusters.
    confidence : float, default 0.95

    Returns
    -------
    ClusteredResult

    References
    ----------
    .. [1] Cameron & Miller (2015), "A practitioner's guide to cluster-robust inference",
       *J. Human Resources* 50(2), eqs. (11), (12) and section VI.C (``G - 1`` df).
    .. [2] Miller (2024), "Adding error bars to evals", arXiv:2411.00640, section 2.2.

    Examples
    --------
    Two clusters that each move together: the clustered standard error is larger.

    >>> r = clustered_mean([1, 1, 1, 0, 0, 0], ["a", "a", "a", "b", "b", "b"])
    >>> r.statistic, r.n_clusters
    (0.5, 2)
    >>> r.standard_error   # sqrt(2/1 * (1.5**2 + 1.5**2)) / 6
    0.5
    >>> round(r.naive_standard_error, 6)   # sqrt(6 * 0.25 / 5 / 6)
    0.223607
    >>> round(r.design_effect, 9)   # 0.5**2 / 0.05
    5.0

    Singleton clusters give back the naive standard error:

    >>> r = clustered_mean([3.0, 1.0, 2.0], ["x", "y", "z"])
    >>> round(r.standard_error, 12) == round(r.naive_standard_error, 12)
    True
    """
    y, codes, n_clusters, confidence = _clustered_iv(values, clusters, confidence)
    return _cr1(y, codes, n_clusters, confidence)


def clustered_paired_difference(
    a: Any, b: Any, clusters: Sequence[Any] | np.ndarray, *, confidence: float = 0.95
) -> ClusteredResult:
    r"""Mean paired difference ``mean(b - a)`` with a CR1 cluster-robust interval.

    The pairing is kept: the differences :math:`d_i = b_i - a_i` are formed question by
    question and :func:`clustered_mean` is applied to them, clustering by the questions'
    cluster labels,

    .. math:: \widehat{\mathrm{Var}}_{CR1}(\bar d) = \frac{G}{G-1}\,\frac{1}{n^2}
              \sum_{g=1}^{G} \Big(\sum_{i \in g} (d_i - \bar d)\Big)^2

    the same as ``statsmodels`` OLS of :math:`d` on a constant with ``cov_type="cluster"``.
    (The stacked regression of both systems' scores on a system dummy gives the same sandwich
    times :math:`(2n-1)/(2n-2)`, its own ``(N-1)/(N-k)`` factor.)

    Parameters
    ----------
    a, b : array_like of float, shape (n,)
        Per-question values of systems A and B, aligned.
    clusters : array_like, shape (n,)
    confidence : float, default 0.95

    Returns
    -------
    ClusteredResult

    References
    ----------
    Cameron & Miller (2015), *J. Human Resources* 50(2); Miller (2024), arXiv:2411.00640,
    section 4 (paired differences, clustered).

    Examples
    --------
    >>> r = clustered_paired_difference([0, 0, 1, 1], [1, 1, 1, 1], ["s1", "s1", "s2", "s2"])
    >>> r.statistic, r.standard_error   # d = 1, 1, 0, 0: sqrt(2/1 * (1**2 + 1**2)) / 4
    (0.5, 0.5)
    """
    diffs = _paired_differences(np.asarray(a), np.asarray(b))
    return clustered_mean(diffs, clusters, confidence=confidence)


def clustered_rate(
    values: Any, clusters: Sequence[Any] | np.ndarray, *, confidence: float = 0.95
) -> ClusteredResult:
    r"""Mean of values in [0, 1] (a rate, or a score such as nDCG) with a clustered interval.

    The variance is the CR1 variance of :func:`clustered_mean`; the interval is Korn and
    Graubard's [1]_: a Clopper-Pearson (beta) interval for :math:`\hat p = \bar y` computed as
    if from the *effective* number of questions

    .. math:: n_0 = \frac{n\,\hat p(1-\hat p)}{\hat\sigma^2},\qquad
              n^* = \min\Big(n_0,\ \frac{n_0}{\mathrm{deff}}
              \Big(\frac{t_{n-1,\,(1+c)/2}}{t_{G-1,\,(1+c)/2}}\Big)^2\Big),

    .. math:: \Big[B^{-1}\big(\tfrac{1-c}{2};\ n^*\hat p,\ n^*(1-\hat p)+1\big),\
              B^{-1}\big(\tfrac{1+c}{2};\ n^*\hat p+1,\ n^*(1-\hat p)\big)\Big]

    with :math:`\hat\sigma^2 = \frac1n\sum_i (y_i-\hat p)^2` (so :math:`n_0 = n` for 0/1
    values, more for scores strictly inside (0, 1): the quasi-binomial effective size),
    :math:`\mathrm{deff} = \mathrm{SE}_{CR1}^2 / (s^2/n)` truncated at 1 as usual for this
    interval, and :math:`B^{-1}` the beta quantile (bound 0 or 1 at the edges).  When every
    value is equal the design effect cannot be estimated and :math:`n^* = G`, the worst case
    (each cluster one independent draw).  The naive interval is the same formula with
    :math:`n^* = n_0`: for 0/1 values exactly Clopper-Pearson.  Unlike the ``t`` interval it
    never leaves [0, 1] and keeps its coverage for rates near 1, where the ``t`` interval's
    falls to 0.85-0.9 (``tests/stats/test_clustered.py``).

    Parameters
    ----------
    values : array_like of float in [0, 1], shape (n,)
    clusters : array_like, shape (n,)
        Cluster label of each question; at least 2 clusters.
    confidence : float, default 0.95

    Returns
    -------
    ClusteredResult
        ``method="korn-graubard"``; ``standard_error`` and ``design_effect`` as in
        :func:`clustered_mean`; ``widening`` compares the widths of the two beta intervals.

    References
    ----------
    .. [1] Korn & Graubard (1998), *Survey Methodology* 24(2), 193-201 (the degrees-of-freedom
       adjusted effective sample size; R's ``survey::svyciprop(method="beta")``).

    Examples
    --------
    Every question right, 4 clusters: the worst case, a Clopper-Pearson interval of 4/4.

    >>> r = clustered_rate([1, 1, 1, 1, 1, 1, 1, 1], list("aabbccdd"))
    >>> r.effective_n, round(r.confidence_interval.low, 6)   # 0.025 ** (1 / 4)
    (4.0, 0.397635)
    >>> round(r.naive_confidence_interval.low, 6)   # 0.025 ** (1 / 8)
    0.630583
    """
    y, codes, n_clusters, confidence = _clustered_iv(values, clusters, confidence)
    if y.min() < 0 or y.max() > 1:
        raise InputError(
            f"values: expected rates or scores in [0, 1], found values from {y.min():g} to "
            f"{y.max():g}; use clustered_mean for unbounded values"
        )
    base = _cr1(y, codes, n_clusters, confidence)
    n, p = y.size, base.statistic
    spread = float(np.mean((y - p) ** 2))
    if spread == 0:  # every value equal: nothing to estimate the design effect from
        n_naive, n_eff = float(n), float(n_clusters)
    else:
        n_naive = n * p * (1 - p) / spread  # n for 0/1 values, more for scores inside (0, 1)
        tail = 0.5 + confidence / 2
        ratio = float(stdtrit(n - 1, tail) / stdtrit(n_clusters - 1, tail))
        deff = max(base.design_effect, 1e-300)  # 0 when every cluster sits at the mean
        n_eff = min(n_naive, n_naive / deff * ratio**2)
    sizes = np.array([n_naive, n_eff])
    low, high = clopper_pearson_bounds(p * sizes, sizes, confidence)
    naive_width, width = high - low
    return replace(
        base,
        confidence_interval=ConfidenceInterval(float(low[1]), float(high[1])),
        naive_confidence_interval=ConfidenceInterval(float(low[0]), float(high[0])),
        widening=float(width / naive_width - 1.0) if naive_width > 0 else 0.0,
        method="korn-graubard",
        effective_n=n_eff,
    )


def cluster_bootstrap(
    a: Any,
    b: Any | None = None,
    *,
    clusters: Sequence[Any] | np.ndarray,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: SeedLike | None = 0,
) -> ClusterBootstrapResult:
    r"""Cluster bootstrap interval for a mean, or for a paired difference when ``b`` is given.

    Whole clusters are drawn with replacement, :math:`G` per resample; a question's values in
    A and B always travel together, so the pairing is kept.  With :math:`S_g` the cluster sum
    of the values (or of the differences :math:`d_i = b_i - a_i`), :math:`n_g` its size and
    :math:`c_{rg}` how often cluster :math:`g` was drawn in resample :math:`r`:

    .. math:: \hat\theta^*_r = \frac{\sum_g c_{rg} S_g}{\sum_g c_{rg} n_g}

    The interval is the percentile interval of :math:`\hat\theta^*`.  Resamples are drawn in
    bounded batches as a count matrix (the paired bootstrap's kernel, clusters as rows).

    Parameters
    ----------
    a : array_like of float, shape (n,)
    b : array_like of float, shape (n,), optional
        Second system, aligned with ``a``; the statistic is then ``mean(b - a)``.
    clusters : array_like, shape (n,)
        Cluster label of each question; at least 2 clusters.
    confidence : float, default 0.95
    n_resamples : int, default 10000
    rng : int or numpy.random.Generator, default 0
        Seed or generator; the global random state is never touched.

    Returns
    -------
    ClusterBootstrapResult

    References
    ----------
    Cameron, Gelbach & Miller (2008), "Bootstrap-based improvements for inference with
    clustered errors", *Rev. Econ. Stat.* 90(3); Cameron & Miller (2015), section VI.C;
    Miller (2024), arXiv:2411.00640.

    Examples
    --------
    Differences constant within and across clusters: every resample gives the same mean.

    >>> r = cluster_bootstrap([0, 0, 1], [1, 1, 2], clusters=["x", "x", "y"], rng=3)
    >>> r.statistic, r.confidence_interval
    (1.0, ConfidenceInterval(low=1.0, high=1.0))
    """
    n_resamples = check_count(n_resamples, "resamples")
    values = finite_vector(a, "a")
    if b is not None:
        values = _paired_differences(values, np.asarray(b))
    y, codes, n_clusters, confidence = _clustered_iv(values, clusters, confidence)
    sums = np.bincount(codes, weights=y, minlength=n_clusters)
    sizes = np.bincount(codes, minlength=n_clusters).astype(float)
    # Resampling clusters is resampling the rows (S_g, n_g); the ratio of the two resampled
    # column means is the pooled mean of the drawn questions.
    means = bootstrap_means(np.column_stack([sums, sizes]), n_resamples, as_generator(rng))
    theta = means[:, 0] / means[:, 1]
    tail = (1.0 - confidence) / 2.0
    low, high = np.percentile(theta, [100 * tail, 100 * (1 - tail)])
    statistic = float(y.mean())
    if np.ptp(y) == 0:  # rounding noise must not make a constant look like an interval
        low = high = statistic
    return ClusterBootstrapResult(
        statistic=statistic,
        confidence_interval=ConfidenceInterval(float(low), float(high)),
        standard_error=float(theta.std(ddof=1)) if n_resamples > 1 else 0.0,
        n_resamples=n_resamples,
        n_clusters=n_clusters,
        confidence=confidence,
    )
