"""Per-question metrics of a harness run and the summary of a saved run.

Retrieval metrics are computed once for all questions with :func:`ragaudit.metrics.evaluate`,
at document level by lifting each question's top-``k`` chunks to their documents (a document
counts at the rank of its first chunk), and at chunk level (``chunk_`` prefix) when chunk
labels are given.  The offline judges' verdicts become the ``answered``, ``correct``,
``keyword_hit``, ``evidence_in_context`` and ``faithfulness`` metrics.  The run's summary is
computed from the saved-run model, in one place:
:func:`ragaudit.data.saved_run.summary.summarise_run`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run
from ragaudit.data.saved_run import Judgments, generation_error_of
from ragaudit.data.saved_run.metrics import OFFLINE_JUDGE_METRICS, RETRIEVAL_FAMILIES

__all__ = ["RETRIEVAL_METRICS", "judge_metrics", "metric_key", "retrieval_metrics"]

# Family names; each is evaluated at config.k and stored as e.g. "recall@k".
RETRIEVAL_METRICS: tuple[str, ...] = RETRIEVAL_FAMILIES
_JUDGE_METRICS = OFFLINE_JUDGE_METRICS


def metric_key(family: str, prefix: str = "") -> str:
    """The saved-run name of a retrieval metric family, e.g. ``recall@k``, ``chunk_ndcg@k``."""
    return f"{prefix}{family}@k"


def retrieval_metrics(
    rows: Sequence[Mapping[str, Any]],
    k: int,
    chunk_to_doc: Mapping[str, str],
    *,
    qrels: Qrels,
    unit: str = "doc",
) -> dict[str, dict[str, float]]:
    """Per-question retrieval metrics at ``k`` for the rows that have labels.

    Parameters
    ----------
    rows : sequence of row dicts
        Each with ``id`` and ``retrieved`` (ranked ``chunk_id`` entries).
    k : int
        Cut-off: the top ``k`` chunks are scored.
    chunk_to_doc : mapping
        Lifts chunk ids to document ids (used when ``unit="doc"``).
    qrels : Qrels
        Document or chunk labels; rows without labels get no entry.
    unit : {"doc", "chunk"}

    Returns
    -------
    dict
        ``{question id: {"hit@k": ..., "recall@k": ..., ...}}`` (``chunk_`` prefix for chunks).
        Document level: the top ``k`` chunks are lifted to their documents (each document at
        the rank of its first chunk), then scored at ``k``, so ``precision@k`` is
        ``relevant documents among them / k``.
    """
    from ragaudit.metrics import evaluate  # imported late: the metrics engine is a peer package

    labelled = [row for row in rows if row["id"] in qrels]
    if not labelled:
        return {}
    prefix = "" if unit == "doc" else "chunk_"
    if not any(row["retrieved"][:k] for row in labelled):
        # Nothing retrieved for any question (a live pipeline or an import whose contexts all
        # went unmatched): each scores 0, as missing="zero" scores one empty ranking.
        return {
            row["id"]: {metric_key(family, prefix): 0.0 for family in RETRIEVAL_METRICS}
            for row in labelled
        }
    chunk_run = Run(
        {row["id"]: [r["chunk_id"] for r in row["retrieved"][:k]] for row in labelled},
        unit="chunk",
        duplicates="first",
    )
    run = chunk_run.to_docs(chunk_to_doc) if unit == "doc" else chunk_run
    sub_qrels = Qrels({row["id"]: qrels[row["id"]] for row in labelled}, unit=unit)
    names = [f"{family}@{k}" for family in RETRIEVAL_METRICS]
    result = evaluate(sub_qrels, run, names, missing="zero")
    values = np.column_stack([np.asarray(result.per_query[n], dtype=float) for n in names])
    return {
        qid: {
            metric_key(family, prefix): float(v)
            for family, v in zip(RETRIEVAL_METRICS, values[i], strict=True)
        }
        for i, qid in enumerate(result.query_ids)
    }


#: Row metric -> the LLM judge that overwrites its verdict (``judges.llm`` writes ``correct``).
_DECIDED_BY: dict[str, str] = {"correct": "correctness", "faithfulness": "faithfulness"}


def judge_metrics(row: Mapping[str, Any]) -> dict[str, float | None]:
    """The offline judges' metrics of one row (all null when generation failed)."""
    judges = row.get("judges") or {}
    if generation_error_of(row):
        return dict.fromkeys(_JUDGE_METRICS)

    def number(value: Any) -> float | None:
        return None if value is None else float(value)

    metrics = {
        "answered": 0.0 if judges.get("abstained") else 1.0,
        "correct": number(judges.get("correct")),
        "keyword_hit": number(judges.get("keyword_hit")),
        "evidence_in_context": number(judges.get("evidence_in_context")),
        "faithfulness": number(judges.get("faithfulness")),
    }
    # A failed judge nulls only the metrics it decides; the other judges' verdicts stand.
    failed = Judgments(judges).failed
    for metric, judge in _DECIDED_BY.items():
        if judge in failed:
            metrics[metric] = None
    return metrics
