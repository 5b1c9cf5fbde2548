"""Exact power and minimum detectable effect of McNemar's exact test (planning a golden set).

Model: each question independently is *discordant* (the two systems disagree on a binary
metric) with probability ``d``; a discordant question favours B with probability
``q = (1 + delta / d) / 2``, so ``delta = P(B only right) - P(A only right)`` and
``|delta| <= d``.  The number of discordant questions is ``M ~ Bin(n, d)`` and, given ``M = m``,
the number favouring B is ``Bin(m, q)``.  McNemar's exact two-sided test at level alpha rejects
when ``min(b, m - b) <= k_m``, where ``k_m`` is the largest ``k`` with
``2 * P(Bin(m, 1/2) <= k) <= alpha``.  Power is therefore a finite sum, computed exactly
(no simulation) and vectorised over the effect grid:

    power(n, d, delta) = sum_m P(M = m) * [F(k_m; m, q) + S(m - k_m - 1; m, q)]

with ``F``/``S`` the binomial CDF and survival function.  They come from
:mod:`scipy.special` (``bdtr``, ``bdtrc``, ``bdtrik``, log-gamma), not :mod:`scipy.stats`,
whose import alone costs several times the whole ``ragaudit plan`` budget.  The chapter's
planning table was simulated with 600 trials per cell, so its entries carry Monte Carlo noise
of a few points of power; this module's numbers are exact.

Large golden sets cost about the same as small ones.  Beyond :data:`FULL_SUM_N` questions the
sum over ``m`` runs over a window around ``n d`` whose two tails hold less than ``2 e^-40``
of ``P(M = m)`` (Bernstein's inequality: ``P(|M - n d| >= t) <= 2 exp(-t^2 / (2 (s^2 +
t / 3)))`` with ``s^2 = n d (1 - d)``), far below the rounding of the sum; and the minimum
detectable effect is found by bisection on the grid (power grows with ``|delta|``) once the
grid would not fit in :data:`GRID_CELLS` terms.  Sizes up to :data:`MAX_N` (10^7) take
about a second at most; larger ones are refused (at 10^7 questions a 0/1 metric's detectable
effect is already below the grid's 0.01).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import bdtr, bdtrc, bdtrik, gammaln, ndtri, xlog1py, xlogy

from ragaudit.exceptions import InputError

__all__ = [
    "PlanningRow",
    "mcnemar_power",
    "minimum_detectable_effect",
    "planning_table",
]

GRID_STEP = 0.01
#: The largest golden set planned (beyond it: an InputError, not minutes of work).
MAX_N = 10_000_000
#: Up to this n the power sums over every m = 0..n (the historical, bit-identical path).
FULL_SUM_N = 10_000
#: Effects x window terms evaluated at once before the grid search turns to bisection.
GRID_CELLS = 2_000_000
_TAIL_EXPONENT = 40.0  # each tail left out of the window holds < e^-40 of P(M = m)


@dataclass(frozen=True)
class PlanningRow:
    """One cell of the planning table: ``mde`` is None when no effect <= ``disagree`` is
    detectable with the requested power."""

    n: int
    disagree: float
    mde: float | None


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise InputError(f"n: expected a number of questions >= 1, found {n!r}")
    if n > MAX_N:
        raise InputError(
            f"n: expected a number of questions <= {MAX_N:,} (the largest size planned: at "
            f"that size every effect on the 0.01 grid is detectable), found {n!r}"
        )
    return int(n)


def _window(n: int, disagree: float) -> tuple[int, int]:
    """The ``m`` range summed: all of ``0..n`` up to :data:`FULL_SUM_N`, else ``n d +- t``
    with ``t^2 / (2 (s^2 + t/3)) = 40`` (Bernstein), solved for ``t``."""
    if n <= FULL_SUM_N:
        return 0, n
    variance = n * disagree * (1.0 - disagree)
    a = _TAIL_EXPONENT
    t = a / 3.0 + math.sqrt((a / 3.0) ** 2 + 2.0 * a * variance)
    centre = n * disagree
    return max(0, math.floor(centre - t) - 1), min(n, math.ceil(centre + t) + 1)


def _check_probability(value: float, name: str, *, open_low: bool, open_high: bool) -> float:
    ok = isinstance(value, int | float | np.floating) and not isinstance(value, bool)
    if ok:
        low_ok = value > 0 if open_low else value >= 0
        high_ok = value < 1 if open_high else value <= 1
        ok = low_ok and high_ok
    if not ok:
        bounds = f"{'(' if open_low else '['}0, 1{')' if open_high else ']'}"
        raise InputError(f"{name}: expected a number in {bounds}, found {value!r}")
    return float(value)


def binom_cdf(k: np.ndarray, m: np.ndarray, p: np.ndarray | float) -> np.ndarray:
    """``P(Bin(m, p) <= k)`` for integer arrays, 0 below the support and 1 above it."""
    k, m, p = np.broadcast_arrays(np.asarray(k, float), np.asarray(m, float), np.asarray(p))
    inside = (k >= 0) & (k < m)
    with np.errstate(invalid="ignore"):
        values = bdtr(np.where(inside, k, 0).astype(np.int64), np.maximum(m, 1).astype(np.int64), p)
    return np.where(inside, values, np.where(k < 0, 0.0, 1.0))


def binom_sf(k: np.ndarray, m: np.ndarray, p: np.ndarray | float) -> np.ndarray:
    """``P(Bin(m, p) > k)``, 1 below the support and 0 above it."""
    k, m, p = np.broadcast_arrays(np.asarray(k, float), np.asarray(m, float), np.asarray(p))
    inside = (k >= 0) & (k < m)
    with np.errstate(invalid="ignore"):
        values = bdtrc(
            np.where(inside, k, 0).astype(np.int64), np.maximum(m, 1).astype(np.int64), p
        )
    return np.where(inside, values, np.where(k < 0, 1.0, 0.0))


def binom_pmf(m: np.ndarray, n: int, p: float) -> np.ndarray:
    """``P(Bin(n, p) = m)`` through log-gamma (exact to rounding; no scipy.stats)."""
    m = np.asarray(m, dtype=float)
    log_choose = gammaln(n + 1.0) - gammaln(m + 1.0) - gammaln(n - m + 1.0)
    return np.asarray(np.exp(log_choose + xlogy(m, p) + xlog1py(n - m, -p)))


def _critical_counts(m: np.ndarray, alpha: float) -> np.ndarray:
    """Largest ``k`` with ``2 * P(Bin(m, 1/2) <= k) <= alpha`` per ``m`` (-1 if none)."""
    top = int(m.max(initial=0))
    if top <= FULL_SUM_N:
        return _critical_table(top, float(alpha))[m]
    low = int(m.min()) if m.size else 0
    return _critical_range(low, top, float(alpha))[m - low]


@functools.lru_cache(maxsize=64)
def _critical_table(n: int, alpha: float) -> np.ndarray:
    """``_critical_counts`` for ``m = 0..n`` (cached: every 0/1 metric of a comparison asks)."""
    return _critical_range(0, n, alpha)


@functools.lru_cache(maxsize=64)
def _critical_range(low: int, high: int, alpha: float) -> np.ndarray:
    """``_critical_counts`` for ``m = low..high``."""
    m = np.arange(low, high + 1)
    if high <= FULL_SUM_N:
        with np.errstate(invalid="ignore"):
            guess = bdtrik(alpha / 2.0, np.maximum(m, 1).astype(float), 0.5)
        guess = np.nan_to_num(guess, nan=0.0)
    else:  # bdtrik's search costs milliseconds per m this large: the normal quantile instead
        guess = m / 2.0 + 0.5 * np.sqrt(m) * ndtri(alpha / 2.0) - 1.0
    critical = np.floor(guess).astype(np.int64) + 2  # the guess is continuous: start above
    # Step down where 2 F(k) > alpha, then up where k + 1 still fits (a guard: the start is
    # above), re-testing only the m that moved: two passes over the range in practice.
    moving = np.arange(len(m))
    while moving.size:
        k, mm = critical[moving], m[moving]
        too_big = (k >= 0) & (2.0 * binom_cdf(k, mm, 0.5) > alpha)
        moving = moving[too_big]
        critical[moving] -= 1
    moving = np.arange(len(m))
    while moving.size:
        k, mm = critical[moving], m[moving]
        fits = (k + 1 < mm) & (2.0 * binom_cdf(k + 1, mm, 0.5) <= alpha)
        moving = moving[fits]
        critical[moving] += 1
    critical.setflags(write=False)
    return critical


def _power_grid(n: int, disagree: float, effects: np.ndarray, alpha: float) -> np.ndarray:
    """Exact power for each effect in ``effects`` (all with ``|effect| <= disagree``)."""
    if disagree == 0.0:
        return np.zeros(effects.shape)
    low, high = _window(n, disagree)
    m = np.arange(low, high + 1)
    weight = binom_pmf(m, n, disagree)
    critical = _critical_counts(m, alpha)
    favour_b = np.clip((1.0 + effects / disagree) / 2.0, 0.0, 1.0)[:, None]
    reject = binom_cdf(critical, m, favour_b) + binom_sf(m - critical - 1, m, favour_b)
    reject = np.where(critical >= 0, reject, 0.0)
    return np.asarray(np.clip(reject @ weight, 0.0, 1.0))


def mcnemar_power(n: int, disagree: float, effect: float, *, alpha: float = 0.05) -> float:
    r"""Exact power of McNemar's exact two-sided test.

    .. math:: \mathrm{power} = \sum_{m=0}^{n} \binom{n}{m} d^m (1-d)^{n-m}
              \Pr\big[\min(B, m-B) \le k_m\big],\quad B \sim \mathrm{Bin}\big(m,
              \tfrac{1 + \delta/d}{2}\big)

    Parameters
    ----------
    n : int
        Number of questions (>= 1).
    disagree : float in [0, 1]
        Discordance rate ``d``: share of questions where the systems disagree.
    effect : float
        True difference ``delta = P(B only) - P(A only)``; ``|delta| <= d``.
    alpha : float in (0, 1), default 0.05

    Returns
    -------
    float

    Examples
    --------
    With 5 questions that all favour B, the test rejects only if all 5 are discordant
    (p = 2/32 > 0.05 even then, so never at alpha 0.05; at alpha 0.1 it can):

    >>> mcnemar_power(5, 1.0, 1.0)
    0.0
    >>> mcnemar_power(5, 1.0, 1.0, alpha=0.1)
    1.0
    >>> round(mcnemar_power(5, 0.5, 0.5, alpha=0.1), 6) == round(0.5**5, 6)
    True
    """
    n = _check_n(n)
    disagree = _check_probability(disagree, "disagree", open_low=False, open_high=False)
    alpha = _check_probability(alpha, "alpha", open_low=True, open_high=True)
    if not isinstance(effect, int | float | np.floating) or not abs(effect) <= disagree + 1e-12:
        raise InputError(
            f"effect: expected a number with |effect| <= disagree ({disagree}), found {effect!r}"
        )
    return float(_power_grid(n, disagree, np.array([float(effect)]), alpha)[0])


def minimum_detectable_effect(
    n: int, disagree: float, *, power: float = 0.8, alpha: float = 0.05
) -> float | None:
    """Smallest effect on a 0.01 grid that McNemar's exact test detects with ``power``.

    The grid runs from 0.01 up to ``disagree`` (an effect cannot exceed the discordance
    rate).  Returns None when even ``delta = disagree`` falls short: *not detectable*.

    Parameters
    ----------
    n : int
    disagree : float in (0, 1]
    power : float in (0, 1), default 0.8
    alpha : float in (0, 1), default 0.05

    Returns
    -------
    float or None

    Examples
    --------
    >>> minimum_detectable_effect(20, 0.2) is None    # 20 questions: nothing detectable
    True
    >>> minimum_detectable_effect(1000, 0.2)   # exact power at 0.04 is 0.792
    0.05
    """
    n = _check_n(n)
    disagree = _check_probability(disagree, "disagree", open_low=True, open_high=False)
    power = _check_probability(power, "power", open_low=True, open_high=True)
    alpha = _check_probability(alpha, "alpha", open_low=True, open_high=True)
    steps = math.floor(disagree / GRID_STEP + 1e-9)
    if steps == 0:
        return None
    grid = np.round(np.arange(1, steps + 1) * GRID_STEP, 10)
    low, high = _window(n, disagree)
    if len(grid) * (high - low + 1) <= GRID_CELLS:
        powers = _power_grid(n, disagree, grid, alpha)
        reached = np.flatnonzero(powers >= power)
        return float(grid[reached[0]]) if reached.size else None

    # Bisection on the grid: power grows with |delta|, so the first effect reaching the
    # target is found in log2(len(grid)) evaluations instead of len(grid).
    def reaches(i: int) -> bool:
        return bool(_power_grid(n, disagree, grid[i : i + 1], alpha)[0] >= power)

    if not reaches(len(grid) - 1):
        return None
    lo, hi = -1, len(grid) - 1  # reaches(hi) is True; lo is below the grid or falls short
    while hi - lo > 1:
        middle = (lo + hi) // 2
        if reaches(middle):
            hi = middle
        else:
            lo = middle
    return float(grid[hi])


def planning_table(
    ns: Sequence[int],
    disagreements: Sequence[float],
    *,
    power: float = 0.8,
    alpha: float = 0.05,
) -> list[PlanningRow]:
    """Minimum detectable effect for every (n, disagreement) pair, n-major order.

    Examples
    --------
    >>> [row.mde for row in planning_table([100], [0.1, 0.2])]
    [0.09, 0.13]
    """
    if not ns or not disagreements:
        raise InputError("planning table: expected at least one n and one disagreement rate")
    return [
        PlanningRow(int(n), float(d), minimum_detectable_effect(n, d, power=power, alpha=alpha))
        for n in ns
        for d in disagreements
    ]
