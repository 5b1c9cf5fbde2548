"""Where the reference-answer rules are not sure: undecided instead of wrong (or right).

:func:`~ragaudit.judges.reference.answer_states` says whether an answer states the
reference's claims.  Three readings it cannot settle make the verdict *undecided* (None, with
the reason in the row's ``judges.reasons``, counted in the funnel's "unjudged" row and routed
to an LLM judge by ``ragaudit judge --only-undecided`` or to a person by ``ragaudit labels
verdicts --only-undecided``):

1. **A named entity of the reference is missing** (a capitalised word of the answer part the
   question does not already hold: a product, tool, team or place).  When the answer names
   another entity in its place (a capitalised word the question and the reference lack, seen
   mid-sentence in the answer or the context) the answer is **wrong**; when it names none, the
   rule cannot tell a paraphrase from a miss: undecided.  Checked when the reference is
   answered by words (no number, date or yes/no).
2. **A qualifier that narrows or widens the claim**: the answer holds ``only``, ``just``,
   ``solely``, ``exclusively``, ``except`` or ``excluding`` and the reference does not, or the
   reference says ``all``/``every``/``everyone``/``any`` and the answer none of them ("only
   new engineers attend" for "all engineers attend").  Checked when the answer would
   otherwise be correct by key words.
3. **A second value for the same quantity**: the answer states the required number and also
   another number with the same unit that the reference nowhere states, with no label of its
   own or the same label ("8 days, or 5 days under the old policy"): which one it asserts
   needs a reader.  A value with another label ("SEV1 within 5 minutes, SEV2 within 15
   minutes") is a value of something else.

Examples
--------
>>> from ragaudit.judges.reference import reference_claims
>>> q = "Which tool pages the on-call engineer?"
>>> ref = "The on-call engineer is paged through Beacon."
>>> c = reference_claims(ref, q)
>>> answer_verdict(c, ref, "Beacon pages them.", q)
(True, None)
>>> answer_verdict(c, ref, "They are paged through Klaxon.", q)
(False, None)
>>> answer_verdict(c, ref, "The on-call engineer is paged.", q)[1][:40]
'the reference names beacon; the answer d'
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence

from ragaudit.judges.additions import (
    dropped_restriction,
    hedged,
    inserted_qualifier,
    other_alternative,
    other_date,
    unread_date,
    unread_period,
)
from ragaudit.judges.claims import (
    Quantity,
    Token,
    content_words,
    quantities,
    states_number,
    tokens,
)
from ragaudit.judges.contrasts import about, contrast, swapped
from ragaudit.judges.reference import LABEL_REACH, ReferenceClaims, answer_states
from ragaudit.judges.reversals import reversal
from ragaudit.judges.units import measure

__all__ = ["answer_verdict", "asks_name", "copied", "named_entities"]

_WORD = re.compile(r"[^\W\d_][\w&'\-]*")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+|\s+[-\u2013\u2014]\s+")
_NOT_NAMES = frozenset(
    {"i", "yes", "no", "eur", "usd", "gbp", "inr", "jpy", "chf", "am", "pm", "utc", "ok"}
)
_NARROW = re.compile(r"\b(?:only|just|solely|exclusively|except|excluding)\b")
_PARENS = re.compile(r"\([^()]*\)")
_LABEL_END = re.compile(r"[*_]*:")
#: Parentheses kept through the sentence split as marks, so that an aside is still known.
_ASIDE = re.compile(r"\u27e6[^\u27e7]*\u27e7")


def _aside(match: re.Match[str]) -> str:
    return "\u27e6" + match[0][1:-1].replace(":", ",") + "\u27e7"


_WIDE = re.compile(r"\b(?:all|every|everyone|everybody|any|anyone)\b")


def _capitalised(text: str) -> tuple[set[str], set[str]]:
    """(capitalised words inside a sentence, capitalised words opening one), as tokens."""
    inner: set[str] = set()
    opening: set[str] = set()
    for sentence in _SENTENCE.split(text):
        for i, found in enumerate(_WORD.finditer(sentence)):
            word = found[0]
            if not word[0].isupper() or _LABEL_END.match(sentence, found.end()):
                continue  # "**Price:** 329 EUR": a list item's label, not a name
            for tok in tokens(word):
                if tok.kind == "word" and tok.text not in _NOT_NAMES:
                    (opening if i == 0 else inner).add(tok.text)
    return inner, opening


def named_entities(text: str, seen: Sequence[str] = ()) -> set[str]:
    """The capitalised words of ``text`` that name something, as tokens.

    A word inside a sentence counts; a word opening a sentence counts when it also stands
    capitalised inside a sentence of ``text`` or of ``seen`` (the context), since any word
    may open a sentence.

    >>> sorted(named_entities("Ask the Platform team. Kellsport has a lab.", ["In Kellsport."]))
    ['kellsport', 'platform']
    """
    inner, opening = _capitalised(text)
    known = set(inner)
    for other in seen:
        known |= _capitalised(other)[0]
    return inner | (opening & known)


def _lead(toks: Sequence[Token], position: int) -> set[str]:
    """The content words just before a number (:data:`LABEL_REACH` tokens, not across another
    number or its unit): what the number is a value of."""
    words: set[str] = set()
    for j in range(position - 1, max(-1, position - 1 - LABEL_REACH), -1):
        if toks[j].kind in ("number", "date") or (j and toks[j - 1].kind == "number"):
            break
        if toks[j].kind == "word":
            words.add(toks[j].text)
    return words


def _conflict(claims: ReferenceClaims, answer: str) -> str | None:
    toks = tokens(answer)
    stated = quantities(toks)
    in_reference = {n.number for fact in claims.facts for n in fact.numbers}
    for wanted in claims.numbers:
        found = [s for s in stated if wanted.unit and states_number(wanted, [s])]
        labels = set().union(*(_lead(toks, s.position) for s in found))
        for other in stated if found else ():
            if other.number in in_reference or wanted.unit not in (other.unit, other.currency):
                continue
            if other.number.startswith("ord") != wanted.number.startswith("ord"):
                continue  # "the sixth month" is no second value of "6 months"
            if _lead(toks, other.position) - labels:
                continue  # a value of something else ("a SEV2 page within 15 minutes")
            if not states_number(wanted, [other]):
                return (
                    f"the answer states {wanted.number} {wanted.unit} and also {other.number} "
                    f"{wanted.unit}: which one it asserts needs a reader"
                )
    return None


def _kind(q: Quantity) -> str:
    """What a number measures, to tell a rival value from an unread one: its currency, the
    pint kind of its unit, its percentage sign, ``"ordinal"``, or its unit word."""
    if q.currency:
        return "currency"
    if q.number.endswith("%"):
        return "%"
    if q.number.startswith("ord"):
        return "ordinal"
    if q.number[0].isdigit() or q.number.startswith("-"):
        measured = measure(float(q.number), q.unit)
        if measured is not None:
            return measured[0]
    return q.unit


_SURE_KINDS = frozenset({"currency", "%", "ordinal"})


def _amount(q: Quantity) -> tuple[str, float] | None:
    if q.number.endswith("%") or not (q.number[0].isdigit() or q.number.startswith("-")):
        return None
    return measure(float(q.number), q.unit)


def _compound(wanted: Quantity, stated: Sequence[Quantity]) -> bool:
    """Two neighbouring durations, or the wanted one and its neighbour, that sum to the
    other side's value ("2 years and 1 month" = "25 months", "220 minutes" = "3 hours and
    40 minutes"): pint adds them."""
    amount = _amount(wanted)
    if amount is None:
        return False
    parts = [(s, _amount(s)) for s in stated]
    return any(
        ma and mb and 0 < b.position - a.position <= 4 and ma[0] == mb[0] == amount[0]
        and math.isclose(ma[1] + mb[1], amount[1], rel_tol=1e-9)
        for (a, ma), (b, mb) in itertools.pairwise(parts)
    )  # fmt: skip


def _unread(claims: ReferenceClaims, answer: str) -> str | None:
    """Why a numbers verdict of False is not sure, or None when it is.

    A required number the answer does not state is a sure miss only when the answer puts
    another value *in the same unit* (or currency, or percentage) in its place: a changed
    number, currency or rate.  With no value of its kind (``"A decade."`` for ``"10 years"``)
    it may be a wording the parsers cannot read, or a dropped fact; with a value in another
    unit of its kind (``"2 years and 1 month"`` for ``"25 months"``) a conversion the parser
    cannot make, or a changed unit: undecided."""
    stated = quantities(tokens(answer))
    for wanted in claims.numbers:
        if states_number(wanted, stated):
            continue
        if _compound(wanted, stated) or any(_compound(s, claims.numbers) for s in stated):
            return "a sum of two durations (2 years and 1 month): a reader must add them"
        kind = _kind(wanted)
        same = [
            s
            for s in stated
            if (_kind(s) == kind or (kind and s.unit == wanted.unit))
            and not any(states_number(w, [s]) for w in claims.numbers)
        ]
        if any(
            s.unit == wanted.unit
            or s.number == wanted.number
            or kind in _SURE_KINDS
            or (_amount(s) is not None and _amount(wanted) is not None)
            for s in same
        ):
            continue  # another amount pint compares, or its value in another unit: changed
        return (
            f"the answer states no value for {wanted.number} {wanted.unit}".rstrip()
            + (" in its unit" if same else "")
            + ": a wording or conversion the parsers cannot read, or a changed unit or a "
            "dropped fact"
        )
    return None


def _extra(reference: str, answer: str) -> str | None:
    """A value of a kind the reference states, in the sentences restating it, that is none of
    the reference's values: an ordinal (``"on the 26th, or ... when the 25th is a weekend"``)
    or a number of the reference in another unit (``"six years, with check-ins after one,
    three and six months"``): a changed value beside the right one; a reader must look."""
    wanted = quantities(tokens(reference))
    kinds = {_kind(w) for w in wanted} - {""}
    numbers = {w.number for w in wanted}
    for q in quantities(tokens(about(reference, answer))):
        if _kind(q) not in kinds or any(
            (q.number, q.unit) == (w.number, w.unit) or states_number(w, [q]) for w in wanted
        ):
            continue
        if q.number not in numbers and _kind(q) != "ordinal":
            continue  # a value with a label of its own ("a SEV2 page within 15 minutes")
        return (
            f"the answer also states {q.number} {q.unit}".rstrip()
            + ", a value the reference does not: a changed value or a conversion"
        )
    return None


_ASKS_NAME = re.compile(
    r"^\W*(?:who|whom|whose|which|where)\b|\b(?:and|or)\s+(?:by |to |from |in |with )?"
    r"(?:who|whom|whose|which|where)\b",
    re.IGNORECASE,
)


def asks_name(question: str) -> bool:
    """Whether the question asks for a name: it opens with who/whom/whose/which/where, or a
    second part does ("In which year ..., and by whom?").  "The city *where* the lab is" in
    the middle of a question is a relative clause, not a question word.

    >>> asks_name("In which year was it founded, and by whom?"), asks_name(
    ...     "What is the hotel cap in the city where the lab is?")
    (True, False)
    """
    return _ASKS_NAME.search(question) is not None


def _stating(claims: ReferenceClaims, answer: str) -> str:
    """The sentences of ``answer`` that state a required number or date: where a rival name
    counts."""
    return " ".join(
        s for s in _SENTENCE.split(answer)
        if any(states_number(w, quantities(tokens(s))) for w in claims.numbers)
        or any(t.kind == "date" and t.text in claims.dates for t in tokens(s))
    )  # fmt: skip


def _entities(
    claims: ReferenceClaims, reference: str, answer: str, question: str, context: Sequence[str]
) -> tuple[bool | None, str | None]:
    """Rule 1 of the module docstring: (False, None) for a rival entity, (None, reason) for a
    missing one with no rival, (True, None) otherwise."""
    if claims.mode == "numbers":
        # a number is asked: a name the reference gives beside it is asked only when the
        # question asks for one, and a rival counts in the sentences stating the number
        # ("600 a minute; anything more gets a Retry-After header" names no rival)
        answer = _stating(claims, _PARENS.sub(_aside, answer))
        if not asks_name(question):
            named = named_entities(_PARENS.sub(" ", reference), context)
            if not named - set(content_words(tokens(answer))):
                return True, None
            rivals = named_entities(answer, context) - named
            rivals -= set(content_words(tokens(question))) | claims.part_words
            if rivals and not rivals & named_entities(_ASIDE.sub(" ", answer), context):
                # named only in an aside ("30 minutes (Standard support: 4 hours)"): a true
                # side fact or a rival, which the names alone cannot tell
                return None, f"the answer names {', '.join(sorted(rivals))} only in parentheses"
            return (False, None) if rivals else (True, None)
    asked = set(content_words(tokens(question)))
    wanted = named_entities(_PARENS.sub(" ", reference), context) - asked
    said = set(content_words(tokens(answer)))
    # a name the question holds and the reference repeats ("use Saltmarsh"), replaced by
    # another name of the corpus ("use Brine"), is a rival too
    repeated = named_entities(_PARENS.sub(" ", reference), context) & asked
    missing = sorted(wanted - said)
    if not missing and not (repeated - said):
        return True, None
    if not missing:
        rivals = named_entities(answer, context) - repeated - asked - claims.part_words
        return (False, None) if rivals else (True, None)
    rivals = named_entities(answer, context) - wanted - asked - claims.part_words
    if rivals:
        return False, None
    return None, (
        f"the reference names {', '.join(missing)}; the answer does not, and names no "
        "other: a paraphrase or a miss"
    )


_CITE = re.compile(r"\[\d+(?:\s*[,-]\s*\d+)*\]")
_PIECES = re.compile(r"(?<=[.!?;:])\s+|\s*\|\s*|\n+")


def _flat(text: str) -> str:
    return " ".join(_CITE.sub(" ", text).lower().split())


def copied(answer: str, context_texts: Sequence[str]) -> bool:
    """Whether every piece of ``answer`` (sentences, table cells; citation markers left out)
    stands word for word in one of ``context_texts``: an extractive answer.

    >>> copied("Refunds take 30 days [1]. Ask HR.", ["Refunds take 30 days. Ask HR first."])
    True
    >>> copied("Refunds take 3 days.", ["Refunds take 30 days."])
    False
    """
    flats = [_flat(t) for t in context_texts]
    pieces = [_flat(p).strip(" .;:,") for p in _PIECES.split(answer)]
    pieces = [p for p in pieces if p]
    return bool(pieces and flats) and all(any(p in f for f in flats) for p in pieces)


def _classic(
    verdict: bool,
    claims: ReferenceClaims,
    reference: str,
    answer: str,
    question: str,
    context_texts: Sequence[str],
) -> tuple[bool | None, str | None]:
    """The verdict of an extractive answer: the reference rules, a second value of the same
    quantity, and the entity and qualifier doubts for answers in words."""
    if claims.mode == "numbers":
        doubt = _conflict(claims, answer) if verdict else None
        return (None, doubt) if doubt else (verdict, None)
    if claims.mode != "words":
        return verdict, None
    entity, because = _entities(claims, reference, answer, question, context_texts)
    if entity is False:
        return False, None
    if verdict and entity is None:
        return None, because
    doubt = _qualifier(reference, answer) if verdict else None
    return (None, doubt) if doubt else (verdict, None)


def answer_verdict(
    claims: ReferenceClaims,
    reference: str,
    answer: str,
    question: str = "",
    context_texts: Sequence[str] = (),
) -> tuple[bool | None, str | None]:
    """``(correct, reason)``: :func:`~ragaudit.judges.reference.answer_states` with the
    doubts of the module docstring, the contrasts of :mod:`ragaudit.judges.contrasts` and
    the reversals of :mod:`ragaudit.judges.reversals`; ``reason`` says why when ``correct``
    is not True."""
    correct, why = _verdict(claims, reference, answer, question, context_texts)
    if correct is not True:
        return correct, why
    flipped, doubt = reversal(reference, answer)
    return (flipped, doubt) if flipped is not True else (True, None)


def _verdict(
    claims: ReferenceClaims,
    reference: str,
    answer: str,
    question: str,
    context_texts: Sequence[str],
) -> tuple[bool | None, str | None]:
    verdict = answer_states(claims, answer, question)
    if verdict is None:
        return None, claims.reason
    if copied(answer, context_texts):
        # the answer is the documents' own sentences: a flip, a swap or an unread wording are
        # things a writer does, and what the documents say is decided by the rules above
        return _classic(verdict, claims, reference, answer, question, context_texts)
    if claims.mode == "numbers":
        if not verdict:
            doubt = _unread(claims, answer) or unread_date(claims, answer)
            return (None, doubt) if doubt else (False, None)
        flip, why = contrast(reference, answer, question=question)
        if flip is False:
            return False, why
        order, swap = swapped(quantities(tokens(reference)), reference, answer)
        if order is False:
            return False, swap
        entity, because = _entities(claims, reference, answer, question, context_texts)
        if entity is False:
            return False, None
        doubt = (
            _conflict(claims, answer) or swap or why or because or _extra(reference, answer)
            or inserted_qualifier(claims, reference, answer, question)
            or hedged(claims, answer)
            or other_alternative(reference, answer, question)
            or other_date(reference, answer)
        )  # fmt: skip
        return (None, doubt) if doubt else (True, None)
    if not verdict:
        doubt = unread_period(claims, answer) if claims.mode == "words" else None
        return (None, doubt) if doubt else (False, None)
    flip, why = contrast(reference, answer, yes_no=claims.mode == "polarity", question=question)
    if flip is False:
        return False, why
    if claims.mode != "words":
        return (None, why) if flip is None else (True, None)
    entity, because = _entities(claims, reference, answer, question, context_texts)
    if entity is False:
        return False, None
    if entity is None or flip is None:
        return None, because or why
    doubt = (
        _qualifier(reference, answer)
        or dropped_restriction(reference, answer, question)
        or other_alternative(reference, answer, question)
    )
    return (None, doubt) if doubt else (True, None)


def _qualifier(reference: str, answer: str) -> str | None:
    """Rule 2 of the module docstring."""
    lower_ref, lower_answer = reference.lower(), answer.lower()
    narrows = _NARROW.search(lower_answer) and not _NARROW.search(lower_ref)
    if narrows or (_WIDE.search(lower_ref) and not _WIDE.search(lower_answer)):
        return (
            "the answer narrows or widens the reference (only, except, all, every): "
            "a qualifier the key words cannot check"
        )
    return None
