"""Reading a saved-run file with msgspec (the ``fast`` extra): rows decoded and typed in C.

:func:`fast_saved_run` is tried first by :func:`ragaudit.data.records.load_saved_run` when
``msgspec`` is installed (``pip install 'ragaudit[fast]'``); it loads a 100,000-question run
(337 MB) in about half the CPU time of the standard-library path (:mod:`.load`), in less
memory than the file.  Without msgspec, or with the environment variable
``RAGAUDIT_READER=stdlib``, it returns None and the standard-library path reads the file.

How it reads, and why each step is exact:

* the keys before ``rows`` are parsed to find where the rows start (:func:`_rows_start`);
* the file is read on in blocks and cut into slices of about 4 MB where the pretty-printer
  ends a row (``},`` at the rows' indentation, :class:`_Rows`); each slice is decoded as a
  JSON array of :class:`~.fast_types.Row` Structs: the grammar, the types, the required
  keys and the integer bounds of the schema, in C.  A cut in the wrong place cannot pass:
  each slice must decode as whole rows, and slices of whole rows joined by commas are the
  rows array.  A file without indentation is read whole and msgspec finds its rows;
* the top level without its rows (``rows`` replaced by ``[]``: a few kilobytes) is read by
  the standard library's reader (:func:`~ragaudit.data.formats.load_json`: a key written
  twice, lone surrogates, bad JSON around the rows) and checked by
  :func:`~.check.find_problems`;
* what types cannot say is checked a batch at a time, by column (:mod:`.fast_rows`): the
  judges' verdicts, each metric's range, unique ids, at most ``config.k`` contexts; and a
  key written twice (msgspec keeps the last silently): the keys the Structs hold are counted
  against the colons of the slice's text, so equal counts prove every key was written once;
* msgspec itself refuses a lone surrogate (``"\\ud800"``), NaN, a number out of a double's
  range, bytes that are not UTF-8, and nesting too deep.

At the first doubt it returns None, and the standard-library path reads the file and words
the problem (``FILE:LINE: field ...``); so do files with keys the Structs do not name (the
model keeps them in ``extra``).  A file loads into the same model either way
(``tests/saved_run/test_fast_reader.py`` holds the two paths to each other).
"""

from __future__ import annotations

import gc
import json
import os
import re
from collections.abc import Collection, Iterator
from types import ModuleType
from typing import Any, BinaryIO

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
_STEP = 1 << 16  # bytes read at a time once a slice holds SLICE bytes


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


def _pread(handle: BinaryIO, size: int, offset: int) -> bytes:
    """``size`` bytes of the file from ``offset`` (fewer at its end)."""
    handle.seek(offset)
    return handle.read(size)


def _rows_start(head: bytes) -> int:
    """Where the top-level ``rows`` array starts, found by parsing the keys before it (in
    the first megabyte: ``format``, ``name``, ``config`` ...).  The bytes are read as
    Latin-1, one character per byte, so that positions are byte offsets; every JSON token
    is ASCII, so the structure parses as in UTF-8 (the values are read properly later)."""
    text = head.decode("latin-1")
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("{", pos):
        raise Doubt
    while True:
        pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
        if not text.startswith('"', pos):
            raise Doubt
        try:
            key, pos = _scan(text, pos)
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if not text.startswith(":", pos):
                raise Doubt
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
            if key == "rows":
                if not text.startswith("[", pos):
                    raise Doubt
                return pos
            _, pos = _scan(text, pos)
        except (StopIteration, ValueError, RecursionError):
            raise Doubt from None  # a value running past the first megabyte, or bad JSON
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if not text.startswith(",", pos):
            raise Doubt


class _Rows:
    """The rows array of a saved-run file, read in slices of whole rows (:meth:`slices`).

    In a file written with indentation (as ragaudit writes it), the array starts after the
    keys before it (:func:`_rows_start`); each row starts on a line ``<indent>{`` and all
    but the last end ``\n<indent>},`` (no newline can be inside a string, and the objects
    inside a row are indented deeper).  The file is read on in blocks, cut there, and the
    array ends at the first ``\n<indent>}`` followed by a newline, white space and ``]``.
    A wrong guess cannot pass: the slices must decode as whole rows, and the rest of the
    file as the top level (:func:`_header`).  A file without indentation is read whole:
    msgspec parses it and leaves ``rows`` raw (a view into the bytes, whose address is its
    offset), decoded as one slice.
    """

    def __init__(self, msgspec: Any, fd: BinaryIO, size: int) -> None:
        self.fd, self.size = fd, size
        self.cut = self.closing = b""
        self.end = -1
        self.whole = b""
        head = _pread(fd, min(size, _HEAD), 0)
        try:
            self.start = _rows_start(head)
        except Doubt:
            self._read_whole(msgspec)
            return
        probe = head[self.start + 1 : self.start + 4097]
        inside = probe.lstrip(b" \t\n\r")
        if inside.startswith(b"]"):  # no rows
            self.end = self.start + 2 + len(probe) - len(inside)
            return
        brace = probe.find(b"{")
        line = probe.rfind(b"\n", 0, brace) if brace != -1 else -1
        indent = probe[line + 1 : brace] if line != -1 else b""
        if not indent or indent.strip(b" \t"):
            self._read_whole(msgspec)
            return
        self.cut, self.closing = b"\n" + indent + b"},", b"\n" + indent + b"}\n"

    def _read_whole(self, msgspec: Any) -> None:
        import numpy as np

        self.whole = _pread(self.fd, self.size, 0)
        raw = msgspec.json.decode(self.whole, type=dict[str, msgspec.Raw]).get("rows")
        if raw is None:
            raise Doubt
        base = np.frombuffer(self.whole, np.uint8).ctypes.data
        self.start = int(np.frombuffer(raw, np.uint8).ctypes.data - base)
        self.end = self.start + len(raw)
        del raw  # a view into self.whole
        whole = self.whole
        if not 0 <= self.start < self.end <= len(whole) or whole[self.start] != ord("["):
            raise Doubt

    def slices(self) -> Iterator[bytes | bytearray]:
        """The text of each slice of whole rows, about :data:`SLICE` bytes, as one JSON
        array (in brackets); :attr:`end` is set when the last slice is reached."""
        if not self.cut:
            if self.whole:
                yield self.whole[self.start : self.end]
            else:  # no rows
                yield b"[]"
            self.whole = b""
            return
        # Each slice is a bytearray of its own, read in place: its first byte is the '['
        # (written over the comma before its first row) and its last the ']' (written over
        # the comma after its last row), so no slice is copied to add its brackets.  The
        # file is read in steps of :data:`_STEP` once a slice holds SLICE bytes, so at most
        # a step's worth of the next rows is copied into the next slice.
        buf = bytearray(b"[")
        offset, eof = self.start + 1, False  # offset: the file offset of buf[1:]
        while True:
            searched = SLICE
            if len(buf) < SLICE + _STEP:
                more = _pread(self.fd, SLICE + _STEP - len(buf), offset + len(buf) - 1)
                eof = not more
                buf += more
            cut = buf.find(self.cut, searched)
            while cut == -1 and not eof:
                searched = max(SLICE, len(buf) - len(self.cut))
                more = _pread(self.fd, _STEP, offset + len(buf) - 1)
                eof = not more
                buf += more
                cut = buf.find(self.cut, searched)
            last = buf.find(self.closing, 0, len(buf) if cut == -1 else cut)
            if last != -1:
                bracket = last + len(self.closing)
                while buf[bracket : bracket + 1] in (b" ", b"\t", b"\n", b"\r"):
                    bracket += 1
                if buf[bracket : bracket + 1] != b"]":
                    raise Doubt
                self.end = offset + bracket
                del buf[bracket + 1 :]
                yield buf
                return
            if cut == -1:
                raise Doubt
            comma = cut + len(self.cut) - 1
            rest = bytearray(b"[") + buf[comma + 1 :]  # the next rows read so far
            del buf[comma:]
            buf.append(0x5D)  # ']' where the comma was
            yield buf
            offset += comma
            buf = rest


def _header(fd: BinaryIO, size: int, start: int, end: int, path: str) -> dict[str, Any]:
    """The top level with ``rows`` replaced by ``[]``, read and checked the standard way."""
    text = _pread(fd, start, 0) + b"[]" + _pread(fd, size - end, end)
    try:
        top = load_json(text.decode("utf-8"), path)
    except (FormatError, UnicodeDecodeError):
        raise Doubt from None
    if type(top) is not dict or top.get("rows") != [] or find_problems(top):
        raise Doubt
    return top


def _read(msgspec: Any, fd: BinaryIO, path: str, questions: frozenset[str] | None) -> SavedRun:
    from ragaudit.data.saved_run.fast_types import Row, RowId

    size = os.fstat(fd.fileno()).st_size
    array = _Rows(msgspec, fd, size)
    rows_of = StructRows(msgspec.UNSET)
    decoder = msgspec.json.Decoder(list[Row])
    ids_only = msgspec.json.Decoder(list[RowId])
    built: list[QuestionResult] = []
    for text in array.slices():
        if questions is None:
            rows = decoder.decode(text)
            built.extend(rows_of.build_rows(rows, rows_of.check(rows, text)))
        else:
            # ``show RUN q7``: every row's id is read (the grammar, unique non-empty ids);
            # only a slice holding a shown question is decoded and checked in full.
            ids = [row.id for row in ids_only.decode(text)]
            rows_of.add_ids(ids)
            if not questions.isdisjoint(ids):
                rows = decoder.decode(text)
                rows_of.check(rows, text, ids_seen=True)
                rows = [row for row in rows if row.id in questions]
                built.extend(rows_of.build_rows(rows, rows_of._fields(rows)[0]))
    top = _header(fd, size, array.start, array.end, path)
    if rows_of.most_contexts > top["config"]["k"]:
        raise Doubt  # more context chunks than config.k: the walk words it
    return SavedRun.from_parts(top, built, path)


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
            return _read(msgspec, handle, str(path), wanted)
    except (Doubt, msgspec.DecodeError, msgspec.ValidationError, OSError, ValueError):
        return None
    except (RecursionError, TypeError, KeyError, IndexError, BufferError):  # pragma: no cover
        return None  # a shape no check foresaw: the standard-library path decides
    finally:
        if collecting:
            gc.enable()
