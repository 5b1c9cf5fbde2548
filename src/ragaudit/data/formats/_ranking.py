"""trec_eval's ranking for all questions at once: score descending, ties by item id descending.

Scores are compared as trec_eval stores them, as 32-bit floats: two scores that differ only
beyond float32 precision tie, and the tie is broken by id (strcmp order).  The functions
here return the permutation that ranks a run's rows (or just the moves of its tied rows)
and count the tied groups.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragaudit.data.formats.strings import IntArray, Strings, U64Array

__all__ = ["as_float32"]


def as_float32(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    """Scores as trec_eval holds them: 32-bit floats (beyond float32's range: +-inf).

    >>> as_float32(np.array([0.812345678, 0.812345671])).tolist()[0] == \\
    ...     as_float32(np.array([0.812345671])).tolist()[0]
    True
    """
    with np.errstate(over="ignore"):
        return scores.astype(np.float32)


@dataclass(frozen=True)
class _Moves:
    """A permutation that is the identity except at ``rows``, which take ``sources``."""

    rows: IntArray
    sources: IntArray


def _rank_rows(
    q: IntArray, scores: npt.NDArray[np.float64] | None, items: Strings, n_questions: int
) -> tuple[IntArray | _Moves | None, int, int]:
    """Permutation putting rows in (question, score desc, id desc) order, and tie counts.

    Scores are compared as trec_eval compares them, as 32-bit floats: two scores that differ
    only beyond float32 precision tie, and the tie is broken by id.  Returns the permutation
    (None when the rows are already in that order, :class:`_Moves` when only tied rows move:
    the usual case for files written by a ranker), the number of tied groups, and how many
    of those tie only as 32-bit floats.
    """
    n = len(q)
    grouped = n == 0 or not np.any(q[1:] < q[:-1])
    perm: IntArray | None = None if grouped else np.argsort(q, kind="stable")
    if scores is None:
        return perm, 0, 0
    qs, sc = (q, as_float32(scores)) if perm is None else (q[perm], as_float32(scores[perm]))
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
            cell += qs.astype(np.int64) * depth
            grid = np.full(n_questions * depth, np.inf, dtype=np.float32)
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
        return perm, 0, 0
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
    float32_only = _float32_only(scores[moved], np.flatnonzero(block_start))
    local = np.lexsort((*_descending_keys(items, moved), block_id))
    groups = int(np.count_nonzero(block_start))
    if perm is None:
        return _Moves(tie_rows, moved[local]), groups, float32_only
    perm[tie_rows] = moved[local]
    return perm, groups, float32_only


def _float32_only(values: npt.NDArray[np.float64], starts: IntArray) -> int:
    """Groups (rows ``starts[i]:starts[i+1]`` of ``values``) holding two distinct float64s."""
    if not len(starts):
        return 0
    low = np.minimum.reduceat(values, starts)
    high = np.maximum.reduceat(values, starts)
    return int(np.count_nonzero(low != high))


def _descending_keys(items: Strings, rows: IntArray) -> list[U64Array]:
    """:func:`numpy.lexsort` keys (least significant first) ordering ``items[rows]`` by
    strcmp descending: big-endian 8-byte words compare like the bytes they hold, and a
    shorter string's zero padding sorts it before its extensions, as strcmp does."""
    width = int(items.lengths_of(rows).max(initial=0))
    n_words = max(1, -(-width // 8))
    words = items.token_words(rows, n_words).astype("<u8").view(">u8").astype(np.uint64)
    return [~words[:, c] for c in range(n_words - 1, -1, -1)]


def _count_ties(q: IntArray, scores: npt.NDArray[np.float64]) -> tuple[int, int]:
    """Groups of >= 2 rows sharing (question, float32 score) in any row order, and how many
    of them tie only as 32-bit floats."""
    order = np.lexsort((scores, q)) if len(q) else np.zeros(0, dtype=np.int64)
    qs, sc = q[order], as_float32(scores[order])
    tied = (qs[1:] == qs[:-1]) & (sc[1:] == sc[:-1])
    # a group starts where a tie begins after a non-tie
    starts = tied & ~np.concatenate(([False], tied[:-1]))
    in_tie = np.zeros(len(q), dtype=bool)
    in_tie[:-1] |= tied
    in_tie[1:] |= tied
    rows = np.flatnonzero(in_tie)
    block_start = np.ones(len(rows), dtype=bool)
    block_start[1:] = ~tied[rows[1:] - 1]
    only = _float32_only(scores[order][rows], np.flatnonzero(block_start))
    return int(np.count_nonzero(starts)), only
