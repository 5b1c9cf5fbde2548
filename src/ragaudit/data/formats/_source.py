"""Reading a text file or a JSON document the same way in every reader.

One place strips a leading UTF-8 byte-order mark, turns undecodable bytes into a message
naming the line, and turns the parser's own failures on hostile input (nesting deep enough
for a RecursionError, NaN literals) into :class:`~ragaudit.exceptions.FormatError`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ragaudit.exceptions import FormatError, unreadable

__all__ = ["load_json", "read_text", "shorten"]

PathLike = str | os.PathLike[str]


def shorten(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, so that one bad value keeps a message short.

    >>> shorten("x" * 100, 10)
    "'xxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_text(path: PathLike) -> str:
    """The file as text: UTF-8, a leading byte-order mark dropped.

    Raises
    ------
    FormatError
        If the file cannot be read or is not UTF-8 (naming the line of the first bad byte).
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise unreadable(path, exc) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise unreadable(path, exc) from None


def load_json(text: str, path: str, line: int | None = None) -> Any:
    """``json.loads`` that reports every failure as FormatError (NaN/Infinity literals are
    parsed, so that the reader of the field they stand in refuses them by name).

    >>> load_json('{"a": [1, 2]}', "x.json")
    {'a': [1, 2]}
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise FormatError(f"invalid JSON: {exc.msg}", path=path, line=where) from None
    except ValueError as exc:  # an integer literal longer than Python converts
        raise FormatError(f"invalid JSON: {str(exc)[:80]}", path=path, line=line) from None
    except RecursionError:
        raise FormatError(
            "invalid JSON: nested too deeply (expected at most a few hundred levels of [ and {)",
            path=path,
            line=1 if line is None else line,
        ) from None
