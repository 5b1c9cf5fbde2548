"""compare --cluster-by / --judge-repeats on saved runs: numbers from statsmodels and by hand."""

import json

import numpy as np
import pytest
import statsmodels.api as sm
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import write_saved_run
from ragaudit.data.saved_run import SavedRun


def _row(i, correct, source, repeats=None):
    judges = {"correct": bool(correct)}
    if repeats is not None:
        judges["judge_repeat_verdicts"] = {"correct": repeats}
    return {
        "id": f"q{i:02d}",
        "question": f"question {i}",
        "answerable": True,
        "gold_docs": [source],
        "tags": ["numeric" if i % 2 else "list"],
        "retrieved": [{"chunk_id": f"c{i}", "doc_id": source}],
        "judges": judges,
        "metrics": {"correct": float(correct), "score": float(i % 5) / 4},
    }


def _runs(tmp_path, repeats=False):
    rng = np.random.default_rng(3)
    sources = [f"doc{i // 4}" for i in range(32)]  # 8 sources, 4 questions each
    shared = rng.normal(0, 1, 8)
    paths = []
    for name, shift in (("a", 0.0), ("b", 0.6)):
        rows = []
        for i, source in enumerate(sources):
            p = 1 / (1 + np.exp(-(shared[i // 4] + shift)))
            votes = (rng.random(3) < p).astype(int).tolist()
            rows.append(_row(i, votes[0], source, votes if repeats else None))
        path = tmp_path / f"{name}.json"
        write_saved_run(path, _run_model(name, rows))
        paths.append(path)
    return paths


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _values(path, metric):
    rows = json.loads(path.read_text())["rows"]
    return np.array([r["metrics"][metric] for r in rows]), [r["gold_docs"][0] for r in rows]


def test_cluster_by_source_matches_statsmodels(tmp_path):
    a_path, b_path = _runs(tmp_path)
    result = _invoke("compare", a_path, b_path, "--cluster-by", "source", "--format", "json",
                     "--resamples", "500")  # fmt: skip
    assert result.exit_code == 0, result.output
    clustered = json.loads(result.output)["clustered"]
    assert clustered["cluster_by"] == "source"
    row = {m["metric"]: m for m in clustered["metrics"]}["correct"]
    a, groups = _values(a_path, "correct")
    b, _ = _values(b_path, "correct")
    # one number, one interval (issue 32): the clustered block carries the design effect and
    # no interval of its own; the one clustered interval is compare's row (the cluster
    # sign-flip test inverted), and it agrees with the row's verdict
    assert not {"naive_ci", "clustered_ci", "naive_method", "clustered_method"} & set(row)
    assert "the comparison's own" in clustered["method"]
    (own,) = [m for m in json.loads(result.output)["metrics"] if m["metric"] == "correct"]
    assert own["ci_method"].startswith("cluster sign-flip inversion")
    assert (own["ci_low"] > 0 or own["ci_high"] < 0) == (own["verdict"] == "SIGNIFICANT")
    # the methods header (where the wording of "too few differing" sits) is part of --full
    table = _invoke("compare", a_path, b_path, "--cluster-by", "source", "--resamples", "500",
                    "--full")  # fmt: skip
    block = table.output.split("CLUSTERED BY SOURCE")[1]
    assert "[" not in block and "95%" not in block  # no second interval beside the verdict's
    assert "too few differing counts clusters" not in table.output
    assert "'too few differing' counts the clusters that differ" in table.output
    ols = sm.OLS(b - a, np.ones(a.size)).fit(
        cov_type="cluster", cov_kwds={"groups": np.unique(groups, return_inverse=True)[1]},
        use_t=True,
    )  # fmt: skip
    assert abs(row["cr1_se"] - ols.bse[0]) < 1e-9
    assert row["n_clusters"] == 8
    naive = sm.OLS(b - a, np.ones(a.size)).fit()
    assert row["design_effect"] == pytest.approx((ols.bse[0] / naive.bse[0]) ** 2, rel=1e-9)


def test_cluster_by_table_says_when_interval_widens(tmp_path):
    a_path, b_path = _runs(tmp_path)
    result = _invoke("compare", a_path, b_path, "--cluster-by", "tag", "--resamples", "300")
    assert result.exit_code == 0, result.output
    assert "CLUSTERED BY TAG" in result.output.upper()
    assert "only 2 clusters" in result.output  # tags numeric / list


def test_cluster_by_unknown_field_is_one_line_error(tmp_path):
    a_path, b_path = _runs(tmp_path)
    result = _invoke("compare", a_path, b_path, "--cluster-by", "template")
    assert result.exit_code == 2
    assert result.output.startswith("ragaudit: error: --cluster-by template: no question")
    assert "gold_docs" in result.output and "Traceback" not in result.output


def test_judge_repeats_decomposition(tmp_path):
    a_path, b_path = _runs(tmp_path, repeats=True)
    result = _invoke("compare", a_path, b_path, "--judge-repeats", "--format", "json",
                     "--resamples", "200")  # fmt: skip
    assert result.exit_code == 0, result.output
    noise = json.loads(result.output)["judge_noise"]
    rows = json.loads(a_path.read_text())["rows"]
    scores = np.array([r["judges"]["judge_repeat_verdicts"]["correct"] for r in rows], float)
    n, r = scores.shape
    msw = ((scores - scores.mean(1, keepdims=True)) ** 2).sum() / (n * (r - 1))
    msb = r * ((scores.mean(1) - scores.mean()) ** 2).sum() / (n - 1)
    assert noise["a"]["within_variance"] == pytest.approx(msw, rel=1e-12)
    assert noise["a"]["between_variance"] == pytest.approx(max(0, (msb - msw) / r), abs=1e-12)
    assert noise["a"]["repeats_to_halve_judge_variance"] == 6
    table = _invoke("compare", a_path, b_path, "--judge-repeats", "--resamples", "200")
    assert "judge noise in correct" in table.output and "B - A" in table.output


def test_judge_repeats_without_stored_repeats_explains(tmp_path):
    a_path, b_path = _runs(tmp_path)
    result = _invoke("compare", a_path, b_path, "--judge-repeats")
    assert result.exit_code == 2
    assert "store no per-repeat verdicts" in result.output
    assert "--judge-repeats R" in result.output


@pytest.mark.parametrize("output_format", ["table", "markdown", "csv"])
def test_cluster_by_renders_in_every_format(tmp_path, output_format):
    a_path, b_path = _runs(tmp_path)
    result = _invoke("compare", a_path, b_path, "--cluster-by", "source", "--resamples", "200",
                     "--format", output_format)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "design" in result.output.lower() or "cr1" in result.output.lower()


def _run_model(name, rows):
    return SavedRun.from_dict({"name": name, "config": {"k": 1}, "rows": rows})
