"""The rewrite of each stress-test family (see :mod:`ragaudit.judges.stress` for the table).

A rewrite takes a :class:`Reference` and a seeded ``random.Random`` and returns a
:class:`Rewrite` (the new text and what changed) or None when it has nothing to rewrite.

Examples
--------
>>> import random
>>> ref = Reference("An RPO of 15 minutes and an RTO of 4 hours.", ("15 minutes", "4 hours"))
>>> reordered_clauses(ref, random.Random(0)).text
'An RTO of 4 hours and an RPO of 15 minutes.'
>>> unit_conversion(ref, random.Random(0)).text
'An RPO of 15 minutes and an RTO of 240 minutes.'
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from ragaudit.judges import stress_scan as scan
from ragaudit.judges.stress_convert import converted, number_in_words, spelled_currency
from ragaudit.judges.stress_tables import MONTHS, ordinal_words

__all__ = ["KEPT", "Reference", "Rewrite"]


@dataclass(frozen=True)
class Rewrite:
    """A rewritten text and a short description of the change."""

    text: str
    change: str


@dataclass(frozen=True)
class Reference:
    """A reference answer with what the rewrites need, scanned once."""

    text: str
    keywords: tuple[str, ...] = ()
    documents: tuple[str, ...] = ()
    entity_texts: tuple[str, ...] = field(default=(), repr=False)

    @cached_property
    def key(self) -> list[scan.Span]:
        """The key parts (:func:`~ragaudit.judges.stress_scan.key_regions`)."""
        return scan.key_regions(self.text, self.keywords)

    @cached_property
    def quantities(self) -> list[scan.Quantity]:
        """Every quantity of the text."""
        return scan.quantities(self.text)

    @cached_property
    def pool(self) -> dict[str, frozenset[str]]:
        """Names of the corpus (or of the other references) with the words seen before them."""
        return _pool(self.entity_texts)

    @cached_property
    def names(self) -> frozenset[str]:
        """Every word of a name of :attr:`pool` ("Ines", "Varga", "Waypoint")."""
        return frozenset(w for name in self.pool for w in re.split(r"[ -]", name))

    def in_key(self, span: scan.Span) -> bool:
        """Whether ``span`` overlaps a key part."""
        return scan.inside(span, self.key)

    def edit(self, edits: list[tuple[scan.Span, str]], change: str) -> Rewrite:
        """The text with ``edits`` applied."""
        return Rewrite(scan.replace_spans(self.text, edits), change)


@lru_cache(maxsize=4)
def _pool(texts: tuple[str, ...]) -> dict[str, frozenset[str]]:
    return {name: frozenset(words) for name, words in scan.entity_pool(texts).items()}


def _prefer_key(ref: Reference, spans: list[scan.Span]) -> list[int]:
    """Indices of ``spans`` in a key part, or all of them when none is."""
    keyed = [i for i, s in enumerate(spans) if ref.in_key(s)]
    return keyed or list(range(len(spans)))


def _pick(rng: random.Random, options: list[Rewrite]) -> Rewrite | None:
    return rng.choice(options) if options else None


# ------------------------------------------------------------------------------- meaning kept
def number_words(ref: Reference, rng: random.Random) -> Rewrite | None:
    """Digits as words and words as digits; ordinals both ways."""
    options: list[tuple[scan.Span, str, str]] = []
    for q in ref.quantities:
        if q.decimals or q.value < 0 or (1900 <= q.value <= 2100 and q.unit is None):
            continue
        old = ref.text[q.number[0] : q.number[1]]
        new = str(int(q.value)) if q.style == "words" else number_in_words(old)
        if new and q.percent and q.style == "digits":
            options.append((q.span, q.text, f"{new} percent"))  # never "fifteen %"
        elif new:
            options.append((q.number, old, new))
    for span, value, style in scan.ordinals(ref.text):
        old = ref.text[span[0] : span[1]]
        if style == "digits" and value < 100:
            options.append((span, old, ordinal_words(value)))
        elif style == "words":
            suffix = {1: "st", 2: "nd", 3: "rd"}.get(value % 10 if value // 10 != 1 else 0, "th")
            options.append((span, old, f"{value}{suffix}"))
    chosen = [options[i] for i in _prefer_key(ref, [o[0] for o in options])]
    if not chosen:
        return None
    span, old, new = rng.choice(chosen)
    return ref.edit([(span, new)], f"{old} -> {new}")


def unit_conversion(ref: Reference, rng: random.Random) -> Rewrite | None:
    """A duration, temperature or share in another unit of the same size."""
    found = [(q.span, q.text, converted(q)) for q in ref.quantities]
    compound = re.search(r"(\d+) hours? and (\d+) minutes?", ref.text)
    if compound:
        minutes = int(compound.group(1)) * 60 + int(compound.group(2))
        found.append((compound.span(), compound.group(), [f"{minutes} minutes"]))
        found = [f for f in found if not scan.inside(f[0], [compound.span()]) or f[2] == [
            f"{minutes} minutes"]]  # fmt: skip
    found = [f for f in found if f[2]]
    chosen = [found[i] for i in _prefer_key(ref, [f[0] for f in found])]
    if not chosen:
        return None
    span, old, news = rng.choice(chosen)
    new = rng.choice(news)
    return ref.edit([(span, new)], f"{old} -> {new}")


def currency_name(ref: Reference, rng: random.Random) -> Rewrite | None:
    """A currency written another way: code, symbol or name."""
    found = [q for q in ref.quantities if q.currency]
    chosen = [found[i] for i in _prefer_key(ref, [q.span for q in found])]
    if not chosen:
        return None
    q = rng.choice(chosen)
    new = rng.choice(spelled_currency(q, ref.text))
    return ref.edit([(q.span, new)], f"{q.text} -> {new}")


_TIME = r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])"
_MONTH = "|".join(MONTHS)


def date_rewrite(ref: Reference, rng: random.Random) -> Rewrite | None:
    """Times of day on a 12-hour clock, day-month order swapped, ISO dates spelt out."""
    styles: list[Rewrite] = []
    times = scan.find_all(_TIME, ref.text)
    if times:
        edits = [(m.span(), _twelve_hour(int(m.group(1)), int(m.group(2)))) for m in times]
        styles.append(ref.edit(edits, ", ".join(f"{m.group()} -> {new}" for m, (_, new) in zip(
            times, edits, strict=True))))  # fmt: skip
    for m in scan.find_all(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? ({_MONTH})\b", ref.text):
        styles.append(ref.edit([(m.span(), f"{m.group(2)} {int(m.group(1))}")],
                               f"{m.group()} -> {m.group(2)} {int(m.group(1))}"))  # fmt: skip
    for m in scan.find_all(rf"\b({_MONTH}) (\d{{1,2}})(?:st|nd|rd|th)?\b(?!,? \d{{4}})", ref.text):
        styles.append(ref.edit([(m.span(), f"{int(m.group(2))} {m.group(1)}")],
                               f"{m.group()} -> {int(m.group(2))} {m.group(1)}"))  # fmt: skip
    for m in scan.find_all(r"\b(\d{4})-(\d{2})-(\d{2})\b", ref.text):
        month = int(m.group(2))
        if 1 <= month <= 12:
            new = f"{int(m.group(3))} {MONTHS[month - 1]} {m.group(1)}"
            styles.append(ref.edit([(m.span(), new)], f"{m.group()} -> {new}"))
    for m in scan.find_all(rf"\b({_MONTH}) (\d{{4}})\b", ref.text):
        new = f"{m.group(1)[:3]}. {m.group(2)}"
        styles.append(ref.edit([(m.span(), new)], f"{m.group()} -> {new}"))
    return _pick(rng, styles)


def _twelve_hour(hour: int, minute: int) -> str:
    half = "a.m." if hour < 12 else "p.m."
    shown = hour % 12 or 12
    return f"{shown} {half}" if minute == 0 else f"{shown}:{minute:02d} {half}"


_ANAPHOR = re.compile(r"^(it|this|that|they|these|those|its|their|he|she|above|otherwise|then|"
                      r"so|which|who|because|but|or)\b", re.IGNORECASE)  # fmt: skip
_DETERMINER = re.compile(r"^((?i:an?|the|each|every|all)|[A-Z][a-z]+ [A-Z][a-z]+)\b")
_PREPOSITION = re.compile(r"^(on|in|at|for|with|within|from|during|to|by|after|before)\b")


def reordered_clauses(ref: Reference, rng: random.Random) -> Rewrite | None:
    """Two sentences, two clauses joined by ", and", or two coordinated noun phrases swapped;
    or a trailing prepositional phrase moved to the front."""
    text = ref.text.strip()
    body, end = (text[:-1], text[-1]) if text[-1:] in ".!" else (text, "")
    options: list[Rewrite] = []
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)
    if len(sentences) == 2 and all(len(s.split()) >= 4 for s in sentences) and not (
            _ANAPHOR.match(sentences[1])):  # fmt: skip
        options.append(Rewrite(f"{sentences[1]} {sentences[0]}", "sentences swapped"))
    if not re.search(r"[(;]|:\s", body):
        parts = body.split(", and ")
        if len(parts) == 2 and all(len(p.split()) >= 4 for p in parts) and not (
                _ANAPHOR.match(parts[1])):  # fmt: skip
            options.append(Rewrite(f"{_cap(parts[1])}, and {_low(parts[0], ref.names)}{end}",
                                   "clauses swapped"))  # fmt: skip
        parts = body.split(" and ")
        if len(parts) == 2 and "," not in body:
            left, right = parts
            head = None if _DETERMINER.match(left) else re.match(
                r"^(.*\b(?:by|of|between)\s+)(?=\S)", left)  # "by Ines Varga and Tomasz Reilly"
            first = left[head.end():] if head else left
            prefix = head.group(1) if head else ""
            if _DETERMINER.match(_cap(first)) and _DETERMINER.match(_cap(right)) and len(
                    right.split()) <= 6:  # fmt: skip
                swapped = f"{prefix}{_low_det(right)} and {_low_det(first)}"
                options.append(Rewrite(_cap(swapped) + end, "coordinated parts swapped"))
        pieces = body.split(", ")
        if len(pieces) == 2 and _PREPOSITION.match(pieces[1]) and len(pieces[0].split()) >= 2:
            options.append(Rewrite(f"{_cap(pieces[1])}, {_low(pieces[0], ref.names)}{end}",
                                   "trailing phrase moved to the front"))  # fmt: skip
    return _pick(rng, options)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _low(s: str, names: frozenset[str] = frozenset()) -> str:
    """Lower the first letter of a sentence moved inside another, unless its first word is a
    name (seen capitalised mid-sentence in the corpus) or an acronym ("RTO", "R3")."""
    first = re.sub(r"\W+$", "", s.split(" ", 1)[0])
    if first[1:].lower() != first[1:] or any(c.isdigit() for c in first) or first in names:
        return s
    return s[:1].lower() + s[1:]


def _low_det(s: str) -> str:
    return s[:1].lower() + s[1:] if re.match(r"^(An?|The|Each|Every|All)\b", s) else s


def added_sentence(ref: Reference, rng: random.Random) -> Rewrite | None:
    """A sentence of the question's source documents appended (one that says something the
    reference does not: at most half its words are the reference's)."""
    words = set(re.findall(r"[a-z0-9]+", ref.text.lower()))
    options = []
    for sentence in scan.document_sentences(list(ref.documents)):
        own = re.findall(r"[a-z0-9]+", sentence.lower())
        if own and sum(w in words for w in own) / len(own) <= 0.5:
            options.append(sentence)
    if not options:
        return None
    sentence = rng.choice(sorted(set(options)))
    text = ref.text.rstrip()
    text = text if text.endswith((".", "!", "?")) else text + "."
    return Rewrite(f"{text} {sentence}", f"+ {sentence}")


KEPT = {
    "number_words": number_words,
    "unit_conversion": unit_conversion,
    "currency_name": currency_name,
    "date_rewrite": date_rewrite,
    "reordered_clauses": reordered_clauses,
    "added_sentence": added_sentence,
}
