"""Whiteboard derivations: nDCG, AP and context precision for one ranking, step by step.

Each ``explain_*`` function recomputes its metric with its own plain arithmetic (independent
of the vectorised engine in :mod:`ragaudit.metrics`) and keeps every intermediate number, so a
reader can check the result by hand: the gain, the discount and the contribution of every rank
for nDCG; precision@i at each relevant rank for AP; the RAGAS sum for context precision.  The
final number is the same one :func:`ragaudit.metrics.evaluate` reports for the matching metric
name (:attr:`Derivation.metric`), which the tests check on random rankings.

The derivation follows trec_eval's conventions:

* the ideal ranking behind IDCG uses *every* labelled relevant item, retrieved or not,
  sorted by gain and cut at ``k``;
* AP divides by the number of relevant items, so a relevant item that was never retrieved
  counts as a zero in the mean.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ragaudit._validate import check_int, check_unique
from ragaudit.exceptions import InputError, UndefinedMetricWarning
from ragaudit.metrics.registry import EXPLAINABLE

__all__ = [
    "EXPLAINABLE",
    "Derivation",
    "engine_value",
    "explain",
    "explain_ap",
    "explain_context_precision",
    "explain_ndcg",
]

Gain = Literal["linear", "exp"]

Cell = str | int | float


@dataclass(frozen=True)
class Derivation:
    """One metric derived step by step for a single ranking.

    Attributes
    ----------
    metric : str
        The engine's name for the same number (``"ndcg@5"``, ``"map@5"``,
        ``"context_precision@5"``...), so the two can be compared.
    value : float
        The result.
    k : int
        The cut-off used.
    columns : tuple of str
        Column names of :attr:`rows`.
    rows : tuple of tuple
        One row per rank ``1..min(k, len(ranking))``: ints, floats and strings.
    lines : tuple of str
        The arithmetic below the table, one line each, already formatted.
    totals : dict of str to float
        Named intermediate results (``dcg``, ``idcg``...), for JSON output.
    """

    metric: str
    value: float
    k: int
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    lines: tuple[str, ...]
    totals: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: metric, value, k, the table as records, totals and lines."""
        return {
            "metric": self.metric,
            "value": self.value,
            "k": self.k,
            "steps": [dict(zip(self.columns, row, strict=True)) for row in self.rows],
            "totals": dict(self.totals),
            "lines": list(self.lines),
        }


def _number(value: float) -> str:
    """A gain or grade: ``2`` rather than ``2.0``, otherwise 4 decimals."""
    return str(int(value)) if float(value).is_integer() else f"{value:.4f}"


def _validate(
    ranking: Sequence[str], grades: Mapping[str, int], k: int | None
) -> tuple[list[str], dict[str, int], int]:
    items = [str(item) for item in ranking]
    if not items:
        raise InputError("ranking: expected at least one item, found an empty ranking")
    check_unique(items, "ranking")
    cleaned: dict[str, int] = {}
    for item, grade in grades.items():
        cleaned[str(item)] = check_int(grade, f"grades: item {item!r}", minimum=0)
    if k is None:
        k = len(items)
    return items, cleaned, check_int(k, "k")


def _gain(grade: int, gain: str) -> float:
    return float(2**grade - 1) if gain == "exp" else float(grade)


def explain_ndcg(
    ranking: Sequence[str],
    grades: Mapping[str, int],
    k: int | None = None,
    gain: Gain = "linear",
) -> Derivation:
    r"""Derive nDCG@k: gain, discount and contribution per rank, then DCG / IDCG.

    .. math::

        \mathrm{DCG@k} = \sum_{i=1}^{k} \frac{g_i}{\log_2(i + 1)}, \qquad
        \mathrm{nDCG@k} = \frac{\mathrm{DCG@k}}{\mathrm{IDCG@k}}

    where :math:`g_i` is the grade of the item at rank *i* (``gain="linear"``) or
    :math:`2^{grade} - 1` (``gain="exp"``), and IDCG@k is the DCG of all labelled items sorted
    by gain, cut at *k*.  With no relevant item the result is 0 and an
    :class:`~ragaudit.exceptions.UndefinedMetricWarning` is emitted.

    Parameters
    ----------
    ranking : sequence of str
        Retrieved item ids, best first; no duplicates.
    grades : mapping of str to int
        Relevance grade of each labelled item (unlabelled items have grade 0).
    k : int, optional
        Cut-off; default the length of the ranking.
    gain : {"linear", "exp"}, default "linear"
        Gain of an item with grade *g*: *g*, or :math:`2^g - 1`.

    Returns
    -------
    Derivation
        ``metric`` is ``"ndcg@k"`` (``"ndcg_exp@k"`` for exponential gain).

    Examples
    --------
    The chapter's whiteboard example, relevant items at ranks 2 and 4:

    >>> d = explain_ndcg("B A D C E".split(), {"A": 1, "C": 1})
    >>> round(d.value, 4), d.metric
    (0.6509, 'ndcg@5')
    >>> print("\n".join(d.lines))
    DCG@5 = 0.6309 + 0.4307 = 1.0616
    IDCG@5 = 1/log2(2) + 1/log2(3) = 1.0000 + 0.6309 = 1.6309
    nDCG@5 = 1.0616 / 1.6309 = 0.6509
    """
    if gain not in ("linear", "exp"):
        raise InputError(f"gain: expected 'linear' or 'exp', found {gain!r}")
    items, labels, k = _validate(ranking, grades, k)
    depth = min(k, len(items))
    ranks = np.arange(1, depth + 1)
    log2_terms = np.log2(ranks + 1.0)
    discounts = 1.0 / log2_terms
    item_grades = [labels.get(item, 0) for item in items[:depth]]
    gains = np.array([_gain(g, gain) for g in item_grades])
    contributions = gains * discounts
    dcg = float(contributions.sum())

    ideal_gains = sorted((_gain(g, gain) for g in labels.values() if g > 0), reverse=True)[:k]
    ideal_logs = np.log2(np.arange(1, len(ideal_gains) + 1) + 1.0)
    ideal_terms = np.array(ideal_gains) / ideal_logs
    idcg = float(ideal_terms.sum())

    columns: tuple[str, ...]
    if gain == "exp":
        columns = ("rank i", "item", "grade", "gain", "log2(i+1)", "discount", "contribution")
    else:
        columns = ("rank i", "item", "gain", "log2(i+1)", "discount", "contribution")
    rows = []
    for i in range(depth):
        grade_cells: tuple[Cell, ...] = (item_grades[i],) if gain == "exp" else ()
        numbers = (float(log2_terms[i]), float(discounts[i]), float(contributions[i]))
        rows.append((int(ranks[i]), items[i], *grade_cells, _number(gains[i]), *numbers))

    name = "nDCG" if gain == "linear" else "nDCG(exp gain)"
    lines = []
    if depth < k:
        lines.append(f"(the ranking has {len(items)} items: ranks {depth + 1}..{k} add nothing)")
    nonzero = [f"{c:.4f}" for c in contributions if c != 0]
    if not nonzero:
        lines.append(f"DCG@{k} = 0 (no relevant item in the top {k})")
    elif len(nonzero) == 1:
        lines.append(f"DCG@{k} = {dcg:.4f}")
    else:
        lines.append(f"DCG@{k} = {' + '.join(nonzero)} = {dcg:.4f}")
    if not ideal_gains:
        lines.append(f"IDCG@{k} = 0 (no item is labelled relevant)")
        lines.append(f"{name}@{k} is undefined without relevant items; reported as 0")
        warnings.warn(
            "nDCG: no item is labelled relevant, so IDCG = 0; nDCG reported as 0",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        value = 0.0
    else:
        fractions = " + ".join(
            f"{_number(g)}/log2({i + 1})" for i, g in enumerate(ideal_gains, start=1)
        )
        terms = " + ".join(f"{t:.4f}" for t in ideal_terms)
        if len(ideal_gains) == 1:
            lines.append(f"IDCG@{k} = {fractions} = {idcg:.4f}")
        else:
            lines.append(f"IDCG@{k} = {fractions} = {terms} = {idcg:.4f}")
        value = dcg / idcg
        lines.append(f"{name}@{k} = {dcg:.4f} / {idcg:.4f} = {value:.4f}")
    metric = f"ndcg@{k}" if gain == "linear" else f"ndcg_exp@{k}"
    return Derivation(
        metric=metric,
        value=value,
        k=k,
        columns=columns,
        rows=tuple(rows),
        lines=tuple(lines),
        totals={"dcg": dcg, "idcg": idcg, "ndcg": value},
    )


def _precision_steps(
    items: list[str], labels: dict[str, int], depth: int, threshold: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    is_relevant = np.array([labels.get(item, 0) >= threshold for item in items[:depth]])
    hits = np.cumsum(is_relevant)
    precision = hits / np.arange(1, depth + 1)
    return is_relevant, hits, precision


def explain_ap(
    ranking: Sequence[str],
    grades: Mapping[str, int],
    k: int | None = None,
    threshold: int = 1,
) -> Derivation:
    r"""Derive average precision: precision@i at each relevant rank, divided by \|relevant\|.

    .. math::

        \mathrm{AP@k} = \frac{1}{|R|} \sum_{i=1}^{k} \mathrm{precision@}i \cdot
        \mathbb{1}[\text{item}_i \in R]

    where *R* is the set of items with grade >= ``threshold``.  Dividing by *|R|*, not by the
    number found, is what makes a missed relevant item cost something.  With *R* empty the
    result is 0 and an :class:`~ragaudit.exceptions.UndefinedMetricWarning` is emitted.

    Parameters
    ----------
    ranking : sequence of str
        Retrieved item ids, best first; no duplicates.
    grades : mapping of str to int
        Relevance grade of each labelled item.
    k : int, optional
        Cut-off; default the whole ranking (then ``metric`` is ``"map"``).
    threshold : int, default 1
        Minimum grade that counts as relevant.

    Examples
    --------
    >>> d = explain_ap("B A D C E".split(), {"A": 1, "C": 1})
    >>> d.value, d.metric
    (0.5, 'map')
    >>> explain_ap(["A", "X"], {"A": 1, "B": 1, "C": 1}).value   # one of three found
    0.3333333333333333
    """
    items, labels, k_used = _validate(ranking, grades, k)
    depth = min(k_used, len(items))
    is_relevant, hits, precision = _precision_steps(items, labels, depth, threshold)
    relevant = sorted(item for item, grade in labels.items() if grade >= threshold)
    counted = precision[is_relevant]
    total = float(counted.sum())

    rows = tuple(
        (i + 1, items[i], "yes" if is_relevant[i] else "no", int(hits[i]), float(precision[i]))
        for i in range(depth)
    )
    label = "AP" if k is None else f"AP@{k_used}"
    lines = [
        f"relevant at rank {i + 1} -> precision@{i + 1} = {int(hits[i])}/{i + 1} "
        f"= {precision[i]:.4f}"
        for i in np.flatnonzero(is_relevant)
    ]
    missed = [item for item in relevant if item not in set(items[:depth])]
    if missed:
        lines.append(f"never retrieved in the top {depth}: {', '.join(missed)} (each adds 0)")
    if not relevant:
        lines.append(f"{label} is undefined without relevant items; reported as 0")
        warnings.warn(
            "AP: no item is labelled relevant; AP reported as 0",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        value = 0.0
    else:
        value = total / len(relevant)
        summed = " + ".join(f"{p:.4f}" for p in counted) or "0"
        lines.append(
            f"{label} = ({summed}) / |relevant| = {total:.4f} / {len(relevant)} = {value:.4f}"
        )
    return Derivation(
        metric="map" if k is None else f"map@{k_used}",
        value=value,
        k=k_used,
        columns=("rank i", "item", "relevant", "hits", "precision@i"),
        rows=rows,
        lines=tuple(lines),
        totals={"sum_precision": total, "n_relevant": float(len(relevant)), "ap": value},
    )


def explain_context_precision(
    ranking: Sequence[str],
    grades: Mapping[str, int],
    k: int | None = None,
    threshold: int = 1,
) -> Derivation:
    r"""Derive RAGAS context precision@k: the precision@i sum over relevant items found.

    .. math::

        \mathrm{CP@k} = \frac{\sum_{i=1}^{k} \mathrm{precision@}i \cdot v_i}
                             {\sum_{i=1}^{k} v_i}

    with :math:`v_i = 1` when the item at rank *i* has grade >= ``threshold``.  The
    denominator counts relevant items *in the top k*, not all relevant items, so unlike AP
    this metric cannot see relevant items that were never retrieved.  With no relevant item
    in the top *k* the result is 0.

    Parameters
    ----------
    ranking : sequence of str
        Retrieved item ids, best first; no duplicates.
    grades : mapping of str to int
        Relevance grade of each labelled item.
    k : int, optional
        Cut-off; default the length of the ranking.
    threshold : int, default 1
        Minimum grade that counts as relevant.

    Examples
    --------
    >>> round(explain_context_precision("X A C Y Z".split(), {"A": 1, "C": 1}).value, 4)
    0.5833
    >>> explain_context_precision(["A", "X"], {"A": 1, "B": 1, "C": 1}).value   # blind to B, C
    1.0
    """
    items, labels, k = _validate(ranking, grades, k)
    depth = min(k, len(items))
    is_relevant, _, precision = _precision_steps(items, labels, depth, threshold)
    terms = precision * is_relevant
    found = int(is_relevant.sum())
    total = float(terms.sum())
    rows = tuple(
        (i + 1, items[i], int(is_relevant[i]), float(precision[i]), float(terms[i]))
        for i in range(depth)
    )
    if found == 0:
        value = 0.0
        lines = [f"context precision@{k} = 0 (no relevant item in the top {k})"]
    else:
        value = total / found
        summed = " + ".join(f"{t:.4f}" for t in terms[is_relevant])
        lines = [
            f"context precision@{k} = ({summed}) / (relevant in top {k}) "
            f"= {total:.4f} / {found} = {value:.4f}"
        ]
    return Derivation(
        metric=f"context_precision@{k}",
        value=value,
        k=k,
        columns=("rank i", "item", "v_i", "precision@i", "precision@i x v_i"),
        rows=rows,
        lines=tuple(lines),
        totals={"sum": total, "relevant_in_top_k": float(found), "context_precision": value},
    )


def explain(
    metric: str,
    ranking: Sequence[str],
    grades: Mapping[str, int],
    k: int | None = None,
    gain: Gain = "linear",
) -> Derivation:
    """Dispatch to :func:`explain_ndcg`, :func:`explain_ap` or :func:`explain_context_precision`.

    ``gain`` applies to nDCG only.

    Examples
    --------
    >>> round(explain("ndcg", ["B", "A"], {"A": 2, "B": 1}).value, 3)
    0.86
    >>> explain("mrr", ["A"], {"A": 1})
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: metric: expected one of ndcg, ap, context_precision, found 'mrr'
    """
    if metric == "ndcg":
        return explain_ndcg(ranking, grades, k=k, gain=gain)
    if metric == "ap":
        return explain_ap(ranking, grades, k=k)
    if metric == "context_precision":
        return explain_context_precision(ranking, grades, k=k)
    raise InputError(f"metric: expected one of {', '.join(EXPLAINABLE)}, found {metric!r}")


def engine_value(
    derivation: Derivation, ranking: Sequence[str], grades: Mapping[str, int]
) -> float:
    """The same number computed by :func:`ragaudit.metrics.evaluate`, the engine every other
    command uses, so ``ragaudit explain`` can show that the derivation agrees with it.

    Examples
    --------
    >>> d = explain("ap", ["B", "A"], {"A": 1})
    >>> d.value, engine_value(d, ["B", "A"], {"A": 1})  # A at rank 2: precision 1/2
    (0.5, 0.5)
    """
    from ragaudit.data import Qrels, Run
    from ragaudit.metrics.evaluate import evaluate  # imports the registry this module uses

    with warnings.catch_warnings():
        # the derivation has already warned about a degenerate question; say it once
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        result = evaluate(
            Qrels({"q": dict(grades)}, name="explain"), Run({"q": list(ranking)}),
            [derivation.metric],
        )  # fmt: skip
    return float(result.per_query[derivation.metric][0])
