"""Text shared by the pipeline and the judges: the analyser and the refusal sentence.

A leaf module (it imports nothing of ragaudit), so the judges can use it without importing the
pipeline.  :data:`REFUSAL` is the exact answer of a generator that abstains; the offline judges
recognise it.  The analyser is deliberately simple and documented, so retrieval, reading and
judging agree on what a "word" is:

1. Unicode NFKC, then lower case.
2. Thousands separators inside numbers are dropped (``1,200`` -> ``1200``); decimals are kept
   (``1.5`` stays one token).
3. Tokens are runs of letters or digits; a letter/digit boundary splits a token
   (``24hours`` -> ``24``, ``hours``), so spacing does not change the tokens.
4. A small English stopword list (function words and question words) is removed.
5. A light suffix stemmer folds plurals and common inflections: ``-ies`` -> ``-y``,
   ``-sses`` -> ``-ss``, then a trailing ``-s`` (not ``-ss``/``-us``/``-is``) is dropped, then
   ``-ing``/``-ed`` are dropped when at least four letters remain.  No dictionary, no Porter:
   predictable, and good enough for a handbook-sized corpus.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "REFUSAL",
    "STOPWORDS",
    "content_tokens",
    "normalise_text",
    "shown_id",
    "stem",
    "tokenize",
]


def shown_id(text: str) -> str:
    """An id as a message prints it: as is, or as its ``repr`` when it holds a character one
    cannot see (a zero-width space, a control character, a non-breaking or trailing space),
    so two ids that look identical in a warning can be told apart.

    >>> print(shown_id("q1"), shown_id("q1\\u200b"))
    q1 'q1\\u200b'
    """
    if text.isprintable() and text == text.strip():
        return text
    return repr(text)


#: What a generator answers when it abstains (the extractive reader, the LLM generator's prompt).
REFUSAL = "I don't know - the documents do not cover this."

STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves many much get got may might must shall also per
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+")


def normalise_text(text: str) -> str:
    """NFKC, lower case, and thousands separators removed.

    >>> normalise_text("Up to 1,200 EUR")
    'up to 1200 eur'
    """
    return _THOUSANDS.sub("", unicodedata.normalize("NFKC", text).lower())


def tokenize(text: str) -> list[str]:
    """All tokens of ``text`` (no stopword removal, no stemming), in order.

    Letters and digits never share a token, so ``"24hours"`` and ``"24 hours"`` agree.

    >>> tokenize("Refunds within 24hours, max 1,200.50 EUR!")
    ['refunds', 'within', '24', 'hours', 'max', '1200.50', 'eur']
    """
    return _TOKEN.findall(normalise_text(text))


def stem(token: str) -> str:
    """Light suffix stemming (see the module docstring for the exact rules).

    >>> [stem(t) for t in ["policies", "laptops", "classes", "status", "booking", "approved"]]
    ['policy', 'laptop', 'class', 'status', 'book', 'approv']
    """
    if token.isdigit() or len(token) <= 3:
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith("sses"):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    for suffix in ("ing", "ed"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 4:
            return token[: -len(suffix)]
    return token


def content_tokens(text: str) -> list[str]:
    """Stemmed tokens of ``text`` without stopwords: the terms BM25 and the reader match on.

    >>> content_tokens("How many laptops does a new hire get?")
    ['laptop', 'new', 'hire']
    """
    return [stem(t) for t in tokenize(text) if t not in STOPWORDS]
