"""Offline faithfulness: sentences supported by one chunk, lexically and numerically.

Expected values are counted by hand: supported sentences / countable sentences.
"""

from __future__ import annotations

import pytest

from ragaudit.judges.faithfulness import SUPPORT_SHARE, answer_sentences, faithfulness

CHUNKS = [
    "Flights must be booked in Waypoint at least 14 days before departure.",
    "The hotel cap is 210 EUR per night in Zurich and 140 EUR in Kellsport.",
]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Book flights in Waypoint 14 days before departure [1].", 1.0),
        # a number that differs makes the sentence unsupported, even with every word present
        ("Book flights in Waypoint 21 days before departure [1].", 0.0),
        # the number with another unit is not the chunk's number
        ("The Zurich hotel cap is 210 USD per night.", 0.0),
        ("Book flights 14 days before departure. The cap in Zurich is 210 EUR.", 1.0),
        ("Book flights 14 days before departure. Taxis are always refunded.", 1 / 2),
        # two sentences, one supported by each chunk; a third made up
        ("Flights: 14 days ahead. Zurich: 210 EUR per night. Kellsport has a lake.", 2 / 3),
        # a claim spread over two chunks (words from one, number from the other) is unsupported
        ("Flights must be booked 210 days before departure.", 0.0),
    ],
)
def test_faithfulness_by_hand(answer, expected):
    assert faithfulness(answer, CHUNKS) == pytest.approx(expected)


def test_sentences_ignore_citations_and_count_only_checkable_ones():
    assert answer_sentences("Yes. See [2]. Book 14 days ahead [1]; ask IT.") == [
        "See.",
        "Book 14 days ahead",
        "ask IT.",
    ]
    assert faithfulness("Yes.", CHUNKS) is None  # nothing checkable


def test_a_refusal_fabricates_nothing():
    # as the LLM faithfulness judge scores it (judges/llm.py)
    assert faithfulness("I don't know.", CHUNKS, abstained=True) == 1.0


def test_the_lexical_threshold_is_the_stated_share():
    # 5 content words (book, flight, waypoint, departure, tomorrow): 4/5 = 0.8 >= 0.6 supported;
    # 2/5 = 0.4 < 0.6 not.
    assert SUPPORT_SHARE == 0.6
    assert faithfulness("Book flights in Waypoint before departure tomorrow.", CHUNKS) == 1.0
    assert faithfulness("Book trains in Lisbon before departure tomorrow.", CHUNKS) == 0.0
