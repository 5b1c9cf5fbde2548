"""The column checks of a Parquet run's table (``table_valid``: Arrow kernels on typed
columns) against the row walk (``find_problems`` of the same table's JSON rows), on tables
written by hand with one bad value each, in a typed column where the JSON reader would never
put it (a Parquet file written by another tool can hold anything its types allow)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from ragaudit.data.saved_run.check import find_problems
from ragaudit.data.saved_run.table import rows_to_table, table_rows
from ragaudit.data.saved_run.table_check import table_valid

ROWS = [
    {"id": "q1", "retrieved": [{"chunk_id": "a#0", "doc_id": "a", "score": 1.0, "rank": 1}],
     "keywords": ["x"], "tags": ["t"], "citations": [1], "context_ids": ["a#0"],
     "judges": {"correct": True, "abstained": False}, "latency_ms": {"total": 3.0},
     "metrics": {"recall@k": 1.0, "correct": 1.0, "hit@k": True, "rouge_l": 7.0}},
    {"id": "q2", "retrieved": [], "keywords": [], "tags": None, "citations": None,
     "context_ids": [], "judges": {"correct": None, "abstained": None},
     "latency_ms": {"total": None},
     "metrics": {"recall@k": None, "correct": 0.0, "hit@k": False, "rouge_l": 0.5}},
]  # fmt: skip


def _with(name: str, values: list, kind: pa.DataType) -> pa.Table:
    table = rows_to_table(ROWS)
    return table.set_column(table.column_names.index(name), name, pa.array(values, kind))


def _walk_valid(table: pa.Table) -> bool:
    return not find_problems({"format": "ragaudit.run", "format_version": 1, "name": "r",
                              "config": {"k": 3}, "rows": table_rows(table)})  # fmt: skip


STRUCT = rows_to_table(ROWS).column("metrics").type
CASES = {
    "valid": None,
    "empty id": ("id", ["", "q2"], pa.string()),
    "null id": ("id", [None, "q2"], pa.string()),
    "null answerable": ("answerable", [None, True], pa.bool_()),
    "null keywords": ("keywords", [None, []], pa.list_(pa.string())),
    "null keyword": ("keywords", [[None], []], pa.list_(pa.string())),
    "null tags (absent)": ("tags", [None, None], pa.list_(pa.string())),
    "negative citation": ("citations", [[-1], None], pa.list_(pa.int64())),
    "citation too large": ("citations", [[2**31], None], pa.list_(pa.int64())),
    "null abstained": ("abstained", [None, None], pa.bool_()),
    "recall above 1": ("metrics", [{"recall@k": 1.5, "correct": 1.0, "hit@k": True,
                                    "rouge_l": 1.0}, None], STRUCT),
    "correct 0.5": ("metrics", [{"recall@k": 1.0, "correct": 0.5, "hit@k": True,
                                 "rouge_l": 1.0}, None], STRUCT),
    "infinite custom metric": ("metrics", [{"recall@k": 1.0, "correct": 1.0, "hit@k": True,
                                            "rouge_l": float("inf")}, None], STRUCT),
    "negative latency": ("latency_ms", [{"total": -1.0}, None],
                         pa.struct([("total", pa.float64())])),
    "judge 2": ("judges", [{"correct": 2, "abstained": 0}, None],
                pa.struct([("correct", pa.int64()), ("abstained", pa.int64())])),
    "judge 1 as integer": ("judges", [{"correct": 1, "abstained": 0}, {"correct": None,
                           "abstained": None}], pa.struct([("correct", pa.int64()),
                                                           ("abstained", pa.int64())])),
    "null judges": ("judges", [{"correct": 1, "abstained": 0}, None],
                    pa.struct([("correct", pa.int64()), ("abstained", pa.int64())])),
    "null metrics text": ("metrics", ['{"recall@k": 1.0}', None], pa.string()),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_column_checks_agree_with_the_row_walk(case: str) -> None:
    table = rows_to_table(ROWS) if CASES[case] is None else _with(*CASES[case])
    assert table_valid(table, 3) == _walk_valid(table)
    if case in ("valid", "null tags (absent)", "null abstained", "judge 1 as integer"):
        assert table_valid(table, 3)
