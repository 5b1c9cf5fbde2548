"""The checks of a saved run's rows, made on its table column by column.

:func:`table_valid` answers "would :func:`~ragaudit.data.saved_run.check.find_problems` find
nothing in these rows?" for a table read from Parquet, without making the rows: each
column's values go through the row schema's compiled column test
(:mod:`.batch_check`), the retrieved entries (most of a run: 20 per question) through Arrow
kernels, then the metric ranges, unique ids and the number of context chunks.  Like the
compiled checks it only says "valid": a table it does not pass is turned into its JSON rows
and checked by :func:`~ragaudit.data.saved_run.check.validate_saved_run`, whose message is
the one the same run gets from JSON.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ragaudit.data.saved_run.batch_check import _column_check, _metrics_valid
from ragaudit.data.saved_run.metrics import check_metric_value
from ragaudit.data.saved_run.repeat_check import repeat_problems
from ragaudit.data.saved_run.schema import saved_run_schema
from ragaudit.data.saved_run.table import (
    _ENTRY,
    COLUMNS,
    JSON_TEXT,
    OMITTED_WHEN_NULL,
    RECORDS,
    _decoded,
)

__all__ = ["table_valid"]

_INT_LIMIT = 2**31 - 1


@lru_cache(maxsize=1)
def _column_tests() -> dict[str, Any]:
    properties = saved_run_schema()["properties"]["rows"]["items"]["properties"]
    return {name: _column_check(node) for name, node in properties.items()}


def _entries_valid(column: pa.ChunkedArray) -> bool:
    """Every retrieved entry has a chunk and a document id, a finite score or none, a rank
    between 1 and 2**31 - 1 or none; no question's list is null."""
    if column.null_count:
        return False
    flat = pc.list_flatten(column)
    if flat.null_count or len(flat) == 0:
        return flat.null_count == 0
    for name in ("chunk_id", "doc_id"):
        if pc.struct_field(flat, name).null_count:
            return False
    scores = pc.struct_field(flat, "score")
    if scores.null_count < len(scores) and not pc.all(pc.is_finite(scores)).as_py():
        return False
    ranks = pc.struct_field(flat, "rank")
    if ranks.null_count < len(ranks):
        low, high = pc.min_max(ranks).values()
        if low.as_py() < 1 or high.as_py() > _INT_LIMIT:
            return False
    return True


def _struct_valid(column: pa.ChunkedArray, name: str) -> bool:
    """A record column held as a struct: each child's distinct values through the schema
    node of its key (the metrics' through their declared ranges), not a dict per row."""
    node = _row_properties()[name]
    named, other = node.get("properties", {}), node.get("additionalProperties")
    flat = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    for i, field in enumerate(column.type):
        values = pc.unique(flat.field(i)).to_pylist()
        if name == "metrics":
            if any(check_metric_value(field.name, v) is not None for v in values):
                return False
            if not _column_check(other)(values):
                return False
            continue
        child = named.get(field.name, other)
        if isinstance(child, dict) and not _column_check(child)(values):
            return False
    return True


@lru_cache(maxsize=1)
def _row_properties() -> dict[str, Any]:
    properties: dict[str, Any] = saved_run_schema()["properties"]["rows"]["items"]["properties"]
    return properties


def table_valid(table: pa.Table, k: int | None, repeats: int = 1) -> bool:
    """True when the rows of ``table`` pass every row check of ``find_problems`` (the schema,
    metric ranges, unique non-empty ids, at most ``k`` context chunks, ``repeats - 1``
    entries of ``repeats`` per question).

    >>> from ragaudit.data.saved_run.table import rows_to_table
    >>> table_valid(rows_to_table([{"id": "q1", "retrieved": [], "tags": ["x"]}]), 3)
    True
    >>> table_valid(rows_to_table([{"id": "q1", "retrieved": [], "latency_ms": {"x": -1.0}}]), 3)
    False
    """
    tests = _column_tests()
    for name in COLUMNS:
        column = table.column(name)
        if name == "retrieved" and column.type == pa.list_(_ENTRY):
            if not _entries_valid(column):
                return False
            continue
        if name == "extra":
            continue
        if name in RECORDS and pa.types.is_struct(column.type):
            if not _struct_valid(column, name):
                return False
            continue
        values = _decoded(column, name in JSON_TEXT)
        if name in OMITTED_WHEN_NULL or name in ("judges", "metrics"):
            values = [v for v in values if v is not None]
        if name in tests and not tests[name](values):
            return False
        if name == "metrics" and not _metrics_valid([m for m in values if m]):
            return False
    ids = table.column("id")
    if ids.null_count or pc.count_distinct(ids).as_py() != len(ids):
        return False
    contexts = table.column("context_ids")
    if k is not None and contexts.null_count < len(contexts):
        most = pc.max(pc.list_value_length(contexts)).as_py()
        if most is not None and most > k:
            return False
    entries = table.column("repeats")
    if entries.null_count == len(entries):
        return repeats == 1 or len(entries) == 0
    rows = [{"repeats": e} for e in _decoded(entries)]
    return not repeat_problems({"config": {"k": k, "repeats": repeats}, "rows": rows}, cap=1)
