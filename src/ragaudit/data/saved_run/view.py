"""Reading a saved run's table without making its questions, and making them when read.

:class:`QuestionsView` is ``SavedRun.questions`` of a loaded run: the questions made from the
table (:func:`~.table.table_questions`) a slice at a time, when they are read.
:func:`metric_arrays` and :func:`top_ids` read the metric columns and the top-k retrieved ids
straight from the columns, for ``compare`` and judged@k.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragaudit.data.saved_run.mappings import _EMPTY, Judgments
from ragaudit.data.saved_run.model import QuestionResult
from ragaudit.data.saved_run.table import (
    _ENTRY,
    _TEXT,
    _decoded,
    _mappings,
    _numbers,
    rows_to_table,  # noqa: F401  (the examples build tables with it)
    table_questions,
)

__all__ = [
    "QuestionsView",
    "gold_in_top",
    "in_rank_order",
    "judgments",
    "metric_arrays",
    "record_columns",
    "top_ids",
]


def metric_arrays(table: pa.Table) -> dict[str, Any]:
    """Every metric of ``table`` as a float array (booleans as 0/1), NaN where null or
    absent: ``q.metric(name)`` of each question, read from the ``metrics`` column.

    >>> metric_arrays(rows_to_table([{"id": "q1", "retrieved": [], "metrics": {"c": True}},
    ...                              {"id": "q2", "retrieved": [], "metrics": {"c": None}}]))
    {'c': array([ 1., nan])}
    """
    column = table.column("metrics")
    if pa.types.is_struct(column.type):
        flat = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
        out = {}
        absent = _numbers(flat.is_null().cast(pa.uint8())).astype(bool)
        for i, f in enumerate(column.type):
            child = flat.field(i)
            if child.type == _TEXT:  # a string metric: the schema refuses it; NaN, as None
                out[f.name] = np.full(len(child), np.nan)
                continue
            values = _numbers(child.cast(pa.float64())).copy()
            values[absent | _numbers(child.is_null().cast(pa.uint8())).astype(bool)] = np.nan
            out[f.name] = values
        return out
    rows = [m or {} for m in _decoded(column)]
    names = list(dict.fromkeys(name for m in rows for name in m))
    return {name: np.array([m.get(name) for m in rows], dtype=float) for name in names}


def top_ids(table: pa.Table, k: int, field: str = "doc_id") -> list[list[str]] | None:
    """``field`` (``doc_id`` or ``chunk_id``) of each question's top ``k`` retrieved entries
    in rank order, read from the columns; None when some question's ranks are not its file
    order (1, 2, 3, ... or none at all): then ``q.ranked`` sorts them, question by question.

    >>> table = rows_to_table([{"id": "q1", "retrieved": [
    ...     {"chunk_id": "a#0", "doc_id": "a", "rank": 1},
    ...     {"chunk_id": "b#0", "doc_id": "b", "rank": 2}]}])
    >>> top_ids(table, 1)
    [['a']]
    """
    column = table.column("retrieved")
    if column.type != pa.list_(_ENTRY):
        return None
    lists = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if not in_rank_order(lists):
        return None
    top = pc.list_slice(lists, 0, k)
    return pa.ListArray.from_arrays(top.offsets, top.flatten().field(field)).to_pylist()


def in_rank_order(lists: pa.ListArray) -> bool:
    """Each question's retrieved entries are in rank order: ranks 1, 2, 3, ... or none."""
    ranks = lists.flatten().field("rank")
    if ranks.null_count == len(ranks):
        return True
    starts = pc.list_parent_indices(lists)
    offsets = _numbers(lists.offsets)[:-1]
    position = np.arange(len(ranks)) - offsets[_numbers(starts)] + 1
    return not ranks.null_count and bool(np.array_equal(_numbers(ranks), position))


def _distinct(keys: Any) -> Any:
    """The distinct values of an int array, sorted (by a sort: ``np.unique`` hashes)."""
    keys = np.sort(keys)
    first = np.ones(len(keys), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    return keys[first]


def gold_in_top(table: pa.Table, k: int) -> tuple[Any, Any, Any] | None:
    """For each question, how many distinct documents of its top ``k`` retrieved entries are
    gold documents, how many distinct documents its top ``k`` holds, and how many gold
    documents it lists (three int arrays),
    computed by Arrow and numpy kernels; None when some question's ranks are not its file
    order (then :func:`top_ids`' caller sorts question by question).

    ``found_i = |set(top_k docs_i) & set(gold_docs_i)|``, ``distinct_i = |set(top_k docs_i)|``:
    each (question, document) pair is one integer ``i * D + code(document)`` (``D`` distinct
    documents), and the pairs of the top k are looked up among the gold pairs.

    >>> table = rows_to_table([
    ...     {"id": "q1", "gold_docs": ["b"], "retrieved": [
    ...         {"chunk_id": "a#0", "doc_id": "a"}, {"chunk_id": "a#1", "doc_id": "a"},
    ...         {"chunk_id": "b#0", "doc_id": "b"}]},
    ...     {"id": "q2", "gold_docs": [], "retrieved": []}])
    >>> [a.tolist() for a in gold_in_top(table, 3)], [a.tolist() for a in gold_in_top(table, 2)]
    ([[1, 0], [2, 0], [1, 0]], [[0, 0], [1, 0], [1, 0]])
    """
    column = table.column("retrieved")
    if column.type != pa.list_(_ENTRY):
        return None
    lists = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if not in_rank_order(lists):
        return None
    golds = table.column("gold_docs")
    golds = golds.combine_chunks() if golds.num_chunks else pa.array([], golds.type)
    n = len(lists)
    top = pc.list_slice(lists, 0, k)
    docs = pc.list_flatten(top).field("doc_id")
    gold = pc.list_flatten(golds)
    # lengths from the offsets (fill_null(0) would make a Python 0 into Arrow: pandas import)
    listed = np.diff(_numbers(golds.offsets)).astype(np.int64)
    if golds.null_count:
        listed[_numbers(golds.is_null().cast(pa.uint8())).astype(bool)] = 0
    if len(docs) == 0:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), listed
    codes = pc.dictionary_encode(pa.concat_arrays([docs.cast(_TEXT), gold.cast(_TEXT)]))
    size = len(codes.dictionary)
    numbers = _numbers(codes.indices).astype(np.int64)
    top_pairs = _distinct(_numbers(pc.list_parent_indices(top)) * size + numbers[: len(docs)])
    gold_pairs = _distinct(
        _numbers(pc.list_parent_indices(golds)).astype(np.int64) * size + numbers[len(docs) :]
    )
    distinct = np.bincount(top_pairs // size, minlength=n)
    # sorted lookup: np.unique / np.isin hash, several times slower here
    where = np.searchsorted(gold_pairs, top_pairs).clip(max=max(len(gold_pairs) - 1, 0))
    hits = top_pairs[gold_pairs[where] == top_pairs] if len(gold_pairs) else top_pairs[:0]
    return np.bincount(hits // size, minlength=n), distinct, listed


def record_columns(table: pa.Table, name: str, keys: Sequence[str]) -> list[list[Any]] | None:
    """Each of ``keys`` of the record column ``name`` (``judges``...) over the questions, as
    written (None when absent or null): :func:`~.columns.mapping_columns` of the questions'
    mappings, read from a struct column's children; None when the column is JSON text.

    >>> record_columns(rows_to_table([
    ...     {"id": "q1", "retrieved": [], "judges": {"correct": True}},
    ...     {"id": "q2", "retrieved": [], "judges": {"correct": None}}]),
    ...     "judges", ["correct", "x"])
    [[True, None], [None, None]]
    """
    column = table.column(name)
    if not pa.types.is_struct(column.type):
        return None
    flat = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if flat.null_count:  # a null record: each of its keys absent
        flat = pc.if_else(flat.is_valid(), flat, pa.nulls(len(flat), flat.type))
    names = [f.name for f in column.type]
    return [
        flat.field(names.index(key)).to_pylist() if key in names else [None] * len(flat)
        for key in keys
    ]


def judgments(table: pa.Table) -> list[Judgments]:
    """Each question's ``judges`` (``q.judges`` of each question), read from the ``judges``
    column alone: the funnel reads every question's verdicts without making the questions.

    >>> [j.correct for j in judgments(rows_to_table([
    ...     {"id": "q1", "retrieved": [], "judges": {"correct": True}},
    ...     {"id": "q2", "retrieved": []}]))]
    [True, None]
    """
    return Judgments._adopt_all(_mappings(table.column("judges"), empty=_EMPTY))


class QuestionsView(Sequence[QuestionResult]):
    """A run's questions made from its table when read, ``SLICE`` rows at a time (each slice
    made once): ``run.questions[7]`` makes the 4,096 questions around it, not the run's.

    Equal to the tuple of the same questions; slicing returns a tuple.

    >>> view = QuestionsView(rows_to_table([{"id": "q1", "retrieved": []}]))
    >>> view[0].id, len(view), view == (QuestionResult("q1"),)
    ('q1', 1, True)
    """

    SLICE = 4096
    __slots__ = ("_made", "table")

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self._made: dict[int, list[QuestionResult]] = {}

    def _part(self, j: int) -> list[QuestionResult]:
        made = self._made.get(j)
        if made is None:
            made = self._made[j] = table_questions(self.table.slice(j * self.SLICE, self.SLICE))
        return made

    def __len__(self) -> int:
        return self.table.num_rows

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        i = range(len(self))[index]
        return self._part(i // self.SLICE)[i % self.SLICE]

    def __iter__(self) -> Any:
        for j in range(-(-len(self) // self.SLICE)):
            yield from self._part(j)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"QuestionsView({len(self)} questions)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (QuestionsView, (self.table,))
