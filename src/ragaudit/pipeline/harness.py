"""The evaluation harness: run every golden question through retrieve -> read -> judge.

For one configuration it writes one saved run (``docs/saved-run-format.md``):

1. each question is retrieved to ``retrieval_depth = max(20, k)`` chunks, so the run can be
   re-sliced later at any ``k <= depth``; the top ``k`` chunks are the generator's context;
2. the generator answers, the offline judges score the answer;
3. finished rows are checkpointed to ``<name>.partial.jsonl`` as they complete, so an
   interrupted run resumes where it stopped (when the configuration is unchanged);
4. retrieval metrics are computed once for all questions with
   :func:`ragaudit.metrics.evaluate`, at document level by lifting each question's top-``k``
   chunks to their documents (a document counts at the rank of its first chunk), and at chunk
   level (``chunk_`` prefix) when chunk labels are given;
5. the file ``<out>/<name>.json`` (``<name>.limit<N>.json`` with a limit) is written
   atomically and the checkpoint removed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit import __version__
from ragaudit.data.golden import GoldenQuestion, GoldenSet, load_golden
from ragaudit.data.qrels import Qrels
from ragaudit.data.records import Checkpoint, SavedRun, write_saved_run
from ragaudit.data.runs import Run
from ragaudit.exceptions import InputError
from ragaudit.judges.offline import judge_offline
from ragaudit.pipeline.chunking import CHUNKERS, Chunk, chunk_documents
from ragaudit.pipeline.corpus import corpus_sha256, load_corpus
from ragaudit.pipeline.generators import GENERATORS, ExtractiveReader, Generator
from ragaudit.pipeline.retrievers import (
    RETRIEVERS,
    BM25Retriever,
    DenseRetriever,
    PrecomputedRetriever,
    QdrantRetriever,
    Retriever,
    read_run_file,
)

__all__ = [
    "RETRIEVAL_METRICS",
    "build_generator",
    "build_retriever",
    "default_name",
    "evaluate_configuration",
    "retrieval_metrics",
    "run_pipeline",
    "saved_run_path",
    "summarise",
]

# Family names; each is evaluated at config.k and stored as e.g. "recall@k".
RETRIEVAL_METRICS: tuple[str, ...] = ("hit", "recall", "precision", "mrr", "ndcg", "map")
_JUDGE_METRICS: tuple[str, ...] = ("answered", "correct", "keyword_hit", "evidence_in_context")

RowCallback = Callable[[dict[str, Any]], None]


def _check_positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name}: expected an integer >= 1, found {value!r}")
    return value


def default_name(
    k: int,
    chunk_size: int,
    chunker: str = "fixed",
    retriever: str = "bm25",
    generator: str = "extractive",
) -> str:
    """The conventional configuration name, e.g. ``k3_cs800``.

    >>> default_name(3, 800), default_name(5, 400, "markdown", "dense", "openai")
    ('k3_cs800', 'k5_cs400_markdown_dense_openai')
    """
    parts = [f"k{k}", f"cs{chunk_size}"]
    parts += [
        p for p, d in ((chunker, "fixed"), (retriever, "bm25"), (generator, "extractive")) if p != d
    ]
    return "_".join(parts)


def saved_run_path(out_dir: str | Path, name: str, limit: int | None = None) -> Path:
    """``<out>/<name>.json``, or ``<out>/<name>.limit<N>.json`` for a limited run.

    >>> saved_run_path("res", "k3_cs800", 5).name
    'k3_cs800.limit5.json'
    """
    suffix = "" if limit is None else f".limit{limit}"
    return Path(out_dir) / f"{name}{suffix}.json"


def _metric_key(family: str, prefix: str = "") -> str:
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
            _metric_key(family, prefix): float(v)
            for family, v in zip(RETRIEVAL_METRICS, values[i], strict=True)
        }
        for i, qid in enumerate(result.query_ids)
    }


def _judge_metrics(row: Mapping[str, Any]) -> dict[str, float | None]:
    judges = row.get("judges") or {}
    if row.get("error") or "judge_error" in judges:
        return dict.fromkeys(_JUDGE_METRICS)

    def number(value: Any) -> float | None:
        return None if value is None else float(value)

    return {
        "answered": 0.0 if judges.get("abstained") else 1.0,
        "correct": number(judges.get("correct")),
        "keyword_hit": number(judges.get("keyword_hit")),
        "evidence_in_context": number(judges.get("evidence_in_context")),
    }


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
    }


def _run_question(
    question: GoldenQuestion,
    *,
    retriever: Retriever,
    generator: Generator,
    chunks_by_id: Mapping[str, Chunk],
    k: int,
    depth: int,
    chunk_labels: Qrels | None,
    record_latency: bool,
) -> dict[str, Any]:
    start = time.perf_counter()
    hits = retriever.retrieve(question.question, depth)
    retrieved_at = time.perf_counter()
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
    generation = generator.generate(question.question, context)
    generated_at = time.perf_counter()
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
        )
    latency = None
    if record_latency:
        latency = {
            "retrieve": round((retrieved_at - start) * 1000, 1),
            "generate": round((generated_at - retrieved_at) * 1000, 1),
            "total": round((time.perf_counter() - start) * 1000, 1),
        }
    row: dict[str, Any] = {
        "id": question.id,
        "question": question.question,
        "answerable": question.answerable,
        "reference_answer": question.answer,
        "keywords": list(question.keywords),
        "gold_docs": list(question.sources),
        "tags": list(question.tags),
        "retrieved": retrieved,
        "context_ids": [c.chunk_id for c in context],
        "answer": generation.answer,
        "abstained": generation.abstained,
        "citations": list(generation.citations),
        "judges": judges,
        "latency_ms": latency,
        "error": generation.error,
    }
    if generation.usage is not None:
        row["usage"] = generation.usage
    return row


def evaluate_configuration(
    golden: GoldenSet,
    chunks: Sequence[Chunk],
    retriever: Retriever,
    generator: Generator,
    *,
    config: Mapping[str, Any],
    name: str,
    out_dir: str | Path,
    limit: int | None = None,
    chunk_labels: Qrels | None = None,
    record_latency: bool = True,
    on_row: RowCallback | None = None,
) -> SavedRun:
    """Run every golden question through one configuration and write its saved run.

    Parameters
    ----------
    golden : GoldenSet
    chunks : sequence of Chunk
        The chunked corpus the retriever indexes.
    retriever : Retriever
    generator : Generator
    config : mapping
        Must hold ``k``; stored verbatim (plus ``retrieval_depth``) in the saved run.
    name : str
        Configuration name (file stem).
    out_dir : str or Path
    limit : int, optional
        Only the first ``limit`` questions; written to ``<name>.limit<N>.json`` so a full run is
        never overwritten.
    chunk_labels : Qrels, optional
        Chunk-level labels (unit ``"chunk"``) for ``chunk_`` metrics and the
        ``answer_chunk_in_context`` judge.
    record_latency : bool, default True
        Without latency every byte of the file is reproducible.
    on_row : callable, optional
        Called with each finished row (progress bars).

    Returns
    -------
    SavedRun
        Also written to disk (its ``path`` is set).
    """
    k = _check_positive("k", config.get("k"))
    if limit is not None:
        _check_positive("limit", limit)
    depth = max(20, k)
    full_config = {**config, "retrieval_depth": depth}
    questions = list(golden)[:limit] if limit is not None else list(golden)
    path = saved_run_path(out_dir, name, limit)
    checkpoint = Checkpoint(path.with_name(path.name[: -len(".json")] + ".partial.jsonl"))
    done = checkpoint.resume(full_config)
    chunks_by_id = {c.chunk_id: c for c in chunks}
    rows: list[dict[str, Any]] = []
    for question in questions:
        row = done.get(question.id)
        if row is None:
            row = _run_question(
                question,
                retriever=retriever,
                generator=generator,
                chunks_by_id=chunks_by_id,
                k=k,
                depth=depth,
                chunk_labels=chunk_labels,
                record_latency=record_latency,
            )
            checkpoint.append(row)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    lift = {c.chunk_id: c.doc_id for c in chunks}
    doc_metrics = retrieval_metrics(rows, k, lift, qrels=golden.qrels(), unit="doc")
    chunk_metrics = (
        retrieval_metrics(rows, k, lift, qrels=chunk_labels, unit="chunk")
        if chunk_labels is not None
        else {}
    )
    chunk_names = [_metric_key(f, "chunk_") for f in RETRIEVAL_METRICS] if chunk_labels else []
    for row in rows:
        metrics: dict[str, float | None] = {
            _metric_key(f): doc_metrics.get(row["id"], {}).get(_metric_key(f))
            for f in RETRIEVAL_METRICS
        }
        metrics.update({n: chunk_metrics.get(row["id"], {}).get(n) for n in chunk_names})
        metrics.update(_judge_metrics(row))
        row["metrics"] = metrics
    saved = SavedRun(name, full_config, rows, summarise(rows, k))
    write_saved_run(path, saved)
    checkpoint.remove()
    return saved


def build_retriever(
    kind: str,
    chunks: Sequence[Chunk],
    *,
    golden: GoldenSet | None = None,
    run_file: str | Path | None = None,
    embedding_model: str | None = None,
    qdrant_url: str | None = None,
) -> Retriever:
    """The retriever named by ``kind`` (or a precomputed run when ``run_file`` is given)."""
    if run_file is not None:
        if golden is None:
            raise InputError("run_file: a golden set is needed to map questions to run ids")
        rankings = read_run_file(run_file)
        return PrecomputedRetriever(
            rankings, {q.question: q.id for q in golden}, chunks, name=str(run_file)
        )
    if kind == "bm25":
        return BM25Retriever(chunks)
    if kind in ("dense", "qdrant"):
        if not embedding_model:
            raise InputError(
                f"retriever: {kind!r} needs an embedding model; pass --embedding-model PATH"
            )
        if kind == "dense":
            return DenseRetriever(chunks, embedding_model)
        return QdrantRetriever(chunks, embedding_model, url=qdrant_url)
    raise InputError(f"retriever: expected one of {', '.join(RETRIEVERS)}, found {kind!r}")


def build_generator(kind: str, chunks: Sequence[Chunk], *, seed: int = 0) -> Generator:
    """The generator named by ``kind``: the offline extractive reader or the LLM generator."""
    if kind == "extractive":
        return ExtractiveReader.fit(chunks)
    if kind == "openai":
        from ragaudit.pipeline import llm_generator  # the LLM teammate's module (extra "llm")

        factory: Any = llm_generator.make_generator
        generator: Generator = factory(seed=seed)
        return generator
    raise InputError(f"generator: expected one of {', '.join(GENERATORS)}, found {kind!r}")


def run_pipeline(
    corpus: str | Path,
    golden_path: str | Path,
    *,
    k: int = 5,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    chunker: str = "fixed",
    retriever: str = "bm25",
    generator: str = "extractive",
    run_file: str | Path | None = None,
    embedding_model: str | None = None,
    qdrant_url: str | None = None,
    name: str | None = None,
    out_dir: str | Path = "ragaudit-results",
    limit: int | None = None,
    seed: int = 0,
    chunk_labels: Qrels | None = None,
    record_latency: bool = True,
    on_row: RowCallback | None = None,
    on_start: Callable[[int], None] | None = None,
) -> SavedRun:
    """Load, chunk, index, and evaluate one configuration end to end (what ``ragaudit run`` does).

    Every input is validated before anything is written: ``k >= 1``, ``chunk_size >
    chunk_overlap``, a known chunker/retriever/generator, a readable UTF-8 corpus with at least
    one document, and a golden set whose sources name corpus documents.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "docs").mkdir()
    >>> _ = (root / "docs" / "leave.md").write_text("# Leave\\nStaff get 25 days of leave.")
    >>> _ = (root / "docs" / "it.md").write_text("# Laptops\\nLaptops are replaced every 3 years.")
    >>> _ = (root / "golden.yaml").write_text(
    ...     "- {id: q1, question: How many days of leave do staff get, answer: 25 days, "
    ...     "sources: [leave], keywords: [25 days]}")
    >>> saved = run_pipeline(root / "docs", root / "golden.yaml", k=1, out_dir=root / "out",
    ...                      record_latency=False)
    >>> saved.rows[0]["answer"], saved.rows[0]["metrics"]["hit@k"], saved.summary["n"]
    ('Staff get 25 days of leave [1].', 1.0, 1)
    """
    _check_positive("k", k)
    if limit is not None:
        _check_positive("limit", limit)
    if chunker not in CHUNKERS:
        raise InputError(f"chunker: expected one of {', '.join(CHUNKERS)}, found {chunker!r}")
    if generator not in GENERATORS:
        raise InputError(f"generator: expected one of {', '.join(GENERATORS)}, found {generator!r}")
    documents = load_corpus(corpus)
    chunks = chunk_documents(documents, chunk_size, chunk_overlap, chunker)
    golden = load_golden(golden_path, doc_ids={d.doc_id for d in documents})
    retriever_name = "run-file" if run_file is not None else retriever
    the_retriever = build_retriever(
        retriever,
        chunks,
        golden=golden,
        run_file=run_file,
        embedding_model=embedding_model,
        qdrant_url=qdrant_url,
    )
    the_generator = build_generator(generator, chunks, seed=seed)
    config = {
        "k": k,
        "chunk_size": chunk_size,
        "chunk_overlap": chunk_overlap,
        "chunker": chunker,
        "retriever": retriever_name,
        "generator": generator,
        "judges": "offline",
        "seed": seed,
        "corpus_sha256": corpus_sha256(documents),
        "golden_sha256": golden.sha256,
        "ragaudit_version": __version__,
    }
    if embedding_model and retriever in ("dense", "qdrant"):
        config["embedding_model"] = embedding_model
    if run_file is not None:
        config["run_file"] = Path(run_file).name
    if on_start is not None:
        on_start(len(golden) if limit is None else min(limit, len(golden)))
    return evaluate_configuration(
        golden,
        chunks,
        the_retriever,
        the_generator,
        config=config,
        name=name or default_name(k, chunk_size, chunker, retriever_name, generator),
        out_dir=out_dir,
        limit=limit,
        chunk_labels=chunk_labels,
        record_latency=record_latency,
        on_row=on_row,
    )
