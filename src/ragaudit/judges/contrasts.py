"""What the key words cannot see: a flipped bound, an added negation, swapped values.

The reference rules (:mod:`ragaudit.judges.reference`) check that an answer states the
reference's numbers, dates and key words.  An answer can state all of them and still say the
opposite.  Three contrasts of an answer with its reference are read here, each as a count of
phrases (a flip needs a word the reference does not hold *and* the loss of one it holds):

1. **Bound direction.**  Lower bounds (``at least``, ``more than``, ``no less than``,
   ``above``, ``after``, ``minimum``, ``or more``, ...) and upper bounds (``at most``, ``up
   to``, ``no more than``, ``less than``, ``below``, ``before``, ``maximum``, ``or less``,
   ...).  When the answer has a bound of one direction the reference lacks *and* lacks one
   of the other direction the reference has (``"at most 14"`` for ``"at least 14"``,
   ``"more than 8 days"`` for ``"up to 8 days"``), the answer is **wrong**.  A new bound
   alone (``"before 8 hours"`` for ``"within 8 hours"``) makes it **undecided**; a bound the
   answer leaves out is no contrast (``"3,000 EUR"`` for ``"up to 3,000 EUR"``).  A bound
   right before a number is also compared *for that value* (:func:`number_bounds`), so a flip
   is found even when the reference holds a bound of the other direction elsewhere ("at
   least 600" for "at most 600; above that ..."), and ``not``/``never`` right before a bound
   turns it round ("not above 2,500 EUR" is an upper bound, and no negation).  ``next``,
   ``following`` are later and ``previous``, ``preceding`` earlier ("the next working day"
   for "the working day before").  A question that asks what *can* or *may* be done (or a
   maximum, a limit) asks for an upper bound: an added ``up to`` is no doubt there.
2. **Negation count.**  The cues of :mod:`ragaudit.judges.polarity` (``not``, ``no``,
   ``never``, ``-n't``, ...) and ``not only``, outside the bounds above (``no more than`` is a
   bound).  A different count in the answer than in the reference (``"must not be at least 14
   characters"``) makes it **undecided**: a double negation or a negative paraphrase needs a
   reader.  A reference opening with Yes/No is compared without that word, and only when the
   answer holds a cue of its own beyond it.
3. **Order of values of one kind** (:func:`swapped`).  When the answer states two of the
   reference's numbers of the same unit in the opposite order (``"RTO 30 minutes, RPO 5
   minutes"`` for ``"RTO 5 minutes, RPO 30 minutes"``), the values may have changed places:
   **undecided**.

Examples
--------
>>> contrast("Passwords must be at least 14 characters long.", "At most 14 characters.")
(False, 'the answer flips the bound of 14 character (at least -> at most)')
>>> contrast("Up to 3,000 EUR per month.", "3,000 EUR a month.")
(True, None)
>>> contrast("Passwords must be at least 14 characters.", "Passwords must not be at least 14.")[1]
'the answer holds 1 negation(s), the reference 0: a negative paraphrase or a flip'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ragaudit._text import normalise_text
from ragaudit.judges.claims import Quantity, Token, content_words, quantities, states_number, tokens
from ragaudit.judges.units import measure

__all__ = ["about", "bounds", "contrast", "negations", "number_bounds", "periods", "swapped"]

#: Bound phrases, longest first so that "no more than" is not read as "more than".
_BOUNDS: tuple[tuple[str, str], ...] = (
    ("no more than", "upper"), ("not more than", "upper"), ("no later than", "deadline"),
    ("not later than", "deadline"), ("no longer than", "upper"),
    ("no less than", "lower"), ("not less than", "lower"), ("no fewer than", "lower"),
    ("not fewer than", "lower"), ("no earlier than", "deadline"), ("no sooner than", "deadline"),
    ("at least", "lower"), ("at most", "upper"), ("up to", "upper"), ("or more", "lower"),
    ("or less", "upper"), ("or fewer", "upper"), ("more than", "lower"),
    ("greater than", "lower"), ("longer than", "lower"), ("later than", "deadline"),
    ("less than", "upper"), ("fewer than", "upper"), ("shorter than", "upper"),
    ("earlier than", "deadline"), ("above", "lower"), ("below", "upper"), ("after", "later"),
    ("before", "earlier"), ("minimum", "lower"), ("maximum", "upper"), ("exceeds", "lower"),
    ("exceed", "lower"), ("next", "later"), ("following", "later"), ("previous", "earlier"),
    ("preceding", "earlier"),
)  # fmt: skip
_BOUND = re.compile(r"\b(?:" + "|".join(p for p, _ in _BOUNDS) + r")\b")
_DIRECTION = dict(_BOUNDS)
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|prohibited|forbidden"
    r"|excluded)\b|\b\w+n['\u2019]t\b"
)
_IDIOMS = re.compile(r"\bno\s+matter\b|\bwhether\s+or\s+not\b")
_LEADING = re.compile(r"^\W*(?:yes|no)\b\W*")
_NEGATED_BOUND = re.compile(r"\b(?:not|never)\s+(?=" + _BOUND.pattern + ")")


def bounds(text: str) -> Counter[str]:
    """The bound phrases of ``text`` by direction (``"lower"``, ``"upper"``).

    >>> sorted(bounds("At least 14 days before departure, no more than 3 bags.").items())
    [('earlier', 1), ('lower', 1), ('upper', 1)]
    """
    return Counter(_DIRECTION[m] for m in _BOUND.findall(normalise_text(text)))


def negations(text: str) -> int:
    """How many negation cues ``text`` holds outside bound phrases and idioms.

    >>> negations("Not only the incident commander."), negations("No more than 3 bags.")
    (1, 0)
    """
    text = _NEGATED_BOUND.sub(" ", normalise_text(text))  # "not above 2,500": a bound
    text = _IDIOMS.sub(" ", _BOUND.sub(" ", text))
    return len(_NEGATION.findall(text))


_OPPOSITE = {"lower": "upper", "upper": "lower", "later": "earlier", "earlier": "later",
             "deadline": ""}  # fmt: skip
_SAID = {"lower": "at least", "upper": "at most", "later": "after", "earlier": "before"}


_NEGATED = re.compile(r"\b(?:not|never)\s+$")
#: A question that asks what *can* or *may* be done asks for a maximum: "up to" is implied.
_MODAL = re.compile(r"\b(?:can|could|may|might|allowed|maximum|max|most|limit)\b", re.IGNORECASE)


def number_bounds(text: str) -> tuple[list[tuple[Quantity, str]], Counter[str]]:
    """The bounds of ``text`` that stand right before a number, each with its quantity, and
    the other bounds by direction.  A bound after ``not``/``never`` is read the other way
    round (``"not above 2,500 EUR"`` is an upper bound).

    >>> bound, free = number_bounds("Longer than four hours, or no more than standard class.")
    >>> [(q.number, q.unit, d) for q, d in bound], sorted(free.elements())
    ([('4', 'hour', 'lower')], ['upper'])
    >>> [(q.number, d) for q, d in number_bounds("It is not above 2,500 EUR.")[0]]
    [('2500', 'upper')]
    """
    text = normalise_text(text)
    bound: list[tuple[Quantity, str]] = []
    free: Counter[str] = Counter()
    for match in _BOUND.finditer(text):
        direction = _DIRECTION[match.group(0)]
        if _NEGATED.search(text[: match.start()]) and _OPPOSITE[direction]:
            direction = _OPPOSITE[direction]
        after = tokens(text[match.end() : match.end() + 40])
        first = next((t for t in after if t.kind != "stop"), None)
        if first is not None and first.kind == "number" and after.index(first) <= 1:
            bound.append((quantities(after)[0], direction))
        else:
            free[direction] += 1
    return bound, free


def _flipped(reference: str, answer: str, question: str = "") -> tuple[bool | None, str | None]:
    (ref_at, ref), (ans_at, ans) = number_bounds(reference), number_bounds(answer)
    ref.update(d for _, d in ref_at)
    ans.update(d for _, d in ans_at)
    for q, direction in ans_at:
        # the bounds of one value of the reference, compared with the answer's for it; the
        # value stated with the reference's bound elsewhere in the answer is another fact
        had = {d for r, d in ref_at if states_number(r, [q])}
        if not any(states_number(r, [q]) for r in quantities(tokens(reference))):
            continue  # a value the reference does not state: no bound to compare
        if had & {d for a, d in ans_at if states_number(q, [a])}:
            continue
        if _OPPOSITE[direction] in had:
            return False, (
                f"the answer flips the bound of {q.number} {q.unit}".rstrip()
                + f" ({_SAID[_OPPOSITE[direction]]} -> {_SAID[direction]})"
            )
    new, lost = ans - ref, ref - ans
    for direction in new:
        if _OPPOSITE[direction] in lost:
            return False, (
                f"the answer flips a bound of the reference ({_SAID[_OPPOSITE[direction]]} -> "
                f"{_SAID[direction]})"
            )
    if _MODAL.search(question):
        new.pop("upper", None)  # "How long can it buffer?" "Up to 72 hours."
    if new.keys() & {"lower", "upper"}:
        return None, "the answer adds a bound the reference does not state (at least, below, ...)"
    return True, None


_SENTENCE = re.compile(r"(?<=[.!?;])\s+")


def about(reference: str, answer: str) -> str:
    """The sentences of ``answer`` that restate the reference: those sharing a number with it,
    or else half of its content words.  An added true sentence ("Apply at least three months
    before.") is no contrast with the reference; all of the answer when none qualifies."""
    numbers = {q.number for q in quantities(tokens(reference))}
    words = set(content_words(tokens(reference)))
    kept = [
        s
        for s in _SENTENCE.split(answer)
        if {q.number for q in quantities(tokens(s))} & numbers
        or (words and len(words & set(content_words(tokens(s)))) * 2 >= len(words))
    ]
    return " ".join(kept) or answer


_PERIOD = re.compile(
    r"\b(?:every|each|once a|twice a)\s+(second|minute|hour|day|night|week|fortnight"
    r"|month|quarter|year)s?\b|\b(hour|dai|night|week|month|quarter|year)(?:ly)\b|\bannual(?:ly)?\b"
)


def periods(text: str) -> Counter[str]:
    """The periods of the rates of ``text`` ("every night", "weekly", "per month").

    >>> sorted(periods("Computed every night, billed monthly and annually.").elements())
    ['month', 'night', 'year']
    """
    found: Counter[str] = Counter()
    for match in _PERIOD.finditer(normalise_text(text)):
        word = match.group(1) or match.group(2) or "year"
        found[{"dai": "day"}.get(word, word)] += 1
    return found


def _period_changed(reference: str, answer: str) -> str | None:
    ref, ans = periods(reference), periods(answer)
    new, lost = ans - ref, ref - ans
    if new and lost:
        return (
            f"the answer has a rate per {next(iter(new))} where the reference has one per "
            f"{next(iter(lost))}"
        )
    return None


_MAIN = re.compile(r"[.;!?]|,?\s+\b(?:because|since|as|so|unless|except)\b")


def _restated_flip(reference: str, answer: str, question: str) -> tuple[bool | None, str | None]:
    """After the same leading yes/no: an answer without a negation that restates the
    reference's negated sentence (every content word of it the question lacks) says the
    opposite of what follows the reference's ``No`` ("No. Travel insurance is on the list of
    items that are refunded" for "... that are not refunded"): a reader must look.  Any
    other sentence after the ``No`` ("No. The company insures trips itself.") is no
    contrast."""
    main = _MAIN.split(reference, maxsplit=1)[0]
    if not negations(main):
        return True, None
    words = set(content_words(tokens(main))) - set(content_words(tokens(question)))
    if words and words <= set(content_words(tokens(answer))):
        return None, (
            "the answer restates the reference's negated sentence without its negation, "
            "after the same yes/no: a reader must look"
        )
    return True, None


def contrast(
    reference: str, answer: str, yes_no: bool = False, question: str = ""
) -> tuple[bool | None, str | None]:
    """``(verdict, reason)`` for an answer whose key words all match: True when no contrast
    of the module docstring is found, False for a flipped bound, None (with the reason) when
    a reader must look.  ``yes_no``: the reference opens with Yes or No.  Only the sentences
    of the answer that restate the reference are read."""
    leading = _LEADING.match(normalise_text(answer)) is not None
    answer = about(reference, answer)
    verdict, reason = _flipped(reference, answer, question)
    if verdict is not True:
        return verdict, reason
    changed = _period_changed(reference, answer)
    if changed:
        return False, changed
    ref_text, ans_text = reference, answer
    if yes_no:
        # an answer without a leading yes/no asserts its polarity by its negations, which
        # the polarity rule has read; one with it is compared without it
        if not leading:
            return True, None
        ref_text = _LEADING.sub("", normalise_text(reference))
        ans_text = _LEADING.sub("", normalise_text(answer))
        if not negations(ans_text):
            return _restated_flip(ref_text, ans_text, question)
    ref_n, ans_n = negations(ref_text), negations(ans_text)
    if ref_n != ans_n:
        return None, (
            f"the answer holds {ans_n} negation(s), the reference {ref_n}: a negative "
            "paraphrase or a flip"
        )
    return True, None


def _kind(q: Quantity) -> str:
    """The unit of a number, or the pint kind of it (months and years are both time)."""
    if q.unit and (q.number[0].isdigit() or q.number.startswith("-")) and not q.currency:
        measured = measure(float(q.number.rstrip("%")), q.unit)
        if measured is not None:
            return measured[0]
    return q.unit


def _near(toks: Sequence[Token], position: int) -> set[str]:
    """The label of a number: the content words of the two tokens before it, not across
    another number or its unit; the two words after its unit when none stands before."""
    words: set[str] = set()
    for j in range(position - 1, max(-1, position - 3), -1):
        if toks[j].kind in ("number", "date") or (j and toks[j - 1].kind == "number"):
            break
        if toks[j].kind == "word":
            words.add(toks[j].text)
    if words:
        return words
    for j in range(position + 2, min(len(toks), position + 4)):
        if toks[j].kind in ("number", "date"):
            break
        if toks[j].kind == "word":
            words.add(toks[j].text)
    return words


def _label_words(toks: Sequence[Token], position: int) -> set[str]:
    """The content words of the two tokens before a number (its label), not across another
    number or its unit; none when it opens its clause."""
    words: set[str] = set()
    for j in range(position - 1, max(-1, position - 3), -1):
        if toks[j].kind in ("number", "date") or (j and toks[j - 1].kind == "number"):
            break
        if toks[j].kind == "word":
            words.add(toks[j].text)
    return words


def _moved(
    ref_toks: Sequence[Token], toks: Sequence[Token], a: tuple[int, int], b: tuple[int, int]
) -> bool:
    """In the reference's order, a value of the answer labelled with the words that label
    the *other* value in the reference, and none of its own ("domestic trips get 70 EUR" for
    "70 EUR per day (domestic trips get 55 EUR)"): the values may have changed places.  Only
    the words before a number count (a label), not the next clause's."""
    ref_a, ref_b = _label_words(ref_toks, a[0]), _label_words(ref_toks, b[0])
    ans_a, ans_b = _label_words(toks, a[1]), _label_words(toks, b[1])
    return bool(
        (ans_a & (ref_b - ref_a) and not ans_a & ref_a)
        or (ans_b & (ref_a - ref_b) and not ans_b & ref_b)
    )


def swapped(
    wanted: Sequence[Quantity], reference: str, answer: str
) -> tuple[bool | None, str | None]:
    """``(verdict, reason)`` on the order of two of the reference's values of one kind.

    ``wanted`` are the reference's numbers.  When the answer states two of the same kind in
    the opposite order, the words beside each (two either side) decide: each beside words only
    its own reference value had, the clauses were reordered (True); each beside words only the
    other value had, the values changed places (False); else a reader must look (None).

    >>> ref = "RTO 5 minutes for the site, RPO 30 minutes for the data."
    >>> want = quantities(tokens(ref))
    >>> swapped(want, ref, "RTO 30 minutes for the site, RPO 5 minutes for the data.")[0]
    False
    >>> swapped(want, ref, "RPO 30 minutes for the data, RTO 5 minutes for the site.")
    (True, None)
    """
    ref_toks, toks = tokens(reference), tokens(answer)
    stated = quantities(toks)
    where: list[tuple[int, Quantity]] = []
    for w in wanted:
        found = [s.position for s in stated if s.number == w.number and states_number(w, [s])]
        if found:
            where.append((found[0], w))
    for i, (pos_a, a) in enumerate(where):
        for pos_b, b in where[i + 1 :]:
            if a.number == b.number or not _kind(a) or _kind(a) != _kind(b):
                continue
            own_a = _near(ref_toks, a.position) - _near(ref_toks, b.position)
            own_b = _near(ref_toks, b.position) - _near(ref_toks, a.position)
            near_a, near_b = _near(toks, pos_a), _near(toks, pos_b)
            if near_a & own_a and near_b & own_b:
                continue  # each value kept its own words: the clauses were reordered
            if pos_b > pos_a and not _moved(
                ref_toks, toks, (a.position, pos_a), (b.position, pos_b)
            ):
                continue
            if near_a & own_b and near_b & own_a:
                return False, (
                    f"the answer puts {a.number} {a.unit} where the reference has "
                    f"{b.number} {b.unit} and the other way round: swapped values"
                )
            if pos_b > pos_a:
                return None, (
                    f"the answer states {a.number} {a.unit} or {b.number} {b.unit} beside the "
                    "words of the other value: swapped values or another wording"
                )
            return None, (
                f"the answer states {b.number} {b.unit} before {a.number} {a.unit}, the "
                "reference the other way round: swapped values or reordered clauses"
            )
    return True, None
