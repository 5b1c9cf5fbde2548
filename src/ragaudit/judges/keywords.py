"""Keyword matching shared by the offline judges and the heuristic labeller.

A keyword matches a text when its tokens occur in the text as a contiguous run of whole
tokens.  The tokens are those of :func:`ragaudit._text.normalise_text` (NFKC, lower
case, thousands separators dropped), cut so that formatting never decides a match and no
token is ever matched inside another:

* words are runs of letters, folded by the light stemmer (``"hour"`` matches ``"hours"``);
* a number is one whole token: ``"5"`` never matches inside ``"15"``, ``"1.5"`` or ``"2025"``;
* a percent sign belongs to its number: ``"5%"``, ``"5 %"``, ``"5 percent"`` and
  ``"5 per cent"`` are all the token ``5%``, which never matches a bare ``5`` (and ``5``
  never matches ``5%``);
* digits after letters are part of an identifier: ``"Q3"``, ``"v2"``, ``"A4"`` are one
  token, so ``"3"`` does not match ``"Q3"``; digits before letters are a number and its
  unit, so ``"24hours"``, ``"24-hours"`` and ``"24 hours"`` match each other;
* citation markers such as ``[2]`` are removed first, so they never count as the number 2.

A keyword is *weak* when it cannot point to a passage: every token is a stopword (``"No"``,
``"the"``), or it is one small bare number without a unit (``"3"``; at most two digits).
Such words occur in a large share of any corpus by accident (in the bundled handbook ``"3"``
occurs in 29% of the 800-character chunks), so the heuristic labeller never grades a chunk
relevant on a weak keyword alone; they are still matched in answers.  The evidence judge's
keyword fallback (:func:`ragaudit.judges.offline.evidence_in_context`) does use a short
number, with the unit the reference answer gives it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragaudit._text import STOPWORDS, normalise_text, stem

__all__ = [
    "is_weak_keyword",
    "keyword_tokens",
    "match_tokens",
    "number_phrases",
    "strong_keywords",
    "unstemmed_tokens",
]

_CITATION = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]")
_PERCENT_WORD = re.compile(r"(?<=\d)\s*(?:%|\bper\s*cent\b|\bpercent\b|\bpct\b)")
_TOKEN = re.compile(r"\d+(?:\.\d+)?%?|[^\W\d_]+\d[^\W_]*|[^\W\d_]+")
_BARE_SMALL_NUMBER = re.compile(r"\d{1,2}")


def keyword_tokens(text: str) -> list[str]:
    """The match tokens of ``text`` (rules in the module docstring).

    Examples
    --------
    >>> keyword_tokens("Up to 5 percent, 1,200 EUR within 24hours [3], see Q3 of v2.1")
    ['up', 'to', '5%', '1200', 'eur', 'within', '24', 'hour', 'see', 'q3', 'of', 'v2', '1']
    >>> keyword_tokens("15 %") == keyword_tokens("15%") == keyword_tokens("15 per cent")
    True
    """
    return [t if any(c.isdigit() for c in t) else stem(t) for t in unstemmed_tokens(text)]


def unstemmed_tokens(text: str) -> list[str]:
    """The tokens before stemming (stopwords are tested on these).

    >>> unstemmed_tokens("Five percent of 1,200 rooms [2]")
    ['five', 'percent', 'of', '1200', 'rooms']
    """
    return _TOKEN.findall(_PERCENT_WORD.sub("%", normalise_text(_CITATION.sub(" ", text))))


def match_tokens(needle: Sequence[str], haystack: Sequence[str]) -> bool:
    """Whether ``needle`` occurs as a contiguous run of ``haystack`` (both token lists).

    >>> match_tokens(["24", "hour"], ["within", "24", "hour"])
    True
    >>> match_tokens(["5"], ["5%"]), match_tokens([], ["x"])
    (False, False)
    """
    n = len(needle)
    if n == 0:
        return False
    first = needle[0]
    return any(
        haystack[i] == first and list(haystack[i : i + n]) == list(needle)
        for i in range(len(haystack) - n + 1)
    )


def is_weak_keyword(keyword: str) -> bool:
    """Whether ``keyword`` is too common to locate an answer (see the module docstring).

    >>> [is_weak_keyword(k) for k in ["No", "3", "5 %", "14 days", "2014", "the", "Q3"]]
    [True, True, False, False, False, True, False]
    """
    raw = unstemmed_tokens(keyword)
    if not raw:
        return True
    if all(t in STOPWORDS for t in raw):
        return True
    return len(raw) == 1 and _BARE_SMALL_NUMBER.fullmatch(raw[0]) is not None


def strong_keywords(keywords: Sequence[str]) -> list[str]:
    """The keywords that can serve as evidence (not weak, not empty).

    >>> strong_keywords(["No", "3", "3 years", ""])
    ['3 years']
    """
    return [k for k in keywords if keyword_tokens(k) and not is_weak_keyword(k)]


def number_phrases(text: str) -> list[list[str]]:
    """The numbers ``text`` states, each with its unit: what a passage must say to state them.

    A number followed by a word takes that word as its unit (``"3 days"``); a percentage
    carries its sign; a bare number with at most two digits and no unit is left out (it
    would be found everywhere).

    >>> number_phrases("No, only 3 days, and 5% of 1,500 EUR; see 2.")
    [['3', 'day'], ['5%'], ['1500', 'eur']]
    """
    tokens = keyword_tokens(text)
    phrases: list[list[str]] = []
    for i, token in enumerate(tokens):
        if not token[0].isdigit():
            continue
        unit = tokens[i + 1] if i + 1 < len(tokens) else None
        if token.endswith("%"):
            phrases.append([token])
        elif unit is not None and not unit[0].isdigit() and unit not in STOPWORDS:
            phrases.append([token, unit])
        elif _BARE_SMALL_NUMBER.fullmatch(token) is None:
            phrases.append([token])
    return phrases
