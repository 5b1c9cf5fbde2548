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
import json
import mmap
import os
import re
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


_WS = re.compile(r"[ \t\n\r]*")
_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_HEAD = 1 << 20  # bytes searched for the start of ``rows``


def _rows_start(view: mmap.mmap) -> int:
    """Where the top-level ``rows`` array starts, found by parsing the keys before it (in
    the first megabyte: ``format``, ``name``, ``config`` ...).  The bytes are read as
    Latin-1, one character per byte, so that positions are byte offsets; every JSON token
    is ASCII, so the structure parses as in UTF-8 (the values are read properly later)."""
    head = view[: min(len(view), _HEAD)].decode("latin-1")
    pos = _WS.match(head, 0).end()  # type: ignore[union-attr]
    if not head.startswith("{", pos):
        raise Doubt
    while True:
        pos = _WS.match(head, pos + 1).end()  # type: ignore[union-attr]
        if not head.startswith('"', pos):
            raise Doubt
        try:
            key, pos = _scan(head, pos)
            pos = _WS.match(head, pos).end()  # type: ignore[union-attr]
            if not head.startswith(":", pos):
                raise Doubt
            pos = _WS.match(head, pos + 1).end()  # type: ignore[union-attr]
            if key == "rows":
                if not head.startswith("[", pos):
                    raise Doubt
                return pos
            _, pos = _scan(head, pos)
        except (StopIteration, ValueError, RecursionError):
            raise Doubt from None  # a value running past the first megabyte, or bad JSON
        pos = _WS.match(head, pos).end()  # type: ignore[union-attr]
        if not head.startswith(",", pos):
            raise Doubt


class _Rows:
    """The rows array of the mapped file, cut into slices of whole rows (:meth:`slices`).

    In a file written with indentation (as ragaudit writes it), the array starts after the
    keys before it (:func:`_rows_start`); each row starts on a line ``<indent>{`` and all
    but the last end ``\n<indent>},`` (no newline can be inside a string, and the objects
    inside a row are indented deeper).  The slices are cut there, and the array ends at the
    first ``\n<indent>}`` followed by a newline, white space and ``]``.  Only the bytes
    read for a slice are searched, so the file is never read twice.  A wrong guess cannot
    pass: the slices must decode as whole rows, and the rest of the file as the top level
    (:func:`_header`).  Otherwise (no indentation) msgspec parses the whole document and
    leaves ``rows`` raw: a view into the mapping, whose address is its offset, and the rows
    are decoded in one slice.
    """

    def __init__(self, msgspec: Any, view: mmap.mmap) -> None:
        self.view = view
        self.cut = self.closing = b""
        self.end = -1
        try:
            self.start = _rows_start(view)
        except Doubt:
            self.start, self.end = _raw_range(msgspec, view)
            return
        probe = view[self.start + 1 : self.start + 4097]
        inside = probe.lstrip(b" \t\n\r")
        if inside.startswith(b"]"):  # no rows
            self.end = self.start + 2 + len(probe) - len(inside)
            return
        brace = probe.find(b"{")
        line = probe.rfind(b"\n", 0, brace) if brace != -1 else -1
        indent = probe[line + 1 : brace] if line != -1 else b""
        if not indent or indent.strip(b" \t"):
            self.start, self.end = _raw_range(msgspec, view)
            return
        self.cut, self.closing = b"\n" + indent + b"},", b"\n" + indent + b"}\n"

    def slices(self) -> Iterator[tuple[int, int]]:
        """``(first, stop)``: byte ranges of whole rows, about :data:`SLICE` bytes each;
        ``view[first - 1]`` and ``view[stop]`` are the bracket or the commas around them.
        :attr:`end` is set when the last slice is reached."""
        view, pos = self.view, self.start + 1
        if not self.cut:
            yield pos, self.end - 1
            return
        while True:
            cut = view.find(self.cut, pos + SLICE)
            last = view.find(self.closing, pos, len(view) if cut == -1 else cut)
            if last != -1:
                bracket = last + len(self.closing)
                bracket += len(view[bracket : bracket + 4096]) - len(
                    view[bracket : bracket + 4096].lstrip(b" \t\n\r")
                )
                if view[bracket : bracket + 1] != b"]":
                    raise Doubt
                self.end = bracket + 1
                yield pos, bracket
                return
            if cut == -1:
                raise Doubt
            comma = cut + len(self.cut) - 1
            yield pos, comma
            pos = comma + 1


def _raw_range(msgspec: Any, view: mmap.mmap) -> tuple[int, int]:
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


def _release(view: mmap.mmap, upto: int) -> None:
    """Give back the pages of the file before ``upto`` (decoded already), so that they do
    not count in the process's memory until the end of the read."""
    upto -= upto % mmap.PAGESIZE
    if upto > 0 and hasattr(view, "madvise"):
        view.madvise(mmap.MADV_DONTNEED, 0, upto)


def _read(msgspec: Any, view: mmap.mmap, path: str, questions: frozenset[str] | None) -> SavedRun:
    from ragaudit.data.saved_run.fast_types import Row

    array = _Rows(msgspec, view)
    rows_of = StructRows(msgspec.UNSET)
    decoder = msgspec.json.Decoder(list[Row])
    built: list[QuestionResult] = []
    for first, stop in array.slices():
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
    top = _header(view, array.start, array.end, path)
    if rows_of.most_contexts > top["config"]["k"]:
        raise Doubt  # more context chunks than config.k: the walk words it
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
