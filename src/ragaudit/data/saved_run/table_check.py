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
from ragaudit.data.saved_run.metrics import metric_rule
from ragaudit.data.saved_run.repeat_check import repeat_problems
from ragaudit.data.saved_run.schema import saved_run_schema
from ragaudit.data.saved_run.table import (
    _ENTRY,
    _TEXT,
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


def _metric_child_valid(name: str, child: pa.Array) -> bool:
    """A metric's column (a struct child) in its declared range, by Arrow kernels: the
    vectorised :func:`~.metrics.check_metric_value` (null always passes)."""
    if child.null_count == len(child):
        return True
    rule = metric_rule(name)
    if child.type == pa.bool_():
        return rule is None or rule.kind == "binary"
    if not (pa.types.is_integer(child.type) or pa.types.is_floating(child.type)):
        return False  # a string metric: the schema refuses it
    if pa.types.is_floating(child.type) and not pc.all(pc.is_finite(child)).as_py():
        return False
    if rule is None:
        return True
    low, high = (v.as_py() for v in pc.min_max(child).values())
    if rule.kind == "binary":  # 0 or 1: in [0, 1] and whole (no Python value made into Arrow:
        # that imports pandas, when installed, for a second on a busy machine)
        whole = pa.types.is_integer(child.type) or pc.all(pc.equal(pc.floor(child), child))
        return low >= 0 and high <= 1 and bool(whole if isinstance(whole, bool) else whole.as_py())
    return low >= 0.0 and (rule.kind == "nonnegative" or high <= 1.0)


def _struct_valid(column: pa.ChunkedArray, name: str) -> bool:
    """A record column held as a struct: each child through the schema node of its key by
    Arrow kernels (:func:`_arrow_valid`; the metrics' through their declared ranges), else
    the child's distinct values through the compiled column test."""
    node = _row_properties()[name]
    if column.null_count and "null" not in node.get("type", ()):
        return False  # a null record where the schema wants an object (judges, metrics)
    named, other = node.get("properties", {}), node.get("additionalProperties")
    flat = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    for i, field in enumerate(column.type):
        if name == "metrics":
            if not _metric_child_valid(field.name, flat.field(i)):
                return False
            continue
        child = named.get(field.name, other)
        if not isinstance(child, dict):
            continue
        verdict = _arrow_valid(flat.field(i), child)
        if verdict is None:
            verdict = _column_check(child)(pc.unique(flat.field(i)).to_pylist())
        if not verdict:
            return False
    return True


_ARROW_KINDS = {"string": pa.types.is_string, "boolean": pa.types.is_boolean,
                "integer": pa.types.is_integer, "number": lambda t: (
                    pa.types.is_integer(t) or pa.types.is_floating(t))}  # fmt: skip


def _arrow_valid(values: pa.Array | pa.ChunkedArray, node: dict[str, Any]) -> bool | None:
    """Whether every value of a typed column passes the schema ``node``, decided by Arrow
    kernels (nulls, bounds, lengths, finiteness; a list's items through ``items``); None when
    the column's type is not one the node's types hold (a string column of JSON text...):
    then the values are checked as JSON.  Null children of a null parent are not values,
    whatever they hold, so a column's nulls are read from its validity alone."""
    names = node.get("type", ())
    names = [names] if isinstance(names, str) else list(names)
    kind = values.type
    if values.null_count:
        if "null" not in names:
            return False
        values = pc.drop_null(values)
    if kind == pa.null():
        return True
    if pa.types.is_list(kind):
        if "array" not in names or "items" not in node:
            return None
        return _arrow_valid(pc.list_flatten(values), node["items"])
    if not any(test(kind) for n, test in _ARROW_KINDS.items() if n in names):
        return None
    if "const" in node or "enum" in node:
        return None
    if len(values) == 0:
        return True
    if pa.types.is_floating(kind) and not pc.all(pc.is_finite(values)).as_py():
        return False
    low, high = node.get("minimum"), node.get("maximum")
    if (low is not None or high is not None) and not (
        pa.types.is_string(kind) or pa.types.is_boolean(kind)
    ):
        least, most = (v.as_py() for v in pc.min_max(values).values())
        if (low is not None and least < low) or (high is not None and most > high):
            return False
    if node.get("minLength") is not None and pa.types.is_string(kind):
        return bool(pc.min(pc.utf8_length(values)).as_py() >= node["minLength"])
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
        if name in OMITTED_WHEN_NULL and column.null_count:
            column = pc.drop_null(column)  # null: the key absent from the row
        fast = None if name in JSON_TEXT and column.type == _TEXT else (
            _arrow_valid(column, _row_properties()[name]))  # fmt: skip
        if fast is not None:
            if not fast:
                return False
            continue
        values = _decoded(column, name in JSON_TEXT)
        if name in OMITTED_WHEN_NULL:
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
