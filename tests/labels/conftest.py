"""A hand-made corpus whose markdown sections are the chunks (chunker=markdown, big size)."""

from __future__ import annotations

import textwrap

import pytest

LEAVE = textwrap.dedent(
    """\
    # Annual leave
    Employees receive twenty days of paid leave per year.
    # Carry over
    Unused leave can be carried over until March.
    # Sick leave
    Tell your manager on the first day of illness.
    """
)
TRAVEL = textwrap.dedent(
    """\
    # Flights
    Book flights in Waypoint at least 14 days before departure.
    # Hotels
    The hotel cap is 210 EUR per night.
    """
)
GOLDEN = textwrap.dedent(
    """\
    - id: q1
      question: How many days of paid leave do employees get?
      answer: Twenty days per year.
      sources: [leave]
      keywords: ["twenty days"]
    - id: q2
      question: Until when can unused leave be carried over?
      answer: It can be carried over until March.
      sources: [leave]
      keywords: ["carried over", "March"]
    - id: q3
      question: How are flights booked?
      answer: In Waypoint, 14 days ahead, economy class.
      sources: [travel]
      keywords: ["14 days", "Waypoint", "economy"]
    - id: q4
      question: What is the parking policy?
      answer: ""
      answerable: false
    - id: q5
      question: What is the hotel cap?
      answer: 210 EUR per night.
      sources: [leave, travel]
      keywords: ["210 EUR"]
    """
)


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "leave.md").write_text(LEAVE, encoding="utf-8")
    (folder / "travel.md").write_text(TRAVEL, encoding="utf-8")
    golden = tmp_path / "golden.yaml"
    golden.write_text(GOLDEN, encoding="utf-8")
    return folder, golden
