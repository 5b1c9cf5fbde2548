"""The one renderer: a :class:`~ragaudit.reports.report.Report` in every output format.

* :func:`render_text`: aligned plain text for a terminal (plots are skipped);
* :func:`render_markdown`: GitHub-flavoured Markdown (plots are skipped);
* :func:`render_csv`: the report's tables as CSV (typed values at full precision);
* :func:`render_tsv`: the same tables tab-separated, one line per row (for ``cut`` and ``awk``);
* :func:`render_json`: the report's ``data``;
* :func:`render_html`: a standalone page with inline CSS and inline SVG plots, no scripts and
  no external resources.

:func:`render` dispatches on the format name.  Every renderer is a pure function of the
report, so output is byte-identical for equal input, and every renderer escapes what it prints
(:mod:`ragaudit.reports._escape`): producers pass raw ids and names.
"""

from __future__ import annotations

import csv
import io
import json
import re
from html import escape
from typing import Any

from ragaudit.exceptions import InputError
from ragaudit.reports._escape import latex, md_fence, md_inline, visible
from ragaudit.reports.report import (
    FORMATS,
    Block,
    KeyValues,
    Report,
    Section,
    Table,
    Text,
)
from ragaudit.reports.svg import scatter_svg

__all__ = [
    "render",
    "render_csv",
    "render_html",
    "render_json",
    "render_latex",
    "render_markdown",
    "render_section_html",
    "render_table_text",
    "render_text",
    "render_tsv",
]

_INDENT = "  "


def _shown(blocks: tuple[Block, ...], output_format: str) -> list[Block]:
    return [b for b in blocks if not b.only or output_format in b.only]


def _sections(report: Report) -> tuple[Section, ...]:
    if not report.notes:
        return report.sections
    return (*report.sections, Section("Notes", (Text(report.notes),)))


def render_table_text(table: Table, indent: str = _INDENT) -> list[str]:
    """Lines of a table padded to column width (two spaces between columns).

    Examples
    --------
    >>> print("\\n".join(render_table_text(Table(("id", "hit"), (("q1", "1.00"),)), "")))
    id   hit
    q1  1.00
    """
    header = tuple(visible(c) for c in table.columns)
    rows = [tuple(visible(c) for c in row) for row in table.rows]
    widths = [len(c) for c in header]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        padded = [
            cell.ljust(w) if a == "l" else cell.rjust(w)
            for cell, w, a in zip(cells, widths, table.align, strict=True)
        ]
        return (indent + "  ".join(padded)).rstrip()

    return [line(header), *(line(row) for row in rows)]


def _key_values_text(block: KeyValues, indent: str) -> list[str]:
    width = max((len(visible(k)) for k, _ in block.pairs), default=0)
    return [(indent + visible(k).ljust(width) + "  " + visible(v)).rstrip() for k, v in block.pairs]


def _shout(title: str) -> str:
    """Upper-case a section title up to its parenthesised details or a ``": "`` that names
    something (``k=5``, run names and metric names keep their case).

    >>> _shout("Graded labels (k=5)"), _shout("Where the noise comes from: k3_cs800")
    ('GRADED LABELS (k=5)', 'WHERE THE NOISE COMES FROM: k3_cs800')
    """
    cut = min((i for i in (title.find(" ("), title.find(": ")) if i >= 0), default=len(title))
    return title[:cut].upper() + title[cut:]


def render_text(report: Report) -> str:
    """Plain text: upper-case section titles, indented blocks, one blank line between sections.

    An untitled section prints its blocks flush left with no blank line between them.

    Examples
    --------
    >>> print(render_text(Report("T", (Section("Part", (Text(("a line",)),)),))), end="")
    T
    <BLANKLINE>
    PART
      a line
    >>> print(render_text(Report("", (Section("", (KeyValues((("n", "3"),)),)),))), end="")
    n  3
    """
    out = [visible(report.title)] if report.title else []
    for section in _sections(report):
        blocks = _shown(section.blocks, "table")
        if not (blocks or section.title):
            continue
        if out:
            out.append("")
        indent = _INDENT if section.title else ""
        if section.title:
            out.append(visible(_shout(section.title)))
        for i, block in enumerate(blocks):
            if i and section.title:
                out.append("")
            if isinstance(block, Table):
                out.extend(render_table_text(block, indent))
            elif isinstance(block, KeyValues):
                out.extend(_key_values_text(block, indent))
            elif isinstance(block, Text):
                out.extend((indent + visible(line)).rstrip() for line in block.lines)
    return "\n".join(out) + "\n"


def _md_cell(cell: str) -> str:
    return md_inline(cell) if cell else " "


def _md_block(block: Block) -> list[str]:
    if isinstance(block, Table):
        return [
            "| " + " | ".join(_md_cell(c) for c in block.columns) + " |",
            "| " + " | ".join(":---" if a == "l" else "---:" for a in block.align) + " |",
            *("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows),
        ]
    if isinstance(block, KeyValues):
        return [
            "  \n".join(f"{md_inline(k, line_start=True)}: {md_inline(v)}" for k, v in block.pairs)
        ]
    if isinstance(block, Text):
        if block.monospace:
            lines = [visible(line) for line in block.lines]
            fence = md_fence(lines)
            return [fence, *lines, fence]
        return ["  \n".join(md_inline(line, line_start=True) for line in block.lines)]
    return []


def render_markdown(report: Report) -> str:
    """GitHub-flavoured Markdown: ``#`` title, ``##`` sections, pipe tables, code blocks.

    Every string is escaped, so ids and names cannot add HTML, headings, links or cells.

    Examples
    --------
    >>> r = Report("T", (Section("S", (Table(("id", "n"), (("a|b", "1"),)),)),))
    >>> print(render_markdown(r), end="")
    # T
    <BLANKLINE>
    ## S
    <BLANKLINE>
    | id | n |
    | :--- | ---: |
    | a\\|b | 1 |
    """
    out = [f"# {md_inline(report.title)}"] if report.title else []
    for section in _sections(report):
        if section.title:
            if out:
                out.append("")
            out.append(f"## {md_inline(section.title)}")
        for block in _shown(section.blocks, "markdown"):
            if out:
                out.append("")
            out.extend(_md_block(block))
    return "\n".join(out) + "\n"


def render_csv(report: Report) -> str:
    """The report's tables (and key-values) as CSV, one blank line between tables.

    Typed ``values`` are written at full precision (``repr`` of a float); text is skipped.

    Examples
    --------
    >>> t = Table(("metric", "value"), (("ndcg@5", "0.333"),), values=(("ndcg@5", 1 / 3),))
    >>> print(render_csv(Report("", (Section("", (t,)),))), end="")
    metric,value
    ndcg@5,0.3333333333333333
    """
    parts: list[str] = []
    for section in _sections(report):
        for block in _shown(section.blocks, "csv"):
            if isinstance(block, Table):
                header: tuple[str, ...] = block.columns
                rows: Any = block.typed_rows
            elif isinstance(block, KeyValues):
                header, rows = ("key", "value"), block.pairs
            else:
                continue
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(
                [repr(v) if isinstance(v, float) else ("" if v is None else v) for v in row]
                for row in rows
            )
            parts.append(buffer.getvalue())
    return "\n".join(parts)


_TSV_BLANKS = re.compile(r"[\t\r\n]")


def render_tsv(report: Report) -> str:
    r"""The report's tables as tab-separated lines, one blank line between tables.

    No quoting: a tab or line break inside a cell becomes a space, so every row is one line.

    Examples
    --------
    >>> t = Table(("id", "text"), (("c1", "a\tb"),))
    >>> render_tsv(Report("", (Section("", (t,)),)))
    'id\ttext\nc1\ta b\n'
    """
    parts: list[str] = []
    for section in _sections(report):
        for block in _shown(section.blocks, "tsv"):
            if not isinstance(block, Table):
                continue
            lines = ["\t".join(block.columns)]
            for row in block.typed_rows:
                cells = (
                    repr(v) if isinstance(v, float) else ("" if v is None else str(v)) for v in row
                )
                lines.append(
                    "\t".join(
                        " ".join(c.split("\t")).replace("\n", " ").replace("\r", " ") for c in cells
                    )
                )
            parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def render_json(report: Report) -> str:
    """The report's ``data`` as indented JSON (NaN is an error, not ``NaN``)."""
    return json.dumps(report.data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;"
    "color:#222}table{border-collapse:collapse;margin:.5rem 0}th,td{padding:.2rem .6rem;"
    "border-bottom:1px solid #ddd}th{text-align:left}td.r,th.r{text-align:right;"
    "font-variant-numeric:tabular-nums}pre{background:#f6f6f6;padding:.6rem}"
)


def _html_block(block: Block) -> list[str]:
    if isinstance(block, Table):
        cls = ["" if a == "l" else ' class="r"' for a in block.align]
        head = "".join(f"<th{c}>{escape(h)}</th>" for c, h in zip(cls, block.columns, strict=True))
        return [
            "<table>",
            f"<tr>{head}</tr>",
            *(
                "<tr>"
                + "".join(f"<td{c}>{escape(v)}</td>" for c, v in zip(cls, row, strict=True))
                + "</tr>"
                for row in block.rows
            ),
            "</table>",
        ]
    if isinstance(block, KeyValues):
        rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in block.pairs)
        return [f"<table>{rows}</table>"]
    if isinstance(block, Text):
        if block.monospace:
            return ["<pre>" + escape("\n".join(block.lines)) + "</pre>"]
        return [f"<p>{escape(line)}</p>" for line in block.lines]
    return ["<figure>", scatter_svg(block), "</figure>"]


def render_section_html(section: Section) -> list[str]:
    """HTML lines of one section (``<h2>`` title and its blocks), for pages built elsewhere.

    >>> render_section_html(Section("S", (Text(("a<b",)),)))
    ['<h2>S</h2>', '<p>a&lt;b</p>']
    """
    out = [f"<h2>{escape(section.title)}</h2>"] if section.title else []
    for block in _shown(section.blocks, "html"):
        out.extend(_html_block(block))
    return out


def render_html(report: Report) -> str:
    """A standalone HTML page (inline CSS, inline SVG plots, no scripts).

    Examples
    --------
    >>> page = render_html(Report("T<1>", (Section("S", (Text(("x",)),)),)))
    >>> "<title>T&lt;1&gt;</title>" in page and "<p>x</p>" in page
    True
    """
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        f"<title>{escape(report.title)}</title>",
        f"<style>{_CSS}</style></head>",
        "<body>",
        f"<h1>{escape(report.title)}</h1>",
    ]
    for section in _sections(report):
        out.extend(render_section_html(section))
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def _latex_block(block: Block) -> list[str]:
    if isinstance(block, Table):
        return [
            r"\begin{tabular}{" + block.align + "}",
            r"\toprule",
            " & ".join(latex(c) for c in block.columns) + r" \\",
            r"\midrule",
            *(" & ".join(latex(c) for c in row) + r" \\" for row in block.rows),
            r"\bottomrule",
            r"\end{tabular}",
        ]
    if isinstance(block, KeyValues):
        return [" \\\\\n".join(f"{latex(k)}: {latex(v)}" for k, v in block.pairs)]
    if isinstance(block, Text):
        if block.monospace:
            return [
                r"\begin{verbatim}",
                *(visible(line) for line in block.lines),
                r"\end{verbatim}",
            ]
        return [" \\\\\n".join(latex(line) for line in block.lines)]
    return []


def render_latex(report: Report) -> str:
    """A LaTeX fragment: booktabs tables, escaped paragraphs (needs ``booktabs``, ``amssymb``).

    Examples
    --------
    >>> r = Report("", (Section("", (Table(("run", "mrr"), (("a_1", "0.5 ▲"),)),)),))
    >>> print(render_latex(r), end="")
    % ragaudit output; needs \\usepackage{booktabs,amssymb}
    <BLANKLINE>
    \\begin{tabular}{lr}
    \\toprule
    run & mrr \\\\
    \\midrule
    a\\_1 & 0.5 \\ensuremath{\\blacktriangle} \\\\
    \\bottomrule
    \\end{tabular}
    """
    out = [r"% ragaudit output; needs \usepackage{booktabs,amssymb}"]
    if report.title:
        out += ["", r"\section*{" + latex(report.title) + "}"]
    for section in _sections(report):
        if section.title:
            out += ["", r"\subsection*{" + latex(section.title) + "}"]
        for block in _shown(section.blocks, "latex"):
            out += ["", *_latex_block(block)]
    return "\n".join(out) + "\n"


_RENDERERS = {
    "table": render_text,
    "json": render_json,
    "csv": render_csv,
    "tsv": render_tsv,
    "markdown": render_markdown,
    "html": render_html,
    "latex": render_latex,
}


def render(report: Report, output_format: str) -> str:
    """Render ``report`` in one of :data:`~ragaudit.reports.report.FORMATS`.

    Examples
    --------
    >>> render(Report("", (), data={"n": 1}), "json")
    '{\\n  "n": 1\\n}\\n'
    """
    try:
        renderer = _RENDERERS[output_format]
    except KeyError:
        raise InputError(
            f"format: expected one of {', '.join(FORMATS)}, found {output_format!r}"
        ) from None
    return renderer(report)
