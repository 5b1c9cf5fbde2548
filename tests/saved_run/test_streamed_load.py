"""The streamed loader reads every file exactly as the whole-document reader does.

``load_saved_run`` streams a file (``data/saved_run/load.py``) and falls back to the old
reader (``parse_saved_run(read_json_file(...))``) at the first doubt.  The oracle is the old
reader: on random documents, written in random JSON layouts and sometimes broken in the text
(a key written twice, a lone surrogate, bad bytes, data after the object, a cut), both give
the same model or the same one-line error.  Tiny text blocks and batches put every boundary
inside keys, strings, numbers and rows.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragaudit.data.formats._source import read_json_file
from ragaudit.data.records import load_saved_run, parse_saved_run
from ragaudit.data.saved_run import load, stream
from ragaudit.exceptions import FormatError

# Each test runs on the JSON file and on the same run converted to Parquet (conftest.py).
pytestmark = pytest.mark.usefixtures("each_format")

ROW = {
    "id": "q1", "question": "Où?", "answerable": True, "reference_answer": "r", "keywords": ["k"],
    "gold_docs": ["D"], "tags": [],
    "retrieved": [{"chunk_id": "D#0", "doc_id": "D", "score": 2.5, "rank": 1},
                  {"chunk_id": "E#0", "doc_id": "E", "score": -1e-7, "rank": 2, "x": {"y": 1}}],
    "context_ids": ["D#0"], "answer": "a \\ \" \u2028 ☃", "abstained": False, "citations": [1],
    "judges": {"correct": True, "abstained": 0, "reasons": {"correct": "why"}},
    "latency_ms": {"total": 3.5}, "generation_error": None, "usage": {"tokens": 3},
    "metrics": {"recall@k": 1.0, "correct": True, "faithfulness": None, "citation_acc": 1},
}  # fmt: skip


def _doc(n: int, variant: int) -> dict:
    rows = []
    for i in range(n):
        row = copy.deepcopy(ROW)
        row["id"] = f"q{i}"
        if variant % 3 == 1:
            row = {"id": row["id"], "retrieved": [], "metrics": {}}
        if variant % 5 == 2 and i == n - 1:
            row["metrics"]["recall@k"] = 3.0  # out of range
        rows.append(row)
    doc = {"format": "ragaudit.run", "format_version": 1, "name": "r",
           "config": {"k": 2, "retrieval_depth": 5}, "rows": rows,
           "summary": {"n_generation_errors": 0}, "extra_key": [1, {"a": None}]}  # fmt: skip
    if variant % 7 == 3:
        doc = {"rows": doc.pop("rows"), **doc}  # rows before config
    return doc


BREAKS = [
    None, None, None,
    ('"answer"', '"answer": 1, "answer"'),  # a key written twice in a row
    ('"name"', '"name": "x", "name"'),  # ... at the top level
    ('"Où?"', '"\\ud800"'),  # a lone surrogate
    ('"Où?"', '"\\ud83d\\ude00"'),  # a valid pair
    ('"k": 2', '"k" : 2'),  # space before a colon
    ('"r"', '"r" }'),  # bad JSON
    ("2.5", "NaN"),
    ("2.5", "1" * 5000),  # an integer too long to convert
    ('"q0"', '"q1"'),  # a repeated id
]  # fmt: skip


def _outcome(read) -> object:
    try:
        run = read()
    except FormatError as exc:
        return str(exc)
    return json.dumps(run.to_dict()), run.path


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(0, 5),
    variant=st.integers(0, 104),
    indent=st.sampled_from([None, 0, 1, 2]),
    ascii_only=st.booleans(),
    broken=st.sampled_from(BREAKS),
    tail=st.sampled_from(["", "\n", " x", "\ufeff"]),
    bom=st.booleans(),
    block=st.integers(1, 40),
    batch=st.integers(1, 3),
)
def test_streamed_and_whole_readers_agree(
    tmp_path, monkeypatch, n, variant, indent, ascii_only, broken, tail, bom, block, batch
):
    monkeypatch.setattr(stream, "_BLOCK", block)
    monkeypatch.setattr(load, "BATCH", batch)
    text = json.dumps(_doc(n, variant), indent=indent, ensure_ascii=ascii_only) + tail
    if broken is not None:
        text = text.replace(*broken, 1)
    path = tmp_path / "run.json"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass"))
    old = _outcome(lambda: parse_saved_run(read_json_file(path), str(path)))
    assert _outcome(lambda: load_saved_run(path)) == old


def test_a_valid_file_is_streamed_not_read_whole(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_doc(3, 0), indent=2), encoding="utf-8")

    def whole(*args):
        raise AssertionError("read whole")

    monkeypatch.setattr("ragaudit.data.records.read_json_file", whole)
    assert [q.id for q in load_saved_run(path).questions] == ["q0", "q1", "q2"]


def test_show_keeps_only_its_questions_and_refuses_a_bad_run_as_every_command_does(tmp_path):
    doc = _doc(4, 0)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert [q.id for q in load_saved_run(path, questions=["q3"]).questions] == ["q3"]
    doc["rows"][1]["metrics"]["recall@k"] = 3.0  # another row is out of range
    path.write_text(json.dumps(doc), encoding="utf-8")
    for only in (["q3"], ["q1"], None):  # the same file, the same message, whatever is shown
        with pytest.raises(FormatError, match=r"rows\[1\]\.metrics\.recall@k: expected a"):
            load_saved_run(path, questions=only)
    path.write_text(json.dumps(doc)[:-1], encoding="utf-8")  # cut: no closing brace
    with pytest.raises(FormatError, match="invalid JSON"):
        load_saved_run(path, questions=["q3"])
    doc["rows"][1]["metrics"]["recall@k"] = 1.0
    doc["rows"][2]["id"] = "q3"  # a repeated id is refused even when it is not shown
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FormatError, match="duplicate question id"):
        load_saved_run(path, questions=["q0"])


def test_an_unknown_question_returns_the_whole_run(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_doc(2, 0)), encoding="utf-8")
    assert len(load_saved_run(path, questions=["nope"]).questions) == 2
