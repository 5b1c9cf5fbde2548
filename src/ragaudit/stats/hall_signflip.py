r"""The sign-flip test of Hall's skew-corrected studentized mean, inverted into an interval.

Student's t (and the plain sign-flip inversion, its randomization twin) treats the mean of
skewed differences as symmetric: when every question gains a Beta(0.3, 3) amount (skewness
2.2) it covered 0.88 at n = 20, almost every miss above the upper end.  Hall (1992) removes
the skewness of the studentized mean by a monotone cubic transformation,

.. math:: W = \frac{\bar y}{\hat\sigma},\qquad
          h(y) = \sqrt n\Big(W + \frac{\hat\gamma}{3} W^2 + \frac{\hat\gamma^2}{27} W^3
          + \frac{\hat\gamma}{6n}\Big) = \sqrt n\Big(\frac{(1 + \hat\gamma W/3)^3 - 1}{\hat\gamma}
          + \frac{\hat\gamma}{6n}\Big),

with :math:`\hat\sigma` the standard deviation (ddof 1) and :math:`\hat\gamma` the sample
skewness :math:`\frac{n}{(n-1)(n-2)}\sum (y_i - \bar y)^3 / \hat\sigma^3`; :math:`h` is
:math:`N(0, 1)` up to :math:`O(1/n)` where :math:`W` alone is off by :math:`O(1/\sqrt n)`.

The interval is the set of shifts :math:`\delta` whose **sign-flip test of h** does not reject:

.. math:: \mathrm{CI}_h = \{\delta : \Pr_s[|h(s \circ (d - \delta))| \ge |h(d - \delta)|]
          \ge \alpha\}.

A sign-flip randomization test is exact under symmetry for *any* statistic (Fisher 1935), so at
:math:`\delta = 0` this is an exact test of "the systems are exchangeable"; away from the
symmetric case, the flipped samples are nearly symmetric, :math:`h` of them is nearly
:math:`N(0, 1)`, and the observed :math:`h` has had its skewness removed, so the inversion
tracks Hall's interval.  ``compare`` prints the union of this interval with the plain sign-flip
inversion and Student's t (:func:`~ragaudit.stats.signflip_interval.inverted_interval`), then
makes it agree with the verdict's exact p at 0: the union only widens, and on a dense shift
(skewness near 0) the three nearly coincide.

**Computed from four sums per pattern.**  For a pattern ``s`` let :math:`A_k = \sum_i s_i d_i^k`
(:math:`k = 0..3`).  At any :math:`\delta` the flipped sample :math:`z = s \circ (d - \delta)`
has :math:`\sum z = A_1 - \delta A_0`, :math:`\sum z^2 = \sum (d - \delta)^2` and
:math:`\sum z^3 = A_3 - 3\delta A_2 + 3\delta^2 A_1 - \delta^3 A_0`, so p(δ) costs one pass over
the patterns, never over the questions; each end is found by bisection outward from the mean.
The patterns are every joint outcome of the distinct values when there are at most
:data:`PATTERNS` + 1 of them (exact), else :data:`PATTERNS` random ones plus the identity
(add-one).  Past
:data:`ASYMPTOTIC_N` questions the randomization distribution of :math:`h` is :math:`N(0, 1)`
within Monte Carlo error (Janssen 1997), and Hall's closed form
:math:`\bar d - \hat\sigma\, g^{-1}(\pm z_{1-\alpha/2}/\sqrt n)` is used instead (measured in
``benchmarks/coverage_stats.py``).

References
----------
Hall, P. (1992). On the removal of skewness by transformation. *Journal of the Royal
Statistical Society B* 54(1), 221-228.
Fisher, R. A. (1935). *The Design of Experiments*, section 21.
Janssen, A. (1997). Studentized permutation tests for non-i.i.d. hypotheses and the
generalized Behrens-Fisher problem. *Statistics & Probability Letters* 36, 9-21.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from ragaudit.stats._binomial import log_outcomes as _log_outcomes
from ragaudit.stats.permutation import _binomial_half_pmf, flip_sums

__all__ = ["ASYMPTOTIC_N", "PATTERNS", "hall_asymptotic_bounds", "hall_bounds", "hall_statistic"]

#: From this many questions on, Hall's closed-form interval replaces the randomization one.
ASYMPTOTIC_N = 2_000
#: At most this many sign patterns (exact outcomes or random draws) for Hall's test: it only
#: widens the interval, and its coverage was measured with 2,000 (benchmarks/coverage_stats.py).
PATTERNS = 2_000
_MAX_OUTCOMES = 1 << 16
_BISECTIONS = 14  # 2^-14 of a bracket of 2-4 standard errors: below the decimals printed
_TIE = 1e-9


def hall_statistic(s1: np.ndarray, s2: float, s3: np.ndarray, n: int) -> np.ndarray:
    r"""Hall's :math:`h` from the sums :math:`\sum z`, :math:`\sum z^2`, :math:`\sum z^3`.

    A sample with no spread has :math:`h = \pm\infty` by the sign of its mean (0 when the mean
    is 0 too).

    >>> y = np.array([0.1, 0.3, 0.2, 0.9])
    >>> round(float(hall_statistic(y.sum(), (y**2).sum(), (y**3).sum(), 4)), 4)
    3.7016
    """
    mean = s1 / n
    var = (s2 / n - mean * mean) * n / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sd = np.sqrt(np.maximum(var, 0.0))
        third = s3 / n - 3.0 * mean * s2 / n + 2.0 * mean**3
        gamma = third * n * n / ((n - 1) * (n - 2)) / sd**3
        w = mean / sd
        h = np.sqrt(n) * (w + gamma * w * w / 3 + gamma * gamma * w**3 / 27 + gamma / (6 * n))
    flat = ~(var > 1e-24 * np.maximum(s2 / n, 1e-300))
    infinite = np.where(mean > 0, np.inf, np.where(mean < 0, -np.inf, 0.0))
    return np.where(flat, infinite, np.nan_to_num(h, nan=0.0, posinf=np.inf, neginf=-np.inf))


def _moment_patterns(
    d: np.ndarray, n_permutations: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(A, weight, exact)``: the sums ``A[:, k] = sum_i s_i d_i**k`` of every pattern."""
    values, counts = np.unique(d, return_counts=True)
    powers = values[:, None] ** np.arange(4)[None, :]
    if _log_outcomes(counts) <= np.log(min(_MAX_OUTCOMES, n_permutations + 1)):
        sums, prob = np.zeros((1, 4)), np.ones(1)
        for row, count in zip(powers, counts.tolist(), strict=True):
            u = 2.0 * np.arange(count + 1) - count  # (#kept - #flipped) of this value
            sums = (sums[:, None, :] + u[None, :, None] * row[None, None, :]).reshape(-1, 4)
            prob = (prob[:, None] * _binomial_half_pmf(count)[None, :]).ravel()
        return sums, prob, True
    # the identity pattern, then random ones (one bit per question, or per distinct value)
    full = d[:, None] ** np.arange(4)[None, :]
    sums = np.vstack([full.sum(axis=0), flip_sums(full, n_permutations, rng)])
    return sums, np.full(sums.shape[0], 1.0 / sums.shape[0]), False


def _pvalues(d: np.ndarray, deltas: np.ndarray, sums: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """p of Hall's sign-flip test at each shift in ``deltas``: one pass, shape (G,)."""
    n = d.size
    a0, a1, a2, a3 = (column[None, :] for column in sums.T)
    shift = np.asarray(deltas, dtype=float)[:, None]
    centred = d[None, :] - shift
    s2 = np.sum(centred**2, axis=1)
    h = hall_statistic(
        a1 - shift * a0,
        s2[:, None],
        a3 - 3 * shift * a2 + 3 * shift**2 * a1 - shift**3 * a0,
        n,
    )
    observed = hall_statistic(centred.sum(axis=1), s2, np.sum(centred**3, axis=1), n)
    bar = np.abs(observed) * (1 - _TIE) - _TIE
    return np.asarray((np.abs(h) >= bar[:, None]) @ weight)


def _pvalue(d: np.ndarray, delta: float, sums: np.ndarray, weight: np.ndarray) -> float:
    """p of Hall's sign-flip test at one shift."""
    return float(_pvalues(d, np.array([delta]), sums, weight)[0])


def hall_bounds(
    d: np.ndarray, alpha: float, n_permutations: int, rng: np.random.Generator
) -> tuple[float, float, bool]:
    """``(low, high, exact)`` of the inverted sign-flip test of Hall's statistic (module doc).

    Needs at least 3 questions and some spread (else ``(mean, mean, True)``: nothing to add).
    From :data:`ASYMPTOTIC_N` questions on, Hall's closed form (:func:`hall_asymptotic_bounds`).

    >>> d = np.array([0.01, 0.02, 0.0, 0.05, 0.3, 0.01, 0.02, 0.0, 0.04, 0.6, 0.03, 0.01])
    >>> low, high, exact = hall_bounds(d, 0.05, 10_000, np.random.default_rng(0))
    >>> exact, round(low, 3), round(high, 3)   # t: [-0.024, 0.205]
    (True, 0.012, 0.433)
    """
    mean = float(d.mean())
    spread = float(d.std(ddof=1)) if d.size > 1 else 0.0
    if d.size < 3 or not spread > 1e-12 * max(1.0, abs(mean)):
        return mean, mean, True
    if d.size >= ASYMPTOTIC_N:
        low, high = hall_asymptotic_bounds(d, 1.0 - alpha)
        return low, high, False
    sums, weight, exact = _moment_patterns(d, min(n_permutations, PATTERNS), rng)
    step = spread / np.sqrt(d.size)

    def end(direction: float) -> float:
        # Out from the mean in steps of 2 standard errors (doubling) until the test rejects,
        # then bisection: the first crossing from the mean, to 2^-_BISECTIONS of the bracket.
        inside, k = mean, 2.0
        while _pvalue(d, mean + direction * k * step, sums, weight) >= alpha:
            inside, k = mean + direction * k * step, 2.0 * k
            if k > 1e6:
                return direction * np.inf
        outside = mean + direction * k * step
        for _ in range(_BISECTIONS):
            middle = 0.5 * (inside + outside)
            if _pvalue(d, middle, sums, weight) >= alpha:
                inside = middle
            else:
                outside = middle
        return float(inside)

    return float(end(-1.0)), float(end(1.0)), exact


def hall_asymptotic_bounds(d: np.ndarray, confidence: float) -> tuple[float, float]:
    r"""Hall's (1992) closed-form interval: :math:`\bar d - \hat\sigma g^{-1}(\pm z/\sqrt n)`.

    .. math:: g^{-1}(x) = \frac{3}{\hat\gamma}\Big[\big(1 + \hat\gamma(x - \hat\gamma/(6n))
              \big)^{1/3} - 1\Big]

    (the real cube root: :math:`g` is increasing).

    >>> d = np.linspace(-0.1, 0.3, 41)   # symmetric: the z interval 0.1 -+ 1.96 s / sqrt(41)
    >>> [round(v, 4) for v in hall_asymptotic_bounds(d, 0.95)]
    [0.0633, 0.1367]
    """
    n = d.size
    mean = float(d.mean())
    sd = float(d.std(ddof=1)) if n >= 3 else 0.0  # fewer than 3: no skewness to correct
    if sd <= 1e-12 * max(1.0, abs(mean)):
        return mean, mean
    gamma = float(np.sum((d - mean) ** 3)) * n / ((n - 1) * (n - 2)) / sd**3
    z = float(ndtri(0.5 + confidence / 2)) / np.sqrt(n)

    def inverse(x: float) -> float:
        if abs(gamma) < 1e-12:
            return x - gamma / (6 * n)
        return 3.0 / gamma * (float(np.cbrt(1.0 + gamma * (x - gamma / (6 * n)))) - 1.0)

    return float(mean - sd * inverse(z)), float(mean - sd * inverse(-z))
