"""Files of flat records (one question per record): JSON, JSON Lines or CSV, by extension.

Golden sets and other tools' per-question results are both tables of records; this is where
such a file is read, through the shared readers (:func:`~ragaudit.data.formats.jsonl.
json_records` and :func:`~ragaudit.data.formats.csv_.csv_records`), so BOMs, encodings, NaN
literals and line numbers are handled once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ragaudit.data.formats.csv_ import csv_records
from ragaudit.data.formats.jsonl import json_records

__all__ = ["RECORD_SUFFIXES", "WRAPPERS", "read_records"]

PathLike = str | os.PathLike[str]

#: Extensions read as records (anything else is left to the caller).
RECORD_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv")

#: Keys under which a JSON document may wrap its list of records.
WRAPPERS = ("questions", "test_cases", "goldens", "samples")


def read_records(path: PathLike) -> tuple[list[tuple[int | None, Any]], bool]:
    """``([(line, record), ...], text_cells)``: every record of a JSON/JSONL/CSV file.

    A JSON document may be a list of records, or a mapping holding that list under one of
    :data:`WRAPPERS`.  ``text_cells`` is True for CSV (every cell is text; lists and booleans
    are for the caller to parse); empty CSV cells are None.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = file.write_text('{"test_cases": [{"input": "Q?"}]}')
    >>> read_records(file)
    ([(1, {'input': 'Q?'})], False)
    """
    if str(path).lower().endswith(".csv"):
        return [(line, record) for line, record in csv_records(path)], True
    records: list[tuple[int | None, Any]] = []
    for line, record in json_records(path):
        wrapped = (
            next((record[key] for key in WRAPPERS if isinstance(record.get(key), list)), None)
            if isinstance(record, Mapping)
            else None
        )
        if wrapped is not None:
            records.extend((line, item) for item in wrapped)
        else:
            records.append((line, record))
    return records, False
