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

import re
from collections.abc import Sequence

from ragaudit.judges.claims import Token, content_words, quantities, states_number, tokens
from ragaudit.judges.reference import LABEL_REACH, ReferenceClaims, answer_states

__all__ = ["answer_verdict", "named_entities"]

_WORD = re.compile(r"[^\W\d_][\w&'\-]*")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+|\s+[-\u2013\u2014]\s+")
_NOT_NAMES = frozenset(
    {"i", "yes", "no", "eur", "usd", "gbp", "inr", "jpy", "chf", "am", "pm", "utc", "ok"}
)
_NARROW = re.compile(r"\b(?:only|just|solely|exclusively|except|excluding)\b")
_WIDE = re.compile(r"\b(?:all|every|everyone|everybody|any|anyone)\b")


def _capitalised(text: str) -> tuple[set[str], set[str]]:
    """(capitalised words inside a sentence, capitalised words opening one), as tokens."""
    inner: set[str] = set()
    opening: set[str] = set()
    for sentence in _SENTENCE.split(text):
        for i, word in enumerate(_WORD.findall(sentence)):
            if not word[0].isupper():
                continue
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
            if _lead(toks, other.position) - labels:
                continue  # a value of something else ("a SEV2 page within 15 minutes")
            if not states_number(wanted, [other]):
                return (
                    f"the answer states {wanted.number} {wanted.unit} and also {other.number} "
                    f"{wanted.unit}: which one it asserts needs a reader"
                )
    return None


def answer_verdict(
    claims: ReferenceClaims,
    reference: str,
    answer: str,
    question: str = "",
    context_texts: Sequence[str] = (),
) -> tuple[bool | None, str | None]:
    """``(correct, reason)``: :func:`~ragaudit.judges.reference.answer_states` with the
    doubts of the module docstring; ``reason`` says why when ``correct`` is None."""
    verdict = answer_states(claims, answer, question)
    if verdict is None:
        return None, claims.reason
    if claims.mode == "numbers":
        doubt = _conflict(claims, answer) if verdict else None
        return (None, doubt) if doubt else (verdict, None)
    if claims.mode != "words":
        return verdict, None
    asked = set(content_words(tokens(question)))
    wanted = named_entities(reference, context_texts) - asked
    said = set(content_words(tokens(answer)))
    missing = sorted(wanted - said)
    if missing:
        rivals = named_entities(answer, context_texts) - wanted - asked - claims.part_words
        if rivals:
            return False, None
        if verdict:
            return None, (
                f"the reference names {', '.join(missing)}; the answer does not, and names no "
                "other: a paraphrase or a miss"
            )
    if verdict:
        lower_ref, lower_answer = reference.lower(), answer.lower()
        narrows = _NARROW.search(lower_answer) and not _NARROW.search(lower_ref)
        if narrows or (_WIDE.search(lower_ref) and not _WIDE.search(lower_answer)):
            return None, (
                "the answer narrows or widens the reference (only, except, all, every): "
                "a qualifier the key words cannot check"
            )
    return verdict, None
