"""JSON and JSON Lines files of labels and runs, with one table of accepted key names.

JSONL: one object per line; ``.json``: one document (a list of such objects, or a mapping).

* qrels: ``{"qid": .., "docid": .., "grade": ..}``, or a ``.json`` ``{qid: {docid: grade}}``;
* runs: ``{"qid": .., "docid": .., "score": ..}``, ``{"id": qid, "ranking": [...]}`` (ids in
  rank order, ``[id, score]`` pairs or ``{id: score}``), or ``{qid: {docid: score}}``.

Every key may be spelled as any alias in :data:`KEY_ALIASES`, in every reader: agreement,
``evaluate`` and ``run --run-file`` accept the same files.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from typing import Any

from ragaudit._io import atomic_write_text
from ragaudit.data.formats._source import json_lines, read_json_file, shorten
from ragaudit.data.formats.trec import MAX_GRADE
from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import RankingInput, Run
from ragaudit.exceptions import FormatError, InputError

__all__ = [
    "KEY_ALIASES",
    "json_records",
    "read_jsonl_qrels",
    "read_jsonl_run",
    "record_fields",
    "write_jsonl_qrels",
    "write_jsonl_run",
]

PathLike = str | os.PathLike[str]

#: Accepted spellings of each key, first choice first.  ``"id"`` names the question in a
#: record that has no other question key, and the item otherwise.
KEY_ALIASES: dict[str, tuple[str, ...]] = {
    "qid": ("qid", "query_id", "question_id", "id"),
    "docid": ("docid", "doc_id", "chunk_id", "item", "item_id", "id"),
    "grade": ("grade", "relevance", "label", "rel"),
    "score": ("score",),
}


def json_records(path: PathLike) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, parsed value)``; a ``.json`` file is one document (line 1).

    A ``.json`` document that is a list yields each element.  Lines are read by the shared
    :func:`~ragaudit.data.formats._source.json_lines` (BOM, bad bytes, torn last line).  A key
    written twice in one object (a question id of ``{qid: {docid: grade}}``, an item of a
    ranking mapping, a field) is an error, not the silent last-one-wins of ``json.loads``.
    """
    if str(path).lower().endswith(".json"):
        document = read_json_file(path)
        for record in document if isinstance(document, list) else [document]:
            yield 1, record
        return
    yield from json_lines(path)


def _object(record: Any, path: str, line: int) -> Mapping[str, Any]:
    if not isinstance(record, Mapping):
        raise FormatError(
            f"expected a JSON object, found {type(record).__name__}", path=path, line=line
        )
    return record


def _key(record: Mapping[str, Any], role: str, path: str, line: int, taken: str = "") -> str:
    for key in KEY_ALIASES[role]:
        if key in record and key != taken:
            return key
    others = [k for k in KEY_ALIASES[role] if k != taken][1:]
    also = f" (or {', '.join(map(repr, others))})" if others else ""
    raise FormatError(
        f"expected a key {role!r}{also}, found keys {shorten(sorted(map(str, record)), 120)}",
        path=path,
        line=line,
        field=role,
    )


def record_fields(
    record: Mapping[str, Any], value_role: str, path: str, line: int
) -> tuple[str, str, Any]:
    """``(qid, item, value)`` of a flat record, each found through :data:`KEY_ALIASES`.

    >>> record_fields({"query_id": "q1", "doc_id": "d3", "relevance": 2}, "grade", "x", 1)
    ('q1', 'd3', 2)
    """
    qid_key = _key(record, "qid", path, line)
    item_key = _key(record, "docid", path, line, taken=qid_key)
    return (
        _id(record[qid_key], path, line, "qid"),
        _id(record[item_key], path, line, "docid"),
        record[_key(record, value_role, path, line)],
    )


def _id(value: Any, path: str, line: int, field: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise FormatError(
            f"expected a string, found {shorten(value)}", path=path, line=line, field=field
        )
    return str(value)


def grade_value(value: Any, path: str, line: int | None) -> int:
    """A JSON/YAML grade: an integer (or integral float) from 0 to :data:`MAX_GRADE`."""
    integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not integral:
        raise FormatError(
            f"expected an integer, found {shorten(value)}", path=path, line=line, field="grade"
        )
    if value < 0:
        raise FormatError(
            f"expected a grade >= 0, found {shorten(value)}", path=path, line=line, field="grade"
        )
    if value > MAX_GRADE:
        raise FormatError(
            f"expected a grade <= {MAX_GRADE}, found {shorten(value, 30)}",
            path=path,
            line=line,
            field="grade",
        )
    return int(value)


def score_value(value: Any, path: str, line: int | None, field: str = "score") -> float:
    """A JSON/YAML score: a finite number (NaN and infinities are refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormatError(
            f"expected a number, found {shorten(value)}", path=path, line=line, field=field
        )
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise FormatError(
            f"expected a finite number, found {shorten(value, 30)}",
            path=path,
            line=line,
            field=field,
        )
    return number


def read_jsonl_qrels(path: PathLike, unit: str = "doc") -> Qrels:
    """Read qrels from JSONL ``{"qid": .., "docid": .., "grade": ..}`` (or one JSON document).

    A ``.json`` file may hold ``{qid: {docid: grade}}`` or a list of records.  Keys may use
    any spelling in :data:`KEY_ALIASES` (``{"query_id", "doc_id", "relevance"}`` ...).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "q.jsonl"
    >>> _ = path.write_text('{"qid": "q1", "docid": "A", "grade": 2}\\n')
    >>> read_jsonl_qrels(path).to_dict()
    {'q1': {'A': 2}}
    """
    name = str(path)
    labels: dict[str, dict[str, int]] = {}
    for line, value in json_records(path):
        record = _object(value, name, line)
        if record and all(isinstance(v, Mapping) for v in record.values()):
            for qid, items in record.items():
                row = labels.setdefault(str(qid), {})
                for item, grade in items.items():
                    row[str(item)] = grade_value(grade, name, line)
            continue
        if not any(key in record for key in KEY_ALIASES["qid"]):
            raise FormatError(
                "expected a mapping {question id: {item id: grade}} or records with keys "
                f"'qid', 'docid', 'grade', found keys {shorten(sorted(map(str, record)), 120)}",
                path=name,
                line=line,
            )
        qid, item, grade = record_fields(record, "grade", name, line)
        labels.setdefault(qid, {})[item] = grade_value(grade, name, line)
    return Qrels(labels, unit=unit, name=name)


def read_jsonl_run(
    path: PathLike, unit: str = "doc", order: str = "score", duplicates: str = "error"
) -> Run:
    """Read a run from JSONL.

    Each line is ``{"qid": .., "docid": .., "score": ..}`` or ``{"id": .., "ranking": [...]}``
    (ids in rank order, ``[id, score]`` pairs, or ``{id: score}``).  A ``.json`` file may
    hold ``{qid: {docid: score}}`` or ``{qid: [ids]}``.  Keys may use any spelling in
    :data:`KEY_ALIASES`.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = path.write_text('{"id": "q1", "ranking": ["B", "A"]}\\n')
    >>> read_jsonl_run(path)["q1"]
    ['B', 'A']
    """
    name = str(path)
    rankings: dict[str, Any] = {}
    for line, value in json_records(path):
        record = _object(value, name, line)
        if "ranking" in record:
            qid = _id(record[_key(record, "qid", name, line)], name, line, "qid")
            rankings[qid] = _ranking(record["ranking"], name, line)
        elif any(key in record for key in KEY_ALIASES["score"]):
            qid, item, score = record_fields(record, "score", name, line)
            rankings.setdefault(qid, []).append((item, score_value(score, name, line)))
        elif record and all(isinstance(v, Mapping | list) for v in record.values()):
            for qid, ranking in record.items():
                rankings[str(qid)] = _ranking(ranking, name, line)
        else:
            raise FormatError(
                "expected keys 'qid', 'docid', 'score' or 'id', 'ranking', "
                f"found keys {shorten(sorted(map(str, record)), 120)}",
                path=name,
                line=line,
            )
    try:
        return Run(rankings, unit=unit, order=order, duplicates=duplicates, name=name)
    except InputError as exc:
        if isinstance(exc, FormatError):
            raise
        raise FormatError(str(exc), path=name) from None


def _ranking(value: Any, path: str, line: int) -> RankingInput:
    if isinstance(value, Mapping):
        return {str(k): score_value(v, path, line) for k, v in value.items()}
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return [str(v) for v in value]
        pairs: list[tuple[str, float]] = []
        for entry in value:
            if not isinstance(entry, list | tuple) or len(entry) != 2:
                raise FormatError(
                    f"expected an id or an [id, score] pair, found {shorten(entry)}",
                    path=path,
                    line=line,
                    field="ranking",
                )
            pairs.append((_id(entry[0], path, line, "ranking"), score_value(entry[1], path, line)))
        return pairs
    raise FormatError(
        f"expected a list or an object, found {type(value).__name__}",
        path=path,
        line=line,
        field="ranking",
    )


def write_jsonl_qrels(path: PathLike, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write qrels as JSONL ``{"qid", "docid", "grade"}`` records (atomically)."""
    lines = [
        json.dumps({"qid": q, "docid": d, "grade": int(g)}, ensure_ascii=False)
        for q, items in qrels.items()
        for d, g in items.items()
    ]
    atomic_write_text(path, "".join(line + "\n" for line in lines))


def write_jsonl_run(path: PathLike, run: Run) -> None:
    """Write a run as JSONL, one ``{"id": qid, "ranking": [...]}`` record per question.

    The ranking holds ``[id, score]`` pairs when the run has scores, else ids in rank order.
    """
    lines = []
    for qid in run:
        scores = run.scores(qid)
        ranking: list[Any] = (
            list(run[qid])
            if scores is None
            else [[i, s] for i, s in zip(run[qid], scores, strict=True)]
        )
        lines.append(json.dumps({"id": qid, "ranking": ranking}, ensure_ascii=False))
    atomic_write_text(path, "".join(line + "\n" for line in lines))
