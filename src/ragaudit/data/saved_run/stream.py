"""Reading a saved-run file row by row: the whole JSON tree is never held.

A saved run of 200,000 questions is a 661 MB JSON file; parsed whole, its tree takes about
five times that, and the typed model more on top (issue 25).  :class:`RowStream` reads the
file in blocks of text, parses the top-level object itself and hands the ``rows`` array over
in batches of parsed rows, which the caller checks and builds (or skips) and then drops.

It accepts only what :func:`ragaudit.data.formats._source.load_json` accepts, and raises
:class:`NotStreamable` at the first doubt, so that the caller reads the file the old way,
whose messages locate every problem (``FILE:LINE: ...``):

* the JSON grammar (the C scanner of :mod:`json`, one row at a time, and the top level here),
  with nothing after the object;
* a key written twice in one object: the top-level values are parsed with the duplicate-key
  hook; for the rows, the keys of a batch are counted (``"`` then ``:`` in the text, against
  the keys of the parsed dicts), and a batch whose counts differ is parsed again with the
  hook, row by row (a count can only differ by a key written twice or by ``":`` inside a
  string, so equal counts prove every key was written once);
* a string with a lone surrogate (``\\ud800``): only text holding such an escape is walked;
  with ``only`` (``ragaudit show RUN q7``) these two checks are made on the batches that hold
  the named questions only;
* bytes that are not UTF-8, a file that cannot be read, nesting too deep for the parser,
  integers too long to convert.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Generator, Iterator
from itertools import chain, repeat
from typing import Any

from ragaudit.data.formats import SURROGATE_ESCAPE, lone_surrogate, unique_object

__all__ = ["NotStreamable", "RowStream"]

_BLOCK = 1 << 23  # characters of text read at a time
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SEPARATOR = re.compile(r"[ \t\n\r]*([,\]])[ \t\n\r]*")  # after a row: "," or "]"
_LOOSE_KEY = re.compile(r'"[ \t\n\r]+:')  # a key written with space before its colon
_plain = json.JSONDecoder()
_checked = json.JSONDecoder(object_pairs_hook=unique_object)


class NotStreamable(Exception):
    """The file is not a plain, valid JSON object: read it whole, for the message."""


def _scan(decoder: json.JSONDecoder) -> Any:
    return decoder.scan_once  # type: ignore[attr-defined]


_scan_plain, _scan_checked = _scan(_plain), _scan(_checked)


def _keys_in(rows: list[Any]) -> int:
    """The keys of a batch of parsed rows: theirs, their retrieved entries' and those of
    ``judges`` (one level down too), ``metrics``, ``latency_ms`` and ``usage``, and the same
    of the entries of a repeated run's ``repeats``.  Deeper keys
    are left out: a count lower than the text's only sends the batch to the exact check."""
    if set(map(type, rows)) != {dict}:
        return 0
    count = sum(map(len, rows))
    lists = [r for r in map(dict.get, rows, repeat("retrieved")) if type(r) is list]
    entries = list(chain.from_iterable(lists))
    if entries and set(map(type, entries)) == {dict}:
        count += sum(map(len, entries))
    for key in ("judges", "metrics", "latency_ms", "usage"):
        values = [v for v in map(dict.get, rows, repeat(key)) if type(v) is dict]
        count += sum(map(len, values))
        if key == "judges":
            inner = [v for d in values for v in d.values() if type(v) is dict]
            count += sum(map(len, inner))
    repeats = [r for r in map(dict.get, rows, repeat("repeats")) if type(r) is list]
    if repeats:  # a repeated run's entries hold a row's per-generation keys
        count += _keys_in(list(chain.from_iterable(repeats)))
    return count


class RowStream:
    """The top-level object of a saved-run file, with its ``rows`` yielded in batches.

    Iterate :meth:`batches`; the top-level keys (all but ``rows``) are in :attr:`top` as the
    parse reaches them (``config`` comes before ``rows`` in every file ragaudit writes), and
    all of them once the iteration ends.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"name": "r", "rows": [{"id": "a"}, {"id": "b"}], "x": 1}')
    >>> stream = RowStream(path, batch=1)
    >>> [[row["id"] for row in rows] for rows in stream.batches()], stream.top
    ([['a'], ['b']], {'name': 'r', 'x': 1})
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        batch: int = 1000,
        only: frozenset[str] | None = None,
    ) -> None:
        self.path = path
        self.batch = batch
        self.only = only  # check keys and surrogates only in batches holding these ids
        self.top: dict[str, Any] = {}
        self.has_rows = False
        self._text = ""
        self._eof = False
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()

    # -- the text buffer -------------------------------------------------------------------

    def _fill(self, handle: Any, at_least: int = _BLOCK) -> bool:
        """Append at least ``at_least`` more characters; False at the end of the file."""
        if self._eof:
            return False
        raw = handle.read(max(at_least, _BLOCK))
        try:
            self._text += self._decoder.decode(raw, final=not raw)
        except UnicodeDecodeError:
            raise NotStreamable from None
        self._eof = not raw
        return True

    def _skip(self, handle: Any, pos: int) -> int:
        """The position of the next character that is not whitespace (reading on)."""
        while True:
            pos = _WHITESPACE.match(self._text, pos).end()  # type: ignore[union-attr]
            if pos < len(self._text) or not self._fill(handle):
                return pos

    def _expect(self, handle: Any, pos: int, chars: str) -> tuple[str, int]:
        pos = self._skip(handle, pos)
        if pos >= len(self._text) or self._text[pos] not in chars:
            raise NotStreamable
        return self._text[pos], pos + 1

    def _value(self, handle: Any, pos: int, scan: Any) -> tuple[Any, int]:
        """Parse the value at ``pos``, reading on while it may run past the buffer."""
        while True:
            try:
                value, end = scan(self._text, pos)
                if end < len(self._text) or self._eof:  # a number may go on past the end
                    return value, end
            except (StopIteration, ValueError, RecursionError):  # JSONDecodeError is one
                if self._eof:
                    raise NotStreamable from None
            self._fill(handle, len(self._text) - pos)  # doubles: linear in the value's size

    def _drop(self, pos: int) -> int:
        """Forget the text before ``pos`` once a block of it has been used."""
        if pos < _BLOCK:
            return pos
        self._text = self._text[pos:]
        return 0

    # -- the document ----------------------------------------------------------------------

    def batches(self) -> Iterator[list[Any]]:
        """The rows, ``batch`` at a time, each batch checked for keys written twice and lone
        surrogates.  Raises :class:`NotStreamable` at the first doubt."""
        with open(self.path, "rb") as handle:
            _, pos = self._expect(handle, 0, "{")
            char, pos = self._expect(handle, pos, '"}')
            while char == '"':
                key, pos = self._value(handle, pos - 1, _scan_checked)
                if key in self.top or (key == "rows" and self.has_rows):
                    raise NotStreamable  # a key written twice: the old reader words it
                if lone_surrogate(key) is not None:
                    raise NotStreamable
                _, pos = self._expect(handle, pos, ":")
                pos = self._skip(handle, pos)
                if key == "rows" and self._text.startswith("[", pos):
                    self.has_rows = True
                    pos = yield from self._rows(handle, pos + 1)
                else:
                    value, pos = self._value(handle, pos, _scan_checked)
                    if lone_surrogate(value) is not None:
                        raise NotStreamable
                    self.top[key] = value
                char, pos = self._expect(handle, pos, ",}")
                if char == ",":
                    char, pos = self._expect(handle, pos, '"')
            if self._skip(handle, pos) != len(self._text):
                raise NotStreamable  # data after the object

    def _rows(self, handle: Any, pos: int) -> Generator[list[Any], None, int]:
        char, after = self._expect(handle, pos, ']{["-0123456789tfn')
        if char == "]":
            return after
        rows: list[Any] = []
        start = pos = self._skip(handle, pos)
        while True:
            if len(self._text) - pos < _BLOCK // 8 and not self._eof:
                # Read on before the buffer runs out: a row cut at its end costs a failed
                # parse, and json's error counts the lines of the whole buffer.
                self._fill(handle)
            # The usual row: parsed, then its separator and the whitespace after it in one
            # match; a row or separator the buffer cuts, and any error, take the slow path.
            text = self._text
            try:
                row, end = _scan_plain(text, pos)
                after_row = _SEPARATOR.match(text, end)
            except (StopIteration, ValueError, RecursionError):
                after_row = None
            if after_row is None:
                row, pos = self._value(handle, pos, _scan_plain)
                char, pos = self._expect(handle, pos, ",]")
                if char == ",":
                    pos = self._skip(handle, pos)
            else:
                char, pos = after_row.group(1), after_row.end()
            rows.append(row)
            if char == "]" or len(rows) >= self.batch:
                if self.only is None or any(map(self._wanted, rows)):
                    self._check(rows, start, pos)
                yield rows
                if char == "]":
                    return pos
                rows = []
                start = pos = self._drop(self._skip(handle, pos))

    def _wanted(self, row: Any) -> bool:
        qid = row.get("id") if type(row) is dict else None
        return type(qid) is str and qid in (self.only or ())

    def _check(self, rows: list[Any], start: int, end: int) -> None:
        """Keys written once and no lone surrogate, in the rows parsed from text[start:end]."""
        text = self._text
        if _LOOSE_KEY.search(text, start, end) or text.count('":', start, end) != _keys_in(rows):
            # Parse each row again with the duplicate-key hook (exact, slower).
            pos = start
            for _ in rows:
                pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
                try:
                    _, pos = _scan_checked(text, pos)
                except Exception:  # a key written twice: the old reader words it
                    raise NotStreamable from None
                pos = _WHITESPACE.match(text, pos).end() + 1  # type: ignore[union-attr]
        escaped = text.find("\\u", start, end) != -1 and SURROGATE_ESCAPE.search(text, start, end)
        if escaped and any(lone_surrogate(row) is not None for row in rows):
            raise NotStreamable
