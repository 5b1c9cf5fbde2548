"""Sentence splitting and citation re-attachment (pure Python, no model)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragaudit.llm.citations import CitedSentence, extract_citations, split_cited_sentences


def pairs(answer: str) -> list[tuple[str, tuple[int, ...]]]:
    return [(s.claim, s.citations) for s in split_cited_sentences(answer)]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # marker inside the sentence
        ("Refunds take 30 days [2].", [("Refunds take 30 days.", (2,))]),
        # marker after the full stop, separated by a space: a citation-only fragment
        ("Refunds take 30 days. [2]", [("Refunds take 30 days.", (2,))]),
        # the chapter's example: "[2]." as its own fragment
        ("Refunds take 30 days. [2].", [("Refunds take 30 days.", (2,))]),
        # glued to the full stop
        (
            "Refunds take 30 days.[2] Fees apply.",
            [("Refunds take 30 days.", (2,)), ("Fees apply.", ())],
        ),
        # leading markers of the next sentence belong to the previous one
        (
            "Refunds take 30 days. [2] Fees apply [3].",
            [("Refunds take 30 days.", (2,)), ("Fees apply.", (3,))],
        ),
        # several markers, grouped and chained
        ("A is true [1, 3]. B is true [2][4].", [("A is true.", (1, 3)), ("B is true.", (2, 4))]),
        ("A is true. [1] [3].", [("A is true.", (1, 3))]),
        # duplicates kept once, in order
        ("A [2] and B [2] [1].", [("A and B.", (2, 1))]),
        # a fragment on its own line, after a bullet
        ("- Ten days\n[4]\n- Two weeks [5]", [("- Ten days", (4,)), ("- Two weeks", (5,))]),
        # decimals and versions do not split sentences
        (
            "The rate is 3.5 percent [1]. Version 2.1 ships [2].",
            [("The rate is 3.5 percent.", (1,)), ("Version 2.1 ships.", (2,))],
        ),
        # question and exclamation marks end sentences too
        ("Really? Yes [1]! Done.", [("Really?", ()), ("Yes!", (1,)), ("Done.", ())]),
        # markers with no sentence before them stay with the sentence they open
        ("[1] The fleet has 12 ships.", [("The fleet has 12 ships.", (1,))]),
        # nothing but markers: no sentence
        ("[1] [2].", []),
        ("", []),
        ("   \n  ", []),
        # brackets that are not citations
        ("See [note] and [] here.", [("See [note] and [] here.", ())]),
    ],
)
def test_split_cited_sentences(answer: str, expected: list[tuple[str, tuple[int, ...]]]) -> None:
    assert pairs(answer) == expected


def test_sentence_text_keeps_markers_and_claim_drops_them() -> None:
    (sentence,) = split_cited_sentences("Refunds take 30 days. [2].")
    assert sentence == CitedSentence("Refunds take 30 days. [2]", (2,))
    assert sentence.claim == "Refunds take 30 days."


def test_every_cited_number_is_kept_by_the_split() -> None:
    # Invariant: re-attachment moves markers, never loses or invents them.
    answers = [
        "A. [1]. B [2]. [3] C.\n[4]\nD [5][6].",
        "X [1, 2]. [3]. Y. [4] [5] Z [6].",
    ]
    for answer in answers:
        split = [n for s in split_cited_sentences(answer) for n in s.citations]
        assert sorted(split) == sorted(extract_citations(answer))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A [2]. B [1, 2][3]. C [ 4 ].", [2, 1, 3, 4]),
        ("[10] and [2]", [10, 2]),
        ("none [x] [] [1a]", []),
        ("", []),
    ],
)
def test_extract_citations(text: str, expected: list[int]) -> None:
    assert extract_citations(text) == expected


# -- properties ---------------------------------------------------------------------------------

_words = st.lists(st.sampled_from(["refunds", "take", "30", "days", "HR", "3.5", "e-mail"]),
                  min_size=1, max_size=5).map(" ".join)  # fmt: skip
_markers = st.lists(st.integers(1, 12), max_size=3).map(lambda ns: "".join(f"[{n}]" for n in ns))
_sentence = st.tuples(_words, _markers, st.sampled_from([".", "!", "?"]),
                      st.sampled_from(["inside", "after", "own line"]))  # fmt: skip


def _render(parts: list[tuple[str, str, str, str]]) -> str:
    out = []
    for words, markers, stop, where in parts:
        if where == "inside":
            out.append(f"{words} {markers}{stop}".replace(" " + stop, stop))
        elif where == "after":
            out.append(f"{words}{stop} {markers}".rstrip())
        else:
            out.append(f"{words}{stop}\n{markers}".rstrip())
    return " ".join(out)


@given(st.lists(_sentence, min_size=1, max_size=6))
def test_markers_land_on_the_sentence_they_follow(parts: list[tuple[str, str, str, str]]) -> None:
    sentences = split_cited_sentences(_render(parts))
    assert len(sentences) == len(parts)
    for sentence, (words, markers, _stop, _where) in zip(sentences, parts, strict=True):
        expected = tuple(dict.fromkeys(extract_citations(markers)))
        assert sentence.citations == expected
        assert "[" not in sentence.claim
        assert sentence.claim.startswith(words)
