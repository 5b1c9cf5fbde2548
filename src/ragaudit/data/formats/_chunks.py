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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit.data.formats._strings import _PAD, IntArray, _Strings, _token_words, _word_view
from ragaudit.exceptions import FormatError, unreadable

__all__ = ["Chunk", "TextColumns", "read_chunks"]

PathLike = str | os.PathLike[str]
_BOM = b"\xef\xbb\xbf"
_BLANKS = (b" ", b"\t", b"\x0b", b"\x0c")


@dataclass(frozen=True)
class Chunk:
    """Whole lines of a file: ``data`` starts at byte ``offset`` (after a leading BOM)."""

    data: bytes
    offset: int
    path: str

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
    """Yield chunks of about ``block_bytes`` ending at a newline; a leading BOM is dropped."""
    name = str(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in the finally below
    except OSError as exc:
        raise unreadable(name, exc) from None
    try:
        carry = b""
        offset = 0
        first = True
        while True:
            try:
                block = handle.read(block_bytes)
            except OSError as exc:
                raise unreadable(name, exc) from None
            if first:
                first = False
                if block.startswith(_BOM):
                    block = block[len(_BOM) :]
                    offset = len(_BOM)
            if not block:
                if carry:
                    yield Chunk(carry + b"\n", offset, name)
                return
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            carry = data[cut:]
            yield Chunk(data[:cut] if carry else data, offset, name)
            offset += cut
    finally:
        handle.close()


@dataclass(frozen=True)
class TextColumns:
    """The columns a reader keeps from one chunk, rows in file order.

    ``keys`` holds the question id of each row as block-local codes into ``key_names``;
    ``items`` the item ids; ``values`` the numbers of the value column (score or grade).
    """

    key_names: list[str]
    keys: IntArray
    items: _Strings
    values: npt.NDArray[np.float64]


def _arrow_strings(array: Any) -> _Strings:
    """A pyarrow (large_)string array as :class:`_Strings` (data copied into a padded buffer)."""
    n = len(array)
    offsets_buffer, data_buffer = array.buffers()[1], array.buffers()[2]
    dtype = np.int64 if array.type.equals(_pa().large_string()) else np.int32
    offsets = np.frombuffer(offsets_buffer, dtype=dtype)[array.offset : array.offset + n + 1]
    offsets = offsets.astype(np.int64)
    start, end = int(offsets[0]), int(offsets[-1])
    data = np.zeros(end - start + _PAD, dtype=np.uint8)
    if data_buffer is not None and end > start:
        data[: end - start] = np.frombuffer(data_buffer, dtype=np.uint8)[start:end]
    return _Strings(data[: end - start], offsets - start)


def _arrow_floats(array: Any) -> npt.NDArray[np.float64]:
    """A null-free pyarrow float64 array as numpy, without pyarrow's pandas shim."""
    data = np.frombuffer(array.buffers()[1], dtype=np.float64)
    return data[array.offset : array.offset + len(array)]


def _pa() -> Any:
    import pyarrow

    return pyarrow


def code_keys(strings: _Strings) -> tuple[list[str], IntArray]:
    """Block-local codes of ``strings`` in order of first appearance, and the distinct names.

    Consecutive equal ids (the usual layout: a question's lines together) are found by
    comparing 8-byte words, so only the first row of each run of equal ids is decoded.
    """
    n = len(strings)
    if n == 0:
        return [], np.zeros(0, dtype=np.int64)
    lengths = strings.lengths
    n_words = max(1, -(-int(lengths.max()) // 8))
    words = _token_words(_word_view(strings.data), strings.offsets[:-1], lengths, n_words)
    changes = np.ones(n, dtype=bool)
    changes[1:] = (words[1:] != words[:-1]).any(axis=1) | (lengths[1:] != lengths[:-1])
    del words
    heads = np.flatnonzero(changes)
    index: dict[str, int] = {}
    codes = np.fromiter(
        (index.setdefault(name, len(index)) for name in strings.decode(heads)),
        dtype=np.int64,
        count=len(heads),
    )
    return list(index), np.repeat(codes, np.diff(np.append(heads, n)))


def _regular_bytes(data: bytes, delimiter: bytes) -> bool:
    """No blank other than ``delimiter`` and the line ends, no lone carriage return."""
    if any(blank in data for blank in _BLANKS if blank != delimiter):
        return False
    return b"\r" not in data or data.count(b"\r") == data.count(b"\r\n")


def sniff_delimiter(path: PathLike) -> bytes:
    """Tab when the first line holds a tab and no space, else space."""
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
    if not _regular_bytes(chunk.data, delimiter):
        return None
    pa = _pa()
    import pyarrow.compute as pc
    import pyarrow.csv as csv

    types = {name: pa.large_string() for name in fields}
    types[value_field] = pa.float64()
    try:
        table = csv.read_csv(
            pa.BufferReader(chunk.data),
            read_options=csv.ReadOptions(
                column_names=list(fields), use_threads=threads, block_size=1 << 22
            ),
            parse_options=csv.ParseOptions(
                delimiter=delimiter.decode(), quote_char=False, escape_char=False
            ),
            convert_options=csv.ConvertOptions(
                column_types=types,
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid:
        return None
    if table.num_rows == 0:
        return None
    for name in fields:
        if name == value_field:
            continue
        column = table.column(name)
        if pc.min(pc.binary_length(column)).as_py() == 0:
            return None  # an empty field: two delimiters in a row
    values = _arrow_floats(table.column(value_field).combine_chunks())
    if not np.isfinite(values).all():
        return None
    keys = _arrow_strings(table.column(fields[0]).combine_chunks())
    key_names, codes = code_keys(keys)
    items = _arrow_strings(table.column(fields[2]).combine_chunks())
    return TextColumns(key_names, codes, items, np.ascontiguousarray(values, np.float64))


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
        _Strings.from_list(items) if items else _Strings.concat([]),
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
