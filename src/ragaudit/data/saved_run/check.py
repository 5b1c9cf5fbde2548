"""Validation of saved-run documents: the JSON Schema, value ranges and unique ids.

:func:`validate_saved_run` interprets the schema file ``data/schemas/saved-run.schema.json``
itself (the small subset of JSON Schema it uses: ``type``, ``const``, ``required``,
``properties``, ``items``, ``additionalProperties``, ``minimum``, ``maximum``,
``minLength``, and our annotation ``x-expected``: the accepted values in words), so the
documentation, the schema and the validator cannot drift apart; no ``jsonschema`` at
runtime.  On top of the schema every per-question metric is range-checked against its
declaration (:mod:`ragaudit.data.saved_run.metrics`) and question ids must be unique.
Messages locate the problem exactly and name the question: ``rows[3].metrics.recall@k:
expected a number between 0 and 1 or null, found 7.5 (question 'q04')``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from ragaudit.data.saved_run.batch_check import RowChecker
from ragaudit.data.saved_run.metrics import check_metric_value
from ragaudit.data.saved_run.repeat_check import repeat_problems
from ragaudit.data.saved_run.schema import saved_run_schema
from ragaudit.exceptions import FormatError

__all__ = ["find_problems", "saved_run_schema", "validate_saved_run"]

#: Top-level keys a file must have but an in-memory document may leave out.
HEADER_KEYS = frozenset({"format", "format_version", "name"})


_INT_LIMIT = 2**31 - 1  # the bound on counts and cut-offs (trec_eval's C int)

_TYPE_NAMES = {
    "string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
    "object": "an object", "array": "an array", "null": "null",
}  # fmt: skip


def _is_type(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, Mapping)
    if name == "array":
        return isinstance(value, list)
    return value is None  # "null"


def _show(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return json.dumps(value, ensure_ascii=False)[:60]


def _within(value: Any, schema: Mapping[str, Any]) -> bool:
    """``value`` has one of the schema's types and lies within its minimum and maximum."""
    types = schema.get("type", ())
    names = [types] if isinstance(types, str) else list(types)
    if names and not any(_is_type(value, n) for n in names):
        return False
    if not _is_type(value, "number"):
        return True
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return bool(schema.get("minimum", value) <= value <= schema.get("maximum", value))


def _walk(
    value: Any,
    schema: Mapping[str, Any],
    where: str,
    problems: list[str],
    cap: int,
    optional: frozenset[str] = frozenset(),
) -> None:
    if len(problems) >= cap:
        return
    label = where or "(top level)"
    custom = schema.get("x-expected")  # our annotation: the range in words
    if custom is not None and not _within(value, schema):
        problems.append(f"{label}: expected {custom}, found {_show(value)}")
        return
    if "const" in schema and value != schema["const"]:
        problems.append(f"{label}: expected {_show(schema['const'])}, found {_show(value)}")
        return
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, n) for n in names):
            expected = " or ".join(_TYPE_NAMES[n] for n in names)
            problems.append(f"{label}: expected {expected}, found {_show(value)}")
            return
    if isinstance(value, float) and not math.isfinite(value):
        problems.append(f"{label}: expected a finite number, found {value}")
        return
    number = _is_type(value, "number")
    if "minimum" in schema and number and value < schema["minimum"]:
        if schema.get("maximum", _INT_LIMIT) < _INT_LIMIT:  # a range such as [0, 1]
            problems.append(
                f"{label}: expected a value between {schema['minimum']} and "
                f"{schema['maximum']}, found {_show(value)}"
            )
        else:
            problems.append(
                f"{label}: expected a value >= {schema['minimum']}, found {_show(value)}"
            )
    elif "maximum" in schema and number and value > schema["maximum"]:
        problems.append(
            f"{label}: expected a value between {schema.get('minimum', '-inf')} and "
            f"{schema['maximum']}, found {_show(value)}"
        )
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        problems.append(f"{label}: expected a non-empty string, found {_show(value)}")
    if isinstance(value, Mapping):
        for key in schema.get("required", ()):
            if key not in value and key not in optional:
                problems.append(f"{label}: missing required key {key!r}")
        properties = schema.get("properties", {})
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            child = f"{where}.{key}" if where else str(key)
            if key in properties:
                _walk(item, properties[key], child, problems, cap)
            elif isinstance(additional, dict):
                _walk(item, additional, child, problems, cap)
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _walk(item, schema["items"], f"{where}[{i}]", problems, cap)


_EXACT_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "null": (type(None),), "object": (dict,), "array": (list,),
}  # fmt: skip
_ABSENT = object()
_Leaf = tuple[frozenset[type] | None, Callable[[Any], bool] | None]


def _allowed(schema: Mapping[str, Any]) -> frozenset[type] | None:
    """The exact Python types a node's ``type`` admits (None: any)."""
    types = schema.get("type")
    names = [types] if isinstance(types, str) else list(types or ())
    return frozenset(t for n in names for t in _EXACT_TYPES[n]) if names else None


def _leaf(schema: Mapping[str, Any]) -> _Leaf:
    """``(exact types, check)`` of a schema node: a node that is only a type test (no
    bounds, no children, no float to test for finiteness) needs no function call."""
    allowed = _allowed(schema)
    simple = (
        allowed is not None
        and float not in allowed
        and dict not in allowed
        and list not in allowed
        and not ({"const", "minimum", "maximum", "minLength"} & schema.keys())
    )
    return allowed, None if simple else _compile(schema)


def _compile(schema: Mapping[str, Any], optional: frozenset[str] = frozenset()) -> Any:
    """A function ``value -> bool``: True exactly when :func:`_walk` would find no problem
    in ``value`` under ``schema`` (exact Python types only: a Mapping that is not a dict, an
    int subclass... answer False and go to the walk, which then words the problem).

    The walk visits every node through the generic schema interpreter; this one is built
    once per schema, tests a leaf with one set lookup, and made loading a 10,000-question
    run several times faster.  It only says "valid"; every message still comes from the walk.
    """
    allowed = _allowed(schema)
    const = schema.get("const", _ABSENT)
    low, high = schema.get("minimum"), schema.get("maximum")
    min_length = schema.get("minLength")
    required = frozenset(schema.get("required", ())) - optional
    properties = {key: _leaf(child) for key, child in schema.get("properties", {}).items()}
    extra = schema.get("additionalProperties")
    additional = _leaf(extra) if isinstance(extra, dict) else None
    items = _leaf(schema["items"]) if "items" in schema else None
    isfinite = math.isfinite

    def check(value: Any) -> bool:
        kind = type(value)
        if allowed is not None and kind not in allowed:
            return False
        if const is not _ABSENT and value != const:
            return False
        if kind is float and not isfinite(value):
            return False
        if kind is int or kind is float:
            if (low is not None and value < low) or (high is not None and value > high):
                return False
        elif kind is str:
            if min_length is not None and len(value) < min_length:
                return False
        elif kind is dict:
            if required and not required <= value.keys():
                return False
            if properties or additional is not None:
                for key, item in value.items():
                    leaf = properties.get(key, additional)
                    if leaf is not None:
                        types, test = leaf
                        if types is not None and type(item) not in types:
                            return False
                        if test is not None and not test(item):
                            return False
        elif kind is list:
            if items is not None:
                types, test = items
                if types is not None:
                    for item in value:
                        if type(item) not in types:
                            return False
                if test is not None:
                    for item in value:
                        if not test(item):
                            return False
        elif isinstance(value, Mapping | list):  # a subclass: the walk decides
            return False
        return True

    return check


@lru_cache(maxsize=4)
def _valid_fast(optional: frozenset[str]) -> Any:
    return _compile(saved_run_schema(), optional)


def _row_problems(rows: list[Any], cap: int) -> list[str]:
    """Metric ranges and duplicate ids (rows already passed the schema)."""
    problems: list[str] = []
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        qid = row["id"]
        for name, value in (row.get("metrics") or {}).items():
            if isinstance(value, bool) or (isinstance(value, int | float) and math.isfinite(value)):
                reason = check_metric_value(name, value)
                if reason is not None:
                    problems.append(f"rows[{i}].metrics.{name}: {reason} (question {qid!r})")
        if qid in seen:
            problems.append(f"rows[{i}].id: duplicate question id {qid!r} (also rows[{seen[qid]}])")
        seen.setdefault(qid, i)
        if len(problems) >= cap:
            break
    return problems


def _k_problems(data: Mapping[str, Any]) -> list[str]:
    """``config.k`` against what the run holds: the cut-off its summary was computed at, the
    depth it was retrieved to, and the contexts each question was given.  A run relabelled
    ``k = 50`` while its lists and metrics are at 3 would print ``recall@50`` with k=3's
    numbers (rows passed the schema: ``config.k`` is an integer >= 1)."""
    config = data.get("config") or {}
    k = config.get("k")
    if not isinstance(k, int):
        return []
    summary = data.get("summary")
    problems: list[str] = []
    stated = summary.get("k") if isinstance(summary, Mapping) else None
    if _is_type(stated, "integer") and stated != k:
        problems.append(
            f"config.k: expected the cut-off the run's metrics were computed at, found {k} "
            f"while summary.k is {stated} (its metrics named @k are at {stated}); set "
            f"config.k to {stated}, or recompute the run at {k}"
        )
    depth = config.get("retrieval_depth")
    if isinstance(depth, int) and not isinstance(depth, bool) and depth < k:
        problems.append(
            f"config.k: expected at most config.retrieval_depth ({depth}), found {k}: a run "
            f"retrieved to depth {depth} has no top {k}"
        )
    for i, row in enumerate(data.get("rows", [])):
        contexts = row.get("context_ids")
        if isinstance(contexts, list) and len(contexts) > k:
            problems.append(
                f"rows[{i}].context_ids: expected at most config.k ({k}) chunks, found "
                f"{len(contexts)}: the context is the top k retrieved chunks"
            )
            break
    return problems


#: The keys of a ``judge_audit`` row that ran (its verdict is not "not run").
_AUDIT_RAN_KEYS = ("n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "ci_method", "p_value",
                   "p_method", "n_differing")  # fmt: skip


def _audit_problems(data: Any) -> list[str]:
    """The keys a ``judge_audit`` row needs beyond the schema's: a row that ran carries its
    comparison (:data:`_AUDIT_RAN_KEYS`), a row that did not, its ``reason``.

    >>> _audit_problems({"judge_audit": {"rows": [{"verdict": "SIGNIFICANT", "n": 3}]}})[0]
    "judge_audit.rows[0].mean_a: expected the key 'mean_a', found none"
    """
    audit = data.get("judge_audit") if isinstance(data, Mapping) else None
    rows = audit.get("rows") if isinstance(audit, Mapping) else None
    for i, row in enumerate(rows if isinstance(rows, list) else ()):
        if not isinstance(row, Mapping):
            continue
        wanted = ("reason",) if row.get("verdict") == "not run" else _AUDIT_RAN_KEYS
        missing = [key for key in wanted if key not in row]
        if missing:
            return [f"judge_audit.rows[{i}].{missing[0]}: expected the key {missing[0]!r}, "
                    "found none"]  # fmt: skip
    return []


_ROW_ID = re.compile(r"rows\[\d+\]\.id")


def _name_questions(problems: list[str], data: Any) -> list[str]:
    """Append ``(question 'q04')`` to problems located inside a row."""
    rows = data.get("rows") if isinstance(data, Mapping) else None
    if not isinstance(rows, list):
        return problems
    out = []
    for problem in problems:
        head = problem.split(":", 1)[0]
        # a row's own id names no question; an id inside a row (a repeat's) does
        inside = head.startswith("rows[") and "]." in head and not _ROW_ID.fullmatch(head)
        if inside and "(question " not in problem:
            index = int(head[5 : head.index("]")])
            row = rows[index] if index < len(rows) else None
            qid = row.get("id") if isinstance(row, Mapping) else None
            if isinstance(qid, str):
                problem += f" (question {qid!r})"
        out.append(problem)
    return out


def find_problems(data: Any, *, cap: int = 50, require_header: bool = True) -> list[str]:
    """Every problem (up to ``cap``) as ``location: expected ..., found ...``.

    Beyond the schema, per-question metric values must lie in their declared range, row
    ids must be unique, ``config.k`` must agree with the run (:func:`_k_problems`), and a
    repeated run's rows must hold ``config.repeats - 1`` entries each (:mod:`.repeat_check`).  With
    ``require_header=False`` (a document built in memory) ``format``, ``format_version`` and
    ``name`` may be missing.

    Examples
    --------
    >>> doc = {"format": "ragaudit.run", "format_version": 1, "name": "x", "config": {"k": 3},
    ...        "rows": [{"id": "q1", "question": "?", "answerable": True, "metrics": {},
    ...                  "retrieved": [{"chunk_id": 12, "doc_id": "A"}]}]}
    >>> find_problems(doc)
    ["rows[0].retrieved[0].chunk_id: expected a string, found 12 (question 'q1')"]
    >>> doc["rows"][0]["retrieved"][0]["chunk_id"] = "A#0"
    >>> doc["rows"][0]["metrics"]["recall@k"] = 7.5
    >>> print(find_problems(doc)[0])
    rows[0].metrics.recall@k: expected a number between 0 and 1 or null, found 7.5 (question 'q1')
    """
    problems: list[str] = []
    optional = frozenset() if require_header else HEADER_KEYS
    if _fast_valid(data, optional):  # the usual valid run: compiled passes, no walk
        problems = _k_problems(data) or repeat_problems(data, cap) or _audit_problems(data)
        return _name_questions(problems, data)[:cap]
    _walk(data, saved_run_schema(), "", problems, cap, optional)
    if not problems and isinstance(data, Mapping):
        problems = (
            _row_problems(data.get("rows", []), cap)
            or _k_problems(data)
            or repeat_problems(data, cap)
            or _audit_problems(data)
        )
    return _name_questions(problems, data)[:cap]


def _fast_valid(data: Any, optional: frozenset[str]) -> bool:
    """The document passes the schema, the metric ranges and unique ids, tested by the
    compiled check of the top level and the column-wise check of the rows
    (:mod:`.batch_check`): no walk, no per-row loop.  False means "let the walk decide"."""
    if type(data) is not dict or type(data.get("rows")) is not list:
        return False
    config = data.get("config")
    k = config.get("k") if type(config) is dict else None
    top = {**data, "rows": []}
    return bool(_valid_fast(optional)(top)) and RowChecker(k if type(k) is int else None).valid(
        data["rows"]
    )


def validate_saved_run(data: Any, *, path: str | None = None, require_header: bool = True) -> None:
    """Raise :class:`FormatError` on the first problem (the message counts the others).

    >>> validate_saved_run({"format": "ragaudit.run"}, path="run.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragaudit.exceptions.FormatError: run.json: (top level): missing required key ... more problems)
    """
    problems = find_problems(data, require_header=require_header)
    if problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        location, message = problems[0].split(": ", 1)
        raise FormatError(message + more, path=path, field=location)
