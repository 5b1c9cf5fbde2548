"""Where to suggest writing labels: a path beside a given file that does not exist yet, so a
message never advises replacing a file the user gave (issue 32)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fresh_labels_path"]


def fresh_labels_path(where: str | os.PathLike[str] | None) -> str:
    """A labels path beside ``where`` that does not exist yet, for advice: a message never
    suggests replacing a file it was given (it may be someone's own labels), only a new one.

    >>> fresh_labels_path("book/chunk_labels.yaml")
    'book/chunk_labels.chunk_labels.yaml'
    >>> fresh_labels_path(None)
    'chunk_labels.yaml'
    """
    path = Path(where) if where is not None and Path(where).suffix else None
    if path is None:  # no file named (an option such as --chunk-labels): one in the cwd
        path = Path("chunk_labels.yaml")
        if not path.exists():
            return str(path)
    candidate = path.with_name(f"{path.stem}.chunk_labels.yaml")
    number = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}.chunk_labels-{number}.yaml")
        number += 1
    return str(candidate)
