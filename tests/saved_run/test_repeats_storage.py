"""A repeated run (issue 34): R generations per question in one saved run, JSON and Parquet.

The oracle of R = 1 is the writer before repeats existed: the SHA-256 of the JSON and
Parquet files it wrote for ``R1_DOC`` (computed with the code of the commit before this
test was added, same locked pyarrow).  The oracle of a repeated run's values is the document
written by hand here: ``repeat_outcomes`` and ``repeat(r)`` must give back what it holds.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ragaudit.cli import main as cli
from ragaudit.data.records import load_saved_run, write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import FormatError, InputError

from .conftest import model_shape

R1_DOC = {"name": "x", "config": {"k": 1, "seed": 3}, "rows": [
    {"id": "q1", "retrieved": [{"chunk_id": "a#0", "doc_id": "a", "score": 1.5, "rank": 1}],
     "answer": "a", "judges": {"correct": True}, "latency_ms": {"generate": 2.5},
     "usage": {"cost_usd": 0.01, "input_tokens": 3},
     "metrics": {"correct": True, "recall@k": 1.0}},
    {"id": "q2", "retrieved": [], "metrics": {"correct": None, "recall@k": 0.0}}]}  # fmt: skip
R1_SHA256 = {
    "json": "fb0927189fe8fa3ea3f6a7f4b40d3df6634d656507485fc86888434b421c66af",
    "parquet": "34905f83c026e4dbd1083054622964039422edc88e188700d2074d9ef0cae32f",
}
RETRIEVED = [{"chunk_id": "a#0", "doc_id": "a", "score": 2.0, "rank": 1},
             {"chunk_id": "b#0", "doc_id": "b", "score": 1.0, "rank": 2}]  # fmt: skip
REPEATED = {"name": "rep", "config": {"k": 1, "seed": 0, "repeats": 3, "repeat_seeds": [0, 0, 0],
                                      "repeat_seed_rule": "unit_seed(seed, id, repeat)"},
    "rows": [
        {"id": "q1", "question": "Who?", "retrieved": RETRIEVED, "answer": "Ada",
         "judges": {"correct": True, "sufficiency": True}, "latency_ms": {"generate": 1.0},
         "metrics": {"correct": True, "answered": 1.0, "recall@k": 1.0},
         "repeats": [
             {"seed": 11, "answer": "Bob", "judges": {"correct": False, "sufficiency": True},
              "latency_ms": {"generate": 2.0}, "usage": {"cost_usd": 0.5},
              "metrics": {"correct": False, "answered": 1.0, "recall@k": 1.0}},
             {"seed": 12, "answer": None, "generation_error": "timeout",
              "metrics": {"correct": None, "answered": None, "recall@k": 1.0}}]},
        {"id": "q2", "question": "When?", "retrieved": [], "answer": "1815",
         "metrics": {"correct": False, "answered": 1.0, "recall@k": 0.0},
         "repeats": [
             {"seed": 21, "retrieved": RETRIEVED[1:], "context_ids": ["b#0"], "answer": "1815",
              "metrics": {"correct": True, "answered": 1.0, "recall@k": 0.0}},
             {"seed": 22, "answer": "no idea", "abstained": True,
              "metrics": {"correct": False, "answered": 0.0, "recall@k": 0.0}}]}]}  # fmt: skip


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_a_run_with_one_generation_is_written_byte_for_byte_as_before(tmp_path, fmt):
    path = tmp_path / f"x.{fmt}"
    write_saved_run(path, SavedRun.from_dict(R1_DOC))
    assert _sha(path) == R1_SHA256[fmt]
    run = load_saved_run(path)
    assert (run.repeats, run.repeat_seeds) == (1, [3])
    assert run.repeat(0) is run
    assert run.repeat_outcomes("correct").tolist()[0] == [1.0]


def test_a_parquet_run_with_one_generation_has_no_repeats_column(tmp_path):
    path = tmp_path / "x.parquet"
    write_saved_run(path, SavedRun.from_dict(R1_DOC))
    assert "repeats" not in pq.ParquetFile(path).schema_arrow.names
    path = tmp_path / "rep.parquet"
    write_saved_run(path, SavedRun.from_dict(REPEATED))
    assert pq.ParquetFile(path).schema_arrow.field("repeats").type == "string"


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_a_repeated_run_reads_back_as_written(tmp_path, fmt):
    path = tmp_path / f"rep.{fmt}"
    write_saved_run(path, SavedRun.from_dict(REPEATED))
    run = load_saved_run(path)
    assert run.repeats == 3 and run.repeat_seeds == [0, 0, 0]
    assert run.rows == SavedRun.from_dict(REPEATED).rows
    assert [row.get("repeats") for row in run.rows] == [r["repeats"] for r in REPEATED["rows"]]


def test_convert_round_trips_a_repeated_run(tmp_path):
    source = tmp_path / "rep.json"
    source.write_text(json.dumps({"format": "ragaudit.run", "format_version": 1, **REPEATED}))
    parquet, back = tmp_path / "rep.parquet", tmp_path / "back.json"
    for a, b in ((source, parquet), (parquet, back)):
        result = CliRunner().invoke(cli, ["convert", str(a), str(b)])
        assert result.exit_code == 0, result.output
    original = load_saved_run(source)
    for other in (parquet, back):
        assert model_shape(load_saved_run(other).replace(path=None)) == model_shape(
            original.replace(path=None)
        )
    assert json.loads(back.read_text())["rows"][1]["repeats"] == REPEATED["rows"][1]["repeats"]


def test_repeat_outcomes_is_the_matrix_written_by_hand():
    run = SavedRun.from_dict(REPEATED)
    nan = math.nan
    expected = {
        "correct": [[1, 0, nan], [0, 1, 0]],
        "answered": [[1, 1, nan], [1, 1, 0]],
        "recall@k": [[1, 1, 1], [0, 0, 0]],
        "sufficiency": [[1, 1, nan], [nan, nan, nan]],  # a judge verdict, not a metric
    }
    for name, matrix in expected.items():
        got = run.repeat_outcomes(name)
        assert got.shape == (2, 3) and got.dtype == float
        np.testing.assert_array_equal(got, np.array(matrix, dtype=float), err_msg=name)
    with pytest.raises(InputError, match="no metric or verdict named 'nope'"):
        run.repeat_outcomes("nope")


def test_repeat_r_is_an_ordinary_run_of_that_generation():
    run = SavedRun.from_dict(REPEATED)
    one, two = run.repeat(1), run.repeat(2)
    assert (one.repeats, one.name, "repeats" not in one.config) == (1, "rep.repeat1", True)
    q1, q2 = one.questions
    assert (q1.answer, q1.question, q1.usage["cost_usd"], q1.judges.get("correct")) == (
        "Bob", "Who?", 0.5, False)  # fmt: skip
    assert [r.doc_id for r in q1.retrieved] == ["a", "b"]  # inherited from repeat 0
    assert [r.doc_id for r in q2.retrieved] == ["b"] and q2.context_ids == ("b#0",)
    assert two.questions[0].generation_error == "timeout" and two.questions[1].abstained
    assert two.questions[0].answer is None and two.questions[0].latency_ms is None
    assert one.summary["n"] == 2 and two.summary["n_generation_errors"] == 1
    np.testing.assert_array_equal(
        np.column_stack([run.repeat(r).metric_column("correct") for r in range(3)]),
        run.repeat_outcomes("correct"),
    )
    for bad in (3, -1, True, "1"):
        with pytest.raises(InputError, match="expected a repeat number from 0 to 2"):
            run.repeat(bad)


def test_the_streamed_reader_checks_the_counts_against_a_header_written_last(tmp_path):
    """``config`` after ``rows``: the batches are read before R is known."""
    doc = copy.deepcopy(REPEATED)
    doc["rows"][1]["repeats"].pop()
    text = json.dumps({"rows": doc["rows"], "format": "ragaudit.run", "format_version": 1,
                       "name": "rep", "config": doc["config"]})  # fmt: skip
    path = tmp_path / "rep.json"
    path.write_text(text)
    with pytest.raises(FormatError, match=r"rows\[1\]\.repeats: expected 2 entries"):
        load_saved_run(path)
    doc["rows"][1]["repeats"].append({"seed": 1})
    path.write_text(
        json.dumps(
            {
                "rows": doc["rows"],
                "format": "ragaudit.run",
                "format_version": 1,
                "name": "rep",
                "config": doc["config"],
            }
        )
    )
    assert load_saved_run(path).repeats == 3
