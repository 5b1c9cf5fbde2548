"""File-wide question codes for the TREC readers, and one tuple of question ids per id list.

A reader numbers the questions of each chunk of a file on its own; :func:`unify_codes` turns
those provisional codes into file-wide ones, in order of first appearance.  In the usual
file, whose lines are grouped by question, the chunks' names are already distinct and the
provisional codes are final: that is checked by sorting the top 32 bits of the ids' 64-bit
hashes (every id whose bits another shares compared exactly), and pyarrow's dictionary
encoding, five times slower on a million ids, runs only when a question's lines are not
together.

Labels and their run usually list the same questions in the same order: the second file's
columns then hold the first one's tuple of ids (:func:`remember`), found by a SHA-256
digest of the ids, and its names need no distinctness check at all.
"""

from __future__ import annotations

import hashlib
import weakref
from typing import Any, TypeVar

import numpy as np

from ragaudit.data.formats.chunked import arrow_string_buffers, arrow_values
from ragaudit.data.formats.columns import QrelsColumns, RunColumns
from ragaudit.data.formats.strings import PAD, IntArray, Strings

__all__ = ["remember", "unify_codes"]

# Columns of files read lately, by a digest of their question ids (held weakly).
_RECENT: dict[bytes, weakref.ref[Any]] = {}


def unify_codes(
    names: list[Any], provisional: IntArray
) -> tuple[tuple[str, ...], IntArray, bytes | None]:
    """File-wide question codes in order of first appearance, from the chunks' names.

    ``provisional`` indexes the concatenation of the chunks' names (pyarrow string arrays; a
    question whose lines are not together appears in several of them).  Returns the ids,
    the codes, and the digest of the ids (None for no ids; see :func:`remember`).

    Examples
    --------
    >>> import pyarrow as pa
    >>> names = [pa.array(["q1", "q2"], pa.large_string()), pa.array(["q1"], pa.large_string())]
    >>> qids, codes, _ = unify_codes(names, np.array([0, 1, 2]))
    >>> qids, codes.tolist()
    (('q1', 'q2'), [0, 1, 0])
    """
    if not names:
        return (), provisional, None
    import pyarrow as pa

    combined = pa.chunked_array(names, pa.large_string()).combine_chunks()
    key = _digest(combined)
    known = _known_ids(key)
    if known is not None:  # the same ids, distinct and in the same order, as a recent file
        return known, provisional, key
    if _distinct(combined):
        return tuple(combined.to_pylist()), provisional, key
    # A question's lines are not together: pyarrow's dictionary encoding numbers the values
    # in order of first appearance, which maps the provisional codes to the final ones.
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(combined)
    remap = arrow_values(encoded.indices, np.int32)
    provisional = remap.astype(provisional.dtype)[provisional]
    key = _digest(encoded.dictionary)
    known = _known_ids(key)
    return known or tuple(encoded.dictionary.to_pylist()), provisional, key


def _distinct(strings: Any) -> bool:
    """Whether the pyarrow string array ``strings`` holds no value twice.

    The top 32 bits of the ids' hashes are sorted (a 32-bit sort is half the memory traffic
    of a 64-bit one); the few ids whose bits are shared by another are compared exactly.
    """
    if len(strings) < 2:
        return True
    offsets, data = arrow_string_buffers(strings)
    padded = np.zeros(len(data) + PAD, dtype=np.uint8)  # hashing loads 8 bytes at a time
    padded[: len(data)] = data
    ids = Strings(padded[: len(data)], offsets)
    high = (ids.hashes() >> np.uint64(32)).astype(np.uint32)
    ordered = np.sort(high)
    shared = ordered[1:][ordered[1:] == ordered[:-1]]
    if not shared.size:
        return True
    if len(shared) > max(1024, len(high) // 64):
        return False  # not worth checking: many ids repeat (dictionary encoding decides)
    suspects = ids.decode(np.flatnonzero(np.isin(high, shared)))
    return len(set(suspects)) == len(suspects)


def _known_ids(key: bytes) -> tuple[str, ...] | None:
    """The ids of a file read before (and still in use) whose ids have digest ``key``.

    One Python string per question is most of what a file with a million short questions
    costs beyond its columns: the run's columns then hold the labels' tuple.
    """
    ref = _RECENT.get(key)
    columns = ref() if ref is not None else None
    return None if columns is None else columns.qids


def _digest(names: Any) -> bytes:
    """256-bit digest of the offsets and bytes of a pyarrow string array."""
    offsets, data = arrow_string_buffers(names)
    digest = hashlib.sha256()  # SHA-256 has CPU instructions: 3x blake2b's speed here
    digest.update(np.ascontiguousarray(offsets, dtype=np.int64).data)
    digest.update(np.ascontiguousarray(data).data)
    return digest.digest()


_Columns = TypeVar("_Columns", RunColumns, QrelsColumns)


def remember(columns: _Columns, key: bytes | None) -> _Columns:
    """Let later files share the question ids of ``columns`` (``key``: their digest)."""
    if key is not None:
        # A snapshot of the items and pop(): files read on two threads at once do not clash.
        for stale in [k for k, r in list(_RECENT.items()) if r() is None]:
            _RECENT.pop(stale, None)
        _RECENT[key] = weakref.ref(columns)
    return columns
