"""Per-question metric values read from files, so ``ragaudit compare`` works on any pipeline's
output.

Four file shapes are understood:

* a saved run (``docs/saved-run-format.md``), read and validated by the one saved-run loader
  (:func:`ragaudit.data.records.parse_saved_run`): a file ``ragaudit import`` rejects is
  rejected here with the same message;
* JSON ``{question_id: {metric: value}}``;
* JSONL, one ``{"id": question_id, metric: value, ...}`` per line (a line may instead carry
  a ``metrics`` dict, as saved-run rows do), read by the shared JSON Lines reader
  (:func:`ragaudit.data.formats.json_lines`);
* the output of ``ragaudit evaluate --per-query --format json`` (its ``per_query`` mapping;
  without ``--per-query`` the file holds only means, which is an error that says so).

Values are numbers, booleans (read as 1.0 / 0.0) or ``null`` (*not applicable*, excluded
pairwise); declared metrics must lie in their range
(:mod:`ragaudit.data.saved_run.metrics`).  Anything else, including NaN and infinities, is a
:class:`FormatError` naming the file, line (JSONL), question and metric.  Old metric names
are read under their current spelling (``citation_acc`` as ``citation_accuracy``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit._io import atomic_write_bytes, check_regular_file, read_file_bytes
from ragaudit.data.formats import json_lines, read_json_file
from ragaudit.data.per_question import PerQuestionMetrics, as_per_question_metrics
from ragaudit.data.records import PARQUET, load_saved_run, load_saved_runs, parse_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run.metrics import canonical_metric_name, check_metric_value
from ragaudit.exceptions import FormatError, InputError

__all__ = [
    "BaselineUpdate",
    "load_per_question_metrics",
    "read_per_question_metrics",
    "read_run_directory",
    "resolve_saved_run",
    "resolve_saved_runs",
    "run_directory_files",
    "saved_run_or_none",
    "update_baseline",
]


def _clean_value(
    value: Any, *, path: str | None, line: int | None, qid: str, metric: str
) -> float | None:
    if value is not None and not isinstance(value, bool | int | float):
        raise FormatError(
            f"question {qid!r}: expected a number, boolean or null, found {value!r}",
            path=path,
            line=line,
            field=metric,
        )
    reason = check_metric_value(metric, value)
    if reason is not None:
        raise FormatError(f"question {qid!r}: {reason}", path=path, line=line, field=metric)
    return None if value is None else float(value)


def _clean_row(
    metrics: Any, *, path: str | None, line: int | None, qid: str
) -> dict[str, float | None]:
    if not isinstance(metrics, Mapping):
        raise FormatError(
            f"question {qid!r}: expected a mapping of metric -> value, found "
            f"{type(metrics).__name__}",
            path=path,
            line=line,
            field="metrics",
        )
    return {
        canonical_metric_name(str(metric)): _clean_value(
            value, path=path, line=line, qid=qid, metric=str(metric)
        )
        for metric, value in metrics.items()
    }


def _add(
    values: dict[str, dict[str, float | None]],
    qid: Any,
    row: dict[str, float | None],
    *,
    path: str | None,
    line: int | None,
) -> None:
    if not isinstance(qid, str | int) or isinstance(qid, bool):
        raise FormatError(
            f"expected a question id string, found {qid!r}", path=path, line=line, field="id"
        )
    key = str(qid)
    if key in values:
        raise FormatError(
            f"question {key!r} appears more than once", path=path, line=line, field="id"
        )
    values[key] = row


def _from_jsonl(path: str) -> dict[str, dict[str, float | None]]:
    values: dict[str, dict[str, float | None]] = {}
    for line_no, record in json_lines(path):
        if not isinstance(record, dict) or "id" not in record:
            raise FormatError(
                "expected an object with an 'id' key", path=path, line=line_no, field="id"
            )
        qid = record["id"]
        if isinstance(record.get("metrics"), Mapping):
            metrics = record["metrics"]
        else:
            metrics = {k: v for k, v in record.items() if k != "id"}
        row = _clean_row(metrics, path=path, line=line_no, qid=str(qid))
        _add(values, qid, row, path=path, line=line_no)
    return values


#: How every saved run ragaudit writes begins (``format`` is its first key).
_SAVED_RUN_START = re.compile(rb'^(?:\xef\xbb\xbf)?\s*\{\s*"format"\s*:\s*"ragaudit\.run"')


def resolve_saved_run(run: Any) -> Any:
    """``run`` loaded as a :class:`SavedRun` when it is the path of a file that begins as
    ragaudit writes saved runs, else ``run`` unchanged.

    The file is read once by the streamed saved-run loader
    (:func:`~ragaudit.data.records.load_saved_run`: about the file's size in memory), so a
    comparison passes the loaded run to each of its steps instead of parsing the whole JSON
    again in each.  Other files (a flat mapping, JSONL, a saved run written with another key
    first) are left to the readers that take paths.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"format": "ragaudit.run", "format_version": 1, "name": "r", '
    ...     '"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": []}]}')
    >>> type(resolve_saved_run(path)).__name__, resolve_saved_run("run.jsonl")
    ('SavedRun', 'run.jsonl')
    """
    return load_saved_run(os.fspath(run)) if _saved_run_path(run) else run


def resolve_saved_runs(*runs: Any) -> list[Any]:
    """:func:`resolve_saved_run` of each of ``runs``, the saved-run files read by
    :func:`~ragaudit.data.records.load_saved_runs`.

    >>> resolve_saved_runs("a.jsonl", "b.jsonl")
    ['a.jsonl', 'b.jsonl']
    """
    found = [i for i, run in enumerate(runs) if _saved_run_path(run)]
    loaded = dict(zip(found, load_saved_runs([os.fspath(runs[i]) for i in found]), strict=True))
    return [loaded.get(i, run) for i, run in enumerate(runs)]


def _saved_run_path(run: Any) -> bool:
    """``run`` is the path of a file that begins as ragaudit writes saved runs."""
    if not isinstance(run, str | os.PathLike) or Path(run).suffix.lower() == ".jsonl":
        return False
    if Path(run).suffix.lower() == PARQUET:
        return True  # only saved runs are read as Parquet
    check_regular_file(run)  # a FIFO would block the sniff below
    try:
        with open(run, "rb") as handle:
            start = handle.read(4096)
    except OSError:
        return False  # the reader that follows names the error
    return _SAVED_RUN_START.match(start) is not None


def _is_saved_run(doc: Any) -> bool:
    """A JSON document that claims to be a saved run (anything else is a flat mapping)."""
    return isinstance(doc, dict) and ("format" in doc or isinstance(doc.get("rows"), list))


def saved_run_or_none(run: Any) -> SavedRun | None:
    """``run`` as a :class:`SavedRun` when it is one or a file holding one, else None.

    What a comparison needs to read the two runs' configurations; anything that is not a saved
    run (per-question values, an Evaluation, a JSONL file, an unreadable file) has none.

    >>> saved_run_or_none(SavedRun.from_dict({"config": {"k": 1}, "rows": []})).config.k
    1
    >>> saved_run_or_none(PerQuestionMetrics("r", {"q1": {"c": 1.0}})) is None
    True
    """
    if isinstance(run, SavedRun):
        return run
    if not isinstance(run, str | os.PathLike) or Path(run).suffix.lower() == ".jsonl":
        return None
    try:
        resolved = resolve_saved_run(run)
        if isinstance(resolved, SavedRun):
            return resolved
        doc = read_json_file(Path(run))
    except FormatError:
        return None
    return parse_saved_run(doc, str(run)) if _is_saved_run(doc) else None


def _is_evaluate_output(doc: Any) -> bool:
    """``evaluate --format json`` output: means under ``metrics`` plus ``n_queries``."""
    return isinstance(doc, dict) and "n_queries" in doc and isinstance(doc.get("metrics"), dict)


def _from_evaluate_output(doc: dict[str, Any], path: str | None) -> Any:
    per_query = doc.get("per_query")
    if per_query is None:
        raise FormatError(
            "expected per-question values, found only the means of `ragaudit evaluate`; "
            "rerun it with --per-query --format json",
            path=path,
            field="per_query",
        )
    if not isinstance(per_query, dict):
        raise FormatError(
            f"expected a mapping {{question_id: {{metric: value}}}}, found "
            f"{type(per_query).__name__}",
            path=path,
            field="per_query",
        )
    return per_query


def _looks_like_trec_run(path: Path) -> bool:
    """The first line has the six fields of a TREC run line (``qid Q0 doc rank score tag``)."""
    try:
        with path.open(encoding="utf-8") as handle:
            fields = handle.readline().split()
    except (OSError, UnicodeDecodeError):
        return False
    return len(fields) == 6


def _from_flat_json(doc: Any, path: str | None) -> dict[str, dict[str, float | None]]:
    if _is_evaluate_output(doc):
        doc = _from_evaluate_output(doc, path)
    if not isinstance(doc, dict):
        raise FormatError(
            "expected a saved run, a {question_id: {metric: value}} object or JSONL lines, "
            f"found a JSON {type(doc).__name__}",
            path=path,
        )
    return {
        str(qid): _clean_row(metrics, path=path, line=None, qid=str(qid))
        for qid, metrics in doc.items()
    }


def read_per_question_metrics(source: str | os.PathLike[str]) -> PerQuestionMetrics:
    """Read per-question metric values from a saved run, a JSON mapping or JSONL lines.

    Parameters
    ----------
    source : path-like
        The file.  ``.jsonl`` files are read line by line; anything else is parsed as one JSON
        document: a saved run when it has a ``format`` key or a ``rows`` list (validated by
        the saved-run loader), the ``per_query`` values of ``evaluate --per-query --format
        json`` output (``n_queries`` and ``metrics`` keys), otherwise
        ``{question_id: {metric: value}}``.

    Returns
    -------
    PerQuestionMetrics

    Raises
    ------
    FormatError
        Unreadable file, malformed JSON, an invalid saved run, duplicate ids, or a value that
        is not a finite number, boolean or null in its metric's range (the message names the
        question and metric).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "run.jsonl").write_text('{"id": "q1", "hit": true, "cite": null}\\n')
    >>> read_per_question_metrics(folder / "run.jsonl").values
    {'q1': {'hit': 1.0, 'cite': None}}
    """
    path = Path(source)
    where = str(path)
    if path.suffix.lower() == ".jsonl":
        values = _from_jsonl(where)
    else:
        resolved = resolve_saved_run(path)  # streamed: about the file's size in memory
        if isinstance(resolved, SavedRun):
            return PerQuestionMetrics.from_saved_run(resolved)
        try:
            doc = read_json_file(path)
        except FormatError as exc:
            if exc.line == 1 and _looks_like_trec_run(path):
                raise FormatError(
                    "expected per-question metric values, found a TREC run; score it "
                    "against labels first (compare --qrels LABELS)",
                    path=where,
                    line=1,
                ) from None
            raise
        if _is_saved_run(doc):
            return PerQuestionMetrics.from_saved_run(parse_saved_run(doc, where))
        values = _from_flat_json(doc, where)
    if not values:
        raise FormatError("no questions found", path=where)
    return PerQuestionMetrics(name=path.stem, values=values, path=where)


def load_per_question_metrics(
    run: PerQuestionMetrics | SavedRun | str | os.PathLike[str] | Any,
    name: str = "run",
) -> PerQuestionMetrics:
    """Per-question metrics of a :class:`SavedRun`, a file, an
    :class:`~ragaudit.metrics.Evaluation` (called ``name``), or ``run`` itself.

    The one place ``compare_runs``, ``assert_not_worse`` and the CLI turn what a user passes
    into paired values; anything else is an :class:`InputError` naming ``name``.

    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": [],
    ...     "metrics": {"correct": True}}]})
    >>> load_per_question_metrics(run).values
    {'q1': {'correct': 1.0}}
    >>> load_per_question_metrics(None, "run_a")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: run_a: expected a saved run, a file path, PerQuestionMetrics or an Evaluation, found NoneType
    """  # noqa: E501
    if isinstance(run, str | os.PathLike):
        return read_per_question_metrics(run)
    if isinstance(run, PerQuestionMetrics | SavedRun):
        return as_per_question_metrics(run)
    # an Evaluation (ragaudit.metrics sits above data, so it is recognised by its method)
    convert = getattr(run, "to_per_question", None)
    if callable(convert):
        converted = convert(name)
        if isinstance(converted, PerQuestionMetrics):
            return converted
    raise InputError(
        f"{name}: expected a saved run, a file path, PerQuestionMetrics or an Evaluation, "
        f"found {type(run).__name__}"
    )


def read_run_directory(directory: str | os.PathLike[str]) -> list[PerQuestionMetrics]:
    """Every ``*.json`` / ``*.jsonl`` run of a directory, in file-name order
    (``ragaudit compare --all``).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("b", "a"):
    ...     _ = (folder / f"{name}.jsonl").write_text('{"id": "q1", "hit": 1}\\n')
    >>> [run.name for run in read_run_directory(folder)]
    ['a', 'b']
    """
    return [read_per_question_metrics(p) for p in run_directory_files(directory)]


def run_directory_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The ``*.json`` / ``*.jsonl`` / ``*.parquet`` files of a directory of runs, in file-name
    order; at least two, else an :class:`InputError` (what :func:`read_run_directory` reads)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InputError(f"{folder}: expected a directory of saved runs, found no directory")
    files = sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix.lower() in (".json", ".jsonl", PARQUET)
    )
    if len(files) < 2:
        raise InputError(
            f"{folder}: expected at least 2 saved runs (*.json or *.jsonl), found {len(files)}"
        )
    return files


@dataclass(frozen=True)
class BaselineUpdate:
    """What :func:`update_baseline` did: the new baseline's metrics, the previous one's (None
    when there was none or it no longer read), and whether the file was already identical."""

    new: PerQuestionMetrics
    old: PerQuestionMetrics | None
    unchanged: bool


def update_baseline(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    loaded: tuple[SavedRun | None, SavedRun | None] = (None, None),
) -> BaselineUpdate:
    """Make ``source`` the baseline: validate it, then copy it byte for byte, atomically, to
    ``target`` (``ragaudit baseline update``).

    ``source`` is anything :func:`read_per_question_metrics` reads; a file it refuses raises
    before ``target`` is touched, so a bad file never becomes the baseline.  A previous
    baseline that no longer reads is simply replaced.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "run.json").write_text(json.dumps({"q1": {"hit": 1.0}}))
    >>> first = update_baseline(folder / "run.json", folder / "baseline.json")
    >>> first.old is None, first.unchanged
    (True, False)
    >>> update_baseline(folder / "run.json", folder / "baseline.json").unchanged
    True
    """
    # validates: a bad file never becomes the baseline.  ``loaded``: the source and the previous
    # baseline already loaded as saved runs, so each file is read once more only for its bytes
    first, previous = loaded
    new = read_per_question_metrics(source) if first is None else as_per_question_metrics(first)
    data = read_file_bytes(source)
    old = None
    unchanged = False
    destination = Path(target)
    if destination.exists():
        try:
            unchanged = destination.read_bytes() == data
            old = (
                read_per_question_metrics(destination)
                if previous is None
                else as_per_question_metrics(previous)
            )
        except (InputError, OSError):
            old = None  # a broken previous baseline is simply replaced
    if not unchanged:
        atomic_write_bytes(destination, data)
    return BaselineUpdate(new, old, unchanged)
