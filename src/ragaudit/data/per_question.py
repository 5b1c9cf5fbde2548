"""Per-question metric values of one run: what :mod:`ragaudit.stats` compares.

This module holds the in-memory model only and opens no file (``stats`` imports it, and
stats reads no files: the import-linter contract in ``pyproject.toml``).  Files, whether saved
runs, JSON ``{question_id: {metric: value}}`` or JSONL, are read by
:mod:`ragaudit.data.per_question_files`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np

from ragaudit.data.saved_run import QuestionResult, SavedRun
from ragaudit.data.saved_run.columns import metric_dicts
from ragaudit.data.saved_run.summary import metric_means
from ragaudit.exceptions import FormatError, InputError

__all__ = [
    "QUESTION_SUBSETS",
    "PerQuestionMetrics",
    "QuestionRows",
    "as_per_question_metrics",
    "judged_values",
    "repeat_means",
]

QUESTION_SUBSETS: tuple[str, ...] = ("all", "answerable", "unanswerable")

_id_of = attrgetter("id")


@dataclass(frozen=True)
class PerQuestionMetrics:
    """Per-question metric values of one run.

    Attributes
    ----------
    name : str
        The run's name (saved-run ``name`` or the file stem).
    values : mapping of str to dict of str to float or None
        ``{question_id: {metric: value}}``; ``None`` means not applicable.  Read from a saved
        run, the dicts are made on first use (:class:`QuestionRows`): pairing two runs reads
        only the ids and the metric columns.
    path : str or None
        The file it was read from.
    answerable : dict of str to bool or None
        Saved runs only: each question's ``answerable`` flag (see :meth:`subset`).
    """

    name: str
    values: Mapping[str, dict[str, float | None]]
    path: str | None = None
    answerable: dict[str, bool] | None = None
    #: The saved run the values were read from (:meth:`from_saved_run`): :meth:`columns` then
    #: reads its metric columns instead of walking ``values``.
    source: SavedRun | None = field(default=None, repr=False, compare=False)

    def subset(self, questions: str) -> PerQuestionMetrics:
        """Keep ``"all"``, only the ``"answerable"`` or only the ``"unanswerable"`` questions.

        >>> run = PerQuestionMetrics("r", {"q1": {"c": 1.0}, "q2": {"c": 0.0}},
        ...                          answerable={"q1": True, "q2": False})
        >>> run.subset("answerable").values
        {'q1': {'c': 1.0}}
        """
        if questions not in QUESTION_SUBSETS:
            raise InputError(
                f"questions: expected one of {', '.join(QUESTION_SUBSETS)}, found {questions!r}"
            )
        if questions == "all":
            return self
        if self.answerable is None:
            raise InputError(
                f"{self.path or self.name}: only saved runs record which questions are "
                f"answerable, so --questions {questions} cannot be applied to this file"
            )
        wanted = questions == "answerable"
        kept = {q: v for q, v in self.values.items() if self.answerable.get(q, True) == wanted}
        return PerQuestionMetrics(self.name, kept, self.path, self.answerable, self.source)

    @classmethod
    def from_saved_run(cls, run: SavedRun, *, lazy: bool = False) -> PerQuestionMetrics:
        """The metrics and answerable flags of a saved run (booleans as 0/1); of a repeated
        run, each question's mean over its repeats (:func:`repeat_means`).

        ``lazy``: ``values`` is a :class:`QuestionRows`, whose dicts are made on first use
        (pairing reads only its ids and the run's metric columns); else a dict.  An empty run
        is a :class:`FormatError`: there is nothing to compare.
        """
        if not run.questions:
            raise FormatError("no questions found", path=run.path)
        ids = run.ids
        if run.repeats > 1:  # the question is the unit: its mean over its repeats
            means = cls.from_columns(run.name, ids, repeat_means(run), run.path)
            answerable = dict(zip(ids, run.answerable_flags, strict=True))
            return cls(means.name, means.values, run.path, answerable)
        rows = QuestionRows(run)
        return cls(
            name=run.name,
            # {q.id: {name: q.metric(name) for name in q.metrics}}, read by column
            values=rows if lazy else rows._made(),
            path=run.path,
            answerable=dict(zip(ids, run.answerable_flags, strict=True)),
            source=run,
        )

    def columns(self, metrics: Sequence[str], ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Each of ``metrics`` on the questions ``ids`` (all in :attr:`values`) as floats, NaN
        where null or absent: from the saved run's metric columns when read from one, else
        each question's dict looked up once.

        >>> run = PerQuestionMetrics("r", {"q1": {"m": 1.0}, "q2": {"m": None}})
        >>> run.columns(["m"], ["q2", "q1"])
        {'m': array([nan,  1.])}
        """
        if self.source is not None:
            source_ids = self.source.ids
            positions = dict(zip(source_ids, range(len(source_ids)), strict=True))
            at = np.fromiter(map(positions.__getitem__, ids), dtype=np.intp, count=len(ids))
            return {m: np.asarray(self.source.metric_column(m))[at] for m in metrics}
        rows = [self.values[qid] for qid in ids]
        return {
            metric: np.fromiter(
                (np.nan if (v := row.get(metric)) is None else v for row in rows),
                dtype=float,
                count=len(rows),
            )
            for metric in metrics
        }

    @classmethod
    def from_columns(
        cls,
        name: str,
        ids: Sequence[str],
        columns: Mapping[str, Sequence[float] | Any],
        path: str | None = None,
    ) -> PerQuestionMetrics:
        """Per-question values from metric columns aligned with ``ids`` (NaN read as null).

        This is how an :class:`~ragaudit.metrics.Evaluation` (``query_ids``, ``per_query``)
        of a retrieval run becomes comparable.

        >>> PerQuestionMetrics.from_columns("r", ["q1", "q2"], {"mrr": [0.5, float("nan")]}).values
        {'q1': {'mrr': 0.5}, 'q2': {'mrr': None}}
        """
        lists = {metric: [float(v) for v in values] for metric, values in columns.items()}
        values = {
            qid: {m: (None if math.isnan(col[i]) else col[i]) for m, col in lists.items()}
            for i, qid in enumerate(ids)
        }
        return cls(name=name, values=values, path=path)

    def means(self) -> dict[str, float | None]:
        """Each metric's mean over the questions where it is not null (None: null everywhere),
        by the saved-run summary's :func:`~ragaudit.data.saved_run.summary.metric_means`.

        >>> run = PerQuestionMetrics("r", {"q1": {"hit": 1.0}, "q2": {"hit": None}})
        >>> run.means()
        {'hit': 1.0}
        """
        rows = [QuestionResult(qid, metrics=row) for qid, row in self.values.items()]
        means, _ = metric_means(rows, self.metrics)
        return {metric: means.get(metric) for metric in self.metrics}

    @property
    def metrics(self) -> list[str]:
        """Metric names in order of first appearance."""
        if self.source is not None and len(self.values) == len(self.source.questions):
            return self.source.metric_names()  # by column
        seen: dict[str, None] = {}
        for row in self.values.values():
            for metric in row:
                seen.setdefault(metric, None)
        return list(seen)


class QuestionRows(Mapping[str, dict[str, float | None]]):
    """``{q.id: {name: q.metric(name) for name in q.metrics}}`` of a saved run, its dicts
    made on first use (read by column, :func:`~ragaudit.data.saved_run.columns.metric_dicts`);
    the ids are known at once.

    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": [],
    ...     "metrics": {"correct": True}}]})
    >>> rows = QuestionRows(run)
    >>> list(rows), rows, rows == {"q1": {"correct": 1.0}}
    (['q1'], {'q1': {'correct': 1.0}}, True)
    """

    def __init__(self, run: SavedRun) -> None:
        self._run = run
        self._ids = dict.fromkeys(run.ids)
        self._rows: dict[str, dict[str, float | None]] | None = None

    def _made(self) -> dict[str, dict[str, float | None]]:
        if self._rows is None:
            run = self._run
            # a run built by hand may repeat an id: the last one wins, as in a dict
            ids = map(_id_of, run.questions)
            self._rows = dict(zip(ids, metric_dicts(run.questions, run.metric_column), strict=True))
        return self._rows

    def __getitem__(self, qid: str) -> dict[str, float | None]:
        return self._made()[qid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, qid: object) -> bool:
        return qid in self._ids

    def __repr__(self) -> str:
        return repr(self._made())


def as_per_question_metrics(run: PerQuestionMetrics | SavedRun) -> PerQuestionMetrics:
    """Per-question metrics of a :class:`SavedRun`, or ``run`` itself.

    A file path is refused: load it first
    (:func:`ragaudit.data.per_question_files.read_per_question_metrics`), or call the public
    :func:`ragaudit.compare_runs`, which accepts paths.

    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": [],
    ...     "metrics": {"correct": True}}]})
    >>> as_per_question_metrics(run).values
    {'q1': {'correct': 1.0}}
    """
    if isinstance(run, PerQuestionMetrics):
        return run
    if isinstance(run, SavedRun):
        return PerQuestionMetrics.from_saved_run(run, lazy=True)
    if isinstance(run, str | os.PathLike):
        raise InputError(
            f"expected a loaded run (SavedRun or PerQuestionMetrics), found the path {str(run)!r}: "
            "ragaudit.stats reads no files; pass paths to ragaudit.compare_runs, or load them "
            "with ragaudit.data.per_question_files.read_per_question_metrics"
        )
    raise InputError(f"expected a SavedRun or PerQuestionMetrics, found {type(run).__name__}")


def repeat_means(run: SavedRun) -> dict[str, np.ndarray]:
    r"""Each metric's per-question mean over a repeated run's ``R`` repeats,
    :math:`\bar y_i = \frac{1}{|R_i|}\sum_{r \in R_i} y_{ir}` over the repeats
    :math:`R_i` of question :math:`i` that have a value (NaN when none has): what a
    comparison pairs, so that the question, not the (question, repeat), is its unit.

    >>> run = SavedRun.from_dict({"config": {"k": 1, "repeats": 3}, "rows": [
    ...     {"id": "q1", "retrieved": [], "metrics": {"correct": True}, "repeats": [
    ...         {"metrics": {"correct": False}}, {"metrics": {"correct": None}}]}]})
    >>> repeat_means(run)
    {'correct': array([0.5])}
    """
    names = dict.fromkeys(run.metric_names())
    for entries in run.column_values("repeats"):
        for entry in entries or ():
            names.update(dict.fromkeys(entry.get("metrics") or {}))
    out = {}
    for name in names:
        outcomes = run.repeat_outcomes(name)
        valued = (~np.isnan(outcomes)).sum(axis=1)
        total = np.where(np.isnan(outcomes), 0.0, outcomes).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[name] = np.where(valued > 0, total / np.maximum(valued, 1), np.nan)
    return out


def judged_values(run: SavedRun, metric: str = "correct") -> dict[str, float]:
    """``{question id: judged value}`` of the questions whose ``metric`` is not null, in run order.

    The questions :func:`ragaudit.diagnose.calibration.calibrate` works with (and
    ``labels verdicts`` samples from).

    Raises
    ------
    InputError
        No question has a judged value, or a value is not 0/1.

    Examples
    --------
    >>> rows = [{"id": "a", "retrieved": [], "metrics": {"correct": 1}},
    ...         {"id": "b", "retrieved": [], "metrics": {"correct": None}}]
    >>> judged_values(SavedRun.from_dict({"config": {"k": 1}, "rows": rows}))
    {'a': 1.0}
    """
    judged = {
        qid: float(value)
        for qid, values in PerQuestionMetrics.from_saved_run(run).values.items()
        if (value := values.get(metric)) is not None
    }
    if not judged:
        raise InputError(f"run {run.name!r} has no judged {metric!r} values to calibrate")
    bad = sorted(q for q, v in judged.items() if v not in (0.0, 1.0))
    if bad:
        raise InputError(
            f"calibrate: expected 0/1 verdicts for {metric!r}, found {judged[bad[0]]!r} for "
            f"{bad[0]} (calibration needs a binary judged metric such as correct)"
        )
    return judged
