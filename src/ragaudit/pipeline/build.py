"""Build a run's pieces from its :class:`RunConfig`: corpus, chunks, golden set, retriever,
generator, and the configuration stored in the saved run."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragaudit._version import version
from ragaudit.data.chunks import Chunk
from ragaudit.data.context_match import ContextIndex
from ragaudit.data.golden import GoldenQuestion, GoldenSet, load_golden, sources_from_contexts
from ragaudit.exceptions import InputError
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.config import RETRIEVERS, RunConfig
from ragaudit.pipeline.corpus import corpus_sha256, load_corpus
from ragaudit.pipeline.generators import GENERATORS, ExtractiveReader, Generator
from ragaudit.pipeline.retrievers import (
    BM25Retriever,
    DenseRetriever,
    PrecomputedRetriever,
    QdrantRetriever,
    Retriever,
    read_run_file,
)

if TYPE_CHECKING:
    from ragaudit.llm.config import LLMConfig

__all__ = ["Prepared", "build_generator", "build_retriever", "golden_for_corpus", "prepare"]


def build_retriever(
    kind: str,
    chunks: Sequence[Chunk],
    *,
    golden: Iterable[GoldenQuestion] | None = None,
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
    temperature: float = 0.0,
) -> Generator:
    """The generator named by ``kind``: the offline extractive reader or the LLM generator.

    For ``"openai"`` the endpoint comes from ``llm_config`` (whose own ``seed`` is then sent
    with every request; ``ragaudit run`` sets it to ``--seed`` unless ``--llm-seed`` is given),
    or from the environment with ``seed`` when no config is given.  ``temperature`` is the
    extractive reader's (0: deterministic).
    """
    if kind == "extractive":
        return ExtractiveReader.fit(chunks, temperature=temperature)
    if kind == "openai":
        from ragaudit.pipeline import llm_generator  # extra "llm"; keeps `demo` free of openai

        generator: Generator = llm_generator.make_generator(
            seed=seed if llm_config is None else None, config=llm_config
        )
        return generator
    raise InputError(f"generator: expected one of {', '.join(GENERATORS)}, found {kind!r}")


def golden_for_corpus(
    path: str | Path,
    documents: Sequence[Any],
    chunks: Sequence[Chunk],
    *,
    columns: Mapping[str, str] | None = None,
    require_sources: bool = True,
) -> GoldenSet:
    """Load a golden set against a corpus: sources must name its documents, and questions
    given only reference contexts get the documents of the chunks those texts match."""
    golden = load_golden(
        path,
        doc_ids={d.doc_id for d in documents},
        columns=columns,
        require_sources=require_sources,
    )
    if any(q.reference_contexts and not q.sources for q in golden):
        golden = sources_from_contexts(golden, ContextIndex(chunks))
    return golden


@dataclass
class Prepared:
    """A run's loaded inputs, its retriever, and the ``config`` its saved run will store."""

    documents: list[Any]
    chunks: list[Chunk]
    golden: GoldenSet
    retriever: Retriever
    config: dict[str, Any]


def prepare(run: RunConfig) -> Prepared:
    """Load the corpus and golden set, chunk, and build the retriever of ``run``.

    Raises :class:`InputError` before anything is written when an input is unusable.
    """
    documents = load_corpus(run.corpus)
    chunks = chunk_documents(documents, run.chunk_size, run.chunk_overlap, run.chunker)
    golden = golden_for_corpus(run.golden, documents, chunks, columns=run.golden_columns)
    the_retriever = build_retriever(
        run.retriever,
        chunks,
        # the questions this run asks (a run file is checked against them: --limit asks fewer)
        golden=list(golden)[: run.limit] if run.limit is not None else golden,
        run_file=run.run_file,
        embedding_model=run.embedding_model,
        qdrant_url=run.qdrant_url,
    )
    config: dict[str, Any] = {
        "k": run.k,
        "chunk_size": run.chunk_size,
        "chunk_overlap": run.chunk_overlap,
        "chunker": run.chunker,
        "retriever": run.retriever_name,
        "generator": run.generator,
        "judges": "offline",
        "seed": run.seed,
        "corpus_sha256": corpus_sha256(documents),
        "golden_sha256": golden.sha256,
        "ragaudit_version": version(),
    }
    if run.reader_temperature:  # absent at 0, so a deterministic run's file is unchanged
        config["reader_temperature"] = float(run.reader_temperature)
    if run.embedding_model and run.retriever in ("dense", "qdrant"):
        config["embedding_model"] = run.embedding_model
    if run.run_file is not None:
        config["run_file"] = Path(run.run_file).name
        rule = getattr(the_retriever, "expansion_rule", None)
        if rule:
            config["run_file_expansion"] = rule
    return Prepared(list(documents), list(chunks), golden, the_retriever, config)
