"""Independent oracles for the interval tests (scipy.optimize and scipy.stats, no ragaudit)."""

import math

import pytest
from scipy import optimize, stats


def tango_interval(both, a_only, b_only, neither, confidence=0.95):
    """Tango's score interval for p_B - p_A by brute force.

    The restricted maximum-likelihood estimate of the cell probabilities under
    ``p_(B only) - p_(A only) = delta`` is found by maximising the multinomial log-likelihood
    numerically over P(A only) (the concordant cells' MLE is their observed share of the rest);
    the limits are the roots of ``|T(delta)| = z`` with ``scipy.optimize.brentq``.  Tango
    (1998), Statistics in Medicine 17, 891-908, equations (3)-(5).
    """
    n = both + a_only + b_only + neither
    c, b = a_only, b_only
    z = stats.norm.ppf(0.5 + confidence / 2)

    def restricted_a_only(delta):
        low, high = max(0.0, -delta) + 1e-12, (1.0 - delta) / 2 - 1e-12

        def negative_loglik(q):  # q = P(A only), P(B only) = q + delta, rest 1 - 2q - delta
            terms = [(c, q), (b, q + delta), (both + neither, 1.0 - 2 * q - delta)]
            return -sum(k * math.log(p) for k, p in terms if k > 0)

        if high <= low:
            return max(0.0, -delta)
        return optimize.minimize_scalar(
            negative_loglik, bounds=(low, high), method="bounded", options={"xatol": 1e-13}
        ).x

    def score(delta):
        q = restricted_a_only(delta)
        return (b - c - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))

    estimate = (b - c) / n
    eps = 1e-9
    low = -1.0 if estimate <= -1 else optimize.brentq(lambda d: score(d) - z, -1 + eps, estimate)
    high = 1.0 if estimate >= 1 else optimize.brentq(lambda d: score(d) + z, estimate, 1 - eps)
    return low, high


@pytest.fixture
def tango_oracle():
    return tango_interval
