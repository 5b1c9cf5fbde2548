"""Hostile ids and names: every renderer escapes, so nothing can inject markup or lines."""

from __future__ import annotations

import json
import re
from html import escape

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.reports import KeyValues, Report, Section, Table, Text, render
from ragaudit.reports._escape import md_inline

HOSTILE = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "q1\n# injected heading",
    "q2\n```\nfenced",
    "a|b|c",
    "[click](javascript:alert(1))",
    "\x1b[31mred",
    "- list\r\n> quote",
    "&lt;script&gt;",
)


def hostile_report() -> Report:
    return Report(
        HOSTILE[0],
        (
            Section(
                HOSTILE[2],
                (
                    Table(("id", "name"), tuple((h, h) for h in HOSTILE)),
                    Text(HOSTILE),
                    KeyValues(tuple((h, h) for h in HOSTILE)),
                ),
            ),
            Section("code", (Text(HOSTILE, monospace=True),)),
        ),
        data={"ids": list(HOSTILE)},
        notes=HOSTILE,
    )


def assert_safe_markdown(md: str, n_fenced_blocks: int) -> None:
    # Outside code blocks (shown verbatim): no raw tag, every `<` before a letter is escaped,
    # and no link, every `]` before `(` is escaped.
    prose = re.sub(r"^(`{3,})\n.*?^\1$", "", md, flags=re.S | re.M)
    assert not re.search(r"(?<!\\)<[A-Za-z/!?]", prose)
    assert not re.search(r"(?<!\\)\]\(", prose)
    # No terminal escape or carriage return survives.
    assert "\x1b" not in md and "\r" not in md
    lines = md.splitlines()
    # Headings, quotes and fences only where the renderer put them.
    assert not [ln for ln in prose.splitlines() if ln.startswith(("# injected", "> ", "- list"))]
    fences = [line for line in lines if line.startswith("```")]
    assert len(fences) == 2 * n_fenced_blocks
    # Every row of a table has as many unescaped pipes as its header.
    table: list[int] = []
    for line in [*lines, ""]:
        if line.startswith("|"):
            table.append(len(re.findall(r"(?<!\\)\|", line)))
        elif table:
            assert len(set(table)) == 1, table
            table = []


def test_markdown_escapes_every_hostile_string():
    md = render(hostile_report(), "markdown")
    assert_safe_markdown(md, n_fenced_blocks=1)
    assert md.count("\n# ") == 0 and md.startswith("# \\<script>")
    # The code block keeps the text verbatim but on one line per value.
    block = md.split("```\n")[1]
    assert "q2\\n```\\nfenced" in block
    assert md.splitlines().count("```") == 0  # the fence grew past the ``` in the data
    assert md.count("````") == 2


def test_text_keeps_one_value_on_one_line():
    text = render(hostile_report(), "table")
    assert "\x1b" not in text and "\r" not in text
    assert "q1\\n# injected heading" in text
    assert not any(line.startswith("# injected") for line in text.splitlines())


def test_html_escapes_everything():
    page = render(hostile_report(), "html")
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&amp;lt;script&amp;gt;" in page


def test_csv_and_json_keep_the_raw_values():
    report = hostile_report()
    assert json.loads(render(report, "json")) == {"ids": list(HOSTILE)}
    import csv
    import io

    rows = list(csv.reader(io.StringIO(render(report, "csv").split("\n\n")[0], newline="")))
    assert rows[0] == ["section", "id", "name"]
    assert [r[0] for r in rows[1:]] == [HOSTILE[2]] * len(HOSTILE)  # the raw section title
    assert [r[1] for r in rows[1:]] == list(HOSTILE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("k3_cs800", "k3_cs800"),
        ("p <0.001", "p <0.001"),
        ("_em_", "\\_em\\_"),
        ("a*b*", "a\\*b\\*"),
        ("x<y", "x\\<y"),
        ("`code`", "\\`code\\`"),
        ("[a](b)", "[a\\](b)"),
        ("[a]: b", "[a\\]: b"),
        ("&amp;", "\\&amp;"),
        ("AT&T", "AT&T"),
        ("~~gone~~", "\\~\\~gone\\~\\~"),
    ],
)
def test_md_inline_cases(text, expected):
    assert md_inline(text) == expected


@pytest.mark.parametrize(
    "start", ["# h", "> q", "- l", "+ l", "1. l", "2) l", "===", "0.1.0 · seed 0", "10. x"]
)
def test_md_inline_line_start_renders_as_the_text(start):
    """Escaped at a line start, the text is one paragraph showing exactly the text: no
    heading, quote or list, and no backslash left visible (CommonMark shows a backslash
    before a digit literally, so an ordered-list marker is escaped at its `.` or `)`)."""
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").render(md_inline(start, line_start=True))
    assert html == f"<p>{escape(start, quote=False)}</p>\n"


def _saved_run(path, name, ids):
    rows = [
        {
            "id": qid,
            "question": f"question {qid}?",
            "answerable": True,
            "gold_docs": ["G"],
            "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "score": 1.0, "rank": 1}],
            "context_ids": ["G#0"],
            "answer": "...",
            "judges": {"abstained": False, "correct": i % 2 == 0, "evidence_in_context": i % 3 > 0},
            "metrics": {"correct": float(i % 2 == 0), "recall@k": 1.0},
        }
        for i, qid in enumerate(ids)
    ]
    data = {"format": "ragaudit.run", "format_version": 1, "name": name, "config": {"k": 1},
            "rows": rows, "summary": {}}  # fmt: skip
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_funnel_and_compare_markdown_with_hostile_ids(tmp_path):
    ids = [h for h in HOSTILE if "\r" not in h]
    a = _saved_run(tmp_path / "a.json", HOSTILE[1], ids)
    b = _saved_run(tmp_path / "b.json", HOSTILE[2], list(reversed(ids)))
    runner = CliRunner()
    funnel = runner.invoke(main, ["funnel", a, "--format", "markdown", "--resamples", "20"])
    assert funnel.exit_code == 0, funnel.output
    assert_safe_markdown(funnel.stdout, n_fenced_blocks=1)
    options = ["--format", "markdown", "--resamples", "50", "--permutations", "50", "--full"]
    compare = runner.invoke(main, ["compare", a, b, *options])
    assert compare.exit_code == 0, compare.output
    assert_safe_markdown(compare.stdout, n_fenced_blocks=compare.stdout.count("paired view of"))
    assert "\\<script>" in compare.stdout or "\\<script>" in funnel.stdout
    shown = runner.invoke(main, ["show", a, "--format", "markdown"])
    assert shown.exit_code == 0, shown.output
    assert_safe_markdown(shown.stdout, n_fenced_blocks=0)
