"""Corpus documents and the chunks cut from them, with their stable ids.

``Document`` and ``Chunk`` are data: the pipeline makes them (:mod:`ragaudit.pipeline.corpus`,
:mod:`ragaudit.pipeline.chunking`), and labels, judges and reports read them.

Chunk ids are ``uuid5(NAMESPACE, f"{doc_id}\\x1f{index}\\x1f{sha256(text)}")``: the same text at
the same position of the same document always gets the same id, on every machine, and any edit
to a chunk's text changes its id (so stale chunk labels cannot silently match).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CHUNK_NAMESPACE", "Chunk", "Document", "chunk_id", "chunk_to_doc"]

CHUNK_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://ragaudit.invalid/chunk")


@dataclass(frozen=True)
class Document:
    """One corpus document.

    Attributes
    ----------
    doc_id : str
        The file stem; what golden-set ``sources`` refer to.
    text : str
        The file's full text (UTF-8).
    path : str or None
        Where it was read from (None for documents built in memory).
    """

    doc_id: str
    text: str
    path: str | None = None


@dataclass(frozen=True)
class Chunk:
    """A retrieval unit.

    Attributes
    ----------
    chunk_id : str
        Stable id (see :func:`chunk_id`).
    doc_id : str
        The document it was cut from.
    index : int
        0-based position within its document.
    text : str
        The chunk's text (a substring of the document, stripped).
    """

    chunk_id: str
    doc_id: str
    index: int
    text: str


def chunk_id(doc_id: str, index: int, text: str) -> str:
    """The stable id of a chunk: ``uuid5`` of (doc id, chunk index, sha256 of the text).

    >>> chunk_id("leave", 0, "Twenty days.") == chunk_id("leave", 0, "Twenty days.")
    True
    >>> chunk_id("leave", 0, "Twenty days.") == chunk_id("leave", 1, "Twenty days.")
    False
    """
    text_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"{doc_id}\x1f{index}\x1f{text_hash}"))


def chunk_to_doc(chunks: Sequence[Chunk]) -> dict[str, str]:
    """The chunk -> document map used to lift chunk runs to document runs.

    >>> chunk_to_doc([Chunk("c1", "A", 0, "x"), Chunk("c2", "B", 0, "y")])
    {'c1': 'A', 'c2': 'B'}
    """
    return {c.chunk_id: c.doc_id for c in chunks}
