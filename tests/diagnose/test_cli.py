"""``ragaudit funnel`` and ``ragaudit labels bias`` on saved-run files."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.labels.format import Chunking, ChunkLabels, QuestionLabels, save_chunk_labels


def row(qid, docs, *, evidence=True, abstained=False, correct=True, answerable=True):
    return {
        "id": qid,
        "question": f"question {qid}?",
        "answerable": answerable,
        "gold_docs": ["G"] if answerable else [],
        "retrieved": [
            {"chunk_id": f"{d}#{i}", "doc_id": d, "score": 5.0 - i, "rank": i + 1}
            for i, d in enumerate(docs)
        ],
        "context_ids": [f"{d}#{i}" for i, d in enumerate(docs[:2])],
        "answer": "...",
        "judges": {"abstained": abstained, "correct": correct, "evidence_in_context": evidence},
        "metrics": {},
    }


@pytest.fixture
def run_file(tmp_path):
    rows = [
        row("q1", ["G", "X", "Y"]),
        row("q2", ["X", "G", "Y"], evidence=False, correct=False),  # dies at 2 (k=2)
        row("q3", ["X", "Y", "G"], evidence=False, correct=True),  # gold at rank 3: luck at k=2
        row("q4", ["G", "X", "Y"], abstained=True, correct=False),
        row("u1", ["X", "Y", "Z"], answerable=False, abstained=True, correct=True),
    ]
    data = {
        "format": "ragaudit.run",
        "format_version": 1,
        "name": "tiny_k2",
        "config": {
            "k": 2,
            "retrieval_depth": 3,
            "chunker": "fixed",
            "chunk_size": 800,
            "chunk_overlap": 100,
        },
        "rows": rows,
        "summary": {},
    }
    path = tmp_path / "tiny_k2.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_funnel_table(run_file):
    result = invoke("funnel", run_file)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "THE FUNNEL (k=2, n=4 answerable questions)" in out
    # of n, its interval (Clopper-Pearson 3/4: [0.194, 0.994]), then the conditional rate
    assert "  1 gold doc retrieved             3  0.750  [0.194, 0.994]        0.750" in out
    assert "P(correct) = 0.750 x 0.667 x 0.500 x 1.000 = 0.250" in out
    assert "stage and abstention rates Clopper-Pearson exact; the gap Tango score" in out
    assert "correct by luck  1  q3" in out
    assert 'answered where the right output was "I don\'t know": none' in out
    assert result.stderr == ""


def test_funnel_json_is_deterministic_and_has_the_documented_keys(run_file):
    first = invoke("funnel", run_file, "--format", "json", "--seed", "5", "--resamples", "300")
    second = invoke("funnel", run_file, "--format", "json", "--seed", "5", "--resamples", "300")
    assert first.exit_code == 0 and first.stdout == second.stdout
    data = json.loads(first.stdout)
    assert data["k"] == 2 and data["n"] == 4
    assert [s["kept"] for s in data["stages"]] == [3, 2, 1, 1]
    assert data["died"] == {
        "1-retrieval": ["q3"],
        "2-evidence": ["q2"],
        "3-refusal": ["q4"],
        "4-generation": [],
    }
    assert data["lucky"] == ["q3"]
    assert data["p_correct"] == pytest.approx(1 / 4)
    assert data["gap"] == pytest.approx(3 / 4 - 2 / 4)
    assert data["stage2_source"] == "evidence_in_context"
    assert data["unanswerable"]["correct_abstention_rate"] == 1.0
    assert data["bootstrap"]["seed"] == 5


def test_funnel_reslice_warns_on_stderr(run_file):
    result = invoke("funnel", run_file, "--k", "3", "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("ragaudit: warning: k=3 differs from the run's k=2")
    assert "## The funnel (k=3, n=4 answerable questions)" in result.stdout
    deeper = invoke("funnel", run_file, "--k", "4")
    assert deeper.exit_code == 2
    assert deeper.stderr == (
        "ragaudit: error: k=4 is deeper than the run retrieved (retrieval depth 3); re-run the "
        "pipeline with retrieval_depth >= 4 or choose k <= 3\n"
    )


def labels_file(tmp_path, chunk_size=800):
    labels = ChunkLabels(
        Chunking("fixed", chunk_size, 100),
        "hand",
        {
            "q1": QuestionLabels("?", ["G"], 3, ["G#0"], [], "hand"),
            "q2": QuestionLabels("?", ["G"], 3, ["G#5"], [], "hand"),  # answer chunk elsewhere
            "q4": QuestionLabels("?", ["G"], 3, ["G#0"], [], "hand"),
        },
    )
    path = tmp_path / f"labels{chunk_size}.yaml"
    save_chunk_labels(labels, path)
    return path


def test_funnel_with_chunk_labels(run_file, tmp_path):
    result = invoke("funnel", run_file, "--labels", labels_file(tmp_path), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["stage2_source"] == "mixed"
    assert data["stage2_source_counts"] == {"chunk_labels": 3, "evidence_in_context": 1}
    assert data["died"]["2-evidence"] == ["q2"]  # its answer chunk G#5 was never in context
    wrong = invoke("funnel", run_file, "--labels", labels_file(tmp_path, 400))
    assert wrong.exit_code == 2
    assert "made for chunker=fixed, chunk_size=400" in wrong.stderr
    assert wrong.stderr.count("\n") == 1


def test_bad_run_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    result = invoke("funnel", bad)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"ragaudit: error: {bad}:1: invalid JSON")
    assert result.stderr.count("\n") == 1


def test_labels_bias_formats(run_file, tmp_path):
    labels = labels_file(tmp_path)
    table = invoke("labels", "bias", run_file, "--labels", labels)
    assert table.exit_code == 0, table.output
    assert "OPTIMISM BIAS OF DOCUMENT-LEVEL LABELS (k=2, n=3 questions)" in table.stdout
    # q1 and q4 retrieve G#0 (their answer chunk); q2 retrieves G#1 only: a phantom hit
    assert "  hit rate@2      1.000        0.667     +0.333" in table.stdout
    assert "answer chunk absent): q2" in table.stdout
    data = json.loads(
        invoke("labels", "bias", run_file, "--labels", labels, "--format", "json").stdout
    )
    assert data["summary"]["hit_rate"]["inflation"] == pytest.approx(1 / 3)
    assert data["phantom_hits"] == ["q2"]
    out = tmp_path / "bias.html"
    html = invoke("labels", "bias", run_file, "--labels", labels, "--format", "html", "--out", out)
    assert html.exit_code == 0 and html.stdout == ""
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<circle") == 3


def test_funnel_ci_picks_the_rate_interval(run_file):
    wilson = invoke("funnel", run_file, "--ci", "wilson", "--format", "json")
    assert wilson.exit_code == 0, wilson.output
    doc = json.loads(wilson.stdout)
    assert doc["rate_ci_method"] == "Wilson score" and doc["gap_ci_method"] == "Tango score"
    boot = json.loads(invoke("funnel", run_file, "--ci", "bootstrap", "--format", "json").stdout)
    assert boot["gap_ci_method"] == "percentile bootstrap"
    assert invoke("funnel", run_file, "--ci", "exact").exit_code == 2
