"""A saved run as a Parquet file: the run's table as is, its header in the schema metadata.

The columns are those of :mod:`.table` (``docs/saved-run-format.md`` lists their types;
``repeats`` only in a run with more than one generation per question); the
schema metadata key ``ragaudit.run`` holds the JSON of everything but the rows:
``{"format": "ragaudit.run", "format_version": 1, "name": ..., "config": ..., "summary":
..., "judge_audit": ... (when the run carries one), <other top-level keys>}``.
:func:`read_parquet_run` checks the header as a JSON file's
is checked, each column's type, then the rows column by column (:mod:`.table_check`); a
file that does not pass is turned into its JSON rows and checked by
:func:`~ragaudit.data.saved_run.check.validate_saved_run`, so a bad run gets the message it
gets as JSON (``FILE: rows[3].retrieved[0].chunk_id: ...``).

The file is read a batch of rows at a time (``ParquetFile.iter_batches``, ``batch_rows`` rows,
:data:`BATCH_ROWS` by default; the writer makes row groups of that size so a batch never needs
more than its row group): each batch is checked whole, then only the columns in ``keep`` stay
in memory, and the others become null columns of their type.  Reading everything is the same
path with every column kept, so a command that never shows a question (``funnel``,
``compare``, the dashboard) holds a batch plus the columns it reads (:data:`NUMBERS_ONLY`
leaves out the question, answer and reference texts), not the run with its text.  A batch
that fails a check, or ids repeated across batches, make the whole file be read for the
message (as a JSON file with a problem is): memory is bounded for runs that pass, and a
refused file gets the same message whatever the batch size.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ragaudit._io import atomic_write_bytes
from ragaudit.data.saved_run.check import validate_saved_run
from ragaudit.data.saved_run.mappings import _plain
from ragaudit.data.saved_run.model import FORMAT, FORMAT_VERSION, SavedRun
from ragaudit.data.saved_run.repeat_check import declared_repeats
from ragaudit.data.saved_run.table import (
    _ENTRY,
    _TEXT,
    COLUMNS,
    JSON_TEXT,
    RECORDS,
    table_rows,
)
from ragaudit.data.saved_run.table_check import table_valid
from ragaudit.data.saved_run.view import QuestionsView, in_rank_order
from ragaudit.exceptions import FormatError

__all__ = ["BATCH_ROWS", "HEADER_KEY", "NUMBERS_ONLY", "read_parquet_run", "write_parquet_run"]

#: The schema metadata key of the header (format, version, name, config, summary, extra).
HEADER_KEY = b"ragaudit.run"
#: Rows read, checked and projected at a time, and the row group size the writer uses
#: (65,536 questions of about 3 KB: some 200 MB of one batch in Arrow, at most).
BATCH_ROWS = 65_536
#: The columns read by commands that show no question's text (``funnel``, ``compare``, the
#: dashboard's numbers): all but the question, reference answer and answer texts.
NUMBERS_ONLY = frozenset(COLUMNS) - {"question", "reference_answer", "answer"}


def write_parquet_run(path: str | os.PathLike[str], saved: SavedRun) -> None:
    """Write ``saved`` (already checked) to ``path`` atomically, zstd-compressed."""
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "name": saved.name,
        "config": saved.config.to_dict(),
        "summary": json.loads(json.dumps(dict(saved.summary), default=dict)),
        **({} if saved.judge_audit is None else {"judge_audit": _plain(saved.judge_audit)}),
        **json.loads(json.dumps(dict(saved.extra), default=dict)),
    }
    table = saved.table
    if table.column("repeats").null_count == table.num_rows:  # R = 1: the file it always was
        table = table.drop_columns(["repeats"])
    table = table.replace_schema_metadata(
        {HEADER_KEY: json.dumps(header, ensure_ascii=False, allow_nan=False)}
    )
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", row_group_size=BATCH_ROWS)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


def _type_problem(schema: pa.Schema) -> str | None:
    """``column: expected ..., found ...`` for the first column not of its type."""
    names = schema.names
    missing = [n for n in COLUMNS if n not in names]
    unknown = [n for n in names if n not in COLUMNS]
    if missing or unknown:
        which = f"missing column {missing[0]!r}" if missing else f"unknown column {unknown[0]!r}"
        return f"(columns): {which}; expected the columns {', '.join(COLUMNS)}"
    for name, kind in COLUMNS.items():
        found = schema.field(name).type
        if found == kind or (name in JSON_TEXT and found in (_TEXT, pa.null())):
            continue
        scalar = (pa.bool_(), pa.int64(), pa.float64(), _TEXT, pa.null())
        if name in RECORDS and pa.types.is_struct(found) and all(f.type in scalar for f in found):
            continue
        expected = "a struct of bool, int64, double, string or null children, or string" if (
            kind is None) else str(kind)  # fmt: skip
        return f"{name}: expected a column of type {expected}, found {found}"
    return None


def _header(name: str, schema: pa.Schema) -> Any:
    """The header in ``schema``'s metadata, checked as a JSON file's top level is."""
    raw = (schema.metadata or {}).get(HEADER_KEY)
    if raw is None:
        raise FormatError(
            "a Parquet file without the saved-run header (schema metadata 'ragaudit.run'): "
            "not written by ragaudit; convert a saved-run JSON file with `ragaudit convert`",
            path=name,
        )
    try:
        top: Any = json.loads(raw)
    except ValueError:
        top = None
    if not isinstance(top, dict) or "rows" in top:
        raise FormatError("the header (schema metadata 'ragaudit.run') is not a JSON "
                          "object without rows", path=name)  # fmt: skip
    return top


def _with_repeats(table: pa.Table) -> pa.Table:
    """``table`` with its ``repeats`` column (all null when the file leaves it out)."""
    if "repeats" in table.column_names:
        return table
    at = table.column_names.index("extra") if "extra" in table.column_names else 0
    return table.add_column(at, "repeats", pa.nulls(table.num_rows, _TEXT))


def read_parquet_run(
    path: str | os.PathLike[str],
    *,
    keep: Collection[str] | None = None,
    batch_rows: int = BATCH_ROWS,
    top_k: bool = False,
) -> SavedRun:
    """The saved run in the Parquet file ``path`` (checked: see the module docstring).

    ``keep``: the columns held in memory (default: all); the others are checked, then
    replaced by null columns.  ``batch_rows``: rows read and checked at a time.  ``top_k``:
    keep each question's first ``config.k`` retrieved entries only, in the batches whose
    entries are in rank order (for a command that reads no deeper: ``compare``).

    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "r.parquet"
    >>> write_parquet_run(target, SavedRun.from_dict({"name": "r", "config": {"k": 1},
    ...     "rows": [{"id": "q1", "question": "Why?", "retrieved": [{"chunk_id": "a#0",
    ...     "doc_id": "a"}]}, {"id": "q2", "question": "How?", "retrieved": []}]}))
    >>> read_parquet_run(target).questions[0].retrieved[0].doc_id
    'a'
    >>> read_parquet_run(target, keep=NUMBERS_ONLY, batch_rows=1).table["question"].null_count
    2
    """
    name = os.fspath(path)
    try:
        source = pq.ParquetFile(name, buffer_size=1 << 20)  # streamed, not the whole file
        schema = source.schema_arrow
    except (pa.ArrowException, OSError) as err:
        raise _unreadable(name, err) from None
    top = _header(name, schema)
    schema = _with_repeats(schema.empty_table()).schema.remove_metadata()
    problem = _type_problem(schema)
    if problem is not None:
        field, message = problem.split(": ", 1)
        raise FormatError(message, path=name, field=field)
    validate_saved_run({**top, "rows": []}, path=name)
    k, repeats = top["config"]["k"], declared_repeats(top["config"])
    kept = [n for n in schema.names if keep is None or n in keep]
    parts: list[pa.Table] = []
    checked = True
    try:
        for batch in source.iter_batches(batch_size=batch_rows, use_threads=False):
            part = _with_repeats(pa.Table.from_batches([batch])).replace_schema_metadata(None)
            checked = checked and table_valid(part, k, repeats)
            part = part.select(kept)  # the other columns are dropped with the batch
            parts.append(_top(part, k) if top_k and "retrieved" in kept else part)
    except (pa.ArrowException, OSError) as err:
        raise _unreadable(name, err) from None
    table = pa.Table.from_batches([], schema.remove_metadata()).select(kept)
    table = pa.concat_tables([table, *parts]) if parts else table
    ids = table.column("id")
    if not checked or pc.count_distinct(ids).as_py() != len(ids):  # read whole, for the message
        whole = _with_repeats(source.read().replace_schema_metadata(None))
        validate_saved_run({**top, "rows": table_rows(whole)}, path=name)
    for i, field in enumerate(schema):
        if field.name not in kept:
            table = table.add_column(i, field, pa.nulls(table.num_rows, field.type))
    return SavedRun.from_parts(top, QuestionsView(table), name)


def _top(part: pa.Table, k: int) -> pa.Table:
    """``part`` with each question's retrieved entries cut to the first ``k``, when they
    are in rank order (ranks 1, 2, 3, ... or none: then the first k are the top k)."""
    column = part.column("retrieved")
    if column.type != pa.list_(_ENTRY):
        return part
    lists = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if not in_rank_order(lists):
        return part
    at = part.column_names.index("retrieved")
    return part.set_column(at, "retrieved", pc.list_slice(lists, 0, k))


def _unreadable(name: str, err: Exception) -> FormatError:
    reason = str(err).splitlines()[0] if str(err) else type(err).__name__
    return FormatError(f"not a readable Parquet file ({reason})", path=name)
