"""Kernels for incomplete labels: judged@k, bpref, infAP and condensed rankings.

Most retrieved items of a RAG evaluation were never judged: a golden set names one or two
sources per question and every other retrieved item counts as non-relevant.  The measures
here say how much of a score rests on judged items (``judged@k``), or score rankings by
their judged items only, so that a retriever finding *different* evidence is not punished
for it (Buckley & Voorhees 2004; Yilmaz & Aslam 2006; Sakai 2007).

Every kernel reads the padded ``(n_questions, depth)`` grade matrix of
:mod:`ragaudit.metrics.kernels` plus a boolean matrix ``judged`` of the same shape (True
where the ranked item carries a label, of any grade; False for unjudged items and padding).
Only the labelled cells are visited (``np.flatnonzero``, row major), found once for bpref and
infAP together (:func:`relevant_cells`); there is no Python loop over questions.

Conventions are trec_eval's (``m_bpref.c``, ``m_infAP.c``, ``form_res_rels.c``): an
unlabelled item is *not in the pool*; ragaudit's grades are non-negative, so trec_eval's
"in the pool but unjudged" (a negative grade) never occurs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "INFAP_EPSILON",
    "RelevantCells",
    "bpref",
    "condense",
    "inf_ap",
    "judged_at",
    "relevant_cells",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntMatrix = npt.NDArray[np.integer[Any]]
IntArray = npt.NDArray[np.int64]

#: trec_eval's smoothing constant in infAP's precision estimate (``trec_eval.h``).
INFAP_EPSILON = 0.00001


def _divide(numerator: FloatArray, denominator: npt.ArrayLike) -> FloatArray:
    """``numerator / denominator`` with 0 wherever the denominator is 0."""
    den = np.broadcast_to(np.asarray(denominator, dtype=np.float64), numerator.shape)
    out = np.zeros(numerator.shape, dtype=np.float64)
    np.divide(numerator, den, out=out, where=den > 0)
    return out


def judged_at(judged: BoolArray, n_ranked: npt.ArrayLike, k: int | None) -> FloatArray:
    """Judged@k (ir_measures' ``Judged@k``): the share of the top k that carry a label.

    ``judged@k = |labelled items in the top k| / min(k, |ranking|)``, 0 for an empty
    ranking.  Dividing by the ranking's length when it is shorter than k is ir_measures'
    rule: a short ranking whose every item is judged is fully judged.

    Parameters
    ----------
    judged : bool ndarray of shape (n_questions, depth)
        True where the item at that rank has a label (of any grade).
    n_ranked : int array of shape (n_questions,)
        Length of each question's ranking.
    k : int or None
        Cutoff; None means the whole ranking.

    Examples
    --------
    >>> judged = np.array([[True, False, True, False], [True, False, False, False]])
    >>> judged_at(judged, [4, 1], k=3).tolist()  # 2 of 3; a ranking of 1 judged item
    [0.6666666666666666, 1.0]
    """
    top = judged if k is None else judged[:, :k]
    length = np.asarray(n_ranked, dtype=np.float64)
    if k is not None:
        length = np.minimum(length, float(k))
    return _divide(top.sum(axis=1).astype(np.float64), length)


@dataclass(frozen=True)
class RelevantCells:
    """The judged relevant cells of a grade matrix, row major (ranks ascend within a row),
    with what bpref and infAP count above each: computed once, read by both.

    Attributes
    ----------
    rows, ranks : int ndarrays
        Question row and 0-based rank of each judged relevant item.
    relevant_above : int ndarray
        Judged relevant items ranked above it in its row (``r - 1`` in infAP's formula).
    nonrelevant_above : int ndarray
        Judged non-relevant items ranked above it (``n_r`` in bpref's, ``n`` in infAP's).
    n_rows : int
        Rows of the grade matrix.
    """

    rows: IntArray
    ranks: IntArray
    relevant_above: IntArray
    nonrelevant_above: IntArray
    n_rows: int


def relevant_cells(grades: IntMatrix, judged: BoolArray, threshold: int = 1) -> RelevantCells:
    """Find the judged relevant cells of ``grades`` and count the judged items above each.

    One pass over the judged mask (``np.flatnonzero``: row major, so a row's cells come in
    rank order); a count within a row is a position in the flat list less the position of the
    row's first entry (row starts from ``np.bincount``: no search, no loop over questions).

    Examples
    --------
    >>> # n(nonrel) A(rel) x(unjudged) C(rel): A has 1 non-relevant above, C 1 and 1 relevant
    >>> c = relevant_cells(np.array([[0, 1, 0, 2]]), np.array([[True, True, False, True]]))
    >>> c.ranks.tolist(), c.relevant_above.tolist(), c.nonrelevant_above.tolist()
    ([1, 3], [0, 1], [1, 1])
    """
    n_rows, depth = judged.shape
    flat = np.flatnonzero(judged)
    rows, ranks = np.divmod(flat, max(depth, 1))
    relevant = np.flatnonzero(np.ravel(grades)[flat] >= threshold)
    # judged items above each relevant one: its place among its row's judged items
    judged_above = relevant - _row_starts(rows, n_rows)[rows[relevant]]
    rows, ranks = rows[relevant], ranks[relevant]
    # relevant ones above it: its place among its row's relevant items
    relevant_above = np.arange(len(rows), dtype=np.int64)
    relevant_above -= _row_starts(rows, n_rows)[rows]
    judged_above -= relevant_above  # leaves the non-relevant ones
    return RelevantCells(rows, ranks, relevant_above, judged_above, n_rows)


def _row_starts(rows: IntArray, n_rows: int) -> IntArray:
    """Position of each row's first entry in ``rows`` (grouped by row, ascending)."""
    counts = np.bincount(rows, minlength=n_rows)
    starts = np.zeros(n_rows, dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return starts


def bpref(
    grades: IntMatrix,
    judged: BoolArray,
    n_relevant: npt.ArrayLike,
    n_nonrelevant: npt.ArrayLike,
    threshold: int = 1,
    cells: RelevantCells | None = None,
) -> FloatArray:
    """Binary preference (trec_eval ``bpref``; Buckley & Voorhees 2004).

    ``bpref = (1/R) sum over judged relevant retrieved r of
    (1 - min(n_r, R) / min(N, R))``, where ``n_r`` is the number of judged non-relevant
    items ranked above ``r``, ``R`` the number of relevant labels, ``N`` the number of
    non-relevant labels (grade < threshold); a term is 1 when ``n_r = 0``.  Unjudged items
    are skipped: they neither help nor hurt.  0 when ``R = 0``.

    Parameters
    ----------
    grades : int ndarray of shape (n_questions, depth)
    judged : bool ndarray of shape (n_questions, depth)
    n_relevant, n_nonrelevant : int arrays of shape (n_questions,)
        Labels with grade >= threshold, and with grade < threshold.
    threshold : int, default 1
    cells : RelevantCells, optional
        :func:`relevant_cells` of ``grades`` and ``judged`` at ``threshold``, when already
        computed (infAP reads the same).

    Examples
    --------
    >>> # ranking: A(rel) x(unjudged) n(nonrel) C(rel); labels A, C relevant, n, m not
    >>> g = np.array([[1, 0, 0, 1]]); j = np.array([[True, False, True, True]])
    >>> bpref(g, j, [2], [2]).tolist()  # (1 + (1 - 1/2)) / 2
    [0.75]
    """
    if cells is None:
        cells = relevant_cells(grades, judged, threshold)
    rows = cells.rows
    r = np.asarray(n_relevant, dtype=np.float64)
    r_row = r[rows]
    worst = np.minimum(np.asarray(n_nonrelevant, dtype=np.float64)[rows], r_row)
    nonrel_above = cells.nonrelevant_above.astype(np.float64)
    # 1 - min(n_r, R) / min(N, R), evaluated where n_r > 0 (then N >= n_r > 0 and R > 0, as
    # this item is relevant), in trec_eval's order of operations; 1 elsewhere.
    above = nonrel_above > 0
    term = np.minimum(nonrel_above, r_row, out=nonrel_above)
    np.divide(term, worst, out=term, where=above)
    np.subtract(1.0, term, out=term, where=above)
    term[~above] = 1.0
    total = np.bincount(rows, weights=term, minlength=cells.n_rows).astype(np.float64)
    return _divide(total, r)


def inf_ap(
    grades: IntMatrix,
    judged: BoolArray,
    n_relevant: npt.ArrayLike,
    threshold: int = 1,
    cells: RelevantCells | None = None,
) -> FloatArray:
    """Inferred average precision (trec_eval ``infAP``; Yilmaz & Aslam 2006).

    For the judged relevant item at rank ``j + 1`` (``j >= 0`` items above it), with ``r``
    the judged relevant items up to and including it and ``n`` the judged non-relevant items
    above it, the estimated precision is 1 when ``j = 0``, else

    ``1/(j+1) + (j/(j+1)) * ((r-1+n)/j) * ((r-1+eps) / (r-1+n+2 eps))``

    with ``eps = 1e-5``; infAP is their sum over ``R`` (0 when ``R = 0``).  Unjudged items
    above count in ``j`` but not in ``(r-1+n)/j``: they are averaged in as zeros (trec_eval's
    reading of unpooled items).  With complete labels it equals AP up to ``eps``.
    ``cells``: as in :func:`bpref`.

    Examples
    --------
    >>> # x(unjudged) A(rel): 1/2 + (1/2) * (0/1) * (eps / (0 + 2 eps)) = 0.5
    >>> inf_ap(np.array([[0, 1]]), np.array([[False, True]]), [1]).tolist()
    [0.5]
    """
    if cells is None:
        cells = relevant_cells(grades, judged, threshold)
    above_rel = cells.relevant_above.astype(np.float64)  # r - 1
    nonrel = cells.nonrelevant_above.astype(np.float64)  # n
    j = cells.ranks.astype(np.float64)
    safe_j = np.where(j > 0, j, 1.0)
    # Written in trec_eval's order of operations, so that sums agree to the last bits.
    estimate = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((above_rel + nonrel) / safe_j) * (
        (above_rel + INFAP_EPSILON) / (above_rel + nonrel + 2 * INFAP_EPSILON)
    )
    estimate[j == 0] = 1.0
    total = np.bincount(cells.rows, weights=estimate, minlength=cells.n_rows)
    return _divide(total.astype(np.float64), n_relevant)


def condense(grades: IntMatrix, judged: BoolArray) -> IntMatrix:
    """The condensed list (Sakai 2007): each row's judged items moved up, in rank order,
    unjudged items removed (the tail zero padded).

    Scoring the condensed list with nDCG or AP gives ``nDCG'`` and ``AP'``; it is what
    trec_eval ``-J`` and Pyserini's ``-remove-unjudged`` compute.

    Examples
    --------
    >>> condense(np.array([[0, 2, 0, 1]]), np.array([[False, True, True, True]])).tolist()
    [[2, 0, 1, 0]]
    """
    rows, ranks = np.nonzero(judged)
    out = np.zeros_like(grades)
    place = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
    out[rows, place] = grades[rows, ranks]
    return out
