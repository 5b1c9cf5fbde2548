"""Metric illusion 7: the labels came from one system, so nDCG favours it.

The labels were made by judging the top 5 of system ``pooled`` (A and B relevant; X, Y and W
judged not relevant).  System ``new`` ranks two items nobody judged (U, V) first.  Counting
them as non-relevant, nDCG@5 prefers ``pooled``; scoring only what was judged (the condensed
nDCG'@5 of Sakai 2007, and bpref of Buckley & Voorhees 2004) prefers ``new``.  judged@5 (1.0
against 0.6) is the warning sign, and ``evaluate`` / ``compare`` print it beside the metrics.
Every number is computed by the engine passed in, as for the other cases.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragaudit.data import Qrels, Run
from ragaudit.diagnose.illusion_types import CaseTable, Cell, IllusionCase

__all__ = ["UNJUDGED_LABELS", "UNJUDGED_SYSTEMS", "unjudged_case"]

K = 5
#: Grades of the judged items: the top 5 of ``pooled``, judged by hand.
UNJUDGED_LABELS: Mapping[str, int] = {"A": 1, "B": 1, "X": 0, "Y": 0, "W": 0}
UNJUDGED_SYSTEMS = (("pooled", "X A Y B W"), ("new", "U V A W B"))
_COLUMNS = (
    ("judged@5", "judged@5"),
    ("nDCG@5", "ndcg@5"),
    ("nDCG'@5", "ndcg_condensed@5"),
    ("bpref", "bpref"),
)


def _mark(ranking: Sequence[str], grades: Mapping[str, int]) -> str:
    """Relevant starred, unjudged followed by ``?``."""
    marks = []
    for item in ranking:
        if item not in grades:
            marks.append(f"{item}?")
        else:
            marks.append(f"*{item}*" if grades[item] >= 1 else item)
    return " ".join(marks)


def unjudged_case(evaluate: Callable[..., Any], number: int = 7) -> IllusionCase:
    """The case: two systems ordered one way by nDCG@5, the other by nDCG'@5 and bpref.

    Examples
    --------
    >>> from ragaudit.metrics import evaluate
    >>> case = unjudged_case(evaluate)
    >>> {s["name"]: round(s["metrics"]["bpref"], 2) for s in case.data["systems"]}
    {'pooled': 0.25, 'new': 0.75}
    """
    metrics = [name for _, name in _COLUMNS]
    qrels = Qrels({name: dict(UNJUDGED_LABELS) for name, _ in UNJUDGED_SYSTEMS}, name="illusions")
    run = Run({name: ranking.split() for name, ranking in UNJUDGED_SYSTEMS}, order="given")
    result = evaluate(qrels, run, metrics)
    row = {qid: i for i, qid in enumerate(result.query_ids)}
    scores = {
        name: {m: float(result.per_query[m][row[name]]) for m in metrics}
        for name, _ in UNJUDGED_SYSTEMS
    }
    rows: tuple[tuple[Cell, ...], ...] = tuple(
        (name, _mark(ranking.split(), UNJUDGED_LABELS), *(scores[name][m] for m in metrics))
        for name, ranking in UNJUDGED_SYSTEMS
    )
    header = ("system", f"top-{K} (? = unjudged)", *(label for label, _ in _COLUMNS))
    return IllusionCase(
        number=number,
        key="unjudged_is_not_irrelevant",
        title="Labels made from one system favour it",
        setup=(
            "labels = the top 5 of 'pooled', judged: relevant = {A, B}, not relevant = "
            f"{{W, X, Y}}; U and V were never judged; k = {K}"
        ),
        blocks=(CaseTable(header, rows),),
        lesson=(
            "nDCG counts the unjudged U and V as non-relevant and prefers the system the labels "
            "came from; scored on judged items only (nDCG', bpref) 'new' ranks the evidence "
            "higher. A low judged@k is the warning sign: judge the holes (ragaudit labels fill) "
            "before trusting the order."
        ),
        data={
            "k": K,
            "labels": dict(UNJUDGED_LABELS),
            "systems": [
                {"name": name, "ranking": ranking.split(), "metrics": scores[name]}
                for name, ranking in UNJUDGED_SYSTEMS
            ],
        },
    )
