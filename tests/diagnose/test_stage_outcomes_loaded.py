"""The funnel's stage outcomes read from a loaded run's columns are those read from its
questions one by one (the oracle: the per-question path, made from the same rows by
``SavedRun.from_dict``), at the run's k and at another, with chunk labels and chunk texts.

The rows are hand-written to reach every branch: an unanswerable question, a generation
error, a failed judge, a judge's own reason, no gold documents, ranks out of file order,
no ``context_ids``, keywords; and runs whose retrieved entries carry extra keys (held as
JSON text) or whose ranks are out of file order (the top k cannot be read from the columns
then).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ragaudit.data.records import load_saved_run, write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.funnel import compute_funnel
from ragaudit.diagnose.stage_outcomes import stage_outcomes


def _entry(doc: str, i: int, rank: int | None = None, **extra) -> dict:
    rank = i + 1 if rank is None else rank
    return {"chunk_id": f"{doc}#{i}", "doc_id": doc, "score": 1.0 / (i + 1), "rank": rank,
            **extra}  # fmt: skip


def _rows(shape: str) -> list[dict]:
    more = {"note": "x"} if shape == "json-text" else {}
    # ranks out of file order send the top k of the whole run to the per-question path
    first, second = (2, 1) if shape == "out-of-order" else (1, 2)
    return [
        {"id": "q1", "gold_docs": ["G"], "keywords": ["leave"], "context_ids": ["G#0"],
         "retrieved": [_entry("G", 0, **more), _entry("X", 1)],
         "judges": {"sufficiency": True, "abstained": False, "correct": True}},
        {"id": "q2", "gold_docs": ["G"], "keywords": ["days"],
         "retrieved": [_entry("X", 0), _entry("G", 1)],
         "judges": {"evidence_in_context": False, "abstained": False, "correct": False}},
        {"id": "q3", "gold_docs": [], "retrieved": [_entry("G", 0)],
         "generation_error": "HTTP 500", "judges": {}},
        {"id": "q4", "gold_docs": ["G"], "context_ids": ["Y#1"],
         "retrieved": [_entry("G", 0, first), _entry("Y", 1, second)],
         "judges": {"abstained": False, "judge_errors": {"correctness": "timeout"},
                    "reasons": {"evidence_in_context": "no context"}}},
        {"id": "u1", "answerable": False, "retrieved": [], "judges": {"abstained": True}},
        {"id": "u2", "answerable": False, "retrieved": [], "judges": {}},
        {"id": "q5", "gold_docs": ["G"], "retrieved": [_entry("G", 0), _entry("G", 1)],
         "judges": {"answer_chunk_in_context": True, "abstained": True}},
    ]  # fmt: skip


TEXTS = {"G#0": "staff get leave", "X#1": "days", "X#0": "x", "G#1": "days of leave",
         "Y#1": "y", "G#2": "g"}  # fmt: skip


def _fields(outcomes) -> list:
    out = []
    for field in dataclasses.fields(outcomes):
        value = getattr(outcomes, field.name)
        out.append(value.tolist() if isinstance(value, np.ndarray) else value)
    return out


@pytest.mark.parametrize("shape", ["struct", "json-text", "out-of-order"])
@pytest.mark.parametrize("suffix", [".json", ".parquet"])
@pytest.mark.parametrize(
    ("k", "answers", "texts"),
    [(2, {}, None), (1, {}, TEXTS), (2, {"q1": {"G#0"}, "q2": {"G#1"}, "q4": {"G#0"}}, None),
     (1, {"q2": {"G#1"}}, TEXTS)],
    ids=["own-k", "other-k-texts", "labels", "labels-other-k"],
)  # fmt: skip
def test_columns_give_the_outcomes_the_questions_give(tmp_path, shape, suffix, k, answers,
                                                      texts):  # fmt: skip
    data = {"name": "r", "config": {"k": 2}, "rows": _rows(shape)}
    in_memory = SavedRun.from_dict(data)
    loaded = load_saved_run(write_saved_run(tmp_path / f"r{suffix}", in_memory).path)
    assert not isinstance(loaded.questions, tuple)  # the column path
    options = dict(resliced=k != 2, answers=answers, chunk_texts=texts, where="r")
    expected = stage_outcomes(list(in_memory.questions), k, **options)
    assert _fields(stage_outcomes(loaded, k, **options)) == _fields(expected)
    assert _fields(stage_outcomes(in_memory, k, **options)) == _fields(expected)


def test_the_funnel_of_a_loaded_run_is_the_funnel_of_its_rows(tmp_path):
    data = {"name": "r", "config": {"k": 2}, "rows": _rows("struct")}
    loaded = load_saved_run(write_saved_run(tmp_path / "r.parquet", SavedRun.from_dict(data)).path)
    got = compute_funnel(loaded, n_resamples=50)
    want = compute_funnel(SavedRun.from_dict(data), n_resamples=50)
    assert got.unanswerable == want.unanswerable
    assert got.unanswerable.n == 1 and got.unanswerable.unjudged_ids == ("u2",)
    assert [s.kept for s in got.stages] == [s.kept for s in want.stages]
    assert got.died == want.died and got.unjudged == want.unjudged
