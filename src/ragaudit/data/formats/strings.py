"""Compact string columns: many UTF-8 strings in one byte buffer, addressed by offsets.

The readers hand item ids over in this form (a pyarrow ``large_string`` column has exactly
this layout), and :mod:`ragaudit.metrics.evaluate` joins runs with labels through the 64-bit
hashes computed here (every hash match is verified byte for byte).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

# Public: the metrics join run and label ids through Strings and its hashes (QID_MIX), and
# pad their own buffers by PAD bytes.
__all__ = ["PAD", "QID_MIX", "IntArray", "Strings", "U8Array", "U64Array"]

IntArray = npt.NDArray[np.integer[Any]]  # int64, or int32 where the values fit
U8Array = npt.NDArray[np.uint8]
U64Array = npt.NDArray[np.uint64]

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
QID_MIX = np.uint64(0x9E3779B97F4A7C15)
PAD = 8  # zero bytes kept after string data so that 8-byte loads never run past the end


@dataclass(frozen=True)
class Strings:
    """UTF-8 strings stored back to back: string ``i`` is ``data[offsets[i]:offsets[i+1]]``."""

    data: U8Array
    offsets: IntArray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> IntArray:
        return np.diff(self.offsets)

    def lengths_of(self, rows: IntArray) -> IntArray:
        """``lengths[rows]`` without computing every length."""
        return self.offsets[rows + 1] - self.offsets[rows]

    @classmethod
    def from_buffer(cls, buffer: U8Array, starts: IntArray, ends: IntArray) -> Strings:
        lengths = ends - starts
        offsets = np.zeros(len(starts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        positions = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
        return cls(buffer[positions], offsets)

    @classmethod
    def from_token_words(cls, token_words: U64Array, lengths: IntArray) -> Strings:
        """Strings from :func:`_token_words` output (bytes past each end are dropped)."""
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        as_bytes = token_words.view(np.uint8)
        return cls(as_bytes[as_bytes != 0], offsets)  # tokens hold no NUL: the 0s are padding

    @classmethod
    def from_list(cls, strings: Sequence[str]) -> Strings:
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
            return cls(np.concatenate((data, np.zeros(PAD, np.uint8)))[: len(data)], offsets)
        encoded = [s.encode("utf-8") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(
            np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:]
        )
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        # Padded like the ASCII branch so that hashing can load 8 bytes at a time.
        return cls(np.concatenate((data, np.zeros(PAD, np.uint8)))[: len(data)], offsets)

    @classmethod
    def from_list_without_nul(cls, strings: Sequence[str]) -> Strings | None:
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
        data = np.empty(int(offsets[-1]) + PAD, dtype=np.uint8)
        data[-PAD:] = 0  # padding for 8-byte loads (see _word_view)
        data[: offsets[-1]] = buffer[is_text]
        return cls(data[: offsets[-1]], offsets)

    @classmethod
    def concat(cls, parts: Sequence[Strings]) -> Strings:
        if not parts:
            return cls(np.zeros(0, np.uint8), np.zeros(1, np.int64))
        data = np.concatenate([p.data for p in parts] + [np.zeros(PAD, np.uint8)])[:-PAD]
        shifts = np.cumsum([0] + [len(p.data) for p in parts[:-1]])
        offsets = np.concatenate(
            [parts[0].offsets[:1]] + [p.offsets[1:] + s for p, s in zip(parts, shifts, strict=True)]
        )
        return cls(data, offsets)

    def hashes(self, rows: IntArray | slice | None = None) -> U64Array:
        """64-bit hash of each string, or of ``self[rows]`` (used to join and dedupe; matches
        are verified).  Computed in steps of 65,536 strings: the temporaries stay small."""
        start = 0  # the first row, when rows is a slice (of step 1)
        if isinstance(rows, slice):
            start, stop, _ = rows.indices(len(self))
            rows = None
            offsets = self.offsets[start : max(start, stop) + 1]
        else:
            offsets = self.offsets
        n = len(offsets) - 1 if rows is None else len(rows)
        out = np.empty(n, dtype=np.uint64)
        step = 1 << 16
        base = self.data.base
        if isinstance(base, np.ndarray) and base.ndim == 1 and len(base) >= len(self.data) + PAD:
            words = _word_view(self.data)
            for first in range(0, n, step):
                if rows is None:
                    end = min(first + step, n)
                    starts, ends = offsets[first:end], offsets[first + 1 : end + 1]
                else:
                    starts = self.offsets[rows[first : first + step]]
                    ends = self.offsets[rows[first : first + step] + 1]
                lengths = ends - starts
                # The hash does not depend on the number of words loaded (see _hash_words).
                n_words = max(1, -(-int(lengths.max(initial=1)) // 8))
                token = _token_words(words, starts, lengths, n_words)
                out[first : first + step] = _hash_words(token, lengths)
            return out
        for first in range(0, n, step):
            part = np.arange(first, min(first + step, n))
            chosen = part + start if rows is None else rows[part]
            out[part] = _hash_fixed(self.fixed(chosen), self.lengths_of(chosen))
        return out

    def token_words(self, rows: IntArray, n_words: int) -> U64Array:
        """As :func:`_token_words`: ``(len(rows), n_words)`` little-endian 8-byte words."""
        base = self.data.base
        if isinstance(base, np.ndarray) and base.ndim == 1 and len(base) >= len(self.data) + PAD:
            starts, lengths = self.offsets[rows], self.lengths_of(rows)
            return _token_words(_word_view(self.data), starts, lengths, n_words)
        fixed = self.fixed(rows, 8 * n_words)
        return np.ascontiguousarray(fixed).view("<u8").astype(np.uint64)

    def fixed(self, rows: IntArray, width: int | None = None) -> U8Array:
        """Rows as a zero-padded ``(len(rows), width)`` byte matrix."""
        lengths = self.lengths_of(rows)
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

    def equal(self, rows: IntArray, other: Strings, other_rows: IntArray) -> npt.NDArray[np.bool_]:
        """Exact elementwise equality of ``self[rows]`` and ``other[other_rows]``."""
        mine_lengths, their_lengths = self.lengths_of(rows), other.lengths_of(other_rows)
        same_length = mine_lengths == their_lengths
        width = int(max(mine_lengths.max(initial=0), their_lengths.max(initial=0)))
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


def _word_view(block: U8Array) -> U64Array:
    """Little-endian 8-byte words starting at *every* byte of ``block`` (a strided view).

    ``view[i]`` holds bytes ``i .. i + 7``; gathering ``view[starts]`` loads 8 bytes of each
    token in one fancy-indexing step instead of 8.  Needs the ``PAD`` bytes after the block
    that :func:`_read_blocks` provides.
    """
    base = block.base if block.base is not None else block
    assert isinstance(base, np.ndarray) and len(base) >= len(block) + PAD
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
