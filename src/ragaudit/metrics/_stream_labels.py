"""What a streamed run is scored against: the labels as columns, and the ids met so far.

:func:`~ragaudit.metrics.evaluate_stream` holds the labels in memory, as the integer-coded
columns of :class:`~ragaudit.data.formats.QrelsColumns` (no dict per question), and finds
each batch's questions among them by a 64-bit hash of the id, every match verified byte for
byte.  The questions already scored are a boolean per labelled question, plus the ids of the
unlabelled ones (kept to refuse a question met again after another one).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from ragaudit.data.formats import QrelsColumns, items_view
from ragaudit.data.formats.chunked import arrow_string_buffers, arrow_strings
from ragaudit.data.formats.strings import PAD, IntArray, Strings
from ragaudit.data.qrels import Qrels
from ragaudit.metrics._join import label_table

__all__ = ["BatchLabels", "Ids", "LabelColumns", "UnlabelledIds", "padded_strings"]


def padded_strings(names: Any) -> Strings:
    """A list of str or a pyarrow string array as :class:`Strings` that can be hashed
    (their bytes copied, with the zero padding that hashing reads past the end)."""
    if isinstance(names, list):
        return Strings.from_list(names) if names else Strings.concat([])
    offsets, data = arrow_string_buffers(names)
    buffer = np.zeros(len(data) + PAD, dtype=np.uint8)
    buffer[: len(data)] = data
    return Strings(buffer[: len(data)], offsets)


class Ids(Sequence[str]):
    """Rows ``rows`` (None: all) of ``source`` as a sequence of str, decoded when read.

    Stands for a tuple of question ids where only a few are ever read (error messages,
    warnings), so that no Python string is made for the others.
    """

    def __init__(self, source: Strings | Sequence[str], rows: IntArray | None = None) -> None:
        self.source = source
        self.rows = rows

    def __len__(self) -> int:
        return len(self.source) if self.rows is None else len(self.rows)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        row = index if self.rows is None else int(self.rows[index])
        if isinstance(self.source, Strings):
            if not -len(self.source) <= row < len(self.source):
                raise IndexError(index)
            return self.source.get(row % len(self.source))
        return self.source[row]

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))


class BatchLabels:
    """The labels of some questions: row of each label (0-based, in the order the questions
    were asked for), item ids and grades."""

    def __init__(self, row: IntArray, items: Strings, grades: IntArray) -> None:
        self.row, self.items, self.grades = row, items, grades


class LabelColumns:
    """Labels as columns, with each question's labels and code found in time proportional
    to the number asked for.

    Parameters
    ----------
    qrels : Qrels
        Labels read from a file (already columns) or built in Python (flattened once).
    """

    def __init__(self, qrels: Qrels) -> None:
        columns = getattr(qrels, "columns", None)
        if isinstance(columns, QrelsColumns):
            self.qids: tuple[str, ...] = columns.qids
            q, self.items, self.grades = columns.q, columns.items, columns.grades
        else:
            self.qids = tuple(qrels)
            q, self.items, self.grades, _ = label_table(qrels, self.qids)
        self.q = q
        n = len(self.qids)
        # Labels grouped by question (the usual file layout) are addressed in place; others
        # through a stable order of the labels by question.
        grouped = not np.any(q[1:] < q[:-1])
        self.order: IntArray | None = None if grouped else np.argsort(q, kind="stable")
        self.starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(q, minlength=n), out=self.starts[1:])
        self.names = Strings.from_list(self.qids) if n else Strings.concat([])
        hashes = self.names.hashes()
        self.hash_order = np.argsort(hashes, kind="stable")
        self.sorted_hashes = hashes[self.hash_order]

    def __len__(self) -> int:
        return len(self.qids)

    def relevant_counts(self, threshold: int) -> IntArray:
        """Labels with a grade >= ``threshold``, per question."""
        return np.bincount(self.q[self.grades >= threshold], minlength=len(self.qids))

    def codes(self, names: Strings, hashes: npt.NDArray[np.uint64]) -> IntArray:
        """Index in :attr:`qids` of each of ``names`` (``hashes``: theirs), -1 if unlabelled.

        A run usually lists its questions in the labels' order: the ids after the first are
        first compared with the labels' ids that follow its own, and only the others looked
        up by hash.
        """
        found = self._by_hash(names, hashes, np.zeros(min(1, len(names)), dtype=np.int64))
        if len(found) and found[0] >= 0:
            guess = found[0] + np.arange(len(names))
            rows = np.flatnonzero(guess < len(self.qids))
            rows = rows[self.names.equal(guess[rows], names, rows)]
            found = np.full(len(names), -1, dtype=np.int64)
            found[rows] = guess[rows]
        else:
            found = np.full(len(names), -1, dtype=np.int64)
        rest = np.flatnonzero(found < 0)
        if len(rest):
            found[rest] = self._by_hash(names, hashes, rest)
        return found

    def _by_hash(self, names: Strings, hashes: npt.NDArray[np.uint64], rows: IntArray) -> IntArray:
        """:meth:`codes` of ``names[rows]``, looked up by hash."""
        found = np.full(len(rows), -1, dtype=np.int64)
        sorted_hashes = self.sorted_hashes
        if not len(sorted_hashes):
            return found
        todo = np.arange(len(rows))
        at = np.searchsorted(sorted_hashes, hashes[rows])
        while len(todo):  # more than one round only for ids sharing a 64-bit hash
            at = np.minimum(at, len(sorted_hashes) - 1)
            same = sorted_hashes[at] == hashes[rows[todo]]
            todo, at = todo[same], at[same]
            candidate = self.hash_order[at]
            equal = self.names.equal(candidate, names, rows[todo])
            found[todo[equal]] = candidate[equal]
            todo, at = todo[~equal], at[~equal] + 1
            keep = at < len(sorted_hashes)
            todo, at = todo[keep], at[keep]
        return found

    def rows_of(self, codes: IntArray) -> BatchLabels:
        """The labels of questions ``codes`` (label rows numbered like ``codes``)."""
        n = len(codes)
        if n and self.order is None and _consecutive(codes):
            # Consecutive questions of grouped labels (the run follows the labels' order):
            # views of the columns, nothing copied but the row numbers.
            a, b = int(self.starts[codes[0]]), int(self.starts[codes[-1] + 1])
            items = Strings(self.items.data, self.items.offsets[a : b + 1])
            return BatchLabels(self.q[a:b] - codes[0], items, self.grades[a:b])
        lengths = self.starts[codes + 1] - self.starts[codes]
        local = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=local[1:])
        rows = np.repeat(self.starts[codes] - local[:-1], lengths)
        rows += np.arange(local[-1])
        if self.order is not None:
            rows = self.order[rows]
        return BatchLabels(
            np.repeat(np.arange(n), lengths), items_view(self.items, rows), self.grades[rows]
        )


def _consecutive(codes: IntArray) -> bool:
    first, last = int(codes[0]), int(codes[-1])
    return last - first == len(codes) - 1 and bool(np.all(np.diff(codes) == 1))


class UnlabelledIds:
    """The ids of the unlabelled run questions met so far (a pyarrow array per batch)."""

    def __init__(self) -> None:
        self.parts: list[Any] = []
        self.count = 0
        self.first: list[str] = []  # the first few, for the warning

    def add(self, names: Strings, rows: IntArray) -> int:
        """Add ``names[rows]`` (distinct); return the first row met before, or -1."""
        if not len(rows):
            return -1
        import pyarrow as pa
        import pyarrow.compute as pc

        new = arrow_strings(items_view(names, rows))
        if self.parts:
            met = pc.is_in(new, value_set=pa.concat_arrays(self.parts))
            again = pc.indices_nonzero(met)
            if len(again):
                return int(rows[again[0].as_py()])
        self.parts = [pa.concat_arrays([*self.parts, new])]
        self.first += Ids(names, rows[: max(0, 5 - len(self.first))])[:]
        self.count += len(rows)
        return -1
