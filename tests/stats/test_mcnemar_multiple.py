import itertools

import numpy as np
import pytest
from scipy import stats

from ragaudit.exceptions import InputError
from ragaudit.stats import holm_bonferroni, mcnemar_exact, mcnemar_pvalue, paired_permutation_test


@pytest.mark.parametrize(
    ("a_only", "b_only"), [(0, 0), (1, 1), (0, 5), (3, 9), (12, 4), (20, 21), (0, 1), (40, 15)]
)
def test_mcnemar_matches_scipy_binomtest(a_only, b_only):
    expected = 1.0 if a_only + b_only == 0 else stats.binomtest(a_only, a_only + b_only, 0.5).pvalue
    assert mcnemar_pvalue(a_only, b_only) == pytest.approx(expected, rel=1e-12)


def test_chapter_paired_table():
    # Chapter 21.5: 35 both right, 1 A only (q04), 1 B only (q37), 5 neither -> p = 1.000.
    ids = [f"q{i:02d}" for i in range(1, 43)]
    a = np.array([0 if q in {"q37", "q17", "q23", "q29", "q41", "q42"} else 1 for q in ids])
    b = np.array([0 if q in {"q04", "q17", "q23", "q29", "q41", "q42"} else 1 for q in ids])
    result = mcnemar_exact(a, b, ids)
    assert (result.both, result.a_only, result.b_only, result.neither) == (35, 1, 1, 5)
    assert result.pvalue == 1.0
    assert result.discordant_ids == ("q04", "q37")


@pytest.mark.parametrize("seed", range(5))
def test_exact_permutation_on_binary_values_is_mcnemar(seed):
    # With d_i in {-1, 0, 1} the sign-flip null is Bin(b + c, 1/2): the same exact test.
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 2, 16), rng.integers(0, 2, 16)
    table = mcnemar_exact(a, b)
    assert paired_permutation_test(a, b).pvalue == pytest.approx(table.pvalue, rel=1e-12)


def test_mcnemar_rejects_non_binary_values():
    with pytest.raises(InputError, match=r"a: McNemar's test needs values in \{0, 1\}"):
        mcnemar_exact([0.5, 1], [1, 1])
    with pytest.raises(InputError, match=r"a_only: expected a count >= 0, found -1"):
        mcnemar_pvalue(-1, 2)


def _holm_oracle(pvalues):
    # Direct definition: reject H_(i) at level alpha iff p_(j) <= alpha/(m-j+1) for all j <= i;
    # the adjusted p-value is the smallest alpha at which it is rejected.
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, (m - rank) * pvalues[index])
        adjusted[index] = min(1.0, running)
    return adjusted


@pytest.mark.parametrize("seed", range(5))
def test_holm_matches_step_down_definition(seed):
    pvalues = np.random.default_rng(seed).random(7) ** 3
    assert holm_bonferroni(pvalues) == pytest.approx(_holm_oracle(list(pvalues)))


def test_holm_rejection_set_matches_sequential_procedure():
    pvalues = [0.01, 0.04, 0.03, 0.005]
    alpha = 0.05
    # Sequential: 0.005 <= .05/4, 0.01 <= .05/3, 0.03 > .05/2 -> stop.
    adjusted = holm_bonferroni(pvalues)
    assert [p <= alpha for p in adjusted] == [True, False, False, True]
    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    for size in range(1, 5):
        for subset in itertools.combinations(pvalues, size):
            assert np.all(holm_bonferroni(list(subset)) >= np.array(subset))


def test_holm_rejects_out_of_range():
    with pytest.raises(InputError, match="pvalues: expected numbers between 0 and 1"):
        holm_bonferroni([0.1, 1.2])
