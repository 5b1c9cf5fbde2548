"""A plain report object: sections of tables, key-values, text, lists, figures and collapsible
details, plus the JSON payload.

Every command builds one :class:`Report` (or a result with a ``to_report()``); the renderers in
:mod:`ragaudit.reports.renderer` turn it into terminal text, Markdown, CSV, JSON or a standalone
HTML page, so every output format shows the same numbers.  Cells are pre-formatted strings: the
producer decides precision once.  A table may also carry its typed ``values`` (floats at full
precision, ints, ``None``) for the machine formats.  Nothing here is escaped (the one
exception is :class:`Figure`, whose inline SVG its producer escapes): the producer passes raw
ids and names, and each renderer escapes for its own format.

Inline text may be a plain ``str`` or a tuple of :class:`Span` (code, emphasis, highlight,
a styled run); a :class:`Cell` adds a second line, a style and data attributes to a table
cell.  Every block has ``only``: the formats that show it (default: every format), so one
report can say a thing one way on the page and another way in a terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragaudit.exceptions import InputError

__all__ = [
    "FORMATS",
    "Block",
    "Cell",
    "Details",
    "Figure",
    "Inline",
    "Items",
    "KeyValues",
    "Report",
    "ScatterPlot",
    "Section",
    "Span",
    "Table",
    "Text",
    "plain",
    "shown",
]

#: Every output format a report can be rendered in.
FORMATS = ("table", "json", "csv", "markdown", "html", "tsv", "latex")


@dataclass(frozen=True)
class Span:
    """A run of inline text with a style.

    ``style`` is ``""`` (plain), ``"code"``, ``"strong"``, ``"em"``, ``"mark"`` (a highlighted
    match) or ``"br"`` (a line break; ``text`` unused); any other name is a class the HTML
    page styles (``"tag"``, ``"stage"``, a verdict) and plain text elsewhere.

    Examples
    --------
    >>> plain((Span("q1", "code"), Span(" died")))
    'q1 died'
    """

    text: str
    style: str = ""


#: Inline text: plain, or styled runs.
Inline = str | tuple[Span, ...]


def plain(text: Inline) -> str:
    """The characters of inline text without its styles (a line break is a space).

    >>> plain("a"), plain((Span("a", "em"), Span("", "br"), Span("b")))
    ('a', 'a b')
    """
    if isinstance(text, str):
        return text
    return "".join(" " if s.style == "br" else s.text for s in text)


@dataclass(frozen=True)
class Cell:
    """A table cell with more than text: the shown ``text``, a smaller second line ``sub``
    (a terminal prints it after a space), an HTML class and ``data-*`` attributes (HTML only:
    machine-readable values for tests and scrapers).

    Examples
    --------
    >>> plain(Cell("0.5", sub="[0.1, 0.9]").text)
    '0.5'
    """

    text: Inline
    sub: str = ""
    cls: str = ""
    attrs: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return f"{plain(self.text)} {self.sub}".rstrip() if self.sub else plain(self.text)


@dataclass(frozen=True)
class Table:
    """A table of pre-formatted cells.

    Parameters
    ----------
    columns : tuple of str
        Column headers.
    rows : tuple of tuple of str
        Cells, one tuple per row, each as long as ``columns``.
    align : str, optional
        One character per column, ``"l"`` or ``"r"``; default: first column left, others right.
    values : tuple of tuple, optional
        The same cells as typed values (``float`` at full precision, ``int``, ``str``,
        ``None``) for CSV; default: the formatted ``rows``.
    only : tuple of str, optional
        Formats that show this table (default: every format).
    cls : str, optional
        HTML class of the table.
    row_headers : bool, default False
        The first cell of each row labels the row (``<th>`` in HTML).

    Cells may be :class:`Cell` objects; ``str(cell)`` is their text form.

    Examples
    --------
    >>> Table(("id", "hit"), (("q1", "1.00"),)).align
    'lr'
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[str | Cell, ...], ...]
    align: str = ""
    values: tuple[tuple[Any, ...], ...] = ()
    only: tuple[str, ...] = ()
    cls: str = ""
    row_headers: bool = False

    def __post_init__(self) -> None:
        width = len(self.columns)
        align = self.align or ("l" + "r" * (width - 1) if width else "")
        if len(align) != width or set(align) - {"l", "r"}:
            raise InputError(f"table align: expected {width} of 'l'/'r', found {align!r}")
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise InputError(f"table row {i}: expected {width} cells, found {len(row)}")
        if self.values and (
            len(self.values) != len(self.rows) or any(len(v) != width for v in self.values)
        ):
            raise InputError(f"table values: expected {len(self.rows)} rows of {width} cells")
        object.__setattr__(self, "align", align)

    @property
    def typed_rows(self) -> tuple[tuple[Any, ...], ...]:
        """``values`` when given, else the formatted ``rows`` (a :class:`Cell` as its text)."""
        return self.values or self.text_rows

    @property
    def text_rows(self) -> tuple[tuple[str, ...], ...]:
        """The rows as text, a :class:`Cell` as ``str(cell)``."""
        return tuple(tuple(str(c) for c in row) for row in self.rows)


@dataclass(frozen=True)
class Text:
    """Lines of text; ``monospace`` lines keep their alignment (a code block in Markdown).

    ``style``: ``""`` paragraphs, ``"note"`` (muted on the page), ``"meta"`` (the page's
    byline), ``"callout"`` (a box on the page, a quote in Markdown) or ``"list"`` (a bulleted
    list).
    """

    lines: tuple[Inline, ...]
    monospace: bool = False
    only: tuple[str, ...] = ()
    style: str = ""


@dataclass(frozen=True)
class KeyValues:
    """Labelled values, one per line (``key  value`` aligned in a terminal).

    Examples
    --------
    >>> KeyValues((("raw agreement", "0.750"),)).pairs[0][1]
    '0.750'
    """

    pairs: tuple[tuple[str, Inline], ...]
    only: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScatterPlot:
    """Points for an SVG scatter plot with its caption.

    HTML draws the points (:func:`~ragaudit.reports.svg.scatter_svg`) above the caption;
    every other format prints the caption alone (CSV and TSV: nothing), like a
    :class:`Figure`'s ``caption``.

    Examples
    --------
    >>> ScatterPlot("t", "x", "y", ((1.0, 0.5),), caption="rho: +0.5").only
    ()
    """

    title: str
    x_label: str
    y_label: str
    points: tuple[tuple[float, float], ...]
    point_labels: tuple[str, ...] = ()
    caption: str = ""
    only: tuple[str, ...] = ()

    @property
    def text_lines(self) -> tuple[str, ...]:
        """What a format without SVG prints: the caption."""
        return (self.caption,) if self.caption else ()


@dataclass(frozen=True)
class Figure:
    """A chart drawn beforehand: inline SVG elements for HTML and a text alternative.

    ``svg`` holds complete, already-escaped ``<svg>`` elements (the producer escapes every
    label it draws; several elements are alternatives the page shows by screen width).  Other
    formats print ``alt`` lines instead (LaTeX after a comment).  Every format prints the
    ``caption`` last (HTML as the ``<figcaption>``).

    Examples
    --------
    >>> Figure(("<svg></svg>",), alt=("0.5",), caption="c").text_lines
    ('0.5', 'c')
    """

    svg: tuple[str, ...]
    alt: tuple[str, ...] = ()
    caption: str = ""
    cls: str = ""
    only: tuple[str, ...] = ()

    @property
    def text_lines(self) -> tuple[str, ...]:
        """What a format without SVG prints: the text alternative, then the caption."""
        return (*self.alt, *((self.caption,) if self.caption else ()))


@dataclass(frozen=True)
class Items:
    """A list whose items have a head line and an optional body (a quoted box on the page).

    ``body_cls`` gives each item's body box an HTML class (``""`` for none).

    Examples
    --------
    >>> Items((("G#0", "the text"),)).ordered
    True
    """

    items: tuple[tuple[Inline, Inline], ...]
    ordered: bool = True
    cls: str = ""
    body_cls: tuple[str, ...] = ()
    only: tuple[str, ...] = ()


@dataclass(frozen=True)
class Details:
    """A collapsible drill-down: a summary line and the blocks it opens to.

    HTML renders ``<details>`` (closed, no script needed); Markdown a ``<details>`` whose body
    is the nested blocks as preformatted terminal text; a terminal prints the summary and the
    blocks indented.  ``droppable``: Markdown may leave it out (and count it) to keep a
    comment under its size limit.  ``attrs`` are ``data-*`` attributes on the page.
    """

    summary: Inline
    blocks: tuple[Block, ...]
    cls: str = ""
    attrs: tuple[tuple[str, str], ...] = ()
    droppable: bool = False
    only: tuple[str, ...] = ()


Block = Table | Text | KeyValues | ScatterPlot | Figure | Items | Details


def shown(blocks: tuple[Block, ...], output_format: str) -> list[Block]:
    """The blocks that ``output_format`` shows (their ``only`` is empty or names it)."""
    return [b for b in blocks if not b.only or output_format in b.only]


@dataclass(frozen=True)
class Section:
    """A titled group of blocks.

    An untitled section (``title=""``) is printed plainly in a terminal: no heading, no
    indent and no blank line between its blocks (the layout of a small command's output).
    ``level`` 3 is a subsection (``###``, ``<h3>``); ``anchor`` is the heading's HTML id;
    ``only`` limits the formats that show the section; ``compact`` leaves out the blank line
    between its blocks in a terminal.
    """

    title: str
    blocks: tuple[Block, ...]
    level: int = 2
    anchor: str = ""
    only: tuple[str, ...] = ()
    compact: bool = False


@dataclass(frozen=True)
class Report:
    """A titled list of sections plus the JSON payload of the same numbers.

    Parameters
    ----------
    title : str
        Printed first; ``""`` prints no title line.
    sections : tuple of Section
    data : dict
        The JSON form (``--format json``), built from the same result object.
    notes : tuple of str
        Caveats printed last, under "Notes".
    theme : str
        The HTML page's look: ``""`` a plain page, ``"audit"`` the audit page's (wide tables
        scroll in their own box, charts switch form on a phone screen).

    Examples
    --------
    >>> r = Report("Demo", (Section("S", (Text(("hello",)),)),), data={"x": 1})
    >>> r.sections[0].blocks[0].lines
    ('hello',)
    """

    title: str
    sections: tuple[Section, ...]
    data: dict[str, Any] | list[Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    theme: str = ""
