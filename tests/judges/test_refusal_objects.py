"""A named document that "does not give/name/list" something is silent only about what was asked.

Cases written by the lead from a code review's counter-examples (8 Dec 2026), after probe v5's
first measurement; none comes from a probe.  "The policy does not give contractors paid leave"
states a fact of the policy, and is judged as an answer; "the runbook does not give a time"
says the document is silent, and is a refusal.
"""

from __future__ import annotations

import pytest

from ragaudit.judges.refusals import is_abstention

FACTS = [
    "The policy does not give contractors paid leave.",
    "No, the SLA does not name weekends as business days; support runs Monday to Friday.",
    "The guide does not list interns among the approvers.",
    "The agreement does not name contractors as incident owners.",
]
SILENT = [
    "The runbook does not give a time.",
    "The SLA doesn't specify.",
    "The policy does not say how many days are allowed.",
    "The price list does not list the exact price for Europe.",
    "The FAQ does not mention it.",
    "The handbook doesn't state whether interns may approve.",
    "The SLA doesn't specify penalties.",  # a verb that only speaks: any object is silence
]


@pytest.mark.parametrize("answer", FACTS)
def test_a_fact_about_what_the_document_does_not_grant_is_an_answer(answer: str) -> None:
    assert not is_abstention(answer)


@pytest.mark.parametrize("answer", SILENT)
def test_a_document_silent_about_the_asked_thing_is_a_refusal(answer: str) -> None:
    assert is_abstention(answer)
