"""What the stress test's rewrites find in a reference answer: numbers with their units and
currencies, times, dates, weekday and month names, clauses, names, and a document's sentences.

Self-contained on purpose (see :mod:`ragaudit.judges.stress_tables`): nothing here is shared
with the judges' own parsers.

Examples
--------
>>> [(q.text, q.value, q.unit.name if q.unit else q.currency) for q in quantities(
...     "An R3 costs 329 EUR and lasts three years; extension 4411.")]
[('329 EUR', 329.0, 'EUR'), ('three years', 3.0, 'year')]
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ragaudit.judges.stress_tables import (
    CURRENCY_OF,
    IDENTIFIER_WORDS,
    MONTHS,
    UNIT_OF,
    WEEKDAYS,
    Unit,
    ordinal_to_number,
    words_to_number,
)

__all__ = [
    "Quantity",
    "Span",
    "clauses",
    "document_sentences",
    "entities",
    "entity_pool",
    "find_all",
    "inside",
    "key_regions",
    "keyword_spans",
    "ordinals",
    "quantities",
    "replace_spans",
]

Span = tuple[int, int]

_DIGITS = re.compile(
    r"(?<![\w.,:/])(?P<sign>[-+−])?(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?P<dec>\.\d+)?"
    r"(?!\w|[.,:]\d)"
)
_WORD_NUMBER = re.compile(r"(?<![\w-])(?P<num>[A-Za-z]+(?:-[A-Za-z]+)?)(?=[ -][a-z])")
_SYMBOL_BEFORE = re.compile(r"(?P<cur>[€$£₹¥]|\b(?:EUR|USD|GBP|INR|CHF|JPY) )$")
_AFTER = re.compile(
    r"^(?P<sep> ?)(?P<unit>%|°[CF]\b|percent\b|per cent\b)|^(?P<sep2>[ -])(?P<word>[A-Za-z]+)"
)


@dataclass(frozen=True)
class Quantity:
    """A number in a text, with what is attached to it.

    ``span`` covers the whole quantity (currency symbol, number, unit); ``number`` the number
    alone (with its sign); ``unit_span`` the unit or currency word after it (or None).
    ``style`` says how the number is written: ``"digits"`` or ``"words"``.
    """

    text: str
    span: Span
    number: Span
    value: float
    decimals: int
    style: str
    commas: bool
    unit: Unit | None = None
    unit_span: Span | None = None
    currency: str | None = None
    currency_span: Span | None = None
    currency_form: str = ""  # "code", "symbol" or "name"
    percent: bool = False
    hyphen: bool = False
    noun: str = ""  # the word after a bare count ("61 water" -> "water")


def _attached(text: str, start: int, end: int) -> dict[str, object]:
    """What follows the number at ``end`` and precedes it at ``start``."""
    out: dict[str, object] = {"span_start": start, "span_end": end}
    before = _SYMBOL_BEFORE.search(text[max(0, start - 4) : start])
    if before:
        form = before.group("cur").strip()
        out.update(currency=CURRENCY_OF[form.lower()], currency_form=(
            "symbol" if len(form) == 1 else "code"),
            currency_span=(start - len(before.group("cur")), start - len(before.group("cur"))
                           + len(form)),
            span_start=start - len(before.group("cur")))  # fmt: skip
        return out
    after = _AFTER.match(text[end:])
    if not after:
        return out
    if after.group("unit"):
        unit = after.group("unit")
        u_start = end + len(after.group("sep"))
        if unit in ("%", "percent", "per cent"):
            out.update(percent=True, span_end=u_start + len(unit))
        else:
            found = UNIT_OF[unit.lower()]
            out.update(unit=found, unit_span=(u_start, u_start + len(unit)))
            out["span_end"] = u_start + len(unit)
        return out
    word = after.group("word")
    u_start = end + 1
    hyphen = after.group("sep2") == "-"
    # a multi-word unit or currency name ("US dollars", "degrees Celsius")
    for extra in (2, 1):
        tail = text[u_start:].split(" ")[:extra]
        phrase = " ".join(tail).rstrip(".,;:)")
        if len(tail) == extra and phrase.lower() in UNIT_OF and phrase not in ("m", "h"):
            out.update(unit=UNIT_OF[phrase.lower()], unit_span=(u_start, u_start + len(phrase)),
                        hyphen=hyphen, span_end=u_start + len(phrase))  # fmt: skip
            return out
        if len(tail) == extra and phrase.lower() in CURRENCY_OF and not hyphen:
            out.update(currency=CURRENCY_OF[phrase.lower()], currency_span=(
                u_start, u_start + len(phrase)), span_end=u_start + len(phrase),
                currency_form="code" if phrase.isupper() else "name")  # fmt: skip
            return out
    out["noun"] = word.lower()
    return out


def quantities(text: str) -> list[Quantity]:
    """Every number of ``text`` written in digits, or as a word before another word, with its
    unit or currency; numbers that name things (after "extension", "version", ...), times,
    ordinals and identifiers such as ``R3`` are left out.

    >>> [q.text for q in quantities("From -40 °C to +70 °C, at a 15-minute interval.")]
    ['-40 °C', '+70 °C', '15-minute']
    >>> [q.text for q in quantities("€180 or 48,000 US dollars, 25 % more")]
    ['€180', '48,000 US dollars', '25 %']
    """
    found: list[Quantity] = []
    for match in _DIGITS.finditer(text):
        start, end = match.span()
        if _identifier_before(text, start):
            continue
        number = match.group("num").replace(",", "") + (match.group("dec") or "")
        sign = -1.0 if match.group("sign") in ("-", "−") else 1.0
        value = sign * float(number)
        decimals = len(match.group("dec") or "") - (1 if match.group("dec") else 0)
        found.append(_quantity(text, start, end, value, decimals, "digits",
                               "," in match.group("num")))  # fmt: skip
    for match in _WORD_NUMBER.finditer(text):
        value_or_none = words_to_number(match.group("num"))
        if value_or_none is None or _identifier_before(text, match.start()):
            continue
        following = text[match.end() + 1 :].split(" ", 1)[0].lower()
        if following in ("of", "another", "or", "and"):
            continue
        quantity = _quantity(text, match.start(), match.end(), float(value_or_none), 0,
                             "words", False)  # fmt: skip
        if text[match.end()] == "-" and quantity.unit is None:
            continue  # "one-time" counts nothing
        found.append(quantity)
    return sorted(found, key=lambda q: q.span)


def _quantity(
    text: str, start: int, end: int, value: float, decimals: int, style: str, commas: bool
) -> Quantity:
    extra = _attached(text, start, end)
    span = (int(extra.pop("span_start")), int(extra.pop("span_end")))  # type: ignore[call-overload]
    return Quantity(text[span[0] : span[1]], span, (start, end), value, decimals, style, commas,
                    **extra)  # type: ignore[arg-type]  # fmt: skip


def _identifier_before(text: str, start: int) -> bool:
    words = text[:start].rstrip().split(" ")
    return bool(words) and words[-1].lower().strip("(") in IDENTIFIER_WORDS


def ordinals(text: str) -> list[tuple[Span, int, str]]:
    """Ordinals as ``(span, value, style)``: ``25th`` (digits) or ``sixth`` (words).

    >>> ordinals("On the 25th, from the sixth day, the fourth-day rule.")
    [((7, 11), 25, 'digits'), ((22, 27), 6, 'words'), ((37, 43), 4, 'words')]
    """
    out = []
    for match in re.finditer(r"(?<![\w.])(\d{1,2})(st|nd|rd|th)\b", text):
        out.append((match.span(), int(match.group(1)), "digits"))
    for match in re.finditer(r"(?<![\w-])([A-Za-z]+)(?=[ -][a-z])", text):
        value = ordinal_to_number(match.group(1))
        if value is not None and match.group(1).lower() != "second":
            out.append((match.span(), value, "words"))
    return sorted(out)


def find_all(pattern: str, text: str, flags: int = 0) -> list[re.Match[str]]:
    """``re.finditer`` as a list (the rewrites pick among the matches)."""
    return list(re.finditer(pattern, text, flags))


def clauses(text: str) -> list[Span]:
    """The clauses of ``text``: split at a sentence end, ``;`` and parentheses (not at commas).

    >>> t = "70 EUR per day (domestic trips get 55 EUR)."
    >>> [t[a:b] for a, b in clauses(t)]
    ['70 EUR per day', 'domestic trips get 55 EUR']
    """
    spans = []
    start = 0
    for match in re.finditer(r"\.(?=\s|$)|[;()]", text):
        if text[start : match.start()].strip():
            spans.append(_strip(text, start, match.start()))
        start = match.end()
    if text[start:].strip():
        spans.append(_strip(text, start, len(text)))
    return spans


def _strip(text: str, start: int, end: int) -> Span:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def key_regions(text: str, keywords: Sequence[str]) -> list[Span]:
    """The parts of clauses (split further at ", ") that hold a keyword (case, commas and
    spaces ignored); every clause when there are no keywords or none is found.

    >>> t = "Within 30 days after the trip ends; claims later than 90 days are rejected."
    >>> [t[a:b] for a, b in key_regions(t, ["30 days"])]
    ['Within 30 days after the trip ends']
    >>> t = "The lab is in Kellsport, a standard city, so the cap is 140 EUR per night."
    >>> [t[a:b] for a, b in key_regions(t, ["140 EUR"])]
    ['so the cap is 140 EUR per night']
    """
    parts = clauses(text)
    hits = [span for kw in keywords for span in _keyword_spans(text, kw)]
    pieces = []
    for start, end in parts:
        cut = start
        for m in re.finditer(r", ", text[start:end]):
            pieces.append((cut, start + m.start()))
            cut = start + m.end()
        pieces.append((cut, end))
    keyed = [c for c in pieces if any(h[0] < c[1] and c[0] < h[1] for h in hits)]
    return keyed or parts


def _keyword_spans(text: str, keyword: str) -> list[Span]:
    letters = [re.escape(ch) for ch in keyword if ch not in ", "]
    if not letters:
        return []
    pattern = r"[ ,]*".join(letters)
    return [m.span() for m in re.finditer(pattern, text, re.IGNORECASE)]


def keyword_spans(text: str, keywords: Sequence[str]) -> list[Span]:
    """Where each keyword occurs in ``text`` (first occurrence of each, in keyword order)."""
    out = []
    for kw in keywords:
        spans = _keyword_spans(text, kw)
        if spans:
            out.append(spans[0])
    return out


def inside(span: Span, regions: Iterable[Span]) -> bool:
    """Whether ``span`` overlaps one of ``regions``."""
    return any(span[0] < b and a < span[1] for a, b in regions)


def replace_spans(text: str, edits: Iterable[tuple[Span, str]]) -> str:
    """``text`` with each span replaced (spans must not overlap); a replacement that lands at
    the start of a sentence is capitalised.

    >>> replace_spans("600 calls. 5 more.", [((0, 3), "six hundred"), ((11, 12), "five")])
    'Six hundred calls. Five more.'
    """
    out = text
    for (start, end), new in sorted(edits, key=lambda e: e[0], reverse=True):
        if new and _sentence_start(out, start):
            new = new[0].upper() + new[1:]
        out = out[:start] + new + out[end:]
    return out


def _sentence_start(text: str, index: int) -> bool:
    before = text[:index].rstrip()
    return not before or before.endswith((".", "!", "?"))


_ENTITY = re.compile(r"(?<![\w-])[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*(?![\w-])")
_NOT_ENTITIES = frozenset(MONTHS) | frozenset(WEEKDAYS) | {"I", "The", "A", "An", "This", "It"}


def entities(text: str) -> list[tuple[Span, str, str, str]]:
    """Capitalised names not at the start of a sentence or cell, as ``(span, name, previous
    word, next word)``; weekday and month names are left out.

    >>> entities("Flights are booked in Waypoint by Ines Varga. Then it ends.")
    [((22, 30), 'Waypoint', 'in', 'by'), ((34, 44), 'Ines Varga', 'by', 'then')]
    """
    out = []
    for match in _ENTITY.finditer(text):
        before = text[: match.start()].rstrip(" \t*_`\"'")
        if not before or before[-1] in ".!?:;|#\n(-" or match.group() in _NOT_ENTITIES:
            continue
        if before.endswith("\n") or before.split("\n")[-1].strip() in ("", "-", "*"):
            continue
        previous = re.findall(r"[A-Za-z]+", before[-30:])
        following = re.findall(r"[A-Za-z]+", text[match.end() : match.end() + 30])
        out.append((match.span(), match.group(), previous[-1].lower() if previous else "",
                    following[0].lower() if following else ""))  # fmt: skip
    return out


def entity_pool(texts: Iterable[str]) -> dict[str, set[str]]:
    """Every name of :func:`entities` in ``texts`` (prose paragraphs only), with the words
    seen around it (``"<in"`` before, ``">by"`` after)."""
    pool: dict[str, set[str]] = defaultdict(set)
    for text in texts:
        for paragraph in _paragraphs(text):
            for _span, name, previous, following in entities(paragraph):
                pool[name].update((f"<{previous}", f">{following}"))
    return dict(pool)


def document_sentences(texts: Mapping[str, str] | Sequence[str]) -> list[str]:
    """The prose sentences of documents: no headings, table rows or code; 6 to 35 words,
    ending with a full stop.

    >>> document_sentences(["# Title\\n| a | b |\\n- Claims are paid within ten working\\n"
    ...                     "days of approval. Short one."])
    ['Claims are paid within ten working days of approval.']
    """
    values = texts.values() if isinstance(texts, Mapping) else texts
    out: list[str] = []
    for text in values:
        for paragraph in _paragraphs(text):
            for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", paragraph):
                words = sentence.split()
                if (6 <= len(words) <= 35 and sentence.endswith(".") and sentence[0].isupper()
                        and "|" not in sentence):  # fmt: skip
                    out.append(sentence)
    return out


def _paragraphs(text: str) -> list[str]:
    """Prose paragraphs: wrapped lines joined; headings, tables, quotes and code left out; a
    list item is a paragraph of its own."""
    paragraphs: list[list[str]] = [[]]
    fenced = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            paragraphs.append([])
            continue
        if fenced or not stripped or stripped.startswith(("#", "|", ">")):
            paragraphs.append([])
            continue
        item = re.match(r"^(?:[-*+]|\d+\.)\s+", stripped)
        if item:
            paragraphs.append([])
            stripped = stripped[item.end() :]
        paragraphs[-1].append(stripped.replace("**", ""))
    return [" ".join(p) for p in paragraphs if p]
