"""A plain report object: sections of tables, text and plots, plus the JSON payload.

Diagnostics build one :class:`Report`; the renderers in :mod:`ragaudit.reports.render` turn it
into terminal text, Markdown or a standalone HTML page, so every output format shows the same
numbers.  Cells are pre-formatted strings: the producer decides precision once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragaudit.exceptions import InputError

__all__ = ["Block", "Report", "ScatterPlot", "Section", "Table", "Text"]


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

    Examples
    --------
    >>> Table(("id", "hit"), (("q1", "1.00"),)).align
    'lr'
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: str = ""

    def __post_init__(self) -> None:
        width = len(self.columns)
        align = self.align or ("l" + "r" * (width - 1) if width else "")
        if len(align) != width or set(align) - {"l", "r"}:
            raise InputError(f"table align: expected {width} of 'l'/'r', found {align!r}")
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise InputError(f"table row {i}: expected {width} cells, found {len(row)}")
        object.__setattr__(self, "align", align)


@dataclass(frozen=True)
class Text:
    """Lines of text; ``monospace`` lines keep their alignment (a code block in Markdown)."""

    lines: tuple[str, ...]
    monospace: bool = False


@dataclass(frozen=True)
class ScatterPlot:
    """Points for an SVG scatter plot (HTML only; text renderers skip it)."""

    title: str
    x_label: str
    y_label: str
    points: tuple[tuple[float, float], ...]
    point_labels: tuple[str, ...] = ()


Block = Table | Text | ScatterPlot


@dataclass(frozen=True)
class Section:
    """A titled group of blocks."""

    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Report:
    """A titled list of sections plus the JSON payload of the same numbers.

    Examples
    --------
    >>> r = Report("Demo", (Section("S", (Text(("hello",)),)),), data={"x": 1})
    >>> r.sections[0].blocks[0].lines
    ('hello',)
    """

    title: str
    sections: tuple[Section, ...]
    data: dict[str, Any] = field(default_factory=dict)
