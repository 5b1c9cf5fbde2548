"""One saved-run loader: `import`, `compare` and `funnel` accept and reject the same files,
with the same message, and metric values outside their range name the question and field."""

from __future__ import annotations

import copy
import json
import math

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import load_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import FormatError

# Each test runs on the JSON file and on the same run converted to Parquet (conftest.py).
pytestmark = pytest.mark.usefixtures("each_format")

VALID = {
    "format": "ragaudit.run",
    "format_version": 1,
    "name": "ext",
    "config": {"k": 2, "judges": "offline"},
    "rows": [
        {
            "id": f"q{i}",
            "question": "?",
            "answerable": True,
            "gold_docs": ["d"],
            "retrieved": [{"chunk_id": "d#0", "doc_id": "d", "rank": 1}],
            "judges": {"abstained": False, "correct": True, "evidence_in_context": True},
            "metrics": {"recall@k": 1.0, "correct": True},
        }
        for i in range(4)
    ],
}


def _set(doc, path, value):
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


# (where, bad value, the location and expectation the message must state)
BROKEN = [
    (("format_version",), 2, "format_version: expected 1, found 2"),
    (("format",), "other", 'format: expected "ragaudit.run", found "other"'),
    (("config", "k"), 0, "config.k: expected a value >= 1, found 0"),
    (("config", "judges"), "oops", None),  # a valid string: accepted by both (see below)
    (("config", "judges"), 3, "config.judges: expected a string or null, found 3"),
    (("rows", 2, "metrics", "recall@k"), math.nan, "rows[2].metrics.recall@k: expected a finite"),
    (
        ("rows", 2, "metrics", "recall@k"),
        7.5,
        "rows[2].metrics.recall@k: expected a number between 0 and 1 or null, found 7.5 "
        "(question 'q2')",
    ),
    (
        ("rows", 1, "metrics", "correct"),
        3,
        "rows[1].metrics.correct: expected 0, 1, true, false or null, found 3 (question 'q1')",
    ),
    (
        ("rows", 1, "metrics", "chunk_ndcg@k"),
        -0.5,
        "rows[1].metrics.chunk_ndcg@k: expected a number between 0 and 1 or null, found -0.5",
    ),
    (
        ("rows", 3, "judges", "correct"),
        "yes",
        "rows[3].judges.correct: expected true, false, 0, 1 or null, found \"yes\" (question 'q3')",
    ),
    (("rows", 0, "judges"), "oops", 'rows[0].judges: expected an object, found "oops"'),
    (("rows", 0, "answerable"), "no", 'rows[0].answerable: expected a boolean, found "no"'),
]


def _write(tmp_path, doc, name="run.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc, allow_nan=True), encoding="utf-8")
    return path


def _invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


@pytest.mark.parametrize(("where", "value", "message"), BROKEN)
def test_compare_and_funnel_reject_what_import_rejects_with_the_same_message(
    tmp_path, where, value, message
):
    bad = _write(tmp_path, _set(copy.deepcopy(VALID), where, value), "bad.json")
    good = _write(tmp_path, VALID, "good.json")
    code_import, out_import = _invoke("import", bad)
    code_compare, out_compare = _invoke("compare", good, bad, "--resamples", "50")
    code_funnel, out_funnel = _invoke("funnel", bad, "--resamples", "50")
    if message is None:  # accepted everywhere
        assert (code_import, code_compare, code_funnel) == (0, 0, 0)
        return
    assert code_import == code_compare == code_funnel == 2
    assert out_import.startswith(f"ragaudit: error: {bad}: {message}")
    assert out_compare == out_import
    assert out_funnel == out_import


def test_out_of_range_metric_names_question_and_field_in_the_loader(tmp_path):
    doc = _set(copy.deepcopy(VALID), ("rows", 2, "metrics", "recall@k"), 7.5)
    with pytest.raises(FormatError) as caught:
        load_saved_run(_write(tmp_path, doc))
    assert caught.value.field == "rows[2].metrics.recall@k"
    assert "found 7.5 (question 'q2')" in str(caught.value)


def test_flat_metric_files_are_range_checked_too(tmp_path):
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"q1": {"correct": 3}}), encoding="utf-8")
    code, out = _invoke("compare", flat, flat)
    assert code == 2
    assert out == (
        f"ragaudit: error: {flat}: correct: question 'q1': expected 0, 1, true, false or null, "
        "found 3\n"
    )


def test_optional_fields_take_their_documented_defaults():
    run = SavedRun.from_dict({"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": []}]})
    question = run.questions[0]
    assert question.answerable is True and question.question == ""
    assert dict(question.metrics) == {} and dict(question.judges) == {}
    assert question.gold_docs == () and question.keywords == () and question.context_ids is None
    assert (
        question.answer is None
        and question.generation_error is None
        and question.latency_ms is None
    )
    assert run.name == ""


def test_old_metric_name_is_read_under_its_current_spelling():
    run = SavedRun.from_dict(
        {
            "config": {"k": 1},
            "rows": [{"id": "q1", "retrieved": [], "metrics": {"citation_acc": 1}}],
        }
    )
    assert dict(run.questions[0].metrics) == {"citation_accuracy": 1}


def test_the_model_is_frozen_and_round_trips(tmp_path):
    path = _write(tmp_path, VALID)
    run = load_saved_run(path)
    with pytest.raises(AttributeError):
        run.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        run.questions[0].metrics["correct"] = False  # type: ignore[index]
    assert SavedRun.from_dict(run.to_dict(), path=str(path)) == run
    # written back, the optional fields appear with their defaults
    row = run.to_dict()["rows"][0]
    assert (row["reference_answer"], row["keywords"], row["generation_error"]) == (None, [], None)
