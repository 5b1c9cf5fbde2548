import copy
import json
import os

import jsonschema
import pytest

from ragaudit.data.records import (
    Checkpoint,
    find_problems,
    load_saved_run,
    per_question_metrics,
    saved_run_schema,
    validate_saved_run,
    write_saved_run,
)
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import FormatError, InputError

VALID = {
    "format": "ragaudit.run",
    "format_version": 1,
    "name": "k3_cs800",
    "config": {"k": 3, "retrieval_depth": 20, "chunker": "fixed", "seed": 0},
    "rows": [
        {
            "id": "q1",
            "question": "How many days?",
            "answerable": True,
            "reference_answer": "25 days",
            "keywords": ["25 days"],
            "gold_docs": ["leave"],
            "retrieved": [{"chunk_id": "c1", "doc_id": "leave", "score": 2.5, "rank": 1}],
            "context_ids": ["c1"],
            "answer": "25 days [1].",
            "judges": {"abstained": False, "correct": True},
            "metrics": {"hit@k": 1.0, "correct": True, "faithfulness": None},
            "latency_ms": {"total": 1.5},
            "generation_error": None,
            "my_extra_field": {"kept": True},
        }
    ],
    "summary": {"n": 1},
}


def broken(path, value):
    doc = copy.deepcopy(VALID)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


CASES = [
    (
        ("rows", 0, "retrieved", 0, "chunk_id"),
        12,
        "rows[0].retrieved[0].chunk_id: expected a string, found 12 (question 'q1')",
    ),
    (
        ("rows", 0, "answerable"),
        "yes",
        "rows[0].answerable: expected a boolean, found \"yes\" (question 'q1')",
    ),
    (
        ("rows", 0, "metrics", "hit@k"),
        "1.0",
        'rows[0].metrics.hit@k: expected a number or a boolean or null, found "1.0" '
        "(question 'q1')",
    ),
    (("config", "k"), 0, "config.k: expected a value >= 1, found 0"),
    (("config", "k"), True, "config.k: expected an integer, found true"),
    (("format_version",), 2, "format_version: expected 1, found 2"),
    (("rows", 0, "id"), KeyError, "rows[0]: missing required key 'id'"),
    (
        ("rows", 0, "retrieved", 0, "rank"),
        0,
        "rows[0].retrieved[0].rank: expected a value >= 1, found 0 (question 'q1')",
    ),
    (("rows",), {}, "rows: expected an array, found an object"),
    (("name",), "", 'name: expected a non-empty string, found ""'),
]


def test_valid_document_has_no_problems_and_agrees_with_jsonschema():
    assert find_problems(VALID) == []
    jsonschema.Draft202012Validator.check_schema(saved_run_schema())
    jsonschema.validate(VALID, saved_run_schema())


@pytest.mark.parametrize(("path", "value", "message"), CASES)
def test_problems_are_located_exactly_and_jsonschema_agrees(path, value, message):
    doc = broken(path, value)
    assert find_problems(doc) == [message]
    # The schema file itself must reject the same document (our validator interprets it).
    assert not jsonschema.Draft202012Validator(saved_run_schema()).is_valid(doc)


def test_duplicate_row_ids_are_reported():
    doc = copy.deepcopy(VALID)
    doc["rows"].append(copy.deepcopy(doc["rows"][0]))
    assert find_problems(doc) == ["rows[1].id: duplicate question id 'q1' (also rows[0])"]


def test_validate_names_the_file_and_counts_the_rest():
    doc = broken(("rows", 0, "retrieved", 0, "chunk_id"), 12)
    doc["rows"][0]["answer"] = 5
    with pytest.raises(
        FormatError,
        match=r"^run\.json: rows\[0\]\.retrieved\[0\]\.chunk_id: expected a string, found 12 "
        r"\(question 'q1'\) \(and 1 more problems\)$",
    ):
        validate_saved_run(doc, path="run.json")


def test_round_trip_preserves_unknown_keys(tmp_path):
    doc = copy.deepcopy(VALID)
    doc["producer"] = "my-pipeline"
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    saved = load_saved_run(path)
    assert saved.extra == {"producer": "my-pipeline"} and saved.rows[0]["my_extra_field"] == {
        "kept": True
    }
    write_saved_run(tmp_path / "again.json", saved)
    assert json.loads((tmp_path / "again.json").read_text(encoding="utf-8")) == doc
    assert per_question_metrics(saved) == {
        "q1": {"hit@k": 1.0, "correct": 1.0, "faithfulness": None}
    }


def test_load_reports_json_syntax_errors_with_line(tmp_path):
    path = tmp_path / "run.json"
    path.write_text('{\n  "format": "ragaudit.run",\n  oops\n}', encoding="utf-8")
    with pytest.raises(FormatError, match=r"run\.json:3: invalid JSON"):
        load_saved_run(path)


def test_invalid_run_is_never_written_and_old_file_survives(tmp_path):
    path = tmp_path / "run.json"
    write_saved_run(path, SavedRun.from_dict(VALID))
    before = path.read_bytes()
    bad = SavedRun.from_dict(VALID).replace(config={"k": -1})
    with pytest.raises(FormatError, match=r"config\.k: expected a value >= 1"):
        write_saved_run(path, bad)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["run.json"]  # no temporary file left behind


def test_write_is_atomic_under_interruption(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    write_saved_run(path, SavedRun.from_dict(VALID))
    before = path.read_bytes()

    def explode(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", explode)
    changed = SavedRun.from_dict(VALID).replace(name="other")
    with pytest.raises(KeyboardInterrupt):
        write_saved_run(path, changed)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["run.json"]


def test_checkpoint_resumes_and_drops_a_truncated_last_line(tmp_path):
    sidecar = Checkpoint(tmp_path / "k3.partial.jsonl")
    assert sidecar.resume({"k": 3}) == {}
    sidecar.append({"id": "q1", "answer": "a"})
    sidecar.append({"id": "q2", "answer": "b"})
    with open(sidecar.path, "a", encoding="utf-8") as handle:
        handle.write('{"id": "q3", "ans')  # the process died mid-write
    done = Checkpoint(sidecar.path).resume({"k": 3})
    assert list(done) == [("q1", 0), ("q2", 0)]
    sidecar.append({"id": "q3", "answer": "c"})
    sidecar.append({"id": "q3", "repeat": 1, "seed": 5, "answer": "d"})  # a repeated run's
    assert list(Checkpoint(sidecar.path).resume({"k": 3})) == [
        ("q1", 0), ("q2", 0), ("q3", 0), ("q3", 1)]  # fmt: skip
    sidecar.remove()
    assert not sidecar.path.exists()


def test_a_checkpoint_of_another_configuration_is_refused_and_kept(tmp_path):
    # Issue 32 item 7: a k=3 call used to replace a k=5 checkpoint with its own header.
    config = {"k": 5, "retrieval_depth": 20, "pipeline_config": {"model": "a", "t": 0}}
    sidecar = Checkpoint(tmp_path / "my_rag.partial.jsonl")
    sidecar.resume(config)
    for i in range(40):
        sidecar.append({"id": f"q{i}", "answer": "x"})
    before = sidecar.path.read_bytes()
    other = {"k": 3, "retrieval_depth": 20, "pipeline_config": {"model": "b", "t": 0}}
    with pytest.raises(InputError) as caught:
        Checkpoint(sidecar.path).resume(other)
    message = str(caught.value)
    assert message.startswith(f"{sidecar.path}: a checkpoint of another configuration (40 ")
    assert "k is 5 there, 3 now" in message
    assert 'pipeline_config.model is "a" there, "b" now' in message
    assert "retrieval_depth" not in message and "pipeline_config.t" not in message
    assert "another name or output directory" in message and "delete" in message
    assert sidecar.path.read_bytes() == before
    assert len(Checkpoint(sidecar.path).resume(config)) == 40  # and it still resumes


def test_a_key_present_on_one_side_only_is_named(tmp_path):
    sidecar = Checkpoint(tmp_path / "r.partial.jsonl")
    sidecar.resume({"k": 3})
    with pytest.raises(InputError, match=r"seed is absent there, 7 now"):
        Checkpoint(sidecar.path).resume({"k": 3, "seed": 7})
    with pytest.raises(InputError, match=r"k is 3 there, 3.0 now"):
        Checkpoint(sidecar.path).resume({"k": 3.0})


@pytest.mark.parametrize(
    "content",
    [b"my notes\n", b'{"id": "q1"}\n', b'{"checkpoint": "other-format/9", "config": {}}\n'],
    ids=["text", "a-row-first", "another-format"],
)
def test_a_file_that_is_not_our_checkpoint_is_refused_and_kept(tmp_path, content):
    path = tmp_path / "r.partial.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"r.partial.jsonl: expected a ragaudit checkpoint"):
        Checkpoint(path).resume({"k": 3})
    assert path.read_bytes() == content
