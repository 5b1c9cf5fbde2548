"""Id pitfalls of a run: a question retrieving itself.

In collections where questions are documents too (BEIR's ArguAna, Quora, CQADupStack), a
retriever finds the question's own text first.  BEIR's evaluation drops those hits
(``ignore_identical_ids``); not dropping them moved ArguAna's nDCG@10 from 31.5 to 41.4
(Thakur et al. 2021, BEIR).  :func:`identical_id_rows` finds them without a Python loop over
the run (filtered by length and first byte, then compared byte for byte);
:func:`drop_identical_ids` removes them.
"""

from __future__ import annotations

import numpy as np

from ragaudit.data.formats import RunColumns
from ragaudit.data.formats.strings import IntArray, Strings
from ragaudit.data.runs import Run

__all__ = ["drop_identical_ids", "identical_id_rows"]


def identical_id_rows(cols: RunColumns) -> tuple[IntArray, IntArray]:
    """Ranked rows whose item id equals their question id: (row, question index), in rank
    order.

    Examples
    --------
    >>> from ragaudit.data.formats import run_columns
    >>> rows, questions = identical_id_rows(run_columns(Run({"q1": ["d1", "q1"], "q2": ["x"]})))
    >>> rows.tolist(), questions.tolist()
    ([1], [0])
    """
    if not cols.n_rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    names = Strings.from_list(list(cols.qids))
    # Cheap filter first (this runs on every evaluation): an item can equal some question id
    # only if its (length, first byte) is one a question id has.  Computed in file order,
    # which reads the item buffer front to back; usually no item passes and the check costs
    # two sequential passes.  Only the items left are compared byte for byte.
    items = cols.items
    item_key, name_key = _length_and_first_byte(items), _length_and_first_byte(names)
    # A lookup table over the question ids' keys (small: 256 per length up to the longest).
    possible = np.zeros(int(name_key.max(initial=0)) + 2, dtype=bool)
    possible[name_key] = True
    possible[-1] = False  # every longer item lands here
    candidates = np.flatnonzero(possible[np.minimum(item_key, len(possible) - 1)])
    if not len(candidates):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    order = cols.row_order
    ranked_of_item = np.full(len(items), -1, dtype=np.int64)
    ranked_of_item[order] = np.arange(len(order), dtype=np.int64)
    rows = ranked_of_item[candidates]
    rows = np.sort(rows[rows >= 0])  # items dropped as duplicates are not ranked
    row_question = np.searchsorted(cols.offsets, rows, side="right") - 1
    # Then the same filter against the row's own question, before the byte comparison.
    own = item_key[order[rows]] == name_key[row_question]
    rows, row_question = rows[own], row_question[own]
    same = names.equal(row_question, items, order[rows])
    return rows[same], row_question[same]


def _length_and_first_byte(strings: Strings) -> IntArray:
    """``length * 256 + first byte`` of each string (``0`` for the empty string)."""
    lengths = strings.lengths
    wide = len(lengths) and int(lengths.max()) >= 1 << 23  # else 32 bits hold the key
    key = lengths.astype(np.int64 if wide else np.int32) << 8
    if len(strings.data):  # the start of an empty string at the end is past the data: clip
        key |= strings.data[np.minimum(strings.offsets[:-1], len(strings.data) - 1)]
    key[lengths == 0] = 0
    return key


def drop_identical_ids(run: Run) -> Run:
    """``run`` without the items named like their question (BEIR's ``ignore_identical_ids``);
    the order of the other items is kept.

    Examples
    --------
    >>> drop_identical_ids(Run({"q1": ["d1", "q1", "d2"]}))["q1"]
    ['d1', 'd2']
    """
    kept = Run(
        {qid: [item for item in run[qid] if item != qid] for qid in run},
        unit=run.unit,
        order="given",
        name=run.name,
    )
    kept.tied_groups, kept.float32_tied_groups = run.tied_groups, run.float32_tied_groups
    kept.dropped_duplicates = run.dropped_duplicates
    return kept
