"""Units read by pint: a quantity's size in base units, so "90 minutes" = "an hour and a half".

The offline judges compare two stated quantities by value *and* unit.  A unit word that pint
knows (a duration, a length, a mass or a volume) is converted to base units, so a length
written in another unit of its kind matches: ``two weeks`` = ``14 days``, ``6 months`` =
``half a year``, ``1.5 km`` = ``1500 metres``; a month is never a whole number of days (pint's
month is a twelfth of a Julian year).  A rate (``600 per minute``) is the amount divided by its
period, so ``36000 per hour`` states it and ``600 per hour`` does not.

English words that pint reads as an unlikely unit are not units here: ``point`` (a length),
``hand``, ``chain``, ``pound`` (money as often as mass), ``cup``, ``are``, single letters
(``c`` is the speed of light); ``quarter`` is three months (pint's is a mass).  Data sizes
(``GB``) are not converted: pint reads ``mb`` as a millibarn.

pint is imported on first use (about 0.8 s with its registry), once per process.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

__all__ = ["measure", "same_measure"]

#: The kinds of unit the judges convert (pint dimensionalities).
_KINDS = frozenset({"[time]", "[length]", "[mass]", "[length] ** 3"})
#: Words pint knows that are rarely meant as that unit in an answer.
_NOT_UNITS = frozenset(
    {"point", "hand", "chain", "pound", "cup", "are", "rod", "pole", "league", "span", "link",
     "barn", "bar", "unit", "count", "degree", "mark", "line", "stone", "quad"}
)  # fmt: skip
#: Our spellings pint spells otherwise (the tokens are stemmed: "quarters" -> "quarter").
_PINT_NAME = {"quarter": "quarter_year", "decade": "ten_years", "kilometre": "kilometer",
              "metre": "meter", "centimetre": "centimeter", "millimetre": "millimeter",
              "litre": "liter"}  # fmt: skip


@cache
def _registry() -> Any:
    import pint  # lazy: 0.5 s import, only when a judge compares units

    registry: Any = pint.UnitRegistry(cache_folder=None)
    registry.define("quarter_year = 3 * month")
    registry.define("ten_years = 10 * year")  # pint's "decade" is a logarithmic unit
    return registry


@cache
def _base(word: str) -> tuple[str, float] | None:
    """``(kind, size of one word in base units)`` for a unit word, else None."""
    if len(word) < 2 or word in _NOT_UNITS or not word.isalpha():
        return None
    registry = _registry()
    try:
        unit = registry.parse_units(_PINT_NAME.get(word, word))
    except Exception:  # pint raises several error types for a word that is no unit
        return None
    kind = str(unit.dimensionality)
    if kind not in _KINDS:
        return None
    return kind, float(registry.Quantity(1, unit).to_base_units().magnitude)


def measure(value: float, unit: str = "", per: str = "") -> tuple[str, float] | None:
    """``(kind, magnitude in base units)`` of ``value unit [per per]``; None when neither the
    unit nor the period is a unit pint converts.

    The kind of a rate of a non-unit ("600 requests per minute") keeps its noun, so requests
    per minute are never compared with calls per minute.

    >>> measure(2, "week") == measure(14, "day")
    True
    >>> measure(600, "request", "minute") == measure(36000, "request", "hour")
    True
    >>> measure(600, "request", "minute") == measure(600, "request", "hour")
    False
    >>> measure(3, "request") is None
    True
    """
    size = _base(unit) if unit else None
    period = _base(per) if per else None
    if per and period is None:
        return None  # "per person", "per trip": not a period pint converts
    if size is None and period is None:
        return None
    kind = size[0] if size else f"{unit}"
    magnitude = value * (size[1] if size else 1.0)
    if period is not None:
        kind, magnitude = f"{kind} / {period[0]}", magnitude / period[1]
    return kind, magnitude


def same_measure(a: tuple[str, float] | None, b: tuple[str, float] | None) -> bool:
    """Both measured, of one kind, and equal to 9 significant digits.

    >>> same_measure(measure(90, "minute"), measure(1.5, "hour"))
    True
    >>> same_measure(measure(1, "month"), measure(30, "day"))
    False
    """
    if a is None or b is None or a[0] != b[0]:
        return False
    return math.isclose(a[1], b[1], rel_tol=1e-9)
