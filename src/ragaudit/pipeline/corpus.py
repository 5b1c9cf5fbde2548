"""Load a corpus: every ``.md`` / ``.txt`` file of a directory is one document.

The document id is the file stem (``05-beacon-fleet-software.md`` -> ``05-beacon-fleet-software``),
which is what a golden set's ``sources`` name.  Files are read in sorted order, so everything
built on the corpus (chunk ids, BM25 index, the corpus hash in a saved run) is deterministic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from ragaudit._io import read_file_bytes
from ragaudit.data.chunks import Document
from ragaudit.exceptions import InputError, unreadable

__all__ = ["CORPUS_SUFFIXES", "corpus_sha256", "load_corpus"]

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
