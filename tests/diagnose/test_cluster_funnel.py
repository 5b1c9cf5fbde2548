"""funnel --cluster-by: clustered intervals of one run's means, checked against statsmodels."""

import json

import numpy as np
import statsmodels.api as sm
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.noise import clustered_means, clustering_summary


def _rows():
    rng = np.random.default_rng(12)
    rows = []
    for i in range(30):
        source = f"doc{i // 5}"
        correct = bool(rng.random() < (0.9 if i // 5 % 2 else 0.3))
        rows.append({
            "id": f"q{i:02d}", "question": "?", "answerable": True, "gold_docs": [source],
            "retrieved": [{"chunk_id": f"{source}#0", "doc_id": source, "rank": 1}],
            "context_ids": [f"{source}#0"], "answer": "...",
            "judges": {"abstained": False, "correct": correct, "evidence_in_context": True},
            "metrics": {"hit@k": 1.0, "correct": float(correct)},
        })  # fmt: skip
    return rows


def test_clustered_means_equal_statsmodels():
    run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": _rows()})
    result = clustered_means(run, "source")
    row = {r.metric: r for r in result.rows}["correct"]
    y = np.array([r["metrics"]["correct"] for r in run.rows])
    groups = np.arange(30) // 5
    ols = sm.OLS(y, np.ones(30)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert abs(row.result.standard_error - ols.bse[0]) < 1e-9
    naive = sm.OLS(y, np.ones(30)).fit()
    deff = (ols.bse[0] / naive.bse[0]) ** 2  # statsmodels' CR1 over the i.i.d. variance
    assert abs(row.design_effect - deff) < 1e-9
    assert row.correlated  # sources alternate between easy and hard
    assert (
        f"design effect {deff:.2f} (6 clusters by source): the 30 questions carry the "
        f"information of about {30 / deff:.2g} independent ones"
        in clustering_summary(row, "source")
    )


def test_funnel_cluster_by_source(tmp_path):
    path = tmp_path / "run.json"
    write_saved_run(path, _run_model("run", _rows()))
    out = CliRunner().invoke(main, ["funnel", str(path), "--cluster-by", "source"])
    assert out.exit_code == 0, out.output
    assert "CLUSTERED BY SOURCE" in out.output.upper()
    assert "correct: design effect" in out.output and "(6 clusters by source)" in out.output
    data = json.loads(
        CliRunner()
        .invoke(main, ["funnel", str(path), "--cluster-by", "source", "--format", "json"])
        .output
    )
    assert data["clustered"]["cluster_by"] == "source"


def _run_model(name, rows):
    return SavedRun.from_dict({"name": name, "config": {"k": 1}, "rows": rows})
