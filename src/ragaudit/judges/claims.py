"""The tokens the reference-answer judges compare: words, numbers with units, dates, times.

One analyser for the reference answer, the model's answer and the context chunks, so a fact
reads the same wherever it is written:

* citation markers (``[2]``) are removed; NFKC, lower case, thousands separators dropped
  (``1,200`` = ``1200``); ``€``, ``£``, ``$`` become ``eur``, ``gbp``, ``usd``;
* a number is one whole token, compared by value (``1.50`` = ``1.5``, ``"twenty-five"`` =
  ``25``, ``"one"`` = ``1``), with its minus sign (``-40`` = ``minus 40``, not ``40``; a
  hyphen after a letter, digit or dot is no sign: ``R2-40``, ``10-20``); a percentage keeps
  its sign (``5%`` = ``5 percent`` but not ``5``); an ordinal is its own kind (``25th``,
  ``sixth`` = ``6th``, never ``6``);
* a time of day is one token (``10:00``, ``1:30 pm`` = ``13:30``); a day and month are one
  token whatever the order (``12 November``, ``November 12``, ``2024-11-12``), the year
  stays a number; weekday and month names are date words (``mon`` = ``mondays`` = ``monday``);
* other words are stemmed by the light stemmer of :mod:`ragaudit._text`, with a few unit
  spellings folded (``euros`` -> ``eur``, ``kilometers`` -> ``kilometre``, ``hrs``/``h`` ->
  ``hour``, ``mins`` -> ``minute``, ``celsius`` -> ``c``, ``quarterly`` -> ``quarter``,
  ``annual`` -> ``year``);
* stopwords are kept (with kind ``"stop"``) so phrases and negations can be read.

A :class:`Quantity` is a number with the word after it (its unit) and the words next to it
(``"EUR 210"`` puts the unit first): :func:`states_number` says whether a text states it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ragaudit._text import STOPWORDS, stem
from ragaudit.judges.keywords import unstemmed_tokens

__all__ = ["Quantity", "Token", "content_words", "quantities", "states_number", "tokens"]

#: Function words that carry no fact, beyond :data:`ragaudit._text.STOPWORDS` (question and
#: degree words: "how *often*", "*every* quarter", "*at least* 14").
EXTRA_STOPWORDS: frozenset[str] = frozenset(
    """every each least often long soon quickly exactly usually always ever else whose
    still already than up within since plus yes s t d ll re ve m""".split()  # noqa: SIM905
)
_MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
]  # fmt: skip
_MONTH_OF = {**{m: i + 1 for i, m in enumerate(_MONTHS)}, "sept": 9}
_MONTH_OF.update({m[:3]: i + 1 for i, m in enumerate(_MONTHS) if m != "may"})
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_DATE_WORDS = {**{m: m for m in _MONTHS}, **{m[:3]: m for m in _MONTHS}, "sept": "september"}
_DATE_WORDS.update({d: d for d in _WEEKDAYS} | {d + "s": d for d in _WEEKDAYS})
_DATE_WORDS.update({d[:3]: d for d in _WEEKDAYS})
_DATE_WORDS.pop("mar")  # "mar" and "sat" are words too; only the full names count
_DATE_WORDS.pop("sat")
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
}  # fmt: skip
# "first" and "second" are left out: they are adjectives ("your first 14 days") and a unit.
_ORDINAL_WORDS = {
    "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10, "eleventh": 11, "twelfth": 12,
}  # fmt: skip
_TENS = {20, 30, 40, 50, 60, 70, 80, 90}
_UNIT_SPELLINGS = {
    "euro": "eur", "euros": "eur", "dollar": "usd", "dollars": "usd", "kilometer": "kilometre",
    "kilometers": "kilometre", "kilometres": "kilometre", "km": "kilometre", "hr": "hour",
    "hrs": "hour", "min": "minute", "mins": "minute", "sec": "second", "secs": "second",
    "yr": "year", "yrs": "year", "wk": "week", "wks": "week", "pct": "percent", "h": "hour",
    "celsius": "c", "fahrenheit": "f",
    # adverbs and adjectives of a period read as the period ("quarterly" = "every quarter")
    "hourly": "hour", "daily": "day", "nightly": "night", "weekly": "week", "monthly": "month",
    "quarterly": "quarter", "yearly": "year", "annually": "year", "annual": "year",
}  # fmt: skip
#: Durations convertible into each other, in minutes and in months ("two weeks" = "14 days",
#: "1 hour" = "60 minutes", "1 year" = "12 months"); a month is not a whole number of days.
_DURATIONS = (
    {"second": 1 / 60, "minute": 1.0, "hour": 60.0, "day": 1440.0, "week": 10080.0},
    {"month": 1.0, "quarter": 3.0, "year": 12.0},
)
_CITATION = re.compile(r"\[\d+(?:\s*[,-]\s*\d+)*\]")
_MONTH_RE = "|".join(sorted(_MONTH_OF, key=len, reverse=True))
_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])|\b(\d{1,2}):(\d{2})\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\b\.?")
_MONTH_DAY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?![.:]\d)")
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
# A minus sign that is not a hyphen: not after a letter, digit or dot ("-40 °C", not "R2-40",
# "10-20" or "30-day"); "+70" needs nothing (the plus sign is dropped).
_MINUS = re.compile(r"(?<![\w.\-])[-\u2212](?=\d)")


@dataclass(frozen=True)
class Token:
    """One token: ``kind`` is ``"word"``, ``"stop"``, ``"number"`` or ``"date"``.

    ``text`` is the stemmed word, the canonical number (``"25"``, ``"5%"``, ``"ord6"``) or
    the date token (``"time1330"``, ``"dm1112"``, ``"monday"``).
    """

    kind: str
    text: str


def _time(match: re.Match[str]) -> str:
    if match.group(4) is not None:
        hour, minute = int(match.group(4)), int(match.group(5))
    else:
        hour, minute = int(match.group(1)), int(match.group(2) or 0)
        pm = match.group(3).startswith("p")
        hour = hour % 12 + (12 if pm else 0)
    return f" time{hour:02d}{minute:02d} "


def _prepare(text: str) -> str:
    text = unicodedata.normalize("NFKC", _CITATION.sub(" ", text)).lower()
    text = text.replace("€", " eur ").replace("£", " gbp ").replace("$", " usd ")
    text = _TIME.sub(_time, text)
    text = _ISO_DATE.sub(lambda m: f" dm{int(m[2]):02d}{int(m[3]):02d} {m[1]} ", text)
    text = _DAY_MONTH.sub(lambda m: f" dm{_MONTH_OF[m[2]]:02d}{int(m[1]):02d} ", text)
    text = _MONTH_DAY.sub(lambda m: f" dm{_MONTH_OF[m[1]]:02d}{int(m[2]):02d} ", text)
    text = _ORDINAL.sub(lambda m: f" ord{int(m[1])} ", text)
    return _MINUS.sub(" minus ", text)


def _number(raw: str) -> str:
    percent = raw.endswith("%")
    value = float(raw.rstrip("%"))
    return f"{value:g}{'%' if percent else ''}"


def tokens(text: str) -> list[Token]:
    """The tokens of ``text`` (rules in the module docstring).

    Examples
    --------
    >>> [t.text for t in tokens("Twenty-five days [2], 5 percent, EUR 1,200.50 on Monday")]
    ['25', 'day', '5%', 'eur', '1200.5', 'on', 'monday']
    >>> [t.text for t in tokens("From 02:10 to 5:50 pm on 12 November 2024, the 25th")]
    ['from', 'time0210', 'to', 'time1750', 'on', 'dm1112', '2024', 'the', 'ord25']
    >>> [t.kind for t in tokens("the sixth day")]
    ['stop', 'number', 'word']
    """
    out: list[Token] = []
    spelled = False  # the previous token was a spelled-out tens number ("twenty")
    minus = False  # the previous token was a minus sign ("-40", "minus 40")
    for raw in unstemmed_tokens(_prepare(text)):
        if raw == "minus":
            minus = True
            continue
        if raw[0].isdigit():
            out.append(Token("number", ("-" if minus else "") + _number(raw)))
            minus = spelled = False
            continue
        if minus:  # "minus" before a word is the word
            out.append(Token("word", "minus"))
            minus = False
        if raw in _NUMBER_WORDS:
            value = _NUMBER_WORDS[raw]
            if spelled and 1 <= value <= 9 and int(out[-1].text) in _TENS:
                out[-1] = Token("number", str(int(out[-1].text) + value))
                spelled = False
                continue
            out.append(Token("number", str(value)))
            spelled = value in _TENS
        elif raw in ("percent", "pct") and out and out[-1].kind == "number":
            if not out[-1].text.endswith("%"):
                out[-1] = Token("number", out[-1].text + "%")
            spelled = False
        elif raw in _ORDINAL_WORDS or (raw.startswith("ord") and raw[3:].isdigit()):
            value = _ORDINAL_WORDS.get(raw) or int(raw[3:])
            out.append(Token("number", f"ord{value}"))
            spelled = False
        elif raw.startswith(("time", "dm")) and raw.lstrip("timed").isdigit():
            out.append(Token("date", raw))
            spelled = False
        elif raw in _DATE_WORDS:
            out.append(Token("date", _DATE_WORDS[raw]))
            spelled = False
        elif raw in STOPWORDS or raw in EXTRA_STOPWORDS:
            out.append(Token("stop", raw))
            spelled = False
        else:
            out.append(Token("word", stem(_UNIT_SPELLINGS.get(raw, raw))))
            spelled = False
    return out


def content_words(toks: Sequence[Token]) -> list[str]:
    """The stemmed content words of a token list (no stopwords, numbers or dates).

    >>> content_words(tokens("Only the incident commander approves it."))
    ['incident', 'commander', 'approve']
    """
    return [t.text for t in toks if t.kind == "word"]


@dataclass(frozen=True)
class Quantity:
    """A number stated in a text, with what stands next to it.

    Attributes
    ----------
    number : str
        The canonical number (``"25"``, ``"5%"``, ``"ord6"``).
    unit : str
        The word right after it, stemmed (``"days"`` -> ``"day"``); ``""`` when the next
        token is not a content word (a percentage has its sign for a unit).
    near : frozenset of str
        The word before it and up to two content words after it (stopwords skipped), so
        ``"EUR 210"`` and ``"25 working days"`` state ``210 EUR`` and ``25 days``.
    position : int
        Index of the number in the token list.
    """

    number: str
    unit: str
    near: frozenset[str]
    position: int


def quantities(toks: Sequence[Token]) -> list[Quantity]:
    """The numbers of a token list with their units, in order.

    >>> [(q.number, q.unit) for q in quantities(tokens("25 days, 5 % and EUR 1,200 [3]"))]
    [('25', 'day'), ('5%', ''), ('1200', '')]
    >>> sorted(quantities(tokens("EUR 1,200"))[0].near)
    ['eur']
    """
    found: list[Quantity] = []
    for i, tok in enumerate(toks):
        if tok.kind != "number":
            continue
        after: list[str] = []
        for nxt in toks[i + 1 : i + 4]:
            if nxt.kind in ("number", "date") or len(after) == 2:
                break
            if nxt.kind == "word":
                after.append(nxt.text)
        follows = toks[i + 1] if i + 1 < len(toks) else None
        unit = ""
        if follows is not None and follows.kind == "word" and not tok.text.endswith("%"):
            unit = follows.text
        before = toks[i - 1].text if i and toks[i - 1].kind == "word" else ""
        found.append(Quantity(tok.text, unit, frozenset(w for w in (before, *after) if w), i))
    return found


def states_number(wanted: Quantity, stated: Sequence[Quantity]) -> bool:
    """Whether one of ``stated`` is the number ``wanted`` with its unit.

    Same number (value, percentage, ordinal), and the wanted unit among the words next to the
    stated number; a wanted number without a unit needs only its value, and a stated number
    with no word next to it (``"You get 25."``) is taken as stated.  A duration also matches
    the same length in another unit (seconds to weeks; months, quarters and years).

    >>> want = quantities(tokens("25 days"))[0]
    >>> states_number(want, quantities(tokens("You get 25 working days."))), states_number(
    ...     want, quantities(tokens("25 % of the days")))
    (True, False)

    A duration may be stated in another unit of its kind:

    >>> fortnight = quantities(tokens("14 days"))[0]
    >>> states_number(fortnight, quantities(tokens("two weeks"))), states_number(
    ...     fortnight, quantities(tokens("2 months")))
    (True, False)
    """
    if any(
        s.number == wanted.number and (not wanted.unit or not s.near or wanted.unit in s.near)
        for s in stated
    ):
        return True
    amount = _duration(wanted.number, wanted.unit)
    return amount is not None and any(
        _duration(s.number, unit) == amount for s in stated for unit in {s.unit, *s.near}
    )


def _duration(number: str, unit: str) -> tuple[int, float] | None:
    """``(family, length)`` of a duration such as ``2 week`` (None for anything else)."""
    if not unit or not number[0].isdigit() or number.endswith("%"):
        return None
    for family, lengths in enumerate(_DURATIONS):
        if unit in lengths:
            return family, round(float(number) * lengths[unit], 6)
    return None
