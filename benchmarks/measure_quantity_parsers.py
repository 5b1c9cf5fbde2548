"""Which maintained parser reads the quantities, dates and rates the offline judges compare.

Issue 31 names six candidates; this script runs each one that is installed on the cases the
issue lists (written from the issue's text, before any judge code was changed) and prints, per
candidate and case, what it returns.  A case passes when the candidate's output would let a
judge equate the two phrases of a "same" pair or tell apart a "different" pair.

Run with every candidate installed in a throw-away environment (nothing is added to the
project)::

    uv run --no-project --isolated --with text2num --with number-parser --with quantulum3 \\
        --with pint --with dateparser --with python-dateutil \\
        python benchmarks/measure_quantity_parsers.py

Measured on 7 December 2026 (text2num 3.1.0, number-parser 0.3.2, quantulum3 0.10.0, pint
0.25.3, dateparser 1.5.0, python-dateutil 4.0.0); wheel sizes and licences from
``pip download --no-deps``:

================  =========  ============  ==================================================
candidate         wheel      licence       on the issue's cases
================  =========  ============  ==================================================
text2num          0.4 MB     MIT           cardinals and ordinals right ("six hundred" 600,
                  (no deps)                "fifteen thousand" 15000, "sixth" 6th); no
                                           fractions ("one tenth" -> "one 10th", "half" kept)
number-parser     0.05 MB    BSD           cardinals right; "one tenth" -> "1 10" (wrong);
                                           parse_fraction None on every fraction
quantulum3        10.2 MB    MIT           currencies by symbol and name right (not "EUR
                                           180"); "30 minutes" read as minutes of arc, "half
                                           a year" as "per year"; its classifier fails to
                                           load beside scikit-learn 1.9
pint              0.3 MB +   BSD-3-Clause  converts durations, lengths, rates right once a
                  4 deps                   number and unit are found; reads no number words;
                                           "quarter" is a mass, "mb" a millibarn
dateparser        0.4 MB +   BSD-3-Clause  "31 March" = "March 31st"; None for "before the
                  regex,                   end of March" and for "Tuesday through Thursday"
                  pytz, ...
python-dateutil   0.1 MB     BSD-3-Clause  "31 March" right; fuzzy parse reads "before the
                                           end of March" as 1 March and "Thursday" as the
                                           default date (both wrong)
================  =========  ============  ==================================================

Chosen: text2num (number words) and pint (units within a kind, rates) in the core; the
fractions none reads, month ends and weekday ranges stay small rewrites in
:mod:`ragaudit.judges.claims`; dates keep the judge's own day-month reader (dateparser and
dateutil were no better on these cases and heavier).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

NUMBER_WORDS = [  # (text, the number a reader hears)
    ("six hundred calls a minute", 600),
    ("fifteen thousand rupees", 15000),
    ("twenty-five days", 25),
    ("one tenth of the budget", 0.1),
    ("half a year", 0.5),
    ("an hour and a half", 1.5),
    ("half an hour", 0.5),
    ("48,000 US dollars", 48000),
]
UNITS_SAME = [
    ("half an hour", "30 minutes"),
    ("an hour and a half", "90 minutes"),
    ("half a year", "6 months"),
    ("two weeks", "14 days"),
    ("1.5 km", "1500 m"),
]
RATES_DIFFERENT = [("600 per minute", "600 per hour"), ("4 per year", "4 per quarter")]
CURRENCIES = [
    ("€180", "EUR"),
    ("180 euros", "EUR"),
    ("EUR 180", "EUR"),
    ("$180", "USD"),
    ("48,000 US dollars", "USD"),
    ("₹15,000", "INR"),
    ("fifteen thousand rupees", "INR"),
]
DATES_SAME = [("31 March", "March 31st"), ("by 31 March", "before the end of March")]
WEEKDAYS = [("Tuesday", 1), ("Thursday", 3), ("Tuesday through Thursday", (1, 3))]


def _text2num() -> dict[str, Callable[[str], Any]]:
    from text_to_num import alpha2digit

    return {"numbers": lambda t: alpha2digit(t, "en")}


def _number_parser() -> dict[str, Callable[[str], Any]]:
    from number_parser import parse, parse_fraction

    return {"numbers": lambda t: f"{parse(t)} | fraction: {parse_fraction(t)}"}


def _quantulum3() -> dict[str, Callable[[str], Any]]:
    from quantulum3 import parser

    def read(t: str) -> Any:
        # Run without scikit-learn installed: its bundled classifier, pickled with another
        # scikit-learn version, fails to load beside scikit-learn 1.9 (measured).
        found = parser.parse(t)
        return [(q.value, q.unit.name, q.unit.entity.name) for q in found]

    return {"numbers": read, "units": read, "currencies": read, "rates": read}


def _pint() -> dict[str, Callable[[str], Any]]:
    import pint

    ureg = pint.UnitRegistry()

    def read(t: str) -> Any:
        try:
            q = ureg.Quantity(t.replace(" per ", "/"))
            return f"{q.to_base_units():~}"
        except Exception as exc:  # report, do not stop: a miss is a result
            return f"error: {type(exc).__name__}"

    return {"units": read, "rates": read}


def _dateparser() -> dict[str, Callable[[str], Any]]:
    import datetime

    import dateparser

    base = datetime.datetime(2026, 1, 1)
    settings = {"PREFER_DATES_FROM": "future", "RELATIVE_BASE": base}
    return {
        "dates": lambda t: dateparser.parse(t, settings=settings),
        "weekdays": lambda t: dateparser.parse(t, settings=settings),
    }


def _dateutil() -> dict[str, Callable[[str], Any]]:
    from dateutil import parser

    def read(t: str) -> Any:
        try:
            return parser.parse(t, fuzzy=True, default=__import__("datetime").datetime(2026, 1, 1))
        except (ValueError, OverflowError) as exc:
            return f"error: {exc}"

    return {"dates": read, "weekdays": read}


CANDIDATES = {
    "text2num": ("text_to_num", _text2num), "number-parser": ("number_parser", _number_parser),
    "quantulum3": ("quantulum3", _quantulum3), "pint": ("pint", _pint),
    "dateparser": ("dateparser", _dateparser), "python-dateutil": ("dateutil", _dateutil),
}  # fmt: skip
CASES = {
    "numbers": [t for t, _ in NUMBER_WORDS], "units": [p for pair in UNITS_SAME for p in pair],
    "rates": [p for pair in RATES_DIFFERENT for p in pair],
    "currencies": [t for t, _ in CURRENCIES], "dates": [p for pair in DATES_SAME for p in pair],
    "weekdays": [t for t, _ in WEEKDAYS],
}  # fmt: skip


def main() -> None:
    for name, (module, make) in CANDIDATES.items():
        try:
            importlib.import_module(module)
        except ImportError:
            print(f"## {name}: not installed")
            continue
        readers = make()
        print(f"## {name}")
        for kind, read in readers.items():
            for text in CASES[kind]:
                try:
                    out = read(text)
                except Exception as exc:  # a crash on a case is a measured result
                    out = f"raised {type(exc).__name__}: {exc}"
                print(f"  {kind:10s} {text!r:32s} -> {out}")


if __name__ == "__main__":
    main()
