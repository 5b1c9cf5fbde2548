"""``labels verdicts --only-undecided``: a person decides what the offline judges left undecided."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.labels.grading import UNDECIDED_HOW, GradingSession, undecided_ids


def _run(undecided: tuple[str, ...]) -> SavedRun:
    rows = []
    for i in range(1, 6):
        qid = f"q{i}"
        judges = (
            {"correct": None, "reasons": {"correct": "the reference names beacon; ..."}}
            if qid in undecided
            else {"correct": bool(i % 2)}
        )
        metrics = {"correct": None if qid in undecided else i % 2}
        rows.append({"id": qid, "retrieved": [], "answer": f"a{i}", "judges": judges,
                     "metrics": metrics})  # fmt: skip
    return SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": rows})


def test_only_the_undecided_are_graded_and_resumed(tmp_path: Path) -> None:
    run = _run(("q2", "q5"))
    assert undecided_ids(run) == ["q2", "q5"]
    file = tmp_path / "undecided.jsonl"
    session = GradingSession.open(run, file, only_undecided=True)
    assert sorted(session.order) == ["q2", "q5"]
    answers = iter(["w", "q"])
    session.grade(lambda q: q, ask=lambda *a: next(answers), show=lambda *a: None)
    header = json.loads(file.read_text().splitlines()[0])["sample"]
    assert header["random"] is False and header["how"] == UNDECIDED_HOW and header["of"] == 2
    again = GradingSession.open(run, file)  # the header says it: resumed on the undecided
    assert again.order == session.order and again.to_go == 1
    # the judged (decided) questions are still the default population
    assert len(GradingSession.open(run, tmp_path / "sample.jsonl").order) == 3


def test_a_run_with_nothing_undecided_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no undecided 'correct' verdicts"):
        GradingSession.open(_run(()), tmp_path / "x.jsonl", only_undecided=True)
