"""Correctness and evidence-in-context decided from the reference answer.

The reference answer of a golden question is read into *claims* (:func:`reference_claims`):

1. **The answer part.**  Text in parentheses is dropped; a leading ``Yes``/``No`` becomes a
   polarity claim (:mod:`ragaudit.judges.polarity`); only the first sentence is kept, cut at
   the first semicolon and before a subordinate clause (``because``, ``so that``,
   ``except``, ``unless``, ``otherwise``, ``whereas``, ``although``, ``, but``, ``, who``,
   ``, which``, ``, where``, ``, with``, a dash): what follows is elaboration ("...; claims
   later than 90 days are rejected").  When the question asks two things ("..., and how
   early must flights be booked?"), each semicolon part of the first sentence is an answer
   part of its own.
2. **Clauses.**  An answer part is split at commas and colons, except a comma before
   ``and``/``or``/``plus``/``to`` ("4 hours ..., and 6 years" stays one clause).
3. **The clause that answers**, in each answer part: among the clauses that state a number
   or a date, the one sharing most content words with the question (the first on a tie):
   "After a 30-day export period, the data is deleted within 60 days" answers "How soon is
   data *deleted*?" with its second clause.  Its numbers (with units) and dates are
   *required*, except numbers the question itself states and a year that is not the
   clause's first claim ("8 days *since 2025*").  A part without numbers or dates gives
   *key words* instead: the content words of its best clause that the question lacks
   ("Only the incident commander" -> ``incident``, ``commander``).

**Correct** (:func:`answer_states`): every required number is stated with its unit
(:func:`~ragaudit.judges.claims.states_number`), every required date is stated, the polarity
agrees (:func:`~ragaudit.judges.polarity.answer_polarity`; or, without its own yes/no, the
answer restates the reference's sentence: every key word, and a negation cue exactly when the
reference's sentence has one, as "USB storage devices are blocked" restates "No. USB storage
devices are blocked ...") and, unless the reference has a polarity, the answer holds at
least :data:`KEY_WORD_SHARE` of the key words.

**Evidence in context** (:func:`context_holds`): every required number and date stands in a
context chunk within :data:`WINDOW` tokens of a content word (other than its unit) of the
answer part or of the question, or in a chunk holding :data:`CHUNK_WORD_SHARE` of the
question's content words, so "4 hours" of an outage is not evidence for "4 hours" to disable
accounts.  Without numbers, one chunk holds :data:`CHUNK_WORD_SHARE` of the answering
clause's and question's content words (and the key-word share, and for a ``No`` a negation
cue or a restatement of the reference's sentence).  This is the chapter's stage 2
(sufficiency): the facts may sit in any chunk of any document.  A question's gold
``sources`` are the retrieval labels and play no part, unless the golden set sets
``evidence_from_each_source`` on it: then each source must also give a context chunk
holding some fact of the reference (a number or date of any part of it, located as above,
or half of the content words of one of its clauses).

A verdict is None only when the reference gives nothing to check (empty, or no number, date,
yes/no or content word beyond the question's); :attr:`ReferenceClaims.reason` says which.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from ragaudit.judges.claims import Quantity, Token, content_words, quantities, states_number, tokens
from ragaudit.judges.polarity import answer_polarity, has_negation, reference_polarity

__all__ = [
    "KEY_WORD_SHARE",
    "LABEL_REACH",
    "WINDOW",
    "ReferenceClaims",
    "answer_states",
    "context_holds",
    "reference_claims",
]

#: Share of the key words an answer must hold when the reference has no number or date.
KEY_WORD_SHARE = 1 / 2
#: Share of the clause's and question's content words a chunk must hold to be evidence
#: without numbers (and of a clause's words to be a fact of one gold source).
CHUNK_WORD_SHARE = 1 / 2
#: A number or date in a chunk is evidence when a content word of its clause or of the
#: question stands within this many tokens of it.
WINDOW = 15
#: A number's label is a content word at most this many tokens from it ("RTO of 4 hours").
LABEL_REACH = 3

NO_REFERENCE = "no reference answer"
NO_CLAIM = (
    "no checkable claim in the reference (no number, date, yes/no or word that the question "
    "does not already contain)"
)

_PARENS = re.compile(r"\([^()]*\)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")
_LEAD = re.compile(r"^\W*(?:yes|no)\b\W*", re.IGNORECASE)
_SUBORDINATE = re.compile(
    r";|,?\s+\b(?:because|so that|except|unless|otherwise|whereas|although|though)\b"
    r"|,\s*(?:but|who|which|whose|where|with)\b|\s[-\u2013\u2014]\s",
    re.IGNORECASE,
)
# "..., and how early must flights be booked?": a question that asks two things.
_COMPOUND = re.compile(
    r"\b(?:and|or)\s+(?:how|what|when|where|which|who|whom|whose|why|at what|in which|"
    r"for how|by whom|to whom|from which)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r",(?!\s*(?:and|or|plus|to|then)\b)|:\s")
_YEAR = re.compile(r"(?:19|20)\d\d")


@dataclass(frozen=True)
class Fact:
    """One clause of the reference: its numbers, dates and content words."""

    numbers: tuple[Quantity, ...]
    dates: tuple[str, ...]
    words: frozenset[str]
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReferenceClaims:
    """What an answer must state, and a context hold, to match a reference answer.

    Attributes
    ----------
    numbers : tuple of Quantity
        Required numbers with their units (from the clause that answers).
    dates : tuple of str
        Required date tokens (``"time1000"``, ``"dm1112"``, ``"monday"``).
    polarity : {"yes", "no"} or None
        The reference opens with Yes/No.
    key_words : frozenset of str
        Content words of the answering clause the question lacks (decide when there is no
        number, date or polarity).
    clause_words : frozenset of str
        Content words of the answering clauses and of the question (evidence without numbers).
    facts : tuple of Fact
        Every clause of the whole reference (for the per-source evidence check).
    reason : str or None
        Why nothing is checkable (then every verdict is None).
    part_words : frozenset of str
        Content words of the whole answer part and of the question (locate a number).
    negated : bool
        The answer part holds a negation cue ("... are *not* refunded").
    side_facts : tuple of frozenset of str
        The content words of each other clause of the answer parts that states a fact in
        words the question lacks ("The hardware lab is *in Kellsport*, a standard city, so
        the cap is 140 EUR"): evidence needs them too, not the answer.
    labels : tuple of str
        The label each required number belongs to ("An *RPO* of 15 minutes and an *RTO* of 4
        hours"), aligned with ``numbers``; all ``""`` unless two or more required numbers
        have distinct labels.
    """

    numbers: tuple[Quantity, ...] = ()
    dates: tuple[str, ...] = ()
    polarity: str | None = None
    key_words: frozenset[str] = frozenset()
    clause_words: frozenset[str] = frozenset()
    facts: tuple[Fact, ...] = ()
    question_words: frozenset[str] = field(default_factory=frozenset)
    reason: str | None = None
    part_words: frozenset[str] = frozenset()
    negated: bool = False
    labels: tuple[str, ...] = ()
    side_facts: tuple[frozenset[str], ...] = ()

    @property
    def mode(self) -> str:
        """``"numbers"``, ``"polarity"``, ``"words"`` or ``"none"``: what decides."""
        if self.reason is not None:
            return "none"
        if self.numbers or self.dates:
            return "numbers"
        return "polarity" if self.polarity else "words"


def _answer_parts(reference: str, compound: bool) -> tuple[str | None, list[str]]:
    text = _PARENS.sub(" ", reference).strip()
    polarity = reference_polarity(text)
    if polarity:
        text = _LEAD.sub("", text, count=1)
    first = next((s for s in _SENTENCE.split(text) if s.strip()), "")
    pieces = first.split(";") if compound else [first]
    return polarity, [_SUBORDINATE.split(p, maxsplit=1)[0] for p in pieces if p.strip()]


def _clause_facts(
    text: str, asked_numbers: Collection[str], asked_dates: Collection[str]
) -> list[tuple[Fact, list[Token]]]:
    facts: list[tuple[Fact, list[Token]]] = []
    for clause in _CLAUSE.split(re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)):
        toks = tokens(clause)
        claims: list[tuple[int, Quantity | str]] = [
            (q.position, q) for q in quantities(toks) if q.number not in asked_numbers
        ]
        claims += [
            (i, t.text)
            for i, t in enumerate(toks)
            if t.kind == "date" and t.text not in asked_dates
        ]
        claims.sort(key=lambda c: c[0])
        numbers: list[Quantity] = []
        dates: list[str] = []
        for rank, (_, claim) in enumerate(claims):
            if isinstance(claim, Quantity):
                if rank and not claim.unit and _YEAR.fullmatch(claim.number):
                    continue  # a year that dates another claim ("8 days since 2025")
                numbers.append(claim)
            else:
                dates.append(claim)
        labels = tuple(_label(toks, n.position) for n in numbers)
        facts.append(
            (Fact(tuple(numbers), tuple(dates), frozenset(content_words(toks)), labels), toks)
        )
    return facts


def reference_claims(reference: str | None, question: str = "") -> ReferenceClaims:
    """Read the claims of a reference answer (rules in the module docstring).

    Examples
    --------
    >>> c = reference_claims("After a 30-day export period, the data is deleted within 60 "
    ...     "days, except invoices.", "How soon is the data deleted after the contract ends?")
    >>> [(q.number, q.unit) for q in c.numbers], c.mode
    ([('60', 'day')], 'numbers')
    >>> c = reference_claims("No. Telemetry is Confidential.", "May I paste telemetry?")
    >>> c.mode, c.polarity
    ('polarity', 'no')
    >>> sorted(reference_claims("Only the incident commander.", "Who approves?").key_words)
    ['commander', 'incident']
    >>> reference_claims("", "Who?").reason
    'no reference answer'
    """
    if not reference or not reference.strip():
        return ReferenceClaims(reason=NO_REFERENCE)
    qtoks = tokens(question)
    q_words = frozenset(content_words(qtoks))
    q_numbers = {t.text for t in qtoks if t.kind == "number"}
    q_dates = {t.text for t in qtoks if t.kind == "date"}
    polarity, parts = _answer_parts(reference, _COMPOUND.search(question) is not None)
    every = [
        fact
        for sentence in re.split(r"[;()]", reference)
        for fact, _ in _clause_facts(sentence, q_numbers, q_dates)
    ]
    numbers: list[Quantity] = []
    labels: list[str] = []
    side: list[frozenset[str]] = []
    dates: list[str] = []
    answering: list[Fact] = []
    worded: list[Fact] = []  # answering clauses without a number or date
    part_words: set[str] = set(q_words)
    for part in parts:
        clauses = [f for f, _ in _clause_facts(part, q_numbers, q_dates)]
        part_words.update(*(f.words for f in clauses))
        numeric = [f for f in clauses if f.numbers or f.dates]
        candidates = numeric or [f for f in clauses if f.words - q_words]
        if not candidates:
            continue
        best = max(candidates, key=lambda f: (len(f.words & q_words), -candidates.index(f)))
        # "RTO 30 minutes, RPO 5 minutes" for "What are the RTO and RPO?": every numeric
        # clause whose number is labelled by a word of the question answers it too
        asked = [
            f for f in numeric
            if f is not best and f.labels and f.labels[0] in q_words
            and f.labels[0] not in best.labels and best.labels and best.labels[0] in q_words
        ]  # fmt: skip
        side.extend(
            f.words for f in clauses
            if f is not best and f not in asked and not (f.numbers or f.dates)
            and len(f.words) >= 2 and f.words - q_words
        )  # fmt: skip
        for fact in (best, *asked):
            answering.append(fact)
            numbers.extend(fact.numbers)
            labels.extend(fact.labels)
            dates.extend(fact.dates)
        if not numeric:
            worded.append(best)
    if not answering and not polarity:
        return ReferenceClaims(facts=tuple(every), question_words=q_words, reason=NO_CLAIM)
    words = frozenset().union(*(f.words for f in answering))
    key = frozenset().union(*(f.words for f in worded)) - q_words
    return ReferenceClaims(
        tuple(numbers), tuple(dates), polarity, key, words | q_words, tuple(every), q_words,
        part_words=frozenset(part_words), negated=any(has_negation(p) for p in parts),
        labels=_bound_labels(labels), side_facts=tuple(side),
    )  # fmt: skip


def _label(toks: Sequence[Token], position: int, allowed: Collection[str] | None = None) -> str:
    """The content word a number belongs to: the nearest one before it (at most
    :data:`LABEL_REACH` tokens back, not across another number or date); in an answer, one
    of the reference's labels, before it or else right after its unit ("15 minutes RPO")."""
    back = range(position - 1, max(-1, position - 1 - LABEL_REACH), -1)
    ahead = range(position + 1, min(len(toks), position + 3))  # its unit, then the label
    for scan in (back, ahead) if allowed is not None else (back,):
        for j in scan:
            tok = toks[j]
            if tok.kind in ("number", "date") or (j and toks[j - 1].kind == "number"):
                break  # another number, or its unit: "8 days or 5 days" gives 5 no label
            if tok.kind == "word" and (allowed is None or tok.text in allowed):
                return tok.text
    return ""


def _bound_labels(labels: Sequence[str]) -> tuple[str, ...]:
    """Labels only bind when two or more required numbers carry distinct ones."""
    named = [label for label in labels if label]
    if len(named) < 2 or len(set(named)) < len(named):
        return ("",) * len(labels)
    return tuple(labels)


def _states_all(claims: ReferenceClaims, toks: Sequence[Token]) -> bool:
    """Every required number stated, each beside its own label when labels bind."""
    stated = quantities(toks)
    allowed = {label for label in claims.labels if label}
    for i, wanted in enumerate(claims.numbers):
        label = claims.labels[i] if i < len(claims.labels) else ""
        if not any(
            states_number(wanted, [s])
            and (not label or _label(toks, s.position, allowed) in ("", label))
            for s in stated
        ):
            return False
    return True


def _share(wanted: Collection[str], have: Collection[str]) -> float:
    return sum(w in have for w in wanted) / len(wanted) if wanted else 1.0


def answer_states(claims: ReferenceClaims, answer: str, question: str = "") -> bool | None:
    """Whether ``answer`` states the reference's claims (None when nothing is checkable).

    Examples
    --------
    >>> c = reference_claims("Up to 8 days since 2025.", "How many days may be carried over?")
    >>> answer_states(c, "You may carry over 8 days [1]."), answer_states(c, "Up to 5 days.")
    (True, False)
    >>> c = reference_claims("No.", "May telemetry be pasted into public AI assistants?")
    >>> answer_states(c, "Telemetry is Confidential and must never be pasted into public "
    ...     "AI assistants.", "May telemetry be pasted into public AI assistants?")
    True
    """
    if claims.reason is not None:
        return None
    toks = tokens(answer)
    if not _states_all(claims, toks):
        return False
    dates = {t.text for t in toks if t.kind == "date"}
    if not all(d in dates for d in claims.dates):
        return False
    said = answer_polarity(answer, question) if claims.polarity else None
    if said != claims.polarity and not _restates(claims, answer, set(content_words(toks))):
        return False
    if claims.key_words and not claims.polarity:
        return _share(claims.key_words, set(content_words(toks))) >= KEY_WORD_SHARE
    return True


def _restates(claims: ReferenceClaims, text: str, words: Collection[str]) -> bool:
    """``text`` restates the reference's own sentence instead of saying yes or no.

    "USB storage devices are blocked on all company laptops" answers "Can I use a USB stick?"
    as the reference "No. USB storage devices are blocked ..." does: every key word of the
    reference is there, with the same negation (none), and the text does not open with the
    opposite yes/no.
    """
    if not claims.key_words or reference_polarity(text) is not None:
        return False
    return all(w in words for w in claims.key_words) and has_negation(text) == claims.negated


def _about(toks: Sequence[Token], question_words: Collection[str]) -> bool:
    """The chunk holds :data:`CHUNK_WORD_SHARE` of the question's content words."""
    have = {t.text for t in toks if t.kind == "word"}
    return bool(question_words) and _share(question_words, have) >= CHUNK_WORD_SHARE


def _located(toks: Sequence[Token], position: int, words: Collection[str]) -> bool:
    """A content word of ``words`` within :data:`WINDOW` tokens of ``position``."""
    if not words:
        return True
    lo, hi = max(0, position - WINDOW), position + WINDOW + 1
    return any(t.kind == "word" and t.text in words for t in toks[lo:hi])


def _holds_number(toks: Sequence[Token], wanted: Quantity, words: Collection[str]) -> bool:
    near = set(words) - {wanted.unit}  # its unit is matched with it; it does not locate it
    return any(
        states_number(wanted, [q]) and _located(toks, q.position, near) for q in quantities(toks)
    )


def _holds_date(toks: Sequence[Token], date: str, words: Collection[str]) -> bool:
    return any(
        t.kind == "date" and t.text == date and _located(toks, i, words) for i, t in enumerate(toks)
    )


def _holds_fact(toks: Sequence[Token], fact: Fact, question_words: frozenset[str]) -> bool:
    words = fact.words | question_words
    if any(_holds_number(toks, n, words) for n in fact.numbers):
        return True
    if any(_holds_date(toks, d, words) for d in fact.dates):
        return True
    have = {t.text for t in toks if t.kind == "word"}
    return len(fact.words) >= 2 and _share(fact.words, have) >= CHUNK_WORD_SHARE


def context_holds(
    claims: ReferenceClaims,
    chunk_texts: Sequence[str],
    chunk_docs: Sequence[str] | None = None,
    sources: Sequence[str] = (),
    each_source: bool = False,
) -> bool | None:
    """Whether the context holds the reference's claims (None when nothing is checkable).

    The facts may stand in any chunk of any document.  ``chunk_docs`` are the document ids
    of the chunks, ``sources`` the question's gold documents: only with ``each_source`` (the
    golden field ``evidence_from_each_source``) must each of two or more sources also give a
    context chunk holding a fact of the reference.

    Examples
    --------
    >>> c = reference_claims("Within 4 hours, and files are kept for 6 years.",
    ...                      "How soon are accounts disabled, how long are files kept?")
    >>> context_holds(c, ["Accounts are disabled within 4 hours.", "Files: 6 years."])
    True
    >>> context_holds(c, ["Accounts are disabled within 4 hours.", "Files: 5 years."])
    False
    >>> both = ["Accounts are disabled within 4 hours. Files: 6 years."]
    >>> context_holds(c, both, ["security"], ["security", "retention"]), context_holds(
    ...     c, both, ["security"], ["security", "retention"], each_source=True)
    (True, False)
    """
    if claims.reason is not None:
        return None
    chunks = [tokens(t) for t in chunk_texts]
    words = claims.part_words
    asked = claims.question_words
    for wanted in claims.numbers:
        if not any(
            _holds_number(toks, wanted, words)
            or (_about(toks, asked) and states_number(wanted, quantities(toks)))
            for toks in chunks
        ):
            return False
    for date in claims.dates:
        if not any(
            _holds_date(toks, date, words)
            or (_about(toks, asked) and any(t.text == date for t in toks))
            for toks in chunks
        ):
            return False
    for fact in claims.side_facts:  # "the hardware lab is in Kellsport": a fact to find too
        new = fact - asked
        if not any(
            _share(new, have := {t.text for t in toks if t.kind == "word"}) >= CHUNK_WORD_SHARE
            and _share(fact, have) >= CHUNK_WORD_SHARE
            for toks in chunks
        ):
            return False
    worded = bool(claims.key_words) and not claims.polarity
    if claims.mode != "numbers" or worded:

        def holds(toks: list[Token], text: str) -> bool:
            have = {t.text for t in toks if t.kind == "word"}
            if claims.mode != "numbers" and _share(claims.clause_words, have) < CHUNK_WORD_SHARE:
                return False
            if worded and _share(claims.key_words, have) < KEY_WORD_SHARE:
                return False
            if claims.polarity != "no" or has_negation(text):
                return True
            return _restates(claims, text, have)

        if not any(holds(toks, text) for toks, text in zip(chunks, chunk_texts, strict=True)):
            return False
    gold = list(dict.fromkeys(sources))
    if not each_source or chunk_docs is None or len(gold) < 2:
        return True
    return all(
        any(
            doc == source and any(_holds_fact(toks, f, claims.question_words) for f in claims.facts)
            for toks, doc in zip(chunks, chunk_docs, strict=True)
        )
        for source in gold
    )
