"""Reading a saved-run file with msgspec (the ``fast`` extra): rows decoded and typed in C.

:func:`fast_saved_run` is tried first by :func:`ragaudit.data.records.load_saved_run` when
``msgspec`` is installed (``pip install 'ragaudit[fast]'``); it loads a 100,000-question run
(337 MB) in about half the CPU time of the standard-library path (:mod:`.load`), in less
memory than the file.  Without msgspec, or with the environment variable
``RAGAUDIT_READER=stdlib``, it returns None and the standard-library path reads the file.

How it reads, and why each step is exact:

* the keys before ``rows`` are parsed to find where the rows start (:func:`_rows_start`);
* the file is read on in blocks and cut into slices of about 512 KB where the pretty-printer
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
from collections.abc import Callable, Collection, Iterator
from io import BufferedReader
from types import ModuleType
from typing import Any, BinaryIO, cast

from ragaudit.data.formats import load_json
from ragaudit.data.saved_run.check import find_problems
from ragaudit.data.saved_run.fast_rows import CheckedBatch, Doubt, StructRows
from ragaudit.data.saved_run.model import QuestionResult, SavedRun
from ragaudit.exceptions import FormatError

__all__ = ["ENABLED", "READER_ENV", "check_rows", "fast_saved_run", "msgspec_module", "reader_name"]

#: Environment variable: ``stdlib`` turns the msgspec reader off (both paths stay testable).
READER_ENV = "RAGAUDIT_READER"
#: Module switch with the same effect (tests flip it).
ENABLED = True
#: Bytes of row text decoded at a time (about 150 rows of a typical run).  Small enough
#: that a slice's objects stay in a core's cache while they are checked and built: at
#: 100,000 questions, 512 KB slices load about 20% faster than 4 MB ones (4.1 s against
#: 5.0 s, median of five runs taken in turn).
SLICE = 1 << 19
_STEP = 1 << 16  # bytes read at a time once a slice holds SLICE bytes


def msgspec_module() -> ModuleType | None:
    """``msgspec`` when installed and not turned off (:data:`ENABLED`, :data:`READER_ENV`),
    else None: the saved-run readers that decode rows in C need it.

    >>> msgspec_module() is None or hasattr(msgspec_module(), "json")
    True
    """
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
    msgspec = msgspec_module()
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

    def _read_into(self, store: bytearray, filled: int, offset: int, until: int) -> int:
        """Read the file on into ``store[filled:until]`` (``store[1:]`` holds the file from
        ``offset``); the new length of the text in ``store`` (``filled`` at the file's end)."""
        self.fd.seek(offset + filled - 1)
        with memoryview(store) as view:
            return filled + (cast(BufferedReader, self.fd).readinto(view[filled:until]) or 0)

    def slices(self) -> Iterator[bytes | memoryview]:
        """The text of each slice of whole rows, about :data:`SLICE` bytes, as one JSON
        array (in brackets); :attr:`end` is set when the last slice is reached.  Each slice
        is a view of one buffer the next slice reuses: decode it before asking for the next."""
        if not self.cut:
            if self.whole:
                yield self.whole[self.start : self.end]
            else:  # no rows
                yield b"[]"
            self.whole = b""
            return
        # One buffer, read into in place and reused by every slice (a new buffer for each
        # slice costs a page fault per 4 KB of it on some virtual machines): its first byte
        # is the '[' (written over the comma before the slice's first row) and the ']' is
        # written over the comma after its last row.  The file is read in steps of
        # :data:`_STEP` once a slice holds SLICE bytes, so the rows read past the cut (at
        # most about a step) are moved to the front for the next slice.
        store = bytearray(SLICE + _STEP)
        store[0] = 0x5B  # '['
        filled, offset, eof = 1, self.start + 1, False  # store[1:filled]: the file from offset
        while True:
            searched = SLICE
            if filled < SLICE + _STEP and not eof:
                filled = self._read_into(store, filled, offset, SLICE + _STEP)
                eof = filled < SLICE + _STEP  # a short read: the file's end
            cut = store.find(self.cut, searched, filled)
            while cut == -1 and not eof:  # a row running past the buffer: a bigger one
                searched = max(SLICE, filled - len(self.cut))
                if len(store) < filled + _STEP:  # twice the size (new: a slice's view holds it)
                    store = store[:filled] + bytes(max(_STEP, filled))
                until = filled + _STEP
                filled = self._read_into(store, filled, offset, until)
                eof = filled < until
                cut = store.find(self.cut, searched, filled)
            # The array ends after the last row boundary before the cut, if in this slice:
            # had it ended before that, the slice would hold its ']' and more, which no
            # list of rows decodes (Doubt: the standard-library path reads such a file).
            after = 0 if cut == -1 else max(0, store.rfind(self.cut, 0, cut))
            last = store.find(self.closing, after, filled if cut == -1 else cut)
            if last != -1:
                bracket = last + len(self.closing)
                while bracket < filled and store[bracket] in b" \t\n\r":
                    bracket += 1
                if bracket >= filled or store[bracket] != 0x5D:  # ']'
                    raise Doubt
                self.end = offset + bracket
                with memoryview(store) as view:
                    yield view[: bracket + 1]
                return
            if cut == -1:
                raise Doubt
            comma = cut + len(self.cut) - 1
            store[comma] = 0x5D  # ']' where the comma was
            with memoryview(store) as view:
                yield view[: comma + 1]
            rest = filled - comma - 1  # the next rows read so far, moved to the front
            store[1 : 1 + rest] = store[comma + 1 : filled]
            filled, offset = 1 + rest, offset + comma


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


def check_rows(
    msgspec: Any, fd: BinaryIO, path: str, rows_of: StructRows, take: Callable[[CheckedBatch], Any]
) -> dict[str, Any]:
    """Decode and check every row of the open saved-run file ``fd``, a slice at a time,
    handing each checked batch to ``take``; return the checked top level (without its rows).
    Raises :class:`Doubt` (or msgspec's errors) at any doubt."""
    from ragaudit.data.saved_run.fast_types import Row

    size = os.fstat(fd.fileno()).st_size
    array = _Rows(msgspec, fd, size)
    decoder = msgspec.json.Decoder(list[Row])
    for text in array.slices():
        rows = decoder.decode(text)
        take(rows_of.batch(rows, rows_of.check(rows, text)))
    return _top(fd, size, array, path, rows_of)


def _top(fd: BinaryIO, size: int, array: _Rows, path: str, rows_of: StructRows) -> dict[str, Any]:
    """The checked top level, once every row is read: at most ``config.k`` contexts too."""
    top = _header(fd, size, array.start, array.end, path)
    if rows_of.most_contexts > top["config"]["k"]:
        raise Doubt  # more context chunks than config.k: the walk words it
    return top


def _read(msgspec: Any, fd: BinaryIO, path: str, questions: frozenset[str] | None) -> SavedRun:
    from ragaudit.data.saved_run.fast_types import Row, RowId

    rows_of = StructRows(msgspec.UNSET)
    built: list[QuestionResult] = []
    if questions is None:
        top = check_rows(
            msgspec, fd, path, rows_of, lambda batch: built.extend(rows_of.build_batch(batch))
        )
        return SavedRun.from_parts(top, built, path)
    # ``show RUN q7``: every row's id is read (the grammar, unique non-empty ids); only a
    # slice holding a shown question is decoded and checked in full.
    size = os.fstat(fd.fileno()).st_size
    array = _Rows(msgspec, fd, size)
    decoder = msgspec.json.Decoder(list[Row])
    ids_only = msgspec.json.Decoder(list[RowId])
    for text in array.slices():
        ids = [row.id for row in ids_only.decode(text)]
        rows_of.add_ids(ids)
        if not questions.isdisjoint(ids):
            rows = decoder.decode(text)
            rows_of.check(rows, text, ids_seen=True)
            rows = [row for row in rows if row.id in questions]
            built.extend(rows_of.build_rows(rows, rows_of._fields(rows)[0]))
    return SavedRun.from_parts(_top(fd, size, array, path, rows_of), built, path)


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
    msgspec = msgspec_module()
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
