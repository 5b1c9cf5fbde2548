"""What ``ragaudit compare`` reads: evaluate's per-question JSON, TREC runs with --qrels, a
committed baseline; and the Markdown it appends to ``$GITHUB_STEP_SUMMARY``.

Expected values by hand from the ranks the test writes, p-values by scipy's exact binomial
test (McNemar's exact test on the discordant questions).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from scipy import stats

from ragaudit.cli import main


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture
def files(tmp_path, ranked_runs):
    return ranked_runs.write_files(tmp_path, ("base", "strong"))


def per_query_json(tmp_path, qrels: str, run_path: str, name: str, *extra: str) -> str:
    result = run("evaluate", "--qrels", qrels, "--run", run_path, "-m", "hit@1", "-m", "mrr",
                 "--format", "json", *extra)  # fmt: skip
    assert result.exit_code == 0, result.output
    out = tmp_path / f"{name}.json"
    out.write_text(result.stdout)
    return str(out)


def test_compare_reads_evaluate_per_query_json(tmp_path, files):
    qrels, (base, strong) = files
    a = per_query_json(tmp_path, qrels, base, "ev_base", "--per-query")
    b = per_query_json(tmp_path, qrels, strong, "ev_strong", "--per-query")
    result = run("compare", a, b, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    rows = {row["metric"]: row for row in doc["metrics"]}
    # evaluate prints judged@k beside the metrics; compare reads them as metrics too
    assert doc["n_common"] == 30 and list(rows) == ["hit@1", "mrr", "judged@1", "judged"]
    assert rows["hit@1"]["diff"] == pytest.approx(12 / 30)
    assert rows["hit@1"]["mcnemar"]["b_only"] == 12 and rows["hit@1"]["mcnemar"]["a_only"] == 0
    assert rows["hit@1"]["p_value"] == pytest.approx(stats.binomtest(12, 12).pvalue)
    assert rows["mrr"]["diff"] == pytest.approx(12 * (1 - 1 / 3) / 30)


def test_evaluate_json_without_per_query_says_how_to_fix_it(tmp_path, files):
    qrels, (base, _) = files
    means_only = per_query_json(tmp_path, qrels, base, "means")
    result = run("compare", means_only, means_only)
    assert result.exit_code == 2
    assert result.stderr == (
        f"ragaudit: error: {means_only}: per_query: expected per-question values, found only "
        "the means of `ragaudit evaluate`; rerun it with --per-query --format json\n"
    )


def test_compare_scores_trec_runs_with_qrels_like_evaluate(tmp_path, files, ranked_runs):
    qrels, (base, strong) = files
    result = run("compare", "--qrels", qrels, base, strong, "-m", "hit@1", "-m", "mrr",
                 "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["run_a"], doc["run_b"]) == ("base", "strong")
    hit = doc["metrics"][0]
    hits = {name: ranked_runs.hand_values(name)["hit@1"] for name in ("base", "strong")}
    assert hit["metric"] == "hit@1"
    assert hit["p_value"] == pytest.approx(ranked_runs.mcnemar_p(hits["base"], hits["strong"]))
    assert hit["mcnemar"]["discordant_ids"] == [f"q{i:02d}" for i in range(10, 22)]
    # the same numbers as comparing evaluate's per-question JSON of the same runs
    a = per_query_json(tmp_path, qrels, base, "base", "--per-query")
    b = per_query_json(tmp_path, qrels, strong, "strong", "--per-query")
    via_json = json.loads(run("compare", a, b, "--format", "json").stdout)
    assert via_json["metrics"] == doc["metrics"]


def test_a_trec_run_without_qrels_points_at_the_option(files):
    _, (base, strong) = files
    result = run("compare", base, strong)
    assert result.exit_code == 2
    assert result.stderr == (
        f"ragaudit: error: {base}:1: expected per-question metric values, found a TREC run; "
        "score it against labels first (compare --qrels LABELS)\n"
    )


def test_baseline_option_is_run_a(tmp_path, files):
    qrels, (base, strong) = files
    a = per_query_json(tmp_path, qrels, base, "base", "--per-query")
    b = per_query_json(tmp_path, qrels, strong, "strong", "--per-query")
    assert run("compare", "--baseline", a, b).stdout == run("compare", a, b).stdout
    two = run("compare", "--baseline", a, a, b)
    assert two.exit_code == 2
    expected = "ragaudit: error: compare --baseline: expected one candidate run, found 2\n"
    assert two.stderr == expected


def test_step_summary_is_appended_when_the_variable_is_set(tmp_path, files):
    qrels, (base, strong) = files
    a = per_query_json(tmp_path, qrels, strong, "strong", "--per-query")
    b = per_query_json(tmp_path, qrels, base, "base", "--per-query")
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    result = run("compare", a, b, "--fail-if-worse", "hit@1",
                 env={"GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    assert result.exit_code == 1  # base is significantly worse than strong on hit@1
    text = summary.read_text()
    assert text.startswith("# earlier step\n# ragaudit compare: base vs strong\n")
    markdown = run("compare", a, b, "--format", "markdown", env={"GITHUB_STEP_SUMMARY": ""})
    assert text.endswith(markdown.stdout + "\n")
    assert "| hit@1 | 30 | 0.733 | 0.333 | -0.400 |" in text
    assert "SIGNIFICANT" in text
    # a second step appends again; unset, nothing is written
    run("compare", a, b, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert summary.read_text().count("# ragaudit compare: base vs strong") == 2
    before = summary.read_text()
    run("compare", a, b, env={"GITHUB_STEP_SUMMARY": ""})
    assert summary.read_text() == before
