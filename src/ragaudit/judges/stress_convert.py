"""Same-size and changed quantities for the stress test: unit conversions, number words,
currency spellings and changed values (tables in :mod:`ragaudit.judges.stress_tables`).

Examples
--------
>>> from ragaudit.judges.stress_scan import quantities
>>> converted(quantities("30 minutes")[0])
['half an hour', '0.5 hours']
>>> converted(quantities("72 hours")[0])
['4320 minutes', '3 days']
"""

from __future__ import annotations

import random

from ragaudit.judges.stress_scan import Quantity
from ragaudit.judges.stress_tables import CURRENCIES, UNIT_NAMED, number_to_words, unit_word

__all__ = ["CONVERSIONS", "change_value", "converted", "number_in_words", "spelled_currency"]

#: Spelled-out durations and shares of exact size: (value, unit) -> phrases.
CONVERSIONS: dict[tuple[float, str], tuple[str, ...]] = {
    (15, "minute"): ("a quarter of an hour",),
    (30, "minute"): ("half an hour", "0.5 hours"),
    (45, "minute"): ("three quarters of an hour", "0.75 hours"),
    (90, "minute"): ("an hour and a half", "1.5 hours"),
    (1, "hour"): ("60 minutes", "an hour"),
    (12, "hour"): ("half a day",),
    (6, "month"): ("half a year",),
    (18, "month"): ("a year and a half", "1.5 years"),
    (3, "month"): ("a quarter of a year",),
    (1, "year"): ("12 months",),
    (25, "percent"): ("a quarter",),
    (50, "percent"): ("half",),
    (75, "percent"): ("three quarters",),
    (10, "percent"): ("a tenth", "one tenth"),
    (20, "percent"): ("a fifth", "one fifth"),
}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def converted(q: Quantity) -> list[str]:
    """The same quantity in other units (exact conversions only; none for an adjective such
    as ``15-minute``).

    >>> from ragaudit.judges.stress_scan import quantities
    >>> [converted(q) for q in quantities("-40 °C, 25 %, 25 months, 14 days")]
    [['-40 °F'], ['a quarter'], ['2 years and 1 month'], ['2 weeks', 'two weeks']]
    """
    if q.hyphen:
        return []
    if q.percent:
        return list(CONVERSIONS.get((q.value, "percent"), ()))
    if q.unit is None:
        return []
    out = list(CONVERSIONS.get((q.value, q.unit.name), ()))
    value, name = q.value, q.unit.name
    if name == "celsius":
        out.append(f"{_number(value * 9 / 5 + 32)} °F")
    elif name == "minute" and value > 0 and value % 60 == 0:
        out.append(f"{_number(value / 60)} {unit_word(UNIT_NAMED['hour'], value / 60)}")
    elif name == "minute" and 0 < value < 60 and not out:
        out.append(f"{_number(value * 60)} seconds")
    elif name == "hour":
        if value > 1:
            out.append(f"{_number(value * 60)} minutes")
        if value % 24 == 0:
            out.append(f"{_number(value / 24)} {unit_word(UNIT_NAMED['day'], value / 24)}")
    elif name == "day" and value % 7 == 0:
        weeks = value / 7
        out.append(f"{_number(weeks)} {unit_word(UNIT_NAMED['week'], weeks)}")
        out.append(f"{number_to_words(int(weeks))} {unit_word(UNIT_NAMED['week'], weeks)}")
    elif name == "week":
        out.append(f"{_number(value * 7)} days")
    elif name == "month" and value > 12:
        years, months = divmod(int(value), 12)
        rest = f" and {months} {unit_word(UNIT_NAMED['month'], months)}" if months else ""
        out.append(f"{years} {unit_word(UNIT_NAMED['year'], years)}{rest}")
    elif name == "year" and value != 1:
        out.append(f"{_number(value * 12)} months")
    return out


def number_in_words(digits: str) -> str:
    """Digits (thousands commas allowed, no decimals) as words; ``""`` when it cannot.

    >>> number_in_words("1,500"), number_in_words("-40"), number_in_words("0.5")
    ('one thousand five hundred', '', '')
    """
    plain = digits.replace(",", "")
    if not plain.isdigit() or int(plain) >= 10**9:
        return ""
    return number_to_words(int(plain))


def spelled_currency(q: Quantity, text: str) -> list[str]:
    """The amount of ``q`` with its currency written the other ways (code, symbol, name).

    >>> from ragaudit.judges.stress_scan import quantities
    >>> t = "210 EUR per night"
    >>> spelled_currency(quantities(t)[0], t)
    ['210 euros', '€210']
    """
    assert q.currency is not None  # callers pass currency quantities only
    amount = text[q.number[0] : q.number[1]]
    symbol, one, many = CURRENCIES[q.currency]
    name = one if q.value == 1 else many
    forms = {"name": f"{amount} {name}", "symbol": f"{symbol}{amount}",
             "code": f"{amount} {q.currency}"}  # fmt: skip
    return [form for kind, form in forms.items() if kind != q.currency_form]


def change_value(q: Quantity, text: str, avoid: set[float], rng: random.Random) -> str:
    """The number of ``q`` changed to a nearby value of the same form (digits with or without
    commas, decimals, words), never one of ``avoid``.

    >>> from ragaudit.judges.stress_scan import quantities
    >>> t = "at least three months, 0.32 EUR, 1,500 meters"
    >>> [change_value(q, t, {3.0}, random.Random(1)) for q in quantities(t)]
    ['four', '0.34', '1,499']
    """
    if q.decimals:
        step = 10.0**-q.decimals
        choices = [q.value + k * step for k in (1, 2, 3, 4, -1, -2) if q.value + k * step > 0]
        choices = [c for c in choices if round(c, q.decimals) not in avoid]
        return f"{rng.choice(choices):.{q.decimals}f}"
    value = int(q.value)
    if 1900 <= abs(value) <= 2100 and q.unit is None and q.currency is None:
        candidates = [value + d for d in (-3, -2, -1, 1, 2, 3)]
    else:
        candidates = [value + 1, value - 1, value * 2, value + 10]
        if abs(value) >= 4:
            candidates.append(value // 2)
    options = sorted({c for c in candidates if c != value and c not in avoid
                      and (c > 0 or value <= 0)})  # fmt: skip
    new = rng.choice(options)
    if q.style == "words" and 0 <= new < 100:
        return number_to_words(new)
    sign = "+" if text[q.number[0] : q.number[0] + 1] == "+" and new > 0 else ""
    return sign + (f"{new:,}" if q.commas else str(new))
