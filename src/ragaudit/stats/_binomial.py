"""``P(Bin(count, 1/2) = j)``: the building block of every exact sign-flip distribution."""

from __future__ import annotations

import numpy as np
from scipy.special import comb, gammaln

__all__ = ["binomial_half_pmf", "log_outcomes"]


def binomial_half_pmf(count: int) -> np.ndarray:
    """``P(Bin(count, 1/2) = j)`` for ``j = 0..count`` (scipy.special only, no scipy.stats).

    >>> binomial_half_pmf(2).tolist()
    [0.25, 0.5, 0.25]
    """
    j = np.arange(count + 1)
    if count <= 1000:  # binomial coefficients in floating point times an exact power of 2
        return np.asarray(comb(count, j) * 0.5**count)
    log_pmf = gammaln(count + 1) - gammaln(j + 1) - gammaln(count - j + 1) - count * np.log(2.0)
    return np.exp(log_pmf)


def log_outcomes(counts: np.ndarray) -> float:
    """``log(prod(counts + 1))``, the joint outcomes of binomial counts, without overflow.

    A relative slack of 1e-12 keeps an exact power of two on the right side of a limit.

    >>> bool(log_outcomes(np.array([1, 3])) <= np.log(8))
    True
    """
    return float(np.sum(np.log1p(np.asarray(counts, dtype=float)))) * (1.0 - 1e-12)
