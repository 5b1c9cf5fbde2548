"""Cluster-aware verdicts: the cluster sign-flip test, its inversion and CR2 (issue 21, item 2)."""

import itertools

import numpy as np
import pytest

from ragaudit.exceptions import InputError
from ragaudit.stats import PerQuestionMetrics, compare_runs
from ragaudit.stats.cluster_signflip import cluster_signflip, cr2_standard_error


def _brute_cluster_p(d, codes):
    sums = np.bincount(codes, weights=d)
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=sums.size)))
    return float(np.mean(np.abs(signs @ sums) >= abs(sums.sum()) * (1 - 1e-9) - 1e-12))


@pytest.mark.parametrize("seed", range(5))
def test_p_is_the_exact_cluster_sign_flip_p_and_the_interval_agrees(seed):
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(9), rng.integers(1, 6, 9))
    d = np.round(rng.normal(0.1, 0.3, codes.size) + rng.normal(0, 0.2, 9)[codes], 2)
    r = cluster_signflip(np.clip(d, -1, 1), codes)
    assert r.exact and r.pvalue == pytest.approx(_brute_cluster_p(np.clip(d, -1, 1), codes))
    ci = r.confidence_interval
    assert (ci.low > 0 or ci.high < 0) == (r.pvalue < 0.05)
    assert ci.low <= r.statistic <= ci.high


def test_cr2_with_singleton_clusters_is_the_hc2_standard_error():
    # one question per cluster: CR2 = HC2 = s / sqrt(n) for an intercept-only model
    d = np.array([0.3, -0.1, 0.25, 0.0, 0.6, 0.1, -0.2])
    se, df = cr2_standard_error(d, np.arange(d.size))
    assert se == pytest.approx(d.std(ddof=1) / np.sqrt(d.size), rel=1e-12)
    assert df == pytest.approx(d.size - 1, rel=1e-9)  # Bell-McCaffrey df = n - 1 here


def _runs(a, b):
    ids = [f"q{i:02d}" for i in range(len(a))]
    return [
        PerQuestionMetrics(k, {q: {"m": float(v)} for q, v in zip(ids, x, strict=True)})
        for k, x in (("A", a), ("B", b))
    ], ids


def test_the_demo_like_clustered_drop_stays_significant():
    # precision@3 -> @6 on the demo: 53 of 54 questions lose 1/6, none gain; 14 sources
    a = np.full(54, 1 / 3)
    b = np.array([1 / 6] * 53 + [1 / 3])
    runs, ids = _runs(a, b)
    clusters = {q: f"doc{i % 14}" for i, q in enumerate(ids)}
    row = compare_runs(*runs, clusters=clusters).metrics[0]
    assert row.verdict == "SIGNIFICANT" and row.pvalue == pytest.approx(2 / 2**14)
    assert row.confidence_interval.high < 0 and row.ci_method == "cluster sign-flip inversion"


def test_clusters_that_move_together_are_one_draw_each():
    # 4 clusters of 10 all better: 40 questions differ, but only 4 independent draws
    a = np.zeros(40)
    b = np.full(40, 0.2)
    runs, ids = _runs(a, b)
    plain = compare_runs(*runs).metrics[0]
    clustered = compare_runs(*runs, clusters={q: i // 10 for i, q in enumerate(ids)}).metrics[0]
    assert plain.verdict == "SIGNIFICANT"
    assert clustered.pvalue == pytest.approx(2 / 2**4)
    assert clustered.verdict == "too few differing questions"
    assert clustered.confidence_interval.low < 0 < clustered.confidence_interval.high


def test_bad_clusters_are_one_line_errors():
    with pytest.raises(InputError, match="clusters: expected at least 2 clusters"):
        cluster_signflip([0.1, 0.2, 0.3], ["a", "a", "a"])
    with pytest.raises(InputError, match="clusters: expected one label per value"):
        cluster_signflip([0.1, 0.2, 0.3], ["a", "b"])
