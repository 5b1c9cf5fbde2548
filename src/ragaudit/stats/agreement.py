"""Agreement between two labellers: Cohen's kappa, weighted kappa and raw agreement.

Relevance labels are the experiment (chapter 21.3): before trusting a metric computed on them,
check that two labellers (two people, a person and an LLM, two prompts) agree beyond chance.
Raw agreement flatters a labeller who says the majority grade every time; kappa corrects for
the agreement the two label distributions would produce by chance.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragaudit.exceptions import InputError, RagauditWarning

__all__ = ["AgreementResult", "cohen_kappa", "label_agreement"]

_WEIGHTS = (None, "linear", "quadratic")


def _confusion(a: np.ndarray, b: np.ndarray, categories: np.ndarray) -> np.ndarray:
    k = categories.size
    index_a = np.searchsorted(categories, a)
    index_b = np.searchsorted(categories, b)
    return np.bincount(index_a * k + index_b, minlength=k * k).reshape(k, k)


def _kappa_from_confusion(
    confusion: np.ndarray, categories: np.ndarray, weights: str | None
) -> float:
    total = confusion.sum()
    observed = confusion / total
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    distance = np.abs(categories[:, None] - categories[None, :]).astype(float)
    if weights is None:
        weight = (distance > 0).astype(float)
    elif weights == "linear":
        weight = distance
    else:
        weight = distance**2
    expected_disagreement = float(np.sum(weight * expected))
    if expected_disagreement == 0.0:
        # Both labellers used one and the same class: agreement equals chance agreement, so
        # the honest value is 0 (no evidence of agreement beyond chance), not 1.
        return 0.0
    return 1.0 - float(np.sum(weight * observed)) / expected_disagreement


def _check_labels(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if a_arr.ndim != 1 or a_arr.shape != b_arr.shape:
        raise InputError(
            f"expected two 1-D label sequences of equal length, found shapes {a_arr.shape} and "
            f"{b_arr.shape}"
        )
    if a_arr.size == 0:
        raise InputError("expected at least one item labelled by both labellers, found none")
    for name, values in (("labels_a", a_arr), ("labels_b", b_arr)):
        if values.dtype.kind not in "biuf" or not np.all(np.mod(values, 1) == 0):
            raise InputError(f"{name}: expected integer grades")
    return a_arr.astype(np.int64), b_arr.astype(np.int64)


def cohen_kappa(labels_a: Any, labels_b: Any, *, weights: str | None = None) -> float:
    r"""Cohen's kappa between two labellers' grades of the same items.

    .. math:: \kappa = 1 - \frac{\sum_{ij} w_{ij} O_{ij}}{\sum_{ij} w_{ij} E_{ij}}

    with :math:`O` the observed joint distribution of (grade A, grade B), :math:`E` the
    product of its margins, and :math:`w_{ij}` 0/1 (unweighted), :math:`|g_i - g_j|`
    (linear) or :math:`(g_i - g_j)^2` (quadratic).  Distances use the grade *values*, with
    every integer grade between the smallest and largest seen as a category (the same as
    ``sklearn.metrics.cohen_kappa_score(..., labels=range(lo, hi + 1))``).  Unweighted it is
    :math:`(p_o - p_e) / (1 - p_e)`.

    When a labeller used a single grade the chance agreement equals the observed one and
    kappa is 0 (a :class:`~ragaudit.exceptions.RagauditWarning` says so); when both used the
    same single grade kappa is 0/0 and is defined as 0 for the same reason.

    Parameters
    ----------
    labels_a, labels_b : array_like of int, shape (n,)
    weights : {None, "linear", "quadratic"}, default None

    Returns
    -------
    float

    Examples
    --------
    >>> cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0])   # p_o = 3/4, p_e = 1/2*1/4 + 1/2*3/4
    0.5
    >>> round(cohen_kappa([0, 1, 2, 2], [0, 2, 2, 1], weights="quadratic"), 4)  # 1 - 2/5.5
    0.6364
    """
    if weights not in _WEIGHTS:
        raise InputError(f"weights: expected None, 'linear' or 'quadratic', found {weights!r}")
    a, b = _check_labels(labels_a, labels_b)
    for name, values in (("A", a), ("B", b)):
        if np.unique(values).size == 1:
            warnings.warn(
                f"labeller {name} used a single grade ({values[0]}) for all {values.size} "
                "items: kappa is 0 by definition (no agreement beyond chance is measurable)",
                RagauditWarning,
                stacklevel=2,
            )
    categories = np.arange(min(a.min(), b.min()), max(a.max(), b.max()) + 1)
    return _kappa_from_confusion(_confusion(a, b, categories), categories, weights)


@dataclass(frozen=True)
class AgreementResult:
    """Agreement between two label sets over the items both labelled.

    Attributes
    ----------
    kappa : float
        Unweighted Cohen's kappa.
    weighted_kappa : float
        Quadratic-weighted kappa (equal to ``kappa`` for two adjacent grades).
    raw_agreement : float
        Share of items given the same grade.
    n_items : int
        Items labelled by both.
    n_questions : int
        Questions with at least one such item.
    only_a, only_b : int
        Items labelled by one side only (excluded).
    categories : tuple of int
        Grades, ascending (rows/columns of ``confusion``).
    confusion : tuple of tuple of int
        Counts, rows = A's grade, columns = B's grade.
    """

    kappa: float
    weighted_kappa: float
    raw_agreement: float
    n_items: int
    n_questions: int
    only_a: int
    only_b: int
    categories: tuple[int, ...]
    confusion: tuple[tuple[int, ...], ...]


def _pairs(
    labels_a: Mapping[str, Mapping[str, int]],
    labels_b: Mapping[str, Mapping[str, int]],
    implicit_zero: bool,
) -> tuple[list[int], list[int], int, int, int]:
    grades_a: list[int] = []
    grades_b: list[int] = []
    only_a = only_b = 0
    questions = 0
    for qid in sorted(set(labels_a) | set(labels_b)):
        items_a = labels_a.get(qid)
        items_b = labels_b.get(qid)
        if items_a is None or items_b is None:
            only_a += len(items_a or {})
            only_b += len(items_b or {})
            continue
        if implicit_zero:  # both labelled the question completely: an absent item is grade 0
            shared = sorted(set(items_a) | set(items_b))
        else:
            shared = sorted(set(items_a) & set(items_b))
            only_a += len(set(items_a) - set(items_b))
            only_b += len(set(items_b) - set(items_a))
        questions += bool(shared)
        grades_a.extend(int(items_a.get(item, 0)) for item in shared)
        grades_b.extend(int(items_b.get(item, 0)) for item in shared)
    return grades_a, grades_b, questions, only_a, only_b


def label_agreement(
    labels_a: Mapping[str, Mapping[str, int]],
    labels_b: Mapping[str, Mapping[str, int]],
    *,
    threshold: int | None = None,
    implicit_zero: bool = False,
) -> AgreementResult:
    """Kappa, quadratic-weighted kappa and raw agreement of two label sets.

    Items are paired by ``(question id, item id)``; items labelled by only one side are
    counted and excluded.  With ``implicit_zero`` (chunk-label files, which list only positive
    grades of completely labelled questions) every item either side graded is compared and an
    absent grade counts as 0.

    Parameters
    ----------
    labels_a, labels_b : mapping of question -> mapping of item -> grade
        For example two :class:`~ragaudit.data.qrels.Qrels`.
    threshold : int, optional
        Collapse grades to binary relevance first (``grade >= threshold`` -> 1).
    implicit_zero : bool, default False

    Returns
    -------
    AgreementResult

    Examples
    --------
    >>> a = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1}}
    >>> b = {"q1": {"d1": 2, "d2": 1, "d3": 1}, "q3": {"d9": 0}}
    >>> result = label_agreement(a, b)
    >>> result.n_items, result.only_a, result.only_b, round(result.raw_agreement, 3)
    (3, 1, 1, 0.667)
    """
    grades_a, grades_b, questions, only_a, only_b = _pairs(labels_a, labels_b, implicit_zero)
    if not grades_a:
        raise InputError(
            "the two label sets have no (question, item) pair in common "
            f"({sum(map(len, labels_a.values()))} vs {sum(map(len, labels_b.values()))} "
            "labelled items); are they labels of the same questions and the same unit?"
        )
    a = np.asarray(grades_a, dtype=np.int64)
    b = np.asarray(grades_b, dtype=np.int64)
    if threshold is not None:
        a, b = (a >= threshold).astype(np.int64), (b >= threshold).astype(np.int64)
    kappa = cohen_kappa(a, b)
    categories = np.arange(min(a.min(), b.min()), max(a.max(), b.max()) + 1)
    confusion = _confusion(a, b, categories)
    return AgreementResult(
        kappa=kappa,
        weighted_kappa=_kappa_from_confusion(confusion, categories, "quadratic"),
        raw_agreement=float(np.mean(a == b)),
        n_items=int(a.size),
        n_questions=questions,
        only_a=only_a,
        only_b=only_b,
        categories=tuple(int(c) for c in categories),
        confusion=tuple(tuple(int(x) for x in row) for row in confusion),
    )
