"""``ragaudit run``'s summary prints judged@k beside the retrieval means, and warns below the
threshold.  Expected values by hand (ir_measures' Judged@k: labelled items in the top k /
min(k, ranking length), averaged over the labelled questions)."""

from __future__ import annotations

import json

import pytest

from ragaudit.data.qrels import Qrels
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.unjudged import run_judged
from ragaudit.reports.renderer import render
from ragaudit.reports.runs import run_summary_report

METRICS = {"hit@k": 1.0, "recall@k": 1.0, "precision@k": 0.5, "mrr@k": 1.0, "ndcg@k": 1.0,
           "map@k": 1.0, "answered": 1.0, "correct": 1.0}  # fmt: skip
CHUNK = {f"chunk_{k}": v for k, v in METRICS.items() if "@" in k}


def _row(qid: str, gold: list[str], hits: list[tuple[str, str]]) -> dict:
    retrieved = [{"chunk_id": c, "doc_id": d, "rank": i + 1} for i, (c, d) in enumerate(hits)]
    return {"id": qid, "gold_docs": gold, "retrieved": retrieved,
            "metrics": {**METRICS, **CHUNK}}  # fmt: skip


@pytest.fixture
def saved() -> SavedRun:
    # q1: documents X, Y, G; only G is a gold document -> judged@3 = 1/3 (below 0.5)
    # q2: chunks g0, g1 of G then h0 of H -> documents G, H, both gold -> judged@3 = 2/2
    rows = [
        _row("q1", ["G"], [("x0", "X"), ("y0", "Y"), ("g0", "G")]),
        _row("q2", ["G", "H"], [("g0", "G"), ("g1", "G"), ("h0", "H")]),
    ]
    return SavedRun.from_dict({"name": "r", "config": {"k": 3, "seed": 0}, "rows": rows})


def test_document_level_column_and_warning(saved: SavedRun):
    report = run_summary_report(saved, judged=run_judged(saved))
    text = render(report, "table")
    lines = text.splitlines()
    at = lines.index("RETRIEVAL (document level, k=3, macro mean over 2 answerable questions)")
    assert lines[at + 1].split()[-1] == "judged@3"
    assert lines[at + 2].split()[-1] == f"{(1 / 3 + 1) / 2:.3f}" == "0.667"
    assert "unjudged: r: judged@3 (document level) is 0.667 on average; 1 of 2 questions have" in (
        " ".join(line.strip() for line in lines)
    )
    data = json.loads(render(report, "json"))
    assert data["judged"]["doc"]["mean"] == pytest.approx((1 / 3 + 1) / 2, abs=1e-12)
    assert data["judged"]["doc"]["below"] == ["q1"] and data["judged"]["chunk"] is None


def test_chunk_level_column_no_warning_above_threshold(saved: SavedRun):
    # every judged chunk, grade 0 included: q1 {x0, g0} of x0 y0 g0 -> 2/3;
    # q2 {g0, g1} of g0 g1 h0 -> 2/3; none below 0.5
    labels = Qrels({"q1": {"g0": 2, "x0": 0}, "q2": {"g0": 2, "g1": 0}}, unit="chunk")
    report = run_summary_report(saved, judged=run_judged(saved, labels, threshold=0.3))
    lines = render(report, "table").splitlines()
    at = lines.index("RETRIEVAL (chunk level, k=3, macro mean over 2 questions with chunk labels)")
    assert lines[at + 2].split()[-1] == f"{2 / 3:.3f}"
    # threshold 0.3: neither level has a question below it (1/3 > 0.3), so no note
    assert not any(line.lstrip().startswith("unjudged:") for line in lines)


def test_without_judged_the_column_says_unknown(saved: SavedRun):
    lines = render(run_summary_report(saved), "table").splitlines()
    assert lines[4].split()[-1] == "-"
    assert json.loads(render(run_summary_report(saved), "json"))["judged"] is None


def test_import_prints_judged_after_the_retrieval_means(saved: SavedRun, tmp_path):
    from click.testing import CliRunner

    from ragaudit.cli import main

    path = tmp_path / "r.json"
    path.write_text(json.dumps(saved.to_dict()))
    result = CliRunner().invoke(main, ["import", str(path)])
    assert result.exit_code == 0, result.output
    names = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("  ")]
    # the row follows map@k, the last retrieval mean; by hand (1/3 + 2/2) / 2 over 2 questions
    at = names.index("judged@k")
    assert names[at - 1] == "map@k"
    row = result.stdout.splitlines()[[ln.startswith("  judged@k") for ln in
                                      result.stdout.splitlines()].index(True)]  # fmt: skip
    assert row.split()[-2:] == [f"{(1 / 3 + 1) / 2:.3f}", "2"]
    assert "unjudged: r: judged@3 (document level) is 0.667" in result.stdout
    data = json.loads(CliRunner().invoke(main, ["import", str(path), "--format", "json"]).stdout)
    assert data["judged"]["doc"]["below"] == ["q1"]
