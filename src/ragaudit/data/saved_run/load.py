"""Reading a saved-run JSON file into columns, in one pass.

:func:`read_json_run` is the JSON path of :func:`ragaudit.data.records.load_saved_run`.  The
file is parsed a batch of rows at a time (:class:`~.stream.RowStream`: the JSON tree of the
whole run never exists), each batch is checked column by column
(:class:`~.batch_check.RowChecker`) and appended to the run's Arrow table
(:func:`~.table.rows_to_table`), and the batch is dropped.  No question object is made:
the run's questions are made from the table when they are read.

It returns None at the first doubt (bad JSON, a key written twice, a value out of its range,
anything the schema refuses): the caller then reads the file whole and raises the message
that locates the problem.  The cyclic garbage collector is paused meanwhile: the parsed
batches are acyclic, and it would walk them again and again.
"""

from __future__ import annotations

import gc
import os
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ragaudit.data.saved_run.batch_check import RowChecker
from ragaudit.data.saved_run.check import find_problems
from ragaudit.data.saved_run.model import SavedRun
from ragaudit.data.saved_run.repeat_check import declared_repeats
from ragaudit.data.saved_run.stream import NotStreamable, RowStream
from ragaudit.data.saved_run.table import rows_to_table, unify
from ragaudit.data.saved_run.view import QuestionsView

__all__ = ["most_contexts", "read_json_run"]

#: Rows parsed, checked and put in columns at a time (about 3 MB of parsed rows).
BATCH = 2000


def most_contexts(table: pa.Table) -> int:
    """The most context chunks any question of ``table`` was given (0 without any)."""
    contexts = table.column("context_ids")
    if contexts.null_count == len(contexts):
        return 0
    return int(pc.max(pc.list_value_length(contexts)).as_py() or 0)


def _read(path: str) -> SavedRun | None:
    stream = RowStream(path, batch=BATCH)
    checker: RowChecker | None = None
    tables: list[pa.Table] = []
    for rows in stream.batches():
        if checker is None:  # config comes first in ragaudit's files; else k is checked last
            config: Any = stream.top.get("config")
            k = config.get("k") if type(config) is dict else None
            checker = RowChecker(k if type(k) is int else None)
        if rows and not checker.valid(rows):
            return None
        tables.append(rows_to_table(rows))
    top = stream.top
    if not stream.has_rows or find_problems({**top, "rows": []}):
        return None
    if checker is not None and checker.repeat_counts - {declared_repeats(top["config"]) - 1}:
        return None  # a row without config.repeats - 1 entries: the whole read words it
    table = unify(tables)
    if most_contexts(table) > top["config"]["k"]:
        return None
    return SavedRun.from_parts(top, QuestionsView(table), path)


def read_json_run(path: str | os.PathLike[str]) -> SavedRun | None:
    """The saved run in the JSON file ``path``, or None when it must be read whole for the
    message (a doubt: see the module docstring).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"format": "ragaudit.run", "format_version": 1, "name": "r", '
    ...     '"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": []}, '
    ...     '{"id": "q2", "retrieved": [], "metrics": {"recall@k": 9}}]}')
    >>> read_json_run(path) is None             # recall 9: read whole, for the message
    True
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _read(str(path))
    except (NotStreamable, OSError):
        return None
    except (TypeError, KeyError, AttributeError, ValueError, IndexError, pa.ArrowException):
        # A shape no check above foresaw: the whole-file reader decides, and words it.
        return None  # pragma: no cover
    finally:
        if collecting:
            gc.enable()
