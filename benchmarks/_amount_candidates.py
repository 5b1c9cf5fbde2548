"""Candidate intervals of a mean amount measured against the printed one (issue 32, Pareto tails).

Each takes ``(x, confidence)`` and returns ``(low, high)``; the resampling ones draw their
resamples with ``stats.resampling.bootstrap_means`` from a generator seeded with ``SEED``
(printed by ``benchmarks/coverage_amounts.py``).  None of them is printed by ragaudit: they are
here so that the table comparing them is the script's own output.

* Johnson (1978)'s modified t: :math:`\\bar x + \\hat\\mu_3/(6 s^2 n) \\pm t_{n-1} s/\\sqrt n`;
* Chen (1995)'s modified t: the values of the mean where
  :math:`T_1 = t + a(1 + 2t^2) + 4a^2(t + 2t^3)`, :math:`a = \\hat\\gamma/(6\\sqrt n)`, lies
  within :math:`\\pm t_{n-1}` (:math:`T_1` is increasing in ``t``);
* the bootstrap-t (studentized) interval and its symmetric form (Efron 1981; Hall 1988),
  ``RESAMPLES`` resamples;
* BCa (Efron 1987; DiCiccio & Efron 1996), with the project's kernel
  (``stats.resampling``), ``RESAMPLES`` resamples;
* Owen (1988)'s empirical likelihood: :math:`-2\\log R(\\mu) \\le \\chi^2_{1, c}`.

References
----------
Chen, L. (1995). Testing the mean of skewed distributions. *JASA* 90(430), 767-772.
DiCiccio, T. J. & Efron, B. (1996). Bootstrap confidence intervals. *Statistical Science* 11(3).
Efron, B. (1987). Better bootstrap confidence intervals. *JASA* 82(397), 171-185.
Hall, P. (1988). On symmetric bootstrap confidence intervals. *JRSS B* 50(1), 35-45.
Johnson, N. J. (1978). Modified t tests and confidence intervals for asymmetrical populations.
*JASA* 73(363), 536-544.
Owen, A. B. (1988). Empirical likelihood ratio confidence intervals for a single functional.
*Biometrika* 75(2), 237-249.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import optimize, stats
from scipy.special import stdtrit

from ragaudit.stats.resampling import _column_interval, bootstrap_means

SEED = 0
RESAMPLES = 999
Bounds = Callable[[np.ndarray, float], tuple[float, float]]


def johnson_t(x: np.ndarray, confidence: float) -> tuple[float, float]:
    n, mean, sd = x.size, float(x.mean()), float(x.std(ddof=1))
    shift = float(np.mean((x - mean) ** 3)) / (6 * sd * sd * n)
    half = float(stdtrit(n - 1, 0.5 + confidence / 2)) * sd / np.sqrt(n)
    return mean + shift - half, mean + shift + half


def chen_t(x: np.ndarray, confidence: float) -> tuple[float, float]:
    n, mean, sd = x.size, float(x.mean()), float(x.std(ddof=1))
    a = float(stats.skew(x)) / (6 * np.sqrt(n))
    q = float(stdtrit(n - 1, 0.5 + confidence / 2))

    def t_at(target: float) -> float:
        def f(t: float) -> float:
            return t + a * (1 + 2 * t * t) + 4 * a * a * (t + 2 * t**3) - target

        return float(optimize.brentq(f, -1e3, 1e3))

    # t = sqrt(n)(mean - mu)/s is decreasing in mu: T1 <= q is mu >= mean - t(q) s/sqrt(n)
    return mean - t_at(q) * sd / np.sqrt(n), mean - t_at(-q) * sd / np.sqrt(n)


def _studentized(x: np.ndarray) -> np.ndarray:
    n, mean = x.size, float(x.mean())
    moments = bootstrap_means(np.column_stack([x, x * x]), RESAMPLES, np.random.default_rng(SEED))
    var = np.maximum(moments[:, 1] - moments[:, 0] ** 2, 0.0) * n / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(var > 0, (moments[:, 0] - mean) / np.sqrt(var / n), 0.0)


def bootstrap_t(x: np.ndarray, confidence: float) -> tuple[float, float]:
    n, mean, sd = x.size, float(x.mean()), float(x.std(ddof=1))
    low_q, high_q = np.quantile(_studentized(x), [(1 - confidence) / 2, (1 + confidence) / 2])
    return mean - float(high_q) * sd / np.sqrt(n), mean - float(low_q) * sd / np.sqrt(n)


def symmetric_bootstrap_t(x: np.ndarray, confidence: float) -> tuple[float, float]:
    n, mean, sd = x.size, float(x.mean()), float(x.std(ddof=1))
    half = float(np.quantile(np.abs(_studentized(x)), confidence)) * sd / np.sqrt(n)
    return mean - half, mean + half


def bca(x: np.ndarray, confidence: float) -> tuple[float, float]:
    means = bootstrap_means(x[:, None], RESAMPLES, np.random.default_rng(SEED))[:, 0]
    return _column_interval(means, x, confidence, "bca")


def empirical_likelihood(x: np.ndarray, confidence: float) -> tuple[float, float]:
    n, mean = x.size, float(x.mean())
    critical = float(stats.chi2.ppf(confidence, 1))

    def excess(mu: float) -> float:  # -2 log R(mu) - critical
        z = x - mu
        low, high = (1 / n - 1) / z.max(), (1 / n - 1) / z.min()
        lam = optimize.brentq(
            lambda v: float(np.sum(z / (1 + v * z))), low * (1 - 1e-12), high * (1 - 1e-12)
        )
        return 2 * float(np.sum(np.log1p(lam * z))) - critical

    eps = 1e-9 * float(np.ptp(x))
    low = optimize.brentq(excess, float(x.min()) + eps, mean)
    high = optimize.brentq(excess, mean, float(x.max()) - eps)
    return float(low), float(high)


CANDIDATES: tuple[tuple[str, Bounds], ...] = (
    ("Johnson (1978) modified t", johnson_t),
    ("Chen (1995) modified t", chen_t),
    ("bootstrap-t", bootstrap_t),
    ("symmetric bootstrap-t", symmetric_bootstrap_t),
    ("BCa", bca),
    ("empirical likelihood", empirical_likelihood),
)
