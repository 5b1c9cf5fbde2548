"""Rebuild a saved run's chunks from its corpus (``funnel``, ``judge`` and ``show --corpus``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ragaudit.exceptions import InputError

if TYPE_CHECKING:
    from ragaudit.data.chunks import Chunk

__all__ = ["chunk_texts", "run_chunks"]


def run_chunks(corpus_dir: str, config: Mapping[str, Any]) -> list[Chunk]:
    """The corpus chunked the way the run was; the corpus hash is checked when the run has one.

    Raises
    ------
    InputError
        The corpus is not the run's (hash differs), or the run does not record its chunking.
    """
    from ragaudit.pipeline.chunking import chunk_documents
    from ragaudit.pipeline.corpus import corpus_sha256, load_corpus

    documents = load_corpus(corpus_dir)
    expected = config.get("corpus_sha256")
    found = corpus_sha256(documents)
    if expected and found != expected:
        raise InputError(
            f"--corpus {corpus_dir}: expected the run's corpus (corpus_sha256 "
            f"{str(expected)[:12]}), found another one ({found[:12]})"
        )
    try:
        size, overlap = int(config["chunk_size"]), int(config["chunk_overlap"])
    except (KeyError, TypeError, ValueError):
        raise InputError(
            "--corpus: the run does not record chunk_size and chunk_overlap, so its chunks "
            "cannot be rebuilt"
        ) from None
    return chunk_documents(documents, size, overlap, str(config.get("chunker") or "fixed"))


def chunk_texts(corpus_dir: str, config: Mapping[str, Any]) -> dict[str, str]:
    """``{chunk_id: text}`` of :func:`run_chunks`."""
    return {c.chunk_id: c.text for c in run_chunks(corpus_dir, config)}
