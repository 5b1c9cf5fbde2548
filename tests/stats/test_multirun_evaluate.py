"""``ragaudit evaluate`` with several ``--run``: one table, paired tests, Holm, markers.

Expected values are derived by hand from the ranks the test writes (hit@1 = rank 1, MRR =
1/rank), the p-values by scipy (McNemar = exact binomial on the discordant questions) and an
enumeration of every sign pattern written here, the Holm correction by statsmodels.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from statsmodels.stats.multitest import multipletests

from ragaudit.cli import main


def invoke(*args: str):
    return CliRunner().invoke(main, ["evaluate", *args])


def run_args(paths: list[str]) -> list[str]:
    return [arg for path in paths for arg in ("--run", path)]


@pytest.fixture
def files(tmp_path, ranked_runs):
    return ranked_runs.write_files(tmp_path)


def test_each_run_gives_the_numbers_of_evaluate_alone(files, ranked_runs):
    qrels, paths = files
    metrics = ["-m", "hit@1", "-m", "mrr", "-m", "ndcg@5"]
    many = invoke("--qrels", qrels, *run_args(paths), *metrics, "--per-query", "--format", "json")
    assert many.exit_code == 0, many.output
    doc = json.loads(many.stdout)
    for path, row in zip(paths, doc["runs"], strict=True):
        alone = invoke("--qrels", qrels, "--run", path, *metrics, "--per-query", "--format", "json")
        assert alone.exit_code == 0
        expected = json.loads(alone.stdout)
        # judged@k and its warnings are the report's (across the runs in the table)
        judged = expected.pop("judged")
        assert [c for c in doc["judged"] if c["run"] == path] == judged
        expected.pop("warnings")
        assert {k: v for k, v in row.items() if k not in ("id", "name", "path")} == expected
        assert row["path"] == path and row["name"] == Path(path).stem
    # and the hand values, so "identical" is not identical nonsense
    assert doc["runs"][1]["metrics"]["hit@1"] == pytest.approx(22 / 30)
    mixed = ranked_runs.hand_values("mixed")
    assert doc["runs"][2]["metrics"]["mrr"] == pytest.approx(np.mean(mixed["mrr"]))


def test_tests_against_the_first_run_are_holm_corrected_per_metric(files, ranked_runs):
    qrels, paths = files
    result = invoke("--qrels", qrels, *run_args(paths), "-m", "hit@1", "-m", "mrr",
                    "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["pairs"] == "first" and doc["correction"] == "holm" and doc["alpha"] == 0.05
    rows = {(c["metric"], c["run_b"]): c for c in doc["comparisons"]}
    # judged@1 and judged are compared beside the metrics (Holm per metric)
    assert sorted(rows) == [
        (m, r) for m in ("hit@1", "judged", "judged@1", "mrr") for r in ("mixed", "strong")
    ]
    base = ranked_runs.hand_values("base")
    for metric, oracle in (("hit@1", ranked_runs.mcnemar_p), ("mrr", ranked_runs.sign_flip_p)):
        values = {r: ranked_runs.hand_values(r)[metric] for r in ("strong", "mixed")}
        raw = [oracle(base[metric], values[r]) for r in ("strong", "mixed")]
        reject, holm, _, _ = multipletests(raw, alpha=0.05, method="holm")
        for r, p, q, sig in zip(("strong", "mixed"), raw, holm, reject, strict=True):
            row = rows[(metric, r)]
            assert row["run_a"] == "base"
            assert row["p_value"] == pytest.approx(p, rel=1e-9)
            assert row["p_holm"] == pytest.approx(q, rel=1e-9)
            assert row["significant"] == bool(sig)
            assert row["diff"] == pytest.approx(
                np.mean(ranked_runs.hand_values(r)[metric]) - np.mean(base[metric])
            )
    # the data make the verdicts clear-cut: strong is better on both, mixed on neither
    assert [rows[(m, "strong")]["significant"] for m in ("hit@1", "mrr")] == [True, True]
    assert [rows[(m, "mixed")]["significant"] for m in ("hit@1", "mrr")] == [False, False]


def test_table_has_a_row_per_run_markers_and_a_legend(files, ranked_runs):
    qrels, paths = files
    result = invoke("--qrels", qrels, *run_args(paths), "-m", "hit@1", "-m", "mrr",
                    "--seed", "7")  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["run", "n", "hit@1", "mrr", "judged@1", "judged"]
    strong_mrr = np.mean(ranked_runs.hand_values("strong")["mrr"])
    mixed_mrr = np.mean(ranked_runs.hand_values("mixed")["mrr"])
    assert lines[2].split()[:5] == ["a", "base", "30", "0.3333", f"{(10 + 20 / 3) / 30:.4f}"]
    strong = ["b", "strong", "30", f"{22 / 30:.4f}", "▲", f"{strong_mrr:.4f}", "▲"]
    assert lines[3].split()[:7] == strong
    assert lines[4].split()[:5] == ["c", "mixed", "30", f"{13 / 30:.4f}", f"{mixed_mrr:.4f}"]
    legend = result.stdout
    assert "significantly higher / lower than run a (base)" in legend
    assert "Holm correction over the 2 comparison(s)" in legend
    assert "Holm-adjusted p < 0.05" in legend and "seed 7" in legend
    assert "paired permutation test" in legend and "McNemar" in legend


def test_a_worse_run_gets_the_down_marker(tmp_path, ranked_runs):
    qrels, paths = ranked_runs.write_files(tmp_path, ("strong", "base"))
    result = invoke("--qrels", qrels, *run_args(paths), "-m", "hit@1", "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert f"| b | base | 30 | {10 / 30:.4f} ▼ |" in result.stdout
    assert "| :--- | :--- | ---: | ---: |" in result.stdout  # a README-ready pipe table


def test_all_pairs_marks_which_runs_a_run_beats(files, ranked_runs):
    qrels, paths = files
    result = invoke("--qrels", qrels, *run_args(paths), "-m", "hit@1", "--pairs", "all",
                    "--format", "json")  # fmt: skip
    doc = json.loads(result.stdout)
    hit_rows = [c for c in doc["comparisons"] if c["metric"] == "hit@1"]  # judged@1 beside
    assert len(hit_rows) == 3 and doc["pairs"] == "all"
    hits = {name: ranked_runs.hand_values(name)["hit@1"] for name in ranked_runs.ranks}
    pairs = [("base", "strong"), ("base", "mixed"), ("strong", "mixed")]
    raw = [ranked_runs.mcnemar_p(hits[a], hits[b]) for a, b in pairs]
    reject, holm, _, _ = multipletests(raw, alpha=0.05, method="holm")
    got = {(c["run_a"], c["run_b"]): c for c in hit_rows}
    for pair, q, sig in zip(pairs, holm, reject, strict=True):
        assert got[pair]["p_holm"] == pytest.approx(q, rel=1e-9)
        assert got[pair]["significant"] == bool(sig)
    table = invoke("--qrels", qrels, *run_args(paths), "-m", "hit@1", "--pairs", "all")
    row_b = table.stdout.splitlines()[3].split()
    expected_b = "▲" + ",".join(
        x
        for x, other in (("a", ("base", "strong")), ("c", ("strong", "mixed")))
        if got[other]["significant"]
    )
    assert row_b[:3] == ["b", "strong", "30"] and row_b[4] == expected_b
    assert "Holm correction over the 3 pair(s)" in table.stdout


def test_same_inputs_same_bytes_and_the_other_formats(files):
    qrels, paths = files
    args = ["--qrels", qrels, *run_args(paths), "-m", "mrr", "-m", "ndcg@5"]
    for output_format in ("table", "markdown", "csv", "json"):
        first = invoke(*args, "--format", output_format)
        assert first.exit_code == 0, first.output
        assert first.stdout == invoke(*args, "--format", output_format).stdout
    csv = invoke(*args, "--format", "csv").stdout
    assert csv.splitlines()[0] == "id,run,n,mrr,ndcg@5,judged,judged@5"


def test_several_runs_refuse_micro_averages(files):
    qrels, paths = files
    result = invoke("--qrels", qrels, *run_args(paths), "-m", "recall@5", "--average", "micro")
    assert result.exit_code == 2
    assert result.stderr.startswith("ragaudit: error: evaluate: several runs")
    assert len(result.stderr.splitlines()) == 1


def test_bad_alpha_is_one_line(files):
    qrels, paths = files
    result = invoke("--qrels", qrels, *run_args(paths), "--alpha", "1.5")
    assert (
        result.exit_code == 2
        and "alpha: expected a number strictly between 0 and 1" in result.stderr
    )


def test_latex_table_is_well_formed_and_escaped(files, ranked_runs):
    qrels, paths = files
    result = invoke("--qrels", qrels, *run_args(paths), "-m", "hit@1", "-m", "mrr",
                    "--format", "latex")  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == r"% ragaudit output; needs \usepackage{booktabs,amssymb}"
    start = lines.index(r"\begin{tabular}{llrrrrr}")  # judged@1 and judged beside
    body = lines[start + 4 : start + 7]
    assert [row.count(" & ") for row in body] == [6, 6, 6]
    strong_mrr = np.mean(ranked_runs.hand_values("strong")["mrr"])
    assert body[1].startswith(
        rf"b & strong & 30 & {22 / 30:.4f} \ensuremath{{\blacktriangle}} & "
        rf"{strong_mrr:.4f} \ensuremath{{\blacktriangle}} & "
    )
    assert "relevance\\_threshold=1" in result.stdout and "95\\% interval" in result.stdout
    assert result.stdout.count(r"\begin{tabular}") == result.stdout.count(r"\end{tabular}") == 2
