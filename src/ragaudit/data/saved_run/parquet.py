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
"""

from __future__ import annotations

import json
import os
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ragaudit._io import atomic_write_bytes
from ragaudit.data.saved_run.check import validate_saved_run
from ragaudit.data.saved_run.mappings import _plain
from ragaudit.data.saved_run.model import FORMAT, FORMAT_VERSION, SavedRun
from ragaudit.data.saved_run.repeat_check import declared_repeats
from ragaudit.data.saved_run.table import (
    _TEXT,
    COLUMNS,
    JSON_TEXT,
    RECORDS,
    table_rows,
)
from ragaudit.data.saved_run.table_check import table_valid
from ragaudit.data.saved_run.view import QuestionsView
from ragaudit.exceptions import FormatError

__all__ = ["HEADER_KEY", "read_parquet_run", "write_parquet_run"]

#: The schema metadata key of the header (format, version, name, config, summary, extra).
HEADER_KEY = b"ragaudit.run"


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
    pq.write_table(table, sink, compression="zstd")
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


def _type_problem(table: pa.Table) -> str | None:
    """``column: expected ..., found ...`` for the first column not of its type."""
    names = table.column_names
    missing = [n for n in COLUMNS if n not in names]
    unknown = [n for n in names if n not in COLUMNS]
    if missing or unknown:
        which = f"missing column {missing[0]!r}" if missing else f"unknown column {unknown[0]!r}"
        return f"(columns): {which}; expected the columns {', '.join(COLUMNS)}"
    for name, kind in COLUMNS.items():
        found = table.schema.field(name).type
        if found == kind or (name in JSON_TEXT and found in (_TEXT, pa.null())):
            continue
        scalar = (pa.bool_(), pa.int64(), pa.float64(), _TEXT, pa.null())
        if name in RECORDS and pa.types.is_struct(found) and all(f.type in scalar for f in found):
            continue
        expected = "a struct of bool, int64, double, string or null children, or string" if (
            kind is None) else str(kind)  # fmt: skip
        return f"{name}: expected a column of type {expected}, found {found}"
    return None


def read_parquet_run(path: str | os.PathLike[str]) -> SavedRun:
    """The saved run in the Parquet file ``path`` (checked: see the module docstring).

    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "r.parquet"
    >>> write_parquet_run(target, SavedRun.from_dict({"name": "r", "config": {"k": 1},
    ...     "rows": [{"id": "q1", "retrieved": [{"chunk_id": "a#0", "doc_id": "a"}]}]}))
    >>> read_parquet_run(target).questions[0].retrieved[0].doc_id
    'a'
    """
    name = os.fspath(path)
    try:
        table = pq.ParquetFile(name).read()  # read_table would import pyarrow.dataset
    except (pa.ArrowException, OSError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise FormatError(f"not a readable Parquet file ({reason})", path=name) from None
    raw = (table.schema.metadata or {}).get(HEADER_KEY)
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
    table = table.replace_schema_metadata(None)
    if "repeats" not in table.column_names:  # a run with one generation per question
        at = table.column_names.index("extra") if "extra" in table.column_names else 0
        table = table.add_column(at, "repeats", pa.nulls(table.num_rows, _TEXT))
    problem = _type_problem(table)
    if problem is not None:
        field, message = problem.split(": ", 1)
        raise FormatError(message, path=name, field=field)
    validate_saved_run({**top, "rows": []}, path=name)
    if not table_valid(table, top["config"]["k"], declared_repeats(top["config"])):
        validate_saved_run({**top, "rows": table_rows(table)}, path=name)
    return SavedRun.from_parts(top, QuestionsView(table), name)
