"""Reading and writing saved runs: one loader, one atomic writer, and resumable checkpoints.

A saved run is one JSON or Parquet file per pipeline configuration
(``docs/saved-run-format.md``).
:func:`load_saved_run` is the one place a saved run is read: it parses the file, validates
it (:mod:`ragaudit.data.saved_run.check`: schema, metric ranges, unique ids) and returns the
typed, frozen :class:`~ragaudit.data.saved_run.SavedRun`, whose questions are an Arrow table
(:mod:`ragaudit.data.saved_run.table`).  Messages locate the problem
exactly: ``FILE: rows[3].retrieved[0].chunk_id: expected a string, found 12 (question 'q04')``.

Interrupted runs resume from a *checkpoint*: a ``.partial.jsonl`` sidecar whose first line
records the configuration and whose other lines are finished rows, appended and fsync'ed one at
a time (see :class:`Checkpoint`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ragaudit._io import atomic_write_text, check_regular_file
from ragaudit._validate import check_path
from ragaudit.data.formats import json_lines, read_json_file
from ragaudit.data.saved_run import FORMAT, FORMAT_VERSION, SavedRun
from ragaudit.data.saved_run.check import find_problems, saved_run_schema, validate_saved_run
from ragaudit.data.saved_run.load import read_json_run
from ragaudit.data.saved_run.parquet import (
    BATCH_ROWS,
    NUMBERS_ONLY,
    read_parquet_run,
    write_parquet_run,
)
from ragaudit.exceptions import FormatError, InputError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Checkpoint",
    "SavedRun",
    "as_saved_run",
    "find_problems",
    "load_saved_run",
    "load_saved_runs",
    "numbers_only",
    "parse_saved_run",
    "per_question_metrics",
    "saved_run_schema",
    "validate_saved_run",
    "write_saved_run",
]


#: How Parquet runs are read in this context: (columns kept, rows per batch).
_READING: ContextVar[tuple[Collection[str] | None, int, bool]] = ContextVar(
    "saved_run_reading", default=(None, BATCH_ROWS, False)
)


@contextmanager
def numbers_only(batch_rows: int | None = None, *, top_k: bool = False) -> Iterator[None]:
    """Within the block, a Parquet run is read ``batch_rows`` rows at a time (None:
    :data:`~.saved_run.parquet.BATCH_ROWS`) and only the columns that the statistics read
    are held (:data:`~.saved_run.parquet.NUMBERS_ONLY`: no question, answer or reference
    text): what ``funnel`` and ``compare`` do, so that a run larger than memory is audited
    in the memory of a batch plus those columns.  A question read from such a run has no
    text (None); JSON runs are read whole.  ``top_k``: each question keeps its first
    ``config.k`` retrieved entries only, when they are in rank order (``compare``, whose
    judged@k reads no deeper).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.parquet"
    >>> _ = write_saved_run(path, SavedRun.from_dict({"name": "r", "config": {"k": 1},
    ...     "rows": [{"id": "q1", "question": "Why?", "retrieved": []}]}))
    >>> with numbers_only(batch_rows=7):
    ...     print(load_saved_run(path).questions[0].question)
    None
    >>> load_saved_run(path).questions[0].question
    'Why?'
    """
    token = _READING.set((NUMBERS_ONLY, batch_rows or BATCH_ROWS, top_k))
    try:
        yield
    finally:
        _READING.reset(token)


def parse_saved_run(data: Any, path: str | None = None) -> SavedRun:
    """Validate a parsed saved-run file (header included) and build the model.

    ``ragaudit import`` and ``ragaudit compare`` both end here, so they accept and reject
    exactly the same files with the same messages.
    """
    validate_saved_run(data, path=path)
    return SavedRun.from_checked(data, path)


def load_saved_run(path: str | Path, *, questions: Collection[str] | None = None) -> SavedRun:
    """Read and validate a saved run: the one place a saved-run file is read.

    A ``.parquet`` file is read as Parquet (:mod:`ragaudit.data.saved_run.parquet`), any other
    as JSON, streamed into the run's columns a batch of rows at a time
    (:mod:`ragaudit.data.saved_run.load`); a JSON file with any problem is read again whole,
    for a message that locates it.  Either way the run is an Arrow table in memory, and its
    questions are made only when they are read.

    Parameters
    ----------
    path : path-like
    questions : collection of str, optional
        Keep only these question ids (``ragaudit show RUN q7``), in file order.  When an id
        is not in the run, the whole run is returned.

    Returns
    -------
    SavedRun
        Frozen; ``path`` is set.

    Raises
    ------
    FormatError
        The file is not JSON (with its line) or not Parquet, or does not follow the format
        (with the location, e.g. ``rows[3].metrics.recall@k``, and the question).  A YAML,
        CSV or TSV file is named as such (a golden set or a label file given where a run
        belongs), not reported as bad JSON.
    """
    suffix = Path(check_path(path, "path")).suffix.lower()
    if suffix in _NOT_A_SAVED_RUN:
        raise FormatError(
            "expected a saved run (the JSON or Parquet file `ragaudit run` or `ragaudit "
            f"import` writes), found a {_NOT_A_SAVED_RUN[suffix]} file: is it a golden set or "
            "a label file?",
            path=str(Path(path)),
        )
    name = str(Path(path))
    check_regular_file(name)  # before any open: a FIFO with no writer would block it
    if suffix == PARQUET:
        keep, batch_rows, top_k = _READING.get()
        saved = read_parquet_run(name, keep=keep, batch_rows=batch_rows, top_k=top_k)
    else:
        saved = read_json_run(name) or parse_saved_run(read_json_file(path), name)
    return saved if questions is None else _only(saved, questions)


#: The suffix of saved runs written and read as Parquet; every other is JSON.
PARQUET = ".parquet"


def _only(saved: SavedRun, questions: Collection[str]) -> SavedRun:
    """``saved`` with only the ``questions`` (all of it when one is not in the run)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ragaudit.data.saved_run.view import QuestionsView

    wanted = pc.is_in(saved.table.column("id"), value_set=pa.array(sorted(set(questions))))
    kept = saved.table.filter(wanted)
    if kept.num_rows < len(set(questions)):
        return saved  # an id the run lacks: the caller names the known ones
    return saved.replace(questions=QuestionsView(kept))


def load_saved_runs(paths: Sequence[str | Path]) -> list[SavedRun]:
    """:func:`load_saved_run` of each of ``paths``, in order.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"format": "ragaudit.run", "format_version": 1, "name": "r", '
    ...     '"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": []}]}')
    >>> [run.name for run in load_saved_runs([path, path])]
    ['r', 'r']
    """
    return [load_saved_run(path) for path in paths]


#: Suffixes of the inputs that are never saved runs (golden sets, label files), by name.
_NOT_A_SAVED_RUN = {".yaml": "YAML", ".yml": "YAML", ".csv": "CSV", ".tsv": "TSV"}


def as_saved_run(
    saved: SavedRun | Mapping[str, Any] | str | Path,
) -> SavedRun:
    """The validated model of ``saved``: a :class:`SavedRun` as is, a file path through
    :func:`load_saved_run`, a document or dict through :meth:`SavedRun.from_dict`.

    >>> as_saved_run({"config": {"k": 2}, "rows": []}).k
    2
    """
    if isinstance(saved, SavedRun):
        return saved
    if isinstance(saved, str | Path):
        return load_saved_run(saved)
    if isinstance(saved, Mapping):
        return SavedRun.from_dict(saved, path=saved.get("path"))
    raise InputError(
        f"expected a SavedRun, a saved-run dict or a file path, found {type(saved).__name__}"
    )


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_saved_run(path: str | Path, saved: SavedRun) -> SavedRun:
    """Validate and write a saved run atomically (readers never see half a file): Parquet
    when ``path`` ends in ``.parquet``, else JSON.

    Returns the written run: ``saved`` with ``path`` set (the model is frozen).

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "k3.json"
    >>> written = write_saved_run(target, SavedRun("k3", {"k": 3}, ()))
    >>> load_saved_run(target).config.k, written.path == str(target)
    (3, True)
    """
    parquet = Path(path).suffix.lower() == PARQUET
    if not isinstance(saved.questions, tuple):
        # Made from a table by a reader (or from_checked): its rows were checked then; the
        # header is checked here, and the table written as it is.
        written = saved.replace(path=str(path))
        header = {k: v for k, v in written.to_dict(rows=False).items() if k != "rows"}
        validate_saved_run({**header, "rows": []}, path=str(path))
        if parquet:
            write_parquet_run(path, written)
        else:
            atomic_write_text(path, _dumps(written.to_dict()))
        return written
    data = saved.to_dict()
    validate_saved_run(data, path=str(path))
    written = SavedRun.from_checked(data, str(path))
    if parquet:
        write_parquet_run(path, written)
    else:
        atomic_write_text(path, _dumps(data))
    return written


def per_question_metrics(saved: SavedRun) -> dict[str, dict[str, float | None]]:
    """``{question id: {metric: value}}`` with booleans as 0/1 and null kept as None.

    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": [],
    ...     "metrics": {"hit@k": 1.0, "correct": True, "faithfulness": None}}]})
    >>> per_question_metrics(run)
    {'q1': {'hit@k': 1.0, 'correct': 1.0, 'faithfulness': None}}
    """
    return {q.id: {name: q.metric(name) for name in q.metrics} for q in saved.questions}


class Checkpoint:
    """An append-only sidecar of finished rows, so an interrupted run can resume.

    Line 1 is ``{"checkpoint": FORMAT, "config": ...}``; every other line is one finished row:
    one (question, repeat) unit, its ``repeat`` number (and ``seed``) written in the row when
    it is not 0, so the lines of a run with one generation per question are as they were.
    Each line is written with a single ``write`` on a file opened in append mode, then flushed
    and fsync'ed, so a crash leaves at worst one truncated last line, which :meth:`resume`
    ignores.  A checkpoint of another configuration is never replaced: :meth:`resume` refuses
    it, naming the keys that differ, since its rows may be hours of paid calls.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> sidecar = Checkpoint(pathlib.Path(tempfile.mkdtemp()) / "k3.partial.jsonl")
    >>> sidecar.resume({"k": 3})
    {}
    >>> sidecar.append({"id": "q1", "answer": "x"})
    >>> Checkpoint(sidecar.path).resume({"k": 3})
    {('q1', 0): {'id': 'q1', 'answer': 'x'}}
    >>> Checkpoint(sidecar.path).resume({"k": 5})   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: .../k3.partial.jsonl: a checkpoint of another \
configuration (1 finished question) is in the way: k is 3 there, 5 now; ...
    >>> Checkpoint(sidecar.path).resume({"k": 3})   # still there, untouched
    {('q1', 0): {'id': 'q1', 'answer': 'x'}}
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def resume(self, config: Mapping[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
        """Rows finished under the same ``config``, by (question id, repeat); a new sidecar
        when there is none.

        Raises
        ------
        InputError
            The file holds a checkpoint of another configuration, or is not a checkpoint:
            it is left as it is.
        """
        header = json.dumps({"checkpoint": FORMAT, "config": config}, sort_keys=True)
        done: dict[tuple[str, int], dict[str, Any]] = {}
        if self.path.exists() and not _only_a_torn_header(self.path):
            # Read with the shared JSON Lines reader's "stop" policy: only newline-terminated
            # lines are whole; whatever follows the last newline was cut short by the
            # interruption (possibly inside a UTF-8 character) and is redone, as is every line
            # from the first one that does not read back as a row.
            lines = json_lines(self.path, torn="stop")
            first = next(lines, None)
            if first is None or first[0] != 1 or not _same_header(first[1], header):
                rows = sum(1 for _ in lines)
                raise InputError(_conflict(self.path, first, config, rows))
            for _, row in lines:
                if not isinstance(row, dict) or not isinstance(row.get("id"), str):
                    break  # not a row: redo from that question on
                repeat = row.get("repeat", 0)
                if type(repeat) is not int or repeat < 0:
                    break
                done[row["id"], repeat] = row
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


_HEADER_START = b'{"checkpoint"'


def _only_a_torn_header(path: Path) -> bool:
    """True when the file holds no whole line and what it holds begins a checkpoint header:
    a header cut short, with no finished row to lose (anything else is refused, not replaced).
    """
    raw = path.read_bytes()
    return b"\n" not in raw and (raw.startswith(_HEADER_START) or _HEADER_START.startswith(raw))


def _same_header(value: Any, header: str) -> bool:
    return json.dumps(value, sort_keys=True) == header


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings as ``{"a.b": leaf}`` so differences name the innermost key."""
    if not isinstance(value, Mapping) or (prefix and not value):
        return {prefix: value}
    out: dict[str, Any] = {}
    for key, item in value.items():
        out.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


_ABSENT = object()


def _json(value: Any) -> str:
    return "absent" if value is _ABSENT else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _shown(value: Any) -> str:
    text = _json(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _conflict(path: Path, first: Any, config: Mapping[str, Any], rows: int) -> str:
    """The refusal: what is in the way, which keys differ, and the three ways out."""
    where = f"{path}: "
    head = first[1] if first is not None and first[0] == 1 else None
    way_out = (
        "to keep it, give this run another name or output directory; to resume it, rerun "
        f"with its configuration; to discard it, delete {path} yourself"
    )
    if not isinstance(head, dict) or head.get("checkpoint") != FORMAT:
        found = "another format" if isinstance(head, dict) and "checkpoint" in head else None
        return (
            f'{where}expected a ragaudit checkpoint (first line {{"checkpoint": "{FORMAT}", '
            f"...}}), found {found or 'another file'}; it is left as it is: {way_out}"
        )
    theirs, ours = _flat(head.get("config")), _flat(dict(config))
    keys = sorted(k for k in theirs.keys() | ours.keys()
                  if _json(theirs.get(k, _ABSENT)) != _json(ours.get(k, _ABSENT)))  # fmt: skip
    shown = "; ".join(
        f"{k or 'config'} is {_shown(theirs.get(k, _ABSENT))} there, "
        f"{_shown(ours.get(k, _ABSENT))} now"
        for k in keys[:4]
    )
    more = f"; and {len(keys) - 4} more keys" if len(keys) > 4 else ""
    noun = "question" if rows == 1 else "questions"
    return (
        f"{where}a checkpoint of another configuration ({rows} finished {noun}) is in the "
        f"way: {shown}{more}; {way_out}"
    )
