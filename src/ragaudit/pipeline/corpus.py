"""Load a corpus: every ``.md`` / ``.txt`` file of a directory is one document; rebuild a saved
run's chunks from it (``funnel``, ``judge``, ``show``, ``report --corpus``).

The document id is the file stem (``05-beacon-fleet-software.md`` -> ``05-beacon-fleet-software``),
which is what a golden set's ``sources`` name.  Files are read in sorted order, so everything
built on the corpus (chunk ids, BM25 index, the corpus hash in a saved run) is deterministic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit._io import read_file_bytes
from ragaudit.data.chunks import Chunk, Document
from ragaudit.exceptions import InputError, unreadable
from ragaudit.pipeline.chunking import chunk_documents, chunk_offsets

__all__ = [
    "CORPUS_SUFFIXES",
    "CorpusChunks",
    "chunk_texts",
    "corpus_chunks",
    "corpus_sha256",
    "load_corpus",
    "run_chunks",
]

CORPUS_SUFFIXES: tuple[str, ...] = (".md", ".txt")


def load_corpus(directory: str | Path) -> list[Document]:
    """Read every ``.md`` and ``.txt`` file directly inside ``directory``.

    Parameters
    ----------
    directory : str or Path
        The corpus folder.  Sub-folders and other file types are ignored.

    Returns
    -------
    list of Document
        Sorted by file name.

    Raises
    ------
    InputError
        The directory does not exist, holds no ``.md``/``.txt`` file, a file is not valid
        UTF-8 or cannot be read (the message names the file), or two files share a stem.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "b-leave.md").write_text("# Leave\\nTwenty days.", encoding="utf-8")
    >>> _ = (folder / "a-travel.txt").write_text("Book trains.", encoding="utf-8")
    >>> [d.doc_id for d in load_corpus(folder)]
    ['a-travel', 'b-leave']
    """
    root = Path(directory)
    if not root.is_dir():
        raise InputError(f"{root}: expected a directory of .md/.txt files, found no such directory")
    files = sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in CORPUS_SUFFIXES)
    if not files:
        raise InputError(
            f"{root}: empty corpus: expected at least one .md or .txt file, found none"
        )
    documents: list[Document] = []
    seen: dict[str, Path] = {}
    for path in files:
        if path.stem in seen:
            raise InputError(
                f"{path}: document id {path.stem!r} is also used by {seen[path.stem].name}; "
                "document ids are file stems and must be unique"
            )
        seen[path.stem] = path
        if path.is_symlink() and not path.resolve().is_relative_to(root.resolve()):
            raise InputError(
                f"{path}: a symbolic link to {path.resolve()}, outside the corpus folder "
                f"{root}; copy the file into the corpus instead"
            )
        raw = read_file_bytes(path)  # a FIFO or a device among the documents: refused
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise unreadable(path, exc) from None
        documents.append(Document(path.stem, text, str(path)))
    return documents


def corpus_sha256(documents: Sequence[Document]) -> str:
    """A fingerprint of the corpus: sha256 over (doc id, text) pairs in doc-id order.

    .. math:: H = \\mathrm{sha256}\\big(\\Vert_{d}\\; id_d \\,\\|\\, 0
              \\,\\|\\, \\mathrm{sha256}(text_d)\\big)

    >>> corpus_sha256([Document("a", "x")]) == corpus_sha256([Document("a", "x", "/elsewhere")])
    True
    """
    digest = hashlib.sha256()
    for doc in sorted(documents, key=lambda d: d.doc_id):
        digest.update(doc.doc_id.encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(doc.text.encode("utf-8")).digest())
    return digest.hexdigest()


def run_chunks(corpus_dir: str | Path, config: Mapping[str, Any]) -> list[Chunk]:
    """The corpus chunked the way the run was; the corpus hash is checked when the run has one.

    Raises
    ------
    InputError
        The corpus is not the run's (hash differs), or the run does not record its chunking.
    """
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


def chunk_texts(corpus_dir: str | Path, config: Mapping[str, Any]) -> dict[str, str]:
    """``{chunk_id: text}`` of :func:`run_chunks`."""
    return {c.chunk_id: c.text for c in run_chunks(corpus_dir, config)}


@dataclass(frozen=True)
class CorpusChunks:
    """A corpus's chunks as ``ragaudit chunks`` lists them: each chunk, its ``(start, end)``
    character offsets in its document (end exclusive), and the chunking settings with the
    corpus hash (what a saved run records)."""

    chunks: list[Chunk]
    offsets: list[tuple[int, int]]
    settings: dict[str, Any]


def corpus_chunks(
    corpus_dir: str | Path, chunk_size: int = 800, chunk_overlap: int = 100, chunker: str = "fixed"
) -> CorpusChunks:
    """Chunk the corpus in ``corpus_dir`` as ``ragaudit run`` would with these settings.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.md").write_text("one two three four")
    >>> listing = corpus_chunks(folder)  # 18 characters: one chunk of 800
    >>> [c.text for c in listing.chunks], listing.offsets, listing.settings["chunk_size"]
    (['one two three four'], [(0, 18)], 800)
    """
    documents = load_corpus(corpus_dir)
    chunks = chunk_documents(documents, chunk_size, chunk_overlap, chunker)
    settings = {
        "chunker": chunker,
        "chunk_size": chunk_size,
        "chunk_overlap": chunk_overlap,
        "corpus_sha256": corpus_sha256(documents),
    }
    return CorpusChunks(chunks, chunk_offsets(documents, chunks), settings)
