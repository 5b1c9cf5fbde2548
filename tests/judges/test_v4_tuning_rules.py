"""The rules changed when probe v4 became tuning data (issue 31 round 2, 8 December 2026).

Each case is written fresh for its rule by the engineer who changed it, on made-up policies
(a library, a gym, a ferry line, a lab); none is an answer of probes v2, v3 or v4 (their
answers gave the causes, not the cases).  Each rule has cases where it must fire and cases
where it must NOT.  Expected verdicts are a reader's: True correct, False wrong, None
undecided (the judge must say it is not sure rather than guess).
"""

from __future__ import annotations

import pytest

from ragaudit.judges.claims import quantities, tokens
from ragaudit.judges.offline import judge_offline
from ragaudit.judges.refusals import is_abstention
from ragaudit.judges.reversals import (
    inclusion_flip,
    narrowed,
    opposite_slot,
    relabelled,
    sameness,
)


def correct(question: str, reference: str, answer: str, answerable: bool = True) -> bool | None:
    verdicts = judge_offline(answer=answer, answerable=answerable, reference_answer=reference,
                             keywords=[], context_texts=[reference], question=question)  # fmt: skip
    return verdicts["correct"]


# --- 1. inclusion flipped ----------------------------------------------------------------------

REF_LOAN = "Members may borrow 12 books at a time, plus magazines."
REF_WIPE = "Lab notebooks are shredded after 10 years, except patent records."


@pytest.mark.parametrize(
    ("reference", "answer"),
    [
        (REF_LOAN, "12 books at a time, magazines included."),
        (REF_LOAN, "Twelve items, including the magazines."),
        ("12 books, plus two magazines.", "12 books, the two magazines included."),
        (REF_WIPE, "After ten years; patent records are part of that."),
    ],
)
def test_inclusion_flip_fires(reference: str, answer: str) -> None:
    assert inclusion_flip(reference, answer)


@pytest.mark.parametrize(
    ("reference", "answer"),
    [
        (REF_LOAN, "12 books, plus magazines on top."),
        (REF_LOAN, "Twelve books at once (loans include renewals), and magazines as well."),
        (REF_WIPE, "After ten years, except the patent records."),
        ("Lunch costs 9 EUR, drinks included.", "9 EUR including drinks."),
    ],
)
def test_inclusion_flip_keeps(reference: str, answer: str) -> None:
    assert inclusion_flip(reference, answer) is None


def test_inclusion_flip_makes_the_answer_wrong() -> None:
    q = "How many items may a member borrow?"
    assert correct(q, REF_LOAN, "12 books at a time, magazines included.") is False
    assert correct(q, REF_LOAN, "Twelve books at a time, plus magazines.") is True


# --- 2. opposite word in the same slot ----------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "answer"),
    [
        ("Apprentices get 8 weeks on full salary.", "8 weeks on half salary."),
        ("The gym closes 30 minutes after the last class.", "30 minutes after the first class."),
        ("Tickets are checked at the start of the platform.", "At the end of the platform."),
    ],
)
def test_opposite_slot_fires(reference: str, answer: str) -> None:
    assert opposite_slot(reference, answer)


@pytest.mark.parametrize(
    ("reference", "answer"),
    [
        ("Apprentices get 8 weeks on full salary.", "Eight weeks, on full salary."),
        ("The gym closes 30 minutes after the last class.", "Half an hour after the last class."),
        ("At the end of the platform.", "At the end of the platform, the last door."),
    ],
)
def test_opposite_slot_keeps(reference: str, answer: str) -> None:
    assert opposite_slot(reference, answer) is None


# --- 3. sameness claim -------------------------------------------------------------------------


def test_sameness_fires_on_a_named_thing_of_the_reference() -> None:
    ref = "The K2 ferry takes 90 minutes (the K5 takes 70 minutes)."
    assert sameness(ref, "90 minutes, the same as the K5.")
    # wrong to a reader; the judge may decide it elsewhere, but never calls it correct
    verdict = correct("How long does the K2 ferry take?", ref, "90 minutes, the same as the K5.")
    assert verdict in (False, None)


def test_sameness_keeps_other_comparisons() -> None:
    ref = "The K2 ferry takes 90 minutes (the K5 takes 70 minutes)."
    assert sameness(ref, "90 minutes, the same as last year's timetable.") is None
    assert sameness(ref, "An hour and a half; the K5 is faster at 70 minutes.") is None


# --- 4. a value moved to another label ---------------------------------------------------------

REF_DESK = (
    "Report spills to the lab manager on extension 214 within 15 minutes; the store is room 118."
)


@pytest.mark.parametrize(
    ("reference", "answer"),
    [
        (REF_DESK, "Within 15 minutes, to the lab manager on extension 118."),
        (
            "A grant of up to 2 years, renewable every 3 years.",
            "Up to two years, renewable every two years.",
        ),
    ],
)
def test_relabelled_fires(reference: str, answer: str) -> None:
    assert relabelled(reference, answer)


@pytest.mark.parametrize(
    ("reference", "answer"),
    [
        (REF_DESK, "Within a quarter of an hour, on extension 214."),
        (REF_DESK, "Extension 214, within 15 minutes (the store is room 118)."),
        ("Valve A 3 bar, valve B 5 bar.", "Valve B 5 bar and valve A 3 bar."),
        ("Use version 3 (version 2 is retired).", "Version three of the tool."),
    ],
)
def test_relabelled_keeps(reference: str, answer: str) -> None:
    assert relabelled(reference, answer) is None


def test_relabelled_makes_the_answer_wrong() -> None:
    q, ref = (
        "How long can a grant last?",
        (
            "Grants last up to 2 years, renewable every 3 years, for staff with at least 3 years "
            "of service."
        ),
    )
    assert correct(q, ref, "Up to two years, and renewable every two years.") is False
    assert correct(q, ref, "Up to two years, and renewable every three years.") is True
    q, ref = (
        "How fast are spills reported?",
        ("Within 15 minutes, to extension 214 (the store is extension 118)."),
    )
    assert correct(q, ref, "Within 15 minutes, on extension 118.") is False
    assert correct(q, ref, "Within 15 minutes, on extension 214.") is True


# --- 5. alternatives narrowed --------------------------------------------------------------------


def test_narrowed_fires_and_keeps() -> None:
    ref = "Staff may work from home when the office is closed, or when a manager agrees."
    assert narrowed(ref, "Only when the office is closed.")
    assert narrowed(ref, "When the office is closed or a manager agrees.") is None
    assert narrowed("When the office is closed.", "Only when the office is closed.") is None


# --- readings: a number word joined to its unit, rates further on, per head ---------------------


def test_number_word_joined_to_its_unit() -> None:
    assert [(q.number, q.unit) for q in quantities(tokens("a two-week course"))] == [("2", "week")]
    assert [t.text for t in tokens("a well-known week")][:3] == ["a", "well", "known"]


def test_rate_read_past_a_longer_noun_phrase() -> None:
    (q,) = quantities(tokens("3 hours of supervised lab time per week"))
    assert q.per == "week"
    (q,) = quantities(tokens("3 hours of lab time, and a report every week"))
    assert q.per != "week"  # the period of another clause


def test_per_head_is_per_person() -> None:
    (q,) = quantities(tokens("15 EUR per head"))
    assert q.per == "person"


# --- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "There is no figure for the boiler's age anywhere in the supplied documents.",
        "The lab guide covers goggles; it doesn't describe a policy for visitors.",
        "The manual explains how the pump is cleaned but not who maintains it.",
        "The sources describe the opening hours, not what a day pass costs.",
    ],
)
def test_new_refusal_wordings(answer: str) -> None:
    assert is_abstention(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "There is no fee for the first loan.",
        "It does not cover day visitors.",
        "The manual explains how the pump is cleaned: weekly, with citric acid.",
        "The price isn't listed, but it would come to roughly 40 EUR from the hourly rate.",
    ],
)
def test_not_refusals(answer: str) -> None:
    assert not is_abstention(answer)


def test_worked_out_estimate_on_unanswerable_question_is_wrong() -> None:
    answer = "The fee isn't stated, but at 4 EUR an hour it would be about 32 EUR, roughly 30 EUR."
    assert correct("What does a day pass cost?", "", answer, answerable=False) is False


# --- names: a list item's label is no name; a rival only in an aside is undecided -------------

REF_GYM = "A Gold pass costs 45 EUR a month and includes 8 classes."
CTX_GYM = (
    "Passes. The Gold pass costs 45 EUR a month. The Silver pass costs 30 EUR. Fee: see Price list."
)


def _gym(answer: str) -> bool | None:
    return judge_offline(answer=answer, answerable=True, reference_answer=REF_GYM, keywords=[],
                         context_texts=[CTX_GYM], question="What does a Gold pass cost and "
                         "how many classes does it include?")["correct"]  # fmt: skip


def test_a_bold_list_label_is_not_a_rival_name() -> None:
    assert _gym("- **Price:** 45 euros a month\n- **Classes:** eight") is True


def test_a_rival_named_only_in_parentheses_is_undecided() -> None:
    assert _gym("45 EUR a month (the Silver pass: 30 EUR), with 8 classes.") is None
    assert _gym("45 EUR a month for the Silver pass, with 8 classes.") is False
