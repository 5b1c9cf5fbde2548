"""Paired bootstrap intervals and paired permutation tests on per-question differences.

Both procedures work on the per-question differences ``d_i = b_i - a_i`` of two systems
evaluated on the same questions, so question difficulty (shared by both systems) cancels.

* The bootstrap resamples *question indices* with replacement and recomputes the mean
  difference; the interval is the percentile interval or Efron's BCa interval.  Indices are
  drawn in batches (bounded memory) and turned into per-question counts, so each batch is one
  matrix product over every metric at once.
* The permutation test flips the sign of each ``d_i`` independently (under the null the two
  systems are exchangeable for every question).  Small ``n`` enumerates all ``2**n`` sign
  patterns exactly; larger ``n`` draws random patterns and reports the add-one p-value
  ``(count + 1) / (trials + 1)``, which is never zero and keeps the test valid.

The private kernels (``_bootstrap_means``, ``_interval``, ``_permutation_pvalues``) take a
``(n_questions, n_metrics)`` matrix; the public functions are their one-metric faces.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtr, ndtri

from ragaudit.exceptions import InputError, RagauditWarning

__all__ = [
    "BootstrapResult",
    "ConfidenceInterval",
    "PermutationResult",
    "paired_bootstrap",
    "paired_permutation_test",
]

CIMethod = Literal["percentile", "bca"]
SeedLike = int | np.random.Generator

# Upper bound on the number of entries of one resampling batch (indices or signs), which keeps
# memory around 16 MB whatever the number of questions.
_BATCH_ENTRIES = 1 << 21
# Exact enumeration handles the last `_EXACT_BLOCK` questions as one vectorised block of sums
# and loops over the sign patterns of the remaining ones.
_EXACT_BLOCK = 16
MAX_EXACT = 30


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


@dataclass(frozen=True)
class PermutationResult:
    """Result of :func:`paired_permutation_test`.

    Attributes
    ----------
    statistic : float
        Observed mean difference ``mean(b - a)``.
    pvalue : float
        Two-sided p-value.
    n_permutations : int
        Sign patterns evaluated (``2**n`` when exact).
    exact : bool
        Whether every sign pattern was enumerated.
    """

    statistic: float
    pvalue: float
    n_permutations: int
    exact: bool


def as_generator(rng: SeedLike | None) -> np.random.Generator:
    """A Generator from a seed (or the Generator itself); never the global state."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(0 if rng is None else rng)


def check_confidence(confidence: float) -> float:
    """Validate a confidence level in (0, 1)."""
    if not (isinstance(confidence, int | float) and 0.0 < float(confidence) < 1.0):
        raise InputError(
            f"confidence: expected a number strictly between 0 and 1 (e.g. 0.95), "
            f"found {confidence!r}"
        )
    return float(confidence)


def check_count(value: int, name: str) -> int:
    """Validate a resample/permutation count >= 1."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise InputError(f"{name}: expected an integer >= 1, found {value!r}")
    return int(value)


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


def _bootstrap_means(diffs: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap distribution of column means, shape ``(n_resamples, n_metrics)``.

    Every column shares the same resampled question indices.
    """
    n = diffs.shape[0]
    batch = max(1, min(n_resamples, _BATCH_ENTRIES // n))
    out = np.empty((n_resamples, diffs.shape[1]))
    for start in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - start)
        indices = rng.integers(0, n, size=(rows, n))
        # How often each question was drawn in each resample; the resampled mean is then
        # one matrix product, for every metric at once.
        flat = (indices + (np.arange(rows) * n)[:, None]).ravel()
        counts = np.bincount(flat, minlength=rows * n).reshape(rows, n)
        out[start : start + rows] = counts @ diffs
    out /= n
    return out


def _percentile_of_score(theta_b: np.ndarray, theta_hat: np.ndarray) -> np.ndarray:
    # The 'mean' kind of percentileofscore: ties count half (as scipy.stats.bootstrap does).
    below = np.count_nonzero(theta_b < theta_hat, axis=0)
    at_or_below = np.count_nonzero(theta_b <= theta_hat, axis=0)
    return (below + at_or_below) / (2.0 * theta_b.shape[0])


def _interval(
    theta_b: np.ndarray, diffs: np.ndarray, confidence: float, method: CIMethod
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile or BCa interval per column of ``theta_b``."""
    tail = (1.0 - confidence) / 2.0
    percentile = np.percentile(theta_b, [100 * tail, 100 * (1 - tail)], axis=0)
    if method == "percentile":
        return percentile[0], percentile[1]
    n, n_metrics = diffs.shape
    theta_hat = diffs.mean(axis=0)
    low, high = percentile[0].copy(), percentile[1].copy()
    if n < 2:
        warnings.warn(
            "BCa needs at least 2 questions; using the percentile interval",
            RagauditWarning,
            stacklevel=3,
        )
        return low, high
    # Efron's acceleration from the jackknife; leave-one-out means need no resampling.
    jackknife = (diffs.sum(axis=0) - diffs) / (n - 1)
    spread = jackknife.mean(axis=0) - jackknife
    denominator = 6.0 * np.sum(spread**2, axis=0) ** 1.5
    with np.errstate(divide="ignore", invalid="ignore"):
        acceleration = np.where(denominator > 0, np.sum(spread**3, axis=0) / denominator, 0.0)
        bias = ndtri(_percentile_of_score(theta_b, theta_hat))
        z_low, z_high = ndtri(tail), ndtri(1 - tail)
        level_low = ndtr(bias + (bias + z_low) / (1 - acceleration * (bias + z_low)))
        level_high = ndtr(bias + (bias + z_high) / (1 - acceleration * (bias + z_high)))
    for column in range(n_metrics):  # a handful of metrics, never a loop over questions
        levels = (level_low[column], level_high[column])
        if np.ptp(theta_b[:, column]) == 0:
            continue  # every resample equal: the interval is that single value
        if not np.all(np.isfinite(levels)):
            warnings.warn(
                "BCa interval is undefined here (the bootstrap distribution lies entirely on "
                "one side of the estimate); using the percentile interval",
                RagauditWarning,
                stacklevel=3,
            )
            continue
        low[column], high[column] = np.percentile(
            theta_b[:, column], [100 * levels[0], 100 * levels[1]]
        )
    return low, high


def _sign_flip_sums(diffs: np.ndarray) -> np.ndarray:
    """Sums of ``±d_i`` over every sign pattern, shape ``(2**n, n_metrics)``."""
    sums = np.zeros((1, diffs.shape[1]))
    for row in diffs:  # doubling: each step appends the patterns with the next sign flipped
        sums = np.concatenate([sums + row, sums - row])
    return sums


def _permutation_pvalues(
    diffs: np.ndarray, n_permutations: int, rng: np.random.Generator, exact_max_n: int
) -> tuple[np.ndarray, int, bool]:
    """Two-sided sign-flip p-values per column; returns ``(pvalues, patterns, exact)``."""
    n = diffs.shape[0]
    observed = np.abs(diffs.sum(axis=0))
    # Sums of the same numbers in another order can differ by rounding; a relative tolerance
    # keeps exact ties (common with 0/1 metrics) counted as ties.
    threshold = observed - 1e-10 * np.maximum(np.abs(diffs).sum(axis=0), 1e-300)
    if n <= exact_max_n:
        block = min(n, _EXACT_BLOCK)
        inner = _sign_flip_sums(diffs[:block])
        outer = _sign_flip_sums(diffs[block:])
        count = np.zeros(diffs.shape[1], dtype=np.int64)
        for shift in outer:
            count += np.count_nonzero(np.abs(inner + shift) >= threshold, axis=0)
        total = 2**n
        return count / total, total, True
    batch = max(1, min(n_permutations, _BATCH_ENTRIES // n))
    count = np.zeros(diffs.shape[1], dtype=np.int64)
    column_totals = diffs.sum(axis=0)
    for start in range(0, n_permutations, batch):
        rows = min(batch, n_permutations - start)
        flips = rng.integers(0, 2, size=(rows, n), dtype=np.int8)
        # sum(s_i d_i) with s_i = 1 - 2*flip_i, as one matrix product for all metrics.
        sums = column_totals - 2.0 * (flips.astype(float) @ diffs)
        count += np.count_nonzero(np.abs(sums) >= threshold, axis=0)
    return (count + 1) / (n_permutations + 1), n_permutations, False


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
    theta_b = _bootstrap_means(diffs, n_resamples, as_generator(rng))
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


def paired_permutation_test(
    a: np.ndarray,
    b: np.ndarray,
    *,
    n_permutations: int = 10_000,
    exact_max_n: int = 20,
    rng: SeedLike | None = 0,
) -> PermutationResult:
    r"""Two-sided paired permutation (sign-flip) test of ``mean(b - a) = 0``.

    Under the null hypothesis it is a coin flip which system produced which value of each
    question, so every sign pattern :math:`s \in \{-1,1\}^n` is equally likely:

    .. math:: p = \frac{\#\{s : |\sum_i s_i d_i| \ge |\sum_i d_i|\}}{2^n}

    With ``n <= exact_max_n`` all ``2**n`` patterns are enumerated (the same p-value as
    ``scipy.stats.permutation_test(..., permutation_type="samples")`` with exhaustive
    enumeration).  Otherwise ``n_permutations`` random patterns are drawn and
    :math:`p = (\text{count} + 1) / (\text{trials} + 1)` (Phipson & Smyth, 2010).
    For 0/1 metrics the exact test equals McNemar's exact test.

    Parameters
    ----------
    a, b : array_like, shape (n,)
    n_permutations : int, default 10000
        Random sign patterns when not exact.
    exact_max_n : int, default 20
        Enumerate exactly up to this many questions (at most 30).
    rng : int or numpy.random.Generator, default 0

    Returns
    -------
    PermutationResult

    Examples
    --------
    One question better, one worse, by the same amount: no evidence at all.

    >>> paired_permutation_test([0, 1, 1], [1, 0, 1]).pvalue
    1.0
    >>> paired_permutation_test([0, 0, 0, 0], [1, 1, 1, 1]).pvalue  # 2 of 16 patterns
    0.125
    """
    n_permutations = check_count(n_permutations, "permutations")
    if isinstance(exact_max_n, bool) or not 0 <= exact_max_n <= MAX_EXACT:
        raise InputError(
            f"exact_max_n: expected an integer between 0 and {MAX_EXACT}, found {exact_max_n!r}"
        )
    diffs = _paired_differences(np.asarray(a), np.asarray(b))[:, None]
    pvalues, patterns, exact = _permutation_pvalues(
        diffs, n_permutations, as_generator(rng), exact_max_n
    )
    return PermutationResult(
        statistic=float(diffs.mean()),
        pvalue=float(min(1.0, pvalues[0])),
        n_permutations=patterns,
        exact=exact,
    )
