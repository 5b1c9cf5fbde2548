"""File formats for labels and runs: TREC, JSONL, plain dicts and pandas DataFrames.

TREC files
    qrels: ``qid iteration docid grade`` (the iteration column is ignored, as in trec_eval);
    run: ``qid Q0 docid rank score tag`` (the rank column is ignored: items are ranked by score,
    ties broken by id descending, exactly like trec_eval; ``order="given"`` keeps file order).
JSONL / JSON
    one object per line: qrels ``{"qid": .., "docid": .., "grade": ..}``; runs
    ``{"qid": .., "docid": .., "score": ..}`` or ``{"id": "q1", "ranking": [...]}`` where the
    ranking is a list of ids, of ``[id, score]`` pairs, or an ``{id: score}`` object.
    A ``.json`` file may also hold a single ``{qid: {docid: grade_or_score}}`` object.

The TREC readers are built for large files (a 10-million-line run): the file is read in
blocks of bytes, split into fields with numpy, and kept as integer-coded columns; per-question
Python lists are built only if something asks for them (see :class:`RunColumns`).

Every malformed line raises :class:`~ragaudit.exceptions.FormatError` naming file, line and
field.
"""

from __future__ import annotations

import itertools
import json
import operator
import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ragaudit._io import atomic_write_text, require
from ragaudit.data.qrels import Qrels, check_unit
from ragaudit.data.runs import RankingInput, Run
from ragaudit.exceptions import FormatError, InputError, unreadable

__all__ = [
    "QrelsColumns",
    "RunColumns",
    "columns_from_rankings",
    "load_arrays",
    "qrels_from_dataframe",
    "qrels_to_dataframe",
    "read_chunk_map",
    "read_jsonl_qrels",
    "read_jsonl_run",
    "read_qrels",
    "read_qrels_columns",
    "read_run",
    "read_run_columns",
    "read_trec_qrels",
    "read_trec_run",
    "run_from_dataframe",
    "run_to_dataframe",
    "write_jsonl_qrels",
    "write_jsonl_run",
    "write_trec_qrels",
    "write_trec_run",
]

PathLike = str | os.PathLike[str]
IntArray = npt.NDArray[np.int64]
U8Array = npt.NDArray[np.uint8]
U64Array = npt.NDArray[np.uint64]

_BLOCK_BYTES = 1 << 24  # 16 MiB per block bounds the temporaries of a block to ~10x that
_QRELS_FIELDS = ("qid", "iteration", "docid", "grade")
_RUN_FIELDS = ("qid", "Q0", "docid", "rank", "score", "tag")
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_QID_MIX = np.uint64(0x9E3779B97F4A7C15)


# --------------------------------------------------------------------------------------------
# Compact string columns: many byte strings in one buffer, addressed by offsets.


@dataclass(frozen=True)
class _Strings:
    """UTF-8 strings stored back to back: string ``i`` is ``data[offsets[i]:offsets[i+1]]``."""

    data: U8Array
    offsets: IntArray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> IntArray:
        return np.diff(self.offsets)

    @classmethod
    def from_buffer(cls, buffer: U8Array, starts: IntArray, ends: IntArray) -> _Strings:
        lengths = ends - starts
        offsets = np.zeros(len(starts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        positions = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
        return cls(buffer[positions], offsets)

    @classmethod
    def from_token_words(cls, token_words: U64Array, lengths: IntArray) -> _Strings:
        """Strings from :func:`_token_words` output (bytes past each end are dropped)."""
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        as_bytes = token_words.view(np.uint8)
        return cls(as_bytes[as_bytes != 0], offsets)  # tokens hold no NUL: the 0s are padding

    @classmethod
    def from_list(cls, strings: Sequence[str]) -> _Strings:
        """Encode ``strings`` (str only: ``join`` raises TypeError on anything else)."""
        fast = cls.from_list_without_nul(strings)
        if fast is not None:
            return fast
        joined = "".join(strings)
        if joined.isascii():  # one encode; character counts are byte counts
            offsets = np.zeros(len(strings) + 1, dtype=np.int64)
            np.cumsum(
                np.fromiter(map(len, strings), dtype=np.int64, count=len(strings)),
                out=offsets[1:],
            )
            data = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
            return cls(np.concatenate((data, np.zeros(_PAD, np.uint8)))[: len(data)], offsets)
        encoded = [s.encode("utf-8") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(
            np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:]
        )
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        # Padded like the ASCII branch so that hashing can load 8 bytes at a time.
        return cls(np.concatenate((data, np.zeros(_PAD, np.uint8)))[: len(data)], offsets)

    @classmethod
    def from_list_without_nul(cls, strings: Sequence[str]) -> _Strings | None:
        """As :meth:`from_list` in one join and one encode, None if a string holds a NUL.

        The strings are joined with NUL separators, whose positions give the lengths; NUL
        never occurs inside a multi-byte UTF-8 sequence, so this works for any text.
        """
        if not strings:
            return None
        try:
            encoded = "\x00".join(strings).encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: the per-string path raises the error
            return None
        buffer = np.frombuffer(encoded, dtype=np.uint8)
        is_text = buffer != 0
        offsets = np.empty(len(strings) + 1, dtype=np.int64)
        offsets[0] = 0
        # String i starts after separator i - 1; dropping i separators shifts it by i.
        separators = np.flatnonzero(~is_text)
        if len(separators) != len(strings) - 1:
            return None
        separators -= np.arange(len(separators))
        offsets[1:-1] = separators
        del separators
        offsets[-1] = len(buffer) - len(strings) + 1
        data = np.empty(int(offsets[-1]) + _PAD, dtype=np.uint8)
        data[-_PAD:] = 0  # padding for 8-byte loads (see _word_view)
        data[: offsets[-1]] = buffer[is_text]
        return cls(data[: offsets[-1]], offsets)

    @classmethod
    def concat(cls, parts: Sequence[_Strings]) -> _Strings:
        if not parts:
            return cls(np.zeros(0, np.uint8), np.zeros(1, np.int64))
        data = np.concatenate([p.data for p in parts] + [np.zeros(_PAD, np.uint8)])[:-_PAD]
        shifts = np.cumsum([0] + [len(p.data) for p in parts[:-1]])
        offsets = np.concatenate(
            [parts[0].offsets[:1]] + [p.offsets[1:] + s for p, s in zip(parts, shifts, strict=True)]
        )
        return cls(data, offsets)

    def hashes(self) -> U64Array:
        """64-bit hash of each string (used to join and dedupe; matches are verified)."""
        lengths = self.lengths
        out = np.empty(len(lengths), dtype=np.uint64)
        step = 1 << 16
        base = self.data.base
        if isinstance(base, np.ndarray) and base.ndim == 1 and len(base) >= len(self.data) + _PAD:
            words = _word_view(self.data)
            n_words = max(1, -(-int(lengths.max(initial=1)) // 8))
            for first in range(0, len(lengths), step):
                part = slice(first, first + step)
                token = _token_words(words, self.offsets[:-1][part], lengths[part], n_words)
                out[part] = _hash_words(token, lengths[part])
            return out
        for first in range(0, len(lengths), step):
            rows = np.arange(first, min(first + step, len(lengths)))
            out[rows] = _hash_fixed(self.fixed(rows), lengths[rows])
        return out

    def token_words(self, rows: IntArray, n_words: int) -> U64Array:
        """As :func:`_token_words`: ``(len(rows), n_words)`` little-endian 8-byte words."""
        base = self.data.base
        if isinstance(base, np.ndarray) and base.ndim == 1 and len(base) >= len(self.data) + _PAD:
            starts, lengths = self.offsets[rows], self.lengths[rows]
            return _token_words(_word_view(self.data), starts, lengths, n_words)
        fixed = self.fixed(rows, 8 * n_words)
        return np.ascontiguousarray(fixed).view("<u8").astype(np.uint64)

    def fixed(self, rows: IntArray, width: int | None = None) -> U8Array:
        """Rows as a zero-padded ``(len(rows), width)`` byte matrix."""
        lengths = self.lengths[rows]
        if width is None:
            width = int(lengths.max()) if len(rows) else 0
        out = np.zeros((len(rows), width), dtype=np.uint8)
        active = np.arange(len(rows))
        starts = self.offsets[rows]
        for j in range(width):
            active = active[lengths[active] > j]
            if not active.size:
                break
            out[active, j] = self.data[starts[active] + j]
        return out

    def equal(self, rows: IntArray, other: _Strings, other_rows: IntArray) -> npt.NDArray[np.bool_]:
        """Exact elementwise equality of ``self[rows]`` and ``other[other_rows]``."""
        same_length = self.lengths[rows] == other.lengths[other_rows]
        width = int(
            max(self.lengths[rows].max(initial=0), other.lengths[other_rows].max(initial=0))
        )
        n_words = max(1, -(-width // 8))
        mine = self.token_words(rows, n_words)
        theirs = other.token_words(other_rows, n_words)
        return np.asarray(same_length & (mine == theirs).all(axis=1))

    def get(self, i: int) -> str:
        return self.data[self.offsets[i] : self.offsets[i + 1]].tobytes().decode("utf-8")

    def decode(self, rows: IntArray | None = None) -> list[str]:
        raw = self.data.tobytes()
        offsets = self.offsets.tolist()
        if rows is None:
            return [raw[a:b].decode("utf-8") for a, b in itertools.pairwise(offsets)]
        return [raw[offsets[i] : offsets[i + 1]].decode("utf-8") for i in rows.tolist()]


def _hash_fixed(fixed: U8Array, lengths: IntArray) -> U64Array:
    """Hash zero-padded byte rows 8 bytes at a time; independent of the padding width."""
    n, width = fixed.shape
    words = -(-width // 8)
    if words * 8 != width:
        padded = np.zeros((n, words * 8), dtype=np.uint8)
        padded[:, :width] = fixed
        fixed = padded
    as_words = np.ascontiguousarray(fixed).view("<u8")
    h = _FNV_OFFSET ^ lengths.astype(np.uint64)
    for c in range(words):
        mixed = (h ^ as_words[:, c]) * _FNV_PRIME
        mixed ^= mixed >> np.uint64(29)
        h = np.where(lengths > 8 * c, mixed, h)
    return h


# --------------------------------------------------------------------------------------------
# Reading whitespace-separated files in blocks of bytes.


_PAD = 8  # zero bytes kept after every block so that 8-byte loads never run past the end


def _read_blocks(path: PathLike, block_bytes: int) -> Iterator[tuple[U8Array, int, int]]:
    """Yield ``(bytes of whole lines, 1-based number of the block's first line, lines)``.

    Each block is a view of a larger array followed by at least ``_PAD`` zero bytes, which
    :func:`_word_view` relies on.  A missing final newline is supplied.
    """
    line_no = 1
    carry = b""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in the finally below
    except OSError as exc:
        raise unreadable(path, exc) from None
    try:
        while True:
            room = len(carry) + block_bytes
            buffer = np.empty(room + 1 + _PAD, dtype=np.uint8)
            buffer[: len(carry)] = np.frombuffer(carry, dtype=np.uint8)
            got = handle.readinto(memoryview(buffer)[len(carry) : room])  # type: ignore[arg-type]
            filled = len(carry) + got
            if not got:
                if not carry:
                    return
                buffer[filled] = 10
                buffer[filled + 1 : filled + 1 + _PAD] = 0
                block = buffer[: filled + 1]
                yield block, line_no, int(np.count_nonzero(block == 10))
                return
            cut = _last_newline(buffer, filled)
            if cut < 0:
                carry = buffer[:filled].tobytes()
                continue
            carry = buffer[cut + 1 : filled].tobytes()
            buffer[cut + 1 : cut + 1 + _PAD] = 0
            block = buffer[: cut + 1]
            n_lines = int(np.count_nonzero(block == 10))
            yield block, line_no, n_lines
            line_no += n_lines
    finally:
        handle.close()


def _last_newline(buffer: U8Array, filled: int) -> int:
    """Index of the last ``\\n`` in ``buffer[:filled]``, or -1."""
    tail = 1 << 16
    while True:
        first = max(0, filled - tail)
        found = np.flatnonzero(buffer[first:filled] == 10)
        if found.size:
            return first + int(found[-1])
        if first == 0:
            return -1
        tail *= 16


def _word_view(block: U8Array) -> U64Array:
    """Little-endian 8-byte words starting at *every* byte of ``block`` (a strided view).

    ``view[i]`` holds bytes ``i .. i + 7``; gathering ``view[starts]`` loads 8 bytes of each
    token in one fancy-indexing step instead of 8.  Needs the ``_PAD`` bytes after the block
    that :func:`_read_blocks` provides.
    """
    base = block.base if block.base is not None else block
    assert isinstance(base, np.ndarray) and len(base) >= len(block) + _PAD
    return np.ndarray(shape=(len(block) + 1,), dtype="<u8", buffer=base, offset=0, strides=(1,))


_LOW_BYTES = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _token_words(words: U64Array, starts: IntArray, lengths: IntArray, n_words: int) -> U64Array:
    """``(n, n_words)`` little-endian words of each token, bytes past its end zeroed.

    Two tokens are equal exactly when their lengths and words are (tokens hold no NUL byte).
    """
    out = np.empty((len(starts), n_words), dtype=np.uint64)
    last = len(words) - 1
    for c in range(n_words):
        at = starts + 8 * c
        if c:
            np.minimum(at, last, out=at)
        out[:, c] = words[at]
        out[:, c] &= _LOW_BYTES[np.clip(lengths - 8 * c, 0, 8) if n_words > 1 else lengths]
    return out


def _hash_words(token_words: U64Array, lengths: IntArray) -> U64Array:
    """The hash of :func:`_hash_fixed`, computed from :func:`_token_words` output."""
    h = _FNV_OFFSET ^ lengths.astype(np.uint64)
    for c in range(token_words.shape[1]):
        mixed = (h ^ token_words[:, c]) * _FNV_PRIME
        mixed ^= mixed >> np.uint64(29)
        h = mixed if c == 0 else np.where(lengths > 8 * c, mixed, h)
    return h


_POW10_FLOAT = 10.0 ** np.arange(23)
_EXACT_MANTISSA = 1 << 53


def _parse_decimals(
    words: U64Array, starts: IntArray, lengths: IntArray
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Parse ``[+-]digits[.digits]`` tokens exactly as ``float()`` does, vectorised.

    The digits form an integer mantissa ``m`` and the fraction length ``f``; ``m / 10**f``
    is one correctly rounded division of two exactly representable numbers when
    ``m <= 2**53`` and ``f <= 22``, hence identical to ``float(token)``.  Returns the values
    and a mask of the tokens this handles; the others (exponents, inf, very long numbers,
    garbage) are left to the caller.
    """
    n = len(starts)
    width = min(int(lengths.max(initial=1)), 24)
    n_words = -(-width // 8)
    # One row per character position (bytes past a token's end are 0: neither digit nor dot).
    chars = np.ascontiguousarray(
        _token_words(words, starts, lengths, n_words).view(np.uint8).reshape(n, -1)[:, :width].T
    )
    digits = chars - np.uint8(48)  # bytes below '0' wrap around to large values
    is_digit = digits <= 9
    is_dot = chars == 46
    digits[~is_digit] = 0
    scale = np.where(is_digit, np.uint8(10), np.uint8(1))
    mantissa = digits[0].astype(np.int64)
    for column in range(1, width):
        mantissa *= scale[column]
        mantissa += digits[column]
    n_digits = np.zeros(n, dtype=np.uint8)  # width <= 24: no overflow
    n_dots = np.zeros(n, dtype=np.uint8)
    fraction = np.zeros(n, dtype=np.uint8)
    seen_dot = np.zeros(n, dtype=bool)
    for column in range(width):
        n_digits += is_digit[column]
        fraction += is_digit[column] & seen_dot
        n_dots += is_dot[column]
        seen_dot |= is_dot[column]
    negative = chars[0] == 45
    n_signs = negative | (chars[0] == 43)
    n_signs = n_signs.view(np.uint8)
    ok = (n_digits + n_dots + n_signs == lengths) & (n_dots <= 1) & (n_digits >= 1)
    ok &= (n_digits <= 18) & (mantissa <= _EXACT_MANTISSA) & (fraction <= 22)
    result = mantissa / _POW10_FLOAT[np.where(ok, fraction, 0)]
    np.negative(result, out=result, where=negative)
    return result, ok


def _split_simple(
    block: U8Array, n_fields: int, first_line: int
) -> tuple[IntArray, IntArray, IntArray] | None:
    """Fast path for the usual layout: single separators, no blank lines, n fields per line.

    Returns token starts and ends of shape ``(n_lines, n_fields)`` and the line numbers, or
    None when the block does not have that layout (the general path then handles it and
    produces the error messages).
    """
    ends = _regular_separators(block, n_fields, int(np.count_nonzero(block == 10)))
    if ends is None:
        return None
    starts = np.empty_like(ends)
    starts.flat[0] = 0
    starts.flat[1:] = ends.ravel()[:-1] + 1
    return starts, ends, np.arange(first_line, first_line + len(ends))


def _regular_separators(block: U8Array, n_fields: int, n_newlines: int) -> IntArray | None:
    """Separator positions as ``(n_lines, n_fields)`` when every line is regular, else None.

    Regular: ``n_fields`` tokens separated by exactly one blank byte (space, tab, ...) and
    ended by ``\\n``; the last column is then the newline.  Token ``j`` of line ``i`` spans
    ``[separators[i, j-1] + 1, separators[i, j])`` (the previous line's newline for j = 0).
    """
    blank = block <= 32
    if not len(block) or blank[0] or np.any(blank[1:] & blank[:-1]):
        return None  # leading blank, blank lines, CRLF or double spaces: general path
    flat = np.flatnonzero(blank)
    n_lines = len(flat) // n_fields
    if n_lines == 0 or n_lines * n_fields != len(flat):
        return None
    separators: IntArray = flat.reshape(n_lines, n_fields)
    if not np.all(block[separators[:, -1]] == 10):
        return None
    if n_newlines != n_lines:
        return None  # some line has a newline where a field separator should be
    return separators


def _column(separators: IntArray, j: int) -> tuple[IntArray, IntArray]:
    """Starts and ends of token column ``j`` from :func:`_regular_separators` output."""
    ends = separators[:, j]
    if j:
        return separators[:, j - 1] + 1, ends
    starts = np.empty_like(ends)
    starts[:1] = 0
    np.add(separators[:-1, -1], 1, out=starts[1:])
    return starts, ends


def _split_fields(
    block: U8Array, names: Sequence[str], path: str, first_line: int
) -> tuple[IntArray, IntArray, IntArray]:
    """Token starts/ends of shape (n_lines, n_fields) and line numbers; blank lines skipped."""
    n_fields = len(names)
    fast = _split_simple(block, n_fields, first_line)
    if fast is not None:
        return fast
    # One pass finds every blank<->filled transition: starts and ends of tokens alternate.
    blank = np.empty(len(block) + 1, dtype=np.int8)
    blank[0] = 1
    np.less_equal(block, 32, out=blank[1:].view(np.bool_))  # space, tab, CR, LF, controls
    edges = np.flatnonzero(np.diff(blank))
    starts, ends = edges[0::2], edges[1::2]
    newlines = np.flatnonzero(block == 10)
    tokens_before = np.searchsorted(starts, newlines)
    per_line = np.diff(tokens_before, prepend=0)
    wrong = np.flatnonzero((per_line != n_fields) & (per_line != 0))
    if wrong.size:
        bad = int(wrong[0])
        raise FormatError(
            f"expected {n_fields} whitespace-separated fields ({', '.join(names)}), "
            f"found {int(per_line[bad])}",
            path=path,
            line=first_line + bad,
        )
    lines = np.flatnonzero(per_line) + first_line
    return starts.reshape(-1, n_fields), ends.reshape(-1, n_fields), lines


def _fixed_from_block(block: U8Array, starts: IntArray, ends: IntArray) -> U8Array:
    """Tokens as a zero-padded ``(n, max_length)`` byte matrix, gathered straight from a block."""
    lengths = ends - starts
    width = int(lengths.max()) if len(lengths) else 0
    if len(lengths) * width > (1 << 26):  # a few very long tokens: go column by column
        return _Strings.from_buffer(block, starts, ends).fixed(np.arange(len(starts)))
    positions = starts[:, None] + np.arange(width)
    np.minimum(positions, len(block) - 1, out=positions)
    out = block[positions]
    out[np.arange(width)[None, :] >= lengths[:, None]] = 0
    return out


def _parse_numbers(
    block: U8Array,
    starts: IntArray,
    ends: IntArray,
    lines: IntArray,
    dtype: type[np.generic],
    field: str,
    path: str,
) -> npt.NDArray[Any]:
    """Parse numeric tokens with numpy; on failure locate the first bad line exactly."""
    fixed = _fixed_from_block(block, starts, ends)
    as_bytes = (
        fixed.view(f"S{max(fixed.shape[1], 1)}").ravel() if len(fixed) else np.array([], "S1")
    )
    try:
        if dtype is np.int64:
            values = as_bytes.astype(np.float64)
            if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
                raise ValueError
            return values.astype(np.int64)
        values = as_bytes.astype(np.float64)
        if not np.all(np.isfinite(values)):
            raise ValueError
        return values
    except ValueError:
        pass
    kind = "an integer" if dtype is np.int64 else "a number"
    for i, token in enumerate(_Strings.from_buffer(block, starts, ends).decode()):
        try:
            value = float(token)
        except ValueError:
            value = float("nan")
        if not np.isfinite(value) or (dtype is np.int64 and not value.is_integer()):
            raise FormatError(
                f"expected {kind}, found {token!r}", path=path, line=int(lines[i]), field=field
            ) from None
    raise AssertionError("unreachable: numpy rejected a column that float() accepts")


@dataclass
class _QidCoder:
    """Maps question-id strings to dense integers in order of first appearance."""

    index: dict[str, int]

    def code_block(self, block: U8Array, starts: IntArray, ends: IntArray) -> IntArray:
        """Codes for a block of question ids, decoding only where the id changes."""
        n = len(starts)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        lengths = ends - starts
        fixed = _fixed_from_block(block, starts, ends)
        changes = np.ones(n, dtype=bool)
        changes[1:] = (lengths[1:] != lengths[:-1]) | (fixed[1:] != fixed[:-1]).any(axis=1)
        heads = np.flatnonzero(changes)
        codes = np.empty(len(heads), dtype=np.int64)
        names = [block[starts[h] : ends[h]].tobytes().decode("utf-8") for h in heads.tolist()]
        for pos, name in enumerate(names):
            codes[pos] = self.index.setdefault(name, len(self.index))
        return np.repeat(codes, np.diff(np.append(heads, n)))

    def code_words(
        self, block: U8Array, words: U64Array, starts: IntArray, ends: IntArray
    ) -> IntArray:
        """Same as :meth:`code_block`, comparing 8-byte words instead of single bytes."""
        n = len(starts)
        lengths = ends - starts
        n_words = max(1, -(-int(lengths.max(initial=1)) // 8))
        token = _token_words(words, starts, lengths, n_words)
        changes = np.ones(n, dtype=bool)
        if n_words == 1:
            changes[1:] = token[1:, 0] != token[:-1, 0]
        else:
            changes[1:] = (token[1:] != token[:-1]).any(axis=1)
        changes[1:] |= lengths[1:] != lengths[:-1]
        heads = np.flatnonzero(changes)
        index = self.index
        # Fixed-width bytes drop their trailing NULs, which are exactly the padding.
        names = token[heads].astype("<u8").view(f"S{8 * n_words}").ravel().tolist()
        # One decode for all heads (ids hold no newline, so the split is exact).
        decoded = b"\n".join(names).decode("utf-8").split("\n")
        codes = np.array([index.setdefault(qid, len(index)) for qid in decoded], dtype=np.int64)
        return np.repeat(codes, np.diff(np.append(heads, n)))


# --------------------------------------------------------------------------------------------
# Columnar runs.


@dataclass(frozen=True)
class RunColumns:
    """A run as integer-coded columns, rows grouped by question in rank order.

    Attributes
    ----------
    qids : tuple of str
        Question ids in order of first appearance.
    offsets : int ndarray of shape (n_questions + 1,)
        Rows ``offsets[q]:offsets[q + 1]`` are question ``q``'s ranking, best first.
    items : _Strings
        Item ids, in file order (use ``row_order`` to read them in rank order).
    row_order : int ndarray
        ``items`` row of each ranked row.
    item_hash : uint64 ndarray
        Hash of each ranked row's item id (for joins; matches are verified exactly).
    scores : float ndarray or None
        Score of each ranked row.
    tied_groups : int
        Groups of two or more items sharing a score within one question.
    """

    qids: tuple[str, ...]
    offsets: IntArray
    items: _Strings
    row_order: IntArray
    item_hash: U64Array
    scores: npt.NDArray[np.float64] | None
    tied_groups: int

    @property
    def n_rows(self) -> int:
        return int(self.offsets[-1])

    def question_of_row(self) -> IntArray:
        """Question index of every ranked row."""
        return np.repeat(np.arange(len(self.qids)), np.diff(self.offsets))

    def rank_of_row(self) -> IntArray:
        """0-based rank of every ranked row within its question."""
        return np.arange(self.n_rows) - np.repeat(self.offsets[:-1], np.diff(self.offsets))


def _may_repeat(q: IntArray, item_hash: U64Array) -> bool:
    """False when no question lists one item hash twice (True may be a hash collision).

    Rows grouped by question are checked with one short sort per question (a padded grid),
    much cheaper than sorting all keys together.
    """
    n = len(q)
    if n < 2:
        return False
    if not np.any(q[1:] < q[:-1]):
        counts = np.bincount(q)
        depth = int(counts.max())
        n_questions = len(counts)
        if n_questions * depth <= 2 * n + 100_000:
            # Sort the top 32 bits only (half the memory traffic); a 32-bit match sends
            # that question to the exact 64-bit check below.
            high = (item_hash >> np.uint64(32)).astype(np.uint32)
            if np.all(counts == depth):
                grid = high.reshape(n_questions, depth)
            else:
                # Padding cells hold distinct numbers: at worst a false alarm.
                grid = np.arange(n_questions * depth, dtype=np.uint32)
                starts = np.zeros(n_questions, dtype=np.int64)
                np.cumsum(counts[:-1], out=starts[1:])
                shift = np.arange(0, n_questions * depth, depth, dtype=np.int64) - starts
                cell = np.repeat(shift, counts)
                cell += np.arange(n)
                grid[cell] = high
                del cell
                grid = grid.reshape(n_questions, depth)
            del high
            grid.sort(axis=1)
            suspects = np.flatnonzero((grid[:, 1:] == grid[:, :-1]).any(axis=1))
            del grid
            if not suspects.size:
                return False
            rows = np.flatnonzero(np.isin(q, suspects))
            q, item_hash = q[rows], item_hash[rows]
    keys = item_hash + q.astype(np.uint64) * _QID_MIX
    keys.sort()
    return bool(np.any(keys[1:] == keys[:-1]))


def _dedupe(
    q: IntArray,
    item_hash: U64Array,
    items: _Strings,
    qids: Sequence[str],
    policy: str,
    name: str | None,
) -> IntArray:
    """Rows to keep (file order); duplicates of (question, item) raise or keep the first."""
    if not _may_repeat(q, item_hash):
        return np.arange(len(q))
    keys = item_hash + q.astype(np.uint64) * _QID_MIX
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    same = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if not same.size:
        return np.arange(len(q))
    first, second = order[same], order[same + 1]
    real = (q[first] == q[second]) & items.equal(first, items, second)
    if not real.any():
        return np.arange(len(q))  # hash collisions only
    if policy == "error":
        row = int(second[real].min())  # the first repeat in row order, as a reader meets it
        where = f"{name}: " if name else ""
        raise InputError(
            f"{where}question {qids[int(q[row])]!r}: item {items.get(row)!r} appears more than "
            "once in the ranking; pass duplicates='first' (--duplicates first) to keep the first"
        )
    # Within a run of equal keys the stable sort put rows in file order: drop all but the first.
    drop = np.maximum(first[real], second[real])
    keep = np.ones(len(q), dtype=bool)
    keep[drop] = False
    return np.flatnonzero(keep)


def _rank_rows(
    q: IntArray, scores: npt.NDArray[np.float64] | None, items: _Strings, n_questions: int
) -> tuple[IntArray | None, int]:
    """Permutation putting rows in (question, score desc, id desc) order, and tie count.

    The permutation is None when the rows are already in that order (the usual case for
    files written by a ranker), which saves copying every column.
    """
    n = len(q)
    grouped = n == 0 or not np.any(q[1:] < q[:-1])
    perm: IntArray | None = None if grouped else np.argsort(q, kind="stable")
    if scores is None:
        return perm, 0
    qs, sc = (q, scores) if perm is None else (q[perm], scores[perm])
    same_q = qs[1:] == qs[:-1]
    if np.any(same_q & (sc[1:] > sc[:-1])):
        # Sorting within questions leaves ``qs`` as it is.  The sort need not be stable:
        # the order inside every tie is settled by item id below.
        counts = np.bincount(qs, minlength=n_questions)
        depth = int(counts.max())
        order: IntArray
        if n_questions * depth == n:  # every question has `depth` rows: a full grid as is
            within = np.argsort(-sc.reshape(n_questions, depth), axis=1)
            within += np.arange(0, n, depth)[:, None]
            order = within.reshape(-1)
        elif n_questions * depth <= 4 * n + 1_000_000:
            # Row i goes to cell (question, position in question) of a padded grid; the
            # padding (+inf) sorts last, so a filled cell reads back the row now there.
            row_start = np.zeros(n_questions, dtype=np.int64)
            np.cumsum(counts[:-1], out=row_start[1:])
            row_start = np.repeat(row_start, counts)
            cell = np.arange(n)
            cell -= row_start
            cell += qs * depth
            grid = np.full(n_questions * depth, np.inf)
            grid[cell] = -sc
            within = np.argsort(grid.reshape(n_questions, depth), axis=1).reshape(-1)
            order = within[cell]
            order += row_start
        else:
            order = np.lexsort((-sc, qs))
        perm = order if perm is None else perm[order]
        sc = sc[order]
    tied = same_q & (sc[1:] == sc[:-1])
    del qs, sc, same_q
    pairs = np.flatnonzero(tied)  # row i ties with row i + 1
    if not pairs.size:
        return perm, 0
    # Only rows inside tie blocks move: each block is ordered by item id descending
    # (trec_eval's rule).  Work on those rows alone.
    in_tie = np.zeros(n, dtype=bool)
    in_tie[pairs] = True
    in_tie[pairs + 1] = True
    tie_rows = np.flatnonzero(in_tie)
    block_start = np.ones(len(tie_rows), dtype=bool)
    block_start[1:] = ~tied[tie_rows[1:] - 1]
    block_id = np.cumsum(block_start)
    moved = tie_rows if perm is None else perm[tie_rows]
    local = np.lexsort((*_descending_keys(items, moved), block_id))
    if perm is None:
        perm = np.arange(n)
    perm[tie_rows] = moved[local]
    return perm, int(np.count_nonzero(block_start))


def _run_block_fast(
    block: U8Array,
    separators: IntArray,
    first_line: int,
    coder: _QidCoder,
    name: str,
) -> tuple[IntArray, _Strings, U64Array, npt.NDArray[np.float64]]:
    """Parse a block of regular run lines (see :func:`_regular_separators`), 8 bytes a load."""
    words = _word_view(block)
    q_codes = coder.code_words(block, words, *_column(separators, 0))
    item_start, item_end = _column(separators, 2)
    item_length = item_end - item_start
    n_words = max(1, -(-int(item_length.max(initial=1)) // 8))
    item_words = _token_words(words, item_start, item_length, n_words)
    hashes = _hash_words(item_words, item_length)
    items = _Strings.from_token_words(item_words, item_length)
    del item_words
    score_start, score_end = _column(separators, 4)
    scores, parsed = _parse_decimals(words, score_start, score_end - score_start)
    for row in np.flatnonzero(~parsed).tolist():
        token = block[score_start[row] : score_end[row]].tobytes()
        scores[row] = _number_or_error(token, "a number", first_line + row, "score", name)
    return q_codes, items, hashes, scores


def _number_or_error(token: bytes, kind: str, line: int, field: str, path: str) -> float:
    """``float(token)`` for the rare token the vectorised parser leaves; finite or an error."""
    text = token.decode("utf-8", errors="replace")
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not np.isfinite(value) or (kind == "an integer" and not value.is_integer()):
        raise FormatError(f"expected {kind}, found {text!r}", path=path, line=line, field=field)
    return value


def _descending_keys(items: _Strings, rows: IntArray) -> list[U64Array]:
    """:func:`numpy.lexsort` keys (least significant first) ordering ``items[rows]`` by
    strcmp descending: big-endian 8-byte words compare like the bytes they hold, and a
    shorter string's zero padding sorts it before its extensions, as strcmp does."""
    width = int(items.lengths[rows].max(initial=0))
    n_words = max(1, -(-width // 8))
    words = items.token_words(rows, n_words).astype("<u8").view(">u8").astype(np.uint64)
    return [~words[:, c] for c in range(n_words - 1, -1, -1)]


class _Column:
    """A growing numpy column: blocks are copied into one array sized by an estimate."""

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


def _file_size(path: PathLike) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


_Block = tuple[U8Array, int, int]
_ParsedRunBlock = tuple[list[str], IntArray, _Strings, U64Array, npt.NDArray[np.float64]]
_T = TypeVar("_T")


def _map_in_order(
    parse: Callable[[_Block], _T], blocks: Iterator[_Block], threads: int
) -> Iterator[_T]:
    """``map(parse, blocks)`` with up to ``threads`` blocks parsed at once, results in order.

    Results come back in block order, so the first error in file order is the one raised;
    the next block is read while the others are parsed.
    """
    if threads <= 1:
        yield from map(parse, blocks)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        pending: deque[Future[_T]] = deque()
        try:
            for block in blocks:
                pending.append(pool.submit(parse, block))
                if len(pending) >= threads:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def _parse_run_block(
    block: U8Array, first_line: int, n_newlines: int, name: str
) -> _ParsedRunBlock | None:
    """Question ids (block order), block-local question codes, items, hashes and scores."""
    coder = _QidCoder({})
    separators = _regular_separators(block, len(_RUN_FIELDS), n_newlines)
    if separators is not None:
        q_codes, items, hashes, scores = _run_block_fast(block, separators, first_line, coder, name)
        return list(coder.index), q_codes, items, hashes, scores
    starts, ends, lines = _split_fields(block, _RUN_FIELDS, name, first_line)
    if not len(lines):
        return None
    q_codes = coder.code_block(block, starts[:, 0], ends[:, 0])
    items = _Strings.from_buffer(block, starts[:, 2], ends[:, 2])
    hashes = _hash_fixed(
        _fixed_from_block(block, starts[:, 2], ends[:, 2]), ends[:, 2] - starts[:, 2]
    )
    scores = _parse_numbers(block, starts[:, 4], ends[:, 4], lines, np.float64, "score", name)
    return list(coder.index), q_codes, items, hashes, scores


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
        Bytes read per block (memory/speed trade-off).
    threads : int
        Blocks parsed at once (numpy releases the GIL); 1 parses in the calling thread.
        The result does not depend on it.

    Returns
    -------
    RunColumns
    """
    if order not in ("score", "given"):
        raise InputError(f"order: expected 'score' or 'given', found {order!r}")
    if duplicates not in ("error", "first"):
        raise InputError(f"duplicates: expected 'error' or 'first', found {duplicates!r}")
    name = str(path)
    index: dict[str, int] = {}
    q_parts = _Column(np.int64)
    item_data = _Column(np.uint8, pad=_PAD)
    item_lengths = _Column(np.int64)
    score_parts = _Column(np.float64)
    hash_parts = _Column(np.uint64)
    blocks = _read_blocks(path, block_bytes)
    for block_len, parsed in _map_in_order(
        lambda b: (len(b[0]), _parse_run_block(*b, name)), blocks, threads
    ):
        if parsed is None:
            continue
        block_qids, local_codes, items, hashes, scores = parsed
        # Block-local codes become file-wide codes in block order: first appearance wins.
        to_global = np.array(
            [index.setdefault(qid, len(index)) for qid in block_qids], dtype=np.int64
        )
        q_codes = to_global[local_codes]
        # Rows per byte of the first block size the columns for the whole file.
        expect = 1 + int(len(q_codes) * (_file_size(path) + 1) / max(block_len, 1) * 1.02)
        q_parts.append(q_codes, expect)
        item_data.append(items.data, int(expect * len(items.data) / max(len(q_codes), 1)))
        item_lengths.append(items.lengths, expect)
        hash_parts.append(hashes, expect)
        score_parts.append(scores, expect)
        del q_codes, local_codes, items, hashes, scores, parsed
    qids = tuple(index)
    q = q_parts.result()
    lengths = item_lengths.result()
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    del lengths
    items = _Strings(item_data.result(), offsets)
    scores = score_parts.result()
    item_hash = hash_parts.result()
    keep = _dedupe(q, item_hash, items, qids, duplicates, name)
    if len(keep) != len(q):
        q, scores, item_hash = q[keep], scores[keep], item_hash[keep]
    perm, tied_groups = _rank_rows(
        q, scores if order == "score" else None, items_view(items, keep), len(qids)
    )
    if order == "given" and len(scores):
        tied_groups = _count_ties(q, scores)
    counts = np.bincount(q, minlength=len(qids))
    del q
    offsets = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if perm is not None:
        keep, item_hash, scores = keep[perm], item_hash[perm], scores[perm]
    return RunColumns(
        qids=qids,
        offsets=offsets,
        items=items,
        row_order=keep,
        item_hash=item_hash,
        scores=scores,
        tied_groups=tied_groups,
    )


def items_view(items: _Strings, rows: IntArray) -> _Strings:
    """``items`` restricted to ``rows`` (a copy when rows is not the identity)."""
    if len(rows) == len(items):
        return items
    lengths = items.lengths[rows]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    positions = np.repeat(items.offsets[rows] - offsets[:-1], lengths) + np.arange(offsets[-1])
    return _Strings(items.data[positions], offsets)


def _count_ties(q: IntArray, scores: npt.NDArray[np.float64]) -> int:
    """Groups of >= 2 rows sharing (question, score), in any row order."""
    order = np.lexsort((scores, q)) if len(q) else np.zeros(0, dtype=np.int64)
    qs, sc = q[order], scores[order]
    tied = (qs[1:] == qs[:-1]) & (sc[1:] == sc[:-1])
    # a group starts where a tie begins after a non-tie
    starts = tied & ~np.concatenate(([False], tied[:-1]))
    return int(np.count_nonzero(starts))


def _flatten_rankings(
    rankings: Sequence[Any],
) -> tuple[list[Any], npt.NDArray[np.float64] | None, bool] | None:
    """All questions' ids back to back, their scores (None: no scores) and whether the ids
    of each question are known to be distinct (dict keys), using C-level iteration only.

    None when the rankings are not all of one kind the columns represent exactly (then
    :class:`Run` takes its per-question path, which also reports bad entries).
    """
    kinds = set(map(type, rankings))
    if all(issubclass(kind, dict) for kind in kinds):
        ids = list(itertools.chain.from_iterable(rankings))
        get_values = dict.values if kinds == {dict} else operator.methodcaller("values")
        values = itertools.chain.from_iterable(map(get_values, rankings))
        try:
            scores = np.fromiter(values, dtype=np.float64, count=len(ids))
        except (TypeError, ValueError):
            return None
        return ids, scores, True
    if not kinds <= {list, tuple}:
        return None
    flat = list(itertools.chain.from_iterable(rankings))
    if not flat or isinstance(flat[0], str):
        return flat, None, False  # the caller checks that every entry is a str
    # (id, score) pairs: an empty ranking would have no scores on the per-question path.
    if not all(rankings) or not set(map(type, flat)) <= {list, tuple}:
        return None
    if set(map(len, flat)) != {2}:
        return None
    try:
        scores = np.fromiter(map(operator.itemgetter(1), flat), dtype=np.float64, count=len(flat))
    except (TypeError, ValueError):
        return None
    return list(map(operator.itemgetter(0), flat)), scores, False


def columns_from_rankings(
    rankings: Mapping[str, RankingInput],
    *,
    order: str = "score",
    duplicates: str = "error",
    name: str | None = None,
) -> RunColumns | None:
    """:class:`RunColumns` for in-memory rankings, sorting every question at once.

    Same rules as the per-question path of :class:`Run`: with scores and ``order="score"``,
    rows are ranked by score descending, ties by id descending (UTF-8 byte order, which is
    code point order); ``tied_groups`` counts groups of >= 2 equal scores in a question;
    a repeated id raises or keeps its first occurrence.

    Parameters
    ----------
    rankings : mapping of str to ranking
        As :class:`Run` takes them.
    order, duplicates, name
        As :class:`Run`.

    Returns
    -------
    RunColumns or None
        None for inputs the columns would not represent exactly: non-string question ids or
        item ids, rankings of mixed kinds, invalid entries, NaN scores, ids holding NUL, or
        no ranked item at all.

    Examples
    --------
    >>> cols = columns_from_rankings({"q1": {"A": 0.5, "B": 0.9, "C": 0.5}})
    >>> cols.items.decode(cols.row_order), cols.scores.tolist(), cols.tied_groups
    (['B', 'C', 'A'], [0.9, 0.5, 0.5], 1)
    """
    qids = tuple(rankings)
    if not all(type(qid) is str for qid in qids):
        return None
    values = list(rankings.values())
    flattened = _flatten_rankings(values)
    if flattened is None:
        return None
    ids, scores, distinct = flattened
    if not ids:
        return None
    try:
        # join() raises on a non-str id.  NUL bytes would compare like the zero padding
        # of the id-descending tie break, so such ids take the per-question path.
        encoded = _Strings.from_list_without_nul(ids)
    except TypeError:
        return None
    del ids
    if encoded is None or (scores is not None and np.isnan(scores).any()):
        return None  # NaN has no place in the order either
    items = encoded
    counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    del values
    q = np.repeat(np.arange(len(qids), dtype=np.int64), counts)
    item_hash = items.hashes()
    # Keys of one dict are distinct strings: only lists can repeat an id.
    keep = np.arange(len(q)) if distinct else _dedupe(q, item_hash, items, qids, duplicates, name)
    if len(keep) != len(q):
        q, item_hash = q[keep], item_hash[keep]
        scores = None if scores is None else scores[keep]
    if scores is None:
        perm, tied_groups = None, 0
    elif order == "score":
        perm, tied_groups = _rank_rows(q, scores, items_view(items, keep), len(qids))
    else:
        perm, tied_groups = None, _count_ties(q, scores)
    offsets = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(q, minlength=len(qids)), out=offsets[1:])
    if perm is not None:
        keep, item_hash = keep[perm], item_hash[perm]
        scores = None if scores is None else scores[perm]
    return RunColumns(
        qids=qids,
        offsets=offsets,
        items=items,
        row_order=keep,
        item_hash=item_hash,
        scores=scores,
        tied_groups=tied_groups,
    )


class _ColumnarRun(Run):
    """A :class:`Run` made from :class:`RunColumns`; Python lists are built on first use."""

    def __init__(self, columns: RunColumns, *, unit: str, order: str, name: str | None) -> None:
        # Run.__init__ is bypassed on purpose: the columns are already ranked and deduplicated.
        self.unit = check_unit(unit)
        self.order = order
        self.name = name
        self._attach(columns)


def run_columns(run: Run) -> RunColumns:
    """The columns of any :class:`Run` (free for runs read from TREC files)."""
    columns = getattr(run, "columns", None)
    if isinstance(columns, RunColumns):
        return columns
    qids = tuple(run)
    rankings = [run[qid] for qid in qids]
    flat = list(itertools.chain.from_iterable(rankings))
    counts = np.fromiter(map(len, rankings), dtype=np.int64, count=len(rankings))
    offsets = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    items = _Strings.from_list(flat)
    scores = None
    if run.has_scores:
        scores = np.array(
            list(itertools.chain.from_iterable(run.scores(qid) or [] for qid in qids)),
            dtype=np.float64,
        )
    return RunColumns(
        qids=qids,
        offsets=offsets,
        items=items,
        row_order=np.arange(len(flat)),
        item_hash=items.hashes(),
        scores=scores,
        tied_groups=run.tied_groups,
    )


# --------------------------------------------------------------------------------------------
# TREC readers and writers.


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


@dataclass(frozen=True)
class QrelsColumns:
    """TREC qrels as integer-coded columns, one row per distinct (question, item) label.

    Attributes
    ----------
    qids : tuple of str
        Question ids in order of first appearance.
    q : int ndarray
        Question code (index into ``qids``) of each label.
    items : _Strings
        Item id of each label.
    item_hash : uint64 ndarray
        Hash of each item id (as :attr:`RunColumns.item_hash`).
    grades : int ndarray
        Grade of each label (the last line wins for a repeated pair, as in trec_eval).
    """

    qids: tuple[str, ...]
    q: IntArray
    items: _Strings
    item_hash: U64Array
    grades: IntArray


def read_qrels_columns(path: PathLike, block_bytes: int = _BLOCK_BYTES) -> QrelsColumns:
    """Read TREC qrels into :class:`QrelsColumns` (vectorised; see :func:`read_trec_qrels`).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("q1 0 A 2\\nq2 0 C 1\\nq1 0 A 0\\n")
    >>> cols = read_qrels_columns(path)
    >>> cols.qids, cols.q.tolist(), cols.items.decode(), cols.grades.tolist()
    (('q1', 'q2'), [0, 1], ['A', 'C'], [0, 1])
    """
    name = str(path)
    coder = _QidCoder({})
    q_parts: list[IntArray] = []
    item_parts: list[_Strings] = []
    hash_parts: list[U64Array] = []
    grade_parts: list[IntArray] = []
    for block, first_line, n_newlines in _read_blocks(path, block_bytes):
        separators = _regular_separators(block, len(_QRELS_FIELDS), n_newlines)
        if separators is not None:
            words = _word_view(block)
            q_parts.append(coder.code_words(block, words, *_column(separators, 0)))
            item_start, item_end = _column(separators, 2)
            lines = first_line + np.arange(len(separators))
            grade_start, grade_end = _column(separators, 3)
            values, parsed = _parse_decimals(words, grade_start, grade_end - grade_start)
            parsed &= values == np.round(values)
            for row in np.flatnonzero(~parsed).tolist():
                token = block[grade_start[row] : grade_end[row]].tobytes()
                values[row] = _number_or_error(token, "an integer", int(lines[row]), "grade", name)
            grades = values.astype(np.int64)
        else:
            starts, ends, lines = _split_fields(block, _QRELS_FIELDS, name, first_line)
            if not len(lines):
                continue
            grades = _parse_numbers(block, starts[:, 3], ends[:, 3], lines, np.int64, "grade", name)
            q_parts.append(coder.code_block(block, starts[:, 0], ends[:, 0]))
            item_start, item_end = starts[:, 2], ends[:, 2]
        negative = np.flatnonzero(grades < 0)
        if negative.size:
            raise FormatError(
                f"expected a grade >= 0, found {int(grades[negative[0]])}",
                path=name,
                line=int(lines[negative[0]]),
                field="grade",
            )
        item_length = item_end - item_start
        words = _word_view(block)
        n_words = max(1, -(-int(item_length.max(initial=1)) // 8))
        item_words = _token_words(words, item_start, item_length, n_words)
        hash_parts.append(_hash_words(item_words, item_length))
        item_parts.append(_Strings.from_token_words(item_words, item_length))
        grade_parts.append(grades)
    q = np.concatenate(q_parts) if q_parts else np.zeros(0, dtype=np.int64)
    items = _Strings.concat(item_parts)
    item_hash = np.concatenate(hash_parts) if hash_parts else np.zeros(0, dtype=np.uint64)
    grades = np.concatenate(grade_parts) if grade_parts else np.zeros(0, dtype=np.int64)
    if _may_repeat(q, item_hash):
        # Rare: a repeated (question, item) pair keeps its first position and last grade,
        # like the dict that trec_eval's reading amounts to.
        first: dict[tuple[int, str], int] = {}
        last_grade: dict[tuple[int, str], int] = {}
        pairs = zip(q.tolist(), items.decode(), grades.tolist(), strict=True)
        for row, (code, item, grade) in enumerate(pairs):
            first.setdefault((code, item), row)
            last_grade[(code, item)] = grade
        if len(first) != len(q):
            keep = np.fromiter(first.values(), dtype=np.int64, count=len(first))
            q, item_hash = q[keep], item_hash[keep]
            grades = np.fromiter(last_grade.values(), dtype=np.int64, count=len(first))
            items = items_view(items, keep)
    return QrelsColumns(tuple(coder.index), q, items, item_hash, grades)


class _ColumnarQrels(Qrels):
    """:class:`Qrels` backed by :class:`QrelsColumns`; the dicts are built on first use."""

    def __init__(self, columns: QrelsColumns, *, unit: str, name: str | None) -> None:
        # Qrels.__init__ is bypassed on purpose: the reader has validated every grade.
        self.unit = check_unit(unit)
        self.name = name
        self.columns = columns
        self._built: dict[str, dict[str, int]] | None = None

    def _build(self) -> dict[str, dict[str, int]]:
        if self._built is None:
            cols = self.columns
            built: dict[str, dict[str, int]] = {qid: {} for qid in cols.qids}
            qids = cols.qids
            for code, item, grade in zip(
                cols.q.tolist(), cols.items.decode(), cols.grades.tolist(), strict=True
            ):
                built[qids[code]][item] = grade
            self._built = built
            self._labels = built
        return self._built

    def __getitem__(self, qid: str) -> Mapping[str, int]:
        return self._build()[qid]

    def to_dict(self) -> dict[str, dict[str, int]]:
        self._build()
        return super().to_dict()

    def relevant(self, qid: str, threshold: int = 1) -> list[str]:
        self._build()
        return super().relevant(qid, threshold)

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns.qids)

    def __len__(self) -> int:
        return len(self.columns.qids)


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
    lines = [
        f"{qid} 0 {item} {int(grade)}"
        for qid, items in qrels.items()
        for item, grade in items.items()
    ]
    _check_ids(qrels)
    atomic_write_text(path, "".join(line + "\n" for line in lines))


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
    atomic_write_text(path, "".join(out))


def _check_ids(data: Mapping[str, Any]) -> None:
    for qid, items in data.items():
        for value in (qid, *items):
            if not value or any(ch.isspace() for ch in str(value)):
                raise InputError(
                    f"TREC format: ids must be non-empty without whitespace, found {value!r}"
                )


# --------------------------------------------------------------------------------------------
# JSONL / JSON.


def _json_records(path: PathLike) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, parsed object)``; a ``.json`` file is one document (line 1)."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(name, exc) from None
    if name.lower().endswith(".json"):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON: {exc.msg}", path=name, line=exc.lineno) from None
        for record in document if isinstance(document, list) else [document]:
            yield 1, record
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON: {exc.msg}", path=name, line=number) from None


def _field(record: Mapping[str, Any], key: str, path: str, line: int) -> Any:
    if key not in record:
        raise FormatError(
            f"expected a key {key!r}, found keys {sorted(record)}", path=path, line=line, field=key
        )
    return record[key]


def read_jsonl_qrels(path: PathLike, unit: str = "doc") -> Qrels:
    """Read qrels from JSONL ``{"qid": .., "docid": .., "grade": ..}`` (or one JSON object).

    A ``.json`` file may hold ``{qid: {docid: grade}}`` or a list of records.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "q.jsonl"
    >>> _ = path.write_text('{"qid": "q1", "docid": "A", "grade": 2}\\n')
    >>> read_jsonl_qrels(path).to_dict()
    {'q1': {'A': 2}}
    """
    name = str(path)
    labels: dict[str, dict[str, int]] = {}
    for line, record in _json_records(path):
        if not isinstance(record, Mapping):
            raise FormatError(
                f"expected a JSON object, found {type(record).__name__}", path=name, line=line
            )
        if "qid" not in record and all(isinstance(v, Mapping) for v in record.values()):
            for qid, items in record.items():
                row = labels.setdefault(str(qid), {})
                for item, grade in items.items():
                    row[str(item)] = _grade(grade, name, line)
            continue
        qid = str(_field(record, "qid", name, line))
        item = str(_field(record, "docid", name, line))
        labels.setdefault(qid, {})[item] = _grade(_field(record, "grade", name, line), name, line)
    return Qrels(labels, unit=unit, name=name)


def _grade(value: Any, path: str, line: int) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not float(value).is_integer()
    ):
        raise FormatError(
            f"expected an integer, found {value!r}", path=path, line=line, field="grade"
        )
    if value < 0:
        raise FormatError(
            f"expected a grade >= 0, found {value!r}", path=path, line=line, field="grade"
        )
    return int(value)


def _score(value: Any, path: str, line: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormatError(
            f"expected a number, found {value!r}", path=path, line=line, field="score"
        )
    return float(value)


def read_jsonl_run(
    path: PathLike, unit: str = "doc", order: str = "score", duplicates: str = "error"
) -> Run:
    """Read a run from JSONL.

    Each line is ``{"qid": .., "docid": .., "score": ..}`` or ``{"id": .., "ranking": [...]}``
    (ids in rank order, ``[id, score]`` pairs, or ``{id: score}``).  A ``.json`` file may
    hold ``{qid: {docid: score}}`` or ``{qid: [ids]}``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = path.write_text('{"id": "q1", "ranking": ["B", "A"]}\\n')
    >>> read_jsonl_run(path)["q1"]
    ['B', 'A']
    """
    name = str(path)
    rankings: dict[str, Any] = {}
    for line, record in _json_records(path):
        if not isinstance(record, Mapping):
            raise FormatError(
                f"expected a JSON object, found {type(record).__name__}", path=name, line=line
            )
        if "ranking" in record:
            qid = str(
                _field(record, "id", name, line)
                if "id" in record
                else _field(record, "qid", name, line)
            )
            rankings[qid] = _ranking(record["ranking"], name, line)
        elif "qid" in record:
            qid = str(record["qid"])
            item = str(_field(record, "docid", name, line))
            score = _score(_field(record, "score", name, line), name, line)
            rankings.setdefault(qid, []).append((item, score))
        elif all(isinstance(v, Mapping | list) for v in record.values()):
            for qid, ranking in record.items():
                rankings[str(qid)] = _ranking(ranking, name, line)
        else:
            raise FormatError(
                "expected keys 'qid', 'docid', 'score' or 'id', 'ranking', "
                f"found keys {sorted(record)}",
                path=name,
                line=line,
            )
    try:
        return Run(rankings, unit=unit, order=order, duplicates=duplicates, name=name)
    except InputError as exc:
        if isinstance(exc, FormatError):
            raise
        raise FormatError(str(exc), path=name) from None


def _ranking(value: Any, path: str, line: int) -> RankingInput:
    if isinstance(value, Mapping):
        return {str(k): _score(v, path, line) for k, v in value.items()}
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return [str(v) for v in value]
        pairs: list[tuple[str, float]] = []
        for entry in value:
            if not isinstance(entry, list | tuple) or len(entry) != 2:
                raise FormatError(
                    f"expected an id or an [id, score] pair, found {entry!r}",
                    path=path,
                    line=line,
                    field="ranking",
                )
            pairs.append((str(entry[0]), _score(entry[1], path, line)))
        return pairs
    raise FormatError(
        f"expected a list or an object, found {type(value).__name__}",
        path=path,
        line=line,
        field="ranking",
    )


def write_jsonl_qrels(path: PathLike, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write qrels as JSONL ``{"qid", "docid", "grade"}`` records (atomically)."""
    lines = [
        json.dumps({"qid": q, "docid": d, "grade": int(g)}, ensure_ascii=False)
        for q, items in qrels.items()
        for d, g in items.items()
    ]
    atomic_write_text(path, "".join(line + "\n" for line in lines))


def write_jsonl_run(path: PathLike, run: Run) -> None:
    """Write a run as JSONL, one ``{"id": qid, "ranking": [...]}`` record per question.

    The ranking holds ``[id, score]`` pairs when the run has scores, else ids in rank order.
    """
    lines = []
    for qid in run:
        scores = run.scores(qid)
        ranking: list[Any] = (
            list(run[qid])
            if scores is None
            else [[i, s] for i, s in zip(run[qid], scores, strict=True)]
        )
        lines.append(json.dumps({"id": qid, "ranking": ranking}, ensure_ascii=False))
    atomic_write_text(path, "".join(line + "\n" for line in lines))


# --------------------------------------------------------------------------------------------
# Dispatch on the file extension.


def _is_json(path: PathLike) -> bool:
    return str(path).lower().endswith((".jsonl", ".json", ".ndjson"))


def read_qrels(path: PathLike, unit: str = "doc") -> Qrels:
    """Read qrels from ``.jsonl``/``.json`` (JSON) or any other extension (TREC).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.json"
    >>> _ = path.write_text('{"q1": {"A": 1}}')
    >>> read_qrels(path).to_dict()
    {'q1': {'A': 1}}
    """
    return read_jsonl_qrels(path, unit) if _is_json(path) else read_trec_qrels(path, unit)


def read_run(
    path: PathLike, unit: str = "doc", order: str = "score", duplicates: str = "error"
) -> Run:
    """Read a run from ``.jsonl``/``.json`` (JSON) or any other extension (TREC).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.json"
    >>> _ = path.write_text('{"q1": ["B", "A"]}')
    >>> read_run(path)["q1"]
    ['B', 'A']
    """
    if _is_json(path):
        return read_jsonl_run(path, unit, order, duplicates)
    return read_trec_run(path, unit, order, duplicates)


# --------------------------------------------------------------------------------------------
# Chunk -> document maps.


def read_chunk_map(path: PathLike) -> dict[str, str]:
    """Read a chunk->document map: TSV ``chunk_id<TAB>doc_id`` lines, or a JSON object.

    A TSV header line ``chunk_id<TAB>doc_id`` is skipped; ``.json`` files hold
    ``{chunk_id: doc_id}``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "map.tsv"
    >>> _ = path.write_text("chunk_id\\tdoc_id\\nc1\\tD1\\nc2\\tD1\\n")
    >>> read_chunk_map(path)
    {'c1': 'D1', 'c2': 'D1'}
    """
    name = str(path)
    if name.lower().endswith(".json"):
        mapping: dict[str, str] = {}
        for number, record in _json_records(path):
            if not isinstance(record, Mapping) or not all(
                isinstance(v, str) for v in record.values()
            ):
                raise FormatError(
                    "expected a JSON object {chunk_id: doc_id}", path=name, line=number
                )
            mapping.update({str(k): v for k, v in record.items()})
        return mapping
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(name, exc) from None
    mapping = {}
    for number, text_line in enumerate(text.splitlines(), start=1):
        if not text_line.strip() or (number == 1 and text_line.split("\t")[:1] == ["chunk_id"]):
            continue
        fields = text_line.rstrip("\r").split("\t")
        if len(fields) != 2 or not fields[0] or not fields[1]:
            raise FormatError(
                f"expected 2 tab-separated fields (chunk_id, doc_id), found {len(fields)}",
                path=name,
                line=number,
            )
        mapping[fields[0]] = fields[1]
    return mapping


# --------------------------------------------------------------------------------------------
# pandas.


def _pandas() -> Any:
    return require("pandas", extra="pandas", feature="DataFrame conversion")


def qrels_to_dataframe(qrels: Qrels) -> Any:
    """Qrels as a DataFrame with columns ``qid, docid, grade``."""
    pd = _pandas()
    rows = [(q, d, g) for q, items in qrels.items() for d, g in items.items()]
    return pd.DataFrame(rows, columns=["qid", "docid", "grade"])


def qrels_from_dataframe(frame: Any, unit: str = "doc") -> Qrels:
    """Qrels from a DataFrame with columns ``qid, docid, grade``."""
    _require_columns(frame, ("qid", "docid", "grade"))
    labels: dict[str, dict[str, int]] = {}
    for qid, item, grade in zip(frame["qid"], frame["docid"], frame["grade"], strict=True):
        labels.setdefault(str(qid), {})[str(item)] = grade
    return Qrels(labels, unit=unit)


def run_to_dataframe(run: Run) -> Any:
    """A run as a DataFrame with columns ``qid, docid, rank, score`` (score NaN if absent)."""
    pd = _pandas()
    rows = []
    for qid in run:
        scores = run.scores(qid)
        for rank, item in enumerate(run[qid], start=1):
            rows.append((qid, item, rank, float("nan") if scores is None else scores[rank - 1]))
    return pd.DataFrame(rows, columns=["qid", "docid", "rank", "score"])


def run_from_dataframe(
    frame: Any, unit: str = "doc", order: str = "score", duplicates: str = "error"
) -> Run:
    """A run from a DataFrame with columns ``qid, docid, score`` (or ``qid, docid, rank``)."""
    if "score" in getattr(frame, "columns", ()):
        _require_columns(frame, ("qid", "docid", "score"))
        rankings: dict[str, Any] = {}
        for qid, item, score in zip(frame["qid"], frame["docid"], frame["score"], strict=True):
            rankings.setdefault(str(qid), []).append((str(item), float(score)))
        return Run(rankings, unit=unit, order=order, duplicates=duplicates)
    _require_columns(frame, ("qid", "docid", "rank"))
    ordered = frame.sort_values(["qid", "rank"], kind="stable")
    ranked: dict[str, Any] = {}
    for qid, item in zip(ordered["qid"], ordered["docid"], strict=True):
        ranked.setdefault(str(qid), []).append(str(item))
    return Run(ranked, unit=unit, order="given", duplicates=duplicates)


def _require_columns(frame: Any, columns: Sequence[str]) -> None:
    have = list(getattr(frame, "columns", ()))
    missing = [c for c in columns if c not in have]
    if missing:
        raise InputError(
            f"DataFrame: expected columns {', '.join(columns)}, missing {', '.join(missing)}"
        )
