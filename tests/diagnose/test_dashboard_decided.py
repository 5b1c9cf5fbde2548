"""The dashboard shows the decided share beside each judged number (issue 31, item 4).

Four answerable questions by hand: q1, q2 judged correct, q3 wrong, q4 left undecided by the
offline judge (``correct`` null with its reason).  Correctness is 2/4 (an undecided verdict is
never correct) with ``decided 3/4``; faithfulness and over-refusal rest on verdicts all four
have (``decided 4/4``); retrieval numbers carry no decided share.
"""

from __future__ import annotations

from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.audit import build_audit
from ragaudit.reports.audit_tables import dashboard_table


def _row(qid: str, correct: bool | None) -> dict:
    judges = {"correct": correct, "evidence_in_context": True, "faithfulness": 1.0,
              "abstained": False}  # fmt: skip
    if correct is None:
        judges["reasons"] = {"correct": "the reference names beacon; the answer does not"}
    return {
        "id": qid, "question": f"{qid}?", "answerable": True, "reference_answer": "r",
        "gold_docs": ["d"], "answer": "a", "abstained": False,
        "retrieved": [{"chunk_id": "d#0", "doc_id": "d", "rank": 1}], "context_ids": ["d#0"],
        "judges": judges,
        "metrics": {"recall@k": 1.0, "correct": None if correct is None else float(correct),
                    "faithfulness": 1.0, "evidence_in_context": 1.0},
    }  # fmt: skip


def test_decided_share_beside_judged_numbers() -> None:
    rows = [_row("q1", True), _row("q2", True), _row("q3", False), _row("q4", None)]
    run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": rows})
    audit = build_audit([run], n_resamples=20, compare_resamples=20)
    dashboard = {row.key: row for row in audit.runs[0].dashboard}
    assert (dashboard["correct"].count, dashboard["correct"].n) == (2, 4)
    assert dashboard["correct"].decided == (3, 4)
    assert dashboard["faithfulness"].decided == (4, 4)
    assert dashboard["over_refusal"].decided == (4, 4)
    assert dashboard["recall_doc"].decided is None
    data = {row["key"]: row for row in audit.to_dict()["runs"][0]["dashboard"]}
    assert data["correct"]["decided"] == {"n": 3, "of": 4}
    assert data["recall_doc"]["decided"] is None
    text = "\n".join(" ".join(map(str, r)) for r in dashboard_table(audit).rows)
    assert "2/4 decided 3/4" in text
