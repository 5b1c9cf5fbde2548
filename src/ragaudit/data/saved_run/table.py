"""A saved run's questions as an Arrow table: one row per question, one column per row key.

The table is the in-memory model of a loaded run (:class:`~.model.SavedRun` holds it; its
questions are made from it only when read) and, written as is, the Parquet file
(:mod:`.parquet`).  :func:`rows_to_table` builds it from validated JSON rows, a batch at a
time; :func:`table_questions` makes the :class:`~.model.QuestionResult` of a slice of it,
column by column.

Each column has one Arrow type (``docs/saved-run-format.md`` lists them):

* ``id``, ``question``, ``reference_answer``, ``answer``, ``generation_error``: strings;
  ``answerable``, ``abstained``: booleans; ``keywords``, ``gold_docs``, ``tags``,
  ``context_ids``: lists of strings; ``citations``: a list of integers;
* ``retrieved``: a list of ``struct<chunk_id, doc_id, score: double, rank: int64>``;
* ``metrics``, ``judges``, ``latency_ms``, ``usage``: a struct with one child per key when
  every question holds the same keys, each child of one JSON type (bool, int, float or
  string);
* ``repeats``: a repeated run's generations 1 .. R-1 of each question, as JSON text (null
  for every question of a run with R = 1; a Parquet file then leaves the column out);
* ``extra``: the keys the model keeps as they were written.

A column whose values do not fit its type losslessly (an entry of ``retrieved`` with keys of
its own or an integer score, questions whose metrics have different keys, ``extra``) is held
as the JSON text of each value instead: a string column.  Either way a question reads back
exactly as it was written (``QuestionResult.to_dict``), integers and floats apart.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Sequence
from itertools import accumulate, repeat
from types import MappingProxyType
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ragaudit.data.saved_run.mappings import _EMPTY, Judgments, KeyedValues
from ragaudit.data.saved_run.metrics import canonical_metric_name
from ragaudit.data.saved_run.model import _LEGACY_GENERATION_ERROR, QuestionResult
from ragaudit.data.saved_run.retrieved import (
    IN_ORDER,
    RETRIEVED_KEYS,
    Retrieved,
    RetrievedList,
    ranks_column,
)

__all__ = [
    "COLUMNS",
    "RECORDS",
    "rows_to_table",
    "table_columns",
    "table_questions",
    "table_rows",
    "unify",
]

_TEXT, _LIST = pa.string(), pa.list_(pa.string())
_ENTRY = pa.struct([("chunk_id", _TEXT), ("doc_id", _TEXT), ("score", pa.float64()),
                    ("rank", pa.int64())])  # fmt: skip
#: The columns of a saved-run table, in order, with their type (None: a record, below).
COLUMNS: dict[str, pa.DataType | None] = {
    "id": _TEXT, "question": _TEXT, "answerable": pa.bool_(), "reference_answer": _TEXT,
    "keywords": _LIST, "gold_docs": _LIST, "tags": _LIST, "retrieved": pa.list_(_ENTRY),
    "context_ids": _LIST, "answer": _TEXT, "abstained": pa.bool_(),
    "citations": pa.list_(pa.int64()), "judges": None, "latency_ms": None,
    "generation_error": _TEXT, "usage": None, "metrics": None, "repeats": _TEXT,
    "extra": _TEXT,
}  # fmt: skip
#: Columns of JSON objects: a struct when the questions agree on keys and types, else text.
RECORDS = ("judges", "latency_ms", "usage", "metrics")
#: Columns whose values may be held as JSON text (``extra`` always is).
JSON_TEXT = frozenset({*RECORDS, "retrieved", "repeats", "extra"})
_DEFAULTS: dict[str, Any] = {"question": "", "answerable": True, "keywords": [], "gold_docs": []}
_ROW_KEYS = frozenset({*QuestionResult.KEYS, _LEGACY_GENERATION_ERROR})
_ARROW_OF = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: _TEXT}


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, allow_nan=False)


def _text_column(values: list[Any]) -> pa.Array:
    return pa.array(list(map(_dumps, values)), _TEXT)


def _record_column(values: list[dict[str, Any] | None]) -> pa.Array:
    """A struct of one child per key when every non-null value has the same keys in the
    same order and each key's values are of one JSON scalar type; else JSON text."""
    present = [v for v in values if v is not None]
    shapes = set(map(tuple, present))
    if len(shapes) == 1 and (keys := next(iter(shapes))):
        children, fields = [], []
        for key in keys:
            column = [v[key] for v in present]
            kinds = set(map(type, column)) - {type(None)}
            if len(kinds) > 1 or (kinds and kinds.copy().pop() not in _ARROW_OF):
                return _text_column(values)
            fields.append(pa.field(key, _ARROW_OF[kinds.pop()] if kinds else pa.null()))
            children.append([None if v is None else v[key] for v in values])
        mask = None if len(present) == len(values) else pa.array([v is None for v in values])
        arrays = [pa.array(c, f.type) for c, f in zip(children, fields, strict=True)]
        return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)
    if not present:
        return pa.nulls(len(values), _TEXT)
    return _text_column(values)


def _retrieved_column(lists: list[list[dict[str, Any]]]) -> pa.Array:
    """``list<struct<chunk_id, doc_id, score, rank>>``, or JSON text when an entry has keys
    of its own, an integer score or a rank that is not an integer."""
    flat = [e for found in lists for e in found]
    scores = [e.get("score") for e in flat]
    ranks = [e.get("rank") for e in flat]
    if not (
        all(map(RETRIEVED_KEYS.issuperset, flat))
        and set(map(type, scores)) <= {float, type(None)}
        and set(map(type, ranks)) <= {int, type(None)}
    ):
        return _text_column(lists)
    entries = pa.StructArray.from_arrays(
        [
            pa.array([e["chunk_id"] for e in flat], _TEXT),
            pa.array([e["doc_id"] for e in flat], _TEXT),
            pa.array(scores, pa.float64()),
            pa.array(ranks, pa.int64()),
        ],
        fields=list(_ENTRY),
    )
    offsets = pa.array([0, *accumulate(map(len, lists))], pa.int32())
    return pa.ListArray.from_arrays(offsets, entries)


def _metrics(value: dict[str, Any] | None) -> dict[str, Any]:
    """A question's metrics under their current names (the last of two old spellings wins);
    the names of each key tuple are looked up once, and a dict already in the current
    spelling is kept as it is."""
    if not value:
        return {}
    keys = tuple(value)
    names = _SPELLED.get(keys)
    if names is None:
        names = _SPELLED[keys] = [canonical_metric_name(name) for name in keys]
    if list(keys) == names:
        return value
    return dict(zip(names, value.values(), strict=True))


_SPELLED: dict[tuple[str, ...], list[str]] = {}


def rows_to_table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    """The table of validated JSON ``rows`` (see :mod:`.check`): one row per question.

    >>> table = rows_to_table([{"id": "q1", "retrieved": [{"chunk_id": "a#0", "doc_id": "a"}],
    ...                         "metrics": {"hit@k": 1.0}}])
    >>> table.num_rows, table.column("metrics").type
    (1, StructType(struct<hit@k: double>))
    """

    def column(key: str) -> list[Any]:
        values = list(map(dict.get, rows, repeat(key)))  # in C; None where absent
        default = _DEFAULTS.get(key)  # the schema refuses null for these keys
        return values if default is None else [default if v is None else v for v in values]

    arrays: dict[str, pa.Array] = {}
    for name, kind in COLUMNS.items():
        if name == "retrieved":
            arrays[name] = _retrieved_column([r or [] for r in column("retrieved")])
        elif name == "extra":
            if all(map(_ROW_KEYS.issuperset, rows)):
                arrays[name] = pa.nulls(len(rows), _TEXT)
                continue
            arrays[name] = _text_column(
                [{k: v for k, v in row.items() if k not in _ROW_KEYS} or None for row in rows]
            )
        elif name == "generation_error":
            values = column(name)
            if None in values:  # the key's old name, read as generation_error
                legacy = column(_LEGACY_GENERATION_ERROR)
                values = [old if v is None else v for v, old in zip(values, legacy, strict=True)]
            arrays[name] = pa.array([None if v is None else str(v) for v in values], _TEXT)
        elif name == "metrics":
            arrays[name] = _record_column(list(map(_metrics, column("metrics"))))
        elif name == "repeats":  # repeats 1 .. R-1 of a question: JSON text (or all null)
            arrays[name] = _text_column(column(name))
        elif name == "judges":
            arrays[name] = _record_column([j or {} for j in column("judges")])
        elif kind is None:
            arrays[name] = _record_column(column(name))
        else:
            arrays[name] = pa.array(column(name), kind)
    return pa.table(arrays)


def unify(tables: Sequence[pa.Table]) -> pa.Table:
    """The tables of a run's batches as one: a column whose batches differ in type (keys
    that differ between batches, a batch that needed JSON text) becomes JSON text, and a
    batch whose column is all null takes the others' type.

    >>> a = rows_to_table([{"id": "q1", "retrieved": [], "metrics": {"x": 1.0}}])
    >>> b = rows_to_table([{"id": "q2", "retrieved": [], "metrics": {"y": True}}])
    >>> unify([a, b]).column("metrics").to_pylist()
    ['{"x": 1.0}', '{"y": true}']
    """
    if not tables:
        return rows_to_table([])
    columns = {}
    for name in COLUMNS:
        parts = [t.column(name) for t in tables]
        kinds = {p.type for p in parts if p.null_count < len(p)} or {parts[0].type}
        fixed = COLUMNS[name]  # the type of a column that is never JSON text
        target = fixed if fixed is not None and name not in JSON_TEXT else _merged(kinds)
        columns[name] = pa.chunked_array(
            [_cast(p, target) for p in parts for p in p.chunks], target
        )
    return pa.table(columns)


def _merged(kinds: set[pa.DataType]) -> pa.DataType:
    """The one type of a column whose batches have ``kinds``: theirs when they agree, a
    struct whose children are the non-null type of each when they are structs of the same
    keys that differ only by children null throughout a batch; else JSON text.

    >>> _merged({pa.struct([("a", pa.null())]), pa.struct([("a", pa.bool_())])})
    StructType(struct<a: bool>)
    """
    if len(kinds) == 1:
        return kinds.pop()
    if not all(pa.types.is_struct(k) for k in kinds):
        return _TEXT
    names = {tuple(f.name for f in k) for k in kinds}
    if len(names) != 1:
        return _TEXT
    fields = []
    for i, name in enumerate(names.pop()):
        types = {k.field(i).type for k in kinds} - {pa.null()}
        if len(types) > 1:
            return _TEXT
        fields.append(pa.field(name, types.pop() if types else pa.null()))
    return pa.struct(fields)


def _cast(part: pa.Array, target: pa.DataType) -> pa.Array:
    if part.type == target:
        return part
    if part.null_count == len(part):
        return pa.nulls(len(part), target)
    if pa.types.is_struct(target) and pa.types.is_struct(part.type):  # null children typed
        children = [
            part.field(i) if part.type.field(i).type == f.type else pa.nulls(len(part), f.type)
            for i, f in enumerate(target)
        ]
        mask = part.is_null() if part.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    return _text_column(_decoded(part))  # a typed batch among text ones: its values as text


def _decoded(column: pa.Array | pa.ChunkedArray, text: bool = True) -> list[Any]:
    """A column's values as JSON values (``text``: a string column holds JSON text)."""
    if column.type == _TEXT and text:
        return [None if v is None else json.loads(v) for v in column.to_pylist()]
    if pa.types.is_struct(column.type):
        return _struct_values(column)
    if column.type == pa.list_(_ENTRY):
        return [None if v is None else [_entry(e) for e in v] for v in column.to_pylist()]
    if pa.types.is_list(column.type):
        return column.to_pylist()
    return column.to_pylist()


def _struct_values(column: pa.Array | pa.ChunkedArray) -> list[Any]:
    """A struct column's values as dicts, keys in the struct's order (null as None)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    names = [f.name for f in column.type]
    children = [column.field(i).to_pylist() for i in range(len(names))]
    made = [dict(zip(names, values, strict=True)) for values in zip(*children, strict=True)]
    if column.null_count:
        valid = column.is_valid().to_pylist()
        return [m if ok else None for m, ok in zip(made, valid, strict=True)]
    return made


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if v is not None or k in ("chunk_id", "doc_id")}


def table_columns(table: pa.Table) -> dict[str, list[Any]]:
    """Each column of ``table`` as JSON values (JSON text parsed; a retrieved entry without
    its absent score or rank), one per question.

    >>> table_columns(rows_to_table([{"id": "q1", "retrieved": []}]))["id"]
    ['q1']
    """
    return {name: _decoded(table.column(name), name in JSON_TEXT) for name in COLUMNS}


#: Row keys left out of a JSON row when null (as :meth:`QuestionResult.to_dict` leaves them).
OMITTED_WHEN_NULL = frozenset({"tags", "context_ids", "abstained", "citations", "usage", "repeats"})


def table_rows(table: pa.Table) -> list[dict[str, Any]]:
    """The JSON rows of ``table`` (what :meth:`QuestionResult.to_dict` writes; absent optional
    keys left out), made from the columns whatever they hold: the rows a check words.

    >>> table_rows(rows_to_table([{"id": "q1", "retrieved": [], "tags": ["a"]}]))[0]["tags"]
    ['a']
    """
    columns = table_columns(table)
    extras = columns.pop("extra")
    if table.column("retrieved").type == _TEXT:  # entries as Retrieved.to_dict writes them
        columns["retrieved"] = [
            None if found is None else [Retrieved.from_dict(e).to_dict() for e in found]
            for found in columns["retrieved"]
        ]
    names = list(columns)
    rows = []
    for values, extra in zip(zip(*columns.values(), strict=True), extras, strict=True):
        row = {
            name: value
            for name, value in zip(names, values, strict=True)
            if value is not None or name not in OMITTED_WHEN_NULL
        }
        if isinstance(extra, dict):
            row.update(extra)
        rows.append(row)
    return rows


def _sliced(values: Any, sizes: list[int]) -> list[Any]:
    """``values`` cut into consecutive runs of ``sizes``, each a tuple (an ``array`` slice
    for an ``array``): by ``zip`` in C when every size is the same."""
    size = sizes[0] if sizes else 0
    if size and sizes.count(size) == len(sizes) and not isinstance(values, array):
        return list(zip(*[iter(values)] * size, strict=True))
    ends = list(accumulate(sizes))
    parts = map(values.__getitem__, map(slice, [0, *ends[:-1]], ends))
    return list(parts) if isinstance(values, array) else list(map(tuple, parts))


def _retrieved_lists(column: pa.ChunkedArray) -> list[Any]:
    """Each question's entries as a :class:`RetrievedList` (columns, no object per entry)."""
    if column.type == _TEXT:
        return [
            RetrievedList.of([Retrieved.from_dict(e) for e in found or ()])
            for found in _decoded(column)
        ]
    lists = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    offsets = _numbers(lists.offsets)
    sizes = (offsets[1:] - offsets[:-1]).tolist()
    flat = lists.flatten()
    chunks = _sliced(_shared_strings(flat.field("chunk_id")), sizes)
    docs = _sliced(_shared_strings(flat.field("doc_id")), sizes)
    score_array = flat.field("score")
    if score_array.null_count == 0:
        scores = _sliced(array("d", _numbers(score_array).tobytes()), sizes)
    else:
        scores = _sliced(score_array.to_pylist(), sizes)
    ranks = flat.field("rank")
    if ranks.null_count == len(ranks):
        rank_column: Any = repeat(None)
    elif ranks.null_count == 0 and _in_order(_numbers(ranks), offsets):
        rank_column = repeat(IN_ORDER)  # every question ranked 1, 2, 3, ... as written
    else:
        rank_column = [_ranks(list(r)) for r in _sliced(ranks.to_pylist(), sizes)]
    return list(map(RetrievedList, chunks, docs, scores, rank_column))


def _shared_strings(values: pa.Array) -> list[str]:
    """A string column without nulls as Python strings, each distinct one made once and
    shared (a document is retrieved for many questions): dictionary-encoded in C.

    >>> a, b = _shared_strings(pa.array(["d", "e", "d"]))[::2]
    >>> a is b
    True
    """
    encoded = pc.dictionary_encode(values)
    words = encoded.dictionary.to_pylist()
    return list(map(words.__getitem__, _numbers(encoded.indices).tolist()))


def _in_order(ranks: Any, offsets: Any) -> bool:
    """Each question's ranks are 1, 2, 3, ... (``offsets``: where each question starts)."""
    import numpy as np

    sizes = offsets[1:] - offsets[:-1]
    position = np.arange(len(ranks)) - np.repeat(offsets[:-1] - offsets[0], sizes) + 1
    return bool(np.array_equal(ranks, position))


def _ranks(ranks: list[Any]) -> Any:
    if ranks == list(range(1, len(ranks) + 1)) and ranks:
        return IN_ORDER
    return ranks_column(ranks) if any(r is not None for r in ranks) else None


def _mappings(column: pa.ChunkedArray, *, empty: Any) -> list[Any]:
    """A record column's values as read-only mappings (``empty`` for null); a struct's rows
    share one ``{key: position}`` index (:class:`KeyedValues`)."""
    if not pa.types.is_struct(column.type):
        return [empty if v is None else MappingProxyType(v) for v in _decoded(column)]
    names = [f.name for f in column.type]
    flat = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    rows = list(zip(*[flat.field(i).to_pylist() for i in range(len(names))], strict=True))
    # one index per key tuple for the whole process: every slice of a run shares it, so
    # the column readers (:mod:`.columns`) see one index across the run
    index = _INDEXES.setdefault(tuple(names), dict(zip(names, range(len(names)), strict=True)))
    made = KeyedValues(index, ())._like(rows)
    if flat.null_count:
        valid = flat.is_valid().to_pylist()
        return [m if ok else empty for m, ok in zip(made, valid, strict=True)]
    return made


_INDEXES: dict[tuple[str, ...], dict[str, int]] = {}


def _each(values: list[Any], convert: Callable[[Any], Any]) -> list[Any]:
    return [None if v is None else convert(v) for v in values]


def table_questions(table: pa.Table) -> list[QuestionResult]:
    """The questions of ``table`` (a slice of a run's table, usually), made column by column.

    >>> [q.id for q in table_questions(rows_to_table([{"id": "q1", "retrieved": []}]))]
    ['q1']
    """

    def plain(name: str) -> list[Any]:
        return table.column(name).to_pylist()

    metrics = _mappings(table.column("metrics"), empty=_EMPTY)
    return QuestionResult._many(
        plain("id"),
        _retrieved_lists(table.column("retrieved")),
        plain("question"),
        plain("answerable"),
        plain("reference_answer"),
        list(map(tuple, plain("keywords"))),
        list(map(tuple, plain("gold_docs"))),
        _each(plain("tags"), tuple),
        _each(plain("context_ids"), tuple),
        plain("answer"),
        plain("abstained"),
        _each(plain("citations"), tuple),
        Judgments._adopt_all(_mappings(table.column("judges"), empty=_EMPTY)),
        _mappings(table.column("latency_ms"), empty=None),
        plain("generation_error"),
        _mappings(table.column("usage"), empty=None),
        metrics,
        _each(_decoded(table.column("repeats")), lambda v: tuple(map(_frozen_deep, v))),
        _mappings(table.column("extra"), empty=_EMPTY),
    )


def _frozen_deep(value: Any) -> Any:
    """A JSON value read-only all the way down (objects as mappings, arrays as tuples)."""
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen_deep(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(map(_frozen_deep, value))
    return value


def _numbers(values: pa.Array) -> Any:
    """A numeric Arrow array without nulls as a read-only numpy view of its buffer (not
    ``to_numpy``: that imports pandas when it is installed, seconds on a busy machine).

    >>> _numbers(pa.array([1.5, 2.5]).slice(1))
    array([2.5])
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    import numpy as np

    kind = np.dtype(str(values.type).replace("double", "float64"))
    return np.frombuffer(
        values.buffers()[1], dtype=kind, count=len(values), offset=values.offset * kind.itemsize
    )
