import pytest

from ragaudit.judges.offline import (
    all_keywords,
    answer_chunk_in_context,
    evidence_in_context,
    is_abstention,
    judge_offline,
    keyword_hit,
    numeric_match,
)
from ragaudit.pipeline.generators import REFUSAL


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (REFUSAL, True),
        ("i don\u2019t know \u2014 the documents do not cover this.", True),
        ("I do not know.", True),
        ("The provided context does not mention a bonus.", True),
        ("I cannot answer that from these documents.", True),
        ("There is not enough information to say.", True),
        ("This is not mentioned in the documents.", True),
        ("", True),
        ("The policy does not cover contractors [1].", False),  # a substantive negative answer
        ("You cannot carry over more than 5 days.", False),
        ("Flights must be booked 14 days ahead [2].", False),
    ],
)
def test_abstention_detection(answer, expected):
    assert is_abstention(answer) is expected


@pytest.mark.parametrize(
    ("answer", "keywords", "expected"),
    [
        ("Claims above 1200 EUR", ["1,200 EUR"], 1.0),  # thousands separator ignored
        ("Claims above 1,200 EUR", ["1200 eur"], 1.0),  # and case
        ("Reply within 24hours.", ["24 hours"], 1.0),  # spacing between number and unit
        ("Reply within 24-hours.", ["24 hours"], 1.0),
        ("Reply within 24 hours.", ["24 hour"], 1.0),  # plural folded
        ("A new laptop.", ["pto"], 0.0),  # whole words only
        ("See section [2].", ["2"], 0.0),  # citation markers are not numbers
        ("Ines Varga and Tomasz Reilly, in 2014.", ["2014", "Ines Varga", "Tomasz Reilly"], 1.0),
        ("Founded in 2014 by Ines Varga.", ["2014", "Ines Varga", "Tomasz Reilly"], 2 / 3),
        ("Varga Ines founded it.", ["Ines Varga"], 0.0),  # order matters
        ("Lunch 11:30 to 14:00", ["11:30", "14:00"], 1.0),
        ("0.32 EUR per km", ["0.32 EUR"], 1.0),
        ("0.3 EUR per km", ["0.32 EUR"], 0.0),
    ],
)
def test_keyword_hit(answer, keywords, expected):
    assert keyword_hit(answer, keywords) == pytest.approx(expected)


def test_keyword_judges_without_keywords_do_not_apply():
    assert keyword_hit("x", []) is None
    assert keyword_hit("x", ["  ", "!"]) is None  # keywords with no words are ignored
    assert all_keywords("x", []) is None
    assert evidence_in_context(["x"], []) is None


def test_all_keywords_is_the_strict_version():
    assert all_keywords("25 days until 31 March", ["25 days", "31 March"]) is True
    assert all_keywords("25 days", ["25 days", "31 March"]) is False


def test_numeric_match():
    assert numeric_match("It is 210 EUR [1].", "210 EUR per night, breakfast excluded.") is True
    assert numeric_match("It is 150 EUR.", "210 EUR per night.") is False
    assert numeric_match("14 days", "At least 14 days, above 1,000 EUR") is False  # all numbers
    assert numeric_match("Ask HR.", "Ask your manager.") is None


def test_evidence_in_context_allows_keywords_spread_over_chunks():
    context = ["Claims above 1,000 EUR need approval.", "Book flights 14 days ahead."]
    assert evidence_in_context(context, ["1000 EUR", "14 days"]) is True
    assert evidence_in_context(context[:1], ["1000 EUR", "14 days"]) is False
    # a keyword split across two chunks is not evidence
    assert evidence_in_context(["Book 14", "days ahead"], ["14 days"]) is False


def test_answer_chunk_in_context_uses_chunk_grades():
    assert answer_chunk_in_context(["a", "b"], {"b": 2}) is True
    assert answer_chunk_in_context(["a"], {"b": 2, "a": 0}) is False
    assert answer_chunk_in_context(["a"], {"a": 1}, min_grade=2) is False
    assert answer_chunk_in_context(["a"], {}) is None


def test_judge_offline_answerable_cases():
    kwargs = dict(
        answerable=True,
        reference_answer="25 days per year.",
        keywords=["25 days"],
        context_texts=["Staff get 25 days."],
        question="How many days of leave do staff get per year?",
    )
    right = judge_offline(answer="25 days [1].", **kwargs)
    assert right == {
        "abstained": False,
        "keyword_hit": 1.0,
        "correct": True,
        "numeric_match": True,
        "evidence_in_context": True,
        "answer_chunk_in_context": None,
        "faithfulness": 1.0,
    }
    wrong = judge_offline(answer="20 days [1].", **kwargs)
    assert (wrong["correct"], wrong["keyword_hit"], wrong["numeric_match"]) == (False, 0.0, False)
    refused = judge_offline(answer=REFUSAL, **kwargs)
    assert (refused["abstained"], refused["correct"], refused["evidence_in_context"]) == (
        True,
        False,
        True,
    )
    # without keywords, correctness falls back to the numbers of the reference
    no_kw = judge_offline(
        answer="You get 25.",
        answerable=True,
        reference_answer="25 days",
        keywords=[],
        context_texts=[],
    )
    assert (no_kw["correct"], no_kw["keyword_hit"]) == (True, None)


def test_judge_offline_unanswerable_cases():
    kwargs = dict(answerable=False, reference_answer="", keywords=[], context_texts=["x"])
    assert judge_offline(answer=REFUSAL, **kwargs)["correct"] is True
    hallucinated = judge_offline(answer="Dogs are welcome on Fridays [1].", **kwargs)
    assert hallucinated["correct"] is False and hallucinated["abstained"] is False
    assert hallucinated["keyword_hit"] is None and hallucinated["evidence_in_context"] is None


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [
        # the number with another unit, or as a percentage, is not the reference's number
        ("About 25 % of them.", "25 days", False),
        ("Room 25 on the second floor.", "25 days", False),
        ("It costs 25 EUR.", "25 days", False),
        ("5 days", "5%", False),
        ("Only 5.", "5 %", False),
        # the same quantity, however it is written
        ("5 percent", "5%", True),
        ("five percent", "5 %", True),
        ("three years", "3 years", True),
        ("EUR 210 a night [1]", "210 EUR per night.", True),
        ("25 working days", "25 days", True),
        ("You get 25.", "25 days", True),  # a number standing alone counts as stated
        ("It was founded in 2014 by Ines.", "Founded in 2014, in Aldermoor.", True),
        ("1,200 EUR", "1200 eur", True),
    ],
)
def test_numeric_match_wants_the_unit(answer, reference, expected):
    assert numeric_match(answer, reference) is expected
