"""The page's block types (Cell, Span, Items, Figure, Details, section options) in every
format, against hand-written expected text; hostile strings in each of them stay inert."""

from __future__ import annotations

import csv
import io

from ragaudit.reports import (
    FORMATS,
    Cell,
    Details,
    Figure,
    Items,
    Report,
    Section,
    Span,
    Table,
    Text,
    render,
)
from ragaudit.reports.renderer import render_markdown

SCRIPT = "<script>alert(1)</script>"

DRILL = Details(
    (Span("died:", "stage"), Span(" "), Span("q|1", "code"), Span(" " + SCRIPT)),
    (
        Table(("judge", "verdict"), (("correct", "false"),)),
        Items(((("G#0 [gold]"), (Span("8 "), Span("EUR", "mark"))),)),
    ),
    cls="question",
    attrs=(("qid", 'q"1'),),
)
BLOCKS = Report(
    "Blocks",
    (
        Section(
            "Numbers",
            (
                Table(
                    ("number", "run"),
                    (
                        (
                            "recall",
                            Cell(
                                "0.500",
                                sub="[0.1, 0.9] n=4",
                                cls="val",
                                attrs=(("value", "0.5"), ("bad name", "x")),
                            ),
                        ),
                    ),
                    row_headers=True,
                    cls="dash",
                ),
                Figure(('<svg class="c"></svg>',), alt=("chart: 0.5",), caption="cap", cls="chart"),
                Text(("a note",), style="note"),
            ),
            anchor="numbers",
        ),
        Section("Drill", (DRILL,), level=3),
        Section("Terminal only", (Text(("just text",)),), only=("table",)),
    ),
)


def test_html_renders_every_block():
    page = render(BLOCKS, "html")
    assert "<h2 id=numbers>Numbers</h2>" in page and "<h3>Drill</h3>" in page
    assert '<table class="dash">' in page and "<tr><th>recall</th>" in page
    # a Cell: its class, its data attributes (a name that is no identifier dropped), its sub line
    assert (
        '<td class="val r" data-value="0.5">0.500 <span class="ci">[0.1, 0.9] n=4</span></td>'
        in page
    )
    assert (
        '<figure class="chart">\n<svg class="c"></svg>\n<figcaption class="note">cap</figcaption>'
        in page
    )
    assert "chart: 0.5" not in page  # the text alternative is for the other formats
    assert '<p class="note">a note</p>' in page
    assert (
        '<details class="question" data-qid="q&quot;1"><summary><span class="stage">died:</span> '
        "<code>q|1</code> &lt;script&gt;alert(1)&lt;/script&gt;</summary>"
    ) in page
    assert "<ol>\n<li>G#0 [gold]<div>8 <mark>EUR</mark></div></li>\n</ol>" in page
    assert "Terminal only" not in page and "<script" not in page


def test_text_renders_every_block():
    assert (
        render(BLOCKS, "table")
        == (
            "Blocks\n"
            "\n"
            "NUMBERS\n"
            "  number" + " " * 19 + "run\n"
            "  recall  0.500 [0.1, 0.9] n=4\n"
            "\n"
            "  chart: 0.5\n"
            "  cap\n"  # the caption, as on the page (it was dropped from the terminal form)
            "\n"
            "  a note\n"
            "\n"
            "DRILL\n"
            "  died: q|1 <script>alert(1)</script>\n"
            "    judge    verdict\n"
            "    correct    false\n"
            "\n"
            "    1. G#0 [gold]\n"
            "        8 EUR\n"
            "\n"
            "TERMINAL ONLY\n"
            "  just text\n"
        )
    )


def test_markdown_renders_every_block():
    assert render(BLOCKS, "markdown") == (
        "# Blocks\n"
        "\n"
        "## Numbers\n"
        "\n"
        "| number | run |\n"
        "| :--- | ---: |\n"
        "| recall | 0.500 [0.1, 0.9] n=4 |\n"
        "\n"
        "chart: 0.5  \n"
        "cap\n"
        "\n"
        "a note\n"
        "\n"
        "### Drill\n"
        "\n"
        "<details><summary>died: q|1 &lt;script&gt;alert(1)&lt;/script&gt;</summary>\n"
        "<pre>judge    verdict\n"
        "correct    false\n"
        "\n"
        "1. G#0 &#91;gold&#93;\n"
        "    8 EUR</pre>\n"
        "</details>\n"
    )


def test_machine_formats_keep_tables_and_skip_figures():
    rows = list(csv.reader(io.StringIO(render(BLOCKS, "csv"))))
    # the page's table, then the table inside the drill-down; no figure, no text; each led by
    # the headings it sits under (the level-3 "Drill" extends the level-2 "Numbers")
    assert rows == [["section", "number", "run"], ["Numbers", "recall", "0.500 [0.1, 0.9] n=4"],
                    [], ["section", "judge", "verdict"],
                    ["Numbers / Drill", "correct", "false"]]  # fmt: skip
    assert render(BLOCKS, "tsv") == (
        "section\tnumber\trun\nNumbers\trecall\t0.500 [0.1, 0.9] n=4\n\n"
        "section\tjudge\tverdict\nNumbers / Drill\tcorrect\tfalse\n"
    )
    tex = render(BLOCKS, "latex")
    assert "% figure omitted (HTML only)\nchart: 0.5 \\\\\ncap\n" in tex and "<svg" not in tex
    assert r"\subsubsection*{Drill}" in tex and r"\paragraph{died: q|1" in tex
    assert r"\textless{}script\textgreater{}" in tex


def test_every_format_renders_every_block_the_same_under_any_hash_seed():
    # Two interpreters with different string-hash seeds: any set or dict-order dependence in a
    # renderer would change the bytes (a second render in this process could not show it).
    import os
    import subprocess
    import sys

    script = (
        f"import runpy; ns = runpy.run_path({__file__!r}); "
        "from ragaudit.reports import FORMATS, render; "
        "print('\\f'.join(render(ns['BLOCKS'], f) for f in FORMATS))"
    )
    outputs = [
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    ]
    assert outputs[0] == outputs[1]
    assert outputs[0].count("\f") == len(FORMATS) - 1


def test_markdown_drops_whole_droppable_drilldowns_to_fit_and_counts_them():
    drills = tuple(Details(f"q{i}", (Text(("x" * 300,)),), droppable=True) for i in range(10))
    report = Report("R", (Section("S", (Text(("head",)), *drills, Text(("tail",)))),))
    full = render_markdown(report, limit=1_000_000)
    assert full.count("<details>") == 10 and "more drill-down" not in full
    one = len(full) // 10  # each drill-down is about a tenth of the text
    small = render_markdown(report, limit=len(full) - 3 * one)
    kept = small.count("<details>")
    assert 0 < kept < 10 and small.count("</details>") == kept
    assert f"{10 - kept} more drill-down(s) in the HTML report (size limit)" in small
    assert len(small) < len(full) - 3 * one
    assert small.index("head") < small.index("<details>") < small.index("tail")
    # kept in order: the first ones
    assert [f"<summary>q{i}</summary>" in small for i in range(kept)] == [True] * kept
