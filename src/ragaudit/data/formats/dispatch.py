"""Which reader reads a file: by extension, then by content.

``.jsonl``/``.ndjson``/``.json`` files are JSON, ``.yaml``/``.yml`` YAML (label mappings),
anything else TREC unless its first non-blank character is ``{`` (JSON Lines under another
name).  Every command that reads labels or a run comes through here, so one file gives one
ranking and one set of numbers everywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ragaudit._io import check_regular_file
from ragaudit._validate import check_path
from ragaudit.data.formats._source import read_text
from ragaudit.data.formats.chunked import check_rereadable, read_chunks
from ragaudit.data.formats.jsonl import grade_value, json_records, read_jsonl_qrels, read_jsonl_run
from ragaudit.data.formats.trec import read_trec_qrels, read_trec_run
from ragaudit.data.formats.yaml_ import load_yaml
from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run
from ragaudit.data.saved_run import FORMAT as SAVED_RUN_FORMAT
from ragaudit.exceptions import FormatError

__all__ = [
    "declared_format",
    "read_chunk_map",
    "read_labels",
    "read_qrels",
    "read_ranked",
    "read_run",
]

PathLike = str | os.PathLike[str]
_JSON = (".jsonl", ".json", ".ndjson")
_YAML = (".yaml", ".yml")


def _kind(path: PathLike) -> str:
    # a device or pipe is refused before any reader (or the saved-run sniff of a failed read)
    # opens it: /dev/zero named run.json was read without end
    check_regular_file(path)
    name = str(path).lower()
    if name.endswith(_JSON):
        return "json"
    if name.endswith(_YAML):
        return "yaml"
    check_rereadable(path)  # the reader opens the file again
    for chunk in read_chunks(path, 1 << 16):
        head = chunk.data.lstrip()
        if head:
            return "json" if head.startswith(b"{") else "trec"
    return "trec"


def read_qrels(path: PathLike, unit: str = "doc") -> Qrels:
    """Read qrels: JSON, YAML ``{qid: {docid: grade}}`` or TREC (see the module docstring).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.json"
    >>> _ = path.write_text('{"q1": {"A": 1}}')
    >>> read_qrels(path).to_dict()
    {'q1': {'A': 1}}
    """
    kind = _kind(check_path(path, "path"))
    if kind == "json":
        with _saved_run_hint(path):
            return read_jsonl_qrels(path, unit)
    if kind == "yaml":
        return Qrels(_yaml_labels(path), unit=unit, name=str(path))
    return read_trec_qrels(path, unit)


def read_run(
    path: PathLike, unit: str = "doc", order: str = "score", duplicates: str = "error"
) -> Run:
    """Read a run from JSON (by extension or a leading ``{``) or TREC.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.json"
    >>> _ = path.write_text('{"q1": ["B", "A"]}')
    >>> read_run(path)["q1"]
    ['B', 'A']
    """
    if _kind(check_path(path, "path")) == "json":
        with _saved_run_hint(path):
            return read_jsonl_run(path, unit, order, duplicates)
    return read_trec_run(path, unit, order, duplicates)


#: How a saved run names its format (docs/saved-run-format.md), near the top of the file.
_SAVED_RUN = re.compile(rb'"format"\s*:\s*"' + re.escape(SAVED_RUN_FORMAT.encode()) + rb'"')


@contextmanager
def _saved_run_hint(path: PathLike) -> Iterator[None]:
    """A saved run given where a TREC/JSON run or qrels belong: say which loader reads it."""
    try:
        yield
    except FormatError as exc:
        chunks = read_chunks(path, 1 << 16)
        head = next(chunks, None)
        saved_run = head is not None and _SAVED_RUN.search(head.data) is not None
        if isinstance(chunks, Generator):
            chunks.close()  # closes the file now, not when the generator is collected
        if not saved_run:
            raise
        raise FormatError(
            "expected a run or labels (TREC or JSON), found a ragaudit saved run: read it with "
            "ragaudit.load_saved_run(path), then .to_run() for its ranking or .to_qrels() for "
            "its labels (or evaluate it with `ragaudit compare`, `funnel`, `report`)",
            path=str(path),
        ) from exc


def read_ranked(path: PathLike) -> dict[str, list[tuple[str, float]]]:
    """``{qid: [(id, score), ...]}`` best first, ranked exactly as :func:`read_run` ranks.

    Ties are broken as trec_eval breaks them (id descending), so ``run --run-file`` and
    ``evaluate`` see the same ranking of the same file.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> _ = path.write_text("q1 Q0 c7 1 2.5 bm25\\nq1 Q0 c3 2 2.5 bm25\\n")
    >>> read_ranked(path)
    {'q1': [('c7', 2.5), ('c3', 2.5)]}
    """
    run = read_run(path)
    if not len(run):
        raise FormatError("expected a TREC or JSONL run, found no lines", path=str(path))
    if not run.has_scores:
        raise FormatError("expected a run with scores, found ranked ids only", path=str(path))
    return {qid: list(zip(run[qid], run.scores(qid) or [], strict=True)) for qid in run}


def _yaml_labels(path: PathLike) -> dict[str, dict[str, int]]:
    name = str(path)
    data = load_yaml(read_text(path), name)
    return _label_mapping(data, name)


def _label_mapping(data: Any, name: str) -> dict[str, dict[str, int]]:
    if isinstance(data, Mapping) and isinstance(data.get("labels"), Mapping):
        data = data["labels"]
    if not isinstance(data, Mapping) or not all(isinstance(v, Mapping) for v in data.values()):
        raise FormatError("expected a mapping {question id: {item id: grade}}", path=name)
    return {
        str(qid): {str(item): grade_value(grade, name, None) for item, grade in items.items()}
        for qid, items in data.items()
    }


def declared_format(path: PathLike) -> str | None:
    """The ``format:`` a JSON/YAML mapping declares (``ragaudit.chunk_labels`` ...), or None.

    >>> import tempfile, pathlib
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "labels.yaml"
    >>> _ = file.write_text("format: ragaudit.chunk_labels\\n")
    >>> declared_format(file)
    'ragaudit.chunk_labels'
    """
    if _kind(path) != "yaml" and not str(path).lower().endswith(".json"):
        return None
    data = load_yaml(read_text(path), str(path))  # YAML reads JSON too
    value = data.get("format") if isinstance(data, Mapping) else None
    return value if isinstance(value, str) else None


def read_labels(path: PathLike) -> Qrels:
    """Read relevance labels of any format :func:`read_qrels` knows; at least one label.

    A ``.json``/``.yaml`` mapping may also wrap the labels as ``{"labels": {...}}``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = file.write_text("q1 0 d1 2\\nq1 0 d2 0\\n")
    >>> read_labels(file).to_dict()
    {'q1': {'d1': 2, 'd2': 0}}
    """
    name = str(path)
    if str(path).lower().endswith(".json"):
        records = [record for _, record in json_records(path)]
        if len(records) == 1 and isinstance(records[0], Mapping) and "labels" in records[0]:
            qrels = Qrels(_label_mapping(records[0], name), name=name)
        else:
            qrels = read_qrels(path)
    else:
        qrels = read_qrels(path)
    if not any(len(qrels[qid]) for qid in qrels):
        raise FormatError("expected at least one label, found none", path=name)
    return qrels


def read_chunk_map(path: PathLike) -> dict[str, str]:
    """Read a chunk->document map: TSV ``chunk_id<TAB>doc_id`` lines, or a JSON object.

    A TSV header line ``chunk_id<TAB>doc_id`` is skipped; ``.json`` files hold
    ``{chunk_id: doc_id}``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "map.tsv"
    >>> _ = path.write_text("chunk_id\\tdoc_id\\nc1\\tD1\\nc2\\tD1\\n")
    >>> read_chunk_map(path)
    {'c1': 'D1', 'c2': 'D1'}
    """
    name = str(path)
    if name.lower().endswith(".json"):
        mapping: dict[str, str] = {}
        for number, record in json_records(path):
            if not isinstance(record, Mapping) or not all(
                isinstance(v, str) for v in record.values()
            ):
                raise FormatError(
                    "expected a JSON object {chunk_id: doc_id}", path=name, line=number
                )
            mapping.update({str(k): v for k, v in record.items()})
        return mapping
    mapping = {}
    for number, text_line in enumerate(read_text(path).splitlines(), start=1):
        if not text_line.strip() or (number == 1 and text_line.split("\t")[:1] == ["chunk_id"]):
            continue
        fields = text_line.rstrip("\r").split("\t")
        if len(fields) != 2 or not fields[0] or not fields[1]:
            raise FormatError(
                f"expected 2 tab-separated fields (chunk_id, doc_id), found {len(fields)}",
                path=name,
                line=number,
            )
        mapping[fields[0]] = fields[1]
    return mapping
