"""The paraphrases and near misses issue 31 lists, on questions written for them.

The questions and references are written by the engineer of issue 31 in the style of the
chapter's handbook (the issue quotes only the answers); they were written after seeing how the
judge before issue 31 read them, and the rules were tuned on them: a tuning set.  The blind
measurement is the frozen probe and the stress test, kept by others.
Expected verdicts are a reader's: a paraphrase of the reference is correct, a near miss wrong.
"""

from __future__ import annotations

import pytest

from ragaudit.judges.offline import judge_offline

#: (question, reference, answer, correct)
CASES = [
    # paraphrases: number words, fractions, units, currencies, dates, ranges
    ("How many API calls may a client make?", "600 calls per minute.",
     "Six hundred calls a minute.", True),
    ("How long is the grace period?", "30 minutes.", "Half an hour.", True),
    ("How long is the maintenance window?", "90 minutes.", "An hour and a half.", True),
    ("What share of the budget goes to training?", "10% of the budget.",
     "One tenth of the budget.", True),
    ("How long is the probation period?", "6 months.", "Half a year.", True),
    ("How large is the relocation stipend?", "A one-time ₹15,000 stipend.",
     "Fifteen thousand rupees.", True),
    ("What does the enterprise licence cost?", "$48,000 list price per year.",
     "48,000 US dollars a year.", True),
    ("By when must unused leave be taken?", "By 31 March.", "Before the end of March.", True),
    ("On which days is the office open to visitors?", "Tuesday to Thursday.",
     "Tuesday through Thursday.", True),
    ("On which days is the office open to visitors?", "Tuesdays, Wednesdays and Thursdays.",
     "Tuesday through Thursday.", True),
    ("What is the hotel cap?", "€180 per night.", "180 euros a night.", True),
    ("What is the hotel cap?", "€180 per night.", "EUR 180 per night.", True),
    ("How long are backups kept?", "2 weeks.", "14 days.", True),
    ("How far may the commute be?", "1.5 km.", "1500 metres.", True),
    ("What are the recovery objectives?", "An RPO of 15 minutes and an RTO of 4 hours.",
     "RTO 4 hours, RPO 15 minutes.", True),
    ("What are the RTO and RPO?", "RTO 30 minutes, RPO 5 minutes.",
     "The RPO is 5 minutes and the RTO 30 minutes.", True),
    ("How many days of leave do staff get?", "25 days per calendar year.",
     "Twenty-five days a year.", True),  # from the fresh cases' one miss (see benchmarks/)
    # near misses
    ("What are the RTO and RPO?", "RTO 30 minutes, RPO 5 minutes.",
     "RTO 5 minutes, RPO 30 minutes.", False),
    ("What are the RTO and RPO?", "RTO 30, RPO 5.", "RTO 5, RPO 30.", False),
    ("What is the hotel cap?", "€180 per night.", "$180 per night.", False),
    ("How many API calls may a client make?", "600 calls per minute.",
     "600 calls per hour.", False),
    ("How often is the access review?", "Once per year.", "Once per quarter.", False),
    ("How often is the access review?", "4 reviews per year.", "4 reviews per quarter.", False),
    ("On which day is the deploy freeze?", "Tuesday.", "Thursday.", False),
    ("When is the release train?", "Every Tuesday at 10:00.", "Every Thursday at 10:00.", False),
    ("What are the recovery objectives?", "An RTO of 30 minutes and an RPO of 5 minutes.",
     "RTO 5 minutes, RPO 30 minutes.", False),
    ("What are the recovery objectives?", "An RPO of 15 minutes and an RTO of 4 hours.",
     "An RPO of 4 hours and an RTO of 15 minutes.", False),
    ("How long is the probation period?", "6 months.", "Half an hour.", False),
    ("How long is the probation period?", "6 months.", "180 days.", False),
    ("By when must unused leave be taken?", "By 31 March.", "Before the end of June.", False),
    ("How large is the relocation stipend?", "A one-time ₹15,000 stipend.",
     "15,000 euros.", False),
]  # fmt: skip


@pytest.mark.parametrize(("question", "reference", "answer", "correct"), CASES)
def test_reads_as_a_reader_would(question: str, reference: str, answer: str, correct: bool):
    verdicts = judge_offline(
        answer=answer, answerable=True, reference_answer=reference, keywords=[],
        context_texts=[reference], question=question,
    )  # fmt: skip
    assert verdicts["correct"] is correct


#: (question, reference, answer, context, correct or None, reason starts with)
DOUBTS = [
    # another entity of the same kind in its place: wrong
    ("Which tool pages the on-call engineer?", "The on-call engineer is paged through Beacon.",
     "The on-call engineer is paged through Klaxon.",
     "Alerts go through Beacon. Klaxon was retired.", False, None),
    ("Where is the hardware lab?", "In the Kellsport office.", "In the Brightwater office.",
     "The lab is in the Kellsport office. The Brightwater office has the studio.", False, None),
    ("Which team owns the billing service?", "The Payments team.", "The Platform team.",
     "The Payments team owns billing; the Platform team owns CI.", False, None),
    # the entity named: right; not named and none other: undecided
    ("Which tool pages the on-call engineer?", "The on-call engineer is paged through Beacon.",
     "Beacon.", "", True, None),
    ("Which tool pages the on-call engineer?", "The on-call engineer is paged through Beacon.",
     "The on-call engineer gets paged.", "", None, "the reference names beacon"),
    # a qualifier the key words cannot check
    ("Who attends the security course?", "All engineers attend it.",
     "Only new engineers attend.", "", None, "the answer narrows or widens"),
    ("Who attends the security course?", "All engineers attend it.",
     "Every engineer attends.", "", True, None),
    # a second value for the same quantity, with no label of its own
    ("How many days of leave may be carried over?", "8 days, by 30 June.",
     "You may carry over 8 days, or 5 days.", "", None, "the answer states 8 day and also 5"),
    ("How soon must a page be acknowledged?", "Within 5 minutes.",
     "A SEV1 page within 5 minutes and a SEV2 page within 15 minutes.", "", True, None),
]  # fmt: skip


@pytest.mark.parametrize(("question", "reference", "answer", "context", "correct", "why"), DOUBTS)
def test_a_rule_that_is_not_sure_says_so(question, reference, answer, context, correct, why):
    verdicts = judge_offline(
        answer=answer, answerable=True, reference_answer=reference, keywords=[],
        context_texts=[context] if context else [], question=question,
    )  # fmt: skip
    assert verdicts["correct"] is correct
    reasons = verdicts.get("reasons", {})
    if why is None:
        assert "correct" not in reasons
    else:
        assert reasons["correct"].startswith(why)


@pytest.mark.parametrize(
    ("question", "reference", "context"),
    [  # the two misread references: "list" is no unit, "one-time" no number 1
        ("What is the list price of the enterprise licence?", "$48,000 list price.",
         "The enterprise licence has a list price of USD 48,000 per year."),
        ("What relocation support do new hires in Pune get?", "A one-time ₹15,000 stipend.",
         "New hires in Pune receive a one-time relocation stipend of 15,000 rupees."),
    ],
)  # fmt: skip
def test_the_reference_is_read_as_a_reader_reads_it(question, reference, context):
    verdicts = judge_offline(
        answer=reference, answerable=True, reference_answer=reference, keywords=[],
        context_texts=[context], question=question,
    )  # fmt: skip
    assert verdicts["evidence_in_context"] is True
    assert verdicts["correct"] is True


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # text2num reads number words; a few words it must not turn into numbers
        ("six hundred calls a minute", ["600", "call", "a", "minute"]),
        ("an hour and a half", ["1.5", "hour"]),
        ("your first 14 days", ["your", "first", "14", "day"]),
        ("wait 1 second", ["wait", "1", "second"]),
        ("no one may enter", ["no", "one", "may", "enter"]),
        ("the twenty-first of May", ["the", "dm0521"]),
        ("by the end of February", ["by", "dm0229"]),
        ("Mon to Wed", ["monday", "tuesday", "wednesday"]),
        ("A one-time ₹15,000 stipend", ["a", "one", "time", "inr", "15000", "stipend"]),
    ],
)
def test_tokens_of_number_words_dates_and_currencies(text: str, expected: list[str]) -> None:
    from ragaudit.judges.claims import tokens

    assert [t.text for t in tokens(text)] == expected
