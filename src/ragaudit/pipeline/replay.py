"""Another tool's results as a saved run: replay its contexts and answers through the harness.

``ragaudit import --from ragas|deepeval|jsonl FILE --corpus DIR`` does this:

1. the corpus is chunked as ragaudit chunks it (``--chunk-size`` ...), and every retrieved
   context of the file is matched to one chunk (:class:`~ragaudit.data.context_match.
   ContextIndex`: exact text, else the best token overlap >= ``min_overlap``); contexts that
   match no chunk are dropped and counted, a chunk matched twice for one question is kept once
   and counted;
2. the golden set is ``--golden`` (matched by id when the file has ids in it, else by question
   text), or else built from the file itself (``reference`` as the answer, sources from
   ``reference_context_ids``/``sources`` or from the chunks the reference contexts match);
3. the harness runs every question with a retriever that returns the matched chunks and a
   generator that returns the recorded answer (abstention and ``[n]`` citations read from its
   text as for the LLM generator), so the offline judges, the retrieval metrics and the
   summary are computed exactly as for a run ragaudit made itself;
4. reference contexts (``reference_contexts``, DeepEval's ``context``, or the golden set's)
   that match a chunk label it an answer chunk (grade 2): the rows get the chunk-level
   metrics (``chunk_hit@k`` ...) and the ``answer_chunk_in_context`` verdict, which the funnel
   uses for stage 2 when no keyword judge decided it.

The saved run's ``k`` is ``--k`` or the largest number of contexts of a question; its
``retrieval_depth`` equals ``k`` (nothing deeper was retrieved).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ragaudit._io import refuse_input_as_output
from ragaudit._version import version
from ragaudit.data.chunks import Chunk
from ragaudit.data.context_match import MIN_OVERLAP, ContextIndex
from ragaudit.data.foreign import ForeignQuestion, read_foreign, sniff_layout
from ragaudit.data.golden import (
    GoldenQuestion,
    GoldenSet,
    golden_from_records,
    sources_from_contexts,
)
from ragaudit.data.qrels import Qrels
from ragaudit.data.records import load_saved_run, write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run.summary import summarise_run
from ragaudit.exceptions import FormatError, InputError
from ragaudit.judges.offline import is_abstention
from ragaudit.llm.citations import extract_citations
from ragaudit.pipeline.build import golden_for_corpus
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.config import saved_run_path
from ragaudit.pipeline.corpus import corpus_sha256, load_corpus
from ragaudit.pipeline.generators import Generation
from ragaudit.pipeline.harness import evaluate_configuration
from ragaudit.pipeline.retrievers import Retriever

__all__ = ["CheckedRun", "ImportResult", "check_saved_run", "import_results"]


@dataclass(frozen=True)
class ImportResult:
    """A saved run made from another tool's results, with how its contexts were matched.

    Attributes
    ----------
    saved : SavedRun
    n_contexts : int
        Retrieved contexts in the file.
    exact, overlap, unmatched, repeated : int
        Contexts matched by exact text, by overlap, not matched (dropped), and matched to a
        chunk already matched for the same question (kept once).
    min_overlap : float
    unmatched_ids : tuple of str
        Questions with at least one unmatched context.
    """

    saved: SavedRun
    n_contexts: int
    exact: int
    overlap: int
    unmatched: int
    repeated: int
    min_overlap: float
    unmatched_ids: tuple[str, ...] = field(default=())

    @property
    def summary(self) -> dict[str, Any]:
        """The saved run's summary as ``ragaudit import`` reports it (recomputed)."""
        return summarise_run(self.saved).to_dict()


@dataclass(frozen=True)
class CheckedRun:
    """A saved run ``ragaudit import`` validated: the run, its recomputed summary, and the
    file it was rewritten to (None when it was only checked)."""

    saved: SavedRun
    summary: dict[str, Any]
    target: Path | None


def check_saved_run(
    path: str | Path,
    out_dir: str | Path | None = None,
    inputs: Sequence[str | Path] = (),
    save_as: str = "json",
) -> CheckedRun:
    """Validate the saved run at ``path`` (``ragaudit import FILE``) and recompute its summary;
    with ``out_dir``, write it there, summary refreshed, as ``<out_dir>/<name>.json`` (or
    ``.parquet`` with ``save_as="parquet"``).

    ``inputs`` are files the target may not be (``import run.json --out .`` would overwrite
    the input).  A malformed file raises :class:`~ragaudit.exceptions.FormatError` naming the
    line and field.
    """
    try:
        saved = load_saved_run(str(path))
    except FormatError:
        sniffed = sniff_layout(path)  # another tool's export given without --from
        if sniffed is None:
            raise
        layout, columns = sniffed
        raise FormatError(
            f"expected a ragaudit saved run, found a {layout} export (columns "
            f"{', '.join(columns)}); import it with ragaudit import {path} --from {layout} "
            "--corpus DIR (the documents its contexts came from)",
            path=str(path),
        ) from None
    summary = summarise_run(saved).to_dict()
    target = None
    if out_dir is not None:
        target = saved_run_path(out_dir, saved.name, save_as=save_as)
        refuse_input_as_output(target, [str(p) for p in (path, *inputs)])
        write_saved_run(target, saved.replace(summary=summary))
    return CheckedRun(saved, summary, target)


def _squash(text: str) -> str:
    return " ".join(text.split())


class _Replay:
    """Retriever and generator at once: the recorded chunks and answer of each question."""

    def __init__(
        self, rankings: Mapping[str, list[str]], answers: Mapping[str, str | None]
    ) -> None:
        self._rankings = rankings
        self._answers = answers

    def retrieve(self, question: str, depth: int) -> list[tuple[str, float | None]]:
        return [(cid, None) for cid in self._rankings[question][:depth]]

    def generate(self, question: str, context: list[Chunk]) -> Generation:
        answer = self._answers[question]
        if answer is None:
            return Generation("", False, error="import: the file records no answer")
        abstained = is_abstention(answer)
        return Generation(answer, abstained, [] if abstained else extract_citations(answer))


def _golden_from_file(
    questions: Sequence[ForeignQuestion], path: str, index: ContextIndex, doc_ids: set[str]
) -> GoldenSet:
    records = []
    for position, q in enumerate(questions):
        record: dict[str, Any] = {
            "id": q.id or f"q{position + 1}",
            "question": q.question,
            "answer": q.reference,
        }
        if q.sources:
            record["sources"] = list(q.sources)
        if q.reference_contexts:
            record["reference_contexts"] = list(_contexts(q, index, "reference_contexts"))
        records.append((q.line, record))
    # The reference answer is optional in these layouts: without one, correctness is left
    # undecided (the numeric check needs a reference), retrieval and stage 2 still count.
    golden = golden_from_records(
        records, path=path, doc_ids=doc_ids, require_sources=False, require_answer=False
    )
    return sources_from_contexts(golden, index)


def _golden_from_set(
    questions: Sequence[ForeignQuestion], golden: GoldenSet, path: str
) -> GoldenSet:
    by_id = golden.by_id()
    by_text: dict[str, GoldenQuestion] = {}
    for g in golden:
        by_text.setdefault(_squash(g.question), g)
    chosen: list[GoldenQuestion] = []
    for q in questions:
        found = by_id.get(q.id) if q.id is not None else None
        found = found or by_text.get(_squash(q.question))
        if found is None:
            raise FormatError(
                f"question {shorten_text(q.question)!r} is not in the golden set "
                f"{golden.path} (matched by id, then by question text)",
                path=path,
                line=q.line,
                field="question",
            )
        if any(c.id == found.id for c in chosen):
            raise FormatError(
                f"question {found.id!r} appears twice in the file", path=path, line=q.line
            )
        chosen.append(found)
    return GoldenSet(tuple(chosen), golden.path, golden.sha256)


def _contexts(
    question: ForeignQuestion, index: ContextIndex, field: str = "contexts"
) -> Sequence[str]:
    """The texts of ``field``: a delimiter-joined CSV cell is cut where its pieces are whole
    chunks (:meth:`ContextIndex.segment`), else at every delimiter as it was read."""
    joined = question.joined_cell(field)
    pieces = index.segment(*joined) if joined is not None else None
    if pieces is not None:
        return pieces
    return question.contexts if field == "contexts" else question.reference_contexts


def shorten_text(text: str, limit: int = 50) -> str:
    """``text`` cut to ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def import_results(
    path: str | Path,
    layout: str,
    corpus: str | Path,
    *,
    golden: str | Path | None = None,
    golden_columns: Mapping[str, str] | None = None,
    k: int | None = None,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    chunker: str = "fixed",
    min_overlap: float = MIN_OVERLAP,
    name: str | None = None,
    out_dir: str | Path = "ragaudit-results",
    save_as: str = "json",
) -> ImportResult:
    """Turn another tool's per-question results into a saved run (see the module docstring).

    Parameters
    ----------
    path : str or Path
        The results: JSON, JSON Lines or CSV in ``layout``'s column names.
    layout : {"ragas", "deepeval", "jsonl"}
    corpus : str or Path
        The documents the contexts came from.
    golden : str or Path, optional
        Golden set giving ids, sources, keywords and answerability.
    golden_columns : mapping, optional
        ``--map`` for the golden set.
    k : int, optional
        Cut-off of the saved run (default: the most contexts any question has).
    chunk_size, chunk_overlap, chunker :
        How ragaudit chunks the corpus (contexts are matched to these chunks).
    min_overlap : float, default 0.5
    name : str, optional
        Run name (default: the file's stem).
    out_dir : str or Path
    save_as : {"json", "parquet"}, default "json"

    Returns
    -------
    ImportResult
        The saved run is also written to ``<out_dir>/<name>.json`` (or ``.parquet``).
    """
    file = str(path)
    # The saved run goes to <out_dir>/<name>.json: never over the file it is made from.
    target = saved_run_path(out_dir, name or Path(file).stem, save_as=save_as)
    refuse_input_as_output(target, [file, golden])
    questions = read_foreign(path, layout)
    documents = load_corpus(corpus)
    chunks = chunk_documents(documents, chunk_size, chunk_overlap, chunker)
    index = ContextIndex(chunks, min_overlap)
    if golden is not None:
        full = golden_for_corpus(golden, documents, chunks, columns=golden_columns)
        golden_set = _golden_from_set(questions, full, file)
    else:
        golden_set = _golden_from_file(questions, file, index, {d.doc_id for d in documents})
    counts = {"exact": 0, "overlap": 0, "unmatched": 0, "repeated": 0}
    rankings: dict[str, list[str]] = {}
    answers: dict[str, str | None] = {}
    unmatched_ids: list[str] = []
    context_texts = [_contexts(q, index) for q in questions]
    for q, gq, texts in zip(questions, golden_set, context_texts, strict=True):
        if gq.question in rankings:
            raise FormatError(
                f"two questions have the same text {shorten_text(gq.question)!r}",
                path=file,
                line=q.line,
                field="question",
            )
        ranking: list[str] = []
        for text in texts:
            match = index.match(text)
            if match.chunk_id is None:
                counts["unmatched"] += 1
                if gq.id not in unmatched_ids:
                    unmatched_ids.append(gq.id)
            elif match.chunk_id in ranking:
                counts["repeated"] += 1
            else:
                counts[match.how] += 1
                ranking.append(match.chunk_id)
        rankings[gq.question] = ranking
        answers[gq.question] = q.answer
    depth = k if k is not None else max([len(texts) for texts in context_texts] + [1])
    if depth < 1:
        raise InputError(f"--k: expected an integer >= 1, found {depth}")
    config: dict[str, Any] = {
        "k": depth,
        "chunk_size": chunk_size,
        "chunk_overlap": chunk_overlap,
        "chunker": chunker,
        "retriever": f"import:{layout}",
        "generator": f"import:{layout}",
        "judges": "offline",
        "imported_from": Path(file).name,
        "context_match": {"min_overlap": min_overlap, **counts},
        "corpus_sha256": corpus_sha256(documents),
        "golden_sha256": golden_set.sha256,
        "ragaudit_version": version(),
    }
    answer_chunks = {
        q.id: {m.chunk_id: 2 for m in map(index.match, q.reference_contexts) if m.chunk_id}
        for q in golden_set
        if q.answerable and q.reference_contexts
    }
    chunk_labels = Qrels(answer_chunks, unit="chunk") if answer_chunks else None
    replay = _Replay(rankings, answers)
    saved = evaluate_configuration(
        golden_set,
        chunks,
        cast(Retriever, replay),
        replay,
        config=config,
        name=name or Path(file).stem,
        out_dir=out_dir,
        chunk_labels=chunk_labels,
        record_latency=False,
        depth=depth,
    )
    return ImportResult(
        saved,
        sum(len(texts) for texts in context_texts),
        counts["exact"],
        counts["overlap"],
        counts["unmatched"],
        counts["repeated"],
        min_overlap,
        tuple(unmatched_ids),
    )
