"""Per-question stage outcomes of the funnel: which stages each answerable question passed.

:func:`stage_outcomes` reads, for every answerable question of a saved run, the four facts the
funnel of :func:`ragaudit.diagnose.funnel.compute_funnel` is built from, as tri-state codes
(1 passed, 0 failed, -1 undecided):

1. the gold document is in ``retrieved[:k]``;
2. the evidence is in the context, from the first source that decides it, in this order:
   chunk labels (an answer chunk, grade :data:`ANSWER_GRADE`, in the context: ``context_ids``
   at the run's k, ``retrieved[:k]`` otherwise); at another k, given the chunk texts, the
   reference keywords (all of them in the top-k chunk texts, the offline evidence judge's
   rule); the ``sufficiency`` judge; the ``evidence_in_context`` judge; at the run's own k,
   the run's ``answer_chunk_in_context`` verdict;
3. the model answered (did not abstain);
4. the answer is correct, by the one end-to-end rule of
   :func:`ragaudit.data.saved_run.summary.correct_verdict` (a refusal is never correct).

An undecided code comes with its reason (``reasons``): a generation error, a failed judge, or
the judge's own reason from the saved run.

Where each question lands is :mod:`ragaudit.diagnose.funnel_places`; the rates and intervals
are :mod:`ragaudit.diagnose.funnel`; this module is the parsing loop, one question at a time.
Given a loaded run (a :class:`~ragaudit.data.saved_run.SavedRun` held as a table), it reads
the columns it needs (ids, answerable, gold documents, generation errors, judges, the top k)
instead of making every question: a question is made only where the end-to-end rule needs
more than its columns (:func:`_Columns.question`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ragaudit.data.qrels import Qrels
from ragaudit.data.saved_run import QuestionResult, Retrieved, SavedRun
from ragaudit.data.saved_run.columns import mapping_columns, top_chunk_ids, top_doc_ids
from ragaudit.data.saved_run.summary import correct_verdict, undecided_reason
from ragaudit.data.saved_run.view import judgments, record_columns, top_ids
from ragaudit.exceptions import InputError
from ragaudit.judges.offline import evidence_in_context as offline_evidence

__all__ = [
    "ANSWER_GRADE",
    "RECOMPUTED_SOURCES",
    "STAGE2_SOURCES",
    "StageOutcomes",
    "answer_chunks",
    "stage_outcomes",
    "top_k",
    "unanswerable_questions",
]

#: Where a question's stage-2 verdict came from, in the order they are tried.
STAGE2_SOURCES: tuple[str, ...] = (
    "chunk_labels",
    "keywords_in_top_k",
    "sufficiency",
    "evidence_in_context",
    "answer_chunk_in_context",
)
#: The stage-2 sources computed afresh at the requested k (the others carry the run's over).
RECOMPUTED_SOURCES = frozenset({"chunk_labels", "keywords_in_top_k"})
ANSWER_GRADE = 2  # chunk grade meaning "contains the answer"


def answer_chunks(labels: Any, config: Mapping[str, Any]) -> tuple[dict[str, set[str]], str]:
    """``({qid: answer chunk ids}, labels name)`` from ChunkLabels or chunk-level Qrels.

    Questions without any answer chunk are left out: when no single chunk holds the answer
    (it is split across chunks, or the labeller found none) the labels cannot decide stage 2
    and the judges do.

    >>> answer_chunks(Qrels({"q1": {"d#0": 2, "d#1": 1}, "q2": {"d#2": 1}}, unit="chunk"), {})
    ({'q1': {'d#0'}}, 'labels')
    """
    if isinstance(labels, Qrels):
        if labels.unit != "chunk":
            raise InputError(
                "labels: the funnel's stage 2 needs chunk-level labels (unit='chunk'), found "
                f"unit={labels.unit!r}"
            )
        qrels = labels
    else:
        check = getattr(labels, "check_chunking", None)
        if callable(check):
            check(config)
        to_qrels = getattr(labels, "to_qrels", None)
        if not callable(to_qrels):
            raise InputError(
                "labels: expected ChunkLabels or Qrels(unit='chunk'), found "
                f"{type(labels).__name__}"
            )
        qrels = to_qrels()
    answers = {q: set(qrels.relevant(q, ANSWER_GRADE)) for q in qrels}
    return {q: a for q, a in answers.items() if a}, qrels.name or "labels"


@dataclass(frozen=True)
class StageOutcomes:
    """The answerable questions' stage outcomes, aligned arrays in run order.

    Attributes
    ----------
    ids : ndarray of object
        Question ids.
    gold_hit : ndarray of bool
        Stage 1: a gold document in ``retrieved[:k]`` (False when the question lists none).
    gold_known : ndarray of bool
        The question lists gold documents, so stage 1 is decided (an answerable question
        without any is unjudged at stage 1, never a retrieval failure).
    evidence, answered, correct : ndarray of int
        Stages 2-4: 1 passed, 0 failed, -1 undecided (no judge said, or it failed).
    source : tuple of str
        Where each stage-2 verdict came from (one of :data:`STAGE2_SOURCES`, ``""`` when
        undecided).
    failed : ndarray of bool
        The answer could not be generated (``generation_error``): stages 3-4 undecided.
    reasons : tuple of tuple of str
        Per question, why stages 1, 2, 3 and 4 are undecided (``""`` where decided).
    """

    ids: np.ndarray
    gold_hit: np.ndarray
    evidence: np.ndarray
    answered: np.ndarray
    correct: np.ndarray
    source: tuple[str, ...]
    failed: np.ndarray
    reasons: tuple[tuple[str, str, str, str], ...] = ()
    gold_known: np.ndarray | None = None


def top_k(question: QuestionResult, k: int) -> tuple[Retrieved, ...]:
    """``question.ranked[:k]``, without sorting entries already in rank order (the usual
    saved run: the funnel and the drill-down take the top k of every question).

    >>> q = QuestionResult("q1", retrieved=(Retrieved("b#0", "b", rank=2),
    ...                                     Retrieved("a#0", "a", rank=1)))
    >>> [e.chunk_id for e in top_k(q, 1)] == [e.chunk_id for e in q.ranked[:1]] == ["a#0"]
    True
    """
    # `ranked` sorts only when the entries are out of rank order, and a loaded run's
    # retrieved list makes just the k entries sliced
    return tuple(question.ranked[:k])


#: Stage 2's source when the judges decide, by the first that does (3: none did).
_JUDGE_SOURCES = ("sufficiency", "evidence_in_context", "answer_chunk_in_context", "")

#: The judges' keys :func:`stage_outcomes` reads (``judge_errors`` and ``judge_error`` name
#: the failed judges: :attr:`~ragaudit.data.saved_run.Judgments.failed`).
_JUDGE_KEYS = (
    "sufficiency", "evidence_in_context", "answer_chunk_in_context", "abstained", "correct",
    "judge_errors", "judge_error",
)  # fmt: skip


def _code(value: Any) -> int:
    """A verdict as written as a tri-state code: 1 truthy, 0 falsy, -1 None (undecided),
    as ``_tri_state`` of the :class:`~ragaudit.data.saved_run.Judgments` property reads it."""
    return -1 if value is None else (1 if value else 0)


def _tri_state(value: bool | None) -> int:
    """1 for True, 0 for False, -1 for None (a judge that did not decide)."""
    return -1 if value is None else int(value)


class _Columns:
    """What :func:`stage_outcomes` reads of each question, as lists in run order: from the
    table of a loaded run (no question made), else from the questions."""

    def __init__(self, source: Sequence[QuestionResult] | SavedRun, k: int) -> None:
        self.k = k
        self.run: SavedRun | None = None
        self.table = None
        self.questions: Sequence[QuestionResult]
        if isinstance(source, SavedRun):
            self.run, self.questions = source, source.questions
            if not isinstance(source.questions, tuple):
                self.table = source.table
        else:
            self.questions = source

    @cached_property
    def ids(self) -> list[str]:
        if self.run is not None:
            return self.run.ids
        return [q.id for q in self.questions]

    @cached_property
    def answerable(self) -> list[bool]:
        if self.run is not None:
            return self.run.answerable_flags
        return [q.answerable for q in self.questions]

    def _values(self, name: str) -> list[Any]:
        if self.run is not None and self.table is not None:
            return self.run.column_values(name)
        return [getattr(q, name) for q in self.questions]

    @cached_property
    def errors(self) -> list[str | None]:
        return self._values("generation_error")

    @cached_property
    def gold_docs(self) -> list[Sequence[str]]:
        return self._values("gold_docs")

    @cached_property
    def keywords(self) -> list[Sequence[str]]:
        return self._values("keywords")

    @cached_property
    def context_ids(self) -> list[Sequence[str] | None]:
        return self._values("context_ids")

    @cached_property
    def judges(self) -> list[Any]:
        if self.table is not None:
            return judgments(self.table)
        return [q.judges for q in self.questions]

    @cached_property
    def top_docs(self) -> list[Sequence[str]]:
        if self.run is not None:
            return self.run.top_doc_ids(self.k)
        return [top_doc_ids(q, self.k) for q in self.questions]

    @cached_property
    def gold_counts(self) -> tuple[list[int], list[int]] | None:
        """Each question's gold documents listed and found in its top k (:func:`gold_in_top`,
        by column kernels), or None when read question by question."""
        found = None if self.run is None or self.table is None else self.run.gold_in_top(self.k)
        return None if found is None else (found[2].tolist(), found[0].tolist())

    def judge_columns(self, kept: list[int]) -> list[list[Any]]:
        """Each of :data:`_JUDGE_KEYS` over the ``kept`` questions, as written."""
        found = None if self.table is None else record_columns(self.table, "judges", _JUDGE_KEYS)
        if found is None:
            return mapping_columns([self.judges[i].data for i in kept], _JUDGE_KEYS)
        return [[column[i] for i in kept] for column in found]

    @cached_property
    def top_chunks(self) -> Sequence[Sequence[str]]:
        found = None if self.table is None else top_ids(self.table, self.k, "chunk_id")
        if found is None:
            return [top_chunk_ids(q, self.k) for q in self.questions]
        return found

    def question(self, i: int) -> QuestionResult:
        """Question ``i`` itself (made from the table when the run is loaded)."""
        return self.questions[i]


def stage_outcomes(
    questions: Sequence[QuestionResult] | SavedRun,
    k: int,
    *,
    resliced: bool,
    answers: Mapping[str, set[str]],
    chunk_texts: Mapping[str, str] | None,
    where: str,
) -> StageOutcomes:
    """The stage outcomes of every answerable question of ``questions`` (see the module doc).

    Parameters
    ----------
    questions : sequence of QuestionResult, or SavedRun
        The run's questions (unanswerable ones are skipped), or the run itself: a loaded
        run is read by column.
    k : int
        Cut-off of stages 1 and 2 (on each question's ``ranked[:k]``, :func:`top_k`).
    resliced : bool
        ``k`` differs from the run's own k: stage 2 from the run's context or its
        ``answer_chunk_in_context`` verdict no longer applies.
    answers : mapping of str to set of str
        :func:`answer_chunks` of the chunk labels (empty without labels).
    chunk_texts : mapping of str to str, optional
        ``{chunk_id: text}`` for the keyword rule at another k.
    where : str
        The run's file, for messages.

    Examples
    --------
    >>> from ragaudit.data.saved_run import Judgments
    >>> q = QuestionResult("q1", retrieved=(Retrieved("G#0", "G"),), gold_docs=("G",),
    ...                    judges=Judgments({"sufficiency": True, "abstained": False}))
    >>> v = stage_outcomes([q], 1, resliced=False, answers={}, chunk_texts=None,
    ...                    where="run.json")
    >>> v.gold_hit.tolist(), v.evidence.tolist(), v.source, v.answered.tolist(), v.correct.tolist()
    ([True], [1], ('sufficiency',), [1], [-1])
    """
    read = _Columns(questions, k)
    kept = [i for i, answerable in enumerate(read.answerable) if answerable]
    n = len(kept)
    # the verdicts read by column: one pass per key, not a method call per question and key
    suff_of, eic_of, acic_of, abstained_of, correct_of, named_of, text_of = read.judge_columns(kept)
    ids = [read.ids[i] for i in kept]
    errors = [read.errors[i] for i in kept]
    counts = read.gold_counts
    if counts is not None:  # gold listed and found in the top k, by column kernels
        known = [counts[0][i] > 0 for i in kept]
        gold_hit = [counts[1][i] > 0 for i in kept]
    else:  # the top k read from the retrieved columns (no entry objects made)
        golds = [set(read.gold_docs[i]) for i in kept]
        known = list(map(bool, golds))
        gold_hit = [not g.isdisjoint(read.top_docs[i]) for g, i in zip(golds, kept, strict=True)]
    # stage 2 from the judges, in order: sufficiency, evidence_in_context, then (at the run's
    # own k) answer_chunk_in_context, each where the ones before it did not decide
    judged = np.array([list(map(_code, suff_of)), list(map(_code, eic_of)),
                       [-1] * n if resliced else list(map(_code, acic_of))],
                      dtype=int).reshape(3, n)  # fmt: skip
    decided = judged >= 0
    first = np.where(decided.any(axis=0), decided.argmax(axis=0), 3)
    evidence = np.append(judged, np.full((1, n), -1), axis=0)[first, np.arange(n)]
    source = [_JUDGE_SOURCES[j] for j in first.tolist()]
    why_evidence = [""] * n
    for m in np.flatnonzero(first == 3).tolist():
        why_evidence[m] = _no_evidence_reason(read.judges[kept[m]], errors[m], resliced)
    # chunk labels, then the keyword rule at another k, decide before the judges
    for m, i in enumerate(kept if answers or (resliced and chunk_texts is not None) else ()):
        qid = ids[m]
        if qid in answers:
            context_ids = read.context_ids[i]
            if resliced or context_ids is None:
                context = set(read.top_chunks[i])
            else:
                context = set(context_ids)
            evidence[m], source[m] = int(bool(answers[qid] & context)), "chunk_labels"
            why_evidence[m] = ""
        elif resliced and chunk_texts is not None and read.keywords[i]:
            texts = [chunk_texts.get(c) for c in read.top_chunks[i]]
            if any(t is None for t in texts):
                raise InputError(
                    f"{where}: rows[{i}] ({qid}): a retrieved chunk is missing from the chunk "
                    "texts; the corpus or chunking differs from the run's"
                )
            verdict = offline_evidence(texts, list(read.keywords[i]))  # type: ignore[arg-type]
            evidence[m], source[m] = -1 if verdict is None else int(verdict), "keywords_in_top_k"
            why_evidence[m] = (
                f"no keyword checkable in the top-{k} chunk texts" if verdict is None else ""
            )
    abstained = [-1 if e else _code(a) for e, a in zip(errors, abstained_of, strict=True)]
    answered = [-1 if a < 0 else 1 - a for a in abstained]
    why_answered = [
        "" if a >= 0 else (f"generation error: {e}" if e else "no abstention verdict")
        for a, e in zip(abstained, errors, strict=True)
    ]
    # correct_verdict's rule where it is decided at once: a refusal is not correct; with no
    # generation error and no failed judge, the correctness verdict stands
    correct = [
        0 if a == 1 else (-2 if e or named or text or right is None else int(bool(right)))
        for a, e, named, text, right in zip(
            abstained, errors, named_of, text_of, correct_of, strict=True
        )
    ]
    why_correct = [""] * n
    for m in [m for m, c in enumerate(correct) if c == -2]:
        right, why_correct[m] = correct_verdict(read.question(kept[m]))
        correct[m] = _tri_state(right)
    why_gold = ["" if g else "no gold document (sources) listed for this question" for g in known]
    reasons = list(zip(why_gold, why_evidence, why_answered, why_correct, strict=True))
    failed = [bool(e) for e in errors]
    gold_known = known
    return StageOutcomes(
        ids=np.array(ids, dtype=object),
        gold_hit=np.array(gold_hit, dtype=bool),
        evidence=np.array(evidence, dtype=int),
        answered=np.array(answered, dtype=int),
        correct=np.array(correct, dtype=int),
        source=tuple(source),
        failed=np.array(failed, dtype=bool),
        reasons=tuple(reasons),
        gold_known=np.array(gold_known, dtype=bool),
    )


def unanswerable_questions(run: SavedRun, positions: list[int]) -> list[QuestionResult]:
    """The unanswerable questions at ``positions``, with what the refusal count reads of them
    (id, generation error, judges): from the columns of a loaded run, so that no slice of
    the run's questions is made for them."""
    if isinstance(run.questions, tuple):
        return [run.questions[i] for i in positions]
    if not positions:  # every question answerable: no column read
        return []
    table = run.table.take(positions)  # the judges of these questions only
    ids, errors = table.column("id").to_pylist(), table.column("generation_error").to_pylist()
    judges = judgments(table)
    positions = list(range(len(positions)))
    return [
        QuestionResult(ids[i], answerable=False, generation_error=errors[i], judges=judges[i])
        for i in positions
    ]


def _no_evidence_reason(judges: Mapping[str, Any], error: str | None, resliced: bool) -> str:
    """Why no source decided stage 2: the judges' own reason when the saved run has one."""
    if error:
        return f"generation error: {error}"
    why = undecided_reason(judges, "evidence_in_context") or undecided_reason(judges, "sufficiency")
    head = "no evidence-in-context verdict"
    if resliced and _tri_state(judges.get("answer_chunk_in_context")) >= 0:
        head += " at this k (the run's answer_chunk_in_context holds at its own k only)"
    return head + (f": {why}" if why else "")
