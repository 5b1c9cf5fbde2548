"""The summary of a saved run, computed in one place from the model.

``ragaudit run``, ``ragaudit judge`` and ``ragaudit import`` all store and print this
summary; nothing else averages a run's per-question metrics.

Means are macro averages over the questions where a metric is not null (each metric's
aggregation rule in :data:`ragaudit.data.saved_run_metrics.SAVED_RUN_METRICS` is ``mean``):

.. math:: \\bar m = \\frac{1}{|Q_m|} \\sum_{q \\in Q_m} m_q, \\quad
          Q_m = \\{q : m_q \\text{ is not null}\\}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragaudit.data.saved_run import QuestionResult, SavedRun

__all__ = ["RunSummary", "count_judge_errors", "metric_means", "summarise_questions"]


def count_judge_errors(questions: Iterable[QuestionResult]) -> dict[str, int]:
    """Judge failures per judge over the questions whose generation succeeded.

    >>> from ragaudit.data.saved_run import JudgeVerdicts as V
    >>> count_judge_errors([QuestionResult("q1", judges=V({"judge_errors": {"x": "?"}})),
    ...                     QuestionResult("q2", generation_error="x",
    ...                                judges=V({"judge_error": "y: ?"}))])
    {'x': 1}
    """
    counts: dict[str, int] = {}
    for question in questions:
        if question.generation_error:
            continue
        for judge in question.judges.failed:
            counts[judge] = counts.get(judge, 0) + 1
    return dict(sorted(counts.items()))


def metric_means(
    questions: Sequence[QuestionResult], names: Sequence[str] | None = None
) -> tuple[dict[str, float], dict[str, int]]:
    """``(means, counts)``: each metric's mean over the questions where it is not null.

    ``names`` defaults to every metric in order of first appearance; a metric null
    everywhere gets a count of 0 and no mean.

    >>> qs = [QuestionResult("q1", metrics={"correct": True}),
    ...       QuestionResult("q2", metrics={"correct": 0.0}),
    ...       QuestionResult("q3", metrics={"correct": None})]
    >>> metric_means(qs)
    ({'correct': 0.5}, {'correct': 2})
    """
    if names is None:
        names = list(dict.fromkeys(name for q in questions for name in q.metrics))
    means: dict[str, float] = {}
    counts: dict[str, int] = {}
    for name in names:
        values = [v for v in (q.metric(name) for q in questions) if v is not None]
        counts[name] = len(values)
        if values:
            means[name] = float(np.mean(np.array(values, dtype=float)))
    return means, counts


@dataclass(frozen=True)
class RunSummary:
    """Counts and means of a saved run (``summary`` in the file, see the format docs).

    Attributes
    ----------
    n, n_answerable, n_unanswerable : int
    n_generation_errors : int
        Questions whose answer could not be generated (``generation_error`` set); their
        answer metrics are null, so they are in no answer mean.
    k : int
    metrics : dict
        Means over every question where each metric is not null (so ``correct`` includes
        unanswerable questions, where it means "abstained").
    n_scored : dict
        How many questions each mean covers.
    metrics_answerable : dict
        Means over the answerable questions only.
    judge_errors : dict
        Failures per judge (``judge_error``; never folded into a mean): the judge's metrics
        are null on those questions.
    unit, averaging : str
        ``"doc"`` and ``"macro"``.
    """

    n: int
    n_answerable: int
    n_unanswerable: int
    n_generation_errors: int
    k: int
    metrics: Mapping[str, float]
    n_scored: Mapping[str, int]
    metrics_answerable: Mapping[str, float]
    judge_errors: Mapping[str, int]
    unit: str = "doc"
    averaging: str = "macro"
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_judge_errors(self) -> int:
        """Total judge failures."""
        return sum(self.judge_errors.values())

    def to_dict(self) -> dict[str, Any]:
        """The ``summary`` object as stored in a saved run."""
        return {
            "n": self.n,
            "n_answerable": self.n_answerable,
            "n_unanswerable": self.n_unanswerable,
            "n_generation_errors": self.n_generation_errors,
            "k": self.k,
            "unit": self.unit,
            "averaging": self.averaging,
            "metrics": dict(self.metrics),
            "n_scored": dict(self.n_scored),
            "metrics_answerable": dict(self.metrics_answerable),
            "judge_errors": dict(self.judge_errors),
            "n_judge_errors": self.n_judge_errors,
            **dict(self.extra),
        }


def summarise_questions(questions: Sequence[QuestionResult], k: int) -> RunSummary:
    """The summary of ``questions`` at cut-off ``k`` (see :class:`RunSummary`).

    >>> s = summarise_questions([QuestionResult("q1", metrics={"hit@k": 1.0}),
    ...     QuestionResult("q2", answerable=False, metrics={"hit@k": None})], k=3)
    >>> s.metrics, s.n_unanswerable
    ({'hit@k': 1.0}, 1)
    """
    means, counts = metric_means(questions)
    answerable = [q for q in questions if q.answerable]
    answerable_means, _ = metric_means(answerable, list(means))
    return RunSummary(
        n=len(questions),
        n_answerable=len(answerable),
        n_unanswerable=len(questions) - len(answerable),
        n_generation_errors=sum(1 for q in questions if q.generation_error),
        k=k,
        metrics=means,
        n_scored=counts,
        metrics_answerable=answerable_means,
        judge_errors=count_judge_errors(questions),
    )


def summarise_run(run: SavedRun) -> RunSummary:
    """The summary of a saved run, recomputed from its questions.

    Keys of the stored summary that are not computed from the questions (``llm``: calls,
    tokens and cost) are carried over in ``extra``.
    """
    computed = summarise_questions(run.questions, run.k)
    own = set(computed.to_dict()) | {"n_errors"}  # n_errors: the old name, not carried over
    carried = {key: value for key, value in run.summary.items() if key not in own}
    return RunSummary(**{**computed.__dict__, "extra": carried})
