"""The building blocks of a metric-illusion case: tables, text blocks and the case itself.

Shared by :mod:`ragaudit.diagnose.illusions` and the cases kept in their own modules
(:mod:`ragaudit.diagnose.illusions_unjudged`); :mod:`ragaudit.reports.metrics` renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragaudit.metrics.explain import Derivation

__all__ = ["CaseTable", "Cell", "EngineCheck", "IllusionCase", "TextBlock"]

Cell = str | int | float


@dataclass(frozen=True)
class CaseTable:
    """A small table of typed cells: column names and rows of text, integers and floats.

    Numbers stay unrounded; :func:`ragaudit.reports.metrics.case_table` prints them.
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]


@dataclass(frozen=True)
class EngineCheck:
    """The engine's own values for a hand derivation, and whether they agree with it."""

    values: dict[str, float]
    agrees: bool


#: A monospaced text block: lines of text, and derivations and engine checks the report
#: prints in their place.
TextBlock = tuple[str | Derivation | EngineCheck, ...]


@dataclass(frozen=True)
class IllusionCase:
    """One case: a title, its setup, tables and text blocks, the lesson, and its numbers.

    ``blocks`` holds :class:`CaseTable` objects and text blocks (:data:`TextBlock`: lines and
    whiteboard derivations), in display order; ``data`` holds every number for JSON output.
    """

    number: int
    key: str
    title: str
    setup: str
    blocks: tuple[CaseTable | TextBlock, ...]
    lesson: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: number, key, title, setup, lesson and every computed number."""
        return {
            "number": self.number,
            "key": self.key,
            "title": self.title,
            "setup": self.setup,
            "lesson": self.lesson,
            **self.data,
        }
