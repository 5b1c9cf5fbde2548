"""What an answer adds to the reference, or words so that the parsers cannot read it.

Issue 31's rule: a rule that is not sure must say so rather than guess.  The reference rules
(:mod:`ragaudit.judges.reference`) check that an answer states the reference's numbers, dates
and key words; six readings below find where that check would guess, and make the verdict
*undecided* with a reason (counted in the funnel's "unjudged" row, routed to an LLM judge or
a person):

1. **A qualifier inside a quantity** (:func:`inserted_qualifier`): the answer states a
   required number with a word between it and its unit (a unit pint converts) that neither
   the reference nor the question holds ("30 *working* days" for "30 days"; "three
   consecutive nights" is left alone, a night being no pint unit), or a word right before a
   required date ("every *second* Monday" for "every Monday").  It may change the amount.
2. **Dates and times** (:func:`unread_date`, :func:`other_date`): a required date or time the
   answer does not state, when the answer states no date of its class (time of day, day and
   month, weekday, month) at all, is a wording the parsers may not read ("ten in the morning"
   for "10:00"); a date of a class the reference states that is none of the reference's
   ("from 01:55" beside "from 02:10 to 05:50") may be a changed value.  An answer with
   another date of the class in place of the required one stays **wrong**.
3. **A period in words** (:func:`unread_period`): a reference answered by a period word
   ("Every *quarter*") and an answer that gives a number instead ("four times a year",
   "once every three months"): a frequency the parsers do not convert.  Another period
   word without a number ("Every month") stays **wrong**.
4. **A dropped restriction** (:func:`dropped_restriction`): the reference restricts (``only``,
   ``solely``, ``exclusively``, ``alone``) and the answer keeps no restricting word and names
   more than the reference ("the commander together with customer success" for "only the
   commander").
5. **A hedged value** (:func:`hedged`): every statement of a required number is hedged
   ("*about* 30 days", "*nearly* 4 hours", "a fortnight *and a bit*", "20 days *or so*"): the
   answer does not assert the reference's exact amount.
6. **An alternative of its own** (:func:`other_alternative`): the answer adds an alternative
   or a consequence (", or ...", "; otherwise ...", "; after that ...", "unless ...") whose
   words are mostly not the reference's ("14 days, or they get a written warning" for "14
   days; otherwise their accounts are suspended"): a claim the reference does not support.
   The reference's own alternative in other words ("or their accounts get suspended") is
   none.

Examples
--------
>>> from ragaudit.judges.reference import reference_claims
>>> q = "Within how many days must a claim be filed?"
>>> c = reference_claims("Within 30 days.", q)
>>> inserted_qualifier(c, "Within 30 days.", "Within 30 working days.", q)[:33]
"the answer puts 'work' between 30"
>>> inserted_qualifier(c, "Within 30 days.", "Within thirty days.", q) is None
True
"""

from __future__ import annotations

import itertools
import re

from ragaudit.judges.claims import Token, content_words, quantities, states_number, tokens
from ragaudit.judges.reference import ReferenceClaims
from ragaudit.judges.units import measure

__all__ = [
    "dropped_restriction",
    "hedged",
    "inserted_qualifier",
    "other_alternative",
    "other_date",
    "unread_date",
    "unread_period",
]

_WEEKDAYS = frozenset(
    {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
)


def _date_class(token: str) -> str:
    """``"time"``, ``"day-month"``, ``"weekday"`` or ``"month"``."""
    if token.startswith("time") and token[4:].isdigit():
        return "time"
    if token.startswith("dm") and token[2:].isdigit():
        return "day-month"
    return "weekday" if token in _WEEKDAYS else "month"


def _dates(toks: list[Token]) -> list[str]:
    return [t.text for t in toks if t.kind == "date"]


def inserted_qualifier(
    claims: ReferenceClaims, reference: str, answer: str, question: str = ""
) -> str | None:
    """Rule 1 of the module docstring: the reason, or None."""
    known = set(content_words(tokens(reference))) | set(content_words(tokens(question)))
    toks = tokens(answer)
    stated = quantities(toks)
    for wanted in claims.numbers:
        if not wanted.unit or wanted.currency or measure(1, wanted.unit) is None:
            continue  # a unit pint converts: "working" or "calendar" may change the amount
        found = [s for s in stated if states_number(wanted, [s])]
        if found and all(
            s.unit and s.unit != wanted.unit and s.unit not in known and wanted.unit in s.near
            for s in found
        ):
            return (
                f"the answer puts '{found[0].unit}' between {wanted.number} and "
                f"{wanted.unit}, a qualifier the reference does not state: it may change "
                "the amount"
            )
    for i, tok in enumerate(toks):
        before = toks[i - 1] if i else Token("stop", "")
        # "every other Friday" ("other" is a stopword): a frequency word too
        qualifies = before.kind == "word" or before.text == "other"
        if (
            tok.kind == "date"
            and tok.text in claims.dates
            and qualifies
            and before.text not in known
        ):
            return (
                f"the answer puts '{before.text}' before {tok.text}, a qualifier the "
                "reference does not state"
            )
    return None


def unread_date(claims: ReferenceClaims, answer: str) -> str | None:
    """Rule 2, a missing date: the reason when the answer states every required number
    and, for a missing date, no date of its class; None when the miss is sure (or no date
    is missing)."""
    toks = tokens(answer)
    stated = quantities(toks)
    if not all(states_number(w, stated) for w in claims.numbers):
        return None
    classes = {_date_class(d) for d in _dates(toks)}
    missing = [d for d in claims.dates if d not in _dates(toks)]
    if missing and all(_date_class(d) not in classes for d in missing):
        return (
            f"the answer states no {_date_class(missing[0])} for {missing[0]}: a wording "
            "the parsers cannot read, or a dropped fact"
        )
    return None


def other_date(reference: str, answer: str) -> str | None:
    """Rule 2, an added date: the reason, or None.

    >>> other_date("From 02:10 to 05:50 UTC.", "From 01:55 to 05:50 UTC.")[:29]
    'the answer states time0155, a'
    >>> other_date("From 02:10 to 05:50 UTC.", "Until 05:50, on a Monday.") is None
    True
    """
    wanted = _dates(tokens(reference))
    classes = {_date_class(d) for d in wanted}
    for date in _dates(tokens(answer)):
        if date not in wanted and _date_class(date) in classes:
            return (
                f"the answer states {date}, a {_date_class(date)} the reference does not: "
                "a changed value or an added fact"
            )
    return None


def unread_period(claims: ReferenceClaims, answer: str) -> str | None:
    """Rule 3: the reason, or None.

    >>> from ragaudit.judges.reference import reference_claims
    >>> c = reference_claims("Every quarter.", "How often is the review done?")
    >>> unread_period(c, "Four times a year.")[:40]
    'the reference gives a period in words (q'
    >>> unread_period(c, "Every month.") is None
    True
    """
    toks = tokens(answer)
    missing = claims.key_words - set(content_words(toks))
    if not missing or not all(measure(1, w) is not None for w in missing):
        return None
    if not quantities(toks):
        return None  # "Every month" for "Every quarter": another period, surely
    return (
        f"the reference gives a period in words ({', '.join(sorted(missing))}); the answer "
        "gives a number or another period: a frequency the parsers do not convert"
    )


_RESTRICT = re.compile(r"\b(?:only|solely|exclusively|alone|sole)\b")
_KEEPS = re.compile(
    r"\b(?:only|just|solely|exclusively|alone|sole|nobody|no one|none|nothing|but|except)\b"
)


def dropped_restriction(reference: str, answer: str, question: str = "") -> str | None:
    """Rule 4: the reason, or None.

    >>> ref = "Only the release manager."
    >>> dropped_restriction(ref, "The release manager and the QA lead.")[:35]
    'the reference restricts (only); the'
    >>> dropped_restriction(ref, "The release manager."), dropped_restriction(
    ...     ref, "Nobody but the release manager.")
    (None, None)
    """
    if not _RESTRICT.search(reference.lower()) or _KEEPS.search(answer.lower()):
        return None
    known = set(content_words(tokens(reference))) | set(content_words(tokens(question)))
    added = sorted(set(content_words(tokens(answer))) - known)
    if not added:
        return None
    return (
        f"the reference restricts (only); the answer does not, and adds {', '.join(added)}: "
        "a wider claim"
    )


_HEDGE_BEFORE = frozenset(
    {"about", "around", "roughly", "approximately", "circa", "nearly", "almost", "approx"}
)
_HEDGE_PAIRS = frozenset({("just", "over"), ("just", "under"), ("little", "over"),
                          ("little", "under"), ("little", "more"), ("little", "less")})  # fmt: skip
_HEDGE_AFTER = re.compile(r"\b(?:and a bit|or so|give or take|ish)\b")


def hedged(claims: ReferenceClaims, answer: str) -> str | None:
    """Rule 5: the reason, or None.

    >>> from ragaudit.judges.reference import reference_claims
    >>> c = reference_claims("30 days.", "How long is the notice period?")
    >>> hedged(c, "About thirty days.")[:30], hedged(c, "30 days or so.")[:30]
    ('the answer hedges 30 day (abou', 'the answer hedges 30 day (or s')
    >>> hedged(c, "30 days, about a month.") is None
    True
    """
    toks = tokens(answer)
    texts = [t.text for t in toks]
    for wanted in claims.numbers:
        found = [s for s in quantities(toks) if states_number(wanted, [s])]
        why = []
        for s in found:
            before = texts[max(0, s.position - 3) : s.position]
            after = " ".join(texts[s.position + 1 : s.position + 5])
            pairs = set(itertools.pairwise(before))
            hedge = (_HEDGE_BEFORE & set(before)) or (_HEDGE_PAIRS & pairs)
            match = _HEDGE_AFTER.search(after)
            if not hedge and not match:
                break
            why.append(match.group(0) if match else " ".join(sorted(map(str, hedge))))
        else:
            if found:
                return (
                    f"the answer hedges {wanted.number} {wanted.unit} ({why[0]}): not the "
                    "reference's exact amount"
                )
    return None


_ALTERNATIVE = re.compile(
    r"(?:[,;:]\s*|\s-\s)(?:or|or else|otherwise|after that|after which|beyond that|above that"
    r"|unless)\b([^.;]*)",
    re.IGNORECASE,
)


def other_alternative(reference: str, answer: str, question: str = "") -> str | None:
    """Rule 6: the reason, or None.

    >>> ref = "Within 10 days; otherwise the request lapses."
    >>> other_alternative(ref, "Within ten days, or a fee of 20 EUR is charged.")[:34]
    'the answer adds an alternative the'
    >>> other_alternative(ref, "Within ten days, or else the request lapses.") is None
    True
    >>> other_alternative(ref, "Within ten days or two weeks.") is None  # no clause of its own
    True
    """
    known = set(content_words(tokens(reference)))
    asked = set(content_words(tokens(question)))
    for match in _ALTERNATIVE.finditer(answer):
        words = set(content_words(tokens(match.group(1)))) - asked
        if words and len(words & known) * 2 < len(words):
            return (
                "the answer adds an alternative the reference does not state ("
                + match.group(0).strip(" ,;:-")[:40]
                + "): a claim to check"
            )
    return None
