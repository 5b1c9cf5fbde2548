"""Every answerable question lands in exactly one place of the funnel (issue 20, part 1).

The runs are built by hand; each expected count is read off the rows by hand and written
next to the assertion.
"""

from __future__ import annotations

import pytest

from ragaudit.data.records import as_saved_run
from ragaudit.data.saved_run.summary import end_to_end_correct
from ragaudit.diagnose.funnel import STAGE_KEYS, compute_funnel
from ragaudit.reports.funnel import funnel_report
from ragaudit.reports.renderer import render


def row(qid, *, doc="G", evidence=True, abstained=False, correct=True, answerable=True, **more):
    judges = {"abstained": abstained, "correct": correct, "evidence_in_context": evidence}
    judges.update(more)
    return {
        "id": qid,
        "answerable": answerable,
        "gold_docs": ["G"] if answerable else [],
        "retrieved": [{"chunk_id": f"{doc}#0", "doc_id": doc, "rank": 1}],
        "judges": judges,
    }


def run(rows):
    return {"name": "hand", "config": {"k": 1}, "rows": rows}


def places_partition(f):
    """Every answerable id, once: died, ok or unjudged."""
    ids = [qid for key in STAGE_KEYS for qid in f.died[key]]
    ids += list(f.ok_ids) + [u.id for u in f.unjudged]
    return ids


def test_a_question_whose_gold_document_was_not_retrieved_is_1_retrieval_whatever_follows():
    # q2: hit@1 = 0 with no evidence verdict and a right answer: still 1-retrieval (and lucky)
    # q3: hit@1 = 0 with no verdict at all: still 1-retrieval, never unjudged
    rows = [
        row("q1"),
        row("q2", doc="X", evidence=None, correct=True),
        row("q3", doc="X", evidence=None, abstained=None, correct=None),
    ]
    f = compute_funnel(run(rows), n_resamples=20)
    assert f.died["1-retrieval"] == ("q2", "q3")
    assert f.unjudged == ()
    assert f.lucky == ("q2",)
    assert f.stages[0].kept == 1  # 1 of 3 retrieved the gold document
    assert (f.correct.count, f.correct.n) == (2, 3)  # q1, q2; q3 unjudged for correctness
    assert dict(f.correct.unjudged) == {"q3": "no correctness verdict"}


def test_unjudged_questions_stay_in_every_denominator_and_rates_are_lower_bounds():
    # 5 answerable: q1 ok, q2 dies at 3 (refused), q3 unjudged at 2 answered right,
    # q4 unjudged at 2 answered wrong, q5 dies at 1; u1 unanswerable refused.
    rows = [
        row("q1"),
        row("q2", abstained=True, correct=False),
        row("q3", evidence=None, correct=True, reasons={"evidence_in_context": "no fact"}),
        row("q4", evidence=None, correct=False),
        row("q5", doc="X", evidence=False, correct=False),
        row("u1", answerable=False, abstained=True, correct=True, evidence=None),
    ]
    f = compute_funnel(run(rows), n_resamples=20)
    assert f.n == 5
    assert sorted(places_partition(f)) == ["q1", "q2", "q3", "q4", "q5"]
    # kept: stage 1 = 4 (q1-q4); stage 2 = q1, q2 decided passes; stage 3 = q1; stage 4 = q1
    assert [s.kept for s in f.stages] == [4, 2, 1, 1]
    assert f.stages[1].conditional == pytest.approx(2 / 4)  # unjudged count, not passed
    assert f.p_correct == pytest.approx(1 / 5)
    # correct end to end: q1 and q3 (unjudged at stage 2 but judged correct) = 2/5
    assert (f.correct.count, f.correct.n) == (2, 5)
    assert f.correct_end_to_end == pytest.approx(2 / 5)
    assert [(u.id, u.reason, u.correct) for u in f.unjudged] == [
        ("q3", "no evidence-in-context verdict: no fact", True),
        ("q4", "no evidence-in-context verdict", False),
    ]
    # a question answered correctly is never a failure; the unjudged wrong one is
    assert set(f.failure_ids()) == {"q2", "q4", "q5"}
    places = f.places()
    assert places["q3"] == (
        "unjudged at 2-evidence, answered correctly: no evidence-in-context verdict: no fact"
    )
    assert places["q5"] == "1-retrieval" and places["q1"] == "ok"
    assert places["u1"] == "unanswerable, refused"


def test_the_report_names_the_unjudged_row_and_the_way_out_in_every_format():
    rows = [row("q1"), row("q2", evidence=None)]
    report = funnel_report(compute_funnel(run(rows), n_resamples=20))
    text = render(report, "table")
    expected = "\n  unjudged         1  q2 (2-evidence)  no judge decided: give the question"
    assert expected in text
    assert "end-to-end correct:             2/2 = 1.000" in text
    assert "run the LLM judges (ragaudit run --judges llm" in text
    md = render(report, "markdown")
    assert "| unjudged | 1 | q2 (2-evidence) |" in md
    data = report.data
    assert data["unjudged"] == [
        {"id": "q2", "stage": "2-evidence", "reason": "no evidence-in-context verdict",
         "correct": True}
    ]  # fmt: skip
    assert data["correct"]["count"] == 2 and data["correct"]["n"] == 2


def test_the_funnel_counts_correct_with_the_one_definition():
    rows = [
        row("q1"),
        row("q2", evidence=None, correct=None),
        row("q3", doc="X", evidence=False, correct=True),
        row("u1", answerable=False, abstained=False, correct=False, evidence=None),
    ]
    f = compute_funnel(run(rows), n_resamples=20)
    one = end_to_end_correct(as_saved_run(run(rows)).questions)
    # q1 and q3 right, q2 unjudged, u1 not answerable: 2 of 3
    assert (one.count, one.n) == (2, 3) == (f.correct.count, f.correct.n)
    assert f.correct_end_to_end == one.rate == pytest.approx(2 / 3)


def test_every_question_unjudged_leaves_correctness_undefined_not_zero():
    rows = [row("q1", evidence=None, correct=None), row("q2", evidence=None, correct=None)]
    f = compute_funnel(run(rows), n_resamples=20)
    assert f.n == 2 and f.correct_end_to_end is None and f.p_correct is None
    assert "all 2 answerable questions are unjudged" in (f.undefined_reason or "")
    text = render(funnel_report(f), "table")
    assert "P(correct) = undefined: all 2 answerable questions are unjudged" in text
