"""The abstention detector on >= 100 refusals and >= 100 non-refusals (issue 31, item 5).

The fixture tests/judges/data/refusals.yaml was written by hand after reading the detector's
earlier phrase list (a tuning set, said in its header); the detector caught 34 of its 108
refusals before issue 31.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ragaudit.judges.offline import is_abstention, judge_offline

CASES = yaml.safe_load((Path(__file__).parent / "data" / "refusals.yaml").read_text("utf-8"))
REFUSALS: list[str] = CASES["refusals"]
NON_REFUSALS: list[str] = CASES["non_refusals"]


def test_the_fixture_is_large_enough_and_covers_the_issue_wordings() -> None:
    assert len(REFUSALS) >= 100 and len(NON_REFUSALS) >= 100
    text = " ".join(REFUSALS).lower()
    for wording in ("documents don't say", "not mentioned", "no information about",
                    "i couldn't find", "isn't covered", "i'm not sure"):  # fmt: skip
        assert wording in text, wording
    assert sum(a.startswith("No") for a in NON_REFUSALS) >= 15
    assert not set(REFUSALS) & set(NON_REFUSALS)


@pytest.mark.parametrize("answer", REFUSALS)
def test_refusal_is_recognised(answer: str) -> None:
    assert is_abstention(answer)


@pytest.mark.parametrize("answer", NON_REFUSALS)
def test_non_refusal_is_not_a_refusal(answer: str) -> None:
    assert not is_abstention(answer)


@pytest.mark.parametrize(
    "reference", ["No.", "No. Travel insurance is not refunded.", "25 days per calendar year."]
)
def test_an_abstention_is_never_correct(reference: str) -> None:
    # The issue's case: "The documents don't say." scored correct against a "No" reference
    # (its "don't" read as a negative answer).
    for answer in REFUSALS:
        verdicts = judge_offline(
            answer=answer, answerable=True, reference_answer=reference, keywords=["No"],
            context_texts=["Travel insurance is not refunded."],
            question="Does the company refund travel insurance?",
        )  # fmt: skip
        assert verdicts["abstained"] is True, answer
        assert verdicts["correct"] is False, answer
