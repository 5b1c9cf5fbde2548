"""The report of ``ragaudit chunks``: one row per chunk."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.data.chunks import Chunk
from ragaudit.reports.report import Report, Section, Table, Text

__all__ = ["chunks_report", "first_words"]


def first_words(text: str, n: int) -> str:
    """The first ``n`` words of ``text`` on one line (``...`` when there are more).

    >>> first_words("# Leave\\nStaff get 25 days.", 3)
    '# Leave Staff ...'
    """
    words = text.split()
    return " ".join(words[:n]) + (" ..." if len(words) > n else "")


def chunks_report(
    chunks: Sequence[Chunk],
    offsets: Sequence[tuple[int, int]],
    settings: Mapping[str, Any],
    *,
    words: int = 8,
) -> Report:
    """``chunk_id | doc_id | index | start | end | first words``, one row per chunk."""
    rows = tuple(
        (c.chunk_id, c.doc_id, str(c.index), str(a), str(b), first_words(c.text, words))
        for c, (a, b) in zip(chunks, offsets, strict=True)
    )
    values = tuple(
        (c.chunk_id, c.doc_id, c.index, a, b, first_words(c.text, words))
        for c, (a, b) in zip(chunks, offsets, strict=True)
    )
    n_docs = len({c.doc_id for c in chunks})
    head = Text(
        (
            f"{len(chunks)} chunks of {n_docs} documents (chunker {settings['chunker']}, "
            f"chunk_size {settings['chunk_size']}, chunk_overlap {settings['chunk_overlap']}, "
            f"corpus {str(settings['corpus_sha256'])[:12]})",
        ),
        only=("table", "markdown", "html"),
    )
    table = Table(
        ("chunk_id", "doc_id", "index", "start", "end", "first words"),
        rows,
        align="llrrrl",
        values=values,
    )
    data = {
        **settings,
        "chunks": [
            {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "index": c.index, "start": a, "end": b,
             "first_words": first_words(c.text, words)}
            for c, (a, b) in zip(chunks, offsets, strict=True)
        ],
    }  # fmt: skip
    return Report("", (Section("", (head, table)),), data=data)
