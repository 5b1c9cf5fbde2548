"""Zero answerable questions: every funnel rate is 0/0, which is undefined, never 0.000.

Issue 10 item 6: the funnel printed ``P(correct) = 0.000`` for a run whose questions were all
unanswerable.  Each output (library, terminal, JSON, Markdown, CSV, the audit page in HTML,
Markdown and the demo's text form) must say "undefined" with the reason, and JSON must hold
``null``.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import as_saved_run
from ragaudit.diagnose.audit import build_audit
from ragaudit.diagnose.funnel import compute_funnel
from ragaudit.reports.audit_page import audit_report
from ragaudit.reports.renderer import render_markdown, render_text

REASON = "no answerable questions"


def unanswerable_row(qid: str, abstained: bool) -> dict:
    return {
        "id": qid,
        "question": f"question {qid}?",
        "answerable": False,
        "gold_docs": [],
        "retrieved": [{"chunk_id": "X#0", "doc_id": "X", "score": 1.0, "rank": 1}],
        "answer": "I don't know" if abstained else "an answer",
        "judges": {"abstained": abstained, "correct": abstained},
        "metrics": {},
    }


def run_doc() -> dict:
    return {
        "format": "ragaudit.run",
        "format_version": 1,
        "name": "all_unanswerable",
        "config": {"k": 1},
        "rows": [unanswerable_row("u1", True), unanswerable_row("u2", False)],
        "summary": {},
    }


@pytest.fixture
def run_file(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run_doc()), encoding="utf-8")
    return path


def test_library_result_is_none_with_a_reason():
    f = compute_funnel(run_doc(), n_resamples=10)
    assert f.n == 0
    assert f.p_correct is None
    assert f.stage1_rate is None
    assert f.correct_end_to_end is None
    assert f.gap is None
    assert f.gap_ci is None
    assert all(s.rate is None and s.conditional is None for s in f.stages)
    assert f.undefined_reason is not None and REASON in f.undefined_reason
    # the unanswerable block is still measured: 1 of 2 refused
    assert f.unanswerable.n == 2 and f.unanswerable.rate == pytest.approx(1 / 2)
    d = f.to_dict()
    for key in ("p_correct", "stage1_rate", "correct_end_to_end", "gap"):
        assert d[key] is None
    assert [s["rate"] for s in d["stages"]] == [None] * 4
    assert REASON in d["undefined_reason"]
    json.dumps(d, allow_nan=False)


def test_defined_funnel_has_no_reason():
    doc = run_doc()
    doc["rows"].append(
        {
            "id": "q1",
            "answerable": True,
            "gold_docs": ["G"],
            "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
            "judges": {"abstained": False, "correct": True, "evidence_in_context": True},
        }
    )
    f = compute_funnel(doc, n_resamples=10)
    assert f.p_correct == 1.0 and f.undefined_reason is None
    assert f.to_dict()["undefined_reason"] is None


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_funnel_cli_table_says_undefined_and_warns(run_file):
    result = invoke("funnel", run_file)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "P(correct) = undefined: no answerable questions" in out
    assert "end-to-end correct:             undefined" in out
    assert "0.000" not in out.split("UNANSWERABLE")[0]
    assert result.stderr.startswith("ragaudit: warning: no answerable questions")


@pytest.mark.parametrize("fmt", ["json", "markdown", "csv"])
def test_funnel_cli_other_formats(run_file, fmt):
    result = invoke("funnel", run_file, "--format", fmt)
    assert result.exit_code == 0, result.output
    out = result.stdout
    if fmt == "json":
        data = json.loads(out)
        assert data["p_correct"] is None and data["gap"] is None
        assert REASON in data["undefined_reason"]
    elif fmt == "markdown":
        assert "P(correct) = undefined" in out
        assert "= 0.000" not in out
    else:
        assert "0.0" not in out.split("\n\n")[0]  # the stage table's rates are empty, not 0


def test_audit_page_text_markdown_and_html(run_file, tmp_path):
    audit = build_audit([as_saved_run(run_file)], n_resamples=10, compare_resamples=10)
    text = render_text(audit_report(audit))
    assert "P(correct) and the gap are undefined: no answerable questions" in text
    assert "gap hit rate" not in text
    md = render_markdown(audit_report(audit))
    assert "P(correct) and the gap are undefined" in md
    assert "end-to-end correctness: +0.000" not in md
    out = tmp_path / "page.html"
    result = invoke("report", run_file, "--out", out, "--resamples", "10")
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "P(correct) = <strong>undefined</strong>: no answerable questions" in page
    assert "P(correct) undefined: no answerable questions" in page  # the funnel chart
    assert "the gap hit rate cannot see" not in page
