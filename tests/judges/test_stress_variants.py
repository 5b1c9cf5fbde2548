"""The stress test's rewrites on hand-written references: every expected string below was
written by hand (by the engineer who wrote the rewrites, from the rule each family states),
not copied from the generator's output.  Each reference has one candidate per family, so the
seed cannot change the expected text."""

from __future__ import annotations

import pytest

from ragaudit.data.golden import GoldenQuestion
from ragaudit.exceptions import InputError
from ragaudit.judges.stress import FAMILIES, MEANING, make_variants, reference_variants

CASES = [
    # (reference, keywords, family, expected text)
    ("At most 600 requests per minute.", ("600 requests",), "number_words",
     "At most six hundred requests per minute."),
    ("Up to three months.", (), "number_words", "Up to 3 months."),
    ("Pay day is the 25th.", (), "number_words", "Pay day is the twenty-fifth."),
    ("Answered within 30 minutes.", (), "unit_conversion", None),  # two spellings: see below
    ("It runs for 72 hours at full load.", (), "unit_conversion", None),
    ("Kept for 25 months.", (), "unit_conversion", "Kept for 2 years and 1 month."),
    ("It works down to -40 °C.", (), "unit_conversion", "It works down to -40 °F."),
    ("A credit of 25 % of the fee.", (), "unit_conversion", "A credit of a quarter of the fee."),
    ("Handover at 14:30 sharp.", (), "date_rewrite", "Handover at 2:30 p.m. sharp."),
    ("Carry it over by 31 March.", (), "date_rewrite", "Carry it over by March 31."),
    ("An RPO of 15 minutes and an RTO of 4 hours.", (), "reordered_clauses",
     "An RTO of 4 hours and an RPO of 15 minutes."),
    ("Flights are booked 14 days ahead.", ("14 days",), "changed_unit", None),
    ("The cap is 210 EUR per night.", (), "changed_currency", None),
    ("The limit is 600 requests per minute.", (), "changed_rate", None),
    ("The call is every Monday.", (), "changed_weekday_month", None),
    ("An RPO of 15 minutes and an RTO of 4 hours.", ("15 minutes", "4 hours"),
     "swapped_values", "An RPO of 4 hours and an RTO of 15 minutes."),
    ("Passwords must be long.", (), "flipped_polarity", "Passwords must not be long."),
    ("Book at least 14 days ahead.", (), "flipped_polarity", "Book at most 14 days ahead."),
    ("No. Insurance is not refunded.", ("not refunded",), "flipped_polarity", None),
    ("An RPO of 15 minutes and an RTO of 4 hours.", ("15 minutes", "4 hours"),
     "dropped_fact", "An RPO of 15 minutes."),
    ("Kept for 10 years and computed every night at 01:30 UTC.", ("10 years", "01:30 UTC"),
     "dropped_fact", "Kept for 10 years."),
]  # fmt: skip

# Where a family offers more than one rewrite, every one it may draw (written by hand).
ANY_OF = {
    ("Answered within 30 minutes.", "unit_conversion"): {
        "Answered within half an hour.", "Answered within 0.5 hours."},
    ("It runs for 72 hours at full load.", "unit_conversion"): {
        "It runs for 4320 minutes at full load.", "It runs for 3 days at full load."},
    ("Flights are booked 14 days ahead.", "changed_unit"): {
        "Flights are booked 14 weeks ahead.", "Flights are booked 14 months ahead.",
        "Flights are booked 14 hours ahead."},
    ("The cap is 210 EUR per night.", "changed_currency"): {
        "The cap is 210 USD per night.", "The cap is 210 GBP per night.",
        "The cap is 210 INR per night.", "The cap is 210 JPY per night."},
    ("The limit is 600 requests per minute.", "changed_rate"): {
        "The limit is 600 requests per hour.", "The limit is 600 requests per second."},
    ("The call is every Monday.", "changed_weekday_month"): {
        f"The call is every {day}." for day in
        ("Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")},
    ("No. Insurance is not refunded.", "flipped_polarity"): {
        "Yes. Insurance is not refunded.", "No. Insurance is refunded."},
}  # fmt: skip


@pytest.mark.parametrize(("reference", "keywords", "family", "expected"), CASES,
                         ids=lambda c: c if isinstance(c, str) and "_" in c else "")  # fmt: skip
@pytest.mark.parametrize("seed", [0, 7])
def test_hand_written_rewrites(reference, keywords, family, expected, seed):
    made, skipped = reference_variants("q", reference, keywords=keywords, families=[family],
                                       seed=seed)  # fmt: skip
    assert skipped == [], f"{family} could not rewrite {reference!r}"
    (variant,) = made
    allowed = {expected} if expected else ANY_OF[(reference, family)]
    assert variant.text in allowed
    assert variant.expected is (MEANING[family] == "kept")
    assert variant.seed == seed and variant.family == family


def test_currency_names_keep_the_amount():
    made, _ = reference_variants("q", "The cap is 210 EUR per night.",
                                 families=["currency_name"], seed=1)  # fmt: skip
    assert made[0].text in {"The cap is 210 euros per night.", "The cap is €210 per night."}


def test_the_key_clause_is_what_breaks():
    # the aside in parentheses holds no keyword: the number that changes is the 70
    reference = "70 EUR per day (domestic trips get 55 EUR)."
    for seed in range(5):
        made, _ = reference_variants("q", reference, keywords=("70 EUR",),
                                     families=["changed_number", "changed_currency"], seed=seed)
        for variant in made:
            assert variant.text.endswith("(domestic trips get 55 EUR).")
            assert not variant.text.startswith("70 EUR")


def test_other_entity_takes_a_name_from_the_corpus():
    corpus = ["Trips are booked in Waypoint by the traveller. Expenses are filed in Tally by "
              "the traveller. Leave is requested in Rota by the employee."]
    made, _ = reference_variants("q", "Flights are booked in Waypoint.",
                                 families=["other_entity"], entity_texts=corpus)  # fmt: skip
    assert made[0].text in {"Flights are booked in Tally.", "Flights are booked in Rota."}
    assert made[0].expected is False


def test_added_sentence_comes_from_the_source_document():
    doc = ("# Policy\n\nClaims are paid within ten working days of approval.\n"
           "Receipts must be kept\nfor six years by the employee.\n")  # fmt: skip
    made, _ = reference_variants("q", "Within 30 days.", families=["added_sentence"],
                                 documents=[doc], seed=3)  # fmt: skip
    assert made[0].text in {
        "Within 30 days. Claims are paid within ten working days of approval.",
        "Within 30 days. Receipts must be kept for six years by the employee.",
    }


def test_what_cannot_be_rewritten_is_skipped_and_counted():
    questions = [
        GoldenQuestion("q1", "Who?", "Only the incident commander.", ("d",)),
        GoldenQuestion("q2", "Where?", "", (), answerable=False),
    ]
    made = make_variants(questions, None, families=["number_words", "refusal"], seed=0)
    assert [v.family for v in made.variants] == ["refusal"]
    assert made.skipped == {"number_words": 1, "refusal": 0}
    assert (made.n_references, made.unanswerable, made.seed) == (1, 1, 0)


def test_identifiers_and_years_are_not_number_words():
    made, skipped = reference_variants("q", "Call extension 4411 about the R3 since 2025.",
                                       families=["number_words"])  # fmt: skip
    assert made == [] and skipped == ["number_words"]


def test_same_seed_same_variants_and_every_family_is_known():
    questions = [GoldenQuestion("q1", "How long?", "An RPO of 15 minutes and an RTO of 4 hours.",
                                ("d",), keywords=("15 minutes",))]  # fmt: skip
    first = make_variants(questions, None, seed=5)
    assert first == make_variants(questions, None, seed=5)
    assert {v.family for v in first.variants} <= set(FAMILIES)
    with pytest.raises(InputError, match="families: expected names among"):
        reference_variants("q", "x", families=["nope"])
