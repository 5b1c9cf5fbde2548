"""``stats.policy.amount_interval``: the $/question interval (Student t).

Expected bounds from scipy.stats.t (an independent implementation of the same formula);
coverage from a seeded simulation of lognormal per-question costs with a coefficient of
variation up to 0.5 (per-question costs are nearly constant: the prompt and the k chunks
dominate the tokens).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ragaudit.exceptions import InputError
from ragaudit.stats.policy import amount_interval


def test_bounds_equal_scipys_t_interval():
    rng = np.random.default_rng(7)
    costs = rng.lognormal(math.log(0.002), 0.3, size=54)
    low, high = stats.t.interval(0.95, df=53, loc=costs.mean(), scale=stats.sem(costs))
    ci = amount_interval(costs).confidence_interval
    assert (ci.low, ci.high) == pytest.approx((max(low, 0.0), high), rel=1e-12)


def test_a_constant_sample_and_offline_zero_are_exact():
    assert amount_interval([0.0] * 60).confidence_interval.high == 0.0
    ci = amount_interval([0.004] * 5).confidence_interval
    assert (ci.low, ci.high) == (0.004, 0.004)


@pytest.mark.slow
@pytest.mark.parametrize("n", [20, 54, 200])
@pytest.mark.parametrize("cv", [0.1, 0.3, 0.5])
def test_coverage_of_the_mean_cost(n, cv):
    sigma = math.sqrt(math.log(1 + cv**2))  # lognormal with this coefficient of variation
    mu = math.log(0.002) - sigma**2 / 2  # mean cost 0.002 USD
    rng = np.random.default_rng(20261201 + n)
    replicates = 2000
    hits = sum(
        ci.low <= 0.002 <= ci.high
        for ci in (
            amount_interval(rng.lognormal(mu, sigma, size=n)).confidence_interval
            for _ in range(replicates)
        )
    )
    assert hits / replicates >= 0.93


def test_bad_amounts_are_named():
    with pytest.raises(InputError, match="values: expected a non-empty sequence of finite"):
        amount_interval([1.0, float("nan")])
