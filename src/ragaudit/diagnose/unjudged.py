"""How much of a saved run's retrieval numbers rests on labelled items: judged@k in the audit
and in ``compare``, with its warnings.

A golden set labels one or two gold sources per question; every other document a run
retrieves was never judged and counts as non-relevant in nDCG@k and precision@k, so a
retriever that finds different but equally good evidence is punished, and a comparison
favours the run more like the system the labels were made from (pooling bias; Buckley &
Voorhees 2004).  :func:`run_judged` measures judged@k (ir_measures' Judged@k) of one saved run
at document level (what the dashboard's document-level rows are scored on) and, with chunk
labels, at chunk level; :func:`pair_judged_gap` compares two runs at their common depth;
:func:`ragaudit.diagnose.judged_beside.saved_pair_judged` is what ``ragaudit compare RUN_A
RUN_B`` shows.  The words and thresholds are those of :mod:`ragaudit.metrics.judged`, as
``evaluate`` prints them.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import compress
from typing import Any

import numpy as np

from ragaudit.data.qrels import Qrels
from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run.metrics import RETRIEVAL_FAMILIES
from ragaudit.exceptions import InputError
from ragaudit.metrics.judged import (
    JUDGED_MARGIN,
    JUDGED_THRESHOLD,
    JudgedCoverage,
    judged_gap,
)
from ragaudit.metrics.judged_runs import saved_run_coverage
from ragaudit.metrics.registry import saved_run_metric_name

__all__ = [
    "AbsentItems",
    "RunJudged",
    "absent_items",
    "pair_coverages",
    "pair_judged_gap",
    "retrieval_metric",
    "run_judged",
]

_SHOW = 5  # absent items named in a warning (the rest counted)


@dataclass(frozen=True)
class AbsentItems:
    """Retrieved items of a saved run that are not in the corpus as chunked for it.

    Attributes
    ----------
    run : str
        The run's name.
    k : int
        The depth checked (the run's top k: what its numbers rest on).
    items : tuple of (str, str)
        ``(question id, chunk id)`` of each absent item, in run order (a chunk listed twice
        for one question counts once).
    n_checked : int
        Items checked (distinct chunks in the top k, summed over the questions).
    """

    run: str
    k: int
    items: tuple[tuple[str, str], ...]
    n_checked: int

    @property
    def questions(self) -> tuple[str, ...]:
        """The questions with at least one absent item, in run order."""
        return tuple(dict.fromkeys(qid for qid, _ in self.items))

    def message(self) -> str | None:
        """The warning, or None when every item is in the corpus.

        >>> print(AbsentItems("r", 3, (("q1", "x9"), ("q2", "y1")), 6).message())
        ... # doctest: +NORMALIZE_WHITESPACE
        r: 2 of the 6 items in the top 3 (2 questions) are not in the corpus as chunked for
        this run: x9 (q1), y1 (q2); no chunk label can grade them, so they count as unjudged:
        check that the corpus is the run's own
        """
        if not self.items:
            return None
        shown = ", ".join(f"{chunk} ({qid})" for qid, chunk in self.items[:_SHOW])
        if len(self.items) > _SHOW:
            shown += f", ... ({len(self.items) - _SHOW} more)"
        return (
            f"{self.run}: {len(self.items)} of the {self.n_checked} items in the top {self.k} "
            f"({len(self.questions)} questions) are not in the corpus as chunked for this run: "
            f"{shown}; no chunk label can grade them, so they count as unjudged: check that "
            "the corpus is the run's own"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the depth, how many items were checked and absent, and which."""
        return {
            "k": self.k,
            "n_checked": self.n_checked,
            "n_absent": len(self.items),
            "questions": list(self.questions),
            "items": [{"question": qid, "chunk_id": chunk} for qid, chunk in self.items],
            "warning": self.message(),
        }


def absent_items(saved: SavedRun, corpus_chunks: Collection[str], k: int) -> AbsentItems:
    """The items in each question's top ``k`` whose chunk id is not in ``corpus_chunks``
    (the chunk ids of the corpus chunked as the run was).

    Examples
    --------
    >>> row = {"id": "q1", "retrieved": [{"chunk_id": c, "doc_id": "D", "rank": i + 1}
    ...        for i, c in enumerate(["D#0", "D#7", "D#0", "D#1"])]}
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 3}, "rows": [row]})
    >>> absent = absent_items(run, {"D#0", "D#1"}, 3)  # top 3: D#0, D#7 (D#0 again)
    >>> absent.items, absent.n_checked
    ((('q1', 'D#7'),), 2)
    """
    known = corpus_chunks if isinstance(corpus_chunks, AbstractSet) else set(corpus_chunks)
    items: list[tuple[str, str]] = []
    checked = 0
    for q in saved.questions:
        chunks = dict.fromkeys(r.chunk_id for r in q.ranked[:k])
        checked += len(chunks)
        items += [(q.id, c) for c in chunks if c not in known]
    return AbsentItems(saved.name, k, tuple(items), checked)


@dataclass(frozen=True)
class RunJudged:
    """judged@k of one saved run.

    Attributes
    ----------
    doc : JudgedCoverage or None
        Against the rows' gold documents (None: no answerable question names one, or the run
        records no k).
    chunk : JudgedCoverage or None
        Against chunk labels, every chunk of a labelled gold document judged (None: no chunk
        labels for this run).
    absent : AbsentItems or None
        Retrieved items not in the corpus as chunked for the run (None: no corpus given).
    """

    doc: JudgedCoverage | None
    chunk: JudgedCoverage | None = None
    absent: AbsentItems | None = None

    def warnings(self) -> tuple[str, ...]:
        """One warning per level with questions below the threshold (they name the run, the
        first questions and how many), and one when retrieved items are not in the corpus."""
        found = (c.message() for c in (self.doc, self.chunk, self.absent) if c is not None)
        return tuple(text for text in found if text)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: per level, the mean, the threshold, the questions below it; the absent
        items when there are any."""

        return {
            "doc": None if self.doc is None else self.doc.to_dict(),
            "chunk": None if self.chunk is None else self.chunk.to_dict(),
            # null also when nothing is absent: an audit with a corpus (the demo's, for its
            # drill-downs) and one without then give the same JSON
            "absent": self.absent.to_dict() if self.absent and self.absent.items else None,
        }


def _chunk_labels_qrels(saved: SavedRun, labels: Any, k: int) -> Qrels | None:
    """Chunk labels as judged items: the labelled grades, plus grade 0 for every retrieved
    chunk of a gold document the labels name (all of its chunks were candidates, as
    :func:`ragaudit.labels.fill.judged_labels` reads them; no corpus needed)."""
    complete = set(labels.complete_questions())
    out: dict[str, dict[str, int]] = {}
    for q in saved.questions:
        if q.id not in complete:
            continue
        entry = labels.questions[q.id]
        grades = dict(entry.grades())
        sources = set(entry.doc_sources)
        for r in q.ranked[:k]:
            if r.doc_id in sources:
                grades.setdefault(r.chunk_id, 0)
        out[q.id] = grades
    return Qrels(out, unit="chunk") if out else None


def _doc_coverage(saved: SavedRun, k: int, threshold: float) -> JudgedCoverage | None:
    """judged@k against the gold documents in one pass over the rows (this runs on every
    audit): equal to :func:`~ragaudit.metrics.judged_runs.saved_run_coverage` with
    :func:`~ragaudit.metrics.judged_runs.gold_doc_labels` (``tests/diagnose``)."""
    if not 0.0 <= threshold <= 1.0:
        raise InputError(f"judged threshold: expected a share in [0, 1], found {threshold}")
    counts = saved.gold_in_top(k)
    if counts is not None:  # by column kernels: no question made, no set per question
        keep = np.asarray(saved.answerable_flags, dtype=bool) & (counts[2] > 0)
        if not keep.any():
            return None
        found, distinct = counts[0][keep], counts[1][keep]
        # distinct <= k: min(k, distinct) is distinct
        values = (found / np.maximum(distinct, 1)).tolist()
        qids = list(compress(saved.ids, keep.tolist()))
    else:
        golds = saved.column_values("gold_docs")
        keep_list = [bool(a and g) for a, g in zip(saved.answerable_flags, golds, strict=True)]
        if not any(keep_list):
            return None
        qids = list(compress(saved.ids, keep_list))
        # each document at its first chunk
        docs = [dict.fromkeys(top) for top in compress(saved.top_doc_ids(k), keep_list)]
        gold_sets = map(set, compress(golds, keep_list))
        hits = list(map(len, map(set.intersection, gold_sets, docs)))
        values = [n / min(k, len(d)) if d else 0.0 for n, d in zip(hits, docs, strict=True)]
    below = tuple(compress(qids, np.asarray(values) < threshold))
    mean = math.fsum(values) / len(values)
    return JudgedCoverage(
        saved.name, f"judged@{k}", k, mean, threshold, below, len(qids), "doc", tuple(values)
    )


def run_judged(
    saved: SavedRun,
    labels: Any = None,
    *,
    k: int | None = None,
    threshold: float = JUDGED_THRESHOLD,
    corpus_chunks: Collection[str] | None = None,
) -> RunJudged:
    """judged@k of a saved run at document level and, with chunk ``labels``
    (:class:`~ragaudit.labels.format.ChunkLabels` made for its chunking, or a chunk-level
    :class:`~ragaudit.data.qrels.Qrels` of every judged chunk), at chunk level; with
    ``corpus_chunks`` (the chunk ids of the corpus chunked as the run was), the retrieved
    items absent from it, counted (:func:`absent_items`).

    ``judged@k = |labelled items in the top k| / min(k, |ranking|)`` per question (the top k
    chunks lifted to their documents at document level), averaged over the labelled
    questions; ``k`` defaults to the run's own.

    Examples
    --------
    >>> row = {"id": "q1", "gold_docs": ["G"], "retrieved": [
    ...     {"chunk_id": c, "doc_id": d, "rank": i + 1}
    ...     for i, (c, d) in enumerate([("x", "X"), ("y", "Y"), ("g0", "G")])]}
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 3}, "rows": [row]})
    >>> judged = run_judged(run)  # documents X, Y, G: only G is labelled
    >>> round(judged.doc.mean, 3), judged.doc.below, judged.chunk
    (0.333, ('q1',), None)
    """
    depth = int(k if k is not None else saved.config.get("k") or 0)
    if depth < 1:
        return RunJudged(None)
    absent = None if corpus_chunks is None else absent_items(saved, corpus_chunks, depth)
    doc = _doc_coverage(saved, depth, threshold)
    chunk = None
    if labels is not None:
        # chunk labels as a Qrels name their judged chunks; a ChunkLabels grades the chunks
        # of its gold documents
        qrels = labels if isinstance(labels, Qrels) else _chunk_labels_qrels(saved, labels, depth)
        if qrels is not None:
            chunk = saved_run_coverage(saved, qrels, k=depth, threshold=threshold)
    return RunJudged(doc, chunk, absent)


def pair_judged_gap(
    a: SavedRun,
    b: SavedRun,
    *,
    margin: float = JUDGED_MARGIN,
    known: tuple[RunJudged | None, RunJudged | None] = (None, None),
) -> str | None:
    """The warning when two saved runs' document-level judged@k differ by more than
    ``margin``, at their common depth ``min(k_a, k_b)`` (judged@3 of a k=6 run is its top 3,
    so runs of different k are compared on the same depth), else None.

    ``known``: each run's :func:`run_judged` at its own k, when already computed; it is
    reused for a run whose own k is the common depth instead of walking the run again.

    Examples
    --------
    >>> def run(name, docs):
    ...     row = {"id": "q1", "gold_docs": ["G"], "retrieved": [
    ...         {"chunk_id": d + "0", "doc_id": d, "rank": i + 1} for i, d in enumerate(docs)]}
    ...     return SavedRun.from_dict({"name": name, "config": {"k": len(docs)}, "rows": [row]})
    >>> pair_judged_gap(run("a", ["G", "X"]), run("b", ["X", "Y", "G"]))[:60]
    'judged@2 (document level) differs by 0.500 between a (0.500)'
    """
    pair = pair_coverages(a, b, known=known)
    return None if pair is None else judged_gap(*pair, margin)


def pair_coverages(
    a: SavedRun,
    b: SavedRun,
    *,
    k: int | None = None,
    known: tuple[RunJudged | None, RunJudged | None] = (None, None),
) -> tuple[JudgedCoverage, JudgedCoverage] | None:
    """Both runs' document-level judged@k at their common depth: ``k``, by default
    ``min(k_a, k_b)`` (what :func:`pair_judged_gap` compares); None when either has none.

    ``known``: each run's :func:`run_judged`, reused for a run already measured at that depth.

    >>> rows = [{"id": "q1", "gold_docs": ["G"], "retrieved": [
    ...     {"chunk_id": d + "0", "doc_id": d, "rank": i + 1} for i, d in enumerate("GXY")]}]
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 3}, "rows": rows})
    >>> [c.mean for c in pair_coverages(run, run, k=2)]   # top 2: G labelled, X not
    [0.5, 0.5]
    """
    depth = k if k is not None else min(int(a.config.get("k") or 0), int(b.config.get("k") or 0))
    if depth < 1:
        return None
    first, second = (
        (own if own is not None and own.doc is not None and own.doc.k == depth
         else run_judged(run, k=depth)).doc
        for run, own in zip((a, b), known, strict=True)
    )  # fmt: skip
    if first is None or second is None:
        return None
    return first, second


def retrieval_metric(name: str) -> bool:
    """A document-level retrieval metric of saved runs (``ndcg@k``, ``P@5``...)."""
    canonical = saved_run_metric_name(name)
    return canonical is not None and canonical.partition("@")[0] in RETRIEVAL_FAMILIES
