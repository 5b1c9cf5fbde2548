"""The one renderer: a :class:`~ragaudit.reports.report.Report` in every output format.

* :func:`render_text`: aligned plain text for a terminal (:mod:`.render_text`);
* :func:`render_markdown`: GitHub-flavoured Markdown, under a size limit when it has
  droppable drill-downs (:mod:`.render_markup`);
* :func:`render_latex`: a LaTeX fragment (:mod:`.render_markup`);
* :func:`render_html`: a standalone page with inline CSS and inline SVG, no scripts and no
  external resources (:mod:`.render_html`); :func:`render_html_fragment` its body alone,
  for a notebook cell (the result objects' ``_repr_html_``);
* :func:`render_csv`: the report's tables as CSV (typed values at full precision);
* :func:`render_tsv`: the same tables tab-separated, one line per row (for ``cut`` and ``awk``);
* :func:`render_json`: the report's ``data``.

:func:`render` dispatches on the format name.  Every renderer is a pure function of the
report, so output is byte-identical for equal input, and every renderer escapes what it prints
(:mod:`ragaudit.reports._escape`): producers pass raw ids and names.  Each handles every block
type; the machine formats (CSV, TSV) keep only tables (CSV also key-values), including the
tables inside a drill-down.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from ragaudit.exceptions import InputError
from ragaudit.reports.render_html import render_html, render_html_fragment
from ragaudit.reports.render_markup import MARKDOWN_LIMIT, render_latex, render_markdown
from ragaudit.reports.render_text import render_text, report_sections
from ragaudit.reports.report import (
    FORMATS,
    Block,
    Details,
    KeyValues,
    Report,
    Section,
    Table,
    plain,
    shown,
)

__all__ = [
    "MARKDOWN_LIMIT",
    "render",
    "render_csv",
    "render_html",
    "render_html_fragment",
    "render_json",
    "render_latex",
    "render_markdown",
    "render_stream",
    "render_text",
    "render_tsv",
]


def _blocks(report: Report, output_format: str) -> Iterator[tuple[str, Block]]:
    """Every block ``output_format`` shows, the blocks inside a drill-down included, each with
    the titles of the headings it sits under (``"The funnel / k3 (k=3, n=54)"``, or ``""``).

    A level-2 section starts a new path, a level-3 one extends the last level-2 title, so a
    per-run table says which run it belongs to even when its headers repeat.
    """

    def walk(blocks: tuple[Block, ...]) -> Iterator[Block]:
        for block in shown(blocks, output_format):
            if isinstance(block, Details):
                yield from walk(block.blocks)
            else:
                yield block

    heads: list[str] = []
    for section in report_sections(report, output_format):
        heads = [*heads[: max(section.level - 2, 0)], section.title]
        path = " / ".join(title for title in heads if title)
        for block in walk(section.blocks):
            yield path, block


def _with_section(path: str, header: tuple[str, ...], rows: Any) -> tuple[tuple[str, ...], Any]:
    """A leading ``section`` column naming the headings of a table that sits under any."""
    if not path:
        return header, rows
    return ("section", *header), [(path, *row) for row in rows]


def _cell(value: Any) -> str:
    return repr(value) if isinstance(value, float) else ("" if value is None else str(value))


def render_csv(report: Report) -> str:
    """The report's tables (and key-values) as CSV, one blank line between tables.

    Typed ``values`` are written at full precision (``repr`` of a float); text is skipped.  A
    table under a titled heading gets a leading ``section`` column with the heading titles
    (``"The funnel / k3_cs800 (k=3, n=54 answerable questions)"``), so tables with the same
    headers (one per run) say which is which.

    Examples
    --------
    >>> from ragaudit.reports.report import Section
    >>> t = Table(("metric", "value"), (("ndcg@5", "0.333"),), values=(("ndcg@5", 1 / 3),))
    >>> print(render_csv(Report("", (Section("", (t,)),))), end="")
    metric,value
    ndcg@5,0.3333333333333333
    >>> print(render_csv(Report("", (Section("Run A", (t,)),))), end="")
    section,metric,value
    Run A,ndcg@5,0.3333333333333333
    """
    parts: list[str] = []
    for path, block in _blocks(report, "csv"):
        if isinstance(block, Table):
            header: tuple[str, ...] = block.columns
            rows: Any = block.typed_rows
        elif isinstance(block, KeyValues):
            header, rows = ("key", "value"), [(k, plain(v)) for k, v in block.pairs]
        else:
            continue
        header, rows = _with_section(path, header, rows)
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        writer.writerows([_cell(v) for v in row] for row in rows)
        parts.append(buffer.getvalue())
    return "\n".join(parts)


def render_tsv(report: Report) -> str:
    r"""The report's tables as tab-separated lines, one blank line between tables.

    No quoting: a tab or line break inside a cell becomes a space, so every row is one line.

    Examples
    --------
    >>> from ragaudit.reports.report import Section
    >>> t = Table(("id", "text"), (("c1", "a\tb"),))
    >>> render_tsv(Report("", (Section("", (t,)),)))
    'id\ttext\nc1\ta b\n'
    """
    parts: list[str] = []
    for path, block in _blocks(report, "tsv"):
        if not isinstance(block, Table):
            continue
        header, rows = _with_section(path, block.columns, block.typed_rows)
        lines = ["\t".join(header)]
        for row in rows:
            cells = (_cell(v) for v in row)
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


def render_stream(report: Report, rest: Iterable[Section], output_format: str) -> Iterator[str]:
    """``render(report, output_format)`` with the sections of ``rest`` appended to
    ``report``'s, in pieces: terminal text one section of ``rest`` at a time, as ``rest`` makes
    them (``show --failures`` of a 200,000-question run never holds its whole output), every
    other format whole.

    Examples
    --------
    >>> from ragaudit.reports.report import Text
    >>> head = Report("T", (), notes=("n",))
    >>> parts = [Section("A", (Text(("a",)),)), Section("B", (Text(("b",)),))]
    >>> pieces = list(render_stream(head, iter(parts), "table"))
    >>> len(pieces), "".join(pieces) == render(replace(head, sections=tuple(parts)), "table")
    (4, True)
    """
    if output_format != "table":
        yield render(replace(report, sections=(*report.sections, *rest)), output_format)
        return
    # render_text puts one blank line before every section but the first thing printed
    head = render_text(replace(report, notes=()))
    started = head != "\n"  # the text of nothing is one newline
    if started:
        yield head
    tail = (Report("", (section,)) for section in rest)
    for part in _then_notes(tail, report):
        text = render_text(part)
        if text == "\n":
            continue
        yield ("\n" if started else "") + text
        started = True


def _then_notes(reports: Iterator[Report], report: Report) -> Iterator[Report]:
    """``reports``, then one with ``report``'s notes (rendered last, as a Notes section)."""
    yield from reports
    if report.notes:
        yield Report("", (), notes=report.notes)
