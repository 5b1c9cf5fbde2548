"""The tokens the reference-answer judges compare: words, numbers with units, dates, times.

One analyser for the reference answer, the model's answer and the context chunks, so a fact
reads the same wherever it is written:

* citation markers (``[2]``) are removed; NFKC, lower case, thousands separators dropped
  (``1,200`` = ``1200``);
* number words are read by text2num (``"six hundred"`` = ``600``, ``"twenty-five"`` =
  ``25``, ``"one"`` = ``1``, ``"sixth"`` = ``6th``; ``"one-time"`` stays a word).  The
  fractions no measured parser reads are rewritten first: ``"half an hour"`` = ``0.5 hour``,
  ``"an hour and a half"`` = ``1.5 hour``, ``"two and a half days"`` = ``2.5 day``, ``"one
  tenth"`` = ``10%``, ``"a quarter of"`` = ``25%``, ``"half of"`` = ``50%``;
* a number is one whole token, compared by value (``1.50`` = ``1.5``), with its minus sign
  (``-40`` = ``minus 40``, not ``40``; a hyphen after a letter, digit or dot is no sign:
  ``R2-40``, ``10-20``); a percentage keeps its sign (``5%`` = ``5 percent`` but not ``5``);
  an ordinal is its own kind (``25th``, ``sixth`` = ``6th``, never ``6``);
* currencies by symbol, code or name read as the ISO code (``€``, ``EUR``, ``euros`` ->
  ``eur``; ``$``, ``US dollars`` -> ``usd``; ``₹``, ``rupees`` -> ``inr``; ``£``, ``pounds
  sterling`` -> ``gbp``; ``¥``, ``yen`` -> ``jpy``; ``CHF``, ``Swiss francs`` -> ``chf``);
* a time of day is one token (``10:00``, ``1:30 pm`` = ``13:30``); a day and month are one
  token whatever the order (``12 November``, ``November 12``, ``2024-11-12``), the year
  stays a number; ``end of March`` is the last day of March (``31 March``); weekday and month
  names are date words (``mon`` = ``mondays`` = ``monday``), and a weekday range is every day
  of it (``Tuesday through Thursday`` = ``Tuesday, Wednesday, Thursday``);
* other words are stemmed by the light stemmer of :mod:`ragaudit._text`, with a few unit
  spellings folded (``kilometers`` -> ``kilometre``, ``hrs``/``h`` -> ``hour``, ``mins`` ->
  ``minute``, ``quarterly`` -> ``quarter``, ``annual`` -> ``year``);
* stopwords are kept (with kind ``"stop"``) so phrases, rates and negations can be read.

A :class:`Quantity` is a number with its unit (the word after it, or its currency), its rate
period (``per minute``, ``a week``) and the words next to it: :func:`states_number` says
whether a text states it, converting units of one kind with pint (:mod:`.units`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from text_to_num import alpha2digit

from ragaudit._text import STOPWORDS, stem
from ragaudit.judges.keywords import unstemmed_tokens
from ragaudit.judges.units import measure, same_measure

__all__ = ["Quantity", "Token", "content_words", "quantities", "states_number", "tokens"]

#: Function words that carry no fact, beyond :data:`ragaudit._text.STOPWORDS` (question and
#: degree words: "how *often*", "*every* quarter", "*at least* 14").
EXTRA_STOPWORDS: frozenset[str] = frozenset(
    """every each least often long soon quickly exactly usually always ever else whose
    still already than up within since plus yes s t d ll re ve m one""".split()  # noqa: SIM905
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
_CURRENCIES = frozenset({"eur", "usd", "gbp", "inr", "jpy", "chf", "cad", "aud", "cny", "sek"})
_SYMBOLS = {"€": "eur", "£": "gbp", "$": "usd", "₹": "inr", "¥": "jpy"}
_CURRENCY_NAMES = re.compile(
    r"\b(?:u\.?s\.? dollars?|us\$|dollars?|euros?|rupees?|rs\.?(?=\s*\d)|pounds? sterling"
    r"|sterling|yen|swiss francs?|francs?)(?![a-z])"
)
_CURRENCY_OF = {
    "dollar": "usd", "euro": "eur", "rupee": "inr", "rs": "inr", "pound": "gbp",
    "sterling": "gbp", "yen": "jpy", "swiss": "chf", "franc": "chf", "us": "usd",
}  # fmt: skip
_CENTS = re.compile(r"\b(\d{1,2}) +(eur|usd|gbp|chf|cad|aud) +cents?\b")
_THOUSANDS = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?(?:k|thousand)\b")
_TIME_UNITS = "second|minute|hour|day|week|month|quarter|year|night|fortnight"
# fractions no measured parser reads (benchmarks/measure_quantity_parsers.py)
_FRACTIONS = (
    (rf"\b(?:an?|one) ({_TIME_UNITS})s? and a half\b", r"1.5 \1"),
    (rf"\bhalf (?:an?|one) ({_TIME_UNITS})\b", r"0.5 \1"),
    (rf"\b(?:a|one) quarter of an? ({_TIME_UNITS})\b", r"0.25 \1"),
    (rf"\bthree quarters of an? ({_TIME_UNITS})\b", r"0.75 \1"),
    (r"\b(?:a|one) (?:tenth)\b", "10%"), (r"\b(?:a|one) fifth\b", "20%"),
    (r"\b(?:a|one) quarter of\b", "25% of"), (r"\bhalf (?:of )?(?=the |all |a |an )", "50% "),
)  # fmt: skip
_AND_A_HALF = re.compile(r"\b(\d+) and a half\b")
# "a three-year warranty": a number word joined to its unit, which text2num does not split
_WORD_UNIT = re.compile(rf"\b([a-z]+)-(?=(?:{_TIME_UNITS}|decade|century)s?\b)")
# "0,31" is a decimal comma: a thousands separator is always followed by three digits
_DECIMAL_COMMA = re.compile(r"(?<![\d,.])(\d+),(\d{1,2})(?![\d,])")
# "a fortnight", "within an hour", "a decade": one of the unit, unless a number stands before
# it in its clause ("600 calls a minute", a rate) or a frequency word ("once a week")
_ONE_UNIT = re.compile(rf"\b(an?) ({_TIME_UNITS}|decade|century)\b")
_NOT_ONE = frozenset({"once", "twice", "thrice", "times", "per", "every", "each", "of"})
# Kept from text2num: "first"/"second" (an adjective and a unit, never 1st and 2nd, except
# inside "twenty-first") and "one" as a pronoun ("no one may", "one of them").
_PROTECT = re.compile(
    r"((?<!-)\b(?:first|second)\b|\b(?:no|any|every|some) one\b|\bone (?:of|another)\b)"
)
_WEEKDAY_RANGE = re.compile(
    r"\b(mon|tues?|wed|thu(?:rs)?|fri|sat|sun)[a-z]*?(?:day)?s?\s+(?:through|thru|to|until|till"
    r"|-|\u2013)\s+(mon|tues?|wed|thu(?:rs)?|fri|sat|sun)[a-z]*?(?:day)?s?\b"
)
_SLASH_RATE = re.compile(rf"(?<=[a-z0-9%])\s*/\s*(?=(?:{_TIME_UNITS}|min|hr|h|yr|wk)s?\b)")
_UNIT_SPELLINGS = {
    "kilometer": "kilometre",
    "kilometers": "kilometre", "kilometres": "kilometre", "km": "kilometre", "hr": "hour",
    "hrs": "hour", "min": "minute", "mins": "minute", "sec": "second", "secs": "second",
    "yr": "year", "yrs": "year", "wk": "week", "wks": "week", "pct": "percent", "h": "hour",
    "celsius": "c", "fahrenheit": "f",
    # adverbs and adjectives of a period read as the period ("quarterly" = "every quarter")
    "hourly": "hour", "daily": "day", "nightly": "night", "weekly": "week", "monthly": "month",
    "quarterly": "quarter", "yearly": "year", "annually": "year", "annual": "year",
}  # fmt: skip
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
_END_OF_MONTH = re.compile(rf"\b(?:the )?end of ({_MONTH_RE})\b")
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


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


def _weekdays(match: re.Match[str]) -> str:
    first, last = (next(d for d in _WEEKDAYS if d.startswith(g[:3])) for g in match.groups())
    i, j = _WEEKDAYS.index(first), _WEEKDAYS.index(last)
    days = _WEEKDAYS[i : j + 1] if i <= j else _WEEKDAYS[i:] + _WEEKDAYS[: j + 1]
    return " " + " ".join(days) + " "


def _currency(match: re.Match[str]) -> str:
    word = match.group(0).replace(".", "").split()[0].rstrip("s$")
    return f" {_CURRENCY_OF.get(word, 'usd' if word.startswith('u') else word)} "


def _numbers(text: str) -> str:
    """Number words read by text2num; the fractions it does not read rewritten first."""
    for pattern, repl in _FRACTIONS:
        text = re.sub(pattern, repl, text)
    text = _WORD_UNIT.sub(r"\1 ", text)
    pieces = _PROTECT.split(text)  # odd pieces are the protected words
    text = "".join(
        piece if i % 2 else alpha2digit(piece, "en", threshold=0) for i, piece in enumerate(pieces)
    )
    text = _AND_A_HALF.sub(lambda m: f"{int(m[1]) + 0.5:g}", text)
    return _ONE_UNIT.sub(_one_unit, text)


def _one_unit(match: re.Match[str]) -> str:
    before = re.split(r"[.,;:!?()]", match.string[: match.start()])[-1]
    words = before.split()
    if re.search(r"\d", before) or (words and words[-1] in _NOT_ONE):
        return match.group(0)
    return f"1 {match.group(2)}"


def _prepare(text: str) -> str:
    text = unicodedata.normalize("NFKC", _CITATION.sub(" ", text)).lower()
    text = _DECIMAL_COMMA.sub(r"\1.\2", text)
    for symbol, code in _SYMBOLS.items():
        text = text.replace(symbol, f" {code} ")
    text = _CURRENCY_NAMES.sub(_currency, text)
    text = _THOUSANDS.sub(lambda m: f"{float(m[1]) * 1000:g}", text)  # "3k", "1.5 thousand"
    text = _numbers(text)
    text = _CENTS.sub(lambda m: f" {m[2]} {int(m[1]) / 100:g} ", text)  # "32 euro cents"
    text = _SLASH_RATE.sub(" per ", text)
    text = _WEEKDAY_RANGE.sub(_weekdays, text)
    text = _TIME.sub(_time, text)
    text = _ISO_DATE.sub(lambda m: f" dm{int(m[2]):02d}{int(m[3]):02d} {m[1]} ", text)
    text = _END_OF_MONTH.sub(
        lambda m: f" {_MONTH_DAYS[_MONTH_OF[m[1]] - 1]} {m[1]} ", text
    )  # "the end of March" = "31 March"
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
    minus = False  # the previous token was a minus sign ("-40", "minus 40")
    for raw in unstemmed_tokens(_prepare(text)):
        if raw == "minus":
            minus = True
            continue
        if raw[0].isdigit():
            out.append(Token("number", ("-" if minus else "") + _number(raw)))
            minus = False
            continue
        if minus:  # "minus" before a word is the word
            out.append(Token("word", "minus"))
            minus = False
        if raw in ("percent", "pct") and out and out[-1].kind == "number":
            if not out[-1].text.endswith("%"):
                out[-1] = Token("number", out[-1].text + "%")
        elif raw.startswith("ord") and raw[3:].isdigit():
            out.append(Token("number", f"ord{int(raw[3:])}"))
        elif raw.startswith(("time", "dm")) and raw.lstrip("timed").isdigit():
            out.append(Token("date", raw))
        elif raw in _DATE_WORDS:
            out.append(Token("date", _DATE_WORDS[raw]))
        elif raw in STOPWORDS or raw in EXTRA_STOPWORDS:
            out.append(Token("stop", raw))
        else:
            out.append(Token("word", stem(_UNIT_SPELLINGS.get(raw, raw))))
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
        Its currency when one stands next to it (``"EUR 210"``, ``"$48,000 list price"``:
        ``"eur"``, ``"usd"``), else the word right after it, stemmed (``"days"`` ->
        ``"day"``); ``""`` when the next token is not a content word (a percentage has its
        sign for a unit).
    near : frozenset of str
        The word before it and up to two content words after it (stopwords skipped), so
        ``"EUR 210"`` and ``"25 working days"`` state ``210 EUR`` and ``25 days``.
    position : int
        Index of the number in the token list.
    currency : str
        The ISO code of the currency next to it, or ``""``.
    per : str
        The period of a rate: the word after ``per``, or a time unit after ``a``/``an``/
        ``each``/``every`` (``"600 calls a minute"`` -> ``"minute"``), within the next four
        tokens and before another number; ``""`` when it is no rate.
    """

    number: str
    unit: str
    near: frozenset[str]
    position: int
    currency: str = ""
    per: str = ""


_RATE_WORDS = frozenset({"a", "an", "each", "every"})
_PERIODS = frozenset(_TIME_UNITS.split("|"))


#: Words that make the period of a share ("15 % of the annual subscription": per year).
_PERIOD_OF = {**{p: p for p in ("hour", "day", "night", "week", "month", "quarter", "year")},
              "annual": "year", "annually": "year", "yearly": "year"}  # fmt: skip


_CLAUSE_BREAKS = frozenset({"and", "or", "but", "which", "while", "so"})
#: What is counted "per" one of: "per head" and "per capita" are "per person".
_PER_SAME = {"head": "person", "capita": "person"}
#: How far after its number a rate's "per" is read ("2 days of paid volunteering leave per
#: month": six tokens on), within the clause.
_RATE_REACH = 8


def _rate_period(toks: Sequence[Token], i: int) -> str:
    fallback = ""
    for j in range(i + 1, min(i + _RATE_REACH, len(toks))):
        tok = toks[j]
        if tok.kind in ("number", "date") or tok.text in _CLAUSE_BREAKS:
            break  # "10 years and computed every night": the period of another clause
        if toks[i].text.endswith("%") and tok.kind == "word" and tok.text in _PERIOD_OF:
            return _PERIOD_OF[tok.text]  # the stem of "weekly", "month's"
        nxt = toks[j + 1] if j + 1 < len(toks) else None
        if nxt is None:
            break
        if tok.text == "per" and nxt.kind == "word":
            # "per calendar year", "per working day": the period, past one qualifier; "per
            # meter per month": a period further on wins over the first thing counted
            after = [t.text for t in toks[j + 1 : j + 3] if t.kind == "word"]
            if toks[j + 2 : j + 3] == [Token("stop", "and")] and j + 3 < len(toks):
                after.append(toks[j + 3].text)  # "per meter and month": per month
            period = next((w for w in after if w in _PERIODS), "")
            if period:
                return period
            fallback = fallback or _PER_SAME.get(nxt.text, nxt.text)
        if tok.text in _RATE_WORDS and nxt.kind == "word":
            # "a minute", "for each weekend day": the period, past one qualifier
            after = [t.text for t in toks[j + 1 : j + 3] if t.kind == "word"]
            period = next((w for w in after if w in _PERIODS), "")
            if period:
                return period
    return fallback


def quantities(toks: Sequence[Token]) -> list[Quantity]:
    """The numbers of a token list with their units, in order.

    >>> [(q.number, q.unit) for q in quantities(tokens("25 days, 5 % and EUR 1,200 [3]"))]
    [('25', 'day'), ('5%', ''), ('1200', 'eur')]
    >>> sorted(quantities(tokens("EUR 1,200"))[0].near)
    ['eur']
    >>> [(q.number, q.unit, q.per) for q in quantities(tokens("six hundred calls a minute"))]
    [('600', 'call', 'minute')]
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
        currency = next((w for w in (before, unit) if w in _CURRENCIES), "")
        near = frozenset(w for w in (before, *after) if w)
        per = _rate_period(toks, i)
        found.append(Quantity(tok.text, currency or unit, near, i, currency, per))
    return found


def _other_unit(wanted: str, stated: str) -> bool:
    """Two different units of one pint kind ("week" and "day")."""
    a, b = measure(1, wanted) if wanted else None, measure(1, stated) if stated else None
    return a is not None and b is not None and wanted != stated and a[0] == b[0]


def _measured(q: Quantity, unit: str) -> tuple[str, float] | None:
    if not q.number[0].isdigit() and not q.number.startswith("-"):
        return None  # an ordinal is no amount
    if q.number.endswith("%"):
        return None
    return measure(float(q.number), unit, q.per)


def states_number(wanted: Quantity, stated: Sequence[Quantity]) -> bool:
    """Whether one of ``stated`` is the number ``wanted`` with its unit.

    Same number (value, percentage, ordinal), and the wanted unit among the words next to the
    stated number; a wanted number without a unit needs only its value, and a stated number
    with no word next to it (``"You get 25."``) is taken as stated.  A currency must be the
    same when the stated number names one (``$180`` never states ``€180``), and so must the
    period of a rate (``per hour`` never states ``per minute``).  A quantity also matches
    the same amount in another unit of its kind (pint, :mod:`ragaudit.judges.units`).

    >>> want = quantities(tokens("25 days"))[0]
    >>> states_number(want, quantities(tokens("You get 25 working days."))), states_number(
    ...     want, quantities(tokens("25 % of the days")))
    (True, False)

    A quantity may be stated in another unit of its kind, never in another currency or rate:

    >>> fortnight = quantities(tokens("14 days"))[0]
    >>> states_number(fortnight, quantities(tokens("two weeks"))), states_number(
    ...     fortnight, quantities(tokens("2 months")))
    (True, False)
    >>> euros = quantities(tokens("€180"))[0]
    >>> states_number(euros, quantities(tokens("180 euros"))), states_number(
    ...     euros, quantities(tokens("$180")))
    (True, False)
    >>> rate = quantities(tokens("600 requests per minute"))[0]
    >>> [states_number(rate, quantities(tokens(t))) for t in
    ...  ("six hundred requests a minute", "600 requests per hour", "36,000 requests/hour")]
    [True, False, True]
    """
    for s in stated:
        if wanted.currency and s.currency and s.currency != wanted.currency:
            continue
        if wanted.number.startswith("ord") and (
            s.number == wanted.number or (s.number == wanted.number[3:] and "day" in s.near)
        ):
            if not _other_unit(wanted.unit, s.unit):
                return True  # "the 6th consecutive sick day", "day 6" state "the sixth day"
            continue  # "the sixth week" never states "the sixth day"
        if s.number == wanted.number and (wanted.per == s.per or not (wanted.per and s.per)):
            if wanted.currency:
                return True  # the same currency, or none named beside the number
            if not wanted.unit or not s.near or wanted.unit in s.near:
                return True
            if not s.unit and s.per and s.near <= {s.per}:
                return True  # "six hundred per minute": only the rate's period beside it
    amount = _measured(wanted, wanted.unit)
    if amount is None:
        return False
    return any(
        same_measure(_measured(s, unit), amount)
        for s in stated
        if not (wanted.currency and s.currency != wanted.currency)
        for unit in {s.unit, *s.near}
    )
