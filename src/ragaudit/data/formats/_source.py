"""Reading a text file, a JSON document or JSON Lines the same way in every reader.

The one place that strips a leading UTF-8 byte-order mark, turns undecodable bytes into a
message naming the line, turns the parser's own failures on hostile input (nesting deep
enough for a RecursionError, integers longer than Python converts) and a key written twice in
one JSON object (``json.loads`` keeps the last one silently) and a string holding a lone
surrogate (``"q\\ud800x"``: valid JSON, but no writer can encode it) into
:class:`~ragaudit.exceptions.FormatError`, splits JSON Lines on ``\n`` only (a raw U+2028 or
U+0085 inside a string is not a line break) and applies the torn-last-line policy.  Every
JSON or JSONL file of the package is read here: label and run files (:mod:`.jsonl`), saved
runs (:func:`ragaudit.data.records.load_saved_run`), per-question metric files, human
verdicts and run checkpoints.  NaN/Infinity literals are parsed, so that the reader of the
field they stand in refuses them by name.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any, Literal

from ragaudit._io import read_file_bytes
from ragaudit.exceptions import FormatError, unreadable

__all__ = ["json_lines", "load_json", "read_json_file", "read_text", "shorten"]

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
        If the file cannot be read, is not a regular file (a pipe, a device such as
        ``/dev/zero``) or is not UTF-8 (naming the line of the first bad byte).
    """
    raw = read_file_bytes(path)  # a pipe or a device is refused: /dev/zero never ends
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise unreadable(path, exc) from None


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s ``object_pairs_hook`` that refuses a key written twice in one object
    (``json.loads`` would keep the last value silently)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _key_line(text: str, key: str) -> int | None:
    """The line of the second ``"key":`` of ``text`` when the key is written exactly twice
    (else None: which of its places is the repeat cannot be told from the text alone)."""
    for token in dict.fromkeys((json.dumps(key, ensure_ascii=False), json.dumps(key))):
        places = [m.start() for m in re.finditer(re.escape(token) + r"\s*:", text)]
        if len(places) == 2:
            return text.count("\n", 0, places[1]) + 1
    return None


def _duplicate_key(exc: _DuplicateKey, text: str, path: str, line: int | None) -> FormatError:
    return FormatError(
        "expected each key once in an object, found it twice",
        path=path,
        line=line if line is not None else _key_line(text, exc.key),
        field=exc.key,
    )


#: A ``\\uD800``-``\\uDFFF`` escape: the only way a JSON text can hold a surrogate.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogate(value: Any, where: str = "") -> tuple[str, str] | None:
    """``(field, text)`` of the first string (key or value) of ``value`` holding a lone
    surrogate, or None.  Iterative: a deep document does not recurse."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        place, item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return place, item
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                field = f"{place}.{key}" if place else str(key)
                stack.append((field, child))
                stack.append((field, key))
        elif isinstance(item, list):
            stack.extend((f"{place}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return None


def _refuse_lone_surrogates(value: Any, text: str, path: str, line: int | None) -> None:
    """A string with an unpaired ``\\ud800``-style escape parses (JSON allows it) but can be
    written nowhere as UTF-8: refused here, by location, as NaN is by the field readers.
    Only texts holding such an escape are walked (a regex scan of the text otherwise)."""
    if "\\u" not in text or SURROGATE_ESCAPE.search(text) is None:
        return
    found = lone_surrogate(value)
    if found is None:
        return
    field, bad = found
    char = next(c for c in bad if 0xD800 <= ord(c) <= 0xDFFF)
    if line is None:
        match = re.search(re.escape(f"\\u{ord(char):04x}"), text, flags=re.IGNORECASE)
        line = 1 if match is None else text.count("\n", 0, match.start()) + 1
    raise FormatError(
        f"expected text (UTF-8), found {shorten(bad)} holding a lone surrogate "
        f"\\u{ord(char):04x} (half of an escaped pair); fix the program that wrote the file",
        path=path,
        line=line,
        field=field or None,
    )


def load_json(text: str, path: str, line: int | None = None) -> Any:
    """``json.loads`` that reports every failure as FormatError (NaN/Infinity literals are
    parsed, so that the reader of the field they stand in refuses them by name).

    A key written twice in one object is an error (``json.loads`` would keep the last one
    silently, so a question or item id given twice would lose a row without a word).  The
    check costs about a quarter more ``json.loads`` time, about 5% of loading a saved run.

    >>> load_json('{"a": [1, 2]}', "x.json")
    {'a': [1, 2]}
    >>> load_json('{"q1": 1,\\n "q1": 2}', "x.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragaudit.exceptions.FormatError: x.json:2: q1: expected each key once in an object, found ...
    """
    try:
        value = json.loads(text, object_pairs_hook=unique_object)
    except _DuplicateKey as exc:
        raise _duplicate_key(exc, text, path, line) from None
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise FormatError(
            f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=where
        ) from None
    except ValueError as exc:  # an integer literal longer than Python converts
        raise FormatError(f"invalid JSON: {str(exc)[:80]}", path=path, line=line) from None
    except RecursionError:
        raise FormatError(
            "invalid JSON: nested too deeply (expected at most a few hundred levels of [ and {)",
            path=path,
            line=1 if line is None else line,
        ) from None
    _refuse_lone_surrogates(value, text, path, line)
    return value


def read_json_file(path: PathLike) -> Any:
    """Parse one JSON document from a file (BOM, bad bytes, bad JSON, a key written twice in
    one object: FormatError with line, see :func:`load_json`).

    >>> import pathlib, tempfile
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = file.write_bytes(b'\\xef\\xbb\\xbf{"a": 1}')
    >>> read_json_file(file)
    {'a': 1}
    """
    return load_json(read_text(path), str(path))


#: What :func:`json_lines` does with a line that does not read back.
TornPolicy = Literal["error", "stop"]


def json_lines(path: PathLike, *, torn: TornPolicy = "error") -> Iterator[tuple[int, Any]]:
    r"""Yield ``(line number, value)`` for every non-blank line of a JSON Lines file.

    Lines end at ``\n`` (a ``\r`` before it is dropped); other Unicode line breaks are text.

    Parameters
    ----------
    path : path-like
    torn : {"error", "stop"}, default "error"
        ``"error"`` (files people hand us): any line that is not valid JSON is a
        :class:`FormatError` naming it; when it is the last line and the file does not end
        with a newline, the message says the file ends inside a record (an interrupted
        writer).  ``"stop"`` (append-only files we write, such as run checkpoints): only
        newline-terminated lines count, and reading stops quietly before the first line that
        is not UTF-8 or not JSON, since everything from there on was cut short.  In both, a
        complete line with a key written twice in one object is an error (see
        :func:`load_json`), never the end of the data.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
    >>> _ = file.write_text('{"id": "q1"}\n\n{"id": "q\u2028"}\n{"id": "q3", "an')
    >>> [n for n, _ in json_lines(file, torn="stop")]
    [1, 3]
    >>> try:
    ...     list(json_lines(file))
    ... except FormatError as exc:
    ...     print(exc.line, "ends inside this line" in exc.message)
    4 True
    """
    name = str(path)
    if torn == "stop":
        raw = read_file_bytes(path).removeprefix(b"\xef\xbb\xbf")
        for number, piece in enumerate(raw.split(b"\n")[:-1], start=1):
            if not piece.strip():
                continue
            try:
                line = piece.decode("utf-8")
                value = json.loads(line, object_pairs_hook=unique_object)
            except _DuplicateKey as exc:
                raise _duplicate_key(exc, line, name, number) from None
            except (UnicodeDecodeError, ValueError, RecursionError):
                return
            _refuse_lone_surrogates(value, line, name, number)
            yield number, value
        return
    text = read_text(path)
    lines = text.split("\n")
    last = len(lines) if lines[-1] else len(lines) - 1
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = load_json(line, name, number)
        except FormatError as exc:
            # a duplicate key names its field: that line is whole, not cut short
            if number == last and not text.endswith("\n") and exc.field is None:
                raise FormatError(
                    f"{exc.message}; the file ends inside this line without a newline (was "
                    "its writer interrupted?)",
                    path=name,
                    line=number,
                ) from None
            raise
        yield number, value
