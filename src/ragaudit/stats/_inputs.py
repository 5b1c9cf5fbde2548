"""Pair two runs' per-question metric values by question id (no file I/O here).

The values are :class:`~ragaudit.data.per_question.PerQuestionMetrics` or a loaded
:class:`~ragaudit.data.saved_run.SavedRun`; files are read above stats
(:mod:`ragaudit.data.per_question_files`, called by the CLI and :func:`ragaudit.compare_runs`).
This module only aligns them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragaudit._validate import check_metric_names
from ragaudit.data.per_question import (
    QUESTION_SUBSETS,
    PerQuestionMetrics,
    as_per_question_metrics,
)
from ragaudit.exceptions import InputError, RagauditWarning
from ragaudit.metrics.registry import did_you_mean, resolve_saved_run_metrics

__all__ = [
    "QUESTION_SUBSETS",
    "PairedMetrics",
    "PerQuestionMetrics",
    "aligned_values",
    "as_per_question_metrics",
    "common_ids",
    "pair_runs",
]


@dataclass(frozen=True)
class PairedMetrics:
    """Two runs' values aligned on their common questions (sorted by id).

    Attributes
    ----------
    ids : tuple of str
        Common question ids, sorted.
    a, b : dict of str to ndarray
        Metric -> values aligned to ``ids``; NaN where the value is ``null``.
    only_a, only_b : tuple of str
        Questions present in one run only (excluded).
    name_a, name_b : str
        The runs' names.
    """

    ids: tuple[str, ...]
    a: dict[str, np.ndarray]
    b: dict[str, np.ndarray]
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    name_a: str = "A"
    name_b: str = "B"
    metrics: tuple[str, ...] = field(default=())


def _as_array(run: PerQuestionMetrics, ids: Sequence[str], metric: str) -> np.ndarray:
    return _as_arrays(run, ids, [metric])[metric]


def _as_arrays(
    run: PerQuestionMetrics, ids: Sequence[str], metrics: Sequence[str]
) -> dict[str, np.ndarray]:
    """Each metric's values on ``ids`` (NaN where null): :meth:`PerQuestionMetrics.columns`."""
    return run.columns(metrics, ids)


def common_ids(run_a: PerQuestionMetrics, run_b: PerQuestionMetrics) -> list[str]:
    """The question ids both runs hold, sorted: the order every paired statistic uses.

    >>> common_ids(PerQuestionMetrics("a", {"q2": {}, "q1": {}, "q3": {}}),
    ...            PerQuestionMetrics("b", {"q3": {}, "q2": {}}))
    ['q2', 'q3']
    """
    return sorted(set(run_a.values) & set(run_b.values))


def aligned_values(
    run_a: PerQuestionMetrics, run_b: PerQuestionMetrics, metric: str
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(ids, a, b)``: :func:`common_ids` and both runs' ``metric`` on them (NaN where null).

    The pairing of :func:`pair_runs` without its checks and warnings, for code that reads a
    comparison already made (the ids of the questions that got worse).

    >>> a = PerQuestionMetrics("a", {"q1": {"m": 1.0}, "q2": {"m": 0.5}})
    >>> b = PerQuestionMetrics("b", {"q2": {"m": 0.0}, "q1": {"m": None}})
    >>> ids, x, y = aligned_values(a, b, "m")
    >>> ids, x.tolist(), y.tolist()
    (['q1', 'q2'], [1.0, 0.5], [nan, 0.0])
    """
    ids = common_ids(run_a, run_b)
    return ids, _as_array(run_a, ids, metric), _as_array(run_b, ids, metric)


def _preview(ids: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")


def pair_runs(
    run_a: PerQuestionMetrics,
    run_b: PerQuestionMetrics,
    metrics: Sequence[str] | None = None,
    *,
    allow_partial: bool = False,
) -> PairedMetrics:
    """Align two runs on their common question ids.

    Questions present in only one run are excluded with a warning that names them.  When
    fewer than half of the larger run's questions are common it is an error unless
    ``allow_partial``; no common question at all is always an error.  A metric that appears in
    no row of one run is an error when requested, and skipped with a warning otherwise.  A row
    without a metric key counts as ``null`` for that metric.

    Parameters
    ----------
    run_a, run_b : PerQuestionMetrics
    metrics : sequence of str, optional
        Metrics to pair; default every metric present in both runs (A's order).
    allow_partial : bool, default False

    Returns
    -------
    PairedMetrics

    Examples
    --------
    >>> a = PerQuestionMetrics("a", {"q1": {"hit": 1.0}, "q2": {"hit": 0.0}})
    >>> b = PerQuestionMetrics("b", {"q2": {"hit": 1.0}, "q1": {"hit": None}})
    >>> paired = pair_runs(a, b)
    >>> paired.ids, paired.b["hit"].tolist()
    (('q1', 'q2'), [nan, 1.0])
    """
    metrics = check_metric_names(metrics)  # a str is one metric, never its characters
    common = common_ids(run_a, run_b)
    only_a = tuple(sorted(set(run_a.values) - set(run_b.values)))
    only_b = tuple(sorted(set(run_b.values) - set(run_a.values)))
    if not common:
        raise InputError(
            f"runs {run_a.name!r} and {run_b.name!r} have no question id in common "
            f"({len(run_a.values)} vs {len(run_b.values)} questions); are they runs of the same "
            "golden set?"
        )
    larger = max(len(run_a.values), len(run_b.values))
    if 2 * len(common) < larger and not allow_partial:
        raise InputError(
            f"runs {run_a.name!r} and {run_b.name!r} share only {len(common)} of {larger} "
            "questions (fewer than half); pass --allow-partial (allow_partial=True) to compare "
            "them anyway"
        )
    for name, missing in ((run_a.name, only_a), (run_b.name, only_b)):
        if missing:
            warnings.warn(
                f"{len(missing)} question(s) only in run {name!r} are excluded: "
                f"{_preview(missing)}",
                RagauditWarning,
                stacklevel=2,
            )
    metrics_a, metrics_b = run_a.metrics, run_b.metrics
    if metrics is None:
        chosen = [m for m in metrics_a if m in metrics_b]
        skipped = [m for m in metrics_a if m not in metrics_b] + [
            m for m in metrics_b if m not in metrics_a
        ]
        if skipped:
            warnings.warn(
                f"metric(s) present in only one run are skipped: {', '.join(skipped)}",
                RagauditWarning,
                stacklevel=2,
            )
        if not chosen:
            raise InputError(
                f"runs {run_a.name!r} and {run_b.name!r} have no metric in common "
                f"(A: {', '.join(metrics_a) or 'none'}; B: {', '.join(metrics_b) or 'none'})"
            )
    else:
        chosen = resolve_saved_run_metrics(metrics, list(dict.fromkeys(metrics_a + metrics_b)))
        for metric in chosen:
            for run, present in ((run_a, metrics_a), (run_b, metrics_b)):
                if metric not in present:
                    raise InputError(
                        f"metric {metric!r} is missing from run {run.name!r}"
                        f"{f' ({run.path})' if run.path else ''}; "
                        f"{did_you_mean(metric, present)}it has: "
                        f"{', '.join(present) or 'no metrics'}"
                    )
    # A baseline kept in the repository usually carries the candidate's name: tell them apart.
    names = unique_names([run_a, run_b])
    return PairedMetrics(
        ids=tuple(common),
        a=_as_arrays(run_a, common, chosen),
        b=_as_arrays(run_b, common, chosen),
        only_a=only_a,
        only_b=only_b,
        name_a=names[0],
        name_b=names[1],
        metrics=tuple(chosen),
    )


def unique_names(runs: Sequence[PerQuestionMetrics]) -> list[str]:
    """The runs' names, or when two are equal the shortest trailing parts of their paths that
    tell them apart (``a/doc1.run``, ``b/doc1.run``), else the name and its position.

    >>> unique_names([PerQuestionMetrics("r", {}, path=p) for p in ("a/x/r.run", "b/x/r.run")])
    ['a/x/r.run', 'b/x/r.run']
    >>> unique_names([PerQuestionMetrics("r", {}, path="r.run")] * 2)
    ['r#1', 'r#2']
    """
    names = [run.name for run in runs]
    if len(set(names)) == len(names):
        return names
    parts = [Path(run.path).parts if run.path else () for run in runs]
    for depth in range(1, max(map(len, parts)) + 1):
        tails = ["/".join(p[-depth:]) for p in parts]
        if all(parts) and len(set(tails)) == len(tails):
            return tails
    return [f"{run.name}#{i + 1}" for i, run in enumerate(runs)]
