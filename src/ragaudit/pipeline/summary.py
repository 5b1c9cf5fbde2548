"""Per-question metrics of a harness run and the summary of a saved run.

Retrieval metrics are computed once for all questions with :func:`ragaudit.metrics.evaluate`,
at document level by lifting each question's top-``k`` chunks to their documents (a document
counts at the rank of its first chunk), and at chunk level (``chunk_`` prefix) when chunk
labels are given.  The offline judges' verdicts become the ``answered``, ``correct``,
``keyword_hit`` and ``evidence_in_context`` metrics; :func:`summarise` averages them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run

__all__ = [
    "RETRIEVAL_METRICS",
    "count_judge_errors",
    "failed_judges",
    "judge_metrics",
    "metric_key",
    "retrieval_metrics",
    "summarise",
]

# Family names; each is evaluated at config.k and stored as e.g. "recall@k".
RETRIEVAL_METRICS: tuple[str, ...] = ("hit", "recall", "precision", "mrr", "ndcg", "map")
_JUDGE_METRICS: tuple[str, ...] = ("answered", "correct", "keyword_hit", "evidence_in_context")


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
    chunk_run = Run(
        {row["id"]: [r["chunk_id"] for r in row["retrieved"][:k]] for row in labelled},
        unit="chunk",
        duplicates="first",
    )
    run = chunk_run.to_docs(chunk_to_doc) if unit == "doc" else chunk_run
    sub_qrels = Qrels({row["id"]: qrels[row["id"]] for row in labelled}, unit=unit)
    names = [f"{family}@{k}" for family in RETRIEVAL_METRICS]
    result = evaluate(sub_qrels, run, names, missing="zero")
    prefix = "" if unit == "doc" else "chunk_"
    values = np.column_stack([np.asarray(result.per_query[n], dtype=float) for n in names])
    return {
        qid: {
            metric_key(family, prefix): float(v)
            for family, v in zip(RETRIEVAL_METRICS, values[i], strict=True)
        }
        for i, qid in enumerate(result.query_ids)
    }


#: Row metric -> the LLM judge that overwrites its verdict (``judges.llm`` writes ``correct``).
_DECIDED_BY: dict[str, str] = {"correct": "correctness"}


def failed_judges(judges: Mapping[str, Any]) -> set[str]:
    """Names of the judges that failed on a row (``judge_errors`` keys, else parsed from the
    ``"judge: reason; ..."`` string of ``judge_error``; ``"?"`` when no name can be read).

    >>> sorted(failed_judges({"judge_errors": {"sufficiency": "bad JSON"}}))
    ['sufficiency']
    >>> sorted(failed_judges({"judge_error": "citations: timeout; relevance: 500"}))
    ['citations', 'relevance']
    >>> failed_judges({"keyword_hit": 1.0})
    set()
    """
    named = judges.get("judge_errors")
    if isinstance(named, Mapping) and named:
        return {str(name) for name in named}
    text = judges.get("judge_error")
    if not text:
        return set()
    names = {part.split(":", 1)[0].strip() for part in str(text).split(";") if ":" in part}
    return {n for n in names if n and " " not in n} or {"?"}


def judge_metrics(row: Mapping[str, Any]) -> dict[str, float | None]:
    """The offline judges' metrics of one row (all null when generation failed)."""
    judges = row.get("judges") or {}
    if row.get("error"):
        return dict.fromkeys(_JUDGE_METRICS)

    def number(value: Any) -> float | None:
        return None if value is None else float(value)

    metrics = {
        "answered": 0.0 if judges.get("abstained") else 1.0,
        "correct": number(judges.get("correct")),
        "keyword_hit": number(judges.get("keyword_hit")),
        "evidence_in_context": number(judges.get("evidence_in_context")),
    }
    # A failed judge nulls only the metrics it decides; the other judges' verdicts stand.
    failed = failed_judges(judges)
    for metric, judge in _DECIDED_BY.items():
        if judge in failed:
            metrics[metric] = None
    return metrics


def count_judge_errors(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Judge failures per judge over the rows whose generation succeeded.

    >>> count_judge_errors([{"judges": {"judge_errors": {"sufficiency": "x"}}},
    ...                     {"judges": {"keyword_hit": 1.0}}])
    {'sufficiency': 1}
    """
    counts: dict[str, int] = {}
    for row in rows:
        if row.get("error"):
            continue
        for judge in failed_judges(row.get("judges") or {}):
            counts[judge] = counts.get(judge, 0) + 1
    return dict(sorted(counts.items()))


def summarise(rows: Sequence[Mapping[str, Any]], k: int) -> dict[str, Any]:
    """Counts and macro means (over questions where the metric applies) of ``rows[*].metrics``.

    ``metrics`` averages over every row where a metric is not null (so ``correct`` includes
    unanswerable questions, where it means "abstained"); ``metrics_answerable`` averages over
    answerable questions only.

    .. math:: \\bar m = \\frac{1}{|Q_m|} \\sum_{q \\in Q_m} m_q, \\quad
              Q_m = \\{q : m_q \\text{ is not null}\\}

    >>> summarise([{"answerable": True, "metrics": {"hit@k": 1.0}},
    ...            {"answerable": False, "metrics": {"hit@k": None}}], k=3)["metrics"]
    {'hit@k': 1.0}
    """
    names: list[str] = []
    for row in rows:
        names.extend(n for n in row.get("metrics", {}) if n not in names)

    def means_of(subset: Sequence[Mapping[str, Any]]) -> tuple[dict[str, float], dict[str, int]]:
        means: dict[str, float] = {}
        counts: dict[str, int] = {}
        for name in names:
            values = [row["metrics"].get(name) for row in subset]
            present = np.array([float(v) for v in values if v is not None])
            counts[name] = int(present.size)
            if present.size:
                means[name] = float(present.mean())
        return means, counts

    means, counts = means_of(rows)
    answerable_means, _ = means_of([r for r in rows if r.get("answerable")])
    judge_errors = count_judge_errors(rows)
    return {
        "n": len(rows),
        "n_answerable": sum(1 for r in rows if r.get("answerable")),
        "n_unanswerable": sum(1 for r in rows if not r.get("answerable")),
        "n_errors": sum(1 for r in rows if r.get("error")),
        "k": k,
        "unit": "doc",
        "averaging": "macro",
        "metrics": means,
        "n_scored": counts,
        "metrics_answerable": answerable_means,
        "judge_errors": judge_errors,
        "n_judge_errors": sum(judge_errors.values()),
    }
