"""How much of a score rests on judged items: judged@k beside every metric, and its warnings.

Unjudged is not irrelevant.  A golden set labels one or two sources per question and every
other retrieved item counts as non-relevant, so a retriever that finds different but equally
good evidence is punished, and a comparison favours the run more like the system the labels
were made from (pooling bias; Buckley & Voorhees 2004).  This module decides which judged@k
accompany a set of metrics (:func:`judged_names`), summarises them per run
(:func:`judged_coverage`) and words the two warnings: a run whose top k is mostly unjudged
(:meth:`JudgedCoverage.message`) and two runs whose judged@k differ by more than a margin
(:func:`judged_gap`).  ``evaluate``, ``compare`` and the dashboard call these, so the words and
the thresholds are the same everywhere.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragaudit.exceptions import InputError, UnjudgedWarning
from ragaudit.metrics.evaluate import Evaluation
from ragaudit.metrics.registry import MetricSpec, parse_metric

__all__ = [
    "JUDGED_MARGIN",
    "JUDGED_THRESHOLD",
    "JudgedCoverage",
    "judged_coverage",
    "judged_gap",
    "judged_names",
    "unjudged_messages",
    "warn_unjudged",
]

#: Below this share of labelled items in the top k, a question is named in a warning.
JUDGED_THRESHOLD = 0.5
#: Two runs whose mean judged@k differ by more than this are warned about in a comparison.
JUDGED_MARGIN = 0.1
_SHOW = 5


def judged_names(metrics: Iterable[str]) -> list[str]:
    """The judged@k that should accompany ``metrics``: one per distinct cutoff, ``judged``
    (the whole ranking) for metrics without one; those already requested are left out.

    Examples
    --------
    >>> judged_names(["ndcg@10", "recall@5", "P@5", "map", "judged@10"])
    ['judged@5', 'judged']
    """
    specs = [parse_metric(name) for name in metrics]
    have = {spec.name for spec in specs if spec.family == "judged"}
    wanted = [MetricSpec("judged", spec.k).name for spec in specs if spec.family != "judged"]
    return [name for name in dict.fromkeys(wanted) if name not in have]


@dataclass(frozen=True)
class JudgedCoverage:
    """judged@k of one run: its mean and the questions below the threshold.

    Attributes
    ----------
    run : str
        The run's name (a file path or a label).
    metric : str
        The judged metric as requested (``"judged@10"``).
    k : int or None
        Its cutoff (None: the whole ranking).
    mean : float
        Mean judged@k over the evaluated questions.
    threshold : float
        Questions below it are named.
    below : tuple of str
        Questions whose judged@k is below ``threshold``.
    n_queries : int
        Evaluated questions.
    unit : str, default ""
        What was judged, when messages should say it: ``"doc"`` or ``"chunk"`` (a saved
        run's, :func:`ragaudit.metrics.judged_runs.saved_run_coverage`); "" otherwise.
    values : tuple of float, default ()
        Each question's judged@k, in evaluation order (for an interval of the mean).
    """

    run: str
    metric: str
    k: int | None
    mean: float
    threshold: float
    below: tuple[str, ...]
    n_queries: int
    unit: str = ""
    values: tuple[float, ...] = field(default=(), repr=False, compare=False)

    @property
    def level(self) -> str:
        """``" (document level)"``, ``" (chunk level)"`` or "", for messages."""
        return {"doc": " (document level)", "chunk": " (chunk level)"}.get(self.unit, "")

    @property
    def top(self) -> str:
        """``"top 10"`` or ``"ranking"``, for messages."""
        return "ranking" if self.k is None else f"top {self.k}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the run, the metric, its mean, the threshold and the questions below it.

        >>> JudgedCoverage("a.run", "judged@5", 5, 0.4, 0.5, ("q2",), 2).to_dict()["below"]
        ['q2']
        """
        return {
            "run": self.run,
            "metric": self.metric,
            "k": self.k,
            "unit": self.unit or None,
            "mean": self.mean,
            "n": self.n_queries,
            "threshold": self.threshold,
            "n_below": len(self.below),
            "below": list(self.below),
            "warning": self.message(),
        }

    def message(self) -> str | None:
        """The warning for this run, or None when no question is below the threshold.

        Examples
        --------
        >>> c = JudgedCoverage("bm25.run", "judged@10", 10, 0.2, 0.5, ("q1", "q2"), 3)
        >>> print(c.message())  # doctest: +NORMALIZE_WHITESPACE
        bm25.run: judged@10 is 0.200 on average; 2 of 3 questions have less than 50% of
        their top 10 labelled: q1, q2; their unjudged items count as non-relevant: read
        bpref or ndcg'@10 beside, or fill the labels (ragaudit labels fill)
        """
        if not self.below:
            return None
        shown = ", ".join(self.below[:_SHOW])
        if len(self.below) > _SHOW:
            shown += f", ... ({len(self.below) - _SHOW} more)"
        condensed = "ndcg'" if self.k is None else f"ndcg'@{self.k}"
        return (
            f"{self.run}: {self.metric}{self.level} is {self.mean:.3f} on average; "
            f"{len(self.below)} of {self.n_queries} questions have less than "
            f"{self.threshold:.0%} of their {self.top} labelled: {shown}; their unjudged "
            f"items count as non-relevant: read bpref or {condensed} beside, or fill the "
            "labels (ragaudit labels fill)"
        )


def judged_coverage(
    ev: Evaluation, run: str = "run", threshold: float = JUDGED_THRESHOLD
) -> tuple[JudgedCoverage, ...]:
    """One :class:`JudgedCoverage` per judged metric of ``ev`` (see :func:`judged_names`).

    Examples
    --------
    >>> from ragaudit.data import Qrels, Run
    >>> from ragaudit.metrics import evaluate
    >>> ev = evaluate(Qrels({"q1": {"A": 1}, "q2": {"B": 1}}),
    ...               Run({"q1": ["A", "x"], "q2": ["B", "A"]}), ["judged@2"])
    >>> [(c.metric, c.mean, c.below) for c in judged_coverage(ev, "r")]
    [('judged@2', 0.5, ())]
    """
    if not 0.0 <= threshold <= 1.0:
        raise InputError(f"judged threshold: expected a share in [0, 1], found {threshold}")
    out = []
    for name, spec in ev.specs.items():
        if spec.family != "judged":
            continue
        values = ev.per_query[name]
        below = tuple(ev.query_ids[i] for i in np.flatnonzero(values < threshold).tolist())
        mean = float(np.mean(values)) if len(values) else 0.0
        out.append(
            JudgedCoverage(
                run, name, spec.k, mean, threshold, below, len(values),
                values=tuple(values.tolist()),
            )
        )  # fmt: skip
    return tuple(out)


def judged_gap(a: JudgedCoverage, b: JudgedCoverage, margin: float = JUDGED_MARGIN) -> str | None:
    """The warning when two runs' mean judged@k differ by more than ``margin``, else None.

    The run with more of its top k judged looks more like the system the labels came from;
    counting unjudged as non-relevant favours it.

    Examples
    --------
    >>> a = JudgedCoverage("a.run", "judged@5", 5, 0.9, 0.5, (), 10)
    >>> b = JudgedCoverage("b.run", "judged@5", 5, 0.4, 0.5, (), 10)
    >>> print(judged_gap(a, b))  # doctest: +NORMALIZE_WHITESPACE
    judged@5 differs by 0.500 between a.run (0.900) and b.run (0.400), more than the margin
    0.10: unjudged items count as non-relevant, so the comparison favours a.run, the run
    more like the one the labels came from; compare bpref or ndcg'@5 too
    """
    if a.metric != b.metric:
        raise InputError(f"judged_gap: expected the same metric, found {a.metric}, {b.metric}")
    if not abs(a.mean - b.mean) > margin:
        return None
    favoured = a.run if a.mean > b.mean else b.run
    condensed = "ndcg'" if a.k is None else f"ndcg'@{a.k}"
    return (
        f"{a.metric}{a.level} differs by {abs(a.mean - b.mean):.3f} between {a.run} "
        f"({a.mean:.3f}) and {b.run} ({b.mean:.3f}), more than the margin {margin:.2f}: "
        f"unjudged items count as non-relevant, so the comparison favours {favoured}, the "
        f"run more like the one the labels came from; compare bpref or {condensed} too"
    )


def unjudged_messages(
    coverages: Sequence[Sequence[JudgedCoverage]], margin: float = JUDGED_MARGIN
) -> tuple[str, ...]:
    """The judged@k warnings of one or more runs: one per run about its questions below the
    threshold (on its least judged cutoff), and one per later run whose judged@k differs from
    the first run's by more than ``margin`` (on the cutoff where they differ most).
    ``coverages``: one :func:`judged_coverage` result per run.

    Examples
    --------
    >>> a = JudgedCoverage("a.run", "judged@5", 5, 0.9, 0.5, (), 10)
    >>> b = JudgedCoverage("b.run", "judged@5", 5, 0.4, 0.5, ("q1",), 10)
    >>> [m[:40] for m in unjudged_messages([[a], [b]])]
    ['b.run: judged@5 is 0.400 on average; 1 o', 'judged@5 differs by 0.500 between a.run ']
    """
    out: list[str] = []
    for run in coverages:
        low = [c for c in run if c.below]
        if low:
            worst = min(low, key=lambda c: c.mean)
            out.append(str(worst.message()))
    first = {c.metric: c for c in coverages[0]} if coverages else {}
    for run in coverages[1:]:
        shared = [(first[c.metric], c) for c in run if c.metric in first]
        if shared:
            a, b = max(shared, key=lambda pair: abs(pair[0].mean - pair[1].mean))
            text = judged_gap(a, b, margin)
            if text:
                out.append(text)
    return tuple(out)


def warn_unjudged(
    coverages: Sequence[Sequence[JudgedCoverage]], margin: float = JUDGED_MARGIN
) -> tuple[str, ...]:
    """Warn (:class:`~ragaudit.exceptions.UnjudgedWarning`) with each of
    :func:`unjudged_messages`, and return them (a report carries them too)."""
    messages = unjudged_messages(coverages, margin)
    for text in messages:
        warnings.warn(text, UnjudgedWarning, stacklevel=2)
    return messages
