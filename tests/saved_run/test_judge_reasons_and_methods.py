"""``judges.reasons`` and ``config.offline_judges`` (issue 20): optional, typed, read back."""

from __future__ import annotations

import pytest

from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run.check import find_problems


def run(judges: dict, config: dict | None = None) -> dict:
    return {
        "format": "ragaudit.run", "format_version": 1, "name": "r",
        "config": {"k": 1, **(config or {})},
        "rows": [{"id": "q1", "retrieved": [{"chunk_id": "c", "doc_id": "d"}], "judges": judges}],
    }  # fmt: skip


def test_reasons_and_methods_are_read_back():
    data = run(
        {"correct": None, "reasons": {"correct": "no reference answer"}},
        {"offline_judges": {"correct": "reference-claims/1"}},
    )
    assert find_problems(data) == []
    saved = SavedRun.from_dict(data)
    assert saved.questions[0].judges.reasons == {"correct": "no reference answer"}
    assert SavedRun.from_dict(run({})).questions[0].judges.reasons == {}  # older files


@pytest.mark.parametrize(
    ("judges", "config", "message"),
    [
        ({"reasons": {"correct": 3}}, None, "rows[0].judges.reasons.correct: expected a"),
        ({"reasons": "why"}, None, "rows[0].judges.reasons: expected an object or null"),
        ({}, {"offline_judges": ["x"]}, "config.offline_judges: expected an object or null"),
    ],
)  # fmt: skip
def test_wrong_types_are_named(judges, config, message):
    problems = find_problems(run(judges, config))
    assert any(p.startswith(message) for p in problems), problems
