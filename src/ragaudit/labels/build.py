"""Build a chunk-label file: candidates are every chunk of a question's gold document(s).

:func:`build_chunk_labels` is pure over its inputs (questions, chunks, a labeller) except for
the optional ``save`` callback, which the CLI uses to write the file atomically after every
question (and, for a person labelling, after every answer).  Existing complete labels are
reused unless ``rebuild`` is set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaudit._validate import check_int
from ragaudit.data.chunks import Chunk
from ragaudit.exceptions import InputError, JudgeError
from ragaudit.labels.format import Chunking, ChunkLabels, QuestionLabels
from ragaudit.labels.human import LabellingStopped
from ragaudit.labels.paths import fresh_labels_path
from ragaudit.labels.protocol import GRADES, Labeller

__all__ = ["BuildSummary", "build_chunk_labels", "make_labeller", "question_fields"]


@dataclass(frozen=True)
class BuildSummary:
    """What a build did.

    Attributes
    ----------
    labels : ChunkLabels
        The labels after the build (existing + new).
    labelled : tuple of str
        Questions labelled in this build.
    reused : tuple of str
        Questions whose existing complete labels were kept.
    no_answer_chunk : tuple of str
        Labelled questions where no candidate chunk got grade 2.
    stopped : bool
        The labeller (a person) stopped before the end; the progress is saved.
    failed : dict of str to str
        Questions the labeller could give no valid labels (e.g. an LLM whose replies stayed
        invalid after its retries) -> the reason.  They stay incomplete in the file, never
        labelled all-zero, and a rerun tries them again.
    """

    labels: ChunkLabels
    labelled: tuple[str, ...]
    reused: tuple[str, ...]
    no_answer_chunk: tuple[str, ...]
    stopped: bool
    failed: dict[str, str] = field(default_factory=dict)


def _get(question: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        if isinstance(question, Mapping):
            if name in question:
                return question[name]
        elif hasattr(question, name):
            return getattr(question, name)
    return default


def question_fields(question: Any) -> dict[str, Any]:
    """Normalise a golden-set question (a dict or an object) to the fields the builder needs.

    Accepts ``id``, ``question``, ``answer``/``reference_answer``, ``keywords``,
    ``sources``/``gold_docs``/``doc_sources`` and ``answerable``.

    >>> question_fields({"id": "q1", "question": "Q?", "answer": "A", "sources": ["D"]})["sources"]
    ['D']
    """
    qid = _get(question, "id", "qid")
    if qid is None:
        raise InputError(f"golden question without an id: {question!r}")
    return {
        "id": str(qid),
        "question": str(_get(question, "question", default="")),
        "answer": str(_get(question, "reference_answer", "answer", default="") or ""),
        "keywords": [str(k) for k in _get(question, "keywords", default=()) or ()],
        "sources": [
            str(s) for s in _get(question, "sources", "gold_docs", "doc_sources", default=()) or ()
        ],
        "answerable": _get(question, "answerable", default=True) is not False,
    }


def make_labeller(kind: str, **options: Any) -> Labeller:
    """The labeller named ``kind``: ``heuristic``, ``human`` or ``llm`` (``options`` go to it).

    ``llm`` imports :class:`ragaudit.labels.llm.LLMLabeller` lazily.

    >>> make_labeller("heuristic").name
    'heuristic'
    """
    if kind == "heuristic":
        from ragaudit.labels.heuristic import HeuristicLabeller

        return HeuristicLabeller()
    if kind == "human":
        from ragaudit.labels.human import HumanLabeller

        return HumanLabeller(**options)
    if kind == "llm":
        try:
            from ragaudit.labels.llm import LLMLabeller  # type: ignore[import-not-found,unused-ignore]
        except ImportError as exc:
            raise InputError(
                "labeller 'llm': ragaudit.labels.llm.LLMLabeller is not available in this "
                f"installation ({exc}); use --labeller heuristic or human"
            ) from None
        labeller: Labeller = LLMLabeller(**options)
        return labeller
    raise InputError(f"labeller: expected heuristic, llm or human, found {kind!r}")


def _check_grades(grades: Any, candidates: list[Chunk], labeller: str, qid: str) -> None:
    ids = {c.chunk_id for c in candidates}
    if not isinstance(grades, Mapping):
        raise InputError(
            f"labeller {labeller!r}, question {qid}: expected {{chunk_id: grade}}, "
            f"found {type(grades).__name__}"
        )
    for chunk, grade in grades.items():
        if chunk not in ids:
            raise InputError(
                f"labeller {labeller!r}, question {qid}: chunk {chunk!r} is not one "
                "of the candidates"
            )
        if grade not in GRADES or isinstance(grade, bool):
            raise InputError(
                f"labeller {labeller!r}, question {qid}, chunk {chunk!r}: expected "
                f"grade 0, 1 or 2, found {grade!r}"
            )


def build_chunk_labels(
    questions: Sequence[Any],
    chunks: Sequence[Chunk],
    labeller: Labeller,
    chunking: Chunking,
    *,
    existing: ChunkLabels | None = None,
    rebuild: bool = False,
    limit: int | None = None,
    save: Callable[[ChunkLabels], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> BuildSummary:
    """Label the answerable questions' candidate chunks.

    Parameters
    ----------
    questions : sequence of dict or object
        Golden-set questions (see :func:`question_fields`); unanswerable ones are skipped.
    chunks : sequence of Chunk
        Every chunk of the corpus under ``chunking``.
    labeller : Labeller
        Grades the candidates of one question.
    chunking : Chunking
        Recorded in the file; must match ``existing``'s unless ``rebuild``.
    existing : ChunkLabels, optional
        Labels to extend: complete questions are reused, partial ones resumed.
    rebuild : bool, default False
        Ignore ``existing`` and label everything again.
    limit : int, optional
        Only the first ``limit`` answerable questions.
    save : callable, optional
        Called with the labels after every question (and every human answer).
    progress : callable, optional
        Called as ``progress(done, total)`` with the questions handled so far (a progress bar;
        nothing is printed per question).

    Returns
    -------
    BuildSummary

    Raises
    ------
    InputError
        A question's source is not a corpus document, ``existing`` has another chunking (and
        ``rebuild`` is not set), ``limit < 1``, or the labeller returned invalid grades.

    Examples
    --------
    >>> from ragaudit.labels.heuristic import HeuristicLabeller
    >>> chunks = [Chunk("c0", "D", 0, "Twenty days of leave."), Chunk("c1", "D", 1, "Sick days.")]
    >>> golden = [{"id": "q1", "question": "How much leave?", "answer": "Twenty days",
    ...            "keywords": ["twenty days"], "sources": ["D"]}]
    >>> summary = build_chunk_labels(golden, chunks, HeuristicLabeller(),
    ...                              Chunking("fixed", 800, 100))
    >>> summary.labels.questions["q1"].answer_chunks, summary.labelled
    (['c0'], ('q1',))
    """
    if limit is not None:
        check_int(limit, "limit")
    name = getattr(labeller, "name", type(labeller).__name__)
    if existing is not None and not rebuild:
        if existing.chunking.to_dict() != chunking.to_dict():
            raise InputError(
                f"{existing.path or 'existing labels'}: made for {existing.chunking.describe()}"
                f" (corpus {str(existing.chunking.corpus_sha256)[:12]}), not "
                f"{chunking.describe()} (corpus {str(chunking.corpus_sha256)[:12]}); these "
                "labels are kept: label this chunking into a new file with --out "
                f"{fresh_labels_path(existing.path)}"
            )
        labels = existing
        if labels.labeller != name:
            labels.labeller = "mixed"
    else:
        labels = ChunkLabels(chunking, name, {}, None if existing is None else existing.path)

    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    fields = [question_fields(q) for q in questions]
    selected = [f for f in fields if f["answerable"] and f["sources"]]
    if limit is not None:
        selected = selected[:limit]

    labelled: list[str] = []
    reused: list[str] = []
    no_answer: list[str] = []
    failed: dict[str, str] = {}
    incremental = bool(getattr(labeller, "incremental", False))
    for position, q in enumerate(selected, start=1):
        if progress is not None:
            progress(position - 1, len(selected))
        qid = q["id"]
        current = labels.questions.get(qid)
        if current is not None and current.complete:
            reused.append(qid)
            continue
        missing = [s for s in q["sources"] if s not in by_doc]
        if missing:
            raise InputError(
                f"question {qid}: source {missing[0]!r} is not a document of the corpus "
                f"(document ids are file stems, e.g. {next(iter(by_doc), '?')!r})"
            )
        candidates = sorted(
            (c for s in dict.fromkeys(q["sources"]) for c in by_doc[s]),
            key=lambda c: (q["sources"].index(c.doc_id), c.index),
        )
        entry = QuestionLabels(
            question=q["question"],
            doc_sources=list(dict.fromkeys(q["sources"])),
            n_candidate_chunks=len(candidates),
            labeller=name,
            complete=False,
            graded=dict(current.graded) if current is not None else {},
        )
        labels.questions[qid] = entry
        if incremental:

            def on_grade(chunk_id: str, grade: int, entry: QuestionLabels = entry) -> None:
                entry.graded[chunk_id] = grade
                if save is not None:
                    save(labels)

            try:
                grades = labeller.label(  # type: ignore[call-arg]
                    q["question"],
                    q["answer"],
                    q["keywords"],
                    candidates,
                    already=dict(entry.graded),
                    on_grade=on_grade,
                )
            except LabellingStopped:
                if save is not None:
                    save(labels)
                return BuildSummary(
                    labels, tuple(labelled), tuple(reused), tuple(no_answer), True, failed
                )
        else:
            try:
                grades = labeller.label(q["question"], q["answer"], q["keywords"], candidates)
            except JudgeError as exc:
                # One question without valid labels must not cost the others theirs: it stays
                # in the file as `complete: false` (so it is neither used nor counted as
                # all-zero) and the next build tries it again.
                failed[qid] = str(exc)
                if save is not None:
                    save(labels)
                continue
        _check_grades(grades, candidates, name, qid)
        order = [c.chunk_id for c in candidates]
        entry.answer_chunks = [c for c in order if grades.get(c, 0) == 2]
        entry.supporting_chunks = [c for c in order if grades.get(c, 0) == 1]
        entry.complete = True
        entry.graded = {}
        labelled.append(qid)
        if not entry.answer_chunks:
            no_answer.append(qid)
        if save is not None:
            save(labels)
    if progress is not None:
        progress(len(selected), len(selected))
    return BuildSummary(labels, tuple(labelled), tuple(reused), tuple(no_answer), False, failed)
