"""Loading a saved-run file at speed: streamed, checked and built one batch of rows at a time.

:func:`stream_saved_run` is the fast path of :func:`ragaudit.data.records.load_saved_run`.
The file is parsed row batch by row batch (:class:`~.stream.RowStream`); each batch is checked
column by column (:class:`~.batch_check.RowChecker`), built into questions
(:class:`~.build.QuestionBuilder`) and dropped, so the parsed JSON tree of the whole run never
exists.  The cyclic garbage collector is paused while the millions of (acyclic) objects are
made: it would otherwise walk the growing heap again and again, which doubled the time.

It returns None at the first doubt (bad JSON, a key written twice, a value out of its range,
anything the schema refuses): the caller then reads the file whole, the old way, and raises
the message that locates the problem.  A valid file is read exactly as the old way reads it.

With ``questions`` (``ragaudit show RUN q7``), only those questions are checked and built.
What is still checked on the whole file: the JSON grammar, the header, ``config`` and
``summary`` against the schema (with ``config.k`` against the summary and the retrieval
depth), and that every row is an object with a unique, non-empty string id.  The other rows'
contents (types, metric ranges, the number of context chunks, keys written twice, lone
surrogates) are not checked: ``ragaudit funnel`` or ``report`` on the same file checks them.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Collection
from itertools import repeat
from typing import Any

from ragaudit.data.saved_run.batch_check import RowChecker
from ragaudit.data.saved_run.build import QuestionBuilder
from ragaudit.data.saved_run.check import find_problems
from ragaudit.data.saved_run.model import QuestionResult, SavedRun
from ragaudit.data.saved_run.stream import NotStreamable, RowStream

__all__ = ["stream_saved_run"]

#: Rows parsed, checked and built at a time (about 3 MB of parsed rows in a typical run).
BATCH = 1000


def _ids_valid(rows: list[Any], seen: set[str]) -> bool:
    """Every row is an object with a non-empty string id, unseen so far."""
    if set(map(type, rows)) != {dict} or not all(map(dict.__contains__, rows, repeat("id"))):
        return False
    ids = [row["id"] for row in rows]
    if set(map(type, ids)) != {str} or min(map(len, ids)) < 1:
        return False
    before = len(seen)
    seen.update(ids)
    return len(seen) == before + len(ids)


def _read(path: str, questions: Collection[str] | None) -> SavedRun | None:
    stream = RowStream(path, batch=BATCH, only=None if questions is None else frozenset(questions))
    checker: RowChecker | None = None
    builder = QuestionBuilder()
    built: list[QuestionResult] = []
    seen: set[str] = set()
    most_contexts = 0
    for rows in stream.batches():
        if questions is not None:
            if not _ids_valid(rows, seen):
                return None
            rows = [row for row in rows if row["id"] in questions]
        if checker is None:  # config comes first in ragaudit's files; else k is checked last
            config = stream.top.get("config")
            k = config.get("k") if type(config) is dict else None
            checker = RowChecker(k if type(k) is int else None)
        if rows and not checker.valid(rows):
            return None
        contexts = [len(c) for c in map(dict.get, rows, repeat("context_ids")) if type(c) is list]
        most_contexts = max([most_contexts, *contexts])
        built.extend(builder.build(rows))
    top = stream.top
    if not stream.has_rows or find_problems({**top, "rows": []}):
        return None
    k = top["config"]["k"]
    if most_contexts > k:
        return None
    return SavedRun.from_parts(top, built, path)


def stream_saved_run(
    path: str | os.PathLike[str], questions: Collection[str] | None = None
) -> SavedRun | None:
    """The saved run in ``path``, or None when the file must be read the old way (a doubt:
    see the module docstring).  ``questions``: build only these ids (in file order).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"format": "ragaudit.run", "format_version": 1, "name": "r", '
    ...     '"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": []}, '
    ...     '{"id": "q2", "retrieved": [], "metrics": {"recall@k": 9}}]}')
    >>> stream_saved_run(path) is None             # recall 9: read the old way, for the message
    True
    >>> [q.id for q in stream_saved_run(path, questions={"q1"}).questions]
    ['q1']
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _read(str(path), None if questions is None else frozenset(questions))
    except (NotStreamable, OSError):
        return None
    except (TypeError, KeyError, AttributeError, ValueError, IndexError):  # pragma: no cover
        # A shape no check above foresaw: the old reader decides, and words the problem.
        return None
    finally:
        if collecting:
            gc.enable()
