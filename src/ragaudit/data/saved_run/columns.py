"""A loaded saved run read by column: one metric over every question, every question's metrics
as plain dicts, the document ids of each question's top k.

``compare``, ``funnel`` and the audit read 100,000-question runs whole.  One call of
:meth:`~ragaudit.data.saved_run.QuestionResult.metric` per question and metric (a million at
100k questions and ten metrics) or one :class:`~.retrieved.Retrieved` made per entry of a top
k costs seconds.  The loader already holds the questions' metrics as
:class:`~.mappings.KeyedValues` sharing one ``{name: position}`` index, and the retrieved
entries as columns (:class:`~.retrieved.RetrievedList`), so a column is read with
``itemgetter`` and ``map`` (C loops) instead.  Any other shape (questions whose metric names
differ, mappings built by hand) takes the per-question path, with the same values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from ragaudit.data.saved_run.mappings import KeyedValues
from ragaudit.data.saved_run.retrieved import RetrievedList

if TYPE_CHECKING:
    from ragaudit.data.saved_run.model import QuestionResult

__all__ = [
    "mapping_columns",
    "metric_columns",
    "metric_dicts",
    "metric_names",
    "top_chunk_ids",
    "top_doc_ids",
]

_metrics_of = attrgetter("metrics")
_index_of, _values_of = attrgetter("_index"), attrgetter("_values")


def _shared_index(metrics: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    """The one ``{name: position}`` index every question's metrics share, else None."""
    if not metrics or set(map(type, metrics)) != {KeyedValues}:
        return None
    indexes = list(map(_index_of, metrics))
    if len(set(map(id, indexes))) == 1:
        return dict(indexes[0])
    return None


def _raw_column(
    metrics: Sequence[Mapping[str, Any]], index: dict[str, int] | None, name: str
) -> list[Any]:
    """``name``'s values as written (None when null or absent), one per question."""
    if index is None:
        return [m.get(name) for m in metrics]
    if name not in index:
        return [None] * len(metrics)
    return list(map(itemgetter(index[name]), map(_values_of, metrics)))


def mapping_columns(mappings: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> list[list[Any]]:
    """Each of ``keys`` over ``mappings``, as written (None when absent):
    ``[[m.get(key) for m in mappings] for key in keys]``, read with ``itemgetter`` when the
    mappings share one index (a run's judges, as the loader holds them).

    >>> from ragaudit.data.saved_run import Judgments
    >>> mapping_columns([Judgments({"correct": True}).data, {"x": 1}], ["correct", "x"])
    [[True, None], [None, 1]]
    """
    index = _shared_index(mappings)
    return [_raw_column(mappings, index, key) for key in keys]


def metric_names(questions: Sequence[QuestionResult]) -> list[str]:
    """The metric names of the questions, in order of first appearance.

    >>> from ragaudit.data.saved_run import QuestionResult
    >>> metric_names([QuestionResult("q1", metrics={"b": 1.0}),
    ...               QuestionResult("q2", metrics={"a": None, "b": 0.0})])
    ['b', 'a']
    """
    metrics = list(map(_metrics_of, questions))
    index = _shared_index(metrics)
    if index is not None:
        return list(index)
    return list(dict.fromkeys(name for m in metrics for name in m))


def metric_columns(
    questions: Sequence[QuestionResult], names: Sequence[str]
) -> dict[str, np.ndarray]:
    """Each of ``names`` over the questions as floats (booleans as 0/1), NaN where null or
    absent: ``[q.metric(name) for q in questions]`` with NaN for None.

    >>> from ragaudit.data.saved_run import QuestionResult
    >>> metric_columns([QuestionResult("q1", metrics={"c": True}),
    ...                 QuestionResult("q2", metrics={"c": None}), QuestionResult("q3")], ["c"])
    {'c': array([ 1., nan, nan])}
    """
    metrics = list(map(_metrics_of, questions))
    index = _shared_index(metrics)
    # numpy reads None as NaN and True as 1.0, as QuestionResult.metric reads them
    if index is None or len(names) < 2:
        return {name: np.array(_raw_column(metrics, index, name), dtype=float) for name in names}
    # every question holds the same names in the same order: one table, a column per name
    table = np.array(list(map(_values_of, metrics)), dtype=float).reshape(len(metrics), -1)
    absent = np.full(len(metrics), np.nan)
    return {
        name: table[:, index[name]].copy() if name in index else absent.copy() for name in names
    }


def metric_dicts(
    questions: Sequence[QuestionResult], column: Callable[[str], np.ndarray] | None = None
) -> list[dict[str, float | None]]:
    """Each question's metrics as a dict of floats (booleans as 0/1, null as None):
    ``{name: q.metric(name) for name in q.metrics}`` for every question, in order.

    ``column``: the run's cached metric columns (``SavedRun.metric_column``), read instead of
    the questions when every question has the same metric names (the saved-run format
    has no NaN, so NaN there is null).

    >>> from ragaudit.data.saved_run import QuestionResult
    >>> metric_dicts([QuestionResult("q1", metrics={"c": True, "f": None})])
    [{'c': 1.0, 'f': None}]
    """
    metrics = list(map(_metrics_of, questions))
    index = _shared_index(metrics)
    if index is None:
        return [{n: None if (v := m[n]) is None else float(v) for n in m} for m in metrics]
    names = list(index)
    arrays = column or metric_columns(questions, names).__getitem__
    columns = [arrays(name) for name in names]
    lists = [
        [None if v != v else v for v in array.tolist()] if np.isnan(array).any()
        else array.tolist()
        for array in columns
    ]  # fmt: skip
    return [dict(zip(names, row, strict=True)) for row in zip(*lists, strict=True)]


def top_doc_ids(question: QuestionResult, k: int) -> Sequence[str]:
    """The document ids of ``question``'s top ``k`` in rank order (``q.ranked[:k]``'s),
    read from the retrieved columns when they are already in rank order.

    >>> from ragaudit.data.saved_run import QuestionResult, Retrieved
    >>> top_doc_ids(QuestionResult("q1", retrieved=(Retrieved("b#0", "b", rank=2),
    ...                                              Retrieved("a#0", "a", rank=1))), 1)
    ('a',)
    """
    return _top_ids(question, k, "doc_id")


def top_chunk_ids(question: QuestionResult, k: int) -> Sequence[str]:
    """The chunk ids of ``question``'s top ``k`` in rank order (``q.ranked[:k]``'s), read
    from the retrieved columns when they are already in rank order.

    >>> from ragaudit.data.saved_run import QuestionResult, Retrieved
    >>> top_chunk_ids(QuestionResult("q1", retrieved=(Retrieved("b#0", "b", rank=2),
    ...                                                Retrieved("a#0", "a", rank=1))), 1)
    ('a#0',)
    """
    return _top_ids(question, k, "chunk_id")


def _top_ids(question: QuestionResult, k: int, field: str) -> Sequence[str]:
    """``field`` (``doc_id`` or ``chunk_id``) of ``question``'s top ``k`` in rank order."""
    ranked = question.ranked
    if isinstance(ranked, RetrievedList):
        return getattr(ranked, field + "s")[:k]
    return tuple(getattr(r, field) for r in ranked[:k])
