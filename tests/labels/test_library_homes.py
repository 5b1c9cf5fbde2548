"""What the CLI used to do itself, now library calls (issue 23): the checks they make.

Expected messages are written by hand from the command-line behaviour they replace.
"""

from __future__ import annotations

import json

import pytest

from ragaudit.data.records import write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import FormatError, InputError
from ragaudit.labels.format import Chunking, ChunkLabels, QuestionLabels
from ragaudit.labels.heuristic import HeuristicLabeller
from ragaudit.pipeline.labelling import fill_labels_file
from ragaudit.pipeline.replay import check_saved_run


def _labels(*chunk_ids: str) -> ChunkLabels:
    question = QuestionLabels("Q?", ["D"], len(chunk_ids), list(chunk_ids), [], "heuristic")
    return ChunkLabels(Chunking("fixed", 800, 100), "heuristic", {"q1": question})


ROWS = [{"id": "q1", "retrieved": [{"chunk_id": "c1", "doc_id": "D"}]}]


@pytest.mark.parametrize(
    ("corpus_hint", "hint"),
    [(True, "; if the run only missed them, pass --corpus to check the whole chunking"),
     (False, "")],
)  # fmt: skip
def test_check_run_ids_against_the_chunks_the_run_retrieved(corpus_hint, hint):
    _labels("c1").check_run_ids(ROWS)  # known: passes
    with pytest.raises(InputError) as caught:
        _labels("x1", "x2").check_run_ids(ROWS, corpus_hint=corpus_hint)
    message = str(caught.value)
    assert "2 of 2 labelled chunk ids are not among the chunks this run retrieved" in message
    assert message.endswith(hint) if hint else "pass --corpus" not in message


def test_check_run_ids_against_the_corpus_chunking_when_given():
    _labels("x1").check_run_ids(ROWS, {"x1": "text"})  # the corpus knows x1: passes
    with pytest.raises(InputError, match="are not chunks of the run's corpus and chunking"):
        _labels("c1").check_run_ids(ROWS, {"x1": "text"})


def test_fill_refuses_to_write_over_an_input(tmp_path):
    run = tmp_path / "r.json"
    run.write_text("{}")
    with pytest.raises(InputError, match=r"^--out .*r\.json: would overwrite an input"):
        fill_labels_file([run], tmp_path / "l.yaml", tmp_path, run, HeuristicLabeller())


def test_check_saved_run_rewrites_with_the_summary_and_refuses_its_input(tmp_path):
    path = tmp_path / "in" / "r.json"
    path.parent.mkdir()
    saved = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": ROWS})
    write_saved_run(path, saved)
    checked = check_saved_run(path)
    assert checked.target is None and checked.summary["n"] == 1
    written = check_saved_run(path, tmp_path / "out")
    assert written.target == tmp_path / "out" / "r.json"
    assert json.loads(written.target.read_text())["summary"]["n"] == 1
    with pytest.raises(InputError):
        check_saved_run(path, path.parent)  # <in>/r.json is the input itself
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(FormatError):
        check_saved_run(tmp_path / "bad.json")
