"""``ragaudit evaluate`` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragaudit.cli import main

DATA = Path(__file__).parents[1] / "data" / "metrics"
QRELS, RUN = str(DATA / "qrels.txt"), str(DATA / "run.txt")
L2 = np.log2


def invoke(*args: str):
    return CliRunner().invoke(main, ["evaluate", *args])


def test_json_output_matches_hand_values_and_trec_eval_rules():
    result = invoke(
        "--qrels",
        QRELS,
        "--run",
        RUN,
        "-m",
        "ndcg@5",
        "-m",
        "mrr",
        "--format",
        "json",
        "--per-query",
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    q1 = (1 / L2(3) + 1 / L2(5)) / (1 + 1 / L2(3))  # B *A* D *C* E
    q2 = (1 + 2 / L2(3)) / (2 + 1 / L2(3))  # Y(1), X(2) tied at 2.0: id descending puts Y first
    assert out["per_query"]["q1"]["ndcg@5"] == pytest.approx(q1, abs=1e-12)
    assert out["per_query"]["q2"]["ndcg@5"] == pytest.approx(q2, abs=1e-12)
    # judged@k is printed beside the metrics (q3 is missing from the run: nothing judged)
    assert out["per_query"]["q3"] == {"ndcg@5": 0.0, "mrr": 0.0, "judged@5": 0.0, "judged": 0.0}
    assert out["metrics"]["mrr"] == pytest.approx((1 / 2 + 1 + 0) / 3)
    assert out["n_queries"] == 3 and out["unit"] == "doc" and out["average"] == "macro"
    assert "q3" in result.stderr and "missing from the run" in result.stderr


def test_table_states_unit_averaging_k_and_ties():
    result = invoke(
        "--qrels", QRELS, "--run", RUN, "-m", "recall@5", "-m", "map", "--missing", "skip"
    )
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "unit=doc average=macro n=2 relevance_threshold=1 missing=skip"
    assert lines[2].split() == ["recall@5", "5", "1.0000", "recall_5"]
    assert lines[3].split() == ["map", "all", f"{(0.5 + 1.0) / 2:.4f}", "map"]
    assert "tied score groups: 1" in result.stdout
    assert lines[4].split() == ["judged@5", "5", f"{(2 / 5 + 2 / 3) / 2:.4f}", "-"]
    # the only warning: q1 has 2 of its 5 items labelled (< 0.5), once for the run
    assert [line.split(":")[2] for line in result.stderr.splitlines()] == [" " + RUN]


def test_output_is_byte_identical_across_runs():
    args = ("--qrels", QRELS, "--run", RUN, "--format", "csv", "--per-query")
    assert invoke(*args).stdout == invoke(*args).stdout


def test_csv_micro_average():
    result = invoke(
        "--qrels", QRELS, "--run", RUN, "-m", "recall@1", "--average", "micro", "--format", "csv"
    )
    assert result.exit_code == 0
    header, row, judged = result.stdout.splitlines()
    assert header == "metric,k,value,unit,average,n"
    # pooled: q1 finds 0 of 2 at k=1, q2 finds 1 (Y) of 2, q3 0 of 1 -> 1 / 5
    assert row == f"recall@1,1,{1 / 5!r},doc,micro,3"
    # judged@1 averages per question under micro too: B unjudged, Y judged, q3 absent
    assert judged == f"judged@1,1,{1 / 3!r},doc,micro,3"


def test_chunk_map_lifts_a_chunk_run(tmp_path):
    (tmp_path / "run.txt").write_text("q1 Q0 c1 1 3 t\nq1 Q0 c2 2 2 t\nq1 Q0 c3 3 1 t\n")
    (tmp_path / "map.tsv").write_text("chunk_id\tdoc_id\nc1\tB\nc2\tB\nc3\tA\n")
    result = invoke(
        "--qrels",
        QRELS,
        "--run",
        str(tmp_path / "run.txt"),
        "--chunk-map",
        str(tmp_path / "map.tsv"),
        "-m",
        "mrr",
        "--missing",
        "skip",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["metrics"]["mrr"] == 0.5  # docs B, A: A at rank 2


@pytest.mark.parametrize(
    ("files", "extra", "message"),
    [
        ({"run.txt": "q1 Q0 A 1 1.0\n"}, [], r"run\.txt:1: expected 6 whitespace-separated"),
        ({"run.txt": "q1 Q0 A 1 x t\n"}, [], r"run\.txt:1: score: expected a number, found 'x'"),
        ({"run.txt": "q1 Q0 A 1 1 t\n"}, ["-m", "ndcg@0"], r"expected a cutoff k >= 1"),
        ({"run.txt": "q1 Q0 A 1 1 t\n"}, ["-m", "bleu"], r"unknown metric 'bleu'; valid metrics"),
        ({"run.txt": "zz Q0 A 1 1 t\n"}, [], r"share no question id"),
        (
            {"run.txt": "q1 Q0 c1 1 1 t\n", "map.tsv": "c1 D1\n"},
            ["--chunk-map", "map.tsv"],
            r"map\.tsv:1: expected 2 tab-separated fields",
        ),
        (
            {"run.txt": "q1 Q0 c9 1 1 t\n", "map.tsv": "c1\tD1\n"},
            ["--chunk-map", "map.tsv"],
            r"1 run item\(s\) of 1 question\(s\) are not in the chunk->document map, e\.g\. 'c9'",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, files, extra, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    extra = [str(tmp_path / e) if e.endswith(".tsv") else e for e in extra]
    result = invoke("--qrels", QRELS, "--run", str(tmp_path / "run.txt"), *extra)
    assert result.exit_code == 2
    error_lines = [
        line for line in result.stderr.splitlines() if line.startswith("ragaudit: error")
    ]
    assert len(error_lines) == 1
    import re

    assert re.search(message, error_lines[0])
    assert "Traceback" not in result.output


def test_missing_qrels_file_is_exit_code_2(tmp_path):
    result = invoke("--qrels", str(tmp_path / "none.txt"), "--run", RUN)
    assert result.exit_code == 2
    assert "none.txt: expected an existing file, found nothing at this path" in result.stderr
