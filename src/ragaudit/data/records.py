"""Reading and writing saved runs: one loader, one atomic writer, and resumable checkpoints.

A saved run is one JSON file per pipeline configuration (``docs/saved-run-format.md``).
:func:`load_saved_run` is the one place a saved run is read: it parses the file, validates
it (:mod:`ragaudit.data.saved_run.check`: schema, metric ranges, unique ids) and returns the
typed, frozen :class:`~ragaudit.data.saved_run.SavedRun`, streaming the rows a batch at a time
(:mod:`ragaudit.data.saved_run.load`).  Messages locate the problem
exactly: ``FILE: rows[3].retrieved[0].chunk_id: expected a string, found 12 (question 'q04')``.

Interrupted runs resume from a *checkpoint*: a ``.partial.jsonl`` sidecar whose first line
records the configuration and whose other lines are finished rows, appended and fsync'ed one at
a time (see :class:`Checkpoint`).
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragaudit._io import atomic_write_text, check_regular_file
from ragaudit._validate import check_path
from ragaudit.data.formats import json_lines, read_json_file
from ragaudit.data.saved_run import FORMAT, FORMAT_VERSION, SavedRun
from ragaudit.data.saved_run.check import find_problems, saved_run_schema, validate_saved_run
from ragaudit.data.saved_run.fast import fast_saved_run
from ragaudit.data.saved_run.load import stream_saved_run
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
    "parse_saved_run",
    "per_question_metrics",
    "saved_run_schema",
    "validate_saved_run",
    "write_saved_run",
]


def parse_saved_run(data: Any, path: str | None = None) -> SavedRun:
    """Validate a parsed saved-run file (header included) and build the model.

    ``ragaudit import`` and ``ragaudit compare`` both end here, so they accept and reject
    exactly the same files with the same messages.
    """
    validate_saved_run(data, path=path)
    return SavedRun.from_checked(data, path)


def load_saved_run(path: str | Path, *, questions: Collection[str] | None = None) -> SavedRun:
    """Read and validate a saved run: the one place a saved-run file is read.

    With msgspec installed (the ``fast`` extra) the rows are decoded and typed in C
    (:func:`~ragaudit.data.saved_run.fast.fast_saved_run`, about half the CPU time);
    otherwise, or at any doubt, the file is streamed, checked and built a batch of rows at a
    time (:func:`~ragaudit.data.saved_run.load.stream_saved_run`).  Either way it takes about
    as much memory as the file, and a file with any problem is read again whole, for a message
    that locates it.  A file of ``LARGE_RUN_BYTES`` or more (about 10,000 questions) is set
    aside from the cyclic garbage collector once loaded (:func:`gc.freeze`, after a
    :func:`gc.collect`): the model holds no cycles, and the collector would otherwise walk its
    millions of objects again at every full collection.

    Parameters
    ----------
    path : path-like
    questions : collection of str, optional
        Build only these question ids (``ragaudit show RUN q7``): the other rows are parsed
        but neither checked in full nor built (what is still checked: see
        :mod:`ragaudit.data.saved_run.load`).  When an id is not in the run, the whole run
        is returned.

    Returns
    -------
    SavedRun
        Frozen; ``path`` is set.

    Raises
    ------
    FormatError
        The file is not JSON (with its line) or does not follow the format (with the
        location, e.g. ``rows[3].metrics.recall@k``, and the question).  A YAML, CSV or TSV
        file is named as such (a golden set or a label file given where a run belongs), not
        reported as bad JSON.
    """
    suffix = Path(check_path(path, "path")).suffix.lower()
    if suffix in _NOT_A_SAVED_RUN:
        raise FormatError(
            "expected a saved run (the JSON file `ragaudit run` or `ragaudit import` writes), "
            f"found a {_NOT_A_SAVED_RUN[suffix]} file: is it a golden set or a label file?",
            path=str(Path(path)),
        )
    name = str(Path(path))
    check_regular_file(name)  # before any open: a FIFO with no writer would block it
    with _set_aside(os.stat(name).st_size >= LARGE_RUN_BYTES):
        saved = fast_saved_run(name, questions)  # None without msgspec, or at any doubt
        if saved is None:
            saved = stream_saved_run(name, questions)
    if questions is not None and (saved is None or len(saved.questions) < len(set(questions))):
        return load_saved_run(path)  # an id the run lacks: the caller names the known ones
    return saved if saved is not None else parse_saved_run(read_json_file(path), name)


#: Saved-run files from this size on (about 10,000 questions) are frozen once loaded.
LARGE_RUN_BYTES = 32 << 20


def load_saved_runs(paths: Sequence[str | Path]) -> list[SavedRun]:
    """:func:`load_saved_run` of each of ``paths``, in order; the large ones after the first
    read by helper processes meanwhile (:mod:`ragaudit.data.saved_run.helper`), at most one
    per other processor.

    ``ragaudit compare A B`` decodes and checks B on a second core while it reads A, and then
    only builds B from the checked batches (two 100,000-question runs: 7.9 s against 10.6 s
    read one after the other, 2 cores).  Each run is the model
    :func:`load_saved_run` makes (same checks, same messages: a file a helper doubts is read
    here again), and each is frozen as :func:`load_saved_run` freezes a large run.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"format": "ragaudit.run", "format_version": 1, "name": "r", '
    ...     '"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": []}]}')
    >>> [run.name for run in load_saved_runs([path, path])]
    ['r', 'r']
    """
    from ragaudit.data.saved_run.helper import Helper, cores, start_helper

    names = [str(Path(check_path(path, "path"))) for path in paths]
    helpers: dict[int, Helper | None] = {}
    try:
        for i, name in enumerate(names[1:], start=1):
            if len(helpers) < cores() - 1 and _large_saved_run(name):
                helpers[i] = start_helper(name)
        runs = []
        for i in range(len(names)):
            helper = helpers.pop(i, None)
            saved = None
            if helper is not None:
                with _set_aside(True):
                    saved = helper.result()
            runs.append(saved if saved is not None else load_saved_run(paths[i]))
        return runs
    finally:
        for helper in helpers.values():
            if helper is not None:
                helper.close()


@contextmanager
def _set_aside(large: bool) -> Iterator[None]:
    """Around the loading of a run: for a large one, the garbage collected before and the
    heap frozen after (:func:`gc.freeze`).  The run is millions of objects without a cycle
    among them; left in the cyclic collector's generations, every later collection walks them
    all again (about 1.5 s of `compare` at 100,000 questions).  Frozen, they are still freed
    by reference counting when dropped; gc.unfreeze() undoes it."""
    if large:
        gc.collect()  # what is garbage now is not frozen with the run
    yield
    if large:
        gc.freeze()


def _large_saved_run(name: str) -> bool:
    """A regular file of :data:`LARGE_RUN_BYTES` or more with a saved run's suffix."""
    try:
        check_regular_file(name)
        return (
            Path(name).suffix.lower() not in _NOT_A_SAVED_RUN
            and os.stat(name).st_size >= LARGE_RUN_BYTES
        )
    except (OSError, InputError):
        return False


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
    """Validate and write a saved run atomically (readers never see half a file).

    Returns the written run: ``saved`` with ``path`` set (the model is frozen).

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "k3.json"
    >>> written = write_saved_run(target, SavedRun("k3", {"k": 3}, ()))
    >>> load_saved_run(target).config.k, written.path == str(target)
    (3, True)
    """
    data = saved.to_dict()
    validate_saved_run(data, path=str(path))
    atomic_write_text(path, _dumps(data))
    return SavedRun.from_checked(data, str(path))


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

    Line 1 is ``{"checkpoint": FORMAT, "config": ...}``; every other line is one finished row.
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
    {'q1': {'id': 'q1', 'answer': 'x'}}
    >>> Checkpoint(sidecar.path).resume({"k": 5})   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: .../k3.partial.jsonl: a checkpoint of another \
configuration (1 finished question) is in the way: k is 3 there, 5 now; ...
    >>> Checkpoint(sidecar.path).resume({"k": 3})   # still there, untouched
    {'q1': {'id': 'q1', 'answer': 'x'}}
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def resume(self, config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Rows finished under the same ``config``; a new sidecar when there is none.

        Raises
        ------
        InputError
            The file holds a checkpoint of another configuration, or is not a checkpoint:
            it is left as it is.
        """
        header = json.dumps({"checkpoint": FORMAT, "config": config}, sort_keys=True)
        done: dict[str, dict[str, Any]] = {}
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
