"""Human verdicts on a subset of questions (the input of ``ragaudit calibrate``).

Two spellings of the same thing, one verdict per question:

* JSONL (``.jsonl``), one object a line::

      {"id": "q01", "correct": true}
      {"id": "q07", "correct": false, "note": "cites the wrong policy"}

* YAML or JSON mapping (any other suffix), question id -> verdict::

      q01: true
      q07: false

A verdict is ``true``/``false``, ``1``/``0`` or ``"correct"``/``"wrong"``; other keys are
ignored.  The field is ``correct`` unless ``calibrate --metric`` names another.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ragaudit._yaml import compose_yaml, construct_yaml
from ragaudit.data.formats._source import json_lines, read_text
from ragaudit.exceptions import FormatError

__all__ = ["read_human_verdicts"]

_WORDS = {"correct": 1.0, "wrong": 0.0, "incorrect": 0.0, "yes": 1.0, "no": 0.0}


def _verdict(value: Any, where: str, line: int | None, field: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and value in (0, 1):
        return float(value)
    if isinstance(value, str) and value.strip().lower() in _WORDS:
        return _WORDS[value.strip().lower()]
    raise FormatError(
        f"expected true/false, 1/0 or 'correct'/'wrong', found {value!r}",
        path=where, line=line, field=field,
    )  # fmt: skip


def _from_jsonl(where: str, field: str) -> dict[str, float]:
    verdicts: dict[str, float] = {}
    for number, row in json_lines(where):
        if not isinstance(row, dict):
            raise FormatError(
                f"expected an object, found {type(row).__name__}", path=where, line=number
            )
        qid = row.get("id")
        if not isinstance(qid, str) or not qid:
            raise FormatError(
                f"expected a question id string, found {qid!r}", path=where, line=number, field="id"
            )
        if field not in row:
            raise FormatError(
                f"expected a verdict, found no {field!r} key (keys: {', '.join(row)})",
                path=where, line=number, field=field,
            )  # fmt: skip
        if qid in verdicts:
            raise FormatError(f"duplicate question id {qid!r}", path=where, line=number, field="id")
        verdicts[qid] = _verdict(row[field], where, number, field)
    return verdicts


def _from_mapping(text: str, where: str) -> dict[str, float]:
    import yaml

    node = compose_yaml(text, where)  # the one safe YAML reader (JSON is YAML too)
    if not isinstance(node, yaml.MappingNode):
        raise FormatError(
            "expected a mapping of question id -> verdict (or a .jsonl file), found "
            f"{'nothing' if node is None else node.tag.rsplit(':', 1)[-1]}",
            path=where,
        )
    verdicts: dict[str, float] = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        qid = construct_yaml(key_node, where)
        value = construct_yaml(value_node, where)
        if str(qid) in verdicts:
            raise FormatError(f"duplicate question id {qid!r}", path=where, line=line)
        verdicts[str(qid)] = _verdict(value, where, line, str(qid))
    return verdicts


def read_human_verdicts(path: str | os.PathLike[str], field: str = "correct") -> dict[str, float]:
    """Read ``{question id: 0.0 or 1.0}`` from a JSONL file or a YAML/JSON mapping.

    Raises
    ------
    FormatError
        ``FILE:LINE: field: expected ..., found ...``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "h.yaml").write_text("q01: true\\nq02: wrong\\n")
    >>> read_human_verdicts(folder / "h.yaml")
    {'q01': 1.0, 'q02': 0.0}
    """
    file = Path(path)
    where = str(file)
    if file.suffix.lower() == ".jsonl":
        verdicts = _from_jsonl(where, field)
    else:
        verdicts = _from_mapping(read_text(file), where)
    if not verdicts:
        raise FormatError("expected at least one human verdict, found none", path=where)
    return verdicts
