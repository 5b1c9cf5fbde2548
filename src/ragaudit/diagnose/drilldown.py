"""A question's drill-down: what was asked, retrieved, answered and judged, and where it died.

The one model of a question as the report page, ``ragaudit show`` and the grading session
open it: :func:`question_view` builds it from a saved-run row, :func:`question_stages` names
the funnel stage each question died at, and :func:`select_questions` picks and opens the
questions ``ragaudit show`` prints.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from ragaudit.data.saved_run import QuestionResult, SavedRun
from ragaudit.diagnose.funnel import FunnelResult, compute_funnel
from ragaudit.diagnose.stage_outcomes import top_k
from ragaudit.exceptions import InputError

__all__ = [
    "ChunkView",
    "QuestionView",
    "QuestionViews",
    "answer_chunk_sets",
    "question_stages",
    "question_view",
    "select_questions",
    "show_value",
]


@dataclass(frozen=True)
class ChunkView:
    """A retrieved chunk as the drill-down shows it."""

    rank: int
    chunk_id: str
    doc_id: str
    gold_doc: bool
    answer_chunk: bool | None
    text: str | None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (what :func:`dataclasses.asdict` gives, without its deep copy)."""
        return {
            "rank": self.rank,
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "gold_doc": self.gold_doc,
            "answer_chunk": self.answer_chunk,
            "text": self.text,
        }


@dataclass(frozen=True)
class QuestionView:
    """One question's drill-down: what was asked, retrieved, answered and judged."""

    qid: str
    stage: str
    question: str
    reference_answer: str
    answer: str
    keywords: tuple[str, ...]
    chunks: tuple[ChunkView, ...]
    judges: tuple[tuple[str, str], ...]

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict, chunks as dicts: what :func:`dataclasses.asdict` gives, in
        a tenth of its time (``show --failures`` of a large run converts tens of thousands).

        >>> from dataclasses import asdict
        >>> view = QuestionView("q1", "ok", "Q?", "A.", "A.", ("a",),
        ...                     (ChunkView(1, "D#0", "D", True, None, None),), (("x", "1"),))
        >>> view.to_dict() == asdict(view)
        True
        """
        return {
            "qid": self.qid,
            "stage": self.stage,
            "question": self.question,
            "reference_answer": self.reference_answer,
            "answer": self.answer,
            "keywords": tuple(self.keywords),
            "chunks": tuple(c.to_dict() for c in self.chunks),
            "judges": tuple(tuple(pair) for pair in self.judges),
        }


_JSON_WORDS = {None: "null", True: "true", False: "false"}


def show_value(value: Any) -> str:
    """A config or judge value as one line of text (JSON for anything but a string)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):  # most verdicts: no encoder per value
        return _JSON_WORDS[value]
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


def answer_chunk_sets(labels: Any) -> dict[str, set[str]]:
    """``{qid: answer chunk ids}`` of chunk labels (grade 2), for the drill-down."""
    questions = getattr(labels, "questions", None)
    if questions is None:
        return {}
    return {
        str(qid): {str(c) for c in getattr(entry, "answer_chunks", ())}
        for qid, entry in questions.items()
    }


def question_view(
    q: QuestionResult,
    stage: str,
    k: int,
    chunk_texts: Mapping[str, str] | None,
    answer_chunks: Mapping[str, set[str]],
) -> QuestionView:
    """The drill-down of one saved-run question at cut-off ``k``."""
    gold = set(q.gold_docs)
    answers = answer_chunks.get(q.id)
    chunks = tuple(
        ChunkView(  # rank, chunk_id, doc_id, gold_doc, answer_chunk, text (positional: faster)
            entry.rank or i + 1,
            entry.chunk_id,
            entry.doc_id,
            entry.doc_id in gold,
            None if answers is None else entry.chunk_id in answers,
            None if chunk_texts is None else chunk_texts.get(entry.chunk_id),
        )
        for i, entry in enumerate(top_k(q, k))
    )
    return QuestionView(
        qid=q.id,
        stage=stage,
        question=q.question,
        reference_answer=q.reference_answer or "",
        answer=q.answer or ("" if not q.generation_error else f"(no answer: {q.generation_error})"),
        keywords=q.keywords,
        chunks=chunks,
        # the verdicts' own dict: the Mapping protocol's items() looks each key up again
        judges=tuple((str(key), show_value(value)) for key, value in q.judges.data.items()),
    )


def question_stages(funnel: FunnelResult) -> dict[str, str]:
    """``{question id: where it landed}`` (:meth:`FunnelResult.places`, the one labelling of
    the funnel): a stage key, ``ok``, ``... (correct by luck)``, ``unjudged at ...`` or
    ``unanswerable, answered``; the drill-down's label, shared with ``ragaudit show``."""
    return funnel.places()


def select_questions(
    saved: SavedRun,
    qids: Sequence[str] = (),
    *,
    failures: bool = False,
    stage: str | None = None,
    k: int | None = None,
    labels: Any = None,
    chunk_texts: Mapping[str, str] | None = None,
) -> tuple[int, Sequence[QuestionView]]:
    """``(k, views)``: the drill-downs ``ragaudit show`` prints for the saved run ``saved``
    (each view opened when it is read: :class:`QuestionViews`).

    The questions named by ``qids`` (every question when empty), in that order, kept only if
    they failed (``failures``) or landed at ``stage`` (a funnel stage key, ``"lucky"`` or
    ``"unjudged"``), each opened at the funnel's cut-off ``k`` (the run's own by default).

    Raises
    ------
    InputError
        An id of ``qids`` that is not a question of the run.

    Examples
    --------
    >>> from ragaudit.data.saved_run import SavedRun
    >>> def row(qid, doc):
    ...     return {"id": qid, "gold_docs": ["d"], "retrieved": [{"chunk_id": doc, "doc_id": doc}]}
    >>> run = SavedRun.from_dict({"format": "ragaudit.run", "format_version": 1, "name": "r",
    ...     "config": {"k": 1}, "rows": [row("q1", "d"), row("q2", "e")]})
    >>> k, views = select_questions(run, stage="1-retrieval")
    >>> k, [(v.qid, v.stage) for v in views]
    (1, [('q2', '1-retrieval')])
    """
    funnel = compute_funnel(saved, k=k, labels=labels, chunk_texts=chunk_texts, n_resamples=1)
    stages = funnel.places()
    by_id = saved.by_id()
    unknown = [q for q in qids if q not in by_id]
    if unknown:
        known = ", ".join(list(by_id)[:5])
        raise InputError(
            f"{saved.path or saved.name}: question id: expected ids of the run (e.g. {known}), "
            "found " + ", ".join(repr(q) for q in unknown[:5])
        )
    selected = [by_id[q] for q in dict.fromkeys(qids)] if qids else list(saved.questions)
    keep: set[str] | None = None  # each id set built once, not once per question
    if failures:
        failed = set(funnel.failure_ids())
        selected = [q for q in selected if q.id in failed]
    if stage == "lucky":
        keep = set(funnel.lucky)
    elif stage == "unjudged":
        keep = {u.id for u in funnel.unjudged}
    elif stage is not None:
        keep = set(funnel.died[stage])
    if keep is not None:
        selected = [q for q in selected if q.id in keep]
    answers = answer_chunk_sets(labels) if labels is not None else {}
    return funnel.k, QuestionViews(selected, stages, funnel.k, chunk_texts, answers)


class QuestionViews(Sequence[QuestionView]):
    """The views of the selected questions, each opened when it is read (``show --failures``
    of a 200,000-question run prints one at a time instead of holding them all)."""

    def __init__(
        self,
        questions: Sequence[QuestionResult],
        stages: Mapping[str, str],
        k: int,
        chunk_texts: Mapping[str, str] | None,
        answers: Mapping[str, set[str]],
    ) -> None:
        self._questions = questions
        self._open = (stages, k, chunk_texts, answers)

    def _view(self, question: QuestionResult) -> QuestionView:
        stages, k, chunk_texts, answers = self._open
        return question_view(question, stages[question.id], k, chunk_texts, answers)

    def __len__(self) -> int:
        return len(self._questions)

    @overload
    def __getitem__(self, index: int) -> QuestionView: ...

    @overload
    def __getitem__(self, index: slice) -> list[QuestionView]: ...

    def __getitem__(self, index: int | slice) -> QuestionView | list[QuestionView]:
        if isinstance(index, slice):
            return [self._view(q) for q in self._questions[index]]
        return self._view(self._questions[index])

    def __iter__(self) -> Iterator[QuestionView]:
        return map(self._view, self._questions)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
