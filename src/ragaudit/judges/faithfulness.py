"""Offline faithfulness: the share of an answer's sentences that a context chunk supports.

The answer is split into sentences (at ``.``, ``!``, ``?``, ``;``, line breaks and the
``|`` of a table row; citation markers such as ``[2]`` are ignored).  A sentence without a
content word, number or date (``"Yes."``) asserts nothing checkable and is not counted.  A
sentence is *supported* when one retrieved context chunk supports it both ways:

* **lexically**: at least :data:`SUPPORT_SHARE` of the sentence's content words (stemmed,
  stopwords removed, :mod:`ragaudit.judges.claims`) occur in the chunk;
* **numerically**: every number of the sentence occurs in that chunk with its unit
  (:func:`~ragaudit.judges.claims.states_number`), and every date and time too.

.. math:: \\mathrm{faithfulness} = \\frac{|\\{s : s \\text{ supported}\\}|}{|\\{s\\}|}

An abstention asserts nothing and so fabricates nothing: its faithfulness is 1.0, as the LLM
faithfulness judge scores it (:mod:`ragaudit.judges.llm`).  An answer with no countable
sentence gets None.

Known limits (docs/guide/judges.md): a paraphrase with other words than the chunk's is
unsupported (no synonyms); a sentence that recombines true words into a false statement
("the R3 has 5 years" from "the R3 ... the R2 has 3 years; 5 years") is supported when its
words and numbers all occur in one chunk; a claim spread over two chunks is unsupported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragaudit.judges.claims import Token, content_words, quantities, states_number, tokens

__all__ = [
    "SUPPORT_SHARE",
    "SentenceSupport",
    "answer_sentences",
    "faithfulness",
    "sentence_support",
]

#: Share of a sentence's content words that one chunk must contain to support it.
SUPPORT_SHARE = 0.6

_SPLIT = re.compile(r"(?<=[.!?;])\s+|[\n|]+")
_CITATION = re.compile(r"\[\d+(?:\s*[,-]\s*\d+)*\]")


def answer_sentences(answer: str) -> list[str]:
    """The sentences of ``answer`` that assert something checkable.

    >>> answer_sentences("Yes. Book 14 days ahead [1]; ask IT [2].\\n| Zurich | 210 EUR |")
    ['Book 14 days ahead', 'ask IT.', 'Zurich', '210 EUR']
    """
    out: list[str] = []
    for part in _SPLIT.split(_CITATION.sub(" ", answer)):
        text = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(part.split())).strip(" ;")
        toks = tokens(text)
        if any(t.kind != "stop" for t in toks):
            out.append(text)
    return out


@dataclass(frozen=True)
class SentenceSupport:
    """One sentence and whether a chunk supports it (``chunk``: its index, else None)."""

    sentence: str
    supported: bool
    chunk: int | None


def _supports(sentence: list[Token], chunk: list[Token]) -> bool:
    words = content_words(sentence)
    have = set(content_words(chunk))
    if words and sum(w in have for w in words) / len(words) < SUPPORT_SHARE:
        return False
    stated = quantities(chunk)
    if not all(states_number(q, stated) for q in quantities(sentence)):
        return False
    dates = {t.text for t in chunk if t.kind == "date"}
    return all(t.text in dates for t in sentence if t.kind == "date")


def sentence_support(answer: str, context_texts: Sequence[str]) -> list[SentenceSupport]:
    """Each countable sentence of ``answer`` with the first chunk that supports it.

    >>> [(s.supported, s.chunk) for s in sentence_support(
    ...     "Flights are booked 14 days ahead [1]. Hotels cost 90 EUR.",
    ...     ["Hotels cost 120 EUR.", "Book flights at least 14 days ahead."])]
    [(True, 1), (False, None)]
    """
    chunks = [tokens(t) for t in context_texts]
    out: list[SentenceSupport] = []
    for sentence in answer_sentences(answer):
        toks = tokens(sentence)
        where = next((i for i, chunk in enumerate(chunks) if _supports(toks, chunk)), None)
        out.append(SentenceSupport(sentence, where is not None, where))
    return out


def faithfulness(
    answer: str, context_texts: Sequence[str], *, abstained: bool = False
) -> float | None:
    """Supported sentences / countable sentences (formula in the module docstring).

    Examples
    --------
    >>> faithfulness("Refunds take 30 days [1]. They are paid in cash.",
    ...              ["Refunds are paid within 30 days by bank transfer."])
    0.5
    >>> faithfulness("Refunds take 60 days [1].", ["Refunds are paid within 30 days."])
    0.0
    >>> faithfulness("I don't know.", [], abstained=True), faithfulness("Yes.", ["x"]) is None
    (1.0, True)
    """
    if abstained:
        return 1.0
    support = sentence_support(answer, context_texts)
    if not support:
        return None
    return sum(s.supported for s in support) / len(support)
