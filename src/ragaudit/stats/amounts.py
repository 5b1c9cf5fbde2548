r"""The interval of a mean amount per question (dollars): non-negative, often skewed, often 0.

Student's t under-covers skewed amounts (issue 32: 0.870 on lognormal costs with sigma = 1 at
n = 20, 0.826 with sigma = 2 at n = 500), and a sample whose every question cost $0 gave
``[$0, $0]``, which happens in 37% of samples of 20 questions when 5% of questions are paid.
No finite interval covers the mean of every non-negative distribution (Bahadur & Savage
1956: a rare enough, large enough amount moves the mean without showing in the sample), so
the interval here is measured, not guaranteed: it is the hull of three intervals that each fail
where another holds (``benchmarks/coverage_amounts.py``):

* Hall (1992)'s skew-corrected t interval, :math:`\bar x - s\,g^{-1}(\pm t_{n-1}/\sqrt n)`
  with :math:`g^{-1}(v) = \frac{3}{\hat\gamma}[(1 + \hat\gamma(v - \hat\gamma/(6n)))^{1/3} - 1]`:
  nonparametric, it covers moderate skew (gamma, Pareto tails) but not a lognormal sigma of 2;
* the two-part lognormal interval of Zhou & Tu (2000): with ``m`` of ``n`` questions paid and
  their log amounts of mean :math:`\bar y` and variance :math:`s^2`,
  :math:`\theta = \log(m/n) + \bar y + s^2/2` (the log of the mean) and

  .. math:: \mathrm{Var}\,\hat\theta = \frac{1 - m/n}{m} + \frac{s^2}{m}
            + \frac{s^4}{2(m - 1)},

  the interval :math:`\exp(\hat\theta \pm t_{m-1} \sqrt{\mathrm{Var}})`: it covers lognormal
  tails and questions that cost nothing, not Pareto tails;
* the symmetric t interval with Hall (1992b)'s Edgeworth correction of order :math:`1/n`,
  :math:`\bar x \pm q\,\hat\sigma/\sqrt n` (:math:`\hat\sigma^2 = \sum(x_i - \bar x)^2/n`)
  with :math:`q = z - p_2(z)/n`, :math:`z = \Phi^{-1}((1 + c)/2)` and

  .. math:: p_2(z) = z\Big[\frac{\hat\kappa}{12}(z^2 - 3)
            - \frac{\hat\gamma^2}{18}(z^4 + 2z^2 - 3) - \frac{z^2 + 3}{4}\Big]

  (:math:`\hat\gamma`, :math:`\hat\kappa` the sample skewness and excess kurtosis): the
  two-sided :math:`P(|T| \le z)` of the Studentized mean to order :math:`1/n`, where the
  skewness terms of the two tails cancel (Hall 1988).  What it adds to the hull is a lower end
  below Hall's, which Hall's skew correction pulls up: Pareto tails of index 3 and 2.5 go
  from 0.926 / 0.929 (n = 50 / 200) to 0.944 / 0.941, at 1.03-1.13 times the width on
  lognormal amounts.

None of the intervals measured lowers the share of Pareto samples whose mean lies *above* the
interval (0.056 at index 3, n = 50; 0.079 at index 2.2, n = 100, beyond the 0.07 that 0.93
allows, so that cell stays at 0.921): those samples hold no large amount, and Hall's interval
misses them least, before the bootstrap-t, BCa, empirical likelihood and the modified t of
Johnson and of Chen (``benchmarks/coverage_amounts.py --candidates``, docs/guide/stats.md).

Fewer than 2 paid questions leave the spread of the paid amounts unknown: the upper end is
then unbounded (``inf``) rather than ``$0`` (every question $0) or a guess.  A sample whose
every question costs the same is its own interval (nothing varies: prompt and chunks fixed).

References
----------
Bahadur, R. R. & Savage, L. J. (1956). The nonexistence of certain statistical procedures in
nonparametric problems. *Annals of Mathematical Statistics* 27(4), 1115-1122.
Hall, P. (1988). On symmetric bootstrap confidence intervals. *JRSS B* 50(1), 35-45.
Hall, P. (1992). On the removal of skewness by transformation. *JRSS B* 54(1), 221-228.
Hall, P. (1992b). *The Bootstrap and Edgeworth Expansion*. Springer (sec. 2.6: the
Edgeworth expansion of the Studentized mean).
Zhou, X.-H. & Tu, W. (2000). Confidence intervals for the mean of diagnostic test charge data
containing zero costs. *Biometrics* 56(4), 1118-1125.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri, stdtrit

__all__ = [
    "METHOD",
    "UNBOUNDED",
    "amount_bounds",
    "hall_t_bounds",
    "symmetric_edgeworth_bounds",
    "two_part_lognormal_bounds",
]

#: The method name of :func:`amount_bounds` (dashboard and JSON).
METHOD = "Hall t + two-part lognormal + symmetric Edgeworth t"
#: The method name when fewer than 2 questions are paid.
UNBOUNDED = "fewer than 2 paid questions: unbounded above"


def hall_t_bounds(x: np.ndarray, confidence: float) -> tuple[float, float]:
    """Hall (1992)'s skew-corrected interval of the mean with Student t quantiles.

    >>> [round(v, 4) for v in hall_t_bounds(np.linspace(1.0, 3.0, 21), 0.95)]  # symmetric: t
    [1.7176, 2.2824]
    """
    n = x.size
    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if n >= 3 else 0.0
    if n < 3 or sd <= 1e-12 * max(1.0, abs(mean)):
        return (mean, mean) if n >= 3 or np.all(x == x[0]) else (0.0, float("inf"))
    gamma = float(np.sum((x - mean) ** 3)) * n / ((n - 1) * (n - 2)) / sd**3
    q = float(stdtrit(n - 1, 0.5 + confidence / 2)) / np.sqrt(n)

    def inverse(v: float) -> float:
        if abs(gamma) < 1e-12:
            return v - gamma / (6 * n)
        return 3.0 / gamma * (float(np.cbrt(1.0 + gamma * (v - gamma / (6 * n)))) - 1.0)

    return float(mean - sd * inverse(q)), float(mean - sd * inverse(-q))


def symmetric_edgeworth_bounds(x: np.ndarray, confidence: float) -> tuple[float, float]:
    r"""The symmetric t interval with the Edgeworth correction of order :math:`1/n`.

    :math:`\bar x \pm (z - p_2(z)/n)\,\hat\sigma/\sqrt n` with :math:`\hat\sigma`,
    :math:`\hat\gamma`, :math:`\hat\kappa` the plug-in (divisor n) moments and :math:`p_2`
    of the module doc (Hall 1992b, sec. 2.6).

    1, 2, 3, 10: mean 4, central moments 12.5, 45 and 348.5, so skewness 1.0182, excess
    kurtosis -0.7696, p2(1.96) = -5.6529 and q = 1.96 + 5.6529/4 = 3.3732 (half width
    3.3732 * sqrt(12.5/4) = 5.9629):

    >>> [round(v, 4) for v in symmetric_edgeworth_bounds(np.array([1.0, 2, 3, 10]), 0.95)]
    [-1.9629, 9.9629]
    """
    n = x.size
    mean = float(x.mean())
    centred = x - mean
    m2 = float(np.mean(centred**2))
    if n < 3 or m2 <= (1e-12 * max(1.0, abs(mean))) ** 2:
        return (mean, mean) if n >= 3 or np.all(x == x[0]) else (0.0, float("inf"))
    gamma = float(np.mean(centred**3)) / m2**1.5
    kappa = float(np.mean(centred**4)) / m2**2 - 3.0
    z = float(ndtri(0.5 + confidence / 2))
    p2 = z * (kappa * (z * z - 3) / 12 - gamma**2 * (z**4 + 2 * z * z - 3) / 18 - (z * z + 3) / 4)
    half = (z - p2 / n) * float(np.sqrt(m2 / n))
    return mean - half, mean + half


def two_part_lognormal_bounds(x: np.ndarray, confidence: float) -> tuple[float, float]:
    """Zhou & Tu (2000)'s interval of the mean of amounts that are 0 or lognormal.

    ``(0, inf)`` with fewer than 2 positive amounts.

    Three of four questions paid, log amounts 0, 1, 2 (mean 1, variance 1): theta =
    log(3/4) + 1 + 1/2, Var = (1/4)/3 + 1/3 + 1/4, t quantile 4.303 on 2 df:

    >>> low, high = two_part_lognormal_bounds(np.array([0.0, 1.0, np.e, np.e**2]), 0.95)
    >>> round(low, 4), round(high, 2)
    (0.1002, 112.78)
    """
    paid = x[x > 0]
    m = paid.size
    if m < 2:
        return 0.0, float("inf")
    logs = np.log(paid)
    s2 = float(logs.var(ddof=1))
    share = m / x.size
    theta = np.log(share) + float(logs.mean()) + s2 / 2
    variance = (1 - share) / m + s2 / m + s2**2 / (2 * (m - 1))
    half = float(stdtrit(m - 1, 0.5 + confidence / 2)) * np.sqrt(variance)
    return float(np.exp(theta - half)), float(np.exp(theta + half))


def amount_bounds(x: np.ndarray, confidence: float) -> tuple[float, float, str]:
    """``(low, high, method)``: the hull of :func:`hall_t_bounds`,
    :func:`two_part_lognormal_bounds` and :func:`symmetric_edgeworth_bounds`, clipped below
    at 0 (see the module doc).

    >>> amount_bounds(np.zeros(20), 0.95)
    (0.0, inf, 'fewer than 2 paid questions: unbounded above')
    >>> amount_bounds(np.full(5, 0.004), 0.95)[:2]
    (0.004, 0.004)
    """
    if np.all(x == x[0]) and x[0] > 0:  # every question costs the same: nothing varies
        return float(x[0]), float(x[0]), METHOD
    bounds = [
        bound(x, confidence)
        for bound in (hall_t_bounds, two_part_lognormal_bounds, symmetric_edgeworth_bounds)
    ]
    method = UNBOUNDED if np.count_nonzero(x > 0) < 2 else METHOD
    return max(0.0, min(b[0] for b in bounds)), max(b[1] for b in bounds), method
