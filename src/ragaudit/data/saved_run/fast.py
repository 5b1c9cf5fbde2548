"""Reading a saved-run file with msgspec (the ``fast`` extra): rows decoded and typed in C.

:func:`fast_saved_run` is tried first by :func:`ragaudit.data.records.load_saved_run` when
``msgspec`` is installed (``pip install 'ragaudit[fast]'``); it loads a 100,000-question run
(337 MB) about four times faster than the standard-library path (:mod:`.load`), in about as
much memory as the file.  Without msgspec, or with the environment variable
``RAGAUDIT_READER=stdlib``, it returns None and the standard-library path reads the file.

How it reads, and why each step is exact:

* the file is memory-mapped and msgspec parses the whole top level once with the rows left
  raw (``dict[str, msgspec.Raw]``): the JSON grammar of the whole file, in C, and the byte
  range of ``rows``;
* the top level without its rows (``rows`` replaced by ``[]``: a few kilobytes) is read by
  the standard library's reader (:func:`~ragaudit.data.formats.load_json`: a key written
  twice, lone surrogates) and checked by :func:`~.check.find_problems`;
* the rows are cut into slices of about 4 MB where the pretty-printer ends a row
  (``},`` at the rows' indentation) and each slice is decoded as a JSON array of
  :class:`~.fast_types.Row` Structs: the grammar, the types, the required keys and the
  integer bounds of the schema, in C.  A cut in the wrong place cannot pass: each slice must
  decode as whole rows, and slices of whole rows joined by commas are the rows array;
* what types cannot say is checked a batch at a time, by column: the judges' verdicts
  (:func:`~.batch_check._column_check` of the schema), each metric's range, unique ids,
  at most ``config.k`` contexts; and a key written twice (msgspec keeps the last silently):
  the keys the Structs hold are counted against the ``":`` of the slice's text, so equal
  counts prove every key was written once;
* msgspec itself refuses a lone surrogate (``"\\ud800"``), NaN, a number out of a double's
  range, bytes that are not UTF-8, and nesting too deep.

At the first doubt it returns None, and the standard-library path reads the file and words
the problem (``FILE:LINE: field ...``); so do files with keys the Structs do not name (the
model keeps them in ``extra``).  A file loads into the same model either way
(``tests/saved_run/test_fast.py`` holds the two paths to each other).  Pages of the file
already decoded are given back to the system as the reading goes on.
"""

from __future__ import annotations

import gc
import mmap
import os
from collections.abc import Collection, Iterator
from types import ModuleType
from typing import Any

from ragaudit.data.formats import load_json
from ragaudit.data.saved_run.check import find_problems
from ragaudit.data.saved_run.fast_rows import Doubt, StructRows
from ragaudit.data.saved_run.model import QuestionResult, SavedRun
from ragaudit.exceptions import FormatError

__all__ = ["ENABLED", "READER_ENV", "fast_saved_run", "reader_name"]

#: Environment variable: ``stdlib`` turns the msgspec reader off (both paths stay testable).
READER_ENV = "RAGAUDIT_READER"
#: Module switch with the same effect (tests flip it).
ENABLED = True
#: Bytes of row text decoded at a time (about 1,200 rows of a typical run).
SLICE = 1 << 22


def _msgspec() -> ModuleType | None:
    if not ENABLED or os.environ.get(READER_ENV, "").lower() == "stdlib":
        return None
    try:
        import msgspec
    except ImportError:
        return None
    return msgspec


def reader_name() -> str:
    """Which reader :func:`ragaudit.data.records.load_saved_run` tries first.

    >>> reader_name().split()[0] in {"msgspec", "stdlib"}
    True
    """
    msgspec = _msgspec()
    return "stdlib json" if msgspec is None else f"msgspec {msgspec.__version__}"


def _rows_range(msgspec: Any, view: mmap.mmap) -> tuple[int, int]:
    """Where the ``rows`` array lies in the mapped file.  msgspec parses the whole document
    (its grammar, in C) and leaves ``rows`` raw: a view into the mapping, whose address
    gives its offset (no copy of the rows is made)."""
    import numpy as np

    raw = msgspec.json.decode(view, type=dict[str, msgspec.Raw]).get("rows")
    if raw is None:
        raise Doubt
    base = np.frombuffer(view, np.uint8).ctypes.data
    start = int(np.frombuffer(raw, np.uint8).ctypes.data - base)
    end = start + len(raw)
    if not 0 <= start < end <= len(view) or view[start] != ord("[") or view[end - 1] != ord("]"):
        raise Doubt
    return start, end


def _header(view: mmap.mmap, start: int, end: int, path: str) -> dict[str, Any]:
    """The top level with ``rows`` replaced by ``[]``, read and checked the standard way."""
    try:
        top = load_json((view[:start] + b"[]" + view[end:]).decode("utf-8"), path)
    except (FormatError, UnicodeDecodeError):
        raise Doubt from None
    if type(top) is not dict or top.get("rows") != [] or find_problems(top):
        raise Doubt
    return top


def _slices(view: mmap.mmap, start: int, end: int) -> Iterator[tuple[int, int]]:
    """``(first, stop)``: byte ranges of whole rows inside the rows array ``view[start:end]``,
    about :data:`SLICE` bytes each, cut where a row ends (``},`` at the rows' indentation);
    ``view[first - 1]`` and ``view[stop]`` are the bracket or the commas around them."""
    first = view.find(b"{", start, end)
    line = view.rfind(b"\n", start, first) if first != -1 else -1
    indent = view[line + 1 : first] if line != -1 else b"?"
    # Only an indented row can be told from the objects inside it; a file written without
    # indentation is decoded in one slice.
    pos = start + 1
    if not indent or indent.strip(b" \t") != b"":
        yield pos, end - 1
        return
    cut_at = b"\n" + indent + b"},"
    while True:
        cut = view.find(cut_at, pos + SLICE, end)
        if cut == -1:
            yield pos, end - 1
            return
        comma = cut + len(cut_at) - 1
        yield pos, comma
        pos = comma + 1


def _release(view: mmap.mmap, upto: int) -> None:
    """Give back the pages of the file before ``upto`` (decoded already), so that they do
    not count in the process's memory until the end of the read."""
    upto -= upto % mmap.PAGESIZE
    if upto > 0 and hasattr(view, "madvise"):
        view.madvise(mmap.MADV_DONTNEED, 0, upto)


def _read(
    msgspec: Any, view: mmap.mmap, path: str, questions: frozenset[str] | None
) -> SavedRun:
    from ragaudit.data.saved_run.fast_types import Row

    start, end = _rows_range(msgspec, view)
    top = _header(view, start, end, path)
    rows_of = StructRows(msgspec.UNSET, top["config"]["k"])
    decoder = msgspec.json.Decoder(list[Row])
    built: list[QuestionResult] = []
    for first, stop in _slices(view, start, end):
        # The mapping is private (copy on write): brackets written around the slice make it
        # one JSON array, copied once; the file itself is never written.
        view[first - 1], view[stop] = ord("["), ord("]")
        text = view[first - 1 : stop + 1]
        rows = decoder.decode(text)
        columns = rows_of.check(rows, text)
        if questions is not None:
            rows = [row for row in rows if row.id in questions]
            columns = rows_of._fields(rows)[0]
        built.extend(rows_of.build_rows(rows, columns))
        del text, rows, columns
        _release(view, stop)
    known = {"format", "format_version", "name", "config", "rows", "summary"}
    return SavedRun(
        name=top.get("name", ""),
        config=top["config"],
        questions=tuple(built),
        summary=top.get("summary") or {},
        path=path,
        extra={key: value for key, value in top.items() if key not in known},
    )


def fast_saved_run(
    path: str | os.PathLike[str], questions: Collection[str] | None = None
) -> SavedRun | None:
    """The saved run in ``path`` read with msgspec, or None: msgspec is not installed, it is
    turned off (:data:`READER_ENV`), or the file raises any doubt (the standard-library path
    then reads it and words the problem).  ``questions``: build only these ids.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"format": "ragaudit.run", "format_version": 1, "name": "r", '
    ...     '"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": []}]}')
    >>> run = fast_saved_run(path)
    >>> run is None or [q.id for q in run.questions] == ["q1"]
    True
    """
    msgspec = _msgspec()
    if msgspec is None:
        return None
    wanted = None if questions is None else frozenset(questions)
    collecting = gc.isenabled()
    gc.disable()  # millions of acyclic objects: the collector would walk them again and again
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                return None
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY) as view:
                return _read(msgspec, view, str(path), wanted)
    except (Doubt, msgspec.DecodeError, msgspec.ValidationError, OSError, ValueError):
        return None
    except (RecursionError, TypeError, KeyError, IndexError, BufferError):  # pragma: no cover
        return None  # a shape no check foresaw: the standard-library path decides
    finally:
        if collecting:
            gc.enable()
