"""Saved runs: one JSON file per pipeline configuration, question by question.

The format is documented in ``docs/saved-run-format.md`` and described by the JSON Schema
``ragaudit/data/schemas/saved-run.schema.json``.  :func:`validate_saved_run` interprets that
schema file itself (the small subset of JSON Schema it uses: ``type``, ``const``, ``required``,
``properties``, ``items``, ``additionalProperties``, ``minimum``, ``minLength``), so the
documentation, the schema and the validator cannot drift apart; no ``jsonschema`` at runtime.
Messages locate the problem exactly: ``FILE: rows[3].retrieved[0].chunk_id: expected a string,
found 12``.

Interrupted runs resume from a *checkpoint*: a ``.partial.jsonl`` sidecar whose first line
records the configuration and whose other lines are finished rows, appended and fsync'ed one at
a time (see :class:`Checkpoint`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ragaudit._io import atomic_write_text
from ragaudit.exceptions import FormatError, unreadable

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Checkpoint",
    "SavedRun",
    "find_problems",
    "load_saved_run",
    "per_question_metrics",
    "saved_run_schema",
    "validate_saved_run",
    "write_saved_run",
]

FORMAT = "ragaudit.run"
FORMAT_VERSION = 1


@dataclass
class SavedRun:
    """A saved run in memory.

    Attributes
    ----------
    name : str
        The configuration's name (also the file stem).
    config : dict
        k, retrieval depth, chunking, retriever, generator, judges, seed, hashes, version.
    rows : list of dict
        One per question (see ``docs/saved-run-format.md``).
    summary : dict
        Counts and mean metrics.
    path : str or None
        The file it was read from or written to.
    extra : dict
        Unknown top-level keys, preserved on write.
    """

    name: str
    config: dict[str, Any]
    rows: list[dict[str, Any]]
    summary: dict[str, Any] = field(default_factory=dict)
    path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (format header first, then name, config, rows, summary)."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "name": self.name,
            "config": self.config,
            "rows": self.rows,
            "summary": self.summary,
            **self.extra,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str | None = None) -> SavedRun:
        """Build from a validated JSON document."""
        known = {"format", "format_version", "name", "config", "rows", "summary"}
        return cls(
            name=data["name"],
            config=dict(data["config"]),
            rows=list(data["rows"]),
            summary=dict(data.get("summary") or {}),
            path=path,
            extra={k: v for k, v in data.items() if k not in known},
        )


@lru_cache(maxsize=1)
def saved_run_schema() -> dict[str, Any]:
    """The JSON Schema of the saved-run format (package data)."""
    text = (
        resources.files("ragaudit.data")
        .joinpath("schemas/saved-run.schema.json")
        .read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


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
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    return value is None  # "null"


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return json.dumps(value, ensure_ascii=False)[:60]


def _walk(value: Any, schema: Mapping[str, Any], where: str, problems: list[str], cap: int) -> None:
    if len(problems) >= cap:
        return
    label = where or "(top level)"
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
    if "minimum" in schema and _is_type(value, "number") and value < schema["minimum"]:
        problems.append(f"{label}: expected a value >= {schema['minimum']}, found {_show(value)}")
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        problems.append(f"{label}: expected a non-empty string, found {_show(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        problems.append(f"{label}: expected a finite number, found {value}")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
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


def find_problems(data: Any, *, cap: int = 50) -> list[str]:
    """Every schema violation (up to ``cap``) as ``location: expected ..., found ...``.

    Beyond the schema, row ids must be unique.

    Examples
    --------
    >>> doc = {"format": "ragaudit.run", "format_version": 1, "name": "x", "config": {"k": 3},
    ...        "rows": [{"id": "q1", "question": "?", "answerable": True, "metrics": {},
    ...                  "retrieved": [{"chunk_id": 12, "doc_id": "A"}]}]}
    >>> find_problems(doc)
    ['rows[0].retrieved[0].chunk_id: expected a string, found 12']
    """
    problems: list[str] = []
    _walk(data, saved_run_schema(), "", problems, cap)
    if not problems and isinstance(data, dict):
        seen: dict[str, int] = {}
        for i, row in enumerate(data.get("rows", [])):
            if row["id"] in seen:
                problems.append(
                    f"rows[{i}].id: duplicate question id {row['id']!r} "
                    f"(also rows[{seen[row['id']]}])"
                )
            seen.setdefault(row["id"], i)
    return problems[:cap]


def validate_saved_run(data: Any, *, path: str | None = None) -> None:
    """Raise :class:`FormatError` on the first problem (the message counts the others).

    >>> validate_saved_run({"format": "ragaudit.run"}, path="run.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragaudit.exceptions.FormatError: run.json: (top level): missing required key ... more problems)
    """
    problems = find_problems(data)
    if problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise FormatError(problems[0] + more, path=path)


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def load_saved_run(path: str | Path) -> SavedRun:
    """Read and validate a saved run.

    Raises
    ------
    FormatError
        The file is not JSON (with its line) or does not follow the format (with the location).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(file, exc) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"invalid JSON: {exc.msg} (column {exc.colno})", path=str(file), line=exc.lineno
        ) from None
    validate_saved_run(data, path=str(file))
    return SavedRun.from_dict(data, path=str(file))


def write_saved_run(path: str | Path, saved: SavedRun) -> None:
    """Validate and write a saved run atomically (readers never see half a file).

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "k3.json"
    >>> write_saved_run(target, SavedRun("k3", {"k": 3}, []))
    >>> load_saved_run(target).config
    {'k': 3}
    """
    data = saved.to_dict()
    validate_saved_run(data, path=str(path))
    atomic_write_text(path, _dumps(data))
    saved.path = str(path)


def per_question_metrics(saved: SavedRun) -> dict[str, dict[str, float | None]]:
    """``{question id: {metric: value}}`` with booleans as 0/1 and null kept as None.

    >>> run = SavedRun("x", {"k": 1}, [{"id": "q1", "metrics": {"hit@k": 1.0, "correct": True,
    ...                                                          "faithfulness": None}}])
    >>> per_question_metrics(run)
    {'q1': {'hit@k': 1.0, 'correct': 1.0, 'faithfulness': None}}
    """
    return {
        row["id"]: {
            name: (None if value is None else float(value))
            for name, value in (row.get("metrics") or {}).items()
        }
        for row in saved.rows
    }


class Checkpoint:
    """An append-only sidecar of finished rows, so an interrupted run can resume.

    Line 1 is ``{"checkpoint": FORMAT, "config": ...}``; every other line is one finished row.
    Each line is written with a single ``write`` on a file opened in append mode, then flushed
    and fsync'ed, so a crash leaves at worst one truncated last line, which :meth:`resume`
    ignores.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> sidecar = Checkpoint(pathlib.Path(tempfile.mkdtemp()) / "k3.partial.jsonl")
    >>> sidecar.resume({"k": 3})
    {}
    >>> sidecar.append({"id": "q1", "answer": "x"})
    >>> Checkpoint(sidecar.path).resume({"k": 3})
    {'q1': {'id': 'q1', 'answer': 'x'}}
    >>> Checkpoint(sidecar.path).resume({"k": 5})   # another configuration: start over
    {}
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def resume(self, config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Rows finished under the same ``config``; otherwise start a fresh sidecar."""
        header = json.dumps({"checkpoint": FORMAT, "config": config}, sort_keys=True)
        done: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            lines = self.path.read_text(encoding="utf-8").splitlines()
            if lines and _same_header(lines[0], header):
                for line in lines[1:]:
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:
                        break  # a line cut short by the interruption: redo that question
                    done[row["id"]] = row
                # Rewrite without any truncated tail so later appends start on a clean line.
                atomic_write_text(
                    self.path,
                    "".join(
                        json.dumps(x, ensure_ascii=False) + "\n"
                        for x in [json.loads(header), *done.values()]
                    ),
                )
                return done
        atomic_write_text(self.path, header + "\n")
        return done

    def append(self, row: Mapping[str, Any]) -> None:
        """Append one finished row durably."""
        line = json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n"
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def remove(self) -> None:
        """Delete the sidecar (after the full run was written)."""
        self.path.unlink(missing_ok=True)


def _same_header(line: str, header: str) -> bool:
    try:
        return json.dumps(json.loads(line), sort_keys=True) == header
    except json.JSONDecodeError:
        return False
