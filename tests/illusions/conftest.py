"""Fixtures for the illusions / explain tests.

``reference_evaluate`` is an engine written independently of ``ragaudit.metrics``: trec_eval
(through pytrec_eval) for P, recall, recip_rank, map_cut and ndcg_cut, and plain loops over
the definitions for the measures trec_eval does not have (hit, F1, DCG, exponential-gain nDCG,
RAGAS context precision).  The illusions cases are run through it *and* through the real
engine, so a wrong case definition and a wrong engine are caught separately.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import pytrec_eval

from ragaudit.data import Qrels, Run


@dataclass
class ReferenceResult:
    query_ids: tuple[str, ...]
    per_query: dict[str, np.ndarray]


def _loop_metric(family: str, k: int, ranking: Sequence[str], grades: dict[str, int]) -> float:
    top = ranking[:k]
    relevant = {item for item, g in grades.items() if g >= 1}
    flags = [item in relevant for item in top]
    found = sum(flags)
    if family == "hit":
        return float(found > 0)
    if family == "f1":
        p, r = found / k, found / len(relevant)
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)
    if family in ("dcg", "ndcg_exp"):
        exp = family == "ndcg_exp"

        def gain(g: int) -> float:
            return 2**g - 1 if exp else g

        dcg = sum(gain(grades.get(item, 0)) / math.log2(i + 2) for i, item in enumerate(top))
        if family == "dcg":
            return dcg
        ideal = sorted((gain(g) for g in grades.values() if g > 0), reverse=True)[:k]
        return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if family == "context_precision":
        total = sum(sum(flags[: i + 1]) / (i + 1) for i, flag in enumerate(flags) if flag)
        return 0.0 if found == 0 else total / found
    raise KeyError(family)


_TREC = {
    "precision": "P",
    "recall": "recall",
    "map": "map_cut",
    "ndcg": "ndcg_cut",
}


def reference_evaluate(qrels: Qrels, run: Run, metrics: Sequence[str]) -> ReferenceResult:
    """Score every question of ``run``; metric names as in CONTRACTS.md (``family@k``)."""
    query_ids = tuple(qrels)
    parsed = []
    for name in metrics:
        if name == "bpref":  # trec_eval's own, below
            continue
        match = re.fullmatch(r"([a-z_0-9]+)@(\d+)", name)
        assert match, name
        parsed.append((name, match.group(1), int(match.group(2))))
    cutoffs = sorted({k for _, _, k in parsed})
    trec_measures = {f"{_TREC[fam]}.{','.join(map(str, cutoffs))}" for fam in _TREC}
    trec_measures |= {"recip_rank", "bpref"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), trec_measures)
    # trec_eval sorts by score: give strictly decreasing scores in rank order.
    trec_run = {q: {item: float(100 - i) for i, item in enumerate(run[q])} for q in query_ids}
    trec = evaluator.evaluate(trec_run)
    # trec_eval -J: the ranking with its unjudged items removed (Sakai's condensed list)
    judged_only = pytrec_eval.RelevanceEvaluator(
        qrels.to_dict(), trec_measures, judged_docs_only_flag=True
    ).evaluate(trec_run)
    per_query: dict[str, np.ndarray] = {}
    if "bpref" in metrics:
        per_query["bpref"] = np.array([trec[q]["bpref"] for q in query_ids])
    for name, family, k in parsed:
        values = []
        for q in query_ids:
            if family == "ndcg_condensed":
                values.append(judged_only[q][f"ndcg_cut_{k}"])
            elif family == "judged":
                top = run[q][:k]
                values.append(sum(item in qrels[q] for item in top) / min(k, len(top)))
            elif family in _TREC:
                values.append(trec[q][f"{_TREC[family]}_{k}"])
            elif family == "mrr":
                assert k >= len(run[q]), "recip_rank has no cut-off: keep rankings within k"
                values.append(trec[q]["recip_rank"])
            else:
                values.append(_loop_metric(family, k, run[q], dict(qrels[q])))
        per_query[name] = np.array(values)
    return ReferenceResult(query_ids, per_query)


def _real_evaluate() -> Callable[..., Any]:
    from ragaudit.metrics import evaluate

    return evaluate  # type: ignore[no-any-return]


@pytest.fixture(params=["reference", "ragaudit"])
def engine(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """The reference engine and ragaudit's own, in turn."""
    if request.param == "reference":
        return reference_evaluate
    return _real_evaluate()
