"""Keywords match whole tokens: "5%" is not any 5, "3" is not "Q3" or "13"; for the labeller
weak keywords ("No", "3") are never evidence that a chunk holds an answer, for the evidence
judge's keyword fallback a short number is evidence with the unit the reference gives it."""

from __future__ import annotations

import pytest

from ragaudit.data.chunks import Chunk
from ragaudit.judges.keywords import is_weak_keyword, keyword_tokens, strong_keywords
from ragaudit.judges.offline import evidence_in_context, keyword_hit
from ragaudit.labels.heuristic import HeuristicLabeller


@pytest.mark.parametrize(
    ("keyword", "text", "hit"),
    [
        # a percentage is its number and its sign
        ("5%", "Up to 5% of salary.", True),
        ("5%", "Up to 5 % of salary.", True),
        ("5%", "Up to 5 percent of salary.", True),
        ("5%", "Up to 5 per cent of salary.", True),
        ("5%", "Within 5 days.", False),
        ("5%", "A 15% discount.", False),
        ("5%", "A 0.5% fee.", False),
        ("5%", "Version 5.", False),
        ("5", "A 5% fee.", False),
        ("15 %", "a 15% surcharge", True),
        # whole numbers only
        ("3", "Section 13 applies.", False),
        ("3", "Released in Q3.", False),
        ("3", "Version 3.5 ships.", False),
        ("3", "Laptops last 3 years.", True),
        ("3 years", "Laptops last 3 years.", True),
        ("3 years", "Laptops last 13 years.", False),
        ("2014", "founded in 2014", True),
        ("2014", "founded in 20145", False),
        ("1,500", "a cap of 1500 EUR", True),
        ("1,500", "a cap of 11,500 EUR", False),
        ("0.32 EUR", "0.32 EUR per kilometre", True),
        ("0.32 EUR", "2.0.32 EUR", False),
        ("10:00", "Mondays at 10:00 UTC", True),
        ("10:00", "Mondays at 110:00", False),
        # words: whole words in order, plurals folded
        ("No", "No.", True),
        ("No", "Nobody knows.", False),
        ("No", "A note on notation.", False),
        ("pto", "my laptop", False),
        ("24 hours", "within 24hours", True),
        ("24 hours", "within 24-hours", True),
        ("head of department", "ask the head of the department", False),
        ("head of department", "ask the Head of Department", True),
        ("Restricted", "restricted data", True),
        ("Restricted", "unrestricted data", False),
        # citation markers never count as numbers
        ("2", "As stated [2].", False),
    ],
)
def test_keyword_matching(keyword: str, text: str, hit: bool) -> None:
    assert keyword_hit(text, [keyword]) == (1.0 if hit else 0.0)


@pytest.mark.parametrize(
    ("keyword", "weak"),
    [("No", True), ("no", True), ("the", True), ("3", True), ("42", True), ("[3]", True),
     ("5%", False), ("25 %", False), ("3 years", False), ("2014", False), ("100", False),
     ("Q3", False), ("not refunded", False), ("0.5", False), ("", True)],
)  # fmt: skip
def test_weak_keywords(keyword: str, weak: bool) -> None:
    assert is_weak_keyword(keyword) is weak


CHUNKS = [
    "No refunds are given after 3 days.",
    "There is no limit on section 3 requests.",
    "The fee is 5 EUR per booking; 3 bookings at most.",
    "Interest: 5% per year on balances over 1,500 EUR.",
]


def test_short_numbers_are_evidence_in_their_context() -> None:
    # Issue 20: a bare short number ("3", "24") used to be dropped as "weak", losing the
    # question from the funnel.  It is now matched as a whole number, with the unit the
    # reference answer gives it; a keyword of stopwords only ("No") still locates nothing.
    assert evidence_in_context(CHUNKS[:1], ["No"]) is None
    assert evidence_in_context(CHUNKS[:1], ["3"]) is True  # "3 days" holds the number 3
    assert evidence_in_context(CHUNKS[:1], ["3"], "Refunds within 3 days.") is True
    assert evidence_in_context(CHUNKS[:1], ["3"], "Laptops last 3 years.") is False
    assert evidence_in_context(CHUNKS[1:2], ["3"], "Within 3 days.") is False  # section 3
    assert evidence_in_context(CHUNKS[:1], ["13"]) is False  # whole numbers only
    assert evidence_in_context(CHUNKS[:1], ["No", "5%"]) is False
    assert evidence_in_context(CHUNKS[3:], ["No", "5%"]) is True
    # and an answer that says "No" does contain the keyword
    assert keyword_hit("No, it is not refunded.", ["No"]) == 1.0


def test_the_labeller_ignores_weak_keywords_and_binds_percent() -> None:
    chunks = [Chunk(f"c{i}", "D", i, t) for i, t in enumerate(CHUNKS)]
    labeller = HeuristicLabeller()
    grades = labeller.label("Interest?", "5% a year.", ["5%"], chunks)
    assert grades == {"c0": 0, "c1": 0, "c2": 0, "c3": 2}
    # only weak keywords: like no keywords, the reference's numbers with their unit decide
    grades = labeller.label("Refunds?", "No, not after 3 days.", ["No"], chunks)
    assert grades == {"c0": 2, "c1": 0, "c2": 0, "c3": 0}
    grades = labeller.label("How many?", "3", ["3"], chunks)
    assert grades == {"c0": 0, "c1": 0, "c2": 0, "c3": 0}  # nothing to locate it by


def test_tokens() -> None:
    assert keyword_tokens("5 Percent of Q3's 1,200 EUR [2]") == [
        "5%",
        "of",
        "q3",
        "s",
        "1200",
        "eur",
    ]
    assert strong_keywords(["No", "3", "3 years"]) == ["3 years"]
