"""The optimism bias of document-level labels, measured with chunk-level labels.

A document-level label scores a hit as soon as *any* chunk of the gold document is retrieved,
even when the chunk that holds the answer never made it.  With chunk labels (answer chunks,
grade 2) the same retrieval is scored again and the difference is pure labelling artefact::

    inflation(metric) = mean_q metric_doc(q) - mean_q metric_chunk(q)

Per question, the document run is lifted from the chunk run *after* cutting it at k (a
document counts when one of its chunks is in the top-k chunks), with the chunk->document map
of the saved run's ``retrieved`` entries.  Metrics come from :func:`ragaudit.metrics.evaluate`.

The same labels give graded metrics (``ndcg@k`` with gains 2/1/0 and ``ndcg_exp@k`` with
gains ``2^grade - 1``); questions are ranked by binary nDCG (answer chunks only) and by
``ndcg_exp`` to find the ones whose standing changes most once grades are taken into account.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragaudit._frames import records_frame
from ragaudit._present import Presentable, short_repr
from ragaudit._validate import check_int
from ragaudit.data.qrels import Qrels
from ragaudit.data.records import as_saved_run
from ragaudit.data.runs import Run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.funnel import run_source
from ragaudit.diagnose.stage_outcomes import ANSWER_GRADE
from ragaudit.exceptions import InputError

__all__ = [
    "VERDICT_ABSENT",
    "VERDICT_OPTIMISTIC",
    "VERDICT_PESSIMISTIC",
    "BiasResult",
    "CandidateGroup",
    "QuestionBias",
    "RankShift",
    "compute_label_bias",
]

VERDICT_ABSENT = "doc-level says HIT, the answer chunk is absent"
VERDICT_OPTIMISTIC = "doc-level optimistic"
VERDICT_PESSIMISTIC = "doc-level pessimistic"
_EPS = 1e-12


@dataclass(frozen=True)
class QuestionBias:
    """Per-question scores at document and chunk level (all at the same k)."""

    qid: str
    doc_hit: float
    doc_recall: float
    chunk_hit: float
    chunk_recall: float
    chunk_mrr: float
    ndcg_binary: float
    ndcg_graded: float
    ndcg_exp: float
    n_candidate_chunks: int | None
    verdict: str


@dataclass(frozen=True)
class CandidateGroup:
    """Questions grouped by the number of chunks of their gold document(s)."""

    n_candidate_chunks: int
    n: int
    mean_hit_inflation: float
    mean_recall_inflation: float


@dataclass(frozen=True)
class RankShift:
    """A question's rank among all questions by binary nDCG and by exponential-gain nDCG.

    Ranks are 1 = best, tied questions share the best rank of their group (competition
    ranking, so a block of perfect scores does not move); ``shift = binary_rank - graded_rank``
    (positive: the question looks better once grades count).
    """

    qid: str
    ndcg_binary: float
    ndcg_exp: float
    binary_rank: float
    graded_rank: float
    shift: float


@dataclass(frozen=True, repr=False)
class BiasResult(Presentable):
    """Everything :func:`compute_label_bias` measured."""

    run_name: str | None
    k: int
    n: int
    questions: tuple[QuestionBias, ...]
    doc_hit_rate: float
    chunk_hit_rate: float
    doc_recall: float
    chunk_recall: float
    hit_inflation: float
    recall_inflation: float
    phantom_hits: tuple[str, ...]
    by_candidates: tuple[CandidateGroup, ...]
    spearman: float | None
    ndcg_binary: float
    ndcg_graded: float
    ndcg_exp: float
    rank_shifts: tuple[RankShift, ...]
    skipped: dict[str, tuple[str, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: judged@k of the run at ``k`` (``ragaudit.diagnose.judged_beside.JudgedRuns``), set by
    #: ``ragaudit.label_bias`` (``labels bias``); None otherwise
    judged: Any = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--format json`` output of ``ragaudit labels bias``)."""
        return {
            "run": self.run_name,
            "k": self.k,
            "n": self.n,
            "summary": {
                "hit_rate": {
                    "doc": self.doc_hit_rate,
                    "chunk": self.chunk_hit_rate,
                    "inflation": self.hit_inflation,
                },
                "recall": {
                    "doc": self.doc_recall,
                    "chunk": self.chunk_recall,
                    "inflation": self.recall_inflation,
                },
            },
            "phantom_hits": list(self.phantom_hits),
            "questions": [
                {
                    "id": q.qid,
                    "doc_hit": q.doc_hit,
                    "doc_recall": q.doc_recall,
                    "chunk_hit": q.chunk_hit,
                    "chunk_recall": q.chunk_recall,
                    "chunk_mrr": q.chunk_mrr,
                    "ndcg_binary": q.ndcg_binary,
                    "ndcg_graded": q.ndcg_graded,
                    "ndcg_exp": q.ndcg_exp,
                    "n_candidate_chunks": q.n_candidate_chunks,
                    "verdict": q.verdict,
                }
                for q in self.questions
            ],
            "inflation_by_candidates": [
                {
                    "n_candidate_chunks": g.n_candidate_chunks,
                    "n": g.n,
                    "mean_hit_inflation": g.mean_hit_inflation,
                    "mean_recall_inflation": g.mean_recall_inflation,
                }
                for g in self.by_candidates
            ],
            "spearman_candidates_vs_recall_inflation": self.spearman,
            "graded": {
                "ndcg_binary": self.ndcg_binary,
                "ndcg_graded": self.ndcg_graded,
                "ndcg_exp": self.ndcg_exp,
                "rank_shifts": [
                    {
                        "id": r.qid,
                        "ndcg_binary": r.ndcg_binary,
                        "ndcg_exp": r.ndcg_exp,
                        "binary_rank": r.binary_rank,
                        "graded_rank": r.graded_rank,
                        "shift": r.shift,
                    }
                    for r in self.rank_shifts
                ],
            },
            "skipped": {reason: list(ids) for reason, ids in self.skipped.items()},
            "notes": list(self.notes),
            **({} if self.judged is None else {"judged": self.judged.to_dict()}),
        }

    def to_pandas(self) -> Any:
        """One row per question (index ``id``): document- and chunk-level scores and the
        verdict.  Needs the ``pandas`` extra."""
        return records_frame(self.to_dict()["questions"], index="id")

    def __repr__(self) -> str:
        return short_repr(
            f"BiasResult(run={self.run_name!r}, k={self.k}, n={self.n})",
            [
                f"hit rate: doc {self.doc_hit_rate:.3f}, chunk {self.chunk_hit_rate:.3f} "
                f"(inflation {self.hit_inflation:+.3f})",
                f"recall: doc {self.doc_recall:.3f}, chunk {self.chunk_recall:.3f} "
                f"(inflation {self.recall_inflation:+.3f})",
                f"phantom hits: {len(self.phantom_hits)}; nDCG binary {self.ndcg_binary:.3f}, "
                f"graded {self.ndcg_graded:.3f}",
            ],
        )


def _labels_as_qrels(labels: Any, config: Mapping[str, Any]) -> tuple[Qrels, dict[str, int]]:
    """Chunk-level Qrels and ``{qid: n_candidate_chunks}`` (empty for plain Qrels)."""
    if isinstance(labels, Qrels):
        if labels.unit != "chunk":
            raise InputError(
                f"labels: expected chunk-level labels (unit='chunk'), found unit={labels.unit!r}"
            )
        return labels, {}
    check = getattr(labels, "check_chunking", None)
    to_qrels = getattr(labels, "to_qrels", None)
    if not callable(check) or not callable(to_qrels):
        raise InputError(
            f"labels: expected ChunkLabels or Qrels(unit='chunk'), found {type(labels).__name__}"
        )
    check(config)
    qrels = to_qrels()
    candidates = {q: int(labels.questions[q].n_candidate_chunks) for q in qrels}
    return qrels, candidates


def _evaluate(qrels: Qrels, run: Run, metrics: list[str]) -> dict[str, np.ndarray]:
    from ragaudit.metrics import evaluate

    ev = evaluate(qrels, run, metrics, missing="zero", average="macro")
    order = {q: i for i, q in enumerate(ev.query_ids)}
    index = np.array([order[q] for q in qrels], dtype=int)
    return {m: np.asarray(ev.per_query[m], dtype=float)[index] for m in metrics}


def compute_label_bias(
    saved: SavedRun | Mapping[str, Any] | str,
    labels: Any,
    *,
    k: int | None = None,
    n_shifts: int = 5,
) -> BiasResult:
    """Score one saved run with document labels and with chunk labels, and compare.

    Parameters
    ----------
    saved : SavedRun, dict or path
        A saved run (a dict or file is validated by the saved-run loader); its answerable
        questions' ``gold_docs`` are the document labels and their ``retrieved`` entries give
        the ranking and the chunk->document map.
    labels : ChunkLabels or Qrels
        Chunk labels (grade 2 = answer chunk, 1 = related).  Chunk hit, recall and MRR count
        answer chunks only.
    k : int, optional
        Cut-off; default the run's ``config.k``.
    n_shifts : int, default 5
        How many of the largest binary-vs-graded rank shifts to report.

    Returns
    -------
    BiasResult
        Per-question rows with a verdict, the summary (hit rate and recall at both levels and
        the inflation ``doc - chunk``), the phantom hits (document hit, no answer chunk),
        inflation grouped by ``n_candidate_chunks`` with Spearman's rho, graded nDCG means
        and the largest rank shifts.

    Raises
    ------
    InputError
        Labels for another chunking, ``k < 1`` or deeper than the run retrieved, no
        question both answerable and labelled with an answer chunk.

    Examples
    --------
    One question, gold document ``D`` cut into chunks ``D#0`` (answer) and ``D#1``; the
    retriever returned ``D#1`` only: a document-level hit, a chunk-level miss.

    >>> run = {"config": {"k": 1}, "rows": [{"id": "q1", "answerable": True,
    ...        "gold_docs": ["D"], "retrieved": [{"chunk_id": "D#1", "doc_id": "D", "rank": 1}]}]}
    >>> bias = compute_label_bias(run, Qrels({"q1": {"D#0": 2}}, unit="chunk"))
    >>> bias.doc_hit_rate, bias.chunk_hit_rate, bias.hit_inflation, bias.phantom_hits
    (1.0, 0.0, 1.0, ('q1',))
    """
    run = as_saved_run(saved)
    where, config = run_source(run), run.config
    if k is None:
        k = run.k
    k = check_int(k, "k")
    qrels, n_candidates = _labels_as_qrels(labels, config)

    ranked: dict[str, list[str]] = {}
    chunk_to_doc: dict[str, str] = {}
    doc_labels: dict[str, dict[str, int]] = {}
    depth = 0
    unlabelled: list[str] = []
    no_answer: list[str] = []
    for question in run.questions:
        if not question.answerable or not question.gold_docs:
            continue
        qid = question.id
        if qid not in qrels:
            unlabelled.append(qid)
            continue
        if not qrels.relevant(qid, ANSWER_GRADE):
            no_answer.append(qid)
            continue
        entries = question.ranked
        depth = max(depth, len(entries))
        for e in entries:
            chunk_to_doc[e.chunk_id] = e.doc_id
        ranked[qid] = list(dict.fromkeys(e.chunk_id for e in entries))
        doc_labels[qid] = dict.fromkeys(question.gold_docs, 1)
    depth_cfg = config.retrieval_depth
    if depth_cfg is not None and k > depth_cfg:
        raise InputError(
            f"k={k} is deeper than the run retrieved (retrieval depth {depth_cfg}); choose "
            f"k <= {depth_cfg}"
        )
    skipped: dict[str, tuple[str, ...]] = {}
    if unlabelled:
        skipped["no chunk labels"] = tuple(unlabelled)
    if no_answer:
        skipped["no answer chunk (grade 2) among the candidates"] = tuple(no_answer)
    if not ranked:
        raise InputError(
            f"{where}: no answerable question has chunk labels with an answer chunk; check "
            "that the labels were built for this run's golden set"
        )

    qids = list(ranked)
    chunk_run = Run({q: ranked[q] for q in qids}, unit="chunk", order="given").truncate(k)
    doc_run = chunk_run.to_docs(chunk_to_doc)
    graded = qrels.to_dict()
    doc_q = Qrels({q: doc_labels[q] for q in qids}, unit="doc")
    binary_q = Qrels(
        {q: {c: 1 for c, g in graded[q].items() if g >= ANSWER_GRADE} for q in qids}, unit="chunk"
    )
    graded_q = Qrels({q: graded[q] for q in qids}, unit="chunk")
    at = f"@{k}"
    doc_m = _evaluate(doc_q, doc_run, ["hit" + at, "recall" + at])
    bin_m = _evaluate(binary_q, chunk_run, ["hit" + at, "recall" + at, "mrr" + at, "ndcg" + at])
    grd_m = _evaluate(graded_q, chunk_run, ["ndcg" + at, "ndcg_exp" + at])

    doc_hit, doc_rec = doc_m["hit" + at], doc_m["recall" + at]
    chunk_hit, chunk_rec = bin_m["hit" + at], bin_m["recall" + at]
    hit_infl = doc_hit - chunk_hit
    rec_infl = doc_rec - chunk_rec
    absent = (doc_hit > 0) & (chunk_hit == 0)
    verdicts = np.where(
        absent,
        VERDICT_ABSENT,
        np.where(
            (rec_infl > _EPS) | (hit_infl > _EPS),
            VERDICT_OPTIMISTIC,
            np.where(rec_infl < -_EPS, VERDICT_PESSIMISTIC, ""),
        ),
    )
    cands = [n_candidates.get(q) for q in qids]

    questions = tuple(
        QuestionBias(
            qid=q,
            doc_hit=float(doc_hit[i]),
            doc_recall=float(doc_rec[i]),
            chunk_hit=float(chunk_hit[i]),
            chunk_recall=float(chunk_rec[i]),
            chunk_mrr=float(bin_m["mrr" + at][i]),
            ndcg_binary=float(bin_m["ndcg" + at][i]),
            ndcg_graded=float(grd_m["ndcg" + at][i]),
            ndcg_exp=float(grd_m["ndcg_exp" + at][i]),
            n_candidate_chunks=cands[i],
            verdict=str(verdicts[i]),
        )
        for i, q in enumerate(qids)
    )

    # scipy.stats costs about a second to import: only commands that compute label bias pay it
    # (`show`, `report` without --labels import this module for its types).
    from scipy import stats

    groups: tuple[CandidateGroup, ...] = ()
    spearman: float | None = None
    notes: list[str] = []
    if n_candidates:
        sizes = np.array(cands, dtype=int)
        values, inverse = np.unique(sizes, return_inverse=True)
        counts = np.bincount(inverse)
        mean_hit = np.bincount(inverse, weights=hit_infl) / counts
        mean_rec = np.bincount(inverse, weights=rec_infl) / counts
        groups = tuple(
            CandidateGroup(int(v), int(c), float(h), float(r))
            for v, c, h, r in zip(values, counts, mean_hit, mean_rec, strict=True)
        )
        if len(values) > 1 and np.ptp(rec_infl) > 0:
            spearman = float(stats.spearmanr(sizes, rec_infl).statistic)
    else:
        notes.append("the labels carry no n_candidate_chunks: inflation by document size skipped")

    binary_rank = stats.rankdata(-bin_m["ndcg" + at], method="min")
    graded_rank = stats.rankdata(-grd_m["ndcg_exp" + at], method="min")
    shift = binary_rank - graded_rank
    order = sorted(range(len(qids)), key=lambda i: (-abs(shift[i]), qids[i]))
    shifts = tuple(
        RankShift(
            qids[i],
            float(bin_m["ndcg" + at][i]),
            float(grd_m["ndcg_exp" + at][i]),
            float(binary_rank[i]),
            float(graded_rank[i]),
            float(shift[i]),
        )
        for i in order[:n_shifts]
        if abs(shift[i]) > 0
    )
    if depth and k > depth:
        notes.append(f"k={k} is deeper than any ranking in the run (longest: {depth})")
    for reason, ids in skipped.items():
        notes.append(f"{len(ids)} answerable question(s) skipped ({reason}): " + ", ".join(ids))

    return BiasResult(
        run_name=run.name,
        k=k,
        n=len(qids),
        questions=questions,
        doc_hit_rate=float(doc_hit.mean()),
        chunk_hit_rate=float(chunk_hit.mean()),
        doc_recall=float(doc_rec.mean()),
        chunk_recall=float(chunk_rec.mean()),
        hit_inflation=float(hit_infl.mean()),
        recall_inflation=float(rec_infl.mean()),
        phantom_hits=tuple(q for q, a in zip(qids, absent, strict=True) if a),
        by_candidates=groups,
        spearman=spearman,
        ndcg_binary=float(bin_m["ndcg" + at].mean()),
        ndcg_graded=float(grd_m["ndcg" + at].mean()),
        ndcg_exp=float(grd_m["ndcg_exp" + at].mean()),
        rank_shifts=shifts,
        skipped=skipped,
        notes=tuple(notes),
    )
