"""Paired bootstrap intervals on per-question differences.

The bootstrap works on the per-question differences ``d_i = b_i - a_i`` of two systems
evaluated on the same questions, so question difficulty (shared by both systems) cancels.
It resamples *question indices* with replacement and recomputes the mean difference; the
interval is the percentile interval or Efron's BCa interval.  Indices are drawn in batches
(bounded memory) and turned into per-question counts; every metric that is non-null on the
same questions shares those counts.

Each metric (column) is then computed on its own -- one matrix-vector product per column,
and BCa's bias correction counts bootstrap means that tie with the estimate within a
tolerance -- so a metric's interval never depends on which other metrics are compared
alongside it.  The permutation test lives in :mod:`ragaudit.stats.permutation`, the score
and exact intervals for binary data in :mod:`ragaudit.stats.intervals`.

The kernels (:func:`bootstrap_means`, ``_interval``) take a ``(n_questions, n_metrics)``
matrix; :func:`paired_bootstrap` is their one-metric face.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtr, ndtri

from ragaudit._validate import check_fraction, check_int
from ragaudit.exceptions import InputError, RagauditWarning

__all__ = [
    "BootstrapResult",
    "ConfidenceInterval",
    "bootstrap_means",
    "paired_bootstrap",
]

CIMethod = Literal["percentile", "bca"]
SeedLike = int | np.random.Generator

# Upper bound on the number of entries of one resampling batch (indices or signs), which keeps
# memory around 16 MB whatever the number of questions.
_BATCH_ENTRIES = 1 << 21
# Entries of one block of bootstrap counts that every metric reads in turn (about 1 MB).
_CACHE_ENTRIES = 1 << 17


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided confidence interval."""

    low: float
    high: float


@dataclass(frozen=True)
class BootstrapResult:
    """Result of :func:`paired_bootstrap`.

    Attributes
    ----------
    statistic : float
        Observed mean difference ``mean(b - a)``.
    confidence_interval : ConfidenceInterval
    standard_error : float
        Standard deviation of the bootstrap distribution.
    n_resamples : int
    confidence : float
    method : {"percentile", "bca"}
    """

    statistic: float
    confidence_interval: ConfidenceInterval
    standard_error: float
    n_resamples: int
    confidence: float
    method: str


def as_generator(rng: SeedLike | None) -> np.random.Generator:
    """A Generator from a seed (or the Generator itself); never the global state."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(0 if rng is None else rng)


def check_confidence(confidence: float) -> float:
    """Validate a confidence level in (0, 1) (:func:`~ragaudit._validate.check_fraction`)."""
    return check_fraction(confidence, "confidence")


def check_count(value: int, name: str) -> int:
    """Validate a resample/permutation count >= 1."""
    return check_int(value, name)


def check_method(method: str) -> CIMethod:
    """Validate a CI method name."""
    if method not in ("percentile", "bca"):
        raise InputError(f"ci method: expected 'percentile' or 'bca', found {method!r}")
    return method  # type: ignore[return-value]


def _paired_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a_arr = np.asarray(a, dtype=float)
    b_arr = np.asarray(b, dtype=float)
    if a_arr.ndim != 1 or a_arr.shape != b_arr.shape:
        raise InputError(
            f"expected two 1-D arrays of equal length, found shapes {a_arr.shape} and {b_arr.shape}"
        )
    if a_arr.size == 0:
        raise InputError("expected at least one paired value, found none")
    bad = np.flatnonzero(~np.isfinite(a_arr) | ~np.isfinite(b_arr))
    if bad.size:
        raise InputError(
            f"expected finite values, found NaN or infinity at position(s) "
            f"{', '.join(map(str, bad[:10].tolist()))}"
        )
    return b_arr - a_arr


def bootstrap_means(diffs: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap distribution of column means, shape ``(n_resamples, n_metrics)``.

    Row ``b`` is ``(1/n) * sum_i c_bi * diffs[i, :]``, where ``c_bi`` counts how often question
    ``i`` was drawn among ``n`` draws with replacement (Efron & Tibshirani 1993, ch. 6).
    Every column shares the same resampled question indices; each column is its own
    matrix-vector product, so its values do not depend on the other columns.  Shared with
    the funnel's stage rates and the clustered intervals.

    Examples
    --------
    >>> means = bootstrap_means(np.array([[0.0], [1.0]]), 4, np.random.default_rng(0))
    >>> means.shape, bool(((means >= 0) & (means <= 1)).all())
    ((4, 1), True)
    """
    n = diffs.shape[0]
    columns = [np.ascontiguousarray(diffs[:, j]) for j in range(diffs.shape[1])]
    batch = max(1, min(n_resamples, _BATCH_ENTRIES // n))
    out = np.empty((n_resamples, diffs.shape[1]))
    ones = np.ones(batch * n)
    for start in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - start)
        indices = rng.integers(0, n, size=(rows, n))
        # How often each question was drawn in each resample; the resampled mean is then
        # one matrix-vector product per metric.
        flat = (indices + (np.arange(rows) * n)[:, None]).ravel()
        counts = np.bincount(flat, weights=ones[: flat.size], minlength=rows * n)
        counts = counts.reshape(rows, n)  # float counts straight from bincount: no copy
        # Blocks of rows small enough to stay in cache while every column reads them.
        step = max(1, _CACHE_ENTRIES // n)
        for low in range(0, rows, step):
            block = counts[low : low + step]
            for j, column in enumerate(columns):
                out[start + low : start + low + block.shape[0], j] = block @ column
    out /= n
    return out


def _percentile_of_score(theta_b: np.ndarray, theta_hat: float, tolerance: float) -> float:
    # The 'mean' kind of percentileofscore: ties count half (as scipy.stats.bootstrap does).
    # A resampled mean within `tolerance` of the estimate is a tie: the same multiset of
    # questions summed in another order must not move the bias correction.
    below = np.count_nonzero(theta_b < theta_hat - tolerance)
    at_or_below = np.count_nonzero(theta_b <= theta_hat + tolerance)
    return float((below + at_or_below) / (2.0 * theta_b.size))


def _interval(
    theta_b: np.ndarray, diffs: np.ndarray, confidence: float, method: CIMethod
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile or BCa interval per column of ``theta_b`` (each column on its own)."""
    bounds = [
        _column_interval(
            np.ascontiguousarray(theta_b[:, j]),
            np.ascontiguousarray(diffs[:, j]),
            confidence,
            method,
        )
        for j in range(diffs.shape[1])  # a handful of metrics, never a loop over questions
    ]
    return np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])


def _column_interval(
    theta_b: np.ndarray, diffs: np.ndarray, confidence: float, method: CIMethod
) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2.0
    low, high = (float(x) for x in np.percentile(theta_b, [100 * tail, 100 * (1 - tail)]))
    if method == "percentile" or np.ptp(theta_b) == 0:
        return low, high  # every resample equal: the interval is that single value
    n = diffs.size
    if n < 2:
        warnings.warn(
            "BCa needs at least 2 questions; using the percentile interval",
            RagauditWarning,
            stacklevel=4,
        )
        return low, high
    theta_hat = diffs.mean()
    tolerance = 1e-9 * max(float(np.abs(diffs).max()), 1e-300)
    # Efron's acceleration from the jackknife; leave-one-out means need no resampling.
    jackknife = (diffs.sum() - diffs) / (n - 1)
    spread = jackknife.mean() - jackknife
    denominator = 6.0 * np.sum(spread**2) ** 1.5
    acceleration = float(np.sum(spread**3) / denominator) if denominator > 0 else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        bias = ndtri(_percentile_of_score(theta_b, theta_hat, tolerance))
        z_low, z_high = ndtri(tail), ndtri(1 - tail)
        level_low = ndtr(bias + (bias + z_low) / (1 - acceleration * (bias + z_low)))
        level_high = ndtr(bias + (bias + z_high) / (1 - acceleration * (bias + z_high)))
    if not (np.isfinite(level_low) and np.isfinite(level_high)):
        warnings.warn(
            "BCa interval is undefined here (the bootstrap distribution lies entirely on "
            "one side of the estimate); using the percentile interval",
            RagauditWarning,
            stacklevel=4,
        )
        return low, high
    low, high = (float(x) for x in np.percentile(theta_b, [100 * level_low, 100 * level_high]))
    return low, high


def paired_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    method: str = "percentile",
    rng: SeedLike | None = 0,
) -> BootstrapResult:
    r"""Paired bootstrap confidence interval for the mean difference ``mean(b - a)``.

    Question indices are resampled with replacement ``n_resamples`` times, keeping each
    question's two values together, and the mean difference is recomputed:

    .. math:: \hat\theta^*_r = \frac1n \sum_{i=1}^n d_{I_{ri}},\quad I_{ri} \sim U\{1..n\},
              \quad d_i = b_i - a_i

    The percentile interval is the ``(1-c)/2`` and ``(1+c)/2`` quantiles of
    :math:`\hat\theta^*`; BCa shifts those quantiles by the bias correction
    :math:`z_0 = \Phi^{-1}(\#\{\hat\theta^* < \hat\theta\}/R)` (ties count half) and the
    jackknife acceleration :math:`a = \sum u_i^3 / (6 (\sum u_i^2)^{3/2})`.

    Parameters
    ----------
    a, b : array_like, shape (n,)
        Per-question values of systems A and B, aligned.
    confidence : float, default 0.95
        Strictly between 0 and 1.
    n_resamples : int, default 10000
    method : {"percentile", "bca"}, default "percentile"
    rng : int or numpy.random.Generator, default 0
        Seed or generator; the global random state is never touched.

    Returns
    -------
    BootstrapResult

    References
    ----------
    Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13-14.

    Examples
    --------
    Identical per-question differences give a zero-width interval:

    >>> result = paired_bootstrap([1.0, 2.0, 3.0], [1.5, 2.5, 3.5], rng=1)
    >>> result.statistic, result.confidence_interval
    (0.5, ConfidenceInterval(low=0.5, high=0.5))
    """
    confidence = check_confidence(confidence)
    n_resamples = check_count(n_resamples, "resamples")
    ci_method = check_method(method)
    diffs = _paired_differences(np.asarray(a), np.asarray(b))[:, None]
    theta_b = bootstrap_means(diffs, n_resamples, as_generator(rng))
    low, high = _interval(theta_b, diffs, confidence, ci_method)
    # Rounding noise must not make a constant difference look like an interval.
    low, high = _snap_constant(diffs, low, high)
    return BootstrapResult(
        statistic=float(diffs.mean()),
        confidence_interval=ConfidenceInterval(float(low[0]), float(high[0])),
        standard_error=float(theta_b[:, 0].std(ddof=1)) if n_resamples > 1 else 0.0,
        n_resamples=n_resamples,
        confidence=confidence,
        method=ci_method,
    )


def _snap_constant(
    diffs: np.ndarray, low: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    constant = np.ptp(diffs, axis=0) == 0
    low = np.where(constant, diffs[0], low)
    high = np.where(constant, diffs[0], high)
    return low, high
