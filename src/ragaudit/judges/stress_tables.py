"""The word tables of the judge stress test: number words, units, currencies, calendar names,
polarity pairs and refusals.

Written for :mod:`ragaudit.judges.stress` alone and on purpose *not* shared with the judges'
parsers (:mod:`ragaudit.judges.claims`, :mod:`ragaudit.judges.reference`, :mod:`ragaudit._text`
and their neighbours): a stress test that read numbers with the code it tests could only
confirm that code.  An import-linter contract in ``pyproject.toml`` and
``tests/judges/test_stress_independent.py`` keep the two apart.

Examples
--------
>>> number_to_words(1500), number_to_words(21), ordinal_words(25)
('one thousand five hundred', 'twenty-one', 'twenty-fifth')
>>> words_to_number("forty-two"), words_to_number("six"), words_to_number("twelfth")
(42, 6, None)
"""

from __future__ import annotations

__all__ = [
    "CURRENCIES",
    "CURRENCY_OF",
    "IDENTIFIER_WORDS",
    "MONTHS",
    "POLARITY",
    "REFUSALS",
    "UNITS",
    "UNIT_NAMED",
    "UNIT_OF",
    "WEEKDAYS",
    "Unit",
    "number_to_words",
    "ordinal_to_number",
    "ordinal_words",
    "unit_word",
    "words_to_number",
]

from dataclasses import dataclass

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORDINAL_ONES = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
]
_ORDINAL_TENS = "_ _ twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth"


def number_to_words(n: int) -> str:
    """English words for a whole number ``0 <= n < 10**9`` (hyphenated 21-99, no "and").

    >>> number_to_words(0), number_to_words(600), number_to_words(20000)
    ('zero', 'six hundred', 'twenty thousand')
    """
    if n < 0 or n >= 10**9:
        raise ValueError(f"number_to_words: expected 0 <= n < 10**9, found {n}")
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_ONES[hundreds]} hundred" + (f" {number_to_words(rest)}" if rest else "")
    for size, name in ((10**6, "million"), (1000, "thousand")):
        if n >= size:
            high, rest = divmod(n, size)
            return f"{number_to_words(high)} {name}" + (f" {number_to_words(rest)}" if rest else "")
    raise AssertionError("unreachable")  # pragma: no cover


def ordinal_words(n: int) -> str:
    """English ordinal words for ``1 <= n < 100`` ("twenty-fifth").

    >>> ordinal_words(1), ordinal_words(30), ordinal_words(42)
    ('first', 'thirtieth', 'forty-second')
    """
    if not 1 <= n < 100:
        raise ValueError(f"ordinal_words: expected 1 <= n < 100, found {n}")
    if n < 20:
        return _ORDINAL_ONES[n]
    tens, ones = divmod(n, 10)
    if not ones:
        return _ORDINAL_TENS.split()[tens]
    return f"{_TENS[tens]}-{_ORDINAL_ONES[ones]}"


# word -> value for the cardinal words a reference may spell out (one .. ninety-nine)
_CARDINAL = {number_to_words(n): n for n in range(100)}
_ORDINAL = {ordinal_words(n): n for n in range(1, 100)}


def words_to_number(word: str) -> int | None:
    """The value of one cardinal word or hyphenated pair below 100 (case-insensitive), else None.

    >>> words_to_number("Three"), words_to_number("hundred")
    (3, None)
    """
    return _CARDINAL.get(word.lower())


def ordinal_to_number(word: str) -> int | None:
    """The value of an ordinal word below 100 ("sixth" -> 6), else None.

    >>> ordinal_to_number("Sixth"), ordinal_to_number("six")
    (6, None)
    """
    return _ORDINAL.get(word.lower())


@dataclass(frozen=True)
class Unit:
    """A unit of measure: its name, kind, spellings, and size in the kind's base unit.

    ``size`` is None where a conversion is not exact (a month is no fixed number of days).
    """

    name: str
    kind: str
    singular: str
    plural: str
    size: float | None
    spellings: tuple[str, ...] = ()


#: Durations ("clock": seconds to weeks, base minute; "calendar": months and years, base
#: month), temperatures and distances.  A day and a month never convert into each other.
UNITS: tuple[Unit, ...] = (
    Unit("second", "clock", "second", "seconds", 1 / 60, ("secs", "sec")),
    Unit("minute", "clock", "minute", "minutes", 1, ("mins", "min")),
    Unit("hour", "clock", "hour", "hours", 60, ("hrs", "hr", "h")),
    Unit("day", "clock", "day", "days", 1440),
    Unit("week", "clock", "week", "weeks", 10080),
    Unit("month", "calendar", "month", "months", 1),
    Unit("year", "calendar", "year", "years", 12),
    Unit("celsius", "temperature", "°C", "°C", None, ("degrees Celsius",)),
    Unit("fahrenheit", "temperature", "°F", "°F", None, ("degrees Fahrenheit",)),
    Unit("kilometre", "distance", "kilometre", "kilometres", 1000,
         ("kilometer", "kilometers", "km")),
    Unit("mile", "distance", "mile", "miles", 1609.344),
    Unit("metre", "distance", "metre", "metres", 1, ("m",)),
)  # fmt: skip

#: Unit name -> unit.
UNIT_NAMED: dict[str, Unit] = {unit.name: unit for unit in UNITS}

#: Every spelling (lower case, "°c" kept as written) -> its unit.
UNIT_OF: dict[str, Unit] = {}
for _unit in UNITS:
    for _form in (_unit.singular, _unit.plural, *_unit.spellings):
        UNIT_OF.setdefault(_form.lower(), _unit)


def unit_word(unit: Unit, value: float) -> str:
    """The spelling of ``unit`` after ``value``: singular for exactly 1.

    >>> unit_word(UNIT_OF["hours"], 1), unit_word(UNIT_OF["hour"], 0.5)
    ('hour', 'hours')
    """
    return unit.singular if value == 1 else unit.plural


#: Currencies: code -> (symbol, singular name, plural name).  "$" alone is the US dollar.
CURRENCIES: dict[str, tuple[str, str, str]] = {
    "EUR": ("€", "euro", "euros"),
    "USD": ("$", "US dollar", "US dollars"),
    "GBP": ("£", "pound sterling", "pounds sterling"),
    "INR": ("₹", "rupee", "rupees"),
    "JPY": ("¥", "yen", "yen"),
    "CHF": ("CHF", "Swiss franc", "Swiss francs"),
}

#: Every way a currency is written (lower case) -> its code.
CURRENCY_OF: dict[str, str] = {}
for _code, (_symbol, _one, _many) in CURRENCIES.items():
    for _form in (_code, _symbol, _one, _many):
        CURRENCY_OF.setdefault(_form.lower(), _code)
CURRENCY_OF.update({"dollar": "USD", "dollars": "USD", "pound": "GBP", "pounds": "GBP"})

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip

#: Words after which a number names a thing rather than counts it ("extension 4411").
IDENTIFIER_WORDS = frozenset(
    [
        "extension",
        "release",
        "version",
        "model",
        "room",
        "ticket",
        "http",
        "code",
        "article",
        "section",
        "page",
        "step",
        "floor",
        "line",
        "build",
        "tier",
        "level",
        "priority",
        "port",
    ]
)

#: Words and phrases of opposite meaning: each rewrites into its partner (whole words, case
#: kept); a phrase is matched before the word inside it ("is not" before "is").
POLARITY: dict[str, str] = {
    "at least": "at most", "at most": "at least", "up to": "more than",
    "more than": "less than", "less than": "more than", "no more than": "more than",
    "longer than": "shorter than", "shorter than": "longer than",
    "above": "below", "below": "above", "before": "after", "after": "before",
    "included": "excluded", "excluded": "included", "always": "never", "never": "always",
    "cannot": "can", "can": "cannot", "must not": "must", "must": "must not",
    "is not": "is", "is": "is not", "are not": "are", "are": "are not",
    "was not": "was", "was": "was not", "should not": "should", "should": "should not",
    "not refunded": "refunded", "refunded": "not refunded",
    "not only": "only", "only": "not only", "no": "yes", "yes": "no",
}  # fmt: skip

#: Ways a model declines to answer (for the "refusal" variant of an answerable question).
REFUSALS: tuple[str, ...] = (
    "The documents don't say.",
    "I couldn't find that in the provided context.",
    "The context does not mention this.",
    "There is no information about that in the documents.",
    "I'm not sure; the handbook doesn't cover it.",
    "That isn't covered by the sources I was given.",
    "I don't know.",
    "Sorry, I cannot answer this from the provided documents.",
    "The provided text does not contain the answer.",
    "Not mentioned in the context.",
)
