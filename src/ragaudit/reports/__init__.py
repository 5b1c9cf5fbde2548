"""Reports: a plain :class:`Report` object and the one renderer for every output format.

Every command builds a :class:`Report` (the builders live in this package, one module per
family of commands) and :func:`render` turns it into ``table`` (terminal text), ``json``,
``csv``, ``tsv``, ``markdown``, ``latex`` or ``html`` (the ``ragaudit report`` page
included).  Escaping happens in the renderer and only there.
"""

from __future__ import annotations

from ragaudit.reports.renderer import (
    render,
    render_csv,
    render_html,
    render_json,
    render_markdown,
    render_text,
)
from ragaudit.reports.report import (
    FORMATS,
    Cell,
    Details,
    Figure,
    Items,
    KeyValues,
    Report,
    ScatterPlot,
    Section,
    Span,
    Table,
    Text,
)

__all__ = [
    "FORMATS",
    "Cell",
    "Details",
    "Figure",
    "Items",
    "KeyValues",
    "Report",
    "ScatterPlot",
    "Section",
    "Span",
    "Table",
    "Text",
    "render",
    "render_csv",
    "render_html",
    "render_json",
    "render_markdown",
    "render_text",
]
