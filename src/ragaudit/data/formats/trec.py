"""TREC files: runs ``qid Q0 docid rank score tag`` and qrels ``qid iteration docid grade``.

Fields are separated by blanks (one space, a tab, or runs of them).  Files are read in
chunks of whole lines by pyarrow's C++ CSV reader, with an exact Python re-scan of any chunk
it cannot read as is (see :mod:`ragaudit.data.formats.chunked`), into the integer-coded
columns of :mod:`ragaudit.data.formats.columns`.  Every malformed line raises
:class:`~ragaudit.exceptions.FormatError` naming file, line and field.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ragaudit._io import atomic_write_text
from ragaudit.data.formats._qids import remember, unify_codes
from ragaudit.data.formats.chunked import (
    Column,
    TextColumns,
    distinct_names,
    exact_columns,
    fast_columns,
    read_chunks,
    release_arrow_memory,
    sniff_delimiter,
)
from ragaudit.data.formats.columns import (
    QrelsColumns,
    RunColumns,
    _ColumnarQrels,
    _ColumnarRun,
    finish_qrels_columns,
    finish_run_columns,
)
from ragaudit.data.formats.strings import PAD, Strings
from ragaudit.data.qrels import Qrels, check_unit
from ragaudit.data.runs import Run
from ragaudit.exceptions import FormatError, InputError

__all__ = [
    "MAX_GRADE",
    "format_trec_qrels",
    "format_trec_run",
    "iter_run_chunks",
    "load_arrays",
    "read_qrels_columns",
    "read_run_columns",
    "read_trec_qrels",
    "read_trec_run",
    "write_trec_qrels",
    "write_trec_run",
]

PathLike = str | os.PathLike[str]
_BLOCK_BYTES = 1 << 25  # 32 MiB of text per chunk bounds the temporaries of a chunk
_QRELS_FIELDS = ("qid", "iteration", "docid", "grade")
_RUN_FIELDS = ("qid", "Q0", "docid", "rank", "score", "tag")
MAX_GRADE = 2**31 - 1  # grades are C ints in trec_eval; larger ones are refused


def _float(token: str) -> float:
    try:
        return float(token)
    except ValueError:
        return math.nan


def _score(path: str) -> Any:
    def convert(token: str, line: int) -> float:
        value = _float(token)
        if not math.isfinite(value):
            raise FormatError(
                f"expected a number, found {token!r}", path=path, line=line, field="score"
            )
        return value

    return convert


def _grade(path: str) -> Any:
    def convert(token: str, line: int) -> float:
        value = _float(token)
        if not math.isfinite(value) or not value.is_integer():
            raise FormatError(
                f"expected an integer, found {token!r}", path=path, line=line, field="grade"
            )
        if not 0 <= value <= MAX_GRADE:
            expected = ">= 0" if value < 0 else f"<= {MAX_GRADE}"
            raise FormatError(
                f"expected a grade {expected}, found {token[:30]}",
                path=path,
                line=line,
                field="grade",
            )
        return value

    return convert


def _good_grades(values: np.ndarray) -> bool:
    return bool(np.all((values >= 0) & (values <= MAX_GRADE) & (values == np.round(values))))


def _chunk_columns(
    path: PathLike, fields: tuple[str, ...], block_bytes: int, threads: int
) -> Iterator[tuple[TextColumns, int]]:
    """Columns of each chunk of a TREC file and the chunk's size in bytes."""
    name = str(path)
    delimiter = sniff_delimiter(path)
    value_field = fields[-1] if fields is _QRELS_FIELDS else "score"
    convert = _grade(name) if fields is _QRELS_FIELDS else _score(name)
    for chunk in read_chunks(path, block_bytes):
        columns = fast_columns(chunk, fields, value_field, delimiter, threads > 1)
        if columns is None or (fields is _QRELS_FIELDS and not _good_grades(columns.values)):
            columns = exact_columns(chunk, fields, value_field, convert)
        yield columns, chunk.size
        del columns
        release_arrow_memory()


def _file_size(path: PathLike) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _gather(
    path: PathLike, fields: tuple[str, ...], block_bytes: int, threads: int
) -> tuple[tuple[str, ...], np.ndarray, Strings, np.ndarray, bytes | None]:
    """Question ids, question codes, items and values of a whole TREC file, in file order,
    and the digest of the ids (see :func:`~ragaudit.data.formats._qids.remember`).

    The columns are kept compact: question codes and item offsets are 32-bit when the file
    is smaller than 2 GiB (a file of that size cannot hold more rows or item bytes).
    """
    names: list[Any] = []  # each chunk's question ids (pyarrow arrays)
    n_names = 0
    last_name: str | None = None  # the previous chunk's last question id
    size = _file_size(path) + 1
    wide = np.int64 if size >= 2**31 - 1 else np.int32
    q_parts = Column(wide)
    item_data = Column(np.uint8, pad=PAD)
    item_offsets = Column(wide)  # offsets of the items in item_data, from a leading 0
    item_offsets.append(np.zeros(1, dtype=wide), 1)
    value_parts = Column(np.float64)
    for columns, chunk_bytes in _chunk_columns(path, fields, block_bytes, threads):
        if not len(columns.keys):
            continue
        n = len(columns.keys)
        expect = 1 + int(n * size / max(chunk_bytes, 1) * 1.02)  # rows in the whole file
        chunk_names = columns.arrow_names()
        # Provisional codes: chunk-local codes shifted past the earlier chunks' names.  A
        # question straddling two chunks (the usual case at a chunk boundary) keeps the code
        # it had, so that the codes of a grouped file need no remapping afterwards.
        shift = n_names
        first = chunk_names[0].as_py()
        if first == last_name:
            shift -= 1
            chunk_names = chunk_names.slice(1)
        q_parts.append(columns.keys + shift, expect)
        if len(chunk_names):
            names.append(chunk_names)
            n_names += len(chunk_names)
            last_name = chunk_names[len(chunk_names) - 1].as_py()
        item_offsets.append(columns.items.offsets[1:] + item_data.size, expect + 1)
        item_data.append(columns.items.data, int(expect * len(columns.items.data) / n))
        value_parts.append(columns.values, expect)
        del columns, chunk_names
    qids, q, key = unify_codes(names, q_parts.result())
    del names
    items = Strings(item_data.result(), item_offsets.result())
    release_arrow_memory(heap=True)
    return qids, q, items, value_parts.result(), key


def check_policies(order: str, duplicates: str) -> None:
    """Refuse an unknown ranking ``order`` or ``duplicates`` policy (every run reader's rule).

    >>> check_policies("score", "first")
    """
    if order not in ("score", "given"):
        raise InputError(f"order: expected 'score' or 'given', found {order!r}")
    if duplicates not in ("error", "first"):
        raise InputError(f"duplicates: expected 'error' or 'first', found {duplicates!r}")


def read_run_columns(
    path: PathLike,
    *,
    order: str = "score",
    duplicates: str = "error",
    block_bytes: int = _BLOCK_BYTES,
    threads: int = 2,
) -> RunColumns:
    """Read a TREC run straight into :class:`RunColumns` (no per-question Python objects).

    Parameters
    ----------
    path : path-like
        ``qid Q0 docid rank score tag`` per line.
    order : {"score", "given"}
        ``"score"``: score descending, ties by id descending (trec_eval); ``"given"``: file
        order within each question.
    duplicates : {"error", "first"}
        What to do with an item listed twice for one question.
    block_bytes : int
        Bytes of text read per chunk (memory/speed trade-off).
    threads : int
        1 parses in the calling thread; more lets pyarrow use its thread pool.  The result
        does not depend on it.

    Returns
    -------
    RunColumns

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = path.write_text("q1 Q0 A 1 0.5 x\\nq1 Q0 B 2 0.9 x\\n")
    >>> cols = read_run_columns(path)
    >>> cols.qids, cols.items.decode(cols.row_order), cols.scores.tolist()
    (('q1',), ['B', 'A'], [0.9, 0.5])
    """
    check_policies(order, duplicates)
    qids, q, items, scores, key = _gather(path, _RUN_FIELDS, block_bytes, threads)
    columns = finish_run_columns(
        qids, q, items, scores, order=order, duplicates=duplicates, name=str(path)
    )
    return remember(columns, key)


def iter_run_chunks(
    path: PathLike, *, block_bytes: int = _BLOCK_BYTES, threads: int = 2
) -> Iterator[TextColumns]:
    """The rows of a TREC run, chunk by chunk in file order (for streaming evaluation).

    Each :class:`TextColumns` holds whole lines; question codes are local to the chunk, and
    its names are distinct.
    """
    for columns, _ in _chunk_columns(path, _RUN_FIELDS, block_bytes, threads):
        if len(columns.keys):
            yield distinct_names(columns)


def read_trec_qrels(path: PathLike, unit: str = "doc") -> Qrels:
    """Read TREC qrels: ``qid iteration docid grade`` per line.

    Parameters
    ----------
    path : path-like
        The qrels file.  Blank lines are skipped; the iteration column is ignored.
    unit : {"doc", "chunk"}
        What the item ids name.

    Returns
    -------
    Qrels
        Questions in order of first appearance.  A repeated (question, item) pair keeps
        its last grade, as trec_eval does.

    Raises
    ------
    FormatError
        On a line without exactly 4 fields or a grade that is not an integer >= 0.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("q1 0 A 2\\nq1 0 B 0\\nq2 0 C 1\\n")
    >>> read_trec_qrels(path).to_dict()
    {'q1': {'A': 2, 'B': 0}, 'q2': {'C': 1}}
    """
    check_unit(unit)
    name = str(path)
    return _ColumnarQrels(read_qrels_columns(path), unit=unit, name=name)


def read_qrels_columns(
    path: PathLike, block_bytes: int = _BLOCK_BYTES, threads: int = 2
) -> QrelsColumns:
    """Read TREC qrels into :class:`QrelsColumns` (see :func:`read_trec_qrels`).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("q1 0 A 2\\nq2 0 C 1\\nq1 0 A 0\\n")
    >>> cols = read_qrels_columns(path)
    >>> cols.qids, cols.q.tolist(), cols.items.decode(), cols.grades.tolist()
    (('q1', 'q2'), [0, 1], ['A', 'C'], [0, 1])
    """
    qids, q, items, grades, key = _gather(path, _QRELS_FIELDS, block_bytes, threads)
    top = int(grades.max(initial=0))  # <= MAX_GRADE
    small = np.int8 if top < 2**7 else np.int16 if top < 2**15 else np.int32
    return remember(finish_qrels_columns(qids, q, items, grades.astype(small)), key)


def read_trec_run(
    path: PathLike,
    unit: str = "doc",
    order: str = "score",
    duplicates: str = "error",
) -> Run:
    """Read a TREC run: ``qid Q0 docid rank score tag`` per line.

    Parameters
    ----------
    path : path-like
        The run file (blank lines skipped; the Q0, rank and tag columns are ignored).
    unit : {"doc", "chunk"}
        What the item ids name.
    order : {"score", "given"}
        ``"score"`` ranks by score descending with ties broken by id descending (trec_eval);
        ``"given"`` keeps the order of the lines.
    duplicates : {"error", "first"}
        An item listed twice for a question is an error, or keeps its first line.

    Returns
    -------
    Run
        Backed by integer-coded columns (:class:`RunColumns`); :func:`ragaudit.metrics.evaluate`
        uses them directly, and per-question lists are built only when indexed.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = path.write_text("q1 Q0 A 1 0.5 bm25\\nq1 Q0 B 2 0.9 bm25\\nq1 Q0 C 3 0.5 bm25\\n")
    >>> run = read_trec_run(path)
    >>> run["q1"], run.tied_groups
    (['B', 'C', 'A'], 1)
    """
    check_unit(unit)
    columns = read_run_columns(path, order=order, duplicates=duplicates)
    return _ColumnarRun(columns, unit=unit, order=order, name=str(path))


def load_arrays(
    qrels_path: PathLike, run_path: PathLike, *, order: str = "score", duplicates: str = "error"
) -> tuple[Qrels, RunColumns]:
    """Fast path for large files: labels as :class:`Qrels`, the run as :class:`RunColumns`.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "q.txt").write_text("q1 0 A 1\\n")
    >>> _ = (tmp / "r.txt").write_text("q1 Q0 A 1 2.0 x\\nq1 Q0 B 2 1.0 x\\n")
    >>> qrels, cols = load_arrays(tmp / "q.txt", tmp / "r.txt")
    >>> cols.qids, cols.offsets.tolist()
    (('q1',), [0, 2])
    """
    columns = read_run_columns(run_path, order=order, duplicates=duplicates)
    return read_trec_qrels(qrels_path), columns


def _format_score(value: float) -> str:
    return repr(float(value))


def write_trec_qrels(path: PathLike, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write qrels as TREC lines ``qid 0 docid grade`` (atomically).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "q.txt"
    >>> write_trec_qrels(path, {"q1": {"A": 2}})
    >>> path.read_text()
    'q1 0 A 2\\n'
    """
    atomic_write_text(path, format_trec_qrels(qrels))


def format_trec_qrels(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """Qrels as the text of a TREC qrels file (what :func:`write_trec_qrels` writes).

    >>> format_trec_qrels({"q1": {"A": 2, "B": 0}})
    'q1 0 A 2\\nq1 0 B 0\\n'
    """
    _check_ids(qrels)
    return "".join(
        f"{qid} 0 {item} {int(grade)}\n"
        for qid, items in qrels.items()
        for item, grade in items.items()
    )


def write_trec_run(path: PathLike, run: Run, tag: str = "ragaudit") -> None:
    """Write a run as TREC lines ``qid Q0 docid rank score tag`` (atomically).

    Runs without scores get score ``n - rank + 1`` so that re-reading preserves the order.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.txt"
    >>> write_trec_run(path, Run({"q1": ["A", "B"]}))
    >>> print(path.read_text(), end="")
    q1 Q0 A 1 2.0 ragaudit
    q1 Q0 B 2 1.0 ragaudit
    """
    atomic_write_text(path, format_trec_run(run, tag))


def format_trec_run(run: Run, tag: str = "ragaudit") -> str:
    """A run as the text of a TREC run file (what :func:`write_trec_run` writes).

    >>> format_trec_run(Run({"q1": {"A": 0.5}}), tag="x")
    'q1 Q0 A 1 0.5 x\\n'
    """
    if not tag or any(ch.isspace() for ch in tag):
        raise InputError(f"tag: expected a non-empty string without spaces, found {tag!r}")
    _check_ids({qid: run[qid] for qid in run})
    out: list[str] = []
    for qid in run:
        ids = run[qid]
        scores = run.scores(qid)
        if scores is None:
            scores = [float(len(ids) - i) for i in range(len(ids))]
        for rank, (item, score) in enumerate(zip(ids, scores, strict=True), start=1):
            out.append(f"{qid} Q0 {item} {rank} {_format_score(score)} {tag}\n")
    return "".join(out)


def _check_ids(data: Mapping[str, Any]) -> None:
    for qid, items in data.items():
        for value in (qid, *items):
            if not value or any(ch.isspace() for ch in str(value)):
                raise InputError(
                    f"TREC format: ids must be non-empty without whitespace, found {value!r}"
                )
