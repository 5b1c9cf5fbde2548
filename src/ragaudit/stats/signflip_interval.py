r"""The interval of a mean paired difference that inverts the sign-flip test (its own verdict).

The verdict of ``compare`` is the paired sign-flip test of :math:`\delta = 0`
(:mod:`ragaudit.stats.permutation`).  The interval printed beside it is the set of shifts
:math:`\delta` that the *same* test does not reject,

.. math:: \mathrm{CI} = \{\delta : p(\delta) \ge \alpha\},\qquad
          p(\delta) = \Pr_s\Big[\big|\textstyle\sum_g s_g (x_g - \delta w_g)\big|
          \ge \big|\sum_g (x_g - \delta w_g)\big|\Big],

over uniform signs :math:`s \in \{-1, 1\}^G`, where an *observation* ``g`` is one question
(:math:`x_g = d_g`, :math:`w_g = 1`) or, with clusters, one whole cluster (:math:`x_g` the sum
of its differences, :math:`w_g` its number of questions: the cluster sign-flip test of Canay,
Romano & Shaikh 2017).  So :math:`0 \notin \mathrm{CI} \iff p(0) < \alpha`: the interval
excludes 0 exactly when the test rejects, by construction.

Studentizing changes nothing here: :math:`\sum_g s_g^2 (x_g - \delta w_g)^2` does not depend
on the signs, so the studentized statistic (Janssen 1997; Chung & Romano 2013; DiCiccio &
Romano 2017) is a monotone function of :math:`|\sum_g s_g (x_g - \delta w_g)|` for every
pattern, and the studentized and plain sign-flip tests give the same p-value at every
:math:`\delta`.  The randomization distribution's variance is the sample's second moment about
:math:`\delta`, which is why the test stays asymptotically valid for a mean even when the
differences are not symmetric (Janssen 1997).

**Computed without a search.**  With :math:`A = \sum_g s_g x_g`, :math:`B = \sum_g s_g w_g`,
:math:`D = \sum_g x_g` and :math:`n = \sum_g w_g`, a pattern counts at :math:`\delta` when
:math:`q(\delta) = (A - \delta B)^2 - (D - n\delta)^2 \ge 0`.  :math:`q` is a concave quadratic
(:math:`B^2 \le n^2`) with :math:`q(D/n) = (A - BD/n)^2 \ge 0`, so every pattern counts on one
interval :math:`[l_s, h_s]` that contains the point estimate :math:`\bar d = D/n` (a pattern
with :math:`|B| = n` counts everywhere).  Hence :math:`p(\delta)` rises monotonely up to
:math:`\bar d` and falls after it (no bisection, no non-monotone p to worry about), and

.. math:: L = \min\{\delta : \textstyle\sum_s P(s)\,[l_s \le \delta] \ge \alpha\},\qquad
          H = \max\{\delta : \textstyle\sum_s P(s)\,[h_s \ge \delta] \ge \alpha\}:

weighted order statistics of the roots.

**Exact or Monte Carlo.**  Observations with the same :math:`(x_g, w_g)` are interchangeable:
with :math:`c_j` of value :math:`(v_j, u_j)`, :math:`A = \sum_j v_j (2K_j - c_j)` and
:math:`B = \sum_j u_j (2K_j - c_j)` with independent :math:`K_j \sim \mathrm{Bin}(c_j, 1/2)`.
When :math:`\prod_j (c_j + 1) \le 2^{16}` (always with at most 16 observations; a uniform
shift of 54 questions has 55 outcomes) every outcome is enumerated with its probability and the
interval is exact.  Otherwise ``n_permutations`` random sign patterns, the same patterns for
every :math:`\delta` (and the identity pattern, the add-one rule of Phipson & Smyth 2010): the
interval is then exact for those draws, and :math:`p(0)` is the Monte Carlo p-value.

What it assumes: the test of :math:`\delta = 0` is exact whenever A and B are exchangeable on
each question (the systems do not differ).  For :math:`\delta \ne 0` it treats
:math:`d - \delta` as symmetric (a shift); for a mean of skewed differences the coverage is
asymptotic, which is why ``compare`` also takes in the inverted sign-flip test of Hall's
(1992) skew-corrected statistic (:mod:`ragaudit.stats.hall_signflip`; skewed gains at n = 20
covered 0.887 without it).  Populations with rare large changes that a sample does not show
make any interval built from the sample too short, so a sample that may hide one (most
questions unchanged, only small changes seen) also takes in the betting interval
(:mod:`ragaudit.stats.unseen_tail`; ``benchmarks/coverage_stats.py`` measures both).

References
----------
Janssen, A. (1997). Studentized permutation tests for non-i.i.d. hypotheses and the
generalized Behrens-Fisher problem. *Statistics & Probability Letters* 36, 9-21.
Chung, E. & Romano, J. P. (2013). Exact and asymptotically robust permutation tests.
*Annals of Statistics* 41(2), 484-507.
DiCiccio, C. J. & Romano, J. P. (2017). Robust permutation tests for correlation and
regression coefficients. *JASA* 112(519), 1211-1220.
Canay, I. A., Romano, J. P. & Shaikh, A. M. (2017). Randomization tests under an approximate
symmetry assumption. *Econometrica* 85(3), 1013-1030.
Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero. *SAGMB* 9(1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import stdtrit

from ragaudit.exceptions import InputError
from ragaudit.stats._binomial import log_outcomes as _log_outcomes
from ragaudit.stats.bounded import bounded_mean_bounds
from ragaudit.stats.hall_signflip import hall_asymptotic_bounds, hall_bounds
from ragaudit.stats.permutation import (
    EXACT_VALUES,
    MONTE_CARLO,
    _binomial_half_pmf,
    flip_sums,
)
from ragaudit.stats.resampling import (
    ConfidenceInterval,
    SeedLike,
    as_generator,
    check_confidence,
    check_count,
)
from ragaudit.stats.unseen_tail import TAIL_METHOD, may_hide_tail
from ragaudit.stats.verdicts import min_differing

__all__ = [
    "CLUSTER_METHOD",
    "FEW_METHOD",
    "METHOD",
    "TAIL_METHOD",
    "SignFlipInterval",
    "exact_affordable",
    "flip_sums",
    "inverted_bounds",
    "inverted_interval",
    "reconcile",
    "signflip_bounds",
    "signflip_interval",
    "with_hall",
    "with_t",
]

#: The name every printed row gives this interval.
METHOD = "sign-flip inversion"
#: ... and with clusters.
CLUSTER_METHOD = "cluster sign-flip inversion"
#: Too few questions differ for the sign-flip test to reject anything: its inversion is then
#: widened to contain the betting interval (valid for every distribution on [-1, 1]).
FEW_METHOD = "sign-flip inversion widened to betting (too few differ)"

# Joint outcomes enumerated exactly (one per combination of counts of each distinct value).
MAX_OUTCOMES = 1 << 16
# Roots within this relative distance count as ties (sums of the same numbers in another order
# differ by rounding; an exact tie must count as one, as the exact p-value counts it).
_TIE = 1e-9


@dataclass(frozen=True)
class SignFlipInterval:
    """Result of :func:`signflip_interval`.

    Attributes
    ----------
    statistic : float
        ``sum(x) / sum(w)``: the mean difference.
    confidence_interval : ConfidenceInterval
        ``{delta : p(delta) >= alpha}``, clipped to ``bounds``.
    pvalue : float
        ``p(0)``: the two-sided sign-flip p-value of "no difference" from the same patterns.
    exact : bool
        Every sign pattern accounted for (joint outcomes of the distinct values).
    method : str
        :data:`METHOD` or :data:`CLUSTER_METHOD`.
    p_method : str
        ``"exact (distinct values)"`` or ``"Monte Carlo"``.
    n_patterns : int
        Joint outcomes enumerated, or random patterns drawn.
    n_observations : int
        Questions, or clusters.
    """

    statistic: float
    confidence_interval: ConfidenceInterval
    pvalue: float
    exact: bool
    method: str
    p_method: str
    n_patterns: int
    n_observations: int


def exact_affordable(x: np.ndarray, w: np.ndarray) -> bool:
    """Whether the joint outcomes of the distinct ``(x, w)`` number at most MAX_OUTCOMES."""
    if np.all(w == w[0]):  # one question per observation: the distinct x alone (a 1-D sort)
        _, counts = np.unique(x, return_counts=True)
    else:
        _, counts = np.unique(np.column_stack([x, w]), axis=0, return_counts=True)
    return bool(_log_outcomes(counts) <= np.log(MAX_OUTCOMES))


def _outcomes(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Every joint outcome ``(A, B, probability)`` of the distinct ``(x, w)``, or None."""
    pairs, counts = np.unique(np.column_stack([x, w]), axis=0, return_counts=True)
    if _log_outcomes(counts) > np.log(MAX_OUTCOMES):
        return None
    a_sum, b_sum, prob = np.zeros(1), np.zeros(1), np.ones(1)
    for (value, weight), count in zip(pairs.tolist(), counts.tolist(), strict=True):
        u = 2.0 * np.arange(count + 1) - count
        a_sum = (a_sum[:, None] + value * u[None, :]).ravel()
        b_sum = (b_sum[:, None] + weight * u[None, :]).ravel()
        prob = (prob[:, None] * _binomial_half_pmf(count)[None, :]).ravel()
    return a_sum, b_sum, prob


def _roots(
    a: np.ndarray, b: np.ndarray, total: float, n: float, mean: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per pattern, the interval ``[l, h]`` of ``delta`` where it counts (contains ``mean``)."""
    curvature = n * n - b * b  # -(coefficient of delta^2), >= 0
    beta = total * n - a * b
    constant = a * a - total * total
    everywhere = curvature <= 1e-12 * n * n
    safe = np.where(everywhere, 1.0, curvature)
    disc = np.sqrt(np.maximum(beta * beta + curvature * constant, 0.0))
    # Stable roots of -curvature * delta^2 + 2 beta delta + constant = 0.
    with np.errstate(divide="ignore", invalid="ignore"):
        big = np.where(beta >= 0, (beta + disc) / safe, (beta - disc) / safe)
        small = np.where(big != 0, -constant / (safe * big), 0.0)
    low = np.minimum(np.minimum(big, small), mean)
    high = np.maximum(np.maximum(big, small), mean)
    slack = _TIE * (1.0 + np.abs(low) + np.abs(high))
    low = np.where(everywhere, -np.inf, low - slack)
    high = np.where(everywhere, np.inf, high + slack)
    return low, high


def inverted_bounds(
    low: np.ndarray, high: np.ndarray, weight: np.ndarray, alpha: float
) -> tuple[float, float, float]:
    """``(L, H, p(0))`` from each pattern's interval and probability (weights sum to 1)."""
    need = alpha * (1.0 - 1e-12)
    order = np.argsort(low, kind="stable")
    cum = np.cumsum(weight[order])
    lower = float(low[order][min(int(np.searchsorted(cum, need)), low.size - 1)])
    order = np.argsort(-high, kind="stable")
    cum = np.cumsum(weight[order])
    upper = float(high[order][min(int(np.searchsorted(cum, need)), high.size - 1)])
    p0 = float(min(1.0, weight[(low <= 0.0) & (high >= 0.0)].sum()))
    return lower, upper, p0


def with_t(part: np.ndarray, low: float, high: float, confidence: float) -> tuple[float, float]:
    """Widen to contain Student's t interval: a shift is ruled out only when both tests reject.

    Where most differences share one value just beside the truth (precision@k when k doubles:
    85% at -1/6), the sign-flip test rejects every shift on the far side of that value unless
    a sample happens to show enough of the rarer values there: it covered 0.922 in that
    scenario, the t interval 0.948 (``benchmarks/coverage_stats.py``).  Elsewhere the two
    nearly coincide, so the union costs little width.
    """
    size = part.size
    if size < 2:
        return low, high
    spread = float(np.std(part, ddof=1))
    half = float(stdtrit(size - 1, 0.5 + confidence / 2)) * spread / np.sqrt(size)
    mean = float(part.mean())
    return min(low, mean - half), max(high, mean + half)


def with_hall(
    d: np.ndarray,
    low: float,
    high: float,
    alpha: float,
    n_permutations: int,
    rng: np.random.Generator | None,
) -> tuple[float, float]:
    """Widen to contain the inverted sign-flip test of Hall's skew-corrected statistic and
    Hall's closed-form interval.

    Where every question gains a skewed amount (Beta(0.3, 3): skewness 2.2) the plain
    inversion and t miss above the upper end (0.887 at n = 20); Hall's statistic
    (:mod:`ragaudit.stats.hall_signflip`) removes the skewness and its inversion reaches far
    enough.  On symmetric differences the two nearly coincide, so the union costs little width.
    """
    h_low, h_high, _ = hall_bounds(
        d, alpha, n_permutations, rng if rng is not None else np.random.default_rng(0)
    )
    # and Hall's closed form, its large-sample twin: the randomization version alone covered
    # 0.932 on the skewed gains at n = 20 (500 datasets), the closed form 0.948 (2,000)
    a_low, a_high = hall_asymptotic_bounds(d, 1.0 - alpha)
    return min(low, h_low, a_low), max(high, h_high, a_high)


def reconcile(low: float, high: float, mean: float, rejects: bool) -> tuple[float, float]:
    """Make the interval agree with the verdict's test at 0.

    Only a t interval or a betting interval (:mod:`ragaudit.stats.unseen_tail`) that reaches
    past 0 while the sign-flip test rejects 0, or Monte Carlo ends beside an exact lattice p
    within Monte Carlo error of alpha, can disagree.  A rejected 0 inside the interval becomes
    an open end at 0 (the smallest float beyond it, printed as 0.000); an accepted 0 outside it
    is added.
    """
    inside = low <= 0.0 <= high
    if rejects and inside:
        tiny = float(np.nextafter(0.0, 1.0))
        return (tiny, high) if mean > 0 else (low, -tiny)
    if not rejects and not inside:
        return min(low, 0.0), max(high, 0.0)
    return low, high


def inverted_interval(
    d: np.ndarray,
    *,
    bounded: bool,
    confidence: float,
    n_permutations: int,
    rng: np.random.Generator | None,
    flips: np.ndarray | None = None,
    exact_p: float | None = None,
) -> tuple[float, float, float, bool, str]:
    """The interval ``compare`` prints for the mean of paired differences ``d`` (one policy).

    The sign-flip inversion (:func:`signflip_bounds`), widened to contain Student's t
    (:func:`with_t`) and the inverted sign-flip test of Hall's skew-corrected statistic
    (:func:`with_hall`), made to agree with the verdict's p at 0 (``exact_p`` when the exact
    lattice p exists, else its own p(0); :func:`reconcile`, applied last), clipped to
    [-1, 1] when ``bounded``.  For ``bounded`` differences it is also widened to contain the
    betting interval (valid for every distribution on [-1, 1]) when fewer than
    :func:`~ragaudit.stats.verdicts.min_differing` questions differ (no result could be
    significant: :data:`FEW_METHOD`) or when the sample may hide a rare large change
    (:func:`~ragaudit.stats.unseen_tail.may_hide_tail`: most questions unchanged, only small
    changes seen; :data:`~ragaudit.stats.unseen_tail.TAIL_METHOD`).  A widened interval that
    reaches past 0 while the exact test rejects 0 ends at 0, open (:func:`reconcile`).
    Returns ``(low, high, p(0), exact, method)``.
    """
    alpha = 1.0 - confidence
    ones = np.ones(d.size)
    low, high, p0, exact, _ = signflip_bounds(d, ones, alpha, n_permutations, rng, flips)
    low, high = with_t(d, low, high, confidence)
    low, high = with_hall(d, low, high, alpha, n_permutations, rng)
    method = METHOD
    if bounded:
        if np.count_nonzero(d) < min_differing(alpha):
            method = FEW_METHOD
        elif may_hide_tail(d):
            method = TAIL_METHOD
        if method != METHOD:
            b_low, b_high = bounded_mean_bounds(d[None, :], -1.0, 1.0, confidence)
            low, high = min(low, float(b_low[0])), max(high, float(b_high[0]))
    # after every widening: the interval excludes 0 exactly when the verdict's p < alpha
    low, high = reconcile(low, high, float(d.mean()), (p0 if exact_p is None else exact_p) < alpha)
    if bounded:
        low, high = max(low, -1.0), min(high, 1.0)
    return low, high, p0, exact, method


def _check_bounds(bounds: tuple[float, float] | None) -> tuple[float, float]:
    if bounds is None:
        return -np.inf, np.inf
    low, high = (float(v) for v in bounds)
    if not low < high:
        raise InputError(f"bounds: expected low < high, found ({low!r}, {high!r})")
    return low, high


def signflip_bounds(
    x: np.ndarray,
    w: np.ndarray,
    alpha: float,
    n_permutations: int,
    rng: np.random.Generator | None,
    flips: np.ndarray | None = None,
) -> tuple[float, float, float, bool, int]:
    """Kernel of :func:`signflip_interval` on observations ``x`` with weights ``w``.

    ``flips`` (shape ``(R, 2)``: the flipped sums of ``x`` and of ``w``) supplies shared random
    patterns; otherwise they are drawn from ``rng`` when the exact enumeration is too large.
    Returns ``(L, H, p(0), exact, patterns)``.
    """
    total, n = float(x.sum()), float(w.sum())
    mean = total / n
    outcomes = _outcomes(x, w) if flips is None else None
    if outcomes is not None:
        a, b, weight = outcomes
        exact, patterns = True, int(a.size)
    else:
        if flips is None:
            if rng is None:
                raise ValueError("rng is needed for Monte Carlo sign flips")
            flips = flip_sums(np.column_stack([x, w]), n_permutations, rng)
        # The identity pattern (counts everywhere) joins the draws: the add-one p-value.
        a = np.concatenate([[total], flips[:, 0]])
        b = np.concatenate([[n], flips[:, 1]])
        weight = np.full(a.size, 1.0 / a.size)
        exact, patterns = False, int(flips.shape[0])
    low, high = _roots(a, b, total, n, mean)
    lower, upper, p0 = inverted_bounds(low, high, weight, alpha)
    return lower, upper, p0, exact, patterns


def signflip_interval(
    d: Sequence[float] | np.ndarray,
    *,
    clusters: Sequence[Any] | np.ndarray | None = None,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = (-1.0, 1.0),
    n_permutations: int = 10_000,
    rng: SeedLike | None = 0,
) -> SignFlipInterval:
    r"""Interval of ``mean(d)`` that inverts the (cluster) sign-flip test (module doc).

    .. math:: \mathrm{CI} = \{\delta : p(\delta) \ge \alpha\} \cup
              \bar d \pm t_{n-1} s/\sqrt n,\quad 0 \notin \mathrm{CI} \iff p(0) < \alpha

    Without clusters the interval also contains Student's t interval (:func:`with_t`) and the
    inverted sign-flip test of Hall's skew-corrected statistic (:func:`with_hall`), as
    ``compare`` prints it; :func:`reconcile` keeps the equivalence with the test at 0.

    Parameters
    ----------
    d : sequence of float, shape (n,)
        Per-question paired differences ``b - a``.
    clusters : sequence, shape (n,), optional
        Each question's cluster: whole clusters flip together (Canay, Romano & Shaikh 2017).
    confidence : float, default 0.95
    bounds : (float, float) or None, default (-1, 1)
        Range of ``d`` (differences of scores in [0, 1]); the interval is clipped to it.  None
        leaves an end infinite when too few patterns exist to reject any shift.
    n_permutations : int, default 10000
        Random patterns when more than :data:`MAX_OUTCOMES` joint outcomes exist.
    rng : int or numpy.random.Generator, default 0

    Returns
    -------
    SignFlipInterval

    Examples
    --------
    54 questions that all gain 0.08: 55 joint outcomes, exact.  p(0) is ``2 / 2**54``, and the
    interval is the single point 0.08 widened only by rounding: a constant shift is all a
    sample of equal differences allows under the test.

    >>> r = signflip_interval([0.08] * 54)
    >>> r.pvalue == 2 * 0.5**54, r.p_method, round(r.confidence_interval.low, 6)
    (True, 'exact (distinct values)', 0.08)

    Differences of mixed sign: the interval excludes 0 exactly when p(0) < 0.05.

    >>> d = [0.3, 0.1, 0.2, -0.05, 0.25, 0.15, 0.0, 0.4, 0.1, -0.1]
    >>> r = signflip_interval(d)
    >>> round(r.pvalue, 4), [round(v, 3) for v in vars(r.confidence_interval).values()]
    (0.0352, [0.02, 0.25])
    """
    confidence = check_confidence(confidence)
    n_permutations = check_count(n_permutations, "permutations")
    low_bound, high_bound = _check_bounds(bounds)
    values = np.asarray(d, dtype=float)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise InputError(
            f"d: expected a non-empty 1-D sequence of finite numbers, found shape {values.shape}"
        )
    if clusters is None:
        x, w, method = values, np.ones_like(values), METHOD
    else:
        labels = np.asarray(clusters)
        if labels.shape != values.shape:
            raise InputError(
                f"clusters: expected one label per value ({values.size}), found {labels.shape}"
            )
        _, codes = np.unique(labels, return_inverse=True)
        codes = codes.reshape(-1)
        x = np.bincount(codes, weights=values)
        w = np.bincount(codes).astype(float)
        method = CLUSTER_METHOD
    alpha = 1.0 - confidence
    generator = as_generator(rng)
    lower, upper, p0, exact, patterns = signflip_bounds(x, w, alpha, n_permutations, generator)
    if clusters is None:
        lower, upper = with_t(values, lower, upper, confidence)
        lower, upper = with_hall(values, lower, upper, alpha, n_permutations, generator)
        lower, upper = reconcile(lower, upper, values.mean(), p0 < alpha)
    return SignFlipInterval(
        statistic=float(values.mean()),
        confidence_interval=ConfidenceInterval(
            float(np.clip(lower, low_bound, high_bound)),
            float(np.clip(upper, low_bound, high_bound)),
        ),
        pvalue=p0,
        exact=exact,
        method=method,
        p_method=EXACT_VALUES if exact else MONTE_CARLO,
        n_patterns=patterns,
        n_observations=int(x.size),
    )
