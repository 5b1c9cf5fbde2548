"""What ``ragaudit golden check`` reports: one :class:`Finding` per flagged item and one
:class:`CheckSummary` per validity check (its n, flagged count, interval and method).

Plain records, shared by :mod:`ragaudit.pipeline.golden_check` (the file and key checks) and
:mod:`ragaudit.pipeline.golden_validity` (the validity checks of a golden set).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CheckSummary", "Finding"]


@dataclass(frozen=True)
class Finding:
    """One thing ``golden check`` found.

    ``problem`` findings make the check fail; the others (unknown keys kept as metadata, a
    reference answer with nothing to check, two documents that disagree) are notes.
    """

    check: str
    qid: str | None
    line: int | None
    detail: str
    problem: bool = True

    def to_dict(self) -> dict[str, Any]:
        """``{"check", "id", "line", "detail", "problem"}``."""
        return {
            "check": self.check,
            "id": self.qid,
            "line": self.line,
            "detail": self.detail,
            "problem": self.problem,
        }


@dataclass(frozen=True)
class CheckSummary:
    """One validity check over a golden set: what it looked at and how much it flagged.

    Attributes
    ----------
    check : str
        The check's name (as in :attr:`Finding.check`).
    n : int
        Items examined (``unit``: questions, question pairs, documents).
    flagged : int
        Items flagged.
    unit : str
    method : str
        How an item is flagged (the rule, with its thresholds).
    low, high : float or None
        The interval of the flagged share ``flagged / n`` (Clopper-Pearson exact, 95%); None
        when the check is not a proportion or examined nothing.
    """

    check: str
    n: int
    flagged: int
    unit: str
    method: str
    low: float | None = None
    high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"check", "n", "flagged", "unit", "share", "ci_low", "ci_high",
        "method"}``."""
        return {
            "check": self.check,
            "n": self.n,
            "flagged": self.flagged,
            "unit": self.unit,
            "share": self.flagged / self.n if self.n else None,
            "ci_low": self.low,
            "ci_high": self.high,
            "method": self.method,
        }
