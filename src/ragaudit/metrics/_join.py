"""Joining a run's items to their labels: the questions x depth grade matrix.

The labels of each question are sorted by item key once; the run is joined slice by slice
(whole questions per slice) by binary search inside each question's labels, so the join's
temporaries are bounded by the slice, not the run, and every match is checked byte for byte.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit._parallel import map_slices
from ragaudit.data.formats import QrelsColumns, RunColumns, items_view
from ragaudit.data.formats.strings import QID_MIX, IntArray, Strings
from ragaudit.data.qrels import Qrels

__all__ = ["grade_matrix", "ideal_grades", "judged_grade_matrix", "label_table"]


def label_table(
    qrels: Qrels, eval_ids: Sequence[str]
) -> tuple[IntArray, Strings, IntArray, npt.NDArray[np.uint64] | None]:
    """Flatten the labels of ``eval_ids``: (row of each label, item ids, grades, id hashes or
    None: computed when joined)."""
    columns = getattr(qrels, "columns", None)
    if isinstance(columns, QrelsColumns):  # read from a file: no Python loop over labels
        if columns.qids == tuple(eval_ids):  # the usual case: one question order everywhere
            return columns.q, columns.items, columns.grades, columns.stored_hash
        eval_index = {qid: i for i, qid in enumerate(eval_ids)}
        row_of_code = np.array([eval_index.get(qid, -1) for qid in columns.qids], dtype=np.int64)
        label_row = row_of_code[columns.q]
        keep = np.flatnonzero(label_row >= 0)
        if len(keep) == len(label_row):
            return label_row, columns.items, columns.grades, columns.stored_hash
        return (
            label_row[keep],
            items_view(columns.items, keep),
            columns.grades[keep],
            None if columns.stored_hash is None else columns.stored_hash[keep],
        )
    # C-level iteration over the label dicts: no Python statement runs per label.
    rows = list(map(qrels.__getitem__, eval_ids))
    counts = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    n_labels = int(counts.sum())
    items = list(itertools.chain.from_iterable(rows))
    grades = np.fromiter(
        itertools.chain.from_iterable(map(operator.methodcaller("values"), rows)),
        dtype=np.int64,
        count=n_labels,
    )
    label_row = np.repeat(np.arange(len(eval_ids)), counts)
    label_items = Strings.from_list(items)
    return label_row, label_items, grades, None  # hashed when joined


_JOIN_ROWS = 1 << 17  # run rows joined per step and thread: bounds the join's temporaries
_ROW_BITS_LIMIT = 1 << 24  # below: a join key holds its question row exactly, in 24 high bits


def grade_matrix(
    cols: RunColumns,
    eval_row_of_run_q: IntArray,
    label_row: IntArray,
    label_items: Strings,
    label_grade: IntArray,
    label_hash: npt.NDArray[np.uint64] | None,
    n_eval: int,
    depth: int,
) -> npt.NDArray[np.integer[Any]]:
    """Grades of ranked items as an (n_eval, depth) matrix via a verified hash join.

    Grades take the smallest integer type that holds them (one byte for the usual 0-3).
    The run is joined a slice of whole questions at a time (two slices at once, on two
    threads: each fills its own questions' rows), so that the temporaries do not grow with
    the run.
    """
    grades = np.zeros((n_eval, depth), dtype=_grade_type(label_grade))
    if cols.n_rows == 0 or depth == 0 or len(label_grade) == 0:
        return grades
    order, sorted_keys = _sorted_label_keys(label_row, label_items, label_hash, n_eval)
    offsets = cols.offsets
    cuts = np.searchsorted(offsets, np.arange(0, cols.n_rows, _JOIN_ROWS), side="left")
    cuts = np.unique(np.append(cuts, len(offsets) - 1))
    map_slices(
        lambda bounds: _join_slice(
            cols, bounds[0], bounds[1], eval_row_of_run_q, label_row, label_items,
            label_grade, order, sorted_keys, grades, n_eval,
        ),
        itertools.pairwise(cuts.tolist()),
    )  # fmt: skip
    if np.any(sorted_keys[1:] == sorted_keys[:-1]):
        # Two labels of one question share a join key: redo those questions exactly.
        clash = np.unique(label_row[order[1:][sorted_keys[1:] == sorted_keys[:-1]]])
        _exact_rows(cols, eval_row_of_run_q, label_row, label_items, label_grade, grades, clash)
    return grades


def judged_grade_matrix(
    cols: RunColumns,
    eval_row_of_run_q: IntArray,
    label_row: IntArray,
    label_items: Strings,
    label_grade: IntArray,
    label_hash: npt.NDArray[np.uint64] | None,
    n_eval: int,
    depth: int,
) -> tuple[npt.NDArray[np.integer[Any]], npt.NDArray[np.bool_]]:
    """:func:`grade_matrix` plus a matrix saying which ranked items carry a label.

    The join writes ``grade + 1`` (so 0 still means "no label": unjudged or padding), then
    the shift is taken back: one join, and grade 0 stays apart from unjudged.
    """
    shifted = grade_matrix(
        cols, eval_row_of_run_q, label_row, label_items,
        label_grade.astype(np.int64) + 1, label_hash, n_eval, depth,
    )  # fmt: skip
    judged = shifted > 0
    shifted -= judged.astype(shifted.dtype)
    return shifted, judged


def _sorted_label_keys(
    label_row: IntArray,
    label_items: Strings,
    label_hash: npt.NDArray[np.uint64] | None,
    n_eval: int,
) -> tuple[IntArray, npt.NDArray[np.uint64]]:
    """The labels' join keys in ascending order, and the label each one belongs to
    (``label_hash``: the hashes of ``label_items``, computed here when None)."""
    n = len(label_row)
    if n_eval >= _ROW_BITS_LIMIT or np.any(label_row[1:] < label_row[:-1]):
        if label_hash is None:
            label_hash = label_items.hashes()
        keys = _join_keys(label_row, label_hash, n_eval)
        order = np.argsort(keys, kind="stable")
        return order, keys[order]
    # Labels grouped by question, the question in the high bits of the keys: sorting slices
    # of whole questions sorts them all, with small temporaries and 32-bit label numbers.
    order = np.empty(n, dtype=np.int32 if n < 2**31 else np.int64)
    sorted_keys = np.empty(n, dtype=np.uint64)
    starts = np.searchsorted(label_row, label_row[np.arange(0, n, _JOIN_ROWS)], side="left")

    def sort_slice(bounds: tuple[int, int]) -> None:
        first, end = bounds
        hashes = (
            label_items.hashes(slice(first, end)) if label_hash is None else label_hash[first:end]
        )
        keys = _join_keys(label_row[first:end], hashes, n_eval)
        # Timsort finds the runs already in order (labels often come sorted by item id).
        local = np.argsort(keys, kind="stable")
        sorted_keys[first:end] = keys[local]
        local += first
        order[first:end] = local

    for bounds in itertools.pairwise(np.unique(np.append(starts, n)).tolist()):
        sort_slice(bounds)  # one thread: slices too short to gain from two
    return order, sorted_keys


def _join_slice(
    cols: RunColumns,
    qa: int,
    qb: int,
    eval_row_of_run_q: IntArray,
    label_row: IntArray,
    label_items: Strings,
    label_grade: IntArray,
    order: IntArray,
    sorted_keys: npt.NDArray[np.uint64],
    grades: npt.NDArray[np.integer[Any]],
    n_eval: int,
) -> None:
    """Fill the grades of run questions ``qa:qb`` (rows ``offsets[qa]:offsets[qb]``)."""
    depth = grades.shape[1]
    first = int(cols.offsets[qa])
    local_offsets = cols.offsets[qa : qb + 1] - first  # rows of the slice, from 0
    lengths = np.diff(local_offsets)
    eval_rows = eval_row_of_run_q[qa:qb]
    row_eval = np.repeat(eval_rows, lengths)
    hashes = cols.hash_rows(first, first + int(local_offsets[-1]))
    use: IntArray | None = None  # None: every row of the slice takes part
    if eval_rows.min() >= 0 and lengths.max() <= depth:
        run_keys = _join_keys(row_eval, hashes, n_eval)
    else:
        rank = np.arange(len(row_eval)) - np.repeat(local_offsets[:-1], lengths)
        use = np.flatnonzero((row_eval >= 0) & (rank < depth))
        del rank
        run_keys = _join_keys(row_eval[use], hashes[use], n_eval)
    # The question sits in the high bits of the keys: the slice's keys fall in a short
    # stretch of the sorted label keys (those of the same questions), searched in cache.
    if not len(run_keys):
        return
    low = int(np.searchsorted(sorted_keys, run_keys.min()))
    high = max(low + 1, int(np.searchsorted(sorted_keys, run_keys.max(), side="right")))
    pos = np.searchsorted(sorted_keys[low:high], run_keys)
    pos += low
    np.minimum(pos, len(sorted_keys) - 1, out=pos)
    hit = np.flatnonzero(sorted_keys[pos] == run_keys)
    del run_keys
    pos = pos[hit]
    use = hit if use is None else use[hit]
    label_index = order[pos]
    exact = label_items.equal(label_index, cols.items, cols.row_order[use + first])
    if n_eval >= _ROW_BITS_LIMIT:  # the question is hashed into the key, not stored in it
        exact &= label_row[label_index] == row_eval[use]
    use, label_index = use[exact], label_index[exact]
    # Cell of each match in the (row-major) grade matrix: question row * depth + rank, the
    # rank being the row's distance from its question's first row.
    cell = row_eval[use].astype(np.int64)
    cell *= depth
    cell += use
    cell -= np.repeat(local_offsets[:-1], lengths)[use]
    grades.reshape(-1)[cell] = label_grade[label_index]


def _join_keys(
    rows: IntArray, hashes: npt.NDArray[np.uint64], n_rows: int
) -> npt.NDArray[np.uint64]:
    """One uint64 per (question row, item hash); equal keys are verified by the caller."""
    if n_rows < _ROW_BITS_LIMIT:
        keys = rows.astype(np.uint64) << np.uint64(40)
        keys |= hashes >> np.uint64(24)
        return keys
    return hashes + rows.astype(np.uint64) * QID_MIX


def _exact_rows(
    cols: RunColumns,
    eval_row_of_run_q: IntArray,
    label_row: IntArray,
    label_items: Strings,
    label_grade: IntArray,
    grades: IntArray,
    rows: IntArray,
) -> None:
    """Slow exact fallback for the (practically never) hash-colliding questions."""
    depth = grades.shape[1]
    for row in rows.tolist():
        members = np.flatnonzero(label_row == row)
        labels = dict(zip(label_items.decode(members), label_grade[members].tolist(), strict=True))
        run_q = int(np.flatnonzero(eval_row_of_run_q == row)[0])
        a, b = int(cols.offsets[run_q]), int(cols.offsets[run_q + 1])
        ids = cols.items.decode(cols.row_order[a : min(b, a + depth)])
        grades[row, : len(ids)] = [labels.get(item, 0) for item in ids]


def _grade_type(label_grade: IntArray) -> type[np.signedinteger[Any]]:
    """The smallest integer type holding every grade (and its negation): grades are small,
    and the grade matrix has a cell per ranked item."""
    top = int(label_grade.max(initial=0))
    for dtype in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def ideal_grades(
    label_row: IntArray, label_grade: IntArray, n_eval: int
) -> npt.NDArray[np.integer[Any]]:
    """Each question's positive grades, best first, zero padded."""
    positive = label_grade > 0
    rows, grades = label_row[positive], label_grade[positive]
    if np.any(rows[1:] < rows[:-1]):  # labels not grouped by question: group them
        order = np.argsort(rows, kind="stable")
        rows, grades = rows[order], grades[order]
    counts = np.bincount(rows, minlength=n_eval)
    index = np.int32 if len(rows) < 2**31 else np.int64
    starts = np.zeros(n_eval, dtype=index)
    np.cumsum(counts[:-1], out=starts[1:])
    # Negated grades in a padded grid: an ascending sort of each row puts the best first,
    # and the zero padding last.
    ideal = np.zeros((n_eval, int(counts.max(initial=0))), dtype=_grade_type(label_grade))
    position = np.arange(len(rows), dtype=index)
    position -= np.repeat(starts, counts)
    ideal[rows, position] = grades
    del position
    np.negative(ideal, out=ideal)
    ideal.sort(axis=1)
    np.negative(ideal, out=ideal)
    return ideal
