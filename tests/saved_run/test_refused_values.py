"""Values of the wrong type or out of range are refused, never coerced (issue 32, items 8, 10
and 11): one line naming the file, the row and the field, exit 2, from JSON and from Parquet.

The rows were written by hand from the issue's list (adversarial pass 3), before the schema
was changed to refuse them; the expected words are the schema's own (``x-expected``).  The
Parquet file of each case holds the bad value in the column's JSON-text form (the only form
in which a Parquet column can hold a value of another type); a case whose column has a fixed
Arrow type cannot arise in Parquet, and the type check of the columns is tested on its own.
"""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import load_saved_run
from ragaudit.data.saved_run.parquet import HEADER_KEY
from ragaudit.data.saved_run.table import JSON_TEXT, rows_to_table
from ragaudit.exceptions import FormatError

# the question's own keys, each with a value of its right type, inside a repeats entry
QUESTION_LEVEL = [("gold_docs", ["x"]), ("reference_answer", "x"), ("keywords", ["x"]),
                  ("id", "q9"), ("answerable", False), ("question", "Why?"), ("tags", ["t"]),
                  ("repeats", [])]  # fmt: skip
EXPECTED_COST = "a non-negative amount in US dollars below 1,000,000 or null"
CASES = [
    ("tags", "abc", "rows[1].tags", "an array of strings or null"),
    ("tags", 7, "rows[1].tags", "an array of strings or null"),
    ("citations", "12", "rows[1].citations", "an array of integers"),
    ("citations", 3, "rows[1].citations", "an array of integers"),
    ("usage", [["cost_usd", 0.5]], "rows[1].usage", "an object or null"),
    ("usage", "0.01", "rows[1].usage", "an object or null"),
    ("usage", 5, "rows[1].usage", "an object or null"),
    ("latency_ms", {"total": -3.0}, "rows[1].latency_ms.total", "a non-negative number"),
    ("usage", {"cost_usd": -0.5}, "rows[1].usage.cost_usd", EXPECTED_COST),
    ("usage", {"cost_usd": True}, "rows[1].usage.cost_usd", EXPECTED_COST),
    ("usage", {"cost_usd": "0.5"}, "rows[1].usage.cost_usd", EXPECTED_COST),
    ("usage", {"cost_usd": "free"}, "rows[1].usage.cost_usd", EXPECTED_COST),
    ("usage", {"cost_usd": [1]}, "rows[1].usage.cost_usd", EXPECTED_COST),
    ("usage", {"cost_usd": 1e308}, "rows[1].usage.cost_usd", EXPECTED_COST),
    ("usage", {"cost_usd": math.inf}, "rows[1].usage.cost_usd", EXPECTED_COST),
    ("usage", {"cost_usd": math.nan}, "rows[1].usage.cost_usd", EXPECTED_COST),
    ("usage", {"input_tokens": -1}, "rows[1].usage.input_tokens", "a value >= 0"),
    # a repeated run's generations 1 .. R-1 (issue 34)
    ("repeats", "abc", "rows[1].repeats", "an array of objects"),
    ("repeats", {"seed": 1}, "rows[1].repeats", "an array of objects"),
    ("repeats", [{"answer": 3}], "rows[1].repeats[0].answer", "a string or null"),
    ("repeats", [{"seed": "7"}], "rows[1].repeats[0].seed", "an integer or null"),
    ("repeats", [{"seed": 1.5}], "rows[1].repeats[0].seed", "an integer or null"),
    (
        "repeats",
        [{"latency_ms": {"g": -1}}],
        "rows[1].repeats[0].latency_ms.g",
        "a non-negative number",
    ),
    ("repeats", [{"usage": {"cost_usd": -1}}], "rows[1].repeats[0].usage.cost_usd", EXPECTED_COST),
    (
        "repeats",
        [{"metrics": {"recall@k": 3}}],
        "rows[1].repeats[0].metrics.recall@k",
        "a number between 0 and 1",
    ),
    (
        "repeats",
        [{"retrieved": [{"doc_id": "a"}]}],
        "rows[1].repeats[0].retrieved[0]",
        "missing required key",
    ),
    ("repeats", [{"seed": 1}], "rows[1].repeats", "no entries (config.repeats is absent"),
    # the question's keys are never repeated: an entry's own would override the question's
    *(
        (
            "repeats",
            [{"seed": 1, key: value}],
            f"rows[1].repeats[0].{key}",
            "only per-generation keys in a repeat",
        )
        for key, value in QUESTION_LEVEL
    ),
]


def _rows(key, value):
    good = {"id": "q1", "retrieved": [{"chunk_id": "a#0", "doc_id": "a"}]}
    return [good, {"id": "q2", "retrieved": [], key: value}]


HEADER = {"format": "ragaudit.run", "format_version": 1, "name": "r", "config": {"k": 1}}


def _json_file(tmp_path, key, value):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({**HEADER, "rows": _rows(key, value)}), encoding="utf-8")
    return path


def _parquet_file(tmp_path, key, value):
    """The run of ``_rows`` as Parquet, the bad value as the JSON text of its column."""
    rows = _rows(key, None)
    table = rows_to_table(rows)
    text = pa.array([None, json.dumps(value)], pa.string())
    table = table.set_column(table.column_names.index(key), key, text)
    path = tmp_path / "run.parquet"
    meta = {HEADER_KEY: json.dumps(HEADER)}
    pq.write_table(table.replace_schema_metadata(meta), path)
    return path


@pytest.mark.parametrize("fmt", ["json", "parquet"])
@pytest.mark.parametrize(("key", "value", "field", "expected"), CASES)
def test_a_bad_value_is_refused_naming_file_row_and_field(tmp_path, fmt, key, value, field,
                                                          expected):  # fmt: skip
    if fmt == "parquet" and key not in JSON_TEXT:
        pytest.skip(f"{key} has a fixed Arrow type: the value cannot be written in Parquet")
    path = (_json_file if fmt == "json" else _parquet_file)(tmp_path, key, value)
    with pytest.raises(FormatError) as raised:
        load_saved_run(path)
    message = str(raised.value)
    head = f"{path}: {field}: " + ("" if expected.startswith("missing") else "expected ")
    assert message.startswith(head + expected), message
    assert message.endswith("(question 'q2')") and "\n" not in message
    result = CliRunner().invoke(main, ["funnel", str(path)])
    assert (result.exit_code, result.output) == (2, f"ragaudit: error: {message}\n")


@pytest.mark.parametrize(("key", "value", "field", "expected"), CASES)
def test_json_and_parquet_word_a_bad_value_alike(tmp_path, key, value, field, expected):
    if key not in JSON_TEXT:
        pytest.skip(f"{key} has a fixed Arrow type")
    messages = []
    for make in (_json_file, _parquet_file):
        path = make(tmp_path, key, value)
        with pytest.raises(FormatError) as raised:
            load_saved_run(path)
        messages.append(str(raised.value).removeprefix(f"{path}: "))
    assert messages[0] == messages[1]


def test_a_column_of_another_type_is_refused_by_name(tmp_path):
    table = rows_to_table(_rows("tags", ["x"]))
    table = table.set_column(table.column_names.index("tags"), "tags", pa.array(["abc", "d"]))
    path = tmp_path / "run.parquet"
    pq.write_table(table.replace_schema_metadata({HEADER_KEY: json.dumps(HEADER)}), path)
    with pytest.raises(FormatError, match=r"run\.parquet: tags: expected a column of type "
                                          r"list<item: string>, found string"):  # fmt: skip
        load_saved_run(path)


@pytest.mark.parametrize("junk", [b"", b"PAR1 not parquet", b'{"format": "ragaudit.run"}'])
def test_a_file_that_is_not_parquet_is_one_line(tmp_path, junk):
    path = tmp_path / "run.parquet"
    path.write_bytes(junk)
    result = CliRunner().invoke(main, ["funnel", str(path)])
    assert result.exit_code == 2
    assert result.output.startswith(f"ragaudit: error: {path}: not a readable Parquet file")
    assert result.output.count("\n") == 1


def test_a_parquet_file_without_the_header_is_refused(tmp_path):
    path = tmp_path / "run.parquet"
    pq.write_table(rows_to_table(_rows("tags", ["x"])), path)
    with pytest.raises(FormatError, match="without the saved-run header"):
        load_saved_run(path)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("g.yaml", "- id: q1\n  question: What?\n  answer: x\n  sources: [a]\n  tags: numeric\n"),
        ("g.jsonl", '{"id": "q1", "question": "What?", "answer": "x", "sources": ["a"], '
                    '"tags": "numeric"}\n'),
    ],
)  # fmt: skip
def test_a_golden_tag_string_is_refused_not_split_into_letters(tmp_path, name, text):
    """``tags: "numeric"`` in a golden set (issue 32 item 8: `--cluster-by tag` saw one
    cluster "n"); the saved run's tags are refused by the table above."""
    from ragaudit.data.golden import load_golden

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match=r":\d+: tags: question 'q1': expected a list of strings"):
        load_golden(path)
