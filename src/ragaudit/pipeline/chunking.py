"""Split documents into retrieval units ("chunks") with stable ids.

Two chunkers:

``fixed``
    Windows of at most ``chunk_size`` characters; consecutive windows share ``chunk_overlap``
    characters.  A window end is pulled back to the last whitespace in its second half so words
    are not cut, and a window start is pushed forward to the next word start.
``markdown``
    The document is first cut at markdown headers (lines starting with ``#``), one section per
    header, then each section longer than ``chunk_size`` is cut with the fixed chunker.  Chunks
    never straddle two sections.

Chunks get the stable ids of :func:`ragaudit.data.chunks.chunk_id`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence

from ragaudit._validate import check_int
from ragaudit.data.chunks import Chunk, Document, chunk_id
from ragaudit.exceptions import InputError

__all__ = [
    "CHUNKERS",
    "chunk_document",
    "chunk_documents",
    "chunk_offsets",
    "split_fixed",
    "split_markdown_sections",
]

CHUNKERS: tuple[str, ...] = ("fixed", "markdown")

_HEADER = re.compile(r"^#{1,6}\s", re.MULTILINE)


def _check_sizes(chunk_size: int, chunk_overlap: int) -> None:
    check_int(chunk_size, "chunk_size")
    check_int(chunk_overlap, "chunk_overlap", minimum=0)
    if chunk_size <= chunk_overlap:
        raise InputError(
            f"chunk_size: expected a value larger than chunk_overlap ({chunk_overlap}), "
            f"found {chunk_size}; lower --chunk-overlap or raise --chunk-size"
        )


def split_fixed(text: str, chunk_size: int, chunk_overlap: int) -> list[str]:
    """Cut ``text`` into windows <= ``chunk_size`` chars, overlapping by ``chunk_overlap``.

    Window ``i`` starts ``chunk_size - chunk_overlap`` characters (adjusted to word boundaries)
    after window ``i - 1``.  Empty windows are dropped.

    Examples
    --------
    >>> split_fixed("aaaa bbbb cccc dddd", chunk_size=10, chunk_overlap=5)
    ['aaaa bbbb', 'bbbb cccc', 'cccc dddd']
    >>> split_fixed("short", 100, 10)
    ['short']
    """
    _check_sizes(chunk_size, chunk_overlap)
    pieces: list[str] = []
    start, n = 0, len(text)
    while start < n:
        end = min(start + chunk_size, n)
        if end < n and not text[end].isspace():
            # Pull the end back to a word boundary, but never below half a window.
            half = start + chunk_size // 2
            cut = max(text.rfind(" ", half, end), text.rfind("\n", half, end))
            if cut > start:
                end = cut
        piece = text[start:end].strip()
        if piece:
            pieces.append(piece)
        if end >= n:
            break
        next_start = max(end - chunk_overlap, start + 1)
        # Start the next window at a word start: back to the start of the word we landed in
        # (a little more overlap), or forward if that would not advance past this window.
        back = next_start
        while back > start and not text[back - 1].isspace():
            back -= 1
        if back > start:
            next_start = back
        else:
            while next_start < end and not text[next_start - 1].isspace():
                next_start += 1
        start = next_start
    return pieces


def split_markdown_sections(text: str) -> list[str]:
    """Cut a markdown document at header lines; each section keeps its header line.

    >>> split_markdown_sections("intro\\n# A\\none\\n## B\\ntwo")
    ['intro\\n', '# A\\none\\n', '## B\\ntwo']
    """
    starts = [m.start() for m in _HEADER.finditer(text)]
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    bounds = [*starts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if text[a:b]]


def chunk_document(
    document: Document, chunk_size: int = 800, chunk_overlap: int = 100, chunker: str = "fixed"
) -> list[Chunk]:
    """Chunk one document (see the module docstring for the two modes).

    Examples
    --------
    >>> doc = Document("leave", "# Leave\\nTwenty days a year.\\n# Sick\\nTell your manager.")
    >>> [c.text for c in chunk_document(doc, 200, 20, "markdown")]
    ['# Leave\\nTwenty days a year.', '# Sick\\nTell your manager.']
    >>> [c.index for c in chunk_document(doc, 200, 20, "fixed")]
    [0]
    """
    _check_sizes(chunk_size, chunk_overlap)
    if chunker == "fixed":
        texts = split_fixed(document.text, chunk_size, chunk_overlap)
    elif chunker == "markdown":
        texts = [
            piece
            for section in split_markdown_sections(document.text)
            for piece in split_fixed(section, chunk_size, chunk_overlap)
        ]
    else:
        raise InputError(f"chunker: expected one of {', '.join(CHUNKERS)}, found {chunker!r}")
    return [
        Chunk(chunk_id(document.doc_id, i, text), document.doc_id, i, text)
        for i, text in enumerate(texts)
    ]


def chunk_documents(
    documents: Iterable[Document],
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    chunker: str = "fixed",
) -> list[Chunk]:
    """Chunk every document, in corpus order.

    Raises
    ------
    InputError
        ``chunk_size <= chunk_overlap``, a negative overlap, or an unknown chunker.

    Examples
    --------
    >>> docs = [Document("a", "one two three four"), Document("b", "five six")]
    >>> [(c.doc_id, c.index, c.text) for c in chunk_documents(docs, 10, 4)]
    [('a', 0, 'one two'), ('a', 1, 'two three'), ('a', 2, 'three four'), ('b', 0, 'five six')]
    """
    _check_sizes(chunk_size, chunk_overlap)
    return [c for doc in documents for c in chunk_document(doc, chunk_size, chunk_overlap, chunker)]


def chunk_offsets(documents: Iterable[Document], chunks: Sequence[Chunk]) -> list[tuple[int, int]]:
    """``(start, end)`` of each chunk in its document's text (character positions, end
    exclusive), so that ``document.text[start:end] == chunk.text``.

    Each chunk is searched from just after the previous chunk of the same document (chunks
    advance through their document), else from the start.

    Examples
    --------
    >>> docs = [Document("a", "one two three four")]
    >>> chunk_offsets(docs, chunk_documents(docs, 10, 4))
    [(0, 7), (4, 13), (8, 18)]
    """
    texts = {d.doc_id: d.text for d in documents}
    last: dict[str, int] = {}
    out: list[tuple[int, int]] = []
    for chunk in chunks:
        text = texts.get(chunk.doc_id)
        if text is None:
            raise InputError(f"chunk {chunk.chunk_id!r}: document {chunk.doc_id!r} is not given")
        start = text.find(chunk.text, last.get(chunk.doc_id, -1) + 1)
        if start < 0:
            start = text.find(chunk.text)
        if start < 0:
            raise InputError(
                f"chunk {chunk.chunk_id!r}: its text is not in document {chunk.doc_id!r}"
            )
        last[chunk.doc_id] = start
        out.append((start, start + len(chunk.text)))
    return out
