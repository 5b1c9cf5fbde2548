"""Columns for in-memory rankings (dicts and lists), sorted for all questions at once."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit.data.formats._ranking import _count_ties, _rank_rows
from ragaudit.data.formats.columns import (
    RunColumns,
    _dedupe,
    assemble_run_columns,
    items_view,
)
from ragaudit.data.formats.strings import Strings
from ragaudit.data.runs import RankingInput, Run

__all__ = ["columns_from_rankings", "run_columns"]


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
        encoded = Strings.from_list_without_nul(ids)
    except TypeError:
        return None
    del ids
    if encoded is None or (scores is not None and not np.isfinite(scores).all()):
        return None  # the per-question path names the non-finite score
    items = encoded
    counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    del values
    q = np.repeat(np.arange(len(qids), dtype=np.int64), counts)
    item_hash = items.hashes()
    # Keys of one dict are distinct strings: only lists can repeat an id.
    keep = None if distinct else _dedupe(q, item_hash, items, qids, duplicates, name)
    if keep is not None:
        q, item_hash = q[keep], item_hash[keep]
        scores = None if scores is None else scores[keep]
    if scores is None:
        perm, tied_groups, float32_only = None, 0, 0
    elif order == "score":
        perm, tied_groups, float32_only = _rank_rows(q, scores, items_view(items, keep), len(qids))
    else:
        perm = None
        tied_groups, float32_only = _count_ties(q, scores)
    return assemble_run_columns(
        qids, q, items, keep, item_hash, scores, perm, (tied_groups, float32_only)
    )


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
    items = Strings.from_list(flat)
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
        scores=scores,
        tied_groups=run.tied_groups,
        float32_tied_groups=run.float32_tied_groups,
    )
