"""The analyser of the reference judges and the yes/no polarity reader (expected by hand)."""

from __future__ import annotations

import pytest

from ragaudit.judges.claims import quantities, states_number, tokens
from ragaudit.judges.polarity import answer_polarity, has_negation, reference_polarity


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("1,200 EUR", "1200 euros", True),
        ("twenty-five days", "25 days", True),
        ("1.50 EUR", "1.5 EUR", True),
        ("5 percent", "5%", True),
        ("5 percent", "5", False),
        ("10:00", "10 am", True),
        ("1:30 pm", "13:30", True),
        ("12 November", "November 12th", True),
        ("the 25th", "25", False),
        ("the sixth day", "the 6th day", True),
    ],
)
def test_one_fact_reads_the_same_however_written(a, b, same):
    assert ([t.text for t in tokens(a)] == [t.text for t in tokens(b)]) is same


def test_a_number_never_matches_inside_another():
    want = quantities(tokens("3 years"))[0]
    for text in ("13 years", "3.5 years", "Q3 years", "2023 years", "see [3] years"):
        assert not states_number(want, quantities(tokens(text))), text
    assert states_number(want, quantities(tokens("for 3 years")))
    # a currency sign stands for its code, on either side of the number
    euros = quantities(tokens("40 EUR"))[0]
    assert states_number(euros, quantities(tokens("It costs €40.")))
    assert not states_number(euros, quantities(tokens("It costs $40.")))


@pytest.mark.parametrize(
    ("reference", "expected"),
    [("No.", "no"), ("No, never.", "no"), ("Yes - with approval.", "yes"), ("Yes", "yes"),
     ("No more than 3 days.", None), ("Nobody.", None), ("Not refunded.", None), ("", None)],
)  # fmt: skip
def test_reference_polarity(reference, expected):
    assert reference_polarity(reference) == expected


@pytest.mark.parametrize(
    ("text", "negated"),
    [("It is not refunded.", True), ("It is never allowed.", True), ("Nobody may.", True),
     ("Pets are prohibited.", True), ("It won't be.", True), ("It isn\u2019t.", True),
     ("Up to no more than 3 days.", False), ("No later than Friday.", False),
     ("Not only laptops but phones.", False), ("It is refunded.", False),
     ("Whether or not you travel.", False)],
)  # fmt: skip
def test_negation_cues(text, negated):
    assert has_negation(text) is negated


def test_answer_polarity_reads_the_sentence_about_the_question():
    question = "Is travel insurance refunded?"
    # a negation in a sentence about something else does not flip the answer
    assert answer_polarity("Travel insurance is refunded. Minibar is not.", question) == "yes"
    assert answer_polarity("No: business trips are insured already.", question) == "no"
    assert answer_polarity("Travel insurance is not refunded.", question) == "no"
    # known limit (docs/guide/judges.md): a negation in the same sentence, about another thing
    assert answer_polarity("Travel insurance is refunded, minibar costs are not.", question) == "no"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("From -40 °C to +70 °C", ["from", "-40", "c", "to", "70", "c"]),
     ("minus 40 degrees Celsius", ["-40", "degree", "c"]),
     ("\u22125 %", ["-5%"]),
     ("10-20 days", ["10", "20", "day"]),  # a range, not a negative 20
     ("R2-40 and a 30-day period", ["r2", "40", "and", "a", "30", "day", "period"]),
     ("the minus sign", ["the", "minus", "sign"])],
)  # fmt: skip
def test_a_minus_sign_is_kept_and_a_hyphen_is_not_one(text, expected):
    assert [t.text for t in tokens(text)] == expected
    if "-40" in expected:
        want = quantities(tokens("-40 °C"))[0]
        assert states_number(want, quantities(tokens(text)))
        assert not states_number(want, quantities(tokens("40 °C")))
