"""CSV files of records: a header line names the columns, then one record per row.

The text is read by :func:`~ragaudit.data.formats._source.read_text` (UTF-8, a leading
byte-order mark dropped, undecodable bytes reported with their line) and split by Python's
:mod:`csv` module (RFC 4180 quoting, so a cell may hold commas, quotes and line breaks).
An empty cell is a missing value (``None``), which is how pandas writes NaN.  A first column
with an empty name is the index ``DataFrame.to_csv`` writes by default (RAGAS results saved
with ``result.to_pandas().to_csv(path)``): it is not a field, and is dropped.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator

from ragaudit.data.formats._source import read_text
from ragaudit.exceptions import FormatError

__all__ = ["csv_records"]

PathLike = str | os.PathLike[str]


def csv_records(path: PathLike) -> Iterator[tuple[int, dict[str, str | None]]]:
    """Yield ``(line number, {column: cell})`` for every data row (blank lines skipped).

    The line number is the row's first line.  Empty cells are ``None``.  An unnamed first
    column (pandas' index) is left out of the records.

    Raises
    ------
    FormatError
        No header, an empty or repeated column name, a row with more or fewer cells than the
        header, or broken quoting.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "g.csv"
    >>> _ = file.write_text('id,question\\nq1,"Why, then?"\\nq2,\\n')
    >>> list(csv_records(file))
    [(2, {'id': 'q1', 'question': 'Why, then?'}), (3, {'id': 'q2', 'question': None})]
    >>> _ = file.write_text(',id,question\\n0,q1,Why?\\n')  # pandas' to_csv, index included
    >>> list(csv_records(file))
    [(2, {'id': 'q1', 'question': 'Why?'})]
    """
    name = str(path)
    reader = csv.reader(io.StringIO(read_text(path), newline=""), strict=True)
    header: list[str] | None = None
    start = 1
    try:
        for row in reader:
            line, start = start, reader.line_num + 1
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if header is None:
                header = [cell.strip() for cell in row]
                _check_header(header, name, line)
                continue
            if len(row) != len(header):
                raise FormatError(
                    f"expected {len(header)} cells (one per header column), found {len(row)}",
                    path=name,
                    line=line,
                )
            yield (
                line,
                {
                    col: (cell if cell != "" else None)
                    for col, cell in zip(header, row, strict=True)
                    if col  # the unnamed index column pandas writes
                },
            )
    except csv.Error as exc:
        raise FormatError(f"invalid CSV: {exc}", path=name, line=reader.line_num) from None
    if header is None:
        raise FormatError(
            "expected a header line naming the columns, found an empty file", path=name
        )


def _check_header(header: list[str], path: str, line: int) -> None:
    seen: set[str] = set()
    for i, column in enumerate(header):
        if not column and i == 0 and len(header) > 1:
            continue  # pandas' index column (DataFrame.to_csv with index=True)
        if not column:
            raise FormatError(
                f"expected a column name, found an empty one (column {i + 1})", path=path, line=line
            )
        if column in seen:
            raise FormatError(f"column {column!r} appears twice", path=path, line=line)
        seen.add(column)
