"""Small public wrappers: a result object with ``to_dict`` and ``to_pandas`` where the
underlying function returns plain rows, and file paths where the library layer takes loaded
objects (``stats`` reads no files)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragaudit._frames import records_frame
from ragaudit.stats.power import PlanningRow, planning_table

if TYPE_CHECKING:
    from ragaudit.data.per_question import PerQuestionMetrics
    from ragaudit.data.saved_run import SavedRun
    from ragaudit.stats.compare import Comparison

__all__ = ["Plan", "compare_runs", "plan"]


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


def compare_runs(
    run_a: PerQuestionMetrics | SavedRun | str | os.PathLike[str],
    run_b: PerQuestionMetrics | SavedRun | str | os.PathLike[str],
    metrics: Sequence[str] | None = None,
    **options: Any,
) -> Comparison:
    r"""Compare run B with run A question by question: loaded runs or files.

    Files (saved runs, JSON ``{question_id: {metric: value}}`` or JSONL) are read by
    :func:`ragaudit.data.per_question_files.read_per_question_metrics`, then
    :func:`ragaudit.stats.compare_runs` computes, per metric, :math:`\bar d = \frac1n \sum_i
    (b_i - a_i)` over the paired non-null questions with its interval, permutation p-value
    and verdict (its docstring gives the methods, options and references).

    Examples
    --------
    >>> import ragaudit
    >>> a = ragaudit.SavedRun.from_dict({"name": "a", "config": {"k": 1}, "rows": [
    ...     {"id": f"q{i}", "retrieved": [], "metrics": {"correct": i < 4}} for i in range(8)]})
    >>> b = ragaudit.SavedRun.from_dict({"name": "b", "config": {"k": 1}, "rows": [
    ...     {"id": f"q{i}", "retrieved": [], "metrics": {"correct": True}} for i in range(8)]})
    >>> row = compare_runs(a, b).metrics[0]
    >>> row.statistic, row.pvalue   # 4 of 8 questions differ, all in B's favour: 2 * 0.5**4
    (0.5, 0.125)
    """
    from ragaudit.data.per_question_files import load_per_question_metrics
    from ragaudit.stats.compare import compare_runs as compare_loaded

    first, second = load_per_question_metrics(run_a), load_per_question_metrics(run_b)
    return compare_loaded(first, second, metrics, **options)
