"""Small public wrappers: a result object with ``to_dict`` and ``to_pandas`` where the
underlying function returns plain rows, and file paths where the library layer takes loaded
objects (``stats`` reads no files)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragaudit._frames import records_frame
from ragaudit._present import short_repr
from ragaudit.stats.power import PlanningRow, planning_table

if TYPE_CHECKING:
    from ragaudit.data.per_question import PerQuestionMetrics
    from ragaudit.data.qrels import Qrels
    from ragaudit.data.saved_run import SavedRun
    from ragaudit.diagnose.audit_result import Audit
    from ragaudit.labels.format import ChunkLabels
    from ragaudit.reports.report import Report
    from ragaudit.stats.compare import Comparison

__all__ = ["Plan", "audit", "compare_runs", "plan"]


@dataclass(frozen=True, repr=False)
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

    def to_report(self) -> Report:
        """The table ``ragaudit plan`` prints."""
        from ragaudit.reports.stats import plan_report

        return plan_report(list(self.rows), self.power, self.alpha)

    def _repr_html_(self) -> str:
        from ragaudit.reports.renderer import render_html_fragment

        return render_html_fragment(self.to_report())

    def __repr__(self) -> str:
        def mde(row: PlanningRow) -> str:
            return "-" if row.mde is None else f"{row.mde:.3f}"

        return short_repr(
            f"Plan(power={self.power:g}, alpha={self.alpha:g}, rows={len(self.rows)})",
            [f"n={r.n} disagree={r.disagree:g}: mde {mde(r)}" for r in self.rows],
        )


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


def audit(
    runs: SavedRun | str | os.PathLike[str] | Sequence[SavedRun | str | os.PathLike[str]],
    *,
    labels: ChunkLabels | Qrels | str | os.PathLike[str] | None = None,
    chunk_texts: Mapping[str, str] | None = None,
    cluster_by: str | None = None,
    human: Sequence[Mapping[str, float] | str | os.PathLike[str] | None] = (),
    seed: int = 0,
    n_resamples: int = 2000,
    compare_resamples: int = 10_000,
) -> Audit:
    """The whole audit of one or more saved runs: what ``ragaudit report`` shows, as an object.

    The dashboard (six numbers with 95% intervals, n and the MDE), each run's funnel, label
    bias (with chunk ``labels``), clustered intervals (``cluster_by``), calibration
    (``human``) and the paired comparison of each later run with the first, Holm-adjusted.
    :func:`ragaudit.diagnose.audit.build_audit` computes it (its docstring gives the methods);
    this wrapper also reads a chunk-label file.  ``audit(...).to_dict()`` equals
    ``ragaudit report RUNS --format json`` with the same options.

    Parameters
    ----------
    runs : SavedRun, path, or a sequence of them
    labels : ChunkLabels, Qrels (chunk unit) or path of a chunk-label file, optional
    chunk_texts : mapping, optional
        ``{chunk_id: text}`` for the drill-down.
    cluster_by : str, optional
        ``source``, ``tag`` or a row field.
    human : sequence of mappings or paths, optional
        Human verdicts on ``correct``, one per run in order.
    seed, n_resamples, compare_resamples : int
        As ``ragaudit report --seed --resamples`` (the comparison uses 10,000, as ``compare``).

    Returns
    -------
    Audit
        ``print`` it, show it in a notebook, or call ``to_report()``, ``to_dict()``,
        ``to_pandas()``.

    Examples
    --------
    >>> import ragaudit
    >>> row = {"id": "q1", "answerable": True, "gold_docs": ["G"],
    ...        "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...        "judges": {"abstained": False, "correct": True, "evidence_in_context": True}}
    >>> a = ragaudit.audit(ragaudit.SavedRun.from_dict({"name": "r", "config": {"k": 1},
    ...                                                 "rows": [row]}), n_resamples=10)
    >>> a.runs[0].funnel.correct_end_to_end, a.to_dict()["runs"][0]["name"]
    (1.0, 'r')
    """
    from ragaudit.diagnose.audit import build_audit

    if isinstance(labels, str | os.PathLike):
        from ragaudit.labels.format import load_chunk_labels

        labels = load_chunk_labels(labels)
    return build_audit(
        runs,
        labels=labels,
        chunk_texts=chunk_texts,
        seed=seed,
        n_resamples=n_resamples,
        compare_resamples=compare_resamples,
        cluster_by=cluster_by,
        human=human,
    )
