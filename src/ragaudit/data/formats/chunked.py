"""Whitespace-separated files read in chunks of whole lines: pyarrow first, exact Python after.

Every chunk of a TREC file goes through pyarrow's C++ CSV reader (one-byte delimiter, no
quoting), whose number parser rounds correctly: a score is the same float as Python's
``float()`` gives.  A chunk that pyarrow refuses, or that is not regular (runs of blanks, a
second kind of blank, an empty field, a bad or non-finite number, invalid UTF-8), is read
again line by line in Python with ``bytes.split()``: that scan either gives the same columns
or raises :class:`~ragaudit.exceptions.FormatError` naming file, line and field.  Only the
chunks that need it pay for the slow scan.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit._io import check_regular_file
from ragaudit._parallel import trim_heap
from ragaudit.data.formats.strings import IntArray, Strings
from ragaudit.exceptions import FormatError, unreadable

__all__ = [
    "Chunk",
    "TextColumns",
    "arrow_code_keys",
    "arrow_string_buffers",
    "arrow_strings",
    "check_rereadable",
    "distinct_names",
    "read_chunks",
    "release_arrow_memory",
]

PathLike = str | os.PathLike[str]
_BOM = b"\xef\xbb\xbf"
_BLANKS = (b" ", b"\t", b"\x0b", b"\x0c")


@dataclass(frozen=True)
class Chunk:
    """Whole lines of a file: the first ``size`` bytes of ``buffer``, which start at byte
    ``offset`` of the file (after a leading BOM).  Bytes of ``buffer`` past ``size`` belong
    to the next chunk.

    :func:`read_chunks` reads every chunk of a file into one reused buffer: a chunk is
    valid until the next one is read (readers copy what they keep).
    """

    buffer: bytes | bytearray
    size: int
    offset: int
    path: str

    @property
    def data(self) -> bytes:
        """A copy of the chunk's bytes."""
        return bytes(memoryview(self.buffer)[: self.size])

    def has(self, byte: bytes) -> bool:
        """Whether the chunk holds ``byte``."""
        return self.buffer.find(byte, 0, self.size) >= 0

    def count(self, text: bytes) -> int:
        """Occurrences of ``text`` in the chunk."""
        return self.buffer.count(text, 0, self.size)

    def first_line(self) -> int:
        """1-based number of the chunk's first line (counted only when an error needs it)."""
        if self.offset == 0:
            return 1
        count = 0
        with open(self.path, "rb") as handle:
            left = self.offset
            while left > 0:
                block = handle.read(min(left, 1 << 24))
                if not block:
                    break
                count += block.count(b"\n")
                left -= len(block)
        return count + 1


def read_chunks(path: PathLike, block_bytes: int) -> Iterator[Chunk]:
    """Yield chunks of about ``block_bytes`` ending at a newline; a leading BOM is dropped.

    Every chunk is read into the same buffer (no fresh pages to fault in per chunk), so a
    chunk is valid until the next one is asked for.  The bytes after a chunk's last newline
    move to the front of the buffer, as the start of the next chunk.
    """
    name = str(path)
    try:
        handle = open(path, "rb", buffering=0)  # noqa: SIM115 - closed in the finally below
    except OSError as exc:
        raise unreadable(name, exc) from None
    try:
        # No bigger than the file (a fresh buffer is zero-filled), room for a BOM whatever the
        # block.  A pipe or FIFO (``<(...)``, /dev/stdin) reports size 0: a whole block.
        status = os.fstat(handle.fileno())
        size = status.st_size if stat.S_ISREG(status.st_mode) else block_bytes
        buffer = bytearray(max(min(block_bytes, size + 1), 64))
        kept = 0  # bytes at the front of the buffer carried over from the previous block
        offset = 0
        while True:
            try:
                filled = kept + _read_into(handle, buffer, kept)
                if offset == 0 and buffer.startswith(_BOM, 0, filled):
                    filled -= len(_BOM)
                    buffer[:filled] = buffer[len(_BOM) : filled + len(_BOM)]
                    offset = len(_BOM)
                    filled += _read_into(handle, buffer, filled)
                while filled == len(buffer) and buffer.find(b"\n", kept, filled) < 0:
                    buffer = buffer + bytes(len(buffer))  # a line longer than the block
                    filled += _read_into(handle, buffer, filled)
            except OSError as exc:
                raise unreadable(name, exc) from None
            if filled == 0:
                return
            cut = buffer.rfind(b"\n", 0, filled) + 1
            if cut == 0:  # the end of the file, without a final newline
                if filled == len(buffer):
                    buffer = buffer + b"\n"
                buffer[filled] = 0x0A
                yield Chunk(buffer, filled + 1, offset, name)
                return
            yield Chunk(buffer, cut, offset, name)
            offset += cut
            kept = filled - cut
            buffer[:kept] = buffer[cut:filled]
    finally:
        handle.close()


def _read_into(handle: Any, buffer: bytearray, start: int) -> int:
    """Fill ``buffer`` from byte ``start`` on (short only at the end of the file); returns
    the bytes read."""
    view = memoryview(buffer)
    try:
        total = 0
        while start + total < len(buffer):
            got = handle.readinto(view[start + total :])
            if not got:
                break
            total += got
        return total
    finally:
        view.release()


@dataclass(frozen=True)
class TextColumns:
    """The columns a reader keeps from one chunk, rows in file order.

    ``keys`` holds the question id of each row as block-local codes into ``names`` (a list of
    str, or a pyarrow string array from the fast path: see :attr:`key_names`); ``items``
    the item ids; ``values`` the numbers of the value column (score or grade).  The fast
    path's names may repeat (one per run of equal ids; see :func:`distinct_names`).
    """

    names: Any
    keys: IntArray
    items: Strings
    values: npt.NDArray[np.float64]

    @property
    def key_names(self) -> list[str]:
        """The distinct question ids of the chunk, in order of first appearance."""
        names = self.names
        return names if isinstance(names, list) else names.to_pylist()

    def arrow_names(self) -> Any:
        """:attr:`key_names` as a pyarrow ``large_string`` array."""
        names = self.names
        if not isinstance(names, list):
            return names
        strings = Strings.from_list(names) if names else Strings.concat([])
        return arrow_strings(strings)


def arrow_strings(strings: Strings) -> Any:
    """:class:`Strings` as a pyarrow ``large_string`` array (``pyarrow.array`` is avoided:
    it imports pandas to look for pandas objects)."""
    pa = _pa()
    return pa.Array.from_buffers(
        pa.large_string(),
        len(strings),
        [
            None,
            pa.py_buffer(np.ascontiguousarray(strings.offsets, dtype=np.int64)),
            pa.py_buffer(strings.data),
        ],
    )


def arrow_ints(values: IntArray) -> Any:
    """An int64 numpy array as a pyarrow array (without ``pyarrow.array``; see above)."""
    pa = _pa()
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def arrow_string_buffers(array: Any) -> tuple[IntArray, npt.NDArray[np.uint8]]:
    """Offsets (from 0, int64) and bytes of a pyarrow (large_)string array, without copying
    the bytes (the offsets are copied when they are 32-bit or do not start at 0)."""
    n = len(array)
    offsets_buffer, data_buffer = array.buffers()[1], array.buffers()[2]
    dtype = np.int64 if array.type.equals(_pa().large_string()) else np.int32
    offsets = np.frombuffer(offsets_buffer, dtype=dtype)[array.offset : array.offset + n + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    if dtype is np.int32 or start:
        offsets = offsets.astype(np.int64) - start
    if data_buffer is None or end == start:
        return offsets, np.zeros(0, dtype=np.uint8)
    return offsets, np.frombuffer(data_buffer, dtype=np.uint8)[start:end]


def arrow_values(array: Any, dtype: Any) -> npt.NDArray[Any]:
    """The values of a null-free fixed-width pyarrow array as numpy, without a copy (and
    without pyarrow's ``to_numpy``, which can import pandas)."""
    data = np.frombuffer(array.buffers()[1], dtype=dtype)
    return data[array.offset : array.offset + len(array)]


def _pa() -> Any:
    import pyarrow

    return pyarrow


def release_arrow_memory(*, heap: bool = False) -> None:
    """Hand the memory pyarrow's allocator keeps cached (a chunk's table once it has been
    consumed) back to the system, so that numpy's arrays do not stack on top of it.

    ``heap=True`` also returns the free pages of the C heap (glibc's ``malloc_trim``, where
    there is one), which holds the freed temporaries of a whole file's read.
    """
    if "pyarrow" in sys.modules:
        _pa().default_memory_pool().release_unused()
    if heap:
        trim_heap()


_SMALL_CHUNK = 1 << 15  # rows; importing pyarrow.compute costs more than comparing them


def arrow_code_keys(keys: Any) -> tuple[Any, IntArray]:
    """Codes of the runs of equal ids in the pyarrow string array ``keys``, and their names.

    Each run of consecutive equal ids (the usual layout: a question's lines together) gets
    the next code; the ids are compared in pyarrow, not hashed (in Python for a small
    chunk).  A question whose lines are not together therefore has two
    codes here; :func:`distinct_names` merges them.
    """
    n = len(keys)
    if n == 0:
        return arrow_strings(Strings.concat([])), np.zeros(0, dtype=np.int64)
    if n <= _SMALL_CHUNK:  # a small file: compared in Python, pyarrow.compute not imported
        ids = keys.to_pylist()
        head = [0, *(i for i in range(1, n) if ids[i] != ids[i - 1])]
        names = arrow_strings(Strings.from_list([ids[i] for i in head]))
        counts = np.diff(np.append(np.array(head, dtype=np.int64), n))
        return names, np.repeat(np.arange(len(head)), counts)
    import pyarrow.compute as pc

    changed = pc.indices_nonzero(pc.not_equal(keys.slice(1), keys.slice(0, n - 1)))
    heads = np.zeros(len(changed) + 1, dtype=np.int64)
    heads[1:] = arrow_values(changed, np.uint64)
    heads[1:] += 1
    counts = np.diff(np.append(heads, n))
    return keys.take(arrow_ints(heads)), np.repeat(np.arange(len(heads)), counts)


def distinct_names(columns: TextColumns) -> TextColumns:
    """``columns`` with distinct names (first appearance order), codes renumbered to match."""
    names = columns.names
    if isinstance(names, list):
        return columns  # the exact reader numbers distinct ids already
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(names)
    if len(encoded.dictionary) == len(names):
        return columns
    remap = arrow_values(encoded.indices, np.int32)
    return TextColumns(
        encoded.dictionary, remap[columns.keys].astype(np.int64), columns.items, columns.values
    )


def _regular_bytes(chunk: Chunk, delimiter: bytes) -> bool:
    """No blank other than ``delimiter`` and the line ends, no lone carriage return, and no
    empty field (two delimiters in a row, or one at the start or end of a line)."""
    if any(chunk.has(blank) for blank in _BLANKS if blank != delimiter):
        return False
    carriage = chunk.has(b"\r")
    if carriage and chunk.count(b"\r") != chunk.count(b"\r\n"):
        return False
    return not (
        chunk.buffer.startswith(delimiter)
        or _empty_field(chunk.buffer, chunk.size, ord(delimiter), carriage)
    )


def _empty_field(data: bytes | bytearray, size: int, delimiter: int, carriage: bool) -> bool:
    """Whether the first ``size`` bytes of ``data`` hold a delimiter next to another one or
    next to a line end (``carriage``: the data holds a carriage return).

    Scanned in slices of 1 MiB whose temporaries are reused (cache-sized, no fresh pages).
    """
    step = 1 << 20
    codes = np.frombuffer(data, dtype=np.uint8, count=size)
    is_delimiter = np.empty(step + 1, dtype=bool)
    blank = np.empty(step + 1, dtype=bool)
    spare = np.empty(step + 1, dtype=bool)
    pairs = np.empty(step, dtype=bool)
    for start in range(0, size, step):
        part = codes[start : start + step + 1]  # one byte of overlap with the next slice
        n = len(part)
        d, b, t = is_delimiter[:n], blank[:n], spare[:n]
        np.equal(part, delimiter, out=d)
        np.equal(part, 0x0A, out=b)
        if carriage:
            np.equal(part, 0x0D, out=t)
            b |= t
        b |= d
        # Two blanks or line ends in a row: fine only when neither is a delimiter (an
        # empty line).
        p = pairs[: n - 1]
        np.logical_and(b[1:], b[:-1], out=p)
        if p.any():
            np.logical_or(d[1:], d[:-1], out=t[: n - 1])
            if np.logical_and(p, t[: n - 1], out=p).any():
                return True
    return False


def check_rereadable(path: PathLike) -> None:
    """Refuse a pipe, FIFO, socket or device (``<(zcat run.gz)``, /dev/stdin) with a
    one-line FormatError (:func:`ragaudit._io.check_regular_file`, the check every reader
    makes): a reader that sniffs a file's head opens the file again to read it, and a pipe's
    head would then be gone (its first 64 KiB of lines lost without a word).

    >>> check_rereadable(__file__)  # a regular file passes
    """
    check_regular_file(path, why=" (its start is read twice, to sniff the format)")


def sniff_delimiter(path: PathLike) -> bytes:
    """Tab when the first line holds a tab and no space, else space (a pipe is refused:
    :func:`check_rereadable`)."""
    check_rereadable(path)
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return b" "
    line = head.removeprefix(_BOM).lstrip(b"\r\n").split(b"\n", 1)[0].rstrip(b"\r")
    return b"\t" if b"\t" in line and b" " not in line else b" "


def fast_columns(
    chunk: Chunk, fields: Sequence[str], value_field: str, delimiter: bytes, threads: bool
) -> TextColumns | None:
    """Columns of a regular chunk read by pyarrow, or None (then :func:`exact_columns`)."""
    if not _regular_bytes(chunk, delimiter):
        return None
    pa = _pa()
    import pyarrow.csv as csv

    key_field, item_field = fields[0], fields[2]
    types = {key_field: pa.large_string(), item_field: pa.large_string()}
    types[value_field] = pa.float64()
    try:
        table = csv.read_csv(
            pa.BufferReader(pa.py_buffer(chunk.buffer).slice(0, chunk.size)),
            read_options=csv.ReadOptions(
                column_names=list(fields), use_threads=threads, block_size=1 << 22
            ),
            parse_options=csv.ParseOptions(
                delimiter=delimiter.decode(), quote_char=False, escape_char=False
            ),
            convert_options=csv.ConvertOptions(
                column_types=types,
                include_columns=[key_field, item_field, value_field],
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid:
        return None
    if table.num_rows == 0:
        return None
    values = arrow_values(table.column(value_field).combine_chunks(), np.float64)
    if not np.isfinite(values).all():
        return None
    names, codes = arrow_code_keys(table.column(key_field).combine_chunks())
    offsets, data = arrow_string_buffers(table.column(item_field).combine_chunks())
    return TextColumns(names, codes, Strings(data, offsets), values)


def exact_columns(
    chunk: Chunk,
    fields: Sequence[str],
    value_field: str,
    convert: Callable[[str, int], float],
) -> TextColumns:
    """Read a chunk line by line with ``bytes.split()`` (runs of blanks separate fields).

    ``convert(token, line)`` turns the value token into a number or raises FormatError.
    """
    first = chunk.first_line()
    n_fields = len(fields)
    value_at = list(fields).index(value_field)
    index: dict[str, int] = {}
    keys: list[int] = []
    items: list[str] = []
    values: list[float] = []
    for number, raw in enumerate(chunk.data.split(b"\n"), start=first):
        tokens = raw.split()
        if not tokens:
            continue
        if len(tokens) != n_fields:
            raise FormatError(
                f"expected {n_fields} whitespace-separated fields ({', '.join(fields)}), "
                f"found {len(tokens)}",
                path=chunk.path,
                line=number,
            )
        qid = _text(tokens[0], chunk.path, number, fields[0])
        item = _text(tokens[2], chunk.path, number, fields[2])
        value = convert(_text(tokens[value_at], chunk.path, number, value_field), number)
        keys.append(index.setdefault(qid, len(index)))
        items.append(item)
        values.append(value)
    return TextColumns(
        list(index),
        np.array(keys, dtype=np.int64),
        Strings.from_list(items) if items else Strings.concat([]),
        np.array(values, dtype=np.float64),
    )


def _text(token: bytes, path: str, line: int, field: str) -> str:
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        shown = token[:40].decode("utf-8", errors="backslashreplace")
        raise FormatError(
            f"expected UTF-8 text, found {shown!r}", path=path, line=line, field=field
        ) from None


class Column:
    """A growing numpy column: chunks are copied into one array sized by an estimate."""

    def __init__(self, dtype: type[np.generic], pad: int = 0) -> None:
        self.array = np.zeros(0, dtype=dtype)
        self.size = 0
        self.pad = pad  # zero bytes kept after the data (see _word_view)

    def append(self, values: npt.NDArray[Any], expected_total: int) -> None:
        need = self.size + len(values) + self.pad
        if need > len(self.array):
            grown = np.zeros(
                max(need, expected_total + self.pad, len(self.array) * 3 // 2),
                dtype=self.array.dtype,
            )
            grown[: self.size] = self.array[: self.size]
            self.array = grown
        self.array[self.size : self.size + len(values)] = values
        self.size += len(values)

    def result(self) -> npt.NDArray[Any]:
        return self.array[: self.size]
