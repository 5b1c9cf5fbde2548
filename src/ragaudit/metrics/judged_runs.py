"""judged@k of a saved run: how much of its retrieval numbers rests on labelled items.

A saved run scores its top k at document level against the golden set's gold documents (each
document at the rank of its first chunk, :func:`ragaudit.pipeline.summary.retrieval_metrics`)
and, with chunk labels, at chunk level.  A golden set labels only its gold sources, so every
other document retrieved is *unjudged* and counts as non-relevant in nDCG@k and precision@k
(pooling bias; Buckley & Voorhees 2004).  :func:`saved_run_rankings` rebuilds the rankings a
saved run was scored on, and :func:`saved_run_coverage` measures judged@k on them with the
registry's ``judged@k`` (ir_measures' Judged@k), for the audit's dashboard, ``compare`` and
``labels fill``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.metrics.evaluate import evaluate
from ragaudit.metrics.judged import JUDGED_THRESHOLD, JudgedCoverage, judged_coverage

__all__ = ["gold_doc_labels", "saved_run_coverage", "saved_run_rankings"]


def saved_run_rankings(
    run: SavedRun, k: int, qids: Iterable[str] | None = None, *, unit: str = "chunk"
) -> dict[str, list[str]]:
    """Each question's top ``k`` as the run was scored: chunk ids in rank order (a chunk listed
    twice counts at its first rank), or with ``unit="doc"`` their documents, each at the rank
    of its first chunk (so fewer than k when a document has several chunks there).

    Examples
    --------
    >>> row = {"id": "q1", "retrieved": [{"chunk_id": c, "doc_id": c[0], "rank": i + 1}
    ...        for i, c in enumerate(["A1", "B1", "A2", "C1"])]}
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 3}, "rows": [row]})
    >>> saved_run_rankings(run, 3), saved_run_rankings(run, 3, unit="doc")
    ({'q1': ['A1', 'B1', 'A2']}, {'q1': ['A', 'B']})
    """
    if unit not in ("chunk", "doc"):
        raise InputError(f"unit: expected 'chunk' or 'doc', found {unit!r}")
    wanted = None if qids is None else set(qids)
    out: dict[str, list[str]] = {}
    for q in run.questions:
        if wanted is not None and q.id not in wanted:
            continue
        top = q.ranked[:k]
        ids = (r.doc_id for r in top) if unit == "doc" else (r.chunk_id for r in top)
        out[q.id] = list(dict.fromkeys(ids))
    return out


def gold_doc_labels(run: SavedRun) -> Qrels:
    """The document labels a saved run's document-level metrics were scored on: each
    answerable question's gold documents, grade 1 (every other document is unjudged).

    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": [
    ...     {"id": "q1", "gold_docs": ["G"], "retrieved": []},
    ...     {"id": "q2", "answerable": False, "retrieved": []}]})
    >>> gold_doc_labels(run).to_dict()
    {'q1': {'G': 1}}
    """
    return Qrels(
        {
            q.id: dict.fromkeys(q.gold_docs, 1)
            for q in run.questions
            if q.answerable and q.gold_docs
        },
        unit="doc",
    )


def saved_run_coverage(
    run: SavedRun,
    labels: Qrels,
    *,
    k: int | None = None,
    threshold: float = JUDGED_THRESHOLD,
    rankings: Mapping[str, Sequence[str]] | None = None,
) -> JudgedCoverage:
    """judged@k of a saved run against ``labels``: the mean, each question's value, and the
    questions whose top k is less than ``threshold`` labelled.

    ``labels`` should hold every judged item, grade 0 included (chunk labels:
    :func:`ragaudit.labels.fill.judged_labels`); its unit says at which level the run is
    read (:func:`saved_run_rankings`; pass ``rankings`` to reuse them).  ``k`` defaults to the
    run's own k.  Only labelled questions are counted.

    Examples
    --------
    >>> row = {"id": "q1", "gold_docs": ["G"], "retrieved": [
    ...     {"chunk_id": c, "doc_id": d, "rank": i + 1}
    ...     for i, (c, d) in enumerate([("x", "X"), ("g0", "G"), ("g1", "G")])]}
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 3}, "rows": [row]})
    >>> c = saved_run_coverage(run, gold_doc_labels(run))  # documents X, G: 1 of 2 labelled
    >>> c.metric, c.mean, c.below, c.unit
    ('judged@3', 0.5, (), 'doc')
    """
    depth = int(k if k is not None else run.config.get("k") or 0)
    if depth < 1:
        raise InputError(f"judged@k of run {run.name}: the run records no k; pass k")
    if rankings is None:
        rankings = saved_run_rankings(run, depth, labels, unit=labels.unit)
    else:
        rankings = {qid: list(rankings[qid]) for qid in labels if qid in rankings}
    if not rankings:
        raise InputError(f"judged@k of run {run.name}: no labelled question in the run")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no-relevant questions: judged@k is still defined
        ev = evaluate(
            labels,
            Run(rankings, unit=labels.unit, order="given"),
            [f"judged@{depth}"],
            missing="skip",
        )
    # a saved run is read at two levels: its messages say which
    return replace(judged_coverage(ev, run.name, threshold)[0], unit=labels.unit)
