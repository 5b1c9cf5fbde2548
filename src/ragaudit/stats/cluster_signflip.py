r"""Cluster-aware verdicts: the cluster sign-flip test and the interval that inverts it.

With ``--cluster-by`` the questions of one source move together, so the verdict flips the sign
of whole clusters (Canay, Romano & Shaikh 2017): cluster ``g`` contributes the sum :math:`x_g`
of its differences and its size :math:`w_g`, and the p-value of "no difference" is exact over
all :math:`2^G` patterns (the joint outcomes of equal clusters; Monte Carlo beyond
:data:`~ragaudit.stats.signflip_interval.MAX_OUTCOMES`).  Under "the systems are exchangeable on
every question" it is exact whatever the correlation inside a cluster.

The interval is the inversion of that test (:mod:`ragaudit.stats.signflip_interval`) united
with the CR2 cluster-robust t interval on Bell-McCaffrey degrees of freedom (Bell & McCaffrey
2002; Pustejovsky & Tipton 2018).  For an intercept-only model both have a closed form:

.. math:: \widehat V_{CR2} = \frac1{n^2}\sum_g \frac{U_g^2}{1 - n_g/n},\qquad
          \nu = \frac{\operatorname{tr}(M)^2}{\operatorname{tr}(M^2)},\quad
          M = W\Sigma,\ W = \operatorname{diag}\Big(\frac{1}{n^2(1 - n_g/n)}\Big),\
          \Sigma = \operatorname{diag}(n_g) - \frac{\mathbf n\mathbf n^\top}{n}

with :math:`U_g = \sum_{i \in g}(d_i - \bar d)` (the working model: independent questions of
equal variance, so :math:`\Sigma` is the covariance of the :math:`U_g`).  Why both, measured by
``benchmarks/coverage_clustered.py`` (paired 0/1 differences, A right with a clustered rate of
0.9, G = 8, 14, 30 clusters of 2-8 questions, intra-cluster correlation 0-0.5): the cluster
sign-flip test's type-I error stayed at or below 0.04 where CR2-BM's reached 0.068 and CR1's
0.072 (G = 30), so the test decides; its inversion alone covered only 0.77-0.83 with 8
clusters (256 patterns, granular and skewed) where CR2-BM covered 0.92-0.93 and the union
0.925-0.935, and at G >= 14 all three covered 0.92-0.96 at nearly the same width.  The union is
then made to agree with the test at 0 (:func:`~ragaudit.stats.signflip_interval.reconcile`).

References
----------
Canay, I. A., Romano, J. P. & Shaikh, A. M. (2017). Randomization tests under an approximate
symmetry assumption. *Econometrica* 85(3), 1013-1030.
Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression
with multi-stage samples. *Survey Methodology* 28(2), 169-181.
Pustejovsky, J. E. & Tipton, E. (2018). Small-sample methods for cluster-robust variance
estimation and hypothesis testing in fixed effects models. *JBES* 36(4), 672-683.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import stdtrit

from ragaudit.exceptions import InputError
from ragaudit.stats.cluster_betting import cluster_mean_bounds
from ragaudit.stats.permutation import EXACT_VALUES, MONTE_CARLO
from ragaudit.stats.resampling import ConfidenceInterval, check_confidence, check_count
from ragaudit.stats.signflip_interval import CLUSTER_METHOD, reconcile, signflip_bounds
from ragaudit.stats.verdicts import min_differing

__all__ = ["CLUSTER_FEW_METHOD", "ClusterSignFlip", "cluster_signflip", "cr2_standard_error"]

#: Fewer than 6 clusters differ: widened to contain the cluster betting interval.
CLUSTER_FEW_METHOD = "cluster sign-flip inversion widened to cluster betting (too few differ)"


@dataclass(frozen=True)
class ClusterSignFlip:
    """Result of :func:`cluster_signflip`: the verdict's p and the interval printed beside it.

    ``n_clusters`` clusters, ``n_differing`` of them with a non-zero sum of differences (the
    only ones that move the test); ``df`` the Bell-McCaffrey degrees of freedom of the CR2 part.
    """

    statistic: float
    confidence_interval: ConfidenceInterval
    pvalue: float
    exact: bool
    method: str
    p_method: str
    n_clusters: int
    n_differing: int
    standard_error: float
    df: float


def cr2_standard_error(d: np.ndarray, codes: np.ndarray) -> tuple[float, float]:
    """CR2 standard error of ``mean(d)`` and its Bell-McCaffrey degrees of freedom.

    ``codes`` are cluster indices ``0..G-1`` (every one used).  Formulas in the module doc.

    >>> se, df = cr2_standard_error(np.array([1.0, 1, 0, 0, 1, 0]), np.array([0, 0, 1, 1, 2, 2]))
    >>> round(se, 6), round(df, 6)   # U = (1, -1, 0), n_g/n = 1/3: sqrt(2 / (2/3) / 36)
    (0.288675, 2.0)

    (df: ``M = (2I - (2/3)J) / 24``, ``tr M = 1/6``, ``tr M^2 = 1/72``, so ``(1/36) / (1/72)``.)
    """
    n = d.size
    sizes = np.bincount(codes).astype(float)
    residual_sums = np.bincount(codes, weights=d - d.mean(), minlength=sizes.size)
    keep = sizes < n
    weight = np.where(keep, 1.0 / (n * n * np.where(keep, 1.0 - sizes / n, 1.0)), 0.0)
    variance = float(np.sum(weight * residual_sums**2))
    m = weight[:, None] * (np.diag(sizes) - np.outer(sizes, sizes) / n)
    trace, trace_sq = float(np.trace(m)), float(np.sum(m * m.T))
    df = trace * trace / trace_sq if trace_sq > 0 else 1.0
    return float(np.sqrt(variance)), df


def cluster_signflip(
    d: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray,
    *,
    confidence: float = 0.95,
    bounded: bool = True,
    n_permutations: int = 10_000,
    rng: np.random.Generator | int | None = 0,
) -> ClusterSignFlip:
    r"""The cluster sign-flip p of "no difference" and the interval beside it (module doc).

    Parameters
    ----------
    d : sequence of float, shape (n,)
        Per-question paired differences ``b - a``.
    clusters : sequence, shape (n,)
        Each question's cluster; at least 2 clusters.
    confidence : float, default 0.95
    bounded : bool, default True
        ``d`` lies in [-1, 1] (scores in [0, 1]): the interval is clipped there and, when fewer
        than 6 clusters differ, widened to contain the cluster betting interval.
    n_permutations : int, default 10000
        Random cluster patterns when the exact enumeration is too large.
    rng : int or numpy.random.Generator, default 0

    Returns
    -------
    ClusterSignFlip

    Examples
    --------
    The demo's precision@k: 53 of 54 questions worse, none better, 14 sources.  Every source's
    sum is negative, so p = 2 / 2**14 and the interval excludes 0.

    >>> sources = [g for g in range(14) for _ in range(4)][:54]
    >>> r = cluster_signflip([-1 / 6] * 53 + [0.0], sources)
    >>> r.pvalue == 2 / 2**14, r.confidence_interval.high < 0, r.p_method
    (True, True, 'exact (distinct values)')
    """
    confidence = check_confidence(confidence)
    n_permutations = check_count(n_permutations, "permutations")
    values = np.asarray(d, dtype=float)
    labels = np.asarray(clusters)
    if values.ndim != 1 or values.size < 2 or not np.all(np.isfinite(values)):
        raise InputError(f"d: expected at least 2 finite differences, found shape {values.shape}")
    if labels.shape != values.shape:
        raise InputError(
            f"clusters: expected one label per value ({values.size}), found {labels.shape}"
        )
    _, codes = np.unique(labels, return_inverse=True)
    codes = codes.reshape(-1)
    sums = np.bincount(codes, weights=values)
    sizes = np.bincount(codes).astype(float)
    if sums.size < 2:
        raise InputError("clusters: expected at least 2 clusters, found 1")
    alpha = 1.0 - confidence
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    low, high, p0, exact, _ = signflip_bounds(sums, sizes, alpha, n_permutations, generator)
    mean = float(values.mean())
    se, df = cr2_standard_error(values, codes)
    half = float(stdtrit(df, 1.0 - alpha / 2)) * se
    low, high = reconcile(min(low, mean - half), max(high, mean + half), mean, p0 < alpha)
    differing = int(np.count_nonzero(np.abs(sums) > 1e-12 * sizes))
    method = CLUSTER_METHOD
    if bounded:
        low, high = max(low, -1.0), min(high, 1.0)
        if differing < min_differing(alpha):
            b_low, b_high = cluster_mean_bounds(sums[None], sizes[None], -1.0, 1.0, confidence)
            low, high = min(low, float(b_low[0])), max(high, float(b_high[0]))
            method = CLUSTER_FEW_METHOD
    return ClusterSignFlip(
        statistic=mean,
        confidence_interval=ConfidenceInterval(low, high),
        pvalue=p0,
        exact=exact,
        method=method,
        p_method=EXACT_VALUES if exact else MONTE_CARLO,
        n_clusters=int(sums.size),
        n_differing=differing,
        standard_error=se,
        df=df,
    )
