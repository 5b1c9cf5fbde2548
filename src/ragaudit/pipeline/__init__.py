"""Pipeline pieces, each replaceable: corpus, chunking, retrievers, generators, the harness.

Names are imported lazily from their modules, so importing one piece does not load the
harness (or its retrievers' heavy dependencies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit._lazy import lazy_package

if TYPE_CHECKING:
    from ragaudit.pipeline.chunking import chunk_documents
    from ragaudit.pipeline.config import RunConfig
    from ragaudit.pipeline.corpus import corpus_sha256, load_corpus
    from ragaudit.pipeline.generators import REFUSAL, ExtractiveReader, Generation, Generator
    from ragaudit.pipeline.harness import evaluate_configuration, run_pipeline
    from ragaudit.pipeline.retrievers import (
        BM25Retriever,
        CallableRetriever,
        DenseRetriever,
        PrecomputedRetriever,
        QdrantRetriever,
        Retriever,
    )

_WHERE = {
    "chunk_documents": "chunking", "corpus_sha256": "corpus",
    "load_corpus": "corpus", "REFUSAL": "generators", "ExtractiveReader": "generators",
    "Generation": "generators", "Generator": "generators",
    "RunConfig": "config", "evaluate_configuration": "harness", "run_pipeline": "harness",
    "BM25Retriever": "retrievers", "CallableRetriever": "retrievers",
    "DenseRetriever": "retrievers", "PrecomputedRetriever": "retrievers",
    "QdrantRetriever": "retrievers", "Retriever": "retrievers",
}  # fmt: skip

__all__ = [
    "REFUSAL",
    "BM25Retriever",
    "CallableRetriever",
    "DenseRetriever",
    "ExtractiveReader",
    "Generation",
    "Generator",
    "PrecomputedRetriever",
    "QdrantRetriever",
    "Retriever",
    "RunConfig",
    "chunk_documents",
    "corpus_sha256",
    "evaluate_configuration",
    "load_corpus",
    "run_pipeline",
]

lazy_package(__name__, _WHERE)
