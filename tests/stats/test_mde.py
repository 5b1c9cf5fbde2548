"""The MDE printed beside a number is the change the verdict detects with 80% power (issue 21)."""

import numpy as np
import pytest

from ragaudit.exceptions import InputError
from ragaudit.stats import mcnemar_power
from ragaudit.stats._group import group_pvalues
from ragaudit.stats.mde import paired_mde, run_mde, shift_mde

NDCG = (np.array([1.0, 0.63, 0.5, 0.0]), np.array([0.85, 0.08, 0.04, 0.03]))


def test_binary_run_mde_states_its_discordance_and_has_the_power():
    r = run_mde([1.0] * 40 + [0.0] * 14)
    assert "20% of questions differ" in r.assumption
    assert mcnemar_power(54, 0.2, r.mde) >= 0.8 > mcnemar_power(54, 0.2, r.mde - 0.01)


def test_shift_mde_is_the_t_power_formula():
    from scipy.stats import t

    n, sd = 54, 0.3
    expected = (t.ppf(0.975, n - 1) + t.ppf(0.8, n - 1)) * sd / np.sqrt(n)
    assert shift_mde(n, sd) == pytest.approx(expected, rel=1e-12)


def test_nothing_differs_means_nothing_detectable_said_so():
    r = paired_mde([0.5, 0.7, 1.0], [0.5, 0.7, 1.0])
    assert r.mde is None and "sd of B - A (0.000)" in r.assumption
    with pytest.raises(InputError, match="expected two sequences of equal length"):
        paired_mde([0.1, 0.2], [0.1])


def _verdict_power(d):
    # the verdict's p-value: compare's exact sign-flip p (here always affordable: "exact
    # (distinct values)"), else 2,000 random flips; without the interval's inversion, which
    # the power does not need (6x cheaper)
    found = group_pvalues(d, 2000, 20, 0, np.ones(d.shape[0], bool))
    return float(np.mean([p < 0.05 for p, _, _ in found]))


@pytest.mark.slow
def test_the_verdict_has_the_power_at_the_dashboard_mde_of_an_ndcg_like_metric():
    # A run as variable as this one (independent draws of the same nDCG-like scores) moved by
    # the MDE the dashboard prints for a 54-question run: the exact sign-flip verdict's power
    rng = np.random.default_rng(11)
    values, probs = NDCG
    population = values[rng.choice(4, 400_000, p=probs)]
    mde = shift_mde(54, population.std() * np.sqrt(2))
    a, b = (values[rng.choice(4, (54, 600), p=probs)] for _ in range(2))
    power = _verdict_power(np.round(b - a + mde, 4))
    assert power >= 0.78  # 600 datasets: standard error 0.016 at 0.8


@pytest.mark.slow
def test_the_verdict_has_the_power_at_the_paired_mde_compare_prints():
    rng = np.random.default_rng(12)
    values, probs = NDCG
    a = values[rng.choice(4, 54, p=probs)]
    b = np.where(rng.random(54) < 0.5, values[rng.choice(4, 54, p=probs)], a)
    mde = paired_mde(a, b).mde
    d = b - a
    resampled = d[rng.integers(0, 54, (54, 600))] - d.mean() + mde
    assert _verdict_power(np.round(resampled, 4)) >= 0.78
