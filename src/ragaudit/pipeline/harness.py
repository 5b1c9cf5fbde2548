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

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from ragaudit.llm.config import LLMConfig

__all__ = [
    "JUDGE_MODES",
    "RETRIEVAL_METRICS",
    "build_generator",
    "build_retriever",
    "combine_llm_costs",
    "count_judge_errors",
    "default_name",
    "evaluate_configuration",
    "failed_judges",
    "judge_with_llm",
    "plan_llm_run",
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


#: Row metric -> the LLM judge that overwrites its verdict (``judges.llm`` writes ``correct``).
_DECIDED_BY: dict[str, str] = {"correct": "correctness"}


def failed_judges(judges: Mapping[str, Any]) -> set[str]:
    """Names of the judges that failed on a row (``judge_errors`` keys, else parsed from the
    ``"judge: reason; ..."`` string of ``judge_error``; ``"?"`` when no name can be read).

    >>> sorted(failed_judges({"judge_errors": {"sufficiency": "bad JSON"}}))
    ['sufficiency']
    >>> sorted(failed_judges({"judge_error": "citations: timeout; relevance: 500"}))
    ['citations', 'relevance']
    >>> failed_judges({"keyword_hit": 1.0})
    set()
    """
    named = judges.get("judge_errors")
    if isinstance(named, Mapping) and named:
        return {str(name) for name in named}
    text = judges.get("judge_error")
    if not text:
        return set()
    names = {part.split(":", 1)[0].strip() for part in str(text).split(";") if ":" in part}
    return {n for n in names if n and " " not in n} or {"?"}


def _judge_metrics(row: Mapping[str, Any]) -> dict[str, float | None]:
    judges = row.get("judges") or {}
    if row.get("error"):
        return dict.fromkeys(_JUDGE_METRICS)

    def number(value: Any) -> float | None:
        return None if value is None else float(value)

    metrics = {
        "answered": 0.0 if judges.get("abstained") else 1.0,
        "correct": number(judges.get("correct")),
        "keyword_hit": number(judges.get("keyword_hit")),
        "evidence_in_context": number(judges.get("evidence_in_context")),
    }
    # A failed judge nulls only the metrics it decides; the other judges' verdicts stand.
    failed = failed_judges(judges)
    for metric, judge in _DECIDED_BY.items():
        if judge in failed:
            metrics[metric] = None
    return metrics


def count_judge_errors(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Judge failures per judge over the rows whose generation succeeded.

    >>> count_judge_errors([{"judges": {"judge_errors": {"sufficiency": "x"}}},
    ...                     {"judges": {"keyword_hit": 1.0}}])
    {'sufficiency': 1}
    """
    counts: dict[str, int] = {}
    for row in rows:
        if row.get("error"):
            continue
        for judge in failed_judges(row.get("judges") or {}):
            counts[judge] = counts.get(judge, 0) + 1
    return dict(sorted(counts.items()))


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
    judge_errors = count_judge_errors(rows)
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
        "judge_errors": judge_errors,
        "n_judge_errors": sum(judge_errors.values()),
    }


@dataclass
class _Retrieved:
    question: GoldenQuestion
    retrieved: list[dict[str, Any]]
    context: list[Chunk]
    retrieve_ms: float


def _retrieve(
    question: GoldenQuestion,
    retriever: Retriever,
    chunks_by_id: Mapping[str, Chunk],
    k: int,
    depth: int,
) -> _Retrieved:
    start = time.perf_counter()
    hits = retriever.retrieve(question.question, depth)
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
    return _Retrieved(question, retrieved, context, elapsed)


def _answer(
    found: _Retrieved,
    generator: Generator,
    *,
    chunk_labels: Qrels | None,
    record_latency: bool,
) -> dict[str, Any]:
    """Generate, judge offline, and assemble the row of one retrieved question."""
    question, context = found.question, found.context
    start = time.perf_counter()
    generation = generator.generate(question.question, context)
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
        )
    latency = None
    if record_latency:
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
        "answer": generation.answer,
        "abstained": generation.abstained,
        "citations": list(generation.citations),
        "judges": judges,
        "latency_ms": latency,
        "error": generation.error,
    }
    if generation.usage is not None:
        # Whether a reply came from the cache differs between runs; the file must not.
        row["usage"] = {k: v for k, v in generation.usage.items() if k != "cached"}
    return row


def _concurrent_map(generator: Generator) -> Callable[..., list[Any]] | None:
    """The bounded, order-keeping ``map`` of a model-backed generator's client, if any.

    ``LLMGenerator.generate_many`` runs the same pool but reports only counts; going through
    ``client.map`` with our own per-question function lets every finished row reach the
    checkpoint the moment it completes, so an interrupted run loses nothing.
    """
    if not hasattr(generator, "generate_many"):
        return None
    mapper = getattr(getattr(generator, "client", None), "map", None)
    return mapper if callable(mapper) else None


def _llm_cost_of_rows(rows: Sequence[Mapping[str, Any]], generator: Generator) -> dict[str, Any]:
    """Calls, tokens and cost of the generator, from the rows' ``usage`` (cached replies
    included), so the figure is the same on a rerun and after a resume."""
    client = getattr(generator, "client", None)
    used = [r["usage"] for r in rows if isinstance(r.get("usage"), Mapping)]
    input_tokens = sum(int(u.get("input_tokens") or 0) for u in used)
    output_tokens = sum(int(u.get("output_tokens") or 0) for u in used)
    model = str(getattr(client, "model", "") or (used[0].get("model") if used else "") or "")
    prices = getattr(client, "prices", None)
    return {
        "endpoint": getattr(client, "endpoint", None),
        "model": model,
        "calls": len(used),
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": None if prices is None else prices.cost(model, input_tokens, output_tokens),
        "price_table": (
            prices.source if prices is not None and prices.lookup(model) is not None else None
        ),
    }


def combine_llm_costs(by_stage: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Totals over LLM stages (``generator``, ``judges``) plus the per-stage figures.

    The cost is ``None`` (unknown) as soon as one stage's cost is unknown: an unpriced model
    is never counted as free.

    >>> combine_llm_costs({"generator": {"model": "m", "calls": 2, "input_tokens": 10,
    ...     "output_tokens": 4, "cost_usd": 0.5}, "judges": {"model": "m", "calls": 3,
    ...     "input_tokens": 30, "output_tokens": 6, "cost_usd": 0.25}})["cost_usd"]
    0.75
    """
    stages = {name: dict(cost) for name, cost in by_stage.items()}
    costs = [c.get("cost_usd") for c in stages.values()]
    first = next(iter(stages.values()), {})
    return {
        "endpoint": first.get("endpoint"),
        "model": first.get("model"),
        "calls": sum(int(c.get("calls") or 0) for c in stages.values()),
        "input_tokens": sum(int(c.get("input_tokens") or 0) for c in stages.values()),
        "output_tokens": sum(int(c.get("output_tokens") or 0) for c in stages.values()),
        "cost_usd": (
            None
            if any(c is None for c in costs)
            else round(math.fsum(c for c in costs if c is not None), 10)
        ),
        "by_stage": stages,
    }


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
    by_id: dict[str, dict[str, Any]] = {}
    for question in questions:
        if question.id in done:
            by_id[question.id] = done[question.id]
            if on_row is not None:
                on_row(done[question.id])
    pending = [q for q in questions if q.id not in by_id]
    mapper = _concurrent_map(generator)
    if mapper is None:
        for question in pending:
            found = _retrieve(question, retriever, chunks_by_id, k, depth)
            row = _answer(
                found, generator, chunk_labels=chunk_labels, record_latency=record_latency
            )
            checkpoint.append(row)
            by_id[question.id] = row
            if on_row is not None:
                on_row(row)
    elif pending:
        # Retrieval stays in this thread (local indexes need not be thread-safe); the model
        # calls run concurrently and each row is checkpointed as soon as it is finished.
        found_all = [_retrieve(q, retriever, chunks_by_id, k, depth) for q in pending]
        lock = threading.Lock()

        def answer_one(found: _Retrieved) -> None:
            row = _answer(
                found, generator, chunk_labels=chunk_labels, record_latency=record_latency
            )
            with lock:
                checkpoint.append(row)
                by_id[found.question.id] = row
                if on_row is not None:
                    on_row(row)

        mapper(answer_one, found_all)
    rows = [by_id[q.id] for q in questions]
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
    summary = summarise(rows, k)
    if any(isinstance(row.get("usage"), Mapping) for row in rows):
        summary["llm"] = combine_llm_costs({"generator": _llm_cost_of_rows(rows, generator)})
    saved = SavedRun(name, full_config, rows, summary)
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


def build_generator(
    kind: str,
    chunks: Sequence[Chunk],
    *,
    seed: int = 0,
    llm_config: LLMConfig | None = None,
) -> Generator:
    """The generator named by ``kind``: the offline extractive reader or the LLM generator.

    For ``"openai"`` the endpoint comes from ``llm_config`` (whose own ``seed`` is then sent
    with every request; ``ragaudit run`` sets it to ``--seed`` unless ``--llm-seed`` is given),
    or from the environment with ``seed`` when no config is given.
    """
    if kind == "extractive":
        return ExtractiveReader.fit(chunks)
    if kind == "openai":
        from ragaudit.pipeline import llm_generator  # extra "llm"; keeps `demo` free of openai

        generator: Generator = llm_generator.make_generator(
            seed=seed if llm_config is None else None, config=llm_config
        )
        return generator
    raise InputError(f"generator: expected one of {', '.join(GENERATORS)}, found {kind!r}")


#: ``ragaudit run --judges``: the offline judges alone, or the LLM judges on top of them.
JUDGE_MODES: tuple[str, ...] = ("offline", "llm")


@dataclass
class _Prepared:
    documents: list[Any]
    chunks: list[Chunk]
    golden: GoldenSet
    retriever: Retriever
    retriever_name: str
    config: dict[str, Any]


def _prepare(
    corpus: str | Path,
    golden_path: str | Path,
    *,
    k: int,
    chunk_size: int,
    chunk_overlap: int,
    chunker: str,
    retriever: str,
    generator: str,
    judges: str,
    run_file: str | Path | None,
    embedding_model: str | None,
    qdrant_url: str | None,
    limit: int | None,
    seed: int,
) -> _Prepared:
    _check_positive("k", k)
    if limit is not None:
        _check_positive("limit", limit)
    if chunker not in CHUNKERS:
        raise InputError(f"chunker: expected one of {', '.join(CHUNKERS)}, found {chunker!r}")
    if generator not in GENERATORS:
        raise InputError(f"generator: expected one of {', '.join(GENERATORS)}, found {generator!r}")
    if judges not in JUDGE_MODES:
        raise InputError(f"judges: expected one of {', '.join(JUDGE_MODES)}, found {judges!r}")
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
    config: dict[str, Any] = {
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
    return _Prepared(list(documents), list(chunks), golden, the_retriever, retriever_name, config)


def _generator_identity(generator: Generator) -> dict[str, Any]:
    """What decides an LLM generator's answers; part of the config, so a checkpoint made with
    another model or temperature is never resumed into this run.  Never the key."""
    client: Any = getattr(generator, "client", None)
    cfg = client.config
    return {
        "model": client.model,
        "endpoint": client.endpoint,
        "prompt_version": getattr(generator, "prompt_version", None),
        "temperature": cfg.temperature,
        "seed": cfg.seed,
        "max_tokens": cfg.max_tokens,
    }


def judge_with_llm(
    saved: SavedRun,
    chunks: Sequence[Chunk],
    llm_config: LLMConfig,
    *,
    repeats: int = 1,
    judge_names: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Add the LLM judges' verdicts to a saved run, recompute its summary, rewrite it.

    Each answered row gets the verdicts of :class:`ragaudit.judges.llm.LLMJudges` merged into
    ``judges`` (offline verdicts of other names are kept) and the judge metrics in ``metrics``;
    a judge that fails records ``judge_error`` and nulls only its own metrics.  The summary is
    recomputed with :func:`summarise` (so ``n_scored`` and ``metrics_answerable`` cover the new
    metrics), ``judge_errors`` counts failures per judge, and ``llm`` adds the judges' calls,
    tokens and cost (cached replies included, so a rerun records the same figure) to those of
    the generator.  The file at ``saved.path`` is replaced atomically.

    Parameters
    ----------
    saved : SavedRun
        Written by :func:`evaluate_configuration` (``path`` set).
    chunks : sequence of Chunk
        The chunks the run was made with (context texts are rebuilt from ``context_ids``).
    llm_config : LLMConfig
    repeats : int, default 1
        Ask each judge ``repeats`` times and record the agreement.
    judge_names : sequence of str, optional
        Default: every judge of :data:`ragaudit.judges.llm.JUDGE_NAMES`.
    progress : callable, optional
        ``progress(done, total)`` over (question, judge, repeat) tasks.
    usage : dict, optional
        Receives ``usage["judges"]``: what this call sent (HTTP requests, cache hits, tokens).

    Returns
    -------
    dict
        :func:`ragaudit.judges.llm.summarize_judges` of the judged rows.
    """
    from ragaudit.judges.llm import JUDGE_NAMES, LLMJudges, judge_saved_run
    from ragaudit.llm.client import LLMClient

    if saved.path is None:
        raise InputError("judge_with_llm: the saved run has no path to write to")
    texts = {c.chunk_id: c.text for c in chunks}
    previous = dict(saved.summary.get("llm") or {}).get("by_stage") or {}
    with LLMClient(llm_config, stage="the LLM judges") as client:
        judges = LLMJudges(client, tuple(judge_names or JUDGE_NAMES), repeats=repeats)
        report = judge_saved_run(saved, texts, judges, progress)
        judge_cost = client.run_cost()
        if usage is not None:
            usage["judges"] = client.usage_summary()
    summary = summarise(saved.rows, int(saved.config["k"]))
    stages = {name: cost for name, cost in previous.items() if name != "judges"}
    stages["judges"] = judge_cost
    summary["llm"] = combine_llm_costs(stages)
    saved.summary = summary
    write_saved_run(saved.path, saved)
    return report


def plan_llm_run(
    corpus: str | Path,
    golden_path: str | Path,
    *,
    k: int = 5,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    chunker: str = "fixed",
    retriever: str = "bm25",
    generator: str = "extractive",
    judges: str = "offline",
    llm_config: LLMConfig | None = None,
    judge_repeats: int = 1,
    run_file: str | Path | None = None,
    embedding_model: str | None = None,
    qdrant_url: str | None = None,
    limit: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Dry run of :func:`run_pipeline`: the LLM calls, tokens and cost it would need.

    Nothing is sent and nothing is written.  Retrieval runs for real (it is local), so the
    generator's prompts are exact; input tokens are estimated as ``ceil(chars / 4)`` and the
    output as each prompt's expected length, and calls already in the cache count as free.
    The judges need answers: a cached answer (or the extractive reader's) is used as is; an
    answer not generated yet is assumed to be a non-refusal with one citation, of the
    generator's expected length, which bounds the judges' calls from above.

    Returns
    -------
    dict
        ``{"n_questions", "generator": estimate or None, "judges": estimate or None,
        "calls", "cached_calls", "estimated_input_tokens", "estimated_output_tokens",
        "estimated_cost_usd"}`` (estimates as :meth:`DryRunEstimate.to_dict`; cost ``None``
        when a model is not in the price table).
    """
    from ragaudit.judges.prompts import GENERATOR
    from ragaudit.llm.client import LLMClient

    prepared = _prepare(
        corpus, golden_path, k=k, chunk_size=chunk_size, chunk_overlap=chunk_overlap,
        chunker=chunker, retriever=retriever, generator=generator, judges=judges,
        run_file=run_file, embedding_model=embedding_model, qdrant_url=qdrant_url,
        limit=limit, seed=seed,
    )  # fmt: skip
    questions = list(prepared.golden)[:limit] if limit is not None else list(prepared.golden)
    chunks_by_id = {c.chunk_id: c for c in prepared.chunks}
    depth = max(20, k)
    found = [_retrieve(q, prepared.retriever, chunks_by_id, k, depth) for q in questions]
    pairs = [(f.question.question, f.context) for f in found]
    estimates: dict[str, Any] = {"generator": None, "judges": None}
    answers: list[str]
    placeholder = "x" * (4 * GENERATOR.expected_output_tokens) + " [1]."
    the_generator = build_generator(generator, prepared.chunks, seed=seed, llm_config=llm_config)
    try:
        if generator == "openai":
            gen: Any = the_generator
            estimates["generator"] = gen.dry_run(pairs).to_dict()
            answers = []
            for question, context in pairs:
                cached = None
                if gen.client.cache is not None:
                    key = gen.client.key_for(gen.messages(question, context), gen.prompt_version)
                    cached = gen.client.cache.get(key)
                answers.append(placeholder if cached is None else cached.text.strip())
        else:
            answers = [the_generator.generate(q, ctx).answer for q, ctx in pairs]
    finally:
        close = getattr(the_generator, "close", None)
        if callable(close):
            close()
    if judges == "llm":
        if llm_config is None:
            raise InputError("judges 'llm': an LLM config is needed")
        from ragaudit.judges.llm import LLMJudges, items_from_rows

        rows = [
            {
                "id": f.question.id,
                "question": f.question.question,
                "answer": answer,
                "context_ids": [c.chunk_id for c in f.context],
                "reference_answer": f.question.answer,
                "answerable": f.question.answerable,
            }
            for f, answer in zip(found, answers, strict=True)
        ]
        _, items = items_from_rows(rows, {c.chunk_id: c.text for c in prepared.chunks})
        with LLMClient(llm_config, stage="the LLM judges") as client:
            estimates["judges"] = LLMJudges(client, repeats=judge_repeats).dry_run(items).to_dict()
    parts = [e for e in estimates.values() if e is not None]
    costs = [e["estimated_cost_usd"] for e in parts]
    return {
        "n_questions": len(questions),
        **estimates,
        "calls": sum(e["calls"] for e in parts),
        "cached_calls": sum(e["cached_calls"] for e in parts),
        "estimated_input_tokens": sum(e["estimated_input_tokens"] for e in parts),
        "estimated_output_tokens": sum(e["estimated_output_tokens"] for e in parts),
        "estimated_cost_usd": None if any(c is None for c in costs) else math.fsum(costs),
    }


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
    judges: str = "offline",
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
    llm_config: LLMConfig | None = None,
    judge_repeats: int = 1,
    on_judge_progress: Callable[[int, int], None] | None = None,
    llm_usage: dict[str, Any] | None = None,
) -> SavedRun:
    """Load, chunk, index, and evaluate one configuration end to end (what ``ragaudit run`` does).

    Every input is validated before anything is written: ``k >= 1``, ``chunk_size >
    chunk_overlap``, a known chunker/retriever/generator, a readable UTF-8 corpus with at least
    one document, and a golden set whose sources name corpus documents.

    ``generator="openai"`` answers with the LLM generator (concurrently, up to the config's
    ``max_concurrency``; each finished row is checkpointed at once).  ``judges="llm"`` then adds
    the LLM judges with :func:`judge_with_llm` (``judge_repeats`` times each).  Both use
    ``llm_config`` (or the environment when it is ``None``); the run's ``summary.llm`` holds
    their calls, tokens and cost, and ``llm_usage`` (if given) receives what this invocation
    actually sent, per stage.

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
    prepared = _prepare(
        corpus, golden_path, k=k, chunk_size=chunk_size, chunk_overlap=chunk_overlap,
        chunker=chunker, retriever=retriever, generator=generator, judges=judges,
        run_file=run_file, embedding_model=embedding_model, qdrant_url=qdrant_url,
        limit=limit, seed=seed,
    )  # fmt: skip
    if judges == "llm":
        from ragaudit.llm.config import LLMConfig as _Config

        judge_config = llm_config if llm_config is not None else _Config.from_env_and_flags()
        # Fail before any answer is generated, not after the whole run.
        judge_config.require_endpoint("the LLM judges")
        if isinstance(judge_repeats, bool) or judge_repeats < 1:
            raise InputError(f"judge_repeats: expected an integer >= 1, found {judge_repeats!r}")
    the_generator = build_generator(generator, prepared.chunks, seed=seed, llm_config=llm_config)
    config = prepared.config
    try:
        if generator == "openai":
            config["llm_generator"] = _generator_identity(the_generator)
        if on_start is not None:
            n_golden = len(prepared.golden)
            on_start(n_golden if limit is None else min(limit, n_golden))
        saved = evaluate_configuration(
            prepared.golden,
            prepared.chunks,
            prepared.retriever,
            the_generator,
            config=config,
            name=name or default_name(k, chunk_size, chunker, prepared.retriever_name, generator),
            out_dir=out_dir,
            limit=limit,
            chunk_labels=chunk_labels,
            record_latency=record_latency,
            on_row=on_row,
        )
    finally:
        if llm_usage is not None and generator == "openai":
            llm_usage["generator"] = the_generator.client.usage_summary()  # type: ignore[attr-defined]
        close = getattr(the_generator, "close", None)
        if callable(close):
            close()
    if judges == "llm":
        judge_with_llm(
            saved,
            prepared.chunks,
            judge_config,
            repeats=judge_repeats,
            progress=on_judge_progress,
            usage=llm_usage,
        )
    return saved
