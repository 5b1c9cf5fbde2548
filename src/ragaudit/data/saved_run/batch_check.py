"""The schema check of many saved-run rows at once, column by column.

:func:`rows_valid` answers one question, "do these rows pass every check of
:func:`~ragaudit.data.saved_run.check.find_problems`?", without visiting the rows one by one
in Python.  The schema of a row is compiled once (:func:`_column_check`) into a test of a
*column*: the values of one key across a batch of rows.  A column's types are one
``set(map(type, values))``, its bounds one ``min``/``max``, its floats one
``all(map(isfinite, ...))``, an array's items are flattened into the next column and an
object's keys become columns of their own, so the work per value is a few C-level steps
instead of a recursive Python call per node (issue 25: the per-node walk was 74% of loading a
10,000-question run).

Like :func:`~ragaudit.data.saved_run.check._compile`, it only says "valid": a batch it does
not pass goes to :func:`~ragaudit.data.saved_run.check.find_problems`, which words every
problem.  It is exact on the JSON types a parser returns (``dict``, ``list``, ``str``,
``int``, ``float``, ``bool``, ``None``) and answers False for anything else (a ``Mapping``
that is not a ``dict``, a subclass of ``int``...), so the walk decides those.  A property
test holds it to the walk on randomly broken runs (``tests/saved_run/test_batch_check.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from itertools import chain, repeat
from math import isfinite
from operator import itemgetter
from typing import Any

from ragaudit.data.saved_run.metrics import check_metric_value
from ragaudit.data.saved_run.repeat_check import repeat_problems
from ragaudit.data.saved_run.schema import saved_run_schema

__all__ = ["RowChecker", "rows_valid"]

_EXACT_TYPES: dict[str, frozenset[type]] = {
    "string": frozenset({str}), "integer": frozenset({int}), "number": frozenset({int, float}),
    "boolean": frozenset({bool}), "null": frozenset({type(None)}), "object": frozenset({dict}),
    "array": frozenset({list}),
}  # fmt: skip
_JSON_TYPES = frozenset().union(*_EXACT_TYPES.values())
_ABSENT = object()
_Column = Callable[[list[Any]], bool]


def _of_type(values: list[Any], kinds: set[type], kind: type) -> list[Any]:
    """The values of exactly type ``kind`` (all of them, uncopied, when no other type occurs)."""
    if len(kinds) == 1:
        return values
    return [v for v in values if type(v) is kind]


def _key_column(dicts: list[dict[str, Any]], key: str, null_allowed: bool) -> list[Any]:
    """The values of ``key`` in the dicts that hold it.  When null passes the key's schema,
    an absent key and a null are alike to the check, and ``dict.get`` maps in C."""
    if null_allowed:
        return list(map(dict.get, dicts, repeat(key)))
    try:
        return list(map(itemgetter(key), dicts))  # the usual case: every row holds the key
    except KeyError:
        return [d[key] for d in dicts if key in d]


def _column_check(schema: Mapping[str, Any], optional: frozenset[str] = frozenset()) -> _Column:
    """Compile ``schema`` into a test of a list of values (True: every value passes the walk)."""
    names = schema.get("type")
    names = [names] if isinstance(names, str) else list(names or ())
    allowed = frozenset().union(*(_EXACT_TYPES[n] for n in names)) if names else _JSON_TYPES
    const = schema.get("const", _ABSENT)
    low, high = schema.get("minimum"), schema.get("maximum")
    min_length = schema.get("minLength")
    required = tuple(k for k in schema.get("required", ()) if k not in optional)
    properties = {
        key: (_column_check(child), "null" in child.get("type", ()) or "type" not in child)
        for key, child in schema.get("properties", {}).items()
    }
    extra = schema.get("additionalProperties")
    additional = _column_check(extra) if isinstance(extra, dict) else None
    items = _column_check(schema["items"]) if "items" in schema else None

    def check(values: list[Any]) -> bool:
        if not values:
            return True
        kinds = set(map(type, values))
        if not kinds <= allowed:
            return False
        if const is not _ABSENT and any(v != const for v in values):
            return False
        if float in kinds and not all(map(isfinite, _of_type(values, kinds, float))):
            return False
        if (low is not None or high is not None) and (int in kinds or float in kinds):
            numbers = [v for v in values if type(v) is int or type(v) is float]
            if (low is not None and min(numbers) < low) or (
                high is not None and max(numbers) > high
            ):
                return False
        strings = _of_type(values, kinds, str) if min_length is not None and str in kinds else ()
        if strings and min(map(len, strings)) < (min_length or 0):
            return False
        if dict in kinds and not _objects(_of_type(values, kinds, dict)):
            return False
        return not (list in kinds and items is not None) or items(
            list(chain.from_iterable(_of_type(values, kinds, list)))
        )

    def _objects(dicts: list[dict[str, Any]]) -> bool:
        for key in required:
            if not all(map(dict.__contains__, dicts, repeat(key))):
                return False
        for key, (test, null_allowed) in properties.items():
            if not test(_key_column(dicts, key, null_allowed)):
                return False
        if additional is not None:
            if properties:
                rest = [v for d in dicts for k, v in d.items() if k not in properties]
            else:
                rest = list(chain.from_iterable(map(dict.values, dicts)))
            if not additional(rest):
                return False
        return True

    return check


@lru_cache(maxsize=1)
def _row_check() -> _Column:
    schema = saved_run_schema()["properties"]["rows"]["items"]
    return _column_check(schema)


def _metrics_valid(metrics: list[dict[str, Any]]) -> bool:
    """Every per-question metric value lies in its declared range
    (:func:`~ragaudit.data.saved_run.metrics.check_metric_value`), tested once per distinct
    ``(name, type, value)``: a run's metrics take few distinct values per name."""
    names: set[str] = set(chain.from_iterable(metrics))
    for name in names:
        values = _key_column(metrics, name, null_allowed=False)
        for kind, value in set(zip(map(type, values), values, strict=True)):
            if kind is float and not isfinite(value):
                continue  # the schema refuses it, by the walk's words
            if check_metric_value(name, value) is not None:
                return False
    return True


class RowChecker:
    """Checks a run's rows batch by batch: the schema, the metric ranges, unique ids across
    batches, and at most ``k`` context chunks per question.

    >>> rows = [{"id": "q1", "retrieved": [{"chunk_id": "a#0", "doc_id": "a", "rank": 1}],
    ...          "metrics": {"recall@k": 1.0}, "context_ids": ["a#0"]}]
    >>> checker = RowChecker(k=1)
    >>> checker.valid(rows), checker.valid(rows)   # the second batch repeats the id
    (True, False)
    >>> RowChecker(k=1).valid([{"id": "q2", "retrieved": [], "metrics": {"recall@k": 2.0}}])
    False
    """

    def __init__(self, k: int | None) -> None:
        self.k = k
        self.ids: set[str] = set()
        #: The numbers of ``repeats`` entries the rows held (0 without): the reader checks
        #: them against ``config.repeats`` once the header is read.
        self.repeat_counts: set[int] = set()

    def valid(self, rows: list[Any]) -> bool:
        """True when ``rows`` (the next batch) would raise no problem in ``find_problems``."""
        if not _row_check()(rows):
            return False
        before = len(self.ids)
        self.ids.update(row["id"] for row in rows)
        if len(self.ids) != before + len(rows):
            return False
        metrics = [m for m in map(dict.get, rows, repeat("metrics")) if m]
        if metrics and not _metrics_valid(metrics):
            return False
        contexts = [c for c in map(dict.get, rows, repeat("context_ids")) if type(c) is list]
        if self.k is not None and contexts and max(map(len, contexts)) > self.k:
            return False
        entries = list(map(dict.get, rows, repeat("repeats")))
        self.repeat_counts.update(0 if e is None else len(e) for e in entries)
        if any(entries):  # an entry's metric ranges and contexts (its count: by the reader)
            nested = {"config": {"k": self.k}, "rows": [{"repeats": e} for e in entries if e]}
            return not repeat_problems(nested, cap=1, counted=False)
        return True


def rows_valid(rows: list[Any], k: int | None) -> bool:
    """:meth:`RowChecker.valid` of one batch holding every row."""
    return type(rows) is list and RowChecker(k).valid(rows)
