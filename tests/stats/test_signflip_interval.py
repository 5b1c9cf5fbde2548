"""The interval that inverts the sign-flip test: against brute force, and the verdict it matches."""

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.exceptions import InputError
from ragaudit.stats import PerQuestionMetrics, compare_runs, paired_permutation_test
from ragaudit.stats.signflip_interval import (
    flip_sums,
    signflip_bounds,
    signflip_interval,
)

ALPHA = 0.05


def _brute_p(x, w, delta, patterns=None):
    """p(delta) by listing every sign pattern (or the given ones plus the identity)."""
    e = np.asarray(x, float) - delta * np.asarray(w, float)
    if patterns is None:
        signs = np.array(list(itertools.product([1.0, -1.0], repeat=len(e))))
        return float(np.mean(np.abs(signs @ e) >= abs(e.sum()) * (1 - 1e-9) - 1e-12))
    sums = patterns[:, 0] - delta * patterns[:, 1]
    count = np.count_nonzero(np.abs(sums) >= abs(e.sum()) * (1 - 1e-9) - 1e-12)
    return (count + 1) / (len(patterns) + 1)


@pytest.mark.parametrize("seed", range(6))
def test_exact_ends_are_where_the_brute_force_p_crosses_alpha(seed):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(0.1, 0.25, 11), 2)
    w = np.ones_like(x)
    low, high, p0, exact, _ = signflip_bounds(x, w, ALPHA, 100, None)
    assert exact
    assert p0 == pytest.approx(_brute_p(x, w, 0.0), abs=1e-12)
    assert p0 == pytest.approx(paired_permutation_test(np.zeros(11), x).pvalue, abs=1e-12)
    # p >= alpha at the closed ends (the roots; the ends sit 1e-9 outside them), < alpha beyond
    for end, outward in ((low, -1), (high, 1)):
        assert _brute_p(x, w, end - outward * 1e-8) >= ALPHA
        assert _brute_p(x, w, end + outward * 1e-6) < ALPHA
    # and every shift inside is accepted (the p-value is unimodal)
    for delta in np.linspace(low + 1e-6, high - 1e-6, 25):
        assert _brute_p(x, w, delta) >= ALPHA


def test_clusters_flip_together_exactly():
    rng = np.random.default_rng(3)
    sums, sizes = np.round(rng.normal(0.5, 1, 9), 2), rng.integers(1, 6, 9).astype(float)
    low, high, p0, exact, _ = signflip_bounds(sums, sizes, ALPHA, 100, None)
    assert exact and p0 == pytest.approx(_brute_p(sums, sizes, 0.0), abs=1e-12)
    assert _brute_p(sums, sizes, low - 1e-6) < ALPHA <= _brute_p(sums, sizes, low + 1e-8)
    assert _brute_p(sums, sizes, high + 1e-6) < ALPHA <= _brute_p(sums, sizes, high - 1e-8)


def test_monte_carlo_ends_are_exact_for_their_own_patterns():
    rng = np.random.default_rng(4)
    x = rng.normal(0.05, 0.2, 300)
    w = np.ones_like(x)
    flips = flip_sums(np.column_stack([x, w]), 3000, np.random.default_rng(9))
    low, high, p0, exact, patterns = signflip_bounds(x, w, ALPHA, 3000, None, flips)
    assert not exact and patterns == 3000
    assert p0 == pytest.approx(_brute_p(x, w, 0.0, flips), abs=1e-12)
    assert _brute_p(x, w, low - 1e-7, flips) < ALPHA <= _brute_p(x, w, low + 1e-8, flips)
    assert _brute_p(x, w, high + 1e-7, flips) < ALPHA <= _brute_p(x, w, high - 1e-8, flips)


def test_flip_sums_match_explicit_signs():
    x = np.arange(1.0, 20.0)[:, None] / 7
    sums = flip_sums(x, 50, np.random.default_rng(2))
    again = np.random.default_rng(2).integers(0, 256, size=(50, 3), dtype=np.uint8)
    bits = np.unpackbits(again[:, :, None], axis=2, bitorder="little").reshape(50, 24)[:, :19]
    assert np.allclose(sums[:, 0], (1 - 2 * bits.astype(float)) @ x[:, 0])


def _runs(a, b, metric="ndcg"):
    ids = [f"q{i:03d}" for i in range(len(a))]
    return (
        PerQuestionMetrics("A", {q: {metric: float(v)} for q, v in zip(ids, a, strict=True)}),
        PerQuestionMetrics("B", {q: {metric: float(v)} for q, v in zip(ids, b, strict=True)}),
    )


@pytest.mark.parametrize("seed", range(40))
def test_the_interval_excludes_0_exactly_when_the_verdict_is_significant(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([8, 15, 30, 54, 120, 400]))
    a = np.round(rng.random(n), int(rng.choice([1, 2, 4])))
    shift = rng.normal(0, 0.08)
    b = np.clip(np.round(a + shift + rng.normal(0, 0.15, n) * (rng.random(n) < 0.6), 4), 0, 1)
    row = compare_runs(*_runs(a, b), n_permutations=2000, subsample_sizes=()).metrics[0]
    ci = row.confidence_interval
    excludes = ci.low > 0 or ci.high < 0
    assert row.ci_method.startswith("sign-flip")
    assert excludes == (row.pvalue < ALPHA), (row.pvalue, ci, row.p_method)
    if row.n_differing >= 6:
        assert (row.verdict == "SIGNIFICANT") == (row.pvalue < ALPHA)
    assert ci.low <= row.statistic <= ci.high


@pytest.mark.parametrize("shift", [0.08, -0.08])
def test_every_question_moving_by_008_is_significant(shift):
    rng = np.random.default_rng(0)
    a = np.round(rng.uniform(0.1, 0.9, 54), 4)
    row = compare_runs(*_runs(a, a + shift)).metrics[0]
    assert row.verdict == "SIGNIFICANT" and row.pvalue == pytest.approx(2 * 0.5**54)
    ci = row.confidence_interval
    assert ci.low <= shift <= ci.high and (ci.low > 0 or ci.high < 0)


def test_40_of_54_rising_by_010_is_significant():
    rng = np.random.default_rng(1)
    a = np.round(rng.uniform(0.1, 0.85, 54), 4)
    b = a.copy()
    b[:40] += 0.1
    row = compare_runs(*_runs(a, b)).metrics[0]
    assert row.verdict == "SIGNIFICANT" and row.confidence_interval.low > 0.05


def test_the_gate_fires_on_a_uniform_drop_of_008(tmp_path):
    rng = np.random.default_rng(2)
    a = np.round(rng.uniform(0.1, 0.9, 54), 4)
    ids = [f"q{i:02d}" for i in range(54)]
    for name, values in (("a.json", a), ("b.json", a - 0.08)):
        (tmp_path / name).write_text(
            json.dumps({q: {"ndcg@5": float(v)} for q, v in zip(ids, values, strict=True)})
        )
    out = CliRunner().invoke(
        main,
        ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--fail-if-worse",
         "ndcg@5"],
    )  # fmt: skip
    assert out.exit_code == 1, out.output
    assert "gate failed: ndcg@5 is worse in B by -0.080" in out.output


def test_public_function_validates_and_names_its_method():
    r = signflip_interval([0.1, 0.2, 0.05, 0.3, 0.15, 0.25, 0.1], rng=1)
    assert r.method == "sign-flip inversion" and r.p_method == "exact (distinct values)"
    assert r.pvalue == pytest.approx(2 / 2**7)
    with pytest.raises(InputError, match="d: expected a non-empty 1-D sequence"):
        signflip_interval([])
    with pytest.raises(InputError, match="clusters: expected one label per value"):
        signflip_interval([0.1, 0.2], clusters=["a"])
