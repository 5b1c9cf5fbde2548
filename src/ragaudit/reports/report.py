"""A plain report object: sections of tables, key-values, text and plots, plus the JSON payload.

Every command builds one :class:`Report` (or a result with a ``to_report()``); the renderers in
:mod:`ragaudit.reports.render` turn it into terminal text, Markdown, CSV, JSON or a standalone
HTML page, so every output format shows the same numbers.  Cells are pre-formatted strings: the
producer decides precision once.  A table may also carry its typed ``values`` (floats at full
precision, ints, ``None``) for the machine formats.  Nothing here is escaped: the producer
passes raw ids and names, and each renderer escapes for its own format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragaudit.exceptions import InputError

__all__ = ["FORMATS", "Block", "KeyValues", "Report", "ScatterPlot", "Section", "Table", "Text"]

#: Every output format a report can be rendered in.
FORMATS = ("table", "json", "csv", "markdown", "html", "tsv", "latex")


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

    Examples
    --------
    >>> Table(("id", "hit"), (("q1", "1.00"),)).align
    'lr'
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: str = ""
    values: tuple[tuple[Any, ...], ...] = ()
    only: tuple[str, ...] = ()

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
        """``values`` when given, else the formatted ``rows``."""
        return self.values or self.rows


@dataclass(frozen=True)
class Text:
    """Lines of text; ``monospace`` lines keep their alignment (a code block in Markdown)."""

    lines: tuple[str, ...]
    monospace: bool = False
    only: tuple[str, ...] = ()


@dataclass(frozen=True)
class KeyValues:
    """Labelled values, one per line (``key  value`` aligned in a terminal).

    Examples
    --------
    >>> KeyValues((("raw agreement", "0.750"),)).pairs[0][1]
    '0.750'
    """

    pairs: tuple[tuple[str, str], ...]
    only: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScatterPlot:
    """Points for an SVG scatter plot (HTML only; text renderers skip it)."""

    title: str
    x_label: str
    y_label: str
    points: tuple[tuple[float, float], ...]
    point_labels: tuple[str, ...] = ()
    only: tuple[str, ...] = ("html",)


Block = Table | Text | KeyValues | ScatterPlot


@dataclass(frozen=True)
class Section:
    """A titled group of blocks.

    An untitled section (``title=""``) is printed plainly in a terminal: no heading, no
    indent and no blank line between its blocks (the layout of a small command's output).
    """

    title: str
    blocks: tuple[Block, ...]


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
