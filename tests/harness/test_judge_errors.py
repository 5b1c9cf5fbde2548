"""A failed judge nulls only its own metrics; judge errors are counted in every summary."""

from __future__ import annotations

import pytest

from ragaudit.data.saved_run import Judgments, SavedRun
from ragaudit.data.saved_run.summary import count_judge_errors, summarise_run
from ragaudit.pipeline.costs import combine_llm_costs
from ragaudit.pipeline.summary import judge_metrics

OFFLINE = {"abstained": False, "keyword_hit": 1.0, "correct": True, "evidence_in_context": True}


def test_a_failed_llm_judge_leaves_the_other_verdicts_alone() -> None:
    row = {"judges": {**OFFLINE, "sufficiency": None,
                      "judge_errors": {"sufficiency": "invalid reply"},
                      "judge_error": "sufficiency: invalid reply"}}  # fmt: skip
    assert judge_metrics(row) == {
        "answered": 1.0, "correct": 1.0, "keyword_hit": 1.0, "evidence_in_context": 1.0,
        "faithfulness": None,
    }  # fmt: skip


def test_a_failed_correctness_judge_nulls_correct_only() -> None:
    # a stale offline `correct` must not stand in for the LLM verdict that failed
    row = {"judges": {**OFFLINE, "judge_errors": {"correctness": "HTTP 500"}}}
    metrics = judge_metrics(row)
    assert metrics["correct"] is None
    assert (metrics["keyword_hit"], metrics["answered"]) == (1.0, 1.0)


def test_a_generation_error_still_nulls_every_judge_metric() -> None:
    assert set(judge_metrics({"error": "timeout", "judges": {}}).values()) == {None}


@pytest.mark.parametrize(
    ("judges", "expected"),
    [
        ({"judge_errors": {"citations": "x", "relevance": "y"}}, {"citations", "relevance"}),
        ({"judge_error": "citations: timed out; relevance: HTTP 500"}, {"citations", "relevance"}),
        ({"judge_error": "the judge crashed"}, {"?"}),  # an imported run's bare reason
        ({"keyword_hit": 0.0}, set()),
    ],
)
def test_failed_judges(judges: dict, expected: set) -> None:
    assert Judgments(judges).failed == expected


def test_summaries_always_count_judge_errors() -> None:
    rows = [
        {"id": "q1", "judges": {"judge_errors": {"sufficiency": "x"}}},
        {"id": "q2", "judges": {"judge_errors": {"sufficiency": "x", "citations": "y"}}},
        # a failed generation is counted in n_generation_errors, never as a judge error;
        # "error" is the key's old name and is read as generation_error
        {"id": "q3", "error": "boom", "judges": {"judge_error": "sufficiency: z"}},
    ]
    run = SavedRun.from_dict(
        {"config": {"k": 3}, "rows": [{**row, "retrieved": []} for row in rows]}
    )
    assert count_judge_errors(run.questions) == {"citations": 1, "sufficiency": 2}
    summary = summarise_run(run).to_dict()
    assert summary["judge_errors"] == {"citations": 1, "sufficiency": 2}
    assert summary["n_judge_errors"] == 3 and summary["n_generation_errors"] == 1
    offline = SavedRun.from_dict(
        {"config": {"k": 3}, "rows": [{"id": "q1", "retrieved": [], "judges": OFFLINE}]}
    )
    assert summarise_run(offline).n_judge_errors == 0


def test_llm_costs_add_up_and_unknown_stays_unknown() -> None:
    gen = {"model": "m", "calls": 8, "input_tokens": 1000, "output_tokens": 80, "cost_usd": 0.25}
    judges = {"model": "m", "calls": 30, "input_tokens": 300, "output_tokens": 150,
              "cost_usd": 0.5}  # fmt: skip
    total = combine_llm_costs({"generator": gen, "judges": judges})
    assert (total["calls"], total["input_tokens"], total["output_tokens"]) == (38, 1300, 230)
    assert total["cost_usd"] == pytest.approx(0.75)
    assert total["by_stage"]["judges"] == judges
    unpriced = combine_llm_costs({"generator": gen, "judges": {**judges, "cost_usd": None}})
    assert unpriced["cost_usd"] is None
