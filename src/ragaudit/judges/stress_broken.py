"""The meaning-breaking rewrites of the stress test: each changes a fact of the key part
(see :mod:`ragaudit.judges.stress`).

Examples
--------
>>> import random
>>> from ragaudit.judges.stress_rewrites import Reference
>>> ref = Reference("Every Monday at 10:00, 210 EUR per night.", ("Monday", "210 EUR"))
>>> changed_currency(ref, random.Random(0)).text
'Every Monday at 10:00, 210 USD per night.'
>>> changed_weekday_month(ref, random.Random(0)).text
'Every Friday at 10:00, 210 EUR per night.'
"""

from __future__ import annotations

import random
import re

from ragaudit.judges import stress_scan as scan
from ragaudit.judges.stress_convert import change_value
from ragaudit.judges.stress_rewrites import Reference, Rewrite
from ragaudit.judges.stress_tables import (
    CURRENCIES,
    MONTHS,
    POLARITY,
    REFUSALS,
    UNIT_NAMED,
    WEEKDAYS,
    ordinal_words,
    unit_word,
    words_to_number,
)

__all__ = ["BROKEN"]


def _keyword_first(ref: Reference, found: list[scan.Quantity]) -> list[scan.Quantity]:
    """The quantities of ``found`` inside a keyword, or those in a key part when none is:
    "Six months, with check-ins after six months" breaks the first six months."""
    keyed = scan.keyword_spans(ref.text, ref.keywords)
    inside = [q for q in found if scan.inside(q.span, keyed)]
    return inside or [q for q in found if ref.in_key(q.span)]


_TIME = r"(?<![\d:.])([01]?\d|2[0-3]):[0-5]\d(?![\d:])"


def changed_number(ref: Reference, rng: random.Random) -> Rewrite | None:
    """A number of the key part changed (digits, words, decimals, a time of day or an
    ordinal); a number inside a keyword first."""
    values = {q.value for q in ref.quantities}
    options: list[tuple[scan.Span, str, str]] = []
    keyed = scan.keyword_spans(ref.text, ref.keywords)
    times = [(m.span(), m.group()) for m in re.finditer(_TIME, ref.text)]
    found = [q for q in ref.quantities if scan.inside(q.number, keyed)]
    found_times = [t for t in times if scan.inside(t[0], keyed)]
    if not found and not found_times:
        found, found_times = ref.quantities, times
    for span, old in found_times:
        if ref.in_key(span):
            hour, minute = old.split(":")
            new_hour = (int(hour) + rng.choice((1, 2, 3, -1))) % 24
            options.append((span, old, f"{new_hour:0{len(hour)}d}:{minute}"))
    for q in found:
        if ref.in_key(q.number):
            old = ref.text[q.number[0] : q.number[1]]
            new = change_value(q, ref.text, values, rng)
            span = q.number
            if q.unit and q.unit_span and q.value == 1 and not q.hyphen:
                # "one hour" -> "two hours"
                span, old = (q.number[0], q.unit_span[1]), ref.text[q.number[0] : q.unit_span[1]]
                new = f"{new} {q.unit.plural}"
            options.append((span, old, new))
    for span, value, style in scan.ordinals(ref.text):
        if ref.in_key(span) and value < 98:
            old = ref.text[span[0] : span[1]]
            after = value + 1
            suffix = "th" if after % 10 not in (1, 2, 3) or after // 10 == 1 else (
                {1: "st", 2: "nd", 3: "rd"}[after % 10])  # fmt: skip
            spelled = ordinal_words(after) if style == "words" else f"{after}{suffix}"
            options.append((span, old, spelled))
    if not options:
        return None
    span, old, new = rng.choice(options)
    return ref.edit([(span, new)], f"{old} -> {new}")


# unit -> the units a near miss puts in its place
_OTHER_UNIT = {
    "second": ("minute",), "minute": ("hour", "second"), "hour": ("minute", "day"),
    "day": ("week", "month", "hour"), "week": ("day", "month"), "month": ("year", "week"),
    "year": ("month",), "celsius": ("fahrenheit",), "fahrenheit": ("celsius",),
    "kilometre": ("mile",), "mile": ("kilometre",), "metre": ("kilometre",),
}  # fmt: skip


def changed_unit(ref: Reference, rng: random.Random) -> Rewrite | None:
    """The unit of a key-part quantity (one inside a keyword first) replaced by another
    unit (``30 days`` -> ``30 weeks``)."""
    found = _keyword_first(ref, [
        q for q in ref.quantities if q.unit and q.unit_span
        and not (q.unit.kind == "temperature" and q.value == -40)])  # -40 °C = -40 °F; fmt: skip
    if not found:
        return None
    q = rng.choice(found)
    assert q.unit is not None and q.unit_span is not None
    other = UNIT_NAMED[rng.choice(_OTHER_UNIT[q.unit.name])]
    new = other.singular if q.hyphen else unit_word(other, q.value)
    old = ref.text[q.unit_span[0] : q.unit_span[1]]
    return ref.edit([(q.unit_span, new)], f"{old} -> {new}")


def changed_currency(ref: Reference, rng: random.Random) -> Rewrite | None:
    """The currency of a key-part amount (one inside a keyword first) replaced by another,
    written the same way."""
    found = _keyword_first(ref, [q for q in ref.quantities if q.currency and q.currency_span])
    if not found:
        return None
    q = rng.choice(found)
    assert q.currency_span is not None
    code = rng.choice(sorted(c for c in CURRENCIES if c != q.currency and c != "CHF"))
    symbol, one, many = CURRENCIES[code]
    new = {"code": code, "symbol": symbol, "name": one if q.value == 1 else many}[q.currency_form]
    old = ref.text[q.currency_span[0] : q.currency_span[1]]
    return ref.edit([(q.currency_span, new)], f"{old} -> {new}")


_PERIOD = {
    "second": ("minute",), "minute": ("hour", "second"), "hour": ("minute", "day"),
    "day": ("week", "month"), "night": ("week", "month"), "week": ("month", "day"),
    "month": ("year", "week"), "quarter": ("month", "year"), "year": ("month", "quarter"),
    "kilometre": ("mile",), "kilometer": ("mile",), "mile": ("kilometre",),
}  # fmt: skip
_ADVERB = {
    "hourly": ("daily",), "daily": ("weekly", "monthly"), "nightly": ("weekly",),
    "weekly": ("monthly", "daily"), "monthly": ("yearly", "weekly"),
    "quarterly": ("monthly", "yearly"), "yearly": ("monthly",), "annual": ("monthly",),
    "annually": ("monthly",),
}  # fmt: skip
_RATE = re.compile(
    r"\b(?P<lead>per|every|each|a|an)\s+(?P<n>[\w-]+\s+)?(?P<period>" + "|".join(_PERIOD)
    + r")s?\b"
    r"|\b(?P<adverb>" + "|".join(_ADVERB) + r")\b",
    re.IGNORECASE,
)


def changed_rate(ref: Reference, rng: random.Random) -> Rewrite | None:
    """The period of a key-part rate replaced (``per minute`` -> ``per hour``,
    ``every quarter`` -> ``every month``, ``monthly`` -> ``yearly``)."""
    options = []
    for m in _RATE.finditer(ref.text):
        count = (m.group("n") or "").strip()
        if not ref.in_key(m.span()) or (count and not (
                count.isdigit() or count == "calendar" or words_to_number(count) is not None)):
            continue  # "each weekend day" is no rate; "every three years", "per calendar year" are
        if m.group("adverb"):
            word = m.group("adverb")
            span, others = m.span("adverb"), _ADVERB[word.lower()]
        else:
            if m.group("lead").lower() in ("a", "an") and not _after_quantity(ref.text, m.start()):
                continue  # "a day" is a rate only after a count ("twice a day", "600 calls a")
            word = m.group("period")
            span, others = m.span("period"), _PERIOD[word.lower()]
        options.append((span, word, others, m))
    if not options:
        return None
    span, word, others, m = rng.choice(options)
    new = rng.choice(others)
    edits = [(span, new)]
    lead = m.group("lead") if not m.group("adverb") else None
    if lead and lead.lower() in ("a", "an") and not m.group("n"):
        edits.append((m.span("lead"), "an" if new[0] in "aeiou" or new == "hour" else "a"))
    return ref.edit(edits, f"{word} -> {new}")


def _after_quantity(text: str, start: int) -> bool:
    before = text[:start].split()
    return bool(before) and (before[-1].lower() in ("once", "twice") or bool(
        re.search(r"\d|[a-z]+s$", before[-1])))  # fmt: skip


def changed_weekday_month(ref: Reference, rng: random.Random) -> Rewrite | None:
    """A weekday or month name of the key part replaced by another one not in the text."""
    names = "|".join((*WEEKDAYS, *MONTHS))
    options = []
    for m in re.finditer(rf"\b({names})(s?)\b", ref.text):
        at_start = not ref.text[: m.start()].strip() or ref.text[: m.start()].rstrip()[-1] in ".!?"
        if not ref.in_key(m.span()) or (m.group(1) == "May" and at_start):
            continue  # "May" opening a sentence is the verb
        pool = WEEKDAYS if m.group(1) in WEEKDAYS else MONTHS
        others = [n for n in pool if n not in ref.text]
        options.append((m.span(1), m.group(1), others))
    if not options:
        return None
    span, old, others = rng.choice(options)
    new = rng.choice(others)
    return ref.edit([(span, new)], f"{old} -> {new}")


def other_entity(ref: Reference, rng: random.Random) -> Rewrite | None:
    """A name of the key part replaced by another name of the corpus with as many words,
    the one whose neighbouring words in the corpus are most like its own (Jaccard;
    ``booked in Waypoint`` -> ``booked in Tally``).  Any other name makes the answer wrong;
    the likeness only makes the near miss harder to see."""
    options = []
    for span, name, previous, following in scan.entities(ref.text):
        if not ref.in_key(span):
            continue
        seen = set(ref.pool.get(name, frozenset())) | {f"<{previous}", f">{following}"}
        words = set(re.split(r"[ -]", name))
        scored = []
        for other, before in ref.pool.items():
            if other == name or other in ref.text or len(re.split(r"[ -]", other)) != len(words):
                continue
            if words & set(re.split(r"[ -]", other)):
                continue
            shared = len(seen & before) / len(seen | before)  # Jaccard of the words around
            if shared > 0:
                scored.append((shared, other))
        if scored:
            best = max(s for s, _ in scored)
            options.append((span, name, sorted(o for s, o in scored if s == best)))
    if not options:
        return None
    span, name, others = rng.choice(options)
    new = rng.choice(others)
    return ref.edit([(span, new)], f"{name} -> {new}")


def _kind(q: scan.Quantity) -> str:
    if q.currency:
        return f"currency:{q.currency}"
    if q.percent:
        return "percent"
    if q.unit:
        return f"unit:{q.unit.kind}"
    return ""


def swapped_values(ref: Reference, rng: random.Random) -> Rewrite | None:
    """Two quantities of one kind (durations, one currency, shares, times) swapped, one of
    them in the key part; never the two ends of a range ("from 2 to 5") or the parts of one
    duration ("3 hours and 40 minutes")."""
    found = [q for q in ref.quantities if _kind(q) and not q.hyphen]
    pairs: list[tuple[scan.Span, str, scan.Span, str]] = []
    for i, a in enumerate(found):
        for b in found[i + 1 :]:
            if _kind(a) != _kind(b) or a.text.lower() == b.text.lower():
                continue
            if not (ref.in_key(a.span) or ref.in_key(b.span)) or _range(ref.text, a.span, b.span):
                continue
            pairs.append((a.span, a.text, b.span, b.text))
    times = list(re.finditer(_TIME, ref.text))
    for i, first in enumerate(times):
        for second in times[i + 1 :]:
            if first.group() != second.group() and not _range(
                    ref.text, first.span(), second.span()):  # fmt: skip
                pairs.append((first.span(), first.group(), second.span(), second.group()))
    if not pairs:
        return None
    span_a, old_a, span_b, old_b = rng.choice(pairs)
    return ref.edit([(span_a, old_b), (span_b, old_a)], f"{old_a} <-> {old_b}")


def _range(text: str, a: scan.Span, b: scan.Span) -> bool:
    between = text[a[1] : b[0]].strip().lower()
    # "from 2 to 5" and "between 2 and 5" are ranges; "3 hours and 40 minutes" or "3 hours,
    # 40 minutes" is one duration whose parts swap without changing it
    return between in ("to", "-", "–", "through", "until", "and", ",")


_POLARITY = re.compile(
    r"\b(" + "|".join(re.escape(p) for p in sorted(POLARITY, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)


def flipped_polarity(ref: Reference, rng: random.Random) -> Rewrite | None:
    """A word or phrase of the key part replaced by its opposite (``must`` -> ``must not``,
    ``at least`` -> ``at most``, ``included`` -> ``excluded``, a leading ``No`` -> ``Yes``)."""
    options = []
    for m in _POLARITY.finditer(ref.text):
        word = m.group(1)
        if re.search(r"\b(not|never)\s+$", ref.text[: m.start()]):
            continue  # "are not refunded": the negation is flipped, not doubled
        if word.lower() == "only" and not re.match(r"\s+\w", ref.text[m.end() :]):
            continue  # "named people only," has no "not only" form
        if word.lower() in ("no", "yes") and m.start() != 0:
            continue  # only a leading yes/no answers the question
        if word.lower() in ("no", "yes") or ref.in_key(m.span()):
            new = POLARITY[word.lower()]
            new = new[:1].upper() + new[1:] if word[:1].isupper() else new
            options.append((m.span(), word, new))
    if not options:
        return None
    span, old, new = rng.choice(options)
    return ref.edit([(span, new)], f"{old} -> {new}")


_SEPARATOR = re.compile(r";\s+|,\s+and\s+|\s+and\s+|,\s+")


def dropped_fact(ref: Reference, rng: random.Random) -> Rewrite | None:
    """The part holding the last of two or more keywords removed (parts are split at ``;``,
    ``and`` and commas outside parentheses); without keywords, the last of two numbers."""
    facts = scan.keyword_spans(ref.text, ref.keywords)
    if not ref.keywords:
        facts = [q.span for q in ref.quantities]
    depth, cuts = 0, []
    for m in re.finditer(r"[()]|" + _SEPARATOR.pattern, ref.text):
        if m.group() == "(":
            depth += 1
        elif m.group() == ")":
            depth -= 1
        elif depth == 0:
            cuts.append(m.span())
    bounds = [0, *[c for span in cuts for c in span], len(ref.text)]
    parts = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
    # a fact belongs to the part where it starts: "3 hours and 40 minutes" is one fact
    holding = sorted({i for f in facts for i, p in enumerate(parts) if p[0] <= f[0] < p[1]})
    if len(holding) < 2:
        return None
    drop = holding[-1]
    start = cuts[drop - 1][0]
    end = parts[drop][1]
    text = (ref.text[:start] + ref.text[end:]).rstrip()
    if not text.endswith((".", "!", "?")):
        text += "."
    return Rewrite(text, f"- {ref.text[parts[drop][0] : parts[drop][1]].strip()}")


def refusal(ref: Reference, rng: random.Random) -> Rewrite | None:
    """The answer replaced by a refusal."""
    text = rng.choice(REFUSALS)
    return Rewrite(text, "refusal")


BROKEN = {
    "changed_number": changed_number,
    "changed_unit": changed_unit,
    "changed_currency": changed_currency,
    "changed_rate": changed_rate,
    "changed_weekday_month": changed_weekday_month,
    "other_entity": other_entity,
    "swapped_values": swapped_values,
    "flipped_polarity": flipped_polarity,
    "dropped_fact": dropped_fact,
    "refusal": refusal,
}
