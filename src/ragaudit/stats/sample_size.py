"""How many questions a comparison needs: the reverse of the power table, with clustering.

:func:`questions_needed` inverts the exact power of McNemar's test (``stats.power``): given the
effect to detect and how often two systems disagree, it returns the smallest golden set that
reaches the target power, then inflates it by a design effect when questions come in
correlated clusters.  :func:`design_effect_from_icc` gives the design effect of equal clusters.

References
----------
.. [1] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640, section 5 (power
   analysis; clustered questions need ``n * deff``).
.. [2] Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust
   inference. *J. Human Resources* 50(2), eq. (6) (Moulton factor ``1 + (m - 1) rho``).
.. [3] Connor, R. J. (1987). Sample size for testing differences in proportions for the
   paired-sample design. *Biometrics* 43(1), 207-211.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ragaudit.exceptions import InputError
from ragaudit.stats.power import MAX_N, mcnemar_power

__all__ = ["SampleSize", "design_effect_from_icc", "questions_needed"]

_MAX_N = MAX_N  # the largest golden set planned: 10^7 (about a second of work at most)


@dataclass(frozen=True)
class SampleSize:
    """Result of :func:`questions_needed`.

    Attributes
    ----------
    n : int or None
        Questions needed, including the design effect (None: not reachable below the cap).
    n_independent : int or None
        Questions needed if they were independent.
    power : float
        Exact power at ``n_independent``.
    effect, disagree, target_power, alpha, design_effect : float
    """

    n: int | None
    n_independent: int | None
    power: float
    effect: float
    disagree: float
    target_power: float
    alpha: float
    design_effect: float


def design_effect_from_icc(cluster_size: float, icc: float) -> float:
    r"""Design effect of clusters of (average) size ``m`` with intra-cluster correlation ``rho``.

    .. math:: \mathrm{deff} = 1 + (m - 1)\,\rho

    Examples
    --------
    >>> design_effect_from_icc(5, 0.3)
    2.2
    """
    if not cluster_size >= 1:
        raise InputError(f"cluster size: expected a number >= 1, found {cluster_size!r}")
    if not 0.0 <= icc <= 1.0:
        raise InputError(f"icc: expected a number between 0 and 1, found {icc!r}")
    return round(1.0 + (cluster_size - 1.0) * icc, 12)


def questions_needed(
    effect: float,
    disagree: float,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    design_effect: float = 1.0,
) -> SampleSize:
    r"""Smallest golden set whose McNemar exact test detects ``effect`` with ``power``.

    With :math:`\mathrm{pow}(n)` the exact power of :func:`~ragaudit.stats.mcnemar_power`,

    .. math:: n_{\text{indep}} = \min\{n : \mathrm{pow}(n) \ge 1 - \beta\},
              \qquad n = \lceil n_{\text{indep}} \cdot \mathrm{deff} \rceil

    found by doubling and bisection (the exact power saw-tooths slightly with ``n``, so the
    bisection returns a first crossing, checked to reach the target).  For orientation,
    Connor's normal approximation is
    :math:`n \approx (z_{1-\alpha/2}\sqrt{d} + z_{1-\beta}\sqrt{d - \delta^2})^2/\delta^2`.

    Parameters
    ----------
    effect : float
        Difference to detect, ``delta = P(B only) - P(A only)``, ``0 < |delta| <= disagree``.
    disagree : float in (0, 1]
        Share of questions where the systems differ.
    power, alpha : float in (0, 1)
    design_effect : float >= 1, default 1
        Variance inflation from clustered questions (``1 + (m - 1) rho``, or observed).

    Returns
    -------
    SampleSize

    References
    ----------
    Miller (2024), arXiv:2411.00640, section 5; Cameron & Miller (2015); Connor (1987).

    Examples
    --------
    >>> result = questions_needed(0.1, 0.2)
    >>> result.n, round(result.power, 3)
    (168, 0.801)
    >>> questions_needed(0.1, 0.2, design_effect=2.2).n   # ceil(168 * 2.2)
    370
    """
    delta = abs(float(effect))
    if not 0.0 < delta <= disagree <= 1.0:
        raise InputError(
            f"effect: expected 0 < |effect| <= disagree <= 1, found effect {effect!r} and "
            f"disagree {disagree!r} (an effect cannot exceed the share of questions that differ)"
        )
    if not 0.0 < power < 1.0 or not 0.0 < alpha < 1.0:
        raise InputError(f"power, alpha: expected numbers in (0, 1), found {power!r}, {alpha!r}")
    if not design_effect >= 1.0:
        raise InputError(f"design effect: expected a number >= 1, found {design_effect!r}")

    def reaches(n: int) -> bool:
        return mcnemar_power(n, disagree, delta, alpha=alpha) >= power

    high = 8
    while not reaches(high):
        if high >= _MAX_N:
            return SampleSize(None, None, float("nan"), delta, disagree, power, alpha,
                              design_effect)  # fmt: skip
        high = min(2 * high, _MAX_N)
    low = high // 2  # reaches(low) is False (or low is below the first bracket)
    while high - low > 1:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle
    return SampleSize(
        n=math.ceil(high * design_effect - 1e-9),
        n_independent=high,
        power=mcnemar_power(high, disagree, delta, alpha=alpha),
        effect=delta,
        disagree=disagree,
        target_power=power,
        alpha=alpha,
        design_effect=design_effect,
    )
