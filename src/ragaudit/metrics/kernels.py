"""Vectorised metric kernels: one value per question, computed for all questions at once.

Every kernel reads a padded ``(n_questions, depth)`` matrix holding, at ``[q, i]``, the grade
of the item the run ranked at position ``i + 1`` for question ``q`` (0 for unjudged items and
for padding past the end of a short ranking), plus per-question label statistics.  Positions
share one discount vector ``1 / log2(i + 1)``.  There is no Python loop over questions.

Conventions (those of trec_eval, so numbers agree with it):

* An item is *relevant* when its grade is >= the relevance threshold (default 1).
* nDCG and DCG use the grades themselves as gains, whatever the threshold; the ideal ranking
  is every labelled item with a positive grade, best first.
* A ratio whose denominator is 0 (no relevant items, IDCG = 0) is 0.
* precision@k divides by k even when fewer than k items were retrieved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ragaudit.metrics.incomplete import (
    RelevantCells,
    bpref,
    condense,
    inf_ap,
    judged_at,
    relevant_cells,
)

__all__ = [
    "KERNELS",
    "RankedGrades",
    "average_precision",
    "context_precision",
    "dcg",
    "discount",
    "f1",
    "hit",
    "ndcg",
    "precision",
    "r_precision",
    "recall",
    "reciprocal_rank",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def discount(depth: int) -> FloatArray:
    """Position discounts ``1 / log2(i + 1)`` for ranks ``i = 1..depth``.

    Examples
    --------
    >>> discount(5).round(2).tolist()
    [1.0, 0.63, 0.5, 0.43, 0.39]
    """
    return 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))


def _ratio(numerator: FloatArray, denominator: npt.ArrayLike) -> FloatArray:
    """``numerator / denominator`` with 0 wherever the denominator is 0."""
    den = np.broadcast_to(np.asarray(denominator, dtype=np.float64), numerator.shape)
    out = np.zeros_like(numerator, dtype=np.float64)
    np.divide(numerator, den, out=out, where=den > 0)
    return out


_Matrix = TypeVar("_Matrix", bound="np.ndarray[Any, Any]")


def _top(matrix: _Matrix, k: int | None) -> _Matrix:
    return matrix if k is None else matrix[:, :k]  # type: ignore[return-value]


def hit(rel: BoolArray, k: int | None) -> FloatArray:
    """Hit rate (trec_eval ``success_k``): ``1`` if any of the top ``k`` is relevant.

    Parameters
    ----------
    rel : bool ndarray of shape (n_questions, depth)
        ``rel[q, i]`` is True when the item at rank ``i + 1`` is relevant.
    k : int or None
        Cutoff; None means the whole ranking.

    Examples
    --------
    >>> hit(np.array([[False, True], [False, False]]), k=2).tolist()
    [1.0, 0.0]
    """
    return np.asarray(_top(rel, k).any(axis=1), dtype=np.float64)


def recall(rel: BoolArray, n_relevant: npt.ArrayLike, k: int | None) -> FloatArray:
    """Recall@k: ``|relevant in top k| / |relevant|`` (0 when a question has no relevant).

    Examples
    --------
    >>> recall(np.array([[True, False, True]]), [4], k=2).tolist()
    [0.25]
    """
    return _ratio(_top(rel, k).sum(axis=1).astype(np.float64), n_relevant)


def precision(rel: BoolArray, k: int | None) -> FloatArray:
    """Precision@k: ``|relevant in top k| / k``, dividing by k even for shorter rankings.

    With ``k=None`` the denominator is the matrix depth.

    Examples
    --------
    >>> precision(np.array([[True, False, False]]), k=5).tolist()
    [0.2]
    """
    top = _top(rel, k)
    depth = k if k is not None else rel.shape[1]
    return top.sum(axis=1).astype(np.float64) / float(max(depth, 1))


def f1(rel: BoolArray, n_relevant: npt.ArrayLike, k: int | None) -> FloatArray:
    """F1@k: ``2 P R / (P + R)`` from precision@k and recall@k, 0 when both are 0.

    Examples
    --------
    >>> f1(np.array([[True, False, True]]), [3], k=3).round(4).tolist()  # P = R = 2/3
    [0.6667]
    """
    p = precision(rel, k)
    r = recall(rel, n_relevant, k)
    return _ratio(2.0 * p * r, p + r)


def reciprocal_rank(rel: BoolArray, k: int | None) -> FloatArray:
    """Reciprocal rank (trec_eval ``recip_rank``): ``1 / rank`` of the first relevant item.

    Only the top ``k`` are searched when ``k`` is given; 0 when none is relevant.

    Examples
    --------
    >>> reciprocal_rank(np.array([[False, False, True], [False, False, False]]), None).tolist()
    [0.3333333333333333, 0.0]
    """
    top = _top(rel, k)
    if top.shape[1] == 0:
        return np.zeros(top.shape[0])
    first = top.argmax(axis=1)
    found = top[np.arange(top.shape[0]), first]
    return np.where(found, 1.0 / (first + 1.0), 0.0)


def _summed_precision(rel: BoolArray) -> FloatArray:
    """``sum_i precision@i * rel_i`` per row, visiting only the relevant positions.

    Relevant items are sparse, so this walks the (row, rank) pairs of ``np.nonzero`` (row
    major: ranks ascend within a row) instead of a cumulative sum over the whole matrix.
    """
    rows, ranks = np.nonzero(rel)
    if not len(rows):
        return np.zeros(rel.shape[0])
    found_so_far = np.arange(1, len(rows) + 1) - np.searchsorted(rows, rows, side="left")
    weights = found_so_far / (ranks + 1.0)
    return np.asarray(np.bincount(rows, weights=weights, minlength=rel.shape[0]), np.float64)


def average_precision(rel: BoolArray, n_relevant: npt.ArrayLike, k: int | None) -> FloatArray:
    """Average precision (trec_eval ``map`` / ``map_cut_k``).

    ``AP@k = sum_{i <= k, rel_i} precision@i / |relevant|``: dividing by all relevant items,
    not the ones found, is what penalises missed evidence.

    Examples
    --------
    >>> # the chapter's B *A* D *C* E: relevant at ranks 2 and 4 -> (1/2 + 2/4) / 2
    >>> average_precision(np.array([[False, True, False, True, False]]), [2], None).tolist()
    [0.5]
    """
    return _ratio(_summed_precision(_top(rel, k)), n_relevant)


def dcg(gains: FloatArray, k: int | None) -> FloatArray:
    """Discounted cumulative gain ``sum_{i <= k} gain_i / log2(i + 1)``.

    Examples
    --------
    >>> dcg(np.array([[0.0, 1.0, 0.0, 1.0, 0.0]]), 5).round(4).tolist()  # 1/log2(3) + 1/log2(5)
    [1.0616]
    """
    top = _top(gains, k)
    # Summed rank by rank, as trec_eval sums: a matrix product would let BLAS pick the order
    # by the row's position, so one question could score 1 ulp apart in two runs.
    weights = discount(top.shape[1])
    out = np.zeros(top.shape[0], dtype=np.float64)
    for rank in range(top.shape[1]):
        out += top[:, rank] * weights[rank]
    return out


def ndcg(gains: FloatArray, ideal_gains: FloatArray, k: int | None) -> FloatArray:
    """Normalised DCG: ``DCG@k / IDCG@k``, 0 when the ideal DCG is 0.

    Parameters
    ----------
    gains : float ndarray of shape (n_questions, depth)
        Gain of the item at each rank.
    ideal_gains : float ndarray of shape (n_questions, ideal_depth)
        Each question's labelled gains sorted in decreasing order (zero padded).
    k : int or None
        Cutoff for both the run and the ideal ranking.

    Examples
    --------
    >>> # the chapter's derivation: (1/log2(3) + 1/log2(5)) / (1 + 1/log2(3))
    >>> ndcg(np.array([[0.0, 1, 0, 1, 0]]), np.array([[1.0, 1]]), 5).round(4).tolist()
    [0.6509]
    """
    return _ratio(dcg(gains, k), dcg(ideal_gains, k))


def r_precision(rel: BoolArray, n_relevant: npt.ArrayLike) -> FloatArray:
    """R-precision (trec_eval ``Rprec``): precision at depth ``R = |relevant|``.

    Examples
    --------
    >>> r_precision(np.array([[False, True, True, False]]), [2]).tolist()
    [0.5]
    """
    n_rel = np.asarray(n_relevant, dtype=np.float64)
    within_r = np.arange(rel.shape[1])[None, :] < n_rel[:, None]
    return _ratio((rel & within_r).sum(axis=1).astype(np.float64), n_rel)


def context_precision(rel: BoolArray, k: int | None) -> FloatArray:
    """RAGAS context precision@k.

    ``sum_{i <= k} precision@i * rel_i / |relevant in top k|``, 0 when the top k holds no
    relevant item.  Unlike AP it divides by the relevant items *retrieved*, so it measures
    whether what was found is ranked first, not whether everything was found.

    Examples
    --------
    >>> # X *A* *C* Y Z: (1/2 + 2/3) / 2
    >>> context_precision(np.array([[False, True, True, False, False]]), 5).round(4).tolist()
    [0.5833]
    """
    top = _top(rel, k)
    return _ratio(_summed_precision(top), top.sum(axis=1))


@dataclass
class RankedGrades:
    """Everything the kernels need, for all evaluated questions at once.

    Parameters
    ----------
    grades : int ndarray of shape (n_questions, depth)
        Grade of the item at each rank (0 for unjudged items and padding); any integer
        dtype (the join fills the smallest integer type the grades fit).
    n_relevant : int ndarray of shape (n_questions,)
        Labelled items with grade >= ``threshold``.
    ideal_grades : int ndarray of shape (n_questions, ideal_depth)
        Positive labelled grades of each question, sorted decreasingly, zero padded.
    threshold : int
        Relevance threshold for the binary metrics.
    judged : bool ndarray of shape (n_questions, depth) or None
        True where the ranked item carries a label; needed by the measures for incomplete
        labels (:mod:`ragaudit.metrics.incomplete`) only.
    n_ranked : int ndarray of shape (n_questions,) or None
        Length of each question's ranking (``judged@k``).
    n_nonrelevant : int ndarray of shape (n_questions,) or None
        Labelled items with grade < ``threshold`` (``bpref``).
    """

    grades: npt.NDArray[np.integer[Any]]
    n_relevant: npt.NDArray[np.integer[Any]]
    ideal_grades: npt.NDArray[np.integer[Any]]
    threshold: int = 1
    judged: BoolArray | None = None
    n_ranked: npt.NDArray[np.integer[Any]] | None = None
    n_nonrelevant: npt.NDArray[np.integer[Any]] | None = None

    def need(self, name: str) -> Any:
        """The optional field ``name``; a clear error when the caller did not fill it."""
        value = getattr(self, name)
        if value is None:
            raise ValueError(f"RankedGrades.{name} is needed by this metric and was not given")
        return value

    @cached_property
    def condensed(self) -> npt.NDArray[np.integer[Any]]:
        """Grades with the unjudged items removed (Sakai's condensed list)."""
        return condense(self.grades, self.need("judged"))

    @cached_property
    def relevant_cells(self) -> RelevantCells:
        """The judged relevant cells and the judged items above each (bpref and infAP)."""
        return relevant_cells(self.grades, self.need("judged"), self.threshold)

    @cached_property
    def rel(self) -> BoolArray:
        """Binary relevance of each ranked item."""
        return np.asarray(self.grades >= self.threshold)

    @cached_property
    def linear_gains(self) -> FloatArray:
        """Grades as float gains."""
        return self.grades.astype(np.float64)

    @cached_property
    def ideal_linear_gains(self) -> FloatArray:
        """Ideal grades as float gains."""
        return self.ideal_grades.astype(np.float64)

    @cached_property
    def exp_gains(self) -> FloatArray:
        """Exponential gains ``2^grade - 1``."""
        return np.exp2(self.grades.astype(np.float64)) - 1.0

    @cached_property
    def ideal_exp_gains(self) -> FloatArray:
        """Exponential gains of the ideal ranking."""
        return np.exp2(self.ideal_grades.astype(np.float64)) - 1.0


Kernel = Callable[[RankedGrades, "int | None"], FloatArray]

KERNELS: dict[str, Kernel] = {
    "hit": lambda g, k: hit(g.rel, k),
    "recall": lambda g, k: recall(g.rel, g.n_relevant, k),
    "precision": lambda g, k: precision(g.rel, k),
    "f1": lambda g, k: f1(g.rel, g.n_relevant, k),
    "mrr": lambda g, k: reciprocal_rank(g.rel, k),
    "map": lambda g, k: average_precision(g.rel, g.n_relevant, k),
    # Only the top k columns are converted to float: the full matrix can be 10^7 cells.
    "ndcg": lambda g, k: ndcg(_top(g.grades, k).astype(np.float64), g.ideal_linear_gains, k),
    "ndcg_exp": lambda g, k: ndcg(g.exp_gains, g.ideal_exp_gains, k),
    "dcg": lambda g, k: dcg(g.linear_gains, k),
    "r_precision": lambda g, k: r_precision(g.rel, g.n_relevant),
    "context_precision": lambda g, k: context_precision(g.rel, k),
    "judged": lambda g, k: judged_at(g.need("judged"), g.need("n_ranked"), k),
    "bpref": lambda g, k: bpref(
        g.grades,
        g.need("judged"),
        g.n_relevant,
        g.need("n_nonrelevant"),
        g.threshold,
        g.relevant_cells,
    ),
    "infap": lambda g, k: inf_ap(
        g.grades, g.need("judged"), g.n_relevant, g.threshold, g.relevant_cells
    ),
    "ndcg_condensed": lambda g, k: ndcg(
        _top(g.condensed, k).astype(np.float64), g.ideal_linear_gains, k
    ),
    "map_condensed": lambda g, k: average_precision(
        _top(g.condensed, k) >= g.threshold, g.n_relevant, k
    ),
}
"""Family name -> kernel taking the prepared grades and the cutoff."""
