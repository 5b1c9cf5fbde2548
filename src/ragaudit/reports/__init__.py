"""Reports: a plain :class:`Report` object and its terminal, Markdown and HTML renderers.

The funnel and label-bias reports are built here from the diagnostics' result objects;
``funnel_section`` and ``bias_section`` print them for ``ragaudit demo``.
"""

from __future__ import annotations

from ragaudit.reports.render import render, render_html, render_markdown, render_text
from ragaudit.reports.report import Report, ScatterPlot, Section, Table, Text

__all__ = [
    "Report",
    "ScatterPlot",
    "Section",
    "Table",
    "Text",
    "render",
    "render_html",
    "render_markdown",
    "render_text",
]
