"""Terminal text of a :class:`~ragaudit.reports.report.Report` (``--format table``).

Aligned plain text: upper-case section titles, blocks indented by two spaces, tables padded
to column width.  Every string passes through :func:`~ragaudit.reports._escape.visible`, so
one value stays on one line and cannot move the cursor.  Figures and scatter plots print
their text alternative and caption; a :class:`~ragaudit.reports.report.Details` block prints
its summary and, indented, the blocks it opens to (Markdown puts the same lines in its
``<details>``).
"""

from __future__ import annotations

import textwrap

from ragaudit.reports._escape import visible
from ragaudit.reports.report import (
    Block,
    Details,
    Figure,
    Items,
    KeyValues,
    Report,
    ScatterPlot,
    Section,
    Table,
    Text,
    plain,
    shown,
)

__all__ = ["block_text", "render_table_text", "render_text", "report_sections"]

_INDENT = "  "
_WIDTH = 100


def report_sections(report: Report, output_format: str) -> tuple[Section, ...]:
    """The sections ``output_format`` shows, with the report's notes as a last section."""
    sections = [s for s in report.sections if not s.only or output_format in s.only]
    if report.notes:
        sections.append(Section("Notes", (Text(report.notes),)))
    return tuple(sections)


def render_table_text(table: Table, indent: str = _INDENT) -> list[str]:
    """Lines of a table padded to column width (two spaces between columns).

    Examples
    --------
    >>> print("\\n".join(render_table_text(Table(("id", "hit"), (("q1", "1.00"),)), "")))
    id   hit
    q1  1.00
    """
    header = tuple(visible(c) for c in table.columns)
    rows = [tuple(visible(c) for c in row) for row in table.text_rows]
    # one pass per column (the rows' lengths match the header: Table checks them)
    widths = [max(map(len, column)) for column in zip(header, *rows, strict=True)]
    pads = [str.ljust if a == "l" else str.rjust for a in table.align]

    def line(cells: tuple[str, ...]) -> str:
        padded = [pad(cell, w) for pad, cell, w in zip(pads, cells, widths, strict=True)]
        return (indent + "  ".join(padded)).rstrip()

    return [line(header), *(line(row) for row in rows)]


def _key_values_text(block: KeyValues, indent: str) -> list[str]:
    width = max((len(visible(k)) for k, _ in block.pairs), default=0)
    return [
        (indent + visible(k).ljust(width) + "  " + visible(plain(v))).rstrip()
        for k, v in block.pairs
    ]


def _wrapped(text: str, indent: str) -> list[str]:
    """One long line wrapped at :data:`_WIDTH` (continuation lines indented two more)."""
    return textwrap.wrap(
        visible(text), _WIDTH - len(indent), initial_indent=indent,
        subsequent_indent=indent + _INDENT,
    ) or [indent.rstrip()]  # fmt: skip


def block_text(block: Block, indent: str = _INDENT, output_format: str = "table") -> list[str]:
    """The terminal lines of one block (``output_format`` picks a drill-down's inner blocks).

    Examples
    --------
    >>> block_text(Items((("G#0 gold", "the text"),)), "")
    ['1. G#0 gold', '    the text']
    """
    if isinstance(block, Table):
        return render_table_text(block, indent)
    if isinstance(block, KeyValues):
        return _key_values_text(block, indent)
    if isinstance(block, Text):
        if block.monospace:
            return [(indent + visible(plain(line))).rstrip() for line in block.lines]
        mark = "- " if block.style == "list" else ""
        if block.style in ("note", "callout", "list"):
            return [ln for line in block.lines for ln in _wrapped(mark + plain(line), indent)]
        return [(indent + visible(plain(line))).rstrip() for line in block.lines]
    if isinstance(block, Items):
        out = []
        for i, (head, body) in enumerate(block.items):
            mark = f"{i + 1}. " if block.ordered else "- "
            out.append((indent + mark + visible(plain(head))).rstrip())
            if plain(body):  # one line: the item's text, whitespace collapsed
                out.append(indent + "    " + visible(" ".join(plain(body).split())))
        return out
    if isinstance(block, Figure | ScatterPlot):
        return [(indent + visible(line)).rstrip() for line in block.text_lines]
    if isinstance(block, Details):
        out = [(indent + visible(plain(block.summary))).rstrip()]
        for i, inner in enumerate(shown(block.blocks, output_format)):
            if i:
                out.append("")
            out += block_text(inner, indent + _INDENT, output_format)
        return out
    return []


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

    An untitled section prints its blocks flush left with no blank line between them; a
    ``compact`` section prints no blank line between its blocks either.

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
    for section in report_sections(report, "table"):
        blocks = shown(section.blocks, "table")
        if not (blocks or section.title):
            continue
        if out:
            out.append("")
        indent = _INDENT if section.title else ""
        if section.title:
            out.append(visible(_shout(section.title)))
        for i, block in enumerate(blocks):
            if i and section.title and not section.compact:
                out.append("")
            out.extend(block_text(block, indent))
    return "\n".join(out) + "\n"
