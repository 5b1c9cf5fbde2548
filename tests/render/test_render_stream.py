"""``show`` streams its text one question at a time: the pieces join to the whole rendering.

The oracle is :func:`render` of the whole report, as ``show`` printed it before it streamed.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import load_saved_run
from ragaudit.diagnose.drilldown import select_questions
from ragaudit.reports.renderer import render, render_stream
from ragaudit.reports.report import Report, Section, Text
from ragaudit.reports.show import show_report, show_sections


def _row(i: int) -> dict:
    hit = i % 3 == 0
    doc = "G" if hit else "X"
    return {
        "id": f"q{i:02d}",
        "answerable": i % 7 != 0,
        "gold_docs": ["G"],
        "retrieved": [
            {"chunk_id": f"{doc}#0", "doc_id": doc, "rank": 1},
            {"chunk_id": "Y#1", "doc_id": "Y", "rank": 2},
        ],
        "judges": {"abstained": i % 5 == 0, "correct": hit, "evidence_in_context": hit},
        "answer": None if i % 5 == 0 else f"answer {i}",
    }


@pytest.fixture(scope="module")
def run_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("stream") / "r.json"
    doc = {"format": "ragaudit.run", "format_version": 1, "name": "r", "config": {"k": 2},
           "rows": [_row(i) for i in range(30)]}  # fmt: skip
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("args", [[], ["--failures"], ["--stage", "1-retrieval"], ["q03"],
                                  ["--stage", "lucky"]])  # fmt: skip
def test_show_prints_what_the_whole_report_renders(run_path, args):
    qids = [a for a in args if a.startswith("q")]
    flags = [a for a in args if not a.startswith("q")]
    saved = load_saved_run(run_path)
    k, views = select_questions(
        saved, qids, failures="--failures" in flags,
        stage=flags[1] if "--stage" in flags else None,
    )  # fmt: skip
    note = "pass --corpus DIR to see each retrieved chunk's text"
    whole = render(show_report(saved.name, k, views, note=note), "table")
    result = CliRunner().invoke(main, ["show", run_path, *args])
    assert result.exit_code == 0, result.output
    assert result.stdout == whole
    pieces = list(render_stream(*show_sections(saved.name, k, views, note), "table"))
    assert "".join(pieces) == whole
    # one piece per question (plus the head and the notes), not one string
    assert len(pieces) == len(views) + 2 if views else len(pieces) == 2


def test_other_formats_are_rendered_whole():
    head = Report("T", (Section("A", (Text(("a",)),)),), data={"x": 1}, notes=("n",))
    rest = [Section("B", (Text(("b",)),)), Section("", ())]
    full = Report("T", (*head.sections, *rest), data={"x": 1}, notes=("n",))
    for fmt in ("markdown", "json", "html", "csv"):
        assert "".join(render_stream(head, iter(rest), fmt)) == render(full, fmt)
    assert "".join(render_stream(head, iter(rest), "table")) == render(full, "table")
    untitled = Report("", ())
    assert "".join(render_stream(untitled, iter(rest), "table")) == render(
        Report("", tuple(rest)), "table"
    )
