"""Yes/no polarity: what a reference answer asserts, and what an answer asserts.

A reference answer has a polarity when it opens with ``Yes`` or ``No`` (``"No. Travel
insurance is not refunded."``).  An answer's polarity is read as a person skims it:

1. an answer that opens with ``yes`` or ``no`` has that polarity;
2. otherwise it is ``"no"`` when a sentence about the question (one that shares a content
   word with it; every sentence when none does) holds a negation cue, else ``"yes"``.

Negation cues: ``not``, ``no``, ``never``, ``none``, ``nobody``, ``nothing``, ``neither``,
``nor``, ``cannot``, any ``-n't`` contraction, ``no longer``, and the verbs of refusal
``prohibited``, ``forbidden``, ``excluded``, ``not allowed``, ``not permitted``.  Phrases
that look negative but bound a quantity or widen a claim are removed first: ``no more
than``, ``no later than``, ``no less than``, ``no fewer than``, ``not more/less/later than``,
``not only``, ``not just``, ``no matter``, ``whether or not``.

Known limits (stated in docs/guide/judges.md): a double negation (``"you cannot travel
without approval"``, meaning yes with a condition) reads as ``"no"``; a negation inside a
subordinate clause of an otherwise positive answer (``"Yes, unless it is not approved"``
is caught by rule 1, but ``"It is refunded if the receipt is not lost"`` reads as
``"no"``); negative words outside the list (``"refused"``, ``"rejected"``,
``"ineligible"``) are not cues.
"""

from __future__ import annotations

import re

from ragaudit._text import STOPWORDS, content_tokens, normalise_text

__all__ = ["answer_polarity", "has_negation", "reference_polarity"]

_LEADING = re.compile(
    r"^\W*(yes|no)\b(?!\s+(?:more|later|less|fewer|longer)\b)\s*(?:[.,;:!\-\u2013\u2014]|$)"
)
_NOT_NEGATIONS = re.compile(
    r"\b(?:no|not)\s+(?:more|later|less|fewer|earlier|sooner)\s+than\b"
    r"|\bnot\s+(?:only|just)\b|\bno\s+matter\b|\bwhether\s+or\s+not\b"
)
_CUES = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|prohibited|forbidden"
    r"|excluded)\b|\b\w+n['\u2019]t\b"
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def reference_polarity(reference: str) -> str | None:
    """``"yes"`` or ``"no"`` when the reference opens with that word, else None.

    >>> reference_polarity("No. Travel insurance is not refunded.")
    'no'
    >>> reference_polarity("Yes, up to 3 days."), reference_polarity("No more than 3 days.")
    ('yes', None)
    """
    match = _LEADING.match(normalise_text(reference))
    return match.group(1) if match else None


def has_negation(text: str) -> bool:
    """Whether ``text`` holds a negation cue (rules in the module docstring).

    >>> has_negation("Telemetry must never be pasted into public AI assistants.")
    True
    >>> has_negation("Claims of no more than 50 EUR need no receipt.")
    True
    >>> has_negation("Book no later than 14 days ahead."), has_negation("It isn't.")
    (False, True)
    """
    text = _NOT_NEGATIONS.sub(" ", normalise_text(text))
    return _CUES.search(text) is not None


def answer_polarity(answer: str, question: str = "") -> str:
    """The polarity an answer asserts about ``question`` (rules in the module docstring).

    Examples
    --------
    >>> q = "May telemetry be pasted into public AI assistants?"
    >>> answer_polarity("Telemetry is Confidential and must never be pasted into public AI "
    ...                 "assistants [2].", q)
    'no'
    >>> answer_polarity("Yes, with your manager's approval.", q)
    'yes'
    >>> answer_polarity("Telemetry is Internal. Nothing else is listed.", q)
    'yes'
    """
    lead = _LEADING.match(normalise_text(answer))
    if lead:
        return lead.group(1)
    asked = set(content_tokens(question)) - STOPWORDS
    sentences = [s for s in _SENTENCE.split(answer) if s.strip()]
    about = [s for s in sentences if asked & set(content_tokens(s))] or sentences
    return "no" if any(has_negation(s) for s in about) else "yes"
