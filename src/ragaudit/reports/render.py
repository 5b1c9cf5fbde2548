"""Renderers: one :class:`~ragaudit.reports.report.Report`, three formats.

* :func:`render_text`: aligned plain text for a terminal (plots are skipped).
* :func:`render_markdown`: GitHub-flavoured Markdown (plots are skipped).
* :func:`render_html`: a standalone page with inline CSS and inline SVG plots, no scripts and
  no external resources.

Every renderer is a pure function of the report, so output is byte-identical for equal input.
"""

from __future__ import annotations

import json
from html import escape

from ragaudit.exceptions import InputError
from ragaudit.reports.report import Report, ScatterPlot, Table, Text
from ragaudit.reports.svg import scatter_svg

__all__ = ["render", "render_html", "render_markdown", "render_table_text", "render_text"]

_INDENT = "  "


def render_table_text(table: Table, indent: str = _INDENT) -> list[str]:
    """Lines of a table padded to column width (two spaces between columns).

    Examples
    --------
    >>> print("\\n".join(render_table_text(Table(("id", "hit"), (("q1", "1.00"),)), "")))
    id   hit
    q1  1.00
    """
    widths = [len(c) for c in table.columns]
    for row in table.rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        padded = [
            cell.ljust(w) if a == "l" else cell.rjust(w)
            for cell, w, a in zip(cells, widths, table.align, strict=True)
        ]
        return (indent + "  ".join(padded)).rstrip()

    return [line(table.columns), *(line(row) for row in table.rows)]


def _shout(title: str) -> str:
    """Upper-case a section title up to its parenthesised details ("k=5" stays lower case)."""
    head, sep, rest = title.partition(" (")
    return head.upper() + sep + rest


def render_text(report: Report) -> str:
    """Plain text: upper-case section titles, indented blocks, one blank line between sections.

    Examples
    --------
    >>> from ragaudit.reports.report import Section
    >>> print(render_text(Report("T", (Section("Part", (Text(("a line",)),)),))), end="")
    T
    <BLANKLINE>
    PART
      a line
    """
    out = [report.title]
    for section in report.sections:
        out.append("")
        out.append(_shout(section.title))
        for i, block in enumerate(section.blocks):
            if i and not isinstance(block, ScatterPlot):
                out.append("")
            if isinstance(block, Table):
                out.extend(render_table_text(block))
            elif isinstance(block, Text):
                out.extend((_INDENT + line).rstrip() for line in block.lines)
    return "\n".join(out) + "\n"


def _md_cell(cell: str) -> str:
    return cell.replace("|", "\\|") if cell else " "


def render_markdown(report: Report) -> str:
    """GitHub-flavoured Markdown: ``#`` title, ``##`` sections, pipe tables, code blocks.

    Examples
    --------
    >>> from ragaudit.reports.report import Section
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
    out = [f"# {report.title}"]
    for section in report.sections:
        out += ["", f"## {section.title}"]
        for block in section.blocks:
            if isinstance(block, Table):
                out.append("")
                out.append("| " + " | ".join(_md_cell(c) for c in block.columns) + " |")
                out.append(
                    "| " + " | ".join(":---" if a == "l" else "---:" for a in block.align) + " |"
                )
                out.extend("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows)
            elif isinstance(block, Text):
                out.append("")
                if block.monospace:
                    out += ["```", *block.lines, "```"]
                else:
                    out.append("  \n".join(block.lines))
    return "\n".join(out) + "\n"


_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;"
    "color:#222}table{border-collapse:collapse;margin:.5rem 0}th,td{padding:.2rem .6rem;"
    "border-bottom:1px solid #ddd}th{text-align:left}td.r,th.r{text-align:right;"
    "font-variant-numeric:tabular-nums}pre{background:#f6f6f6;padding:.6rem}"
)


def render_html(report: Report) -> str:
    """A standalone HTML page (inline CSS, inline SVG plots, no scripts).

    Examples
    --------
    >>> from ragaudit.reports.report import Section
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
    for section in report.sections:
        out.append(f"<h2>{escape(section.title)}</h2>")
        for block in section.blocks:
            if isinstance(block, Table):
                cls = ["" if a == "l" else ' class="r"' for a in block.align]
                out.append("<table>")
                out.append(
                    "<tr>"
                    + "".join(
                        f"<th{c}>{escape(h)}</th>" for c, h in zip(cls, block.columns, strict=True)
                    )
                    + "</tr>"
                )
                for row in block.rows:
                    out.append(
                        "<tr>"
                        + "".join(f"<td{c}>{escape(v)}</td>" for c, v in zip(cls, row, strict=True))
                        + "</tr>"
                    )
                out.append("</table>")
            elif isinstance(block, Text):
                if block.monospace:
                    out.append("<pre>" + escape("\n".join(block.lines)) + "</pre>")
                else:
                    out.extend(f"<p>{escape(line)}</p>" for line in block.lines)
            elif isinstance(block, ScatterPlot):
                out.append("<figure>")
                out.append(scatter_svg(block))
                out.append("</figure>")
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def render(report: Report, output_format: str) -> str:
    """Render in ``"table"`` (terminal text), ``"markdown"``, ``"html"`` or ``"json"``."""
    if output_format == "table":
        return render_text(report)
    if output_format == "markdown":
        return render_markdown(report)
    if output_format == "html":
        return render_html(report)
    if output_format == "json":
        return json.dumps(report.data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    raise InputError(
        f"format: expected one of table, markdown, html, json, found {output_format!r}"
    )
