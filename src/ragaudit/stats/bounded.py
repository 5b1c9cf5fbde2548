"""Intervals for the mean of a bounded score that cover for every distribution of the score.

Retrieval and judge scores live in [0, 1], and on a good system most questions sit at one value
(recall 1.0, faithfulness 1.0) while a few deviate, some by a little and some by a lot.  An
interval that estimates the size of the unseen deviations from the seen ones undercovers when
the rare ones are large: the Korn-Graubard MOVER interval this module used before (now in
``benchmarks/coverage_stats.py`` only, for comparison) covered 0.91 on a faithfulness-like
score at n = 50, and 0.47 when 1% of questions score 0 and 4% score 0.95.  So the mean of a
bounded score gets an interval whose coverage is at least the nominal level for *every*
distribution on the range, by betting (Waudby-Smith & Ramdas 2024):

1. Rescale to ``y`` in [0, 1].  For a candidate mean ``m``, a gambler who bets the fraction
   ``c`` of their capital that the mean is above ``m`` multiplies it by
   ``1 + c (y_i / m - 1)`` per question (never negative for ``c < 1``).  If the true mean is
   ``m`` each factor has expectation 1, so the capital ``K_c(m) = prod_i (1 + c (y_i/m - 1))``
   has expectation 1 for independent questions.
2. ``K+(m)`` is the average of ``K_c(m)`` over a fixed grid of bet fractions ``c`` (the
   "diversified" mixture of constant bets; a mixture of expectation-1 capitals has
   expectation 1), ``K-(m)`` the same bet on ``1 - y`` against ``1 - m``.  By Markov's
   inequality ``P(K+(mu) >= 2/alpha) <= alpha/2``, and the same for ``K-``, so
   ``{m : K+(m) < 2/alpha and K-(m) < 2/alpha}`` covers ``mu`` with probability at least
   ``1 - alpha`` whatever the distribution (hedged capital with theta = 1/2).
3. ``K+`` falls and ``K-`` rises with ``m``, so the set is an interval; each end is found by
   bisection (50 halvings, vectorised over rows) and reported at the outer end of its last
   bracket.

Order: the paper's default bets are predictable (each bet learns from the questions before
it), which makes the interval depend on the order of the questions; sorting them first breaks
the guarantee (a bet that has seen the smallest values knows the rest are larger).  Constant
bets make ``K_c`` a product, the same for every order, so the interval is a function of the
multiset of values; the values are sorted before summing only so that floating-point sums
(and so the printed digits) are identical for every order.  The bet grid depends on ``n``
only: ``c = 2^-j`` for ``j = 2..J`` with ``J = ceil(log2(2 sqrt n))`` (small bets for spread
scores in large samples) and ``c = 1 - 2^-k`` for ``k = 1..max(8, J)`` (bets near 1 for scores
that almost all sit at one end).  Beyond 4096 questions the values are first rounded
outward to a grid of 1/4096 (down for ``K+``, up for ``K-``: a smaller capital, so a wider,
still valid interval) and summed by count.

Cost of the guarantee (``benchmarks/coverage_stats.py``, ``docs/guide/stats.md``): measured
coverage is 0.997-1.000 in every scenario, and the interval is 1.35-1.9x as wide as Korn-Graubard
MOVER where that one covered, up to 3.1x on paired differences that all shift together (a
guarantee for every distribution cannot be narrower than what a sample of almost equal values
allows: about ``ln(2/alpha) / n`` of the room on each side).

References
----------
Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by betting.
*Journal of the Royal Statistical Society Series B* 86(1), 1-27 (arXiv:2010.09686).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ragaudit.exceptions import InputError
from ragaudit.stats.intervals import IntervalResult
from ragaudit.stats.resampling import ConfidenceInterval, check_confidence

__all__ = [
    "METHOD",
    "bet_fractions",
    "bounded_mean_bounds",
    "bounded_mean_interval",
    "paired_mean_interval",
]

#: The name every printed row gives this interval.
METHOD = "betting (Waudby-Smith-Ramdas)"

# Halvings of [0, 1] per interval end (2^-50: below the printed digits).
_ITERATIONS = 50
# Beyond this many questions the values are rounded outward to a grid of 1/_BINS.
_BINS = 4096


def bet_fractions(n: int) -> np.ndarray:
    """The fixed grid of bet fractions ``c`` for ``n`` questions (see the module doc).

    >>> bet_fractions(50).tolist()
    [0.0625, 0.125, 0.25, 0.5, 0.75, 0.875, 0.9375, 0.96875, 0.984375, 0.9921875, 0.99609375]
    """
    j = max(2, int(np.ceil(np.log2(2.0 * np.sqrt(max(n, 1))))))
    small = 0.5 ** np.arange(j, 1, -1, dtype=float)
    large = 1.0 - 0.5 ** np.arange(1, max(8, j) + 1, dtype=float)
    return np.concatenate([small, large])


def _log_capital(y: np.ndarray, w: np.ndarray, m: np.ndarray, bets: np.ndarray) -> np.ndarray:
    """``log K+(m)`` per row: log of the mean over ``bets`` of ``prod_i (1 + c (y_i/m - 1))``."""
    step = y / m[:, None] - 1.0
    per_bet = (np.log1p(bets[:, None, None] * step[None]) * w[None]).sum(axis=-1)
    top = per_bet.max(axis=0)
    return top + np.log(np.exp(per_bet - top).mean(axis=0))


def _counted(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``y`` sorted (weights 1) or, past ``_BINS`` columns, rounded down and counted."""
    if y.shape[1] <= _BINS:
        return np.sort(y, axis=1), np.ones_like(y)
    index = np.minimum(np.floor(y * _BINS), _BINS).astype(np.int64)
    counts = np.stack([np.bincount(row, minlength=_BINS + 1) for row in index]).astype(float)
    grid = np.broadcast_to(np.arange(_BINS + 1, dtype=float) / _BINS, counts.shape)
    return grid, counts


def _bisect_lower(
    log_capital: Callable[[np.ndarray], np.ndarray], rows: int, threshold: float
) -> np.ndarray:
    """Per row: the smallest ``m`` in [0, 1] that ``log_capital(m) >= threshold`` rejects
    not, by :data:`_ITERATIONS` halvings (``log_capital`` falls with ``m``; it takes one
    candidate per row), reported at the lower end of the last bracket."""
    low, high = np.zeros(rows), np.ones(rows)
    for _ in range(_ITERATIONS):
        mid = 0.5 * (low + high)
        reject = log_capital(mid) >= threshold
        low = np.where(reject, mid, low)
        high = np.where(reject, high, mid)
    return low


def _lower_limits(y: np.ndarray, threshold: float) -> np.ndarray:
    """Per row of ``y`` in [0, 1]: the smallest ``m`` that ``K+(m) >= threshold`` rejects not."""
    values, weights = _counted(y)
    bets = bet_fractions(y.shape[1])
    return _bisect_lower(lambda m: _log_capital(values, weights, m, bets), y.shape[0], threshold)


def bounded_mean_bounds(
    x: np.ndarray, low: float, high: float, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised kernel of :func:`bounded_mean_interval`: one interval per row of ``x``.

    ``x`` has shape ``(rows, n)`` with values in ``[low, high]``.
    """
    x = np.atleast_2d(np.asarray(x, dtype=float))
    y = np.clip((x - low) / (high - low), 0.0, 1.0)
    threshold = float(np.log(2.0 / (1.0 - confidence)))
    lower = _lower_limits(y, threshold)
    upper = 1.0 - _lower_limits(1.0 - y, threshold)
    return low + (high - low) * lower, low + (high - low) * upper


def _check_values(values: Sequence[float] | np.ndarray, low: float, high: float) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise InputError(f"values: expected a non-empty 1-D sequence, found shape {x.shape}")
    if not low < high:
        raise InputError(f"bounds: expected low < high, found ({low!r}, {high!r})")
    tolerance = 1e-9 * (high - low)
    bad = np.flatnonzero(~((x >= low - tolerance) & (x <= high + tolerance)))
    if bad.size:
        raise InputError(
            f"values: expected numbers in [{low:g}, {high:g}], found {float(x[bad[0]])!r} at "
            f"position {int(bad[0])}; pass bounds=(low, high) for another scale"
        )
    return np.clip(x, low, high)


def bounded_mean_interval(
    values: Sequence[float] | np.ndarray,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    confidence: float = 0.95,
) -> IntervalResult:
    r"""Confidence interval for the mean of a score bounded in ``bounds`` (see the module doc).

    With ``y_i = (x_i - low) / (high - low)``, bet fractions ``c`` in :func:`bet_fractions`
    (``C`` of them) and :math:`\alpha = 1 - \text{confidence}`:

    .. math::

        K^+(m) = \frac1C \sum_c \prod_i \bigl(1 + c\,(y_i/m - 1)\bigr), \qquad
        K^-(m) = \frac1C \sum_c \prod_i \Bigl(1 + c\,\bigl(\tfrac{1-y_i}{1-m} - 1\bigr)\Bigr),

    and the interval is :math:`\{m : K^+(m) < 2/\alpha,\ K^-(m) < 2/\alpha\}` mapped back to
    ``bounds``: coverage at least ``confidence`` for every distribution on ``bounds``
    (Waudby-Smith & Ramdas 2024, hedged capital with a mixture of constant bets), the same for
    every order of the values, and always containing the sample mean.

    Parameters
    ----------
    values : sequence of float
        Per-question scores, all within ``bounds``.
    bounds : (float, float), default (0, 1)
        The range the score can take (a difference of two [0, 1] scores: (-1, 1)).
    confidence : float, default 0.95

    Returns
    -------
    IntervalResult
        ``method`` is ``"betting (Waudby-Smith-Ramdas)"``.

    References
    ----------
    Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
    betting. *JRSS-B* 86(1), 1-27.

    Examples
    --------
    Every one of 50 questions scored 1: ``K-`` never grows, so the upper end is 1; the lower
    end is where ``K+(m) = 40`` (Clopper-Pearson, exact for 0/1 values only, gives 0.9289).

    >>> r = bounded_mean_interval([1.0] * 50)
    >>> round(r.confidence_interval.low, 4), r.confidence_interval.high
    (0.9167, 1.0)

    Forty-nine at 1 and one at 0.5 (mean 0.99):

    >>> r = bounded_mean_interval([1.0] * 49 + [0.5])
    >>> round(r.statistic, 3), [round(v, 3) for v in vars(r.confidence_interval).values()]
    (0.99, [0.904, 1.0])
    """
    low, high = (float(b) for b in bounds)
    x = _check_values(values, low, high)
    confidence = check_confidence(confidence)
    lower, upper = bounded_mean_bounds(x[None, :], low, high, confidence)
    return IntervalResult(
        statistic=float(np.mean(x)),
        confidence_interval=ConfidenceInterval(float(lower[0]), float(upper[0])),
        confidence=confidence,
        method=METHOD,
    )


def paired_mean_interval(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    confidence: float = 0.95,
) -> IntervalResult:
    r"""Interval for the mean paired difference ``mean(b - a)`` of a score bounded in ``bounds``.

    :func:`bounded_mean_interval` of :math:`d_i = b_i - a_i` on ``(low - high, high - low)``:
    valid for every joint distribution of the pairs.  No question favouring A still leaves
    room for one in the population, so the interval never ends at exactly 0 the way a
    bootstrap does.

    Parameters
    ----------
    a, b : sequence of float
        Per-question scores of runs A and B on the same questions.
    bounds : (float, float), default (0, 1)
        Range of the score.
    confidence : float, default 0.95

    Returns
    -------
    IntervalResult

    References
    ----------
    See :func:`bounded_mean_interval` (Waudby-Smith & Ramdas 2024).

    Examples
    --------
    One of 42 questions gained 0.5, none lost (the bootstrap gives ``[+0.000, +0.036]``):

    >>> r = paired_mean_interval([0.5] + [1.0] * 41, [1.0] * 42)
    >>> round(r.statistic, 4), [round(v, 3) for v in vars(r.confidence_interval).values()]
    (0.0119, [-0.09, 0.113])
    """
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape:
        raise InputError(
            f"expected two sequences of equal length, found {a_arr.size} and {b_arr.size}"
        )
    low, high = (float(v) for v in bounds)
    _check_values(a_arr, low, high)
    _check_values(b_arr, low, high)
    width = high - low
    return bounded_mean_interval(b_arr - a_arr, bounds=(-width, width), confidence=confidence)
