"""Small public wrappers that give notebook users a result object with ``to_dict`` and
``to_pandas`` where the underlying function returns plain rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit._frames import records_frame
from ragaudit.stats.power import PlanningRow, planning_table

__all__ = ["Plan", "plan"]


@dataclass(frozen=True)
class Plan:
    """Minimum detectable effects of a paired 0/1 comparison (see :func:`plan`).

    Attributes
    ----------
    rows : tuple of PlanningRow
        ``(n, disagree, mde)``, n-major; ``mde`` None when nothing is detectable.
    power, alpha : float
    """

    rows: tuple[PlanningRow, ...]
    power: float
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"power", "alpha", "rows": [{"n", "disagree", "mde"}, ...]}``."""
        return {
            "power": self.power,
            "alpha": self.alpha,
            "rows": [{"n": r.n, "disagree": r.disagree, "mde": r.mde} for r in self.rows],
        }

    def to_pandas(self) -> Any:
        """One row per (n, disagree) pair (needs the ``pandas`` extra)."""
        return records_frame(self.to_dict()["rows"])


def plan(
    ns: Sequence[int], disagree: Sequence[float], *, power: float = 0.8, alpha: float = 0.05
) -> Plan:
    """How many questions a golden set needs: the smallest paired effect McNemar's exact test
    detects with ``power`` at level ``alpha``, for each ``n`` and disagreement rate.

    A thin wrapper of :func:`ragaudit.stats.power.planning_table` (which documents the
    computation and cites its references).

    Examples
    --------
    >>> p = plan([50, 200], [0.1])
    >>> [row["n"] for row in p.to_dict()["rows"]]
    [50, 200]
    """
    rows = planning_table(ns, disagree, power=power, alpha=alpha)
    return Plan(tuple(rows), power, alpha)
