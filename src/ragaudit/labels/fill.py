"""Filling the holes in the labels: judge the unjudged items the runs put in their top k.

Chunk labels grade every chunk of a question's gold document(s); every other retrieved chunk
is *unjudged* and the metrics count it as non-relevant.  :func:`fill_labels` pools the top k
of one or more saved runs (TREC's pooling: the union over runs), hands each question's unjudged
pooled chunks to a labeller (heuristic, llm or human: :mod:`ragaudit.labels`), and returns the
labels before and after with their provenance (labeller, date, run names), plus, per run,
judged@k and the metrics on the original labels and on the filled ones.  The original labels
stay as they were; the filled labels say where each grade came from, so a team can see how much
of a conclusion depended on the holes.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaudit._io import atomic_write_text
from ragaudit.data.chunks import Chunk
from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.labels.build import _check_grades
from ragaudit.labels.format import ChunkLabels
from ragaudit.labels.human import LabellingStopped
from ragaudit.labels.protocol import Labeller
from ragaudit.metrics.evaluate import evaluate
from ragaudit.metrics.judged_runs import saved_run_coverage  # re-exported: labels fill's

__all__ = [
    "FILL_METRICS",
    "FillResult",
    "FilledLabel",
    "RunChange",
    "fill_labels",
    "judged_labels",
    "merge_labels",
    "saved_run_coverage",
    "write_filled_labels",
]

#: The metrics reported before and after filling, at each run's k (judged@k is added).
FILL_METRICS: tuple[str, ...] = ("ndcg", "recall", "precision")


@dataclass(frozen=True)
class FilledLabel:
    """One label and where it came from.

    ``source`` is ``"original"`` (the label file) or ``"filled"`` (judged by
    :func:`fill_labels`: ``labeller`` on ``date``, pooled from ``runs``).
    """

    qid: str
    item: str
    grade: int
    source: str
    labeller: str
    date: str = ""
    runs: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSONL record ``evaluate --qrels`` reads (``qid``, ``docid``, ``grade``), with
        the provenance beside it."""
        return {
            "qid": self.qid,
            "docid": self.item,
            "grade": self.grade,
            "source": self.source,
            "labeller": self.labeller,
            "date": self.date,
            "runs": list(self.runs),
        }


@dataclass(frozen=True)
class RunChange:
    """One run's metric on the original and on the filled labels, with judged@k."""

    run: str
    k: int
    metric: str
    original: float
    filled: float
    judged_original: float
    judged_filled: float

    @property
    def change(self) -> float:
        """``filled - original``."""
        return self.filled - self.original


@dataclass(frozen=True)
class FillResult:
    """What :func:`fill_labels` did.

    Attributes
    ----------
    labels : tuple of FilledLabel
        Every label: the original ones (grade 0 included for judged candidates), then the
        filled ones.
    original, filled : Qrels
        Chunk-level labels before and after.
    runs : tuple of str
        The pooled runs.
    labeller, date : str
    changes : tuple of RunChange
        Per run and metric, before and after.
    notes : tuple of str
        Warnings met while scoring (questions without relevant items...).
    stopped : bool
        The person labelling stopped the session: the grades given so far are kept, the rest
        of the pool stays unjudged.
    """

    labels: tuple[FilledLabel, ...]
    original: Qrels
    filled: Qrels
    runs: tuple[str, ...]
    labeller: str
    date: str
    changes: tuple[RunChange, ...] = ()
    notes: tuple[str, ...] = field(default=())
    stopped: bool = False

    @property
    def added(self) -> tuple[FilledLabel, ...]:
        """The labels this fill judged."""
        return tuple(label for label in self.labels if label.source == "filled")

    def grade_counts(self) -> dict[int, int]:
        """How many filled labels got each grade."""
        counts = {0: 0, 1: 0, 2: 0}
        for label in self.added:
            counts[label.grade] = counts.get(label.grade, 0) + 1
        return counts


def judged_labels(labels: ChunkLabels, chunks: Sequence[Chunk]) -> dict[str, dict[str, int]]:
    """Every judged chunk of each complete question: the label file's positive grades plus
    grade 0 for the other chunks of its gold documents (all of them were candidates).

    Examples
    --------
    >>> from ragaudit.labels.format import Chunking, QuestionLabels
    >>> labels = ChunkLabels(Chunking("fixed", 800, 100), "heuristic",
    ...                      {"q1": QuestionLabels("Q?", ["D"], 2, ["c1"], [], "heuristic")})
    >>> chunks = [Chunk("c0", "D", 0, "a"), Chunk("c1", "D", 1, "b"), Chunk("e0", "E", 0, "c")]
    >>> judged_labels(labels, chunks)
    {'q1': {'c0': 0, 'c1': 2}}
    """
    by_doc: dict[str, list[str]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk.chunk_id)
    out: dict[str, dict[str, int]] = {}
    for qid in labels.complete_questions():
        entry = labels.questions[qid]
        grades = {cid: 0 for doc in entry.doc_sources for cid in by_doc.get(doc, [])}
        grades.update(entry.grades())
        out[qid] = grades
    return out


def _ranked(run: SavedRun, qids: Sequence[str]) -> dict[str, list[str]]:
    """Each labelled question's retrieved chunk ids, best first (a chunk listed twice counts
    at its first rank)."""
    wanted = set(qids)
    out: dict[str, list[str]] = {}
    for row in run.rows:
        qid = str(row.get("id"))
        if qid not in wanted:
            continue
        hits = sorted(row.get("retrieved") or [], key=lambda hit: int(hit.get("rank", 0)))
        out[qid] = list(dict.fromkeys(str(hit["chunk_id"]) for hit in hits))
    return out


def _score(
    qrels: Qrels, rankings: Mapping[str, list[str]], k: int, metrics: Sequence[str]
) -> tuple[dict[str, float], list[str]]:
    names = [f"{m}@{k}" for m in metrics] + [f"judged@{k}"]
    run = Run(rankings, unit="chunk", order="given")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = evaluate(qrels, run, names, missing="skip")
    return dict(ev.means), [str(w.message) for w in caught]


def fill_labels(
    runs: Sequence[SavedRun],
    labels: ChunkLabels,
    chunks: Sequence[Chunk],
    labeller: Labeller,
    *,
    date: str,
    k: int | None = None,
    metrics: Sequence[str] = FILL_METRICS,
) -> FillResult:
    """Judge the unjudged chunks in the top k of ``runs`` and score the runs before and after.

    Parameters
    ----------
    runs : sequence of SavedRun
        Runs chunked as the labels were (checked); their top k are pooled.
    labels : ChunkLabels
        The original labels (complete questions are used).
    chunks : sequence of Chunk
        The corpus chunked as the labels were (the labeller reads their text).
    labeller : Labeller
        Grades the pooled unjudged chunks of each question (0, 1 or 2).
    date : str
        Recorded with each filled label (the CLI passes today's date, UTC).
    k : int, optional
        Pool depth; default each run's own k.
    metrics : sequence of str
        Metric families reported at k before and after (judged@k is added).

    Returns
    -------
    FillResult

    Raises
    ------
    InputError
        No runs, a run chunked differently from the labels, a retrieved chunk absent from
        the corpus, or a labeller answer outside the candidates or the grades.
    """
    if not runs:
        raise InputError("labels fill: expected at least one run")
    if k is not None and k < 1:
        raise InputError(f"labels fill: expected k >= 1, found {k}")
    for run in runs:
        labels.check_chunking(run.config)
    original = judged_labels(labels, chunks)
    qids = list(original)
    by_id = {chunk.chunk_id: chunk for chunk in chunks}
    rankings = {run.name: _ranked(run, qids) for run in runs}
    depth = {run.name: int(k if k is not None else run.config.get("k") or 0) for run in runs}
    questions = {str(row.get("id")): row for run in runs for row in run.rows}
    run_names = tuple(run.name for run in runs)
    filled = {qid: dict(grades) for qid, grades in original.items()}
    added: list[FilledLabel] = []
    stopped = False
    for qid in qids:
        pool = dict.fromkeys(
            cid
            for name in run_names
            for cid in rankings[name].get(qid, [])[: depth[name]]
            if cid not in original[qid]
        )
        missing = [cid for cid in pool if cid not in by_id]
        if missing:
            raise InputError(
                f"labels fill: question {qid}: {len(missing)} retrieved chunk(s) are not in "
                f"the corpus as chunked for the labels: {', '.join(missing[:5])}; pass the "
                "runs' own corpus (--corpus)"
            )
        if not pool:
            continue
        row = questions[qid]
        candidates = [by_id[cid] for cid in pool]
        given: dict[str, int] = {}
        extra: dict[str, Any] = {}
        if getattr(labeller, "incremental", False):  # a person: keep each grade as typed
            extra["on_grade"] = given.__setitem__
        try:
            grades = labeller.label(
                str(row.get("question") or labels.questions[qid].question),
                str(row.get("reference_answer") or ""),
                [str(x) for x in row.get("keywords") or []],
                candidates,
                **extra,
            )
        except LabellingStopped:
            grades, stopped = given, True
            candidates = [chunk for chunk in candidates if chunk.chunk_id in given]
        _check_grades(grades, candidates, labeller.name, qid)
        for chunk in candidates:  # a candidate the labeller left out is grade 0
            grade = int(grades.get(chunk.chunk_id, 0))
            filled[qid][chunk.chunk_id] = grade
            added.append(
                FilledLabel(qid, chunk.chunk_id, grade, "filled", labeller.name, date, run_names)
            )
        if stopped:
            break
    kept = [
        FilledLabel(qid, item, grade, "original", labels.labeller)
        for qid, grades in original.items()
        for item, grade in grades.items()
    ]
    before = Qrels(original, unit="chunk", name=labels.path)
    after = Qrels(filled, unit="chunk", name="filled labels")
    changes: list[RunChange] = []
    notes: list[str] = []
    for name in run_names:
        if depth[name] < 1:
            raise InputError(f"labels fill: run {name} records no k; pass --k")
        kk = depth[name]
        old, caught = _score(before, rankings[name], kk, metrics)
        new, caught_after = _score(after, rankings[name], kk, metrics)
        notes += [f"{name}, original labels: {m}" for m in caught]
        notes += [f"{name}, filled labels: {m}" for m in caught_after]
        changes += [
            RunChange(name, kk, f"{m}@{kk}", old[f"{m}@{kk}"], new[f"{m}@{kk}"],
                      old[f"judged@{kk}"], new[f"judged@{kk}"])
            for m in metrics
        ]  # fmt: skip
    return FillResult(
        labels=tuple(kept + added),
        original=before,
        filled=after,
        runs=run_names,
        labeller=labeller.name,
        date=date,
        changes=tuple(changes),
        notes=tuple(dict.fromkeys(notes)),
        stopped=stopped,
    )


def write_filled_labels(result: FillResult, path: str | os.PathLike[str]) -> None:
    """Write every label, one JSON record a line (``qid``, ``docid``, ``grade`` and the
    provenance), atomically; ``ragaudit evaluate --qrels`` reads the file as it is."""
    lines = [json.dumps(label.to_dict(), sort_keys=False) for label in result.labels]
    atomic_write_text(path, "\n".join(lines) + "\n")


def merge_labels(original: Qrels, filled: Qrels) -> Qrels:
    """``original`` with every label of ``filled`` added (a grade in ``filled`` wins).

    Examples
    --------
    >>> merge_labels(Qrels({"q1": {"A": 1}}), Qrels({"q1": {"B": 2}, "q2": {"C": 0}})).to_dict()
    {'q1': {'A': 1, 'B': 2}, 'q2': {'C': 0}}
    """
    if original.unit != filled.unit:
        raise InputError(
            f"filled labels: expected {original.unit}-level labels like the originals, found "
            f"{filled.unit}-level ones"
        )
    merged = {qid: dict(original[qid]) for qid in original}
    for qid in filled:
        merged.setdefault(qid, {}).update(filled[qid])
    return Qrels(merged, unit=original.unit, name=filled.name)
