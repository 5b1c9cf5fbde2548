"""Correctness and evidence decided from the reference answer (issue 20, part 2).

Every expected verdict below was written by hand from the rule in the module docstring of
:mod:`ragaudit.judges.reference`, reading the reference, the question and the answer.
"""

from __future__ import annotations

import pytest

from ragaudit.judges.offline import REFUSING_REFERENCE, judge_offline
from ragaudit.judges.reference import (
    NO_CLAIM,
    NO_REFERENCE,
    answer_states,
    context_holds,
    reference_claims,
)
from ragaudit.pipeline.generators import REFUSAL


def correct(reference: str, question: str, answer: str) -> bool | None:
    return answer_states(reference_claims(reference, question), answer, question)


@pytest.mark.parametrize(
    ("reference", "question", "answer", "expected"),
    [
        # short numbers are whole numbers with their unit, never dropped
        ("24 hours.", "How fast?", "Within 24 hours [1].", True),
        ("24 hours.", "How fast?", "Within 124 hours.", False),
        ("24 hours.", "How fast?", "Within 24 days.", False),
        ("6 weeks on full pay.", "How long?", "Six weeks, fully paid.", True),
        ("90 days.", "How long are logs kept?", "Logs are kept 90 days.", True),
        ("15 %.", "What fee?", "A fee of 15 percent.", True),
        ("15 %.", "What fee?", "A fee of 15 EUR.", False),
        ("Up to 1,500 meters.", "How many meters?", "It serves 1500 meters.", True),
        # units: the reference's unit must stand next to the number (either side)
        ("210 EUR per night.", "Hotel cap?", "The cap is EUR 210 [2].", True),
        ("210 EUR per night.", "Hotel cap?", "The cap is 210 USD.", False),
        ("0.32 EUR per km.", "Rate?", "0.32 euros per kilometre.", True),
        # a duration in another unit of its kind; an adverb of a period is the period
        ("14 days before departure.", "How early?", "Two weeks ahead.", True),
        ("Within one hour.", "How quickly?", "Within 60 minutes.", True),
        ("Within one hour.", "How quickly?", "Within 2 hours.", False),
        ("Every quarter.", "How often are reviews held?", "Quarterly [1].", True),
        ("An RPO of 15 minutes and an RTO of 4 hours.", "RPO and RTO?", "RPO 15 min, RTO 4 h.",
         True),
        ("14 days.", "How early?", "Half a month ahead.", False),  # months are not days
        # dates and times
        ("Every Monday at 10:00.", "When?", "On Mondays at 10:00 [1].", True),
        ("Every Monday at 10:00.", "When?", "On Tuesdays at 10:00.", False),
        ("Every Monday at 10:00.", "When?", "On Mondays at 11:00.", False),
        ("At 1:30 pm.", "When?", "At 13:30.", True),
        ("On 12 November 2024.", "When?", "It was November 12, 2024.", True),
        ("On 12 November 2024.", "When?", "It was 2024-11-12.", True),
        ("On 12 November 2024.", "When?", "It was 11 November 2024.", False),
        ("On the 25th.", "Payday?", "Salary is paid on the 25th of each month.", True),
        ("From the sixth day.", "From when?", "From the 6th day of absence.", True),
        ("From the sixth day.", "From when?", "From the fourth day.", False),
        # the clause that answers; elaboration after ';', '(', 'because', ', with' is not required
        ("Within 30 days; claims later than 90 days are rejected.", "By when?",
         "Within 30 days.", True),
        ("70 EUR per day (domestic trips get 55 EUR).", "Allowance?", "70 EUR a day.", True),
        ("Six months, with check-ins after one, three and six months.", "How long?",
         "It lasts six months.", True),
        ("After a 30-day export period, the data is deleted within 60 days.",
         "How soon is the data deleted?", "It is deleted within 60 days.", True),
        # a year dating another claim is not required; a year that is the answer is
        ("Up to 8 days since 2025.", "How many days?", "8 days may be carried over.", True),
        ("Up to 8 days since 2025.", "How many days?", "Up to 5 days.", False),
        ("Founded in 2014.", "When?", "It was founded in 2015.", False),
        # every number of the answering clause, and of each part of a two-part question
        ("An RPO of 15 minutes and an RTO of 4 hours.", "RPO and RTO?", "RPO 15 minutes.", False),
        ("Claims above 1,000 EUR; flights 14 days ahead.",
         "Which claims need approval, and how early are flights booked?",
         "Claims above 1,000 EUR need approval.", False),
        ("Claims above 1,000 EUR; flights 14 days ahead.",
         "Which claims need approval, and how early are flights booked?",
         "Above 1,000 EUR; book 14 days ahead.", True),
        # a number the question states is not a claim of the reference
        ("Claims of 1,800 EUR go to the head of department.", "Who approves 1,800 EUR?",
         "The head of department.", True),
        # key words when there is no number
        ("Only the incident commander.", "Who can approve a failover?",
         "The incident commander approves it [1].", True),
        ("Only the incident commander.", "Who can approve a failover?",
         "The on-call engineer approves it.", False),
        ("The head of department, who approves amounts above 500 EUR.", "Who approves?",
         "The head of department.", True),
    ],
)  # fmt: skip
def test_correctness_from_the_reference(reference, question, answer, expected):
    assert correct(reference, question, answer) is expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Telemetry is Confidential and must never be pasted into public AI assistants [2].",
         True),
        ("No, it is Confidential.", True),
        ("You can't: telemetry is Confidential.", True),
        ("Yes, telemetry may be pasted into public AI assistants.", False),
        ("Telemetry may be pasted into public AI assistants after review.", False),
        # "no more than" bounds a number, it does not negate
        ("Telemetry may be pasted into public AI assistants, no more than 5 lines.", False),
    ],
)  # fmt: skip
def test_a_no_reference_is_matched_by_a_negative_answer(answer, expected):
    question = "May telemetry be pasted into public AI assistants?"
    assert correct("No.", question, answer) is expected


def test_a_yes_reference_wants_a_positive_answer():
    question = "Does the company refund train tickets?"
    assert correct("Yes, in standard class.", question, "Train tickets are refunded.") is True
    assert correct("Yes, in standard class.", question, "Train tickets are not refunded.") is False


def test_a_reference_with_nothing_to_check_is_undecided_with_a_reason():
    assert reference_claims("", "Who?").reason == NO_REFERENCE
    assert reference_claims(None, "Who?").reason == NO_REFERENCE
    claims = reference_claims("Ask HR.", "Do I ask HR?")  # every word is in the question
    assert claims.reason == NO_CLAIM
    assert answer_states(claims, "Ask HR.") is None
    assert context_holds(claims, ["Ask HR."]) is None


CONTEXT = [
    "Accounts of leavers are disabled within 4 hours of their last working day.",
    "The recovery time objective (RTO) for eu-central is 4 hours.",
    "Personnel files are kept for 6 years after employment ends.",
]


def test_evidence_needs_each_number_next_to_its_context():
    question = "How soon are a leaver's accounts disabled?"
    claims = reference_claims("Within 4 hours of the last working day.", question)
    assert context_holds(claims, CONTEXT[:1]) is True
    # the same "4 hours" about something else is not evidence
    assert context_holds(claims, CONTEXT[1:2]) is False
    # a short bare number in the wrong unit is not evidence either
    assert context_holds(claims, ["Accounts are disabled within 4 days of leaving."]) is False


def test_evidence_from_each_source_only_when_asked():
    question = "How soon are accounts disabled, and how long are personnel files kept?"
    reference = "Within 4 hours, and personnel files are kept for 6 years."
    claims = reference_claims(reference, question)
    docs = ["security", "security", "retention"]
    sources = ["security", "retention"]
    for each in (False, True):
        assert context_holds(claims, CONTEXT, docs, sources, each_source=each) is True
        # only the first source retrieved (k=1): the 6 years is missing either way
        assert context_holds(claims, CONTEXT[:1], docs[:1], sources, each_source=each) is False
    # both numbers in one chunk of one source: evidence (the chapter's sufficiency) ...
    both_in_one = [CONTEXT[0] + " " + CONTEXT[2]]
    assert context_holds(claims, both_in_one, ["security"], sources) is True
    # ... unless the golden set asks for evidence from each source
    assert context_holds(claims, both_in_one, ["security"], sources, each_source=True) is False
    assert context_holds(claims, both_in_one, ["security"], ["security"], each_source=True)


def test_evidence_for_a_no_reference_wants_a_negation_in_the_chunk():
    question = "Does the company refund travel insurance?"
    claims = reference_claims("No. Travel insurance is not refunded.", question)
    assert context_holds(claims, ["The following are not refunded: fines, travel insurance."])
    assert not context_holds(claims, ["Travel insurance is refunded on request."])


def test_the_newcomers_golden_set_never_leaves_a_verdict_undecided():
    # The newcomer: bare short numbers and "No" as keywords.  The verdicts come from
    # the reference answer, so none is None and none depends on the keywords.
    cases = [
        ("How many days of notice?", "15 days.", ["15"], "Give 15 days notice [1].",
         ["Employees give 15 days notice."], True, True),
        ("May telemetry go to public AI assistants?", "No. Telemetry is Confidential.", ["No"],
         "Telemetry is Confidential and must never be pasted into public AI assistants.",
         ["Confidential data such as telemetry must never be pasted into public AI tools."],
         True, True),
        ("How long is the outage window?", "24 hours.", ["24"], "24 minutes.",
         ["The outage window is 24 hours."], False, True),
    ]  # fmt: skip
    for question, reference, keywords, answer, context, right, evidence in cases:
        verdicts = judge_offline(
            answer=answer, answerable=True, reference_answer=reference, keywords=keywords,
            context_texts=context, question=question,
        )  # fmt: skip
        assert (verdicts["correct"], verdicts["evidence_in_context"]) == (right, evidence)
        assert "reasons" not in verdicts


def test_keywords_decide_only_when_the_reference_cannot():
    kwargs = dict(answerable=True, reference_answer="Ask HR.", question="Do I ask HR?",
                  context_texts=["HR answers leave questions."])  # fmt: skip
    assert judge_offline(answer="Ask HR.", keywords=["HR"], **kwargs)["correct"] is True
    undecided = judge_offline(answer="Ask HR.", keywords=[], **kwargs)
    assert undecided["correct"] is None and undecided["evidence_in_context"] is None
    assert undecided["reasons"] == {"correct": NO_CLAIM, "evidence_in_context": NO_CLAIM}
    # a missing keyword never makes a reference-decided verdict false
    decided = judge_offline(
        answer="Within 30 days.", answerable=True, reference_answer="30 days.",
        question="By when?", keywords=["thirty calendar days"], context_texts=["Within 30 days."],
    )  # fmt: skip
    assert (decided["correct"], decided["evidence_in_context"], decided["keyword_hit"]) == (
        True, True, 0.0,
    )  # fmt: skip


def test_a_reference_that_declines_wants_an_abstention():
    kwargs = dict(answerable=True, reference_answer="The handbook does not say.",
                  question="Which pension provider?", keywords=[], context_texts=["x"])  # fmt: skip
    refused = judge_offline(answer=REFUSAL, **kwargs)
    assert (refused["correct"], refused["evidence_in_context"]) == (True, None)
    assert refused["reasons"] == {"evidence_in_context": REFUSING_REFERENCE}
    assert judge_offline(answer="Acme Pensions [1].", **kwargs)["correct"] is False


def test_a_refusal_is_wrong_but_its_evidence_is_still_judged():
    verdicts = judge_offline(
        answer=REFUSAL, answerable=True, reference_answer="30 days.", question="By when?",
        keywords=[], context_texts=["Claims within 30 days."],
    )  # fmt: skip
    assert (verdicts["correct"], verdicts["evidence_in_context"]) == (False, True)
    assert verdicts["faithfulness"] == 1.0 and "reasons" not in verdicts


def test_an_answer_that_restates_a_no_reference_without_saying_no_is_correct():
    # The reference says "No" and why; the answer gives only the why, in the same words and
    # with the same (absent) negation.  Restating needs every key word and no opposite yes/no.
    question = "Can guests bring a dog to the office?"
    reference = "No. Pets are banned from all company buildings."
    assert correct(reference, question, "Pets are banned from all company buildings [2].") is True
    assert correct(reference, question, "Pets are welcome in all company buildings.") is False
    assert correct(reference, question, "Yes, pets are banned from all company buildings.") is False
    # known limit (docs/guide/judges.md): a negated negative reads as "no"
    assert correct(reference, question, "Pets are not banned from company buildings.") is True
    claims = reference_claims(reference, question)
    assert context_holds(claims, ["Pets are banned from all company buildings."]) is True
    assert context_holds(claims, ["Pets are welcome in all company buildings."]) is False


def test_a_number_far_from_its_words_counts_in_a_chunk_about_the_question():
    question = "How many utilities were hit by the backlog incident?"
    claims = reference_claims("23 utilities.", question)
    filler = " ".join(["readings"] * 20)
    about = f"Backlog incident. Readings from 23 utilities were late. {filler} hit hard."
    assert context_holds(claims, [about]) is True
    # the same sentence in a chunk about something else is not evidence
    assert context_holds(claims, [f"Pricing. Readings from 23 utilities. {filler}"]) is False
