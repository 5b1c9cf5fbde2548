"""The columnar model shared by every reader: runs and qrels as integer-coded numpy columns.

A reader (TREC, JSON, in-memory dicts) produces question codes, item strings and scores or
grades; the functions here deduplicate and rank them by trec_eval's rule (score descending,
ties by item id descending: :mod:`ragaudit.data.formats._ranking`), for all questions at once.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragaudit.data.formats._ranking import _count_ties, _Moves, _rank_rows
from ragaudit.data.formats.strings import PAD, QID_MIX, IntArray, Strings, U64Array
from ragaudit.data.qrels import Qrels, check_unit
from ragaudit.data.runs import Run
from ragaudit.exceptions import InputError

__all__ = [
    "QrelsColumns",
    "RunColumns",
    "finish_qrels_columns",
    "finish_run_columns",
    "items_view",
]


@dataclass(frozen=True)
class RunColumns:
    """A run as integer-coded columns, rows grouped by question in rank order.

    Attributes
    ----------
    qids : tuple of str
        Question ids in order of first appearance.
    offsets : int ndarray of shape (n_questions + 1,)
        Rows ``offsets[q]:offsets[q + 1]`` are question ``q``'s ranking, best first.
    items : Strings
        Item ids, in file order (use ``row_order`` to read them in rank order).
    row_order : int ndarray
        ``items`` row of each ranked row.
    scores : float ndarray or None
        Score of each ranked row.
    tied_groups : int
        Groups of two or more items sharing a score within one question (scores compared as
        32-bit floats, as trec_eval compares them).
    float32_tied_groups : int
        How many of those groups hold scores that differ as 64-bit floats.
    stored_hash : uint64 ndarray or None
        :attr:`item_hash`, when a reader had it at hand; None: computed when asked for
        (a run read from a file does not hold 8 bytes per row for it).
    dropped_duplicates : int
        Rows dropped as repeats of an item already in the same question's ranking
        (``duplicates="first"``).
    """

    qids: tuple[str, ...]
    offsets: IntArray
    items: Strings
    row_order: IntArray
    scores: npt.NDArray[np.float64] | None
    tied_groups: int
    float32_tied_groups: int = 0
    stored_hash: U64Array | None = None
    dropped_duplicates: int = 0

    @property
    def n_rows(self) -> int:
        return int(self.offsets[-1])

    @property
    def item_hash(self) -> U64Array:
        """Hash of each ranked row's item id (for joins; matches are verified exactly)."""
        return self.hash_rows(0, self.n_rows)

    def hash_rows(self, first: int, end: int) -> U64Array:
        """:attr:`item_hash` of ranked rows ``first:end`` (computed for those rows only)."""
        if self.stored_hash is not None:
            return self.stored_hash[first:end]
        return self.items.hashes(self.row_order[first:end])


_SLICE_ROWS = 1 << 20  # rows of whole questions checked per step (bounds temporaries)


def _may_repeat(q: IntArray, item_hash: U64Array | None, items: Strings) -> bool:
    """False when no question lists one item hash twice (True may be a hash collision).

    Rows grouped by question are checked with one short sort per question (a padded grid),
    much cheaper than sorting all keys together, a slice of whole questions at a time;
    ``item_hash`` (the hash of ``items``) is computed slice by slice when None.
    """
    n = len(q)
    if n < 2:
        return False
    if not np.any(q[1:] < q[:-1]):
        counts = np.bincount(q)
        depth = int(counts.max())
        n_questions = len(counts)
        if n_questions * depth <= 2 * n + 100_000:
            starts = np.zeros(n_questions + 1, dtype=np.int64)
            np.cumsum(counts, out=starts[1:])
            cuts = np.searchsorted(starts, np.arange(0, n, _SLICE_ROWS))
            bounds = np.unique(np.append(cuts, n_questions)).tolist()

            def suspects_of(questions: tuple[int, int]) -> IntArray:
                qa, qb = questions
                a, b = int(starts[qa]), int(starts[qb])
                hashes = items.hashes(slice(a, b)) if item_hash is None else item_hash[a:b]
                return qa + _grid_suspects(hashes, counts[qa:qb])

            # One thread: memory freed by other threads' temporaries would stay in their
            # malloc arenas while the run is read.
            found = [suspects_of(pair) for pair in itertools.pairwise(bounds)]
            suspects = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
            if not suspects.size:
                return False
            rows = np.flatnonzero(np.isin(q, suspects))
            q = q[rows]
            item_hash = items.hashes(rows) if item_hash is None else item_hash[rows]
    if item_hash is None:
        item_hash = items.hashes()
    keys = item_hash + q.astype(np.uint64) * QID_MIX
    keys.sort()
    return bool(np.any(keys[1:] == keys[:-1]))


def _grid_suspects(item_hash: U64Array, counts: IntArray) -> IntArray:
    """Questions (indices into ``counts``) of grouped rows that may list one hash twice."""
    n_questions = len(counts)
    depth = int(counts.max(initial=0))
    if depth < 2:
        return np.zeros(0, dtype=np.int64)
    # Sort the top 32 bits only (half the memory traffic); a 32-bit match sends that
    # question to the exact 64-bit check.
    high = (item_hash >> np.uint64(32)).astype(np.uint32)
    if np.all(counts == depth):
        grid = high.reshape(n_questions, depth)
    else:
        # Padding cells hold distinct numbers: at worst a false alarm.
        grid = np.arange(n_questions * depth, dtype=np.uint32)
        starts = np.zeros(n_questions, dtype=np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        cell = np.arange(len(high))
        cell += np.repeat(np.arange(0, n_questions * depth, depth) - starts, counts)
        grid[cell] = high
        grid = grid.reshape(n_questions, depth)
    grid.sort(axis=1)
    return np.flatnonzero((grid[:, 1:] == grid[:, :-1]).any(axis=1))


def _dedupe(
    q: IntArray,
    item_hash: U64Array | None,
    items: Strings,
    qids: Sequence[str],
    policy: str,
    name: str | None,
) -> IntArray | None:
    """Rows to keep (file order), None for all; duplicates of (question, item) raise or keep
    the first."""
    if not _may_repeat(q, item_hash, items):
        return None
    if item_hash is None:
        item_hash = items.hashes()
    keys = item_hash + q.astype(np.uint64) * QID_MIX
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    same = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if not same.size:
        return None
    first, second = order[same], order[same + 1]
    real = (q[first] == q[second]) & items.equal(first, items, second)
    if not real.any():
        return None  # hash collisions only
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


def items_view(items: Strings, rows: IntArray | None) -> Strings:
    """``items`` restricted to ``rows`` (None: all; a copy when rows is not the identity)."""
    if rows is None or len(rows) == len(items):
        return items
    lengths = items.lengths_of(rows)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    positions = np.repeat(items.offsets[rows] - offsets[:-1], lengths) + np.arange(offsets[-1])
    size = int(offsets[-1])
    data = np.zeros(size + PAD, dtype=np.uint8)  # padded: hashing loads 8 bytes at a time
    np.take(items.data, positions, out=data[:size])
    return Strings(data[:size], offsets)


class _ColumnarRun(Run):
    """A :class:`Run` made from :class:`RunColumns`; Python lists are built on first use."""

    def __init__(self, columns: RunColumns, *, unit: str, order: str, name: str | None) -> None:
        # Run.__init__ is bypassed on purpose: the columns are already ranked and deduplicated.
        self.unit = check_unit(unit)
        self.order = order
        self.name = name
        self._attach(columns)


@dataclass(frozen=True)
class QrelsColumns:
    """TREC qrels as integer-coded columns, one row per distinct (question, item) label.

    Attributes
    ----------
    qids : tuple of str
        Question ids in order of first appearance.
    q : int ndarray
        Question code (index into ``qids``) of each label.
    items : Strings
        Item id of each label.
    stored_hash : uint64 ndarray or None
        :attr:`item_hash` when a reader had it at hand; None: computed when needed.
    grades : int ndarray
        Grade of each label (the last line wins for a repeated pair, as in trec_eval).
    """

    qids: tuple[str, ...]
    q: IntArray
    items: Strings
    stored_hash: U64Array | None
    grades: IntArray

    @property
    def item_hash(self) -> U64Array:
        """Hash of each item id (as :attr:`RunColumns.item_hash`)."""
        return self.items.hashes() if self.stored_hash is None else self.stored_hash


class _ColumnarQrels(Qrels):
    """:class:`Qrels` backed by :class:`QrelsColumns`; the dicts are built on first use."""

    def __init__(self, columns: QrelsColumns, *, unit: str, name: str | None) -> None:
        # Qrels.__init__ is bypassed on purpose: the reader has validated every grade.
        self.unit = check_unit(unit)
        self.name = name
        self.columns = columns
        self._built: dict[str, dict[str, int]] | None = None
        self._known: frozenset[str] | None = None

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

    def __contains__(self, qid: object) -> bool:
        if self._known is None:
            self._known = frozenset(self.columns.qids)
        return qid in self._known

    def __len__(self) -> int:
        return len(self.columns.qids)


def finish_run_columns(
    qids: tuple[str, ...],
    q: IntArray,
    items: Strings,
    scores: npt.NDArray[np.float64],
    *,
    order: str,
    duplicates: str,
    name: str | None,
) -> RunColumns:
    """Deduplicate and rank the rows of a run read in file order (any reader's last step).

    Parameters
    ----------
    qids : tuple of str
        Question ids in order of first appearance.
    q : int ndarray of shape (n,)
        Question code (index into ``qids``) of each row, in file order.
    items : Strings
        Item id of each row.
    scores : float ndarray of shape (n,)
        Score of each row (finite).
    order, duplicates, name
        As :func:`ragaudit.data.formats.read_trec_run`.

    Returns
    -------
    RunColumns
    """
    keep = _dedupe(q, None, items, qids, duplicates, name)  # hashes computed as needed
    if keep is not None:
        q, scores = q[keep], scores[keep]
    perm, tied_groups, float32_only = _rank_rows(
        q, scores if order == "score" else None, items_view(items, keep), len(qids)
    )
    if order == "given" and len(scores):
        tied_groups, float32_only = _count_ties(q, scores)
    return assemble_run_columns(
        qids, q, items, keep, None, scores, perm, (tied_groups, float32_only)
    )


def assemble_run_columns(
    qids: tuple[str, ...],
    q: IntArray,
    items: Strings,
    keep: IntArray | None,
    item_hash: U64Array | None,
    scores: npt.NDArray[np.float64] | None,
    perm: IntArray | _Moves | None,
    ties: tuple[int, int],
) -> RunColumns:
    """:class:`RunColumns` from kept rows (file order, None: all) and the permutation that
    ranks them.

    ``item_hash`` (None: not stored, computed when needed) and ``scores`` are handed over:
    a permutation that moves tied rows only
    (:class:`_Moves`) is applied to them in place, so that no full-size copy is made.
    Row numbers are 32-bit when there are fewer than 2**31 items.
    """
    offsets = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(q, minlength=len(qids)), out=offsets[1:])
    index = np.int32 if len(items) < 2**31 else np.int64
    row_order = np.arange(len(q), dtype=index) if keep is None else keep.astype(index)
    if isinstance(perm, _Moves):
        rows, sources = perm.rows, perm.sources
        row_order[rows] = row_order[sources]
        if item_hash is not None:
            item_hash[rows] = item_hash[sources]
        if scores is not None:
            scores[rows] = scores[sources]
    elif perm is not None:
        row_order = row_order[perm]
        item_hash = None if item_hash is None else item_hash[perm]
        scores = None if scores is None else scores[perm]
    return RunColumns(
        qids=qids,
        offsets=offsets,
        items=items,
        row_order=row_order,
        scores=scores,
        tied_groups=ties[0],
        float32_tied_groups=ties[1],
        stored_hash=item_hash,
        dropped_duplicates=0 if keep is None else len(items) - len(keep),
    )


def finish_qrels_columns(
    qids: tuple[str, ...], q: IntArray, items: Strings, grades: IntArray
) -> QrelsColumns:
    """Qrels columns from rows in file order; a repeated (question, item) keeps its last grade.

    That is what trec_eval's reading amounts to (a dict per question); the pair keeps the
    position of its first line.
    """
    if _may_repeat(q, None, items):  # hashes computed a slice at a time
        first: dict[tuple[int, str], int] = {}
        last_grade: dict[tuple[int, str], int] = {}
        pairs = zip(q.tolist(), items.decode(), grades.tolist(), strict=True)
        for row, (code, item, grade) in enumerate(pairs):
            first.setdefault((code, item), row)
            last_grade[(code, item)] = grade
        if len(first) != len(q):
            keep = np.fromiter(first.values(), dtype=np.int64, count=len(first))
            q = q[keep]
            grades = np.fromiter(last_grade.values(), dtype=np.int64, count=len(first))
            items = items_view(items, keep)
    return QrelsColumns(qids, q, items, None, grades)
