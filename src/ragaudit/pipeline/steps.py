"""The per-question steps of the harness: retrieve, then generate, judge offline, assemble."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from ragaudit.data.chunks import Chunk
from ragaudit.data.golden import GoldenQuestion
from ragaudit.data.qrels import Qrels
from ragaudit.exceptions import InputError
from ragaudit.judges.offline import judge_offline
from ragaudit.pipeline.executors import Unit
from ragaudit.pipeline.generators import Generator
from ragaudit.pipeline.retrievers import Retriever

__all__ = ["Retrieved", "UnitWork", "answer", "concurrent_map", "pool_each", "retrieve"]


@dataclass
class Retrieved:
    """One question with its ranked chunks, its top-``k`` context and the retrieval time."""

    question: GoldenQuestion
    retrieved: list[dict[str, Any]]
    context: list[Chunk]
    retrieve_ms: float


def retrieve(
    question: GoldenQuestion,
    retriever: Retriever,
    chunks_by_id: Mapping[str, Chunk],
    k: int,
    depth: int,
) -> Retrieved:
    """Retrieve ``depth`` chunks for ``question``; the first ``k`` are its context."""
    start = time.perf_counter()
    # A retriever that needs to know which golden question it serves (the user's pipeline in
    # evaluate_pipeline: two questions may share their text) takes the question itself.
    ask = getattr(retriever, "retrieve_question", None)
    hits = ask(question, depth) if ask is not None else retriever.retrieve(question.question, depth)
    elapsed = (time.perf_counter() - start) * 1000
    retrieved: list[dict[str, Any]] = []
    for rank, (cid, score) in enumerate(hits, start=1):
        chunk = chunks_by_id.get(cid)
        if chunk is None:
            raise InputError(
                f"question {question.id!r}: the retriever returned chunk id {cid!r}, which is not "
                "a chunk of this corpus and chunking"
            )
        retrieved.append({"chunk_id": cid, "doc_id": chunk.doc_id, "score": score, "rank": rank})
    context = [chunks_by_id[str(r["chunk_id"])] for r in retrieved[:k]]
    return Retrieved(question, retrieved, context, elapsed)


def answer(
    found: Retrieved,
    generator: Generator,
    *,
    chunk_labels: Qrels | None,
    record_latency: bool,
    seed: int | None = None,
    repeat: int = 0,
) -> dict[str, Any]:
    """Generate, judge offline, and assemble the row of one retrieved question.

    ``seed`` (the unit's) reaches a generator that declares ``takes_seed``; ``repeat`` (the
    unit's) one that declares ``takes_repeat``.
    """
    question, context = found.question, found.context
    start = time.perf_counter()
    unit: dict[str, int] = {}
    if seed is not None and getattr(generator, "takes_seed", False):
        unit["seed"] = seed
    if getattr(generator, "takes_repeat", False):
        unit["repeat"] = repeat
    generation = generator.generate(question.question, context, **unit)
    generate_ms = (time.perf_counter() - start) * 1000
    if generation.error:
        judges: dict[str, Any] = {}
    else:
        judges = judge_offline(
            answer=generation.answer,
            answerable=question.answerable,
            reference_answer=question.answer,
            keywords=question.keywords,
            context_texts=[c.text for c in context],
            context_ids=[c.chunk_id for c in context],
            chunk_grades=None if chunk_labels is None else chunk_labels.get(question.id),
            question=question.question,
            context_docs=[c.doc_id for c in context],
            sources=list(question.sources),
            evidence_from_each_source=question.evidence_from_each_source,
        )
    latency = None
    if record_latency and generation.latency_ms is not None:
        latency = dict(generation.latency_ms)
    elif record_latency:
        latency = {
            "retrieve": round(found.retrieve_ms, 1),
            "generate": round(generate_ms, 1),
            "total": round(found.retrieve_ms + (time.perf_counter() - start) * 1000, 1),
        }
    row: dict[str, Any] = {
        "id": question.id,
        "question": question.question,
        "answerable": question.answerable,
        "reference_answer": question.answer,
        "keywords": list(question.keywords),
        "gold_docs": list(question.sources),
        "tags": list(question.tags),
        "retrieved": found.retrieved,
        "context_ids": [c.chunk_id for c in context],
        # A failed generation has no answer (null), not an empty one: "" would read as a
        # refusal.  The row is kept, counted in n_generation_errors, its answer metrics null.
        "answer": None if generation.error else generation.answer,
        "abstained": None if generation.error else generation.abstained,
        "citations": list(generation.citations),
        "judges": judges,
        "latency_ms": latency,
        "generation_error": generation.error,
    }
    if generation.usage is not None:
        # Whether a reply came from the cache differs between runs; the file must not.
        row["usage"] = {k: v for k, v in generation.usage.items() if k != "cached"}
    if generation.row_extra:
        row.update({k: v for k, v in generation.row_extra.items() if k not in row})
    return row


@dataclass(frozen=True)
class UnitWork:
    """Retrieve and answer one (question, repeat) unit: what every executor runs.

    Holds everything a unit needs and nothing of the driver's (no checkpoint, no lock), so it
    can be pickled once and sent to Ray workers.
    """

    retriever: Retriever
    generator: Generator
    chunks_by_id: Mapping[str, Chunk]
    k: int
    depth: int
    chunk_labels: Qrels | None
    record_latency: bool

    def __call__(self, unit: Unit) -> dict[str, Any]:
        found = retrieve(unit.question, self.retriever, self.chunks_by_id, self.k, self.depth)
        return answer(
            found,
            self.generator,
            chunk_labels=self.chunk_labels,
            record_latency=self.record_latency,
            seed=unit.seed,
            repeat=unit.repeat,
        )


def concurrent_map(generator: Generator) -> Callable[..., list[Any]] | None:
    """The bounded, order-keeping ``map`` of a model-backed generator's client, if any.

    ``LLMGenerator.generate_many`` runs the same pool but reports only counts; going through
    ``client.map`` with our own per-question function lets every finished row reach the
    checkpoint the moment it completes, so an interrupted run loses nothing.
    """
    if not hasattr(generator, "generate_many"):
        return None
    mapper = getattr(getattr(generator, "client", None), "map", None)
    return mapper if callable(mapper) else None


def pool_each(work: Callable[[Any], None], items: Iterable[Any], max_workers: int) -> None:
    """Call ``work(item)`` for every item on at most ``max_workers`` threads.

    ``work`` records its own result (the harness checkpoints each row the moment it is
    finished).  The first failure, ``KeyboardInterrupt`` included, stops new calls and is
    raised here once the calls already running have finished, so every call that succeeded is
    recorded and none is made twice on a resume.  With one worker the items run in the
    calling thread, one after the other.

    >>> seen = []
    >>> pool_each(seen.append, range(5), 2)
    >>> sorted(seen)
    [0, 1, 2, 3, 4]
    """
    if max_workers == 1:
        for item in items:
            work(item)
        return
    stop = threading.Event()

    def guarded(item: Any) -> None:
        if stop.is_set():
            return  # a call failed: start no more
        try:
            work(item)
        except BaseException:
            stop.set()
            raise

    pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="ragaudit-pipeline")
    try:
        futures = [pool.submit(guarded, item) for item in items]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f for f in futures if f in done and f.exception() is not None), None)
    except BaseException:  # Ctrl-C while waiting: stop starting calls, finish running ones
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True, cancel_futures=failed is not None)
    if failed is not None:
        raise failed.exception()  # type: ignore[misc]
