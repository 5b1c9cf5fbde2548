"""judged@k beside the metrics of ``evaluate`` and ``compare --qrels``, and its warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data import Qrels, Run
from ragaudit.exceptions import InputError
from ragaudit.metrics import evaluate
from ragaudit.metrics.judged import JudgedCoverage, judged_coverage, judged_gap, judged_names

DATA = Path(__file__).parents[1] / "data" / "metrics"
QRELS, RUN = str(DATA / "qrels.txt"), str(DATA / "run.txt")


def test_evaluate_prints_judged_beside_the_metrics_and_warns():
    result = CliRunner().invoke(
        main, ["evaluate", "--qrels", QRELS, "--run", RUN, "-m", "ndcg@5", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)["metrics"]
    # q1: B A D C E, A and C labelled -> 2/5; q2: Y X W, X and Y labelled -> 2/3 (a ranking
    # of 3 < k divides by 3); q3 is not in the run -> 0 (missing=zero).
    assert metrics["judged@5"] == pytest.approx((2 / 5 + 2 / 3 + 0) / 3)
    assert "judged@5 is 0.356 on average; 2 of 3 questions" in result.stderr
    assert "q1, q3" in result.stderr and RUN in result.stderr


def test_judged_threshold_zero_silences_the_warning():
    result = CliRunner().invoke(
        main,
        ["evaluate", "--qrels", QRELS, "--run", RUN, "-m", "ndcg@5", "--judged-threshold", "0"],
    )
    assert result.exit_code == 0, result.output
    assert "judged@5" in result.stdout
    assert "labelled:" not in result.stderr


def write_runs(tmp_path: Path) -> tuple[str, str, str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 A{i} 1\nq{i} 0 B{i} 0\n" for i in range(4)))
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("".join(f"q{i} Q0 A{i} 1 2 a\nq{i} Q0 B{i} 2 1 a\n" for i in range(4)))
    b.write_text("".join(f"q{i} Q0 X{i} 1 2 b\nq{i} Q0 A{i} 2 1 b\n" for i in range(4)))
    return str(qrels), str(a), str(b)


def test_several_runs_warn_when_judged_differs_by_more_than_the_margin(tmp_path):
    qrels, a, b = write_runs(tmp_path)
    result = CliRunner().invoke(
        main, ["evaluate", "--qrels", qrels, "--run", a, "--run", b, "-m", "ndcg@2"]
    )
    assert result.exit_code == 0, result.output
    # a: 2/2 judged, b: 1/2 judged -> gap 0.5 > 0.1, favouring a.
    assert "judged@2 differs by 0.500" in result.stderr
    assert f"favours {a}" in result.stderr
    quiet = CliRunner().invoke(
        main,
        ["evaluate", "--qrels", qrels, "--run", a, "--run", b, "-m", "ndcg@2",
         "--judged-margin", "0.5", "--judged-threshold", "0.5"],
    )  # fmt: skip
    assert "differs by" not in quiet.stderr


def test_compare_with_qrels_warns_about_the_gap(tmp_path):
    qrels, a, b = write_runs(tmp_path)
    result = CliRunner().invoke(main, ["compare", "--qrels", qrels, a, b, "-m", "ndcg@2"])
    assert result.exit_code == 0, result.output
    assert "judged@2" in result.stdout
    assert "judged@2 differs by 0.500" in result.stderr


def test_judged_names():
    assert judged_names(["ndcg@10", "recall@10", "map"]) == ["judged@10", "judged"]
    assert judged_names(["judged@3", "P@3"]) == []


def test_coverage_and_gap_messages():
    qrels = Qrels({"q1": {"A": 1}, "q2": {"B": 0, "C": 1}})
    ev = evaluate(qrels, Run({"q1": ["A", "x"], "q2": ["y", "z"]}), ["judged@2"])
    (coverage,) = judged_coverage(ev, "r", threshold=0.5)
    assert (coverage.mean, coverage.below) == (0.25, ("q2",))
    assert "1 of 2 questions have less than 50% of their top 2 labelled: q2" in coverage.message()
    same = JudgedCoverage("s", "judged@2", 2, 0.3, 0.5, (), 2)
    assert judged_gap(coverage, same) is None  # 0.05 apart
    with pytest.raises(InputError, match="share in"):
        judged_coverage(ev, threshold=2)


def test_evaluate_json_carries_judged_and_its_warnings():
    result = CliRunner().invoke(
        main, ["evaluate", "--qrels", QRELS, "--run", RUN, "-m", "ndcg@5", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # by hand as above: q1 2/5, q2 2/3, q3 0 (missing=zero); below 0.5: q1 and q3
    (judged,) = data["judged"]
    assert (judged["run"], judged["metric"], judged["below"]) == (RUN, "judged@5", ["q1", "q3"])
    assert judged["mean"] == pytest.approx((2 / 5 + 2 / 3 + 0) / 3)
    # the JSON's warnings are the ones stderr printed, word for word
    assert data["warnings"] == [judged["warning"]]
    assert f"ragaudit: warning: {judged['warning']}" in result.stderr
    markdown = CliRunner().invoke(
        main, ["evaluate", "--qrels", QRELS, "--run", RUN, "-m", "ndcg@5", "--format", "markdown"]
    )
    assert f"unjudged: {judged['warning']}" in " ".join(markdown.stdout.split())
    table = CliRunner().invoke(main, ["evaluate", "--qrels", QRELS, "--run", RUN, "-m", "ndcg@5"])
    assert "unjudged:" not in table.stdout  # the terminal has them on stderr, once


def test_evaluate_json_of_several_runs_carries_the_gap(tmp_path):
    qrels, a, b = write_runs(tmp_path)
    result = CliRunner().invoke(
        main,
        ["evaluate", "--qrels", qrels, "--run", a, "--run", b, "-m", "ndcg@2", "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # a: A_i, B_i both labelled -> 2/2; b: X_i unlabelled, A_i labelled -> 1/2; gap 0.5 > 0.1
    assert [(c["run"], c["mean"]) for c in data["judged"]] == [(a, 1.0), (b, 0.5)]
    (gap,) = data["warnings"]
    assert gap.startswith("judged@2 differs by 0.500") and f"favours {a}" in gap
    assert len(data["runs"]) == 2


def test_evaluate_filled_json_carries_the_warnings(tmp_path):
    qrels, _, b = write_runs(tmp_path)
    filled = tmp_path / "filled.txt"
    filled.write_text("".join(f"q{i} 0 X{i} 0\n" for i in range(4)))
    result = CliRunner().invoke(
        main,
        ["evaluate", "--qrels", qrels, "--run", b, "-m", "ndcg@2", "--filled", str(filled),
         "--judged-threshold", "0.6", "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # on the original labels b's top 2 is half labelled (1/2 < 0.6) for all 4 questions
    assert data["judged"][0]["n_below"] == 4 and data["judged"][0]["mean"] == 0.5
    assert data["warnings"][0].startswith(f"{b}: judged@2 is 0.500 on average; 4 of 4")
    assert data["filled"]["metrics"]["judged@2"] == 1.0
