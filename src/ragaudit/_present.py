"""How a result object shows itself in a notebook: ``to_report()``, ``_repr_html_`` and a short
``repr``.

The result objects (``Audit``, ``Comparison``, ``FunnelResult``, ``Evaluation``, ``Plan``,
``BiasResult``) live below :mod:`ragaudit.reports` in the import layers: reports renders
them, so they cannot import reports.  They inherit :class:`Presentable`, whose methods reach
the one renderer through one hook, :func:`ragaudit.reports.builders.report_for`, imported by
name on the first call.  So no module below ``reports`` imports it (the layers contract holds
for every import statement), ``import ragaudit.stats`` stays free of the renderer, and the
table from result type to report builder lives in ``reports``, beside the builders.

:func:`short_repr` is the shared shape of the concise ``repr``: a head line and a few
indented lines, never whole arrays.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module
from typing import Any

__all__ = ["Presentable", "short_repr"]

#: The module that maps a result object to its report (in the reports layer).
_BUILDERS = "ragaudit.reports.builders"
#: The most lines a ``repr`` shows under its head line.
MAX_LINES = 8


class Presentable:
    """Mixin: ``to_report()`` and ``_repr_html_()`` through the one renderer."""

    __slots__ = ()

    def to_report(self) -> Any:
        """The :class:`~ragaudit.reports.report.Report` the CLI prints for this result (render it
        with :func:`ragaudit.reports.renderer.render` in any format)."""
        return import_module(_BUILDERS).report_for(self)

    def _repr_html_(self) -> str:
        """Jupyter's inline view: the report as an HTML fragment (no page, no global style)."""
        return str(import_module(_BUILDERS).html_fragment(self.to_report()))


def short_repr(head: str, lines: Iterable[str], *, limit: int = MAX_LINES) -> str:
    """``head`` and at most ``limit`` indented lines (the rest counted).

    >>> print(short_repr("Thing(n=3)", [f"row {i}" for i in range(3)], limit=2))
    Thing(n=3)
      row 0
      row 1
      ... 1 more
    """
    shown = list(lines)
    rest = len(shown) - limit
    out = [head, *(f"  {line}" for line in shown[:limit])]
    if rest > 0:
        out.append(f"  ... {rest} more")
    return "\n".join(out)
