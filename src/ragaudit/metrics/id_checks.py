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
from ragaudit.data.formats.strings import IntArray
from ragaudit.data.formats.strings import Strings as _Strings  # local name kept (merge)
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
    lengths = np.diff(cols.offsets)
    row_question = np.repeat(np.arange(len(cols.qids)), lengths)
    if not cols.n_rows:
        return row_question, row_question
    names = _Strings.from_list(list(cols.qids))
    # Cheap filters first (this runs on every evaluation): same length, then same first byte;
    # only the rows left are compared byte for byte.
    items, order = cols.items, cols.row_order
    length = items.lengths_of(order)
    name_length = names.lengths[row_question]
    rows = np.flatnonzero(length == name_length)
    nonempty = rows[length[rows] > 0]
    first_item = items.data[items.offsets[order[nonempty]]]
    first_name = names.data[names.offsets[row_question[nonempty]]]
    rows = np.union1d(rows[length[rows] == 0], nonempty[first_item == first_name])
    rows = rows[names.equal(row_question[rows], items, order[rows])]
    return rows, row_question[rows]


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
