"""The rules added for issue 31 by the second judges engineer (contrasts, unread values, rival
entities in numeric answers, rate periods, refusals naming their subject).

Every case below was written by hand by that engineer for these tests (7 December 2026); none
is taken from the stress variants or the probe, which were used to tune the rules.
"""

from __future__ import annotations

import pytest

from ragaudit.judges.claims import quantities, tokens
from ragaudit.judges.contrasts import bounds, contrast, negations, periods, swapped
from ragaudit.judges.doubts import copied
from ragaudit.judges.offline import judge_offline
from ragaudit.judges.refusals import is_abstention


def verdict(question: str, reference: str, answer: str, context: str = "") -> bool | None:
    return judge_offline(
        answer=answer, answerable=True, reference_answer=reference, keywords=[],
        context_texts=[context or reference], question=question,
    )["correct"]  # fmt: skip


@pytest.mark.parametrize(
    ("reference", "answer", "expected"),
    [
        ("Lockers hold at least 20 kg.", "Lockers hold at most 20 kg.", False),
        ("Lockers hold up to 20 kg.", "Lockers hold more than 20 kg.", False),
        ("Tickets close 3 days before the show.", "Tickets close 3 days after the show.", False),
        ("The tank stays above 40 litres.", "The tank stays below 40 litres.", False),
        ("Lockers hold up to 20 kg.", "20 kg.", True),  # a bound left out is no flip
        ("Lockers hold at least 20 kg.", "No less than 20 kg.", True),  # same direction
        ("Visitors may stay 5 nights.", "Visitors may stay more than 5 nights.", None),
        ("Visitors may stay 5 nights.", "Visitors may not stay 5 nights.", None),
    ],
)
def test_a_flipped_bound_is_wrong_and_a_new_bound_or_negation_undecided(
    reference: str, answer: str, expected: bool | None
) -> None:
    assert verdict("How long may visitors stay or lockers hold or tickets close?", reference,
                   answer) is expected  # fmt: skip


def test_bounds_and_negations_are_counted_apart() -> None:
    assert bounds("no more than 4 cups, at least 2") == {"upper": 1, "lower": 1}
    assert negations("no more than 4 cups") == 0
    assert negations("Pets are not allowed and never fed.") == 2


def test_a_negation_in_a_yes_no_answer_is_compared_without_the_leading_word() -> None:
    q = "Are pets allowed in the office?"
    ref = "No. Pets are not allowed in the office."
    assert verdict(q, ref, "No, pets are not allowed.") is True
    assert verdict(q, ref, "Pets are never allowed in the office.") is True
    assert verdict(q, ref, "No. Pets are not not allowed in the office.") is None


def test_an_added_true_sentence_is_no_contrast() -> None:
    q = "How many guests may each member bring?"
    ref = "Each member may bring 3 guests."
    answer = "Each member may bring 3 guests. The club does not open on Sundays before noon."
    assert contrast(ref, answer) == (True, None)
    assert verdict(q, ref, answer) is True


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("The deposit is 40 GBP and the fee is 15 GBP.", True),
        ("The fee is 15 GBP and the deposit is 40 GBP.", True),  # reordered, labels kept
        ("The deposit is 15 GBP and the fee is 40 GBP.", False),  # values swapped
    ],
)
def test_values_of_one_kind_keep_their_labels(answer: str, expected: bool) -> None:
    q = "What are the deposit and the fee?"
    ref = "The deposit is 40 GBP and the fee is 15 GBP."
    assert verdict(q, ref, answer) is expected


def test_swapped_says_why_when_words_do_not_decide() -> None:
    ref = "Bring 2 litres in summer and 1 litre in winter."
    order, why = swapped(quantities(tokens(ref)), ref, "Bring 1 litre, then 2 litres.")
    assert order is None and why is not None and "swapped values or reordered" in why


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Renewals cost 12 USD per seat per month.", True),
        ("Renewals cost 12 USD per seat per week.", False),
        ("Renewals cost 12 USD per seat per year.", False),
        ("Renewals cost 12 USD per seat each month.", True),
    ],
)
def test_the_period_after_a_per_chain_is_the_rate(answer: str, expected: bool) -> None:
    ref = "Renewals cost 12 USD per seat per month."
    assert verdict("What do renewals cost per seat per month?", ref, answer) is expected


def test_a_share_of_a_weekly_or_annual_amount_has_that_period() -> None:
    assert quantities(tokens("8 % of the weekly takings"))[0].per == "week"
    assert quantities(tokens("8 % of the annual takings"))[0].per == "year"
    ref = "8 % of the monthly takings."
    assert verdict("What share of the takings goes to the fund?", ref,
                   "8 % of the yearly takings.") is False  # fmt: skip


def test_a_period_word_without_a_number_is_compared_too() -> None:
    assert sorted(periods("Backups run every night and reports go out weekly.").elements()) == [
        "night", "week"]  # fmt: skip
    ref = "Backups are kept for 30 days and run every night at 02:00."
    q = "How long are backups kept, and when do they run?"
    assert verdict(q, ref, "Kept for 30 days and run every week at 02:00.") is False


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("A fortnight and a bit.", None),  # no value of its kind: an unread wording
        ("Three weeks.", False),  # another amount pint compares: wrong
        ("14 months.", False),  # its number in another unit: a changed unit
        ("1 week and 7 days.", None),  # a sum of two durations: left to a reader
    ],
)
def test_a_missing_value_is_wrong_only_when_a_rival_stands_in_its_place(
    answer: str, expected: bool | None
) -> None:
    got = verdict("How long is the trial?", "The trial lasts 14 days.", answer)
    assert got is expected


def test_a_sum_of_durations_is_undecided_with_its_reason() -> None:
    got = judge_offline(answer="130 minutes.", answerable=True,
                        reference_answer="2 hours and 10 minutes.", keywords=[],
                        context_texts=["The drill took 2 hours and 10 minutes."],
                        question="How long did the drill take?")  # fmt: skip
    assert got["correct"] is None and "sum of two durations" in got["reasons"]["correct"]


def test_another_entity_in_a_numeric_answer_is_wrong() -> None:
    context = ["Rooms are booked in Hearth. Desks are booked in Perch."]
    q = "How early must rooms be booked?"
    ref = "Rooms must be booked in Hearth at least 2 days ahead."
    assert verdict(q, ref, "Book them in Perch at least 2 days ahead.", context[0]) is False
    assert verdict(q, ref, "In Hearth, at least two days ahead.", context[0]) is True


def test_a_question_entity_replaced_by_another_is_wrong() -> None:
    # (an entity is a capitalised word seen inside a sentence: "Hearth" opening every sentence
    # of the context would not be one)
    context = "Both Hearth and Perch book desks. Hearth serves 12 offices. Perch serves 4."
    q = "How many offices does Hearth serve?"
    ref = "Hearth serves 12 offices."
    assert verdict(q, ref, "Perch serves 12 offices.", context) is False
    assert verdict(q, ref, "Twelve offices.", context) is True


def test_another_ordinal_beside_the_right_one_is_undecided() -> None:
    ref = "On the 3rd, or the day after when the 3rd is a Sunday."
    answer = "On the 4th, or the day after when the 3rd is a Sunday."
    got = verdict("When is rent due?", ref, answer)
    assert got is None


def test_an_extractive_answer_keeps_the_documents_negations_and_order() -> None:
    context = "Guests are not admitted after 22:00. The pool opens at 07:00 and closes at 21:00."
    assert copied("The pool opens at 07:00 and closes at 21:00 [1].", [context])
    assert not copied("The pool opens at 08:00.", [context])
    got = verdict("When does the pool open?", "At 07:00.",
                  "Guests are not admitted after 22:00. The pool opens at 07:00 [1].", context)
    assert got is True  # fmt: skip


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The parking fee is not mentioned.", True),
        ("No relocation budget is given in the context.", True),
        ("The handbook never names the supplier.", True),
        ("The document doesn't disclose the price.", True),
        ("It's not in the documents I was given.", True),
        ("No deposit is required.", False),
        ("The fee is not refundable.", False),
        ("No, the fee is not charged twice.", False),
    ],
)
def test_refusals_that_name_their_subject(text: str, expected: bool) -> None:
    assert is_abstention(text) is expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Forty euro cents per litre.", True),
        ("Up to €2k per month.", True),
        ("1.2 thousand litres.", True),
        ("From day 4 of the stay.", True),
    ],
)
def test_cents_thousands_and_day_numbers(answer: str, expected: bool) -> None:
    cases = {
        "Forty euro cents per litre.": ("What does a litre cost?", "0.40 EUR per litre."),
        "Up to €2k per month.": ("What is the monthly cap?", "Up to 2,000 EUR per month."),
        "1.2 thousand litres.": ("How big is the tank?", "1,200 litres."),
        "From day 4 of the stay.": ("From which day is cleaning included?",
                                    "From the fourth day of the stay."),
    }  # fmt: skip
    question, reference = cases[answer]
    assert verdict(question, reference, answer) is expected
