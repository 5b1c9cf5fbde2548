"""The rules changed when probe v3 became tuning data (issue 31, 8 December 2026).

Each case is written fresh for its rule by the engineer who changed it, in the style of a
staff handbook; none is an answer of probe v3 or v2 (their answers gave the causes, not the
cases).  Each rule has cases where it must fire and cases where it must NOT.  Expected
verdicts are a reader's: True correct, False wrong, None undecided (the judge must say it is
not sure rather than guess).
"""

from __future__ import annotations

import pytest

from ragaudit.judges.additions import (
    dropped_restriction,
    inserted_qualifier,
    other_date,
    unread_period,
)
from ragaudit.judges.claims import quantities, states_number, tokens
from ragaudit.judges.contrasts import contrast, negations, number_bounds
from ragaudit.judges.doubts import asks_name
from ragaudit.judges.offline import judge_offline
from ragaudit.judges.reference import reference_claims
from ragaudit.judges.refusals import is_abstention


def correct(question: str, reference: str, answer: str, context: str = "") -> bool | None:
    verdicts = judge_offline(answer=answer, answerable=True, reference_answer=reference,
                             keywords=[], context_texts=[context or reference],
                             question=question)  # fmt: skip
    return verdicts["correct"]


def states(reference: str, answer: str) -> bool:
    wanted = quantities(tokens(reference))[0]
    return states_number(wanted, quantities(tokens(answer)))


# --- refusals: a named kind of document that is silent --------------------------------------
@pytest.mark.parametrize(
    "answer",
    [
        "The onboarding guide doesn't state a deadline for that.",
        "The FAQ does not give a figure.",
        "The SLA doesn't specify penalties.",
        "The travel manual does not mention bike leasing.",
        "That isn't something these documents discuss.",
        "Bike leasing is not part of the provided documents.",
        "Nothing about bike leasing shows up in the retrieved passages.",
        "No leasing scheme is described in the sources I was given.",
        "The passages give no leasing terms.",
        "Bike leasing isn't addressed for the Leeds office.",
        "The handbook does not report headcount.",
    ],
)
def test_refusals_that_name_the_silent_document(answer: str) -> None:
    assert is_abstention(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "The travel manual does not cover spouses.",  # a negative fact: cover is no report verb
        "The policy does not reimburse taxis after midnight.",
        "Nothing is reimbursed without a receipt.",
        "Bike leasing is part of the benefits package.",
        "No receipt is needed below 25 EUR.",
        "Spouses are not covered by the travel insurance.",
        "The guide requires two approvers.",
    ],
)
def test_negative_facts_are_no_refusals(answer: str) -> None:
    assert not is_abstention(answer)


# --- quantities ----------------------------------------------------------------------------
def test_an_ordinal_of_another_unit_of_its_kind_is_no_match() -> None:
    assert not states("From the fourth day of absence.", "From the fourth week of absence.")
    assert states("From the fourth day of absence.", "From the 4th consecutive day off.")


def test_the_rate_period_past_one_qualifier() -> None:
    reference = "45 EUR for each business day on site."
    assert quantities(tokens(reference))[0].per == "day"
    assert not states(reference, "45 EUR per business trip.")
    assert states(reference, "45 euros a day.")
    assert quantities(tokens("2 EUR per seat and year"))[0].per == "year"


def test_decimal_comma_and_thousands_separator() -> None:
    assert states("1.25 EUR per page.", "1,25 € per page.")
    assert [q.number for q in quantities(tokens("1,250 pages"))] == ["1250"]


def test_an_article_before_a_time_unit_is_one_of_it() -> None:
    assert states("7 days.", "Within a week.")
    assert states("10 years.", "Roughly a decade.")
    rate = quantities(tokens("300 calls a minute"))[0]
    assert (rate.number, rate.per) == ("300", "minute")
    assert quantities(tokens("Once a month.")) == []


def test_a_bare_number_with_its_rate_period_states_the_rate() -> None:
    assert states("900 messages per hour.", "At most nine hundred per hour.")
    assert not states("900 messages per hour.", "900 per day.")
    assert not states("900 messages per hour.", "900 users per hour.")


# --- names beside an asked number ----------------------------------------------------------
def test_a_name_beside_a_number_is_required_only_when_the_question_asks_one() -> None:
    reference = "Files go to Vaultbox at least 10 days before the audit."
    question = "How many days before the audit must files be uploaded?"
    assert correct(question, reference, "At least ten days ahead of the audit.") is True
    assert correct(question, reference, "At least 10 days before, to Dropzone.") is False
    both = "How many days before the audit must files be uploaded, and to which system?"
    assert correct(both, reference, "At least ten days ahead of the audit.") is None
    assert asks_name("Who signs it?") and not asks_name("What is the cap in the town where I work?")


# --- bounds --------------------------------------------------------------------------------
def test_a_bound_is_compared_for_the_value_it_stands_before() -> None:
    reference = "At most 40 guests; above that a permit is needed."
    assert contrast(reference, "At least 40 guests.")[0] is False
    assert contrast("Longer than 6 hours.", "Shorter than six hours.")[0] is False
    assert contrast(reference, "Up to forty guests.")[0] is True


def test_not_before_a_bound_turns_it_round_and_is_no_negation() -> None:
    assert [d for _, d in number_bounds("It is not above 300 EUR.")[0]] == ["upper"]
    assert negations("It is not above 300 EUR.") == 0
    assert contrast("Above 100 EUR and up to 300 EUR.", "Above 100 EUR, not above 300 EUR.") == (
        True, None)  # fmt: skip


def test_next_and_previous_are_directions() -> None:
    reference = "On the 1st, or the business day before when the 1st is a Sunday."
    assert contrast(reference, "On the 1st, or the next business day on Sundays.")[0] is False
    assert contrast(reference, "On the 1st, or the previous business day on Sundays.")[0] is True


def test_an_added_upper_bound_is_implied_by_a_can_question() -> None:
    reference = "40 guests."
    assert contrast(reference, "Up to 40 guests.", question="How many guests can attend?") == (
        True, None)  # fmt: skip
    assert contrast(reference, "Up to 40 guests.", question="How many guests attend?")[0] is None


# --- what an answer adds (judges/additions.py) ---------------------------------------------
def test_a_qualifier_between_a_number_and_its_unit() -> None:
    q = "How long is the notice period?"
    claims = reference_claims("20 days.", q)
    assert inserted_qualifier(claims, "20 days.", "20 business days.", q) is not None
    assert inserted_qualifier(claims, "20 days.", "Twenty days.", q) is None
    nights = reference_claims("3 nights in a row.", "When does the alarm fire?")
    assert inserted_qualifier(nights, "3 nights in a row.", "After 3 straight nights.") is None
    assert correct(q, "20 days.", "20 business days.") is None
    assert correct(q, "20 days.", "20 days, counted from the letter.") is True


def test_a_qualifier_before_a_required_weekday() -> None:
    q = "When is the backup restored for testing?"
    assert correct(q, "Every Friday at 09:00.", "Every other Friday at 09:00.") is None
    assert correct(q, "Every Friday at 09:00.", "Each Friday at 09:00.") is True


def test_a_required_time_the_parsers_cannot_read_is_undecided() -> None:
    q = "When is the backup restored for testing?"
    assert correct(q, "Every Friday at 09:00.", "Every Friday at nine sharp.") is None
    assert correct(q, "Every Friday at 09:00.", "Every Friday at 11:00.") is False


def test_a_date_of_the_reference_s_class_that_is_none_of_its_own() -> None:
    assert other_date("From 08:00 to 12:00.", "From 07:30 to 12:00.") is not None
    assert other_date("From 08:00 to 12:00.", "Mornings, 8:00 to 12:00.") is None
    assert other_date("On 3 May.", "At 08:00 on 3 May.") is None  # another class: no rival


def test_a_period_in_words_answered_by_a_number() -> None:
    q = "How often are the backups tested?"
    claims = reference_claims("Every month.", q)
    assert unread_period(claims, "Twelve times a year.") is not None
    assert unread_period(claims, "Every week.") is None
    assert correct(q, "Every month.", "Twelve times a year.") is None
    assert correct(q, "Every month.", "Every week.") is False


def test_a_dropped_restriction_with_more_named() -> None:
    reference = "Only the site manager."
    assert dropped_restriction(reference, "The site manager and the deputy.") is not None
    assert dropped_restriction(reference, "The site manager.") is None
    assert dropped_restriction(reference, "The site manager alone.") is None
    q = "Who may open the vault?"
    assert correct(q, reference, "The site manager and the deputy.") is None


# --- contrasts -----------------------------------------------------------------------------
def test_values_that_changed_places_in_the_reference_s_order() -> None:
    q = "What is the nightly rate for hotels?"
    reference = "95 EUR per night (hostels get 40 EUR)."
    assert correct(q, reference, "Hostels get 95 EUR a night and hotels 40 EUR.") is None
    assert correct(q, reference, "Hotels: 95 EUR a night; hostels 40 EUR.") is True


def test_a_restated_sentence_without_its_negation_after_the_same_no() -> None:
    q = "Are gym fees reimbursed?"
    reference = "No. Gym fees are on the list of costs that are not reimbursed."
    assert correct(q, reference, "No. Gym fees are on the list of costs that are reimbursed.") is (
        None)  # fmt: skip
    assert correct(q, reference, "No, the company runs its own health plan instead.") is True
    assert correct(q, reference, "No. They are among the excluded costs.") is True


def test_an_ordinal_is_no_second_value_of_a_cardinal() -> None:
    q = "How long is the trial period?"
    assert correct(q, "Four months.", "Four months; the review falls in the fourth month.") is True
    assert correct(q, "Four months.", "Four months, or 5 months for managers.") is None


def test_a_hedged_value_is_undecided() -> None:
    q = "How long is the notice period?"
    assert correct(q, "30 days.", "About thirty days.") is None
    assert correct(q, "30 days.", "Thirty days or so.") is None
    assert correct(q, "30 days.", "Nearly 30 days.") is None
    # a hedge on another value (an added comparison) is no hedge of the required one
    assert correct(q, "30 days.", "30 days, about a month.") is True


def test_an_alternative_of_its_own_is_undecided() -> None:
    q = "Within how many days must the form be returned?"
    reference = "Within 10 days; otherwise the request lapses."
    assert correct(q, reference, "Within ten days, or a fee of 20 EUR is charged.") is None
    assert correct(q, reference, "Within ten days; after that you lose your seat.") is None
    # the reference's own alternative in other words, and no alternative at all
    assert correct(q, reference, "Within ten days, or else the request lapses.") is True
    assert correct(q, reference, "Within ten days.") is True
