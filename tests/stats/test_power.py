import functools
import itertools

import numpy as np
import pytest
from scipy import stats

from ragaudit.exceptions import InputError
from ragaudit.stats import (
    mcnemar_power,
    minimum_detectable_effect,
    planning_table,
)


@functools.cache
def _binomtest_pvalue(b_only, discordant):
    return stats.binomtest(b_only, discordant).pvalue


def _brute_force_power(n, disagree, effect, alpha):
    # Enumerate every question outcome: A only (prob (d - delta)/2), B only ((d + delta)/2),
    # concordant (1 - d); reject when scipy's exact binomial test gives p <= alpha.
    probabilities = {
        "a": (disagree - effect) / 2,
        "b": (disagree + effect) / 2,
        "same": 1 - disagree,
    }
    power = 0.0
    for outcome in itertools.product("ab=", repeat=n):
        a_only, b_only = outcome.count("a"), outcome.count("b")
        probability = (
            probabilities["a"] ** a_only
            * probabilities["b"] ** b_only
            * probabilities["same"] ** (n - a_only - b_only)
        )
        if a_only + b_only and _binomtest_pvalue(b_only, a_only + b_only) <= alpha:
            power += probability
    return power


@pytest.mark.parametrize(
    ("n", "disagree", "effect", "alpha"),
    [
        (6, 0.5, 0.3, 0.1),
        (7, 0.8, 0.6, 0.05),
        (7, 0.3, -0.1, 0.2),
        (5, 1.0, 0.0, 0.1),
        (6, 0.4, 0.4, 0.1),
    ],
)
def test_exact_power_equals_brute_force_enumeration(n, disagree, effect, alpha):
    assert mcnemar_power(n, disagree, effect, alpha=alpha) == pytest.approx(
        _brute_force_power(n, disagree, effect, alpha), abs=1e-12
    )


@pytest.mark.parametrize(("n", "disagree", "effect"), [(42, 0.2, 0.15), (300, 0.3, 0.08)])
def test_exact_power_agrees_with_seeded_simulation(n, disagree, effect):
    rng = np.random.default_rng(99)
    trials = 40_000
    outcomes = rng.multinomial(
        n, [(disagree - effect) / 2, (disagree + effect) / 2, 1 - disagree], size=trials
    )
    a_only, b_only = outcomes[:, 0], outcomes[:, 1]
    discordant = a_only + b_only
    pvalues = np.minimum(1, 2 * stats.binom.cdf(np.minimum(a_only, b_only), discordant, 0.5))
    simulated = np.mean((discordant > 0) & (pvalues <= 0.05))
    # Simulation standard error <= 0.0025; 4 standard errors.
    assert mcnemar_power(n, disagree, effect) == pytest.approx(simulated, abs=0.01)


def test_power_is_symmetric_and_at_most_alpha_under_the_null():
    assert mcnemar_power(100, 0.2, 0.1) == pytest.approx(mcnemar_power(100, 0.2, -0.1))
    assert mcnemar_power(100, 0.2, 0.0) <= 0.05
    assert mcnemar_power(100, 0.0, 0.0) == 0.0


# The chapter's table was simulated (600 trials per cell): n -> MDE at disagree 10/20/30%.
CHAPTER_TABLE = {
    20: (None, None, None),
    42: (None, 0.20, 0.25),
    100: (0.09, 0.14, 0.16),
    300: (0.06, 0.08, 0.09),
    1000: (0.03, 0.04, 0.06),
}


def test_planning_table_matches_the_chapter_within_simulation_noise():
    rows = planning_table(list(CHAPTER_TABLE), [0.1, 0.2, 0.3])
    for row in rows:
        expected = CHAPTER_TABLE[row.n][[0.1, 0.2, 0.3].index(row.disagree)]
        if expected is None:
            assert row.mde is None
        else:
            # 600-trial simulations can move a cell by one grid step.
            assert row.mde == pytest.approx(expected, abs=0.0100001)


def test_mde_is_the_first_grid_point_reaching_the_target_power():
    mde = minimum_detectable_effect(100, 0.2)
    assert mde == 0.13
    assert mcnemar_power(100, 0.2, 0.13) >= 0.8 > mcnemar_power(100, 0.2, 0.12)
    # Never above the disagreement rate; an impossible target gives None.
    assert minimum_detectable_effect(1000, 0.02) == 0.02
    assert minimum_detectable_effect(30, 0.05) is None
    assert minimum_detectable_effect(100, 0.005) is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mcnemar_power(0, 0.2, 0.1), r"n: expected a number of questions >= 1, found 0"),
        (lambda: mcnemar_power(10, 1.2, 0.1), r"disagree: expected a number in \[0, 1\]"),
        (lambda: mcnemar_power(10, 0.2, 0.3), r"effect: expected a number with \|effect\| <="),
        (lambda: mcnemar_power(10, 0.2, 0.1, alpha=1.0), r"alpha: expected a number in \(0, 1\)"),
        (lambda: minimum_detectable_effect(10, 0.0), r"disagree: expected a number in \(0, 1\]"),
        (lambda: minimum_detectable_effect(10, 0.2, power=1.0), r"power: expected a number"),
        (lambda: planning_table([], [0.1]), r"expected at least one n"),
    ],
)
def test_bad_planning_arguments_are_one_line_errors(call, message):
    with pytest.raises(InputError, match=message):
        call()
