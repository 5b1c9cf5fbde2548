"""Sentences and their ``[n]`` citations, in plain Python (no model involved).

The citation judge checks every (sentence, cited chunk) pair, so it first has to know which
sentence each marker belongs to.  Generators often write the marker *after* the full stop
("... 30 days. [2]" or "... 30 days.[2][3]") or even as a line of its own, which a naive
sentence splitter turns into a citation-only fragment.  The rules here:

1. Lines are split at line breaks, then at whitespace following ``.``, ``!`` or ``?``
   (a marker glued to the full stop, "days.[2] Next", counts as separated by a space).
2. Citation markers at the very start of a segment (``[2]``, ``[2, 3]``, ``[2][3]``, with any
   punctuation after them) belong to the sentence before it, when there is one: "Fact. [2]
   Next fact." cites [2] for "Fact.".
3. A segment left with no words is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CITATION", "CitedSentence", "extract_citations", "split_cited_sentences"]

#: One citation marker: ``[3]`` or ``[1, 2]``.
CITATION = re.compile(r"\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]")
_LEADING_MARKERS = re.compile(r"^(?:\s*\[\s*\d+(?:\s*,\s*\d+)*\s*\])+[\s.,;:!?]*")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w")
_GLUED_MARKER = re.compile(r"([.!?])(?=\[\s*\d)")


@dataclass(frozen=True)
class CitedSentence:
    """A sentence of an answer and the 1-based context positions it cites."""

    text: str
    citations: tuple[int, ...]

    @property
    def claim(self) -> str:
        """The sentence without its citation markers (what gets checked against a chunk)."""
        stripped = CITATION.sub("", self.text)
        stripped = re.sub(r"\s+([.,;:!?])", r"\1", stripped)
        return " ".join(stripped.split())


def extract_citations(text: str) -> list[int]:
    """Every cited position, in order of first appearance, without duplicates.

    Examples
    --------
    >>> extract_citations("A [2]. B [1, 2][3]. C [ 4 ].")
    [2, 1, 3, 4]
    >>> extract_citations("no markers, [x] or [] here")
    []
    """
    seen: dict[int, None] = {}
    for match in CITATION.finditer(text):
        for number in match.group(1).split(","):
            seen.setdefault(int(number), None)
    return list(seen)


def _numbers(markers: str) -> list[int]:
    return [int(n) for m in CITATION.finditer(markers) for n in m.group(1).split(",")]


def split_cited_sentences(answer: str) -> list[CitedSentence]:
    """Split an answer into sentences, re-attaching citation-only fragments.

    Examples
    --------
    >>> [(s.claim, s.citations) for s in split_cited_sentences(
    ...     "Refunds take 30 days. [2]. Fees are waived [1][3]. Ask HR.")]
    [('Refunds take 30 days.', (2,)), ('Fees are waived.', (1, 3)), ('Ask HR.', ())]
    >>> listing = "- Ten days\\n[4]\\n- Two weeks [5]"
    >>> [(s.claim, s.citations) for s in split_cited_sentences(listing)]
    [('- Ten days', (4,)), ('- Two weeks', (5,))]
    """
    texts: list[str] = []
    for line in answer.splitlines():
        # "days.[2] Fees" -> "days. [2] Fees": the marker then reads as a leading fragment.
        spaced = _GLUED_MARKER.sub(r"\1 ", line.strip())
        for segment in _SENTENCE_BREAK.split(spaced):
            segment = segment.strip()
            if not segment:
                continue
            lead = _LEADING_MARKERS.match(segment)
            if lead and texts:
                # "[2]." or "[2] Next sentence": the markers belong to the sentence before.
                markers = "".join(m.group(0) for m in CITATION.finditer(lead.group(0)))
                texts[-1] = f"{texts[-1]} {markers}"
                segment = segment[lead.end() :].strip()
            if segment:
                texts.append(segment)
    sentences = []
    for text in texts:
        if not _WORD.search(CITATION.sub("", text)):
            continue  # markers with no previous sentence to attach to
        cited = dict.fromkeys(_numbers(text))
        sentences.append(CitedSentence(text, tuple(cited)))
    return sentences
