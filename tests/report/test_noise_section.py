"""The audit page's noise section (report --cluster-by source) on the demo's runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragaudit.stats.bounded import bet_fractions


@pytest.fixture(scope="module")
def audit(bench: dict[str, Path]) -> Any:
    from ragaudit.data.records import load_saved_run
    from ragaudit.diagnose.audit import build_audit
    from ragaudit.labels.format import load_chunk_labels

    runs = [load_saved_run(bench["k3"]), load_saved_run(bench["k6"])]
    return build_audit(runs, labels=load_chunk_labels(bench["labels"]), cluster_by="source")


def test_naive_interval_is_the_dashboards_for_the_same_number(audit: Any):
    # The page printed ndcg@k [0.901, 0.979] (naive) beside the dashboard's [0.866, 0.989].
    keys = {"ndcg@k": "ndcg", "correct": "correct"}
    for run in audit.runs:
        dashboard = {row.key: row for row in run.dashboard}
        rows = {row.metric: row for row in run.clustered.rows}
        for metric, key in keys.items():
            naive, dash = rows[metric].naive, dashboard[key]
            assert naive.statistic == pytest.approx(dash.value, abs=1e-15)
            ci = naive.confidence_interval
            assert (ci.low, ci.high, naive.method) == (dash.ci_low, dash.ci_high, dash.interval)


def test_clustered_interval_of_an_all_ones_rate_has_width(audit: Any, bench: dict[str, Path]):
    # hit@k is 1 on all 54 questions: the cluster bootstrap printed [1.000, 1.000]; betting over
    # the 14 sources gives the end where the capital reaches 2 / alpha = 40 (an oracle loop).
    from ragaudit.data.records import load_saved_run
    from ragaudit.diagnose.noise import question_clusters, run_metrics

    run = audit.runs[0]
    row = {r.metric: r for r in run.clustered.rows}["hit@k"]
    ci = row.clustered.confidence_interval
    assert ci.high == 1.0 and ci.low < 0.8
    saved = load_saved_run(bench["k3"])
    clusters = question_clusters(saved, "source")
    values = run_metrics(saved, "answerable").values
    labels = [clusters[q] for q in sorted(values) if values[q].get("hit@k") is not None]
    sizes = np.unique(labels, return_counts=True)[1].astype(float)
    assert (sizes.sum(), sizes.size) == (row.result.n, row.result.n_clusters)
    s = sizes / sizes.max()
    bets = bet_fractions(sizes.size)

    def capital(m: float) -> float:
        terms = [np.prod(1 + c * w * (1 / m - 1)) for c in bets for w in (s, np.ones_like(s))]
        return float(np.mean(terms))

    assert capital(ci.low) == pytest.approx(40.0, rel=1e-9)
    for r in run.clustered.rows:  # never zero width, never narrower than the naive interval
        c, v = r.clustered.confidence_interval, r.naive.confidence_interval
        assert c.high - c.low > 0 and c.low <= v.low and c.high >= v.high


def test_a_design_effect_below_one_is_said_plainly(audit: Any):
    # "correct is 4% wider (design effect 0.93)" read as a contradiction.
    from ragaudit.diagnose.noise import clustering_summary, describe_clustering

    below_one = 0
    for run in audit.runs:
        line = describe_clustering(run.clustered)
        assert "wider" not in line and "narrower" not in line
        for row in run.clustered.rows:
            if row.design_effect is not None and row.design_effect < 1:
                below_one += 1
                assert f"{row.metric} {row.design_effect:.2f} (below 1, counted as 1)" in line
                summary = clustering_summary(row, "source")
                assert "below 1" in summary and "counted as 1" in summary
                assert "does not widen" not in summary  # its clustered interval is wider
                assert row.effective_n == row.result.n  # deff counted as 1
    assert below_one  # the demo has such rows (correct, 0.93): the checks above ran
