"""Stage outcomes read from the judges' columns equal the per-question rule.

The oracle is the rule as written per question: stage 2 from the first of the sufficiency,
evidence-in-context and answer-chunk-in-context verdicts that decides
(:class:`~ragaudit.data.saved_run.Judgments` properties), stage 3 from ``abstained`` unless
the generation failed, stage 4 and its reason from
:func:`~ragaudit.data.saved_run.summary.correct_verdict`, for every combination of verdicts,
failed judges and generation errors, on a run whose questions share their judges' keys (the
columns' fast path) and on one whose keys differ.
"""

from __future__ import annotations

from itertools import product

import pytest

from ragaudit.data.saved_run.columns import _shared_index
from ragaudit.data.saved_run.summary import correct_verdict
from ragaudit.data.saved_run.table import rows_to_table, table_questions
from ragaudit.diagnose.stage_outcomes import stage_outcomes

TRI = (True, False, None)
FAILURES = ({}, {"judge_errors": {"correctness": "timeout"}},
            {"judge_error": "correctness: HTTP 500"}, {"judge_error": "faith: x"})  # fmt: skip


def _rows(same_keys: bool) -> list[dict]:
    rows = []
    cases = product(TRI, TRI, TRI, TRI, TRI, range(len(FAILURES)), (None, "HTTP 500"))
    for i, (suff, eic, acic, abstained, right, failure, error) in enumerate(cases):
        judges = {"sufficiency": suff, "evidence_in_context": eic,
                  "answer_chunk_in_context": acic, "abstained": abstained, "correct": right,
                  "judge_errors": None, "judge_error": None}  # fmt: skip
        judges.update(FAILURES[failure])
        if same_keys:  # scalar values only (a nested object is held as JSON text)
            named = judges.pop("judge_errors") or {}
            judges["judge_error"] = "; ".join(f"{k}: {v}" for k, v in named.items()) or (
                judges["judge_error"])  # fmt: skip
        else:
            judges = {k: v for k, v in judges.items() if v is not None or i % 3}
        rows.append({
            "id": f"q{i}", "answerable": i % 11 != 0, "gold_docs": ["G"] if i % 5 else [],
            "retrieved": [{"chunk_id": "G#0", "doc_id": "G" if i % 2 else "X", "rank": 1}],
            "judges": judges, "generation_error": error,
            "metrics": {"correct": float(i % 4 == 0)} if i % 7 else {},
        })  # fmt: skip
    return rows


def build_questions(rows):
    """The questions the loader makes: rows into the run's table, questions out of it."""
    return table_questions(rows_to_table(rows))


def _tri(value) -> int:
    return -1 if value is None else int(bool(value))


@pytest.mark.parametrize("same_keys", [True, False])
@pytest.mark.parametrize("resliced", [False, True])
def test_columns_equal_the_per_question_rule(same_keys, resliced):
    questions = build_questions(_rows(same_keys))
    # the run with the same keys takes the columns' fast path, the other the per-question one
    assert (_shared_index([q.judges.data for q in questions]) is not None) == same_keys
    got = stage_outcomes(questions, 1, resliced=resliced, answers={}, chunk_texts=None,
                         where="run.json")  # fmt: skip
    answerable = [q for q in questions if q.answerable]
    assert got.ids.tolist() == [q.id for q in answerable]
    for n, q in enumerate(answerable):
        j = q.judges
        decided = [
            (_tri(j.sufficiency), "sufficiency"),
            (_tri(j.evidence_in_context), "evidence_in_context"),
        ]
        if not resliced:
            decided.append((_tri(j.get("answer_chunk_in_context")), "answer_chunk_in_context"))
        code, source = next(((c, s) for c, s in decided if c >= 0), (-1, ""))
        assert (got.evidence[n], got.source[n]) == (code, source), q.id
        abstained = -1 if q.generation_error else _tri(j.abstained)
        assert got.answered[n] == (-1 if abstained < 0 else 1 - abstained), q.id
        verdict, why = correct_verdict(q)
        assert got.correct[n] == _tri(verdict) and got.reasons[n][3] == why, q.id
        assert got.gold_hit[n] == ("G" in q.gold_docs and q.retrieved[0].doc_id == "G")
