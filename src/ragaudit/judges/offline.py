"""Offline judges: deterministic verdicts on an answer that need no model.

The verdicts are decided from the **reference answer** (:mod:`ragaudit.judges.reference`):
its numbers with their units and context words, its dates and times, its yes/no polarity
and its key words.  Faithfulness is the share of the answer's sentences a retrieved chunk
supports (:mod:`ragaudit.judges.faithfulness`).  Hand-written keywords are an optional extra:
``keyword_hit`` reports them, and they decide ``correct`` and ``evidence_in_context`` only
when the reference answer has no checkable claim; a missing keyword never overrules what the
reference decides.  :data:`OFFLINE_JUDGE_METHODS` names each method (written to a saved run's
``config.offline_judges``); docs/guide/judges.md says where each is known to fail.

Keywords are matched by :mod:`ragaudit.judges.keywords` (shared with the heuristic labeller),
so that formatting never decides a match and no token matches inside another: case, width,
punctuation and thousands separators are ignored (``"1,200"`` = ``"1200"``); numbers are
whole numbers (``"3"`` never matches ``"13"``, ``"3.5"`` or ``"Q3"``; ``"5%"`` never a bare
``"5"``); ``"24 hours"``, ``"24hours"`` and ``"24-hours"`` match each other; plurals are
folded; citation markers such as ``[2]`` are removed first.

A verdict is None only when it does not apply (``evidence_in_context`` of an unanswerable
question) or when nothing can decide it; the row's ``reasons`` map then says why.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit._text import STOPWORDS, stem, tokenize
from ragaudit.judges.claims import quantities, tokens
from ragaudit.judges.faithfulness import faithfulness
from ragaudit.judges.keywords import keyword_tokens, match_tokens, unstemmed_tokens
from ragaudit.judges.reference import answer_states, context_holds, reference_claims
from ragaudit.judges.refusals import is_abstention

__all__ = [
    "NO_SENTENCE",
    "OFFLINE_JUDGE_METHODS",
    "REFUSING_REFERENCE",
    "Quantity",
    "all_keywords",
    "answer_chunk_in_context",
    "evidence_in_context",
    "is_abstention",
    "judge_offline",
    "keyword_hit",
    "match_tokens",
    "numbers_in",
    "numeric_match",
    "quantities_in",
]

#: What each offline verdict is decided by; written to a saved run's ``config.offline_judges``
#: and explained in docs/guide/judges.md.  Bump the version when a rule changes.
OFFLINE_JUDGE_METHODS: dict[str, str] = {
    "correct": "reference-claims/1",
    "evidence_in_context": "reference-claims-in-context/2",
    "faithfulness": "sentence-support/1",
    "keyword_hit": "keywords/1",
    "abstained": "refusal-phrases/2",
}

#: Why faithfulness is None: the answer has no sentence with a content word, number or date.
NO_SENTENCE = "no checkable sentence in the answer"
#: Why evidence is None for a question whose reference answer itself declines to answer.
REFUSING_REFERENCE = "the reference answer declines to answer: no evidence to look for"

_CITATION = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]")
_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17",
    "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40",
    "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
    "hundred": "100", "thousand": "1000",
}  # fmt: skip
_TENS = {20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0}


def keyword_hit(answer: str, keywords: Sequence[str]) -> float | None:
    """Fraction of ``keywords`` present in ``answer`` (matching rules in the module docstring).

    .. math:: \\mathrm{keyword\\_hit}
              = \\frac{|\\{k \\in K : k \\text{ occurs in the answer}\\}|}{|K|}

    Returns None when there are no keywords.

    Examples
    --------
    >>> keyword_hit("Claims up to 1,200 EUR within 24hours [1].", ["1200", "24 hours", "receipt"])
    0.6666666666666666
    >>> keyword_hit("anything", []) is None
    True
    """
    kws = [k for k in keywords if keyword_tokens(k)]
    if not kws:
        return None
    words = keyword_tokens(answer)
    return sum(match_tokens(keyword_tokens(k), words) for k in kws) / len(kws)


def all_keywords(answer: str, keywords: Sequence[str]) -> bool | None:
    """Whether every keyword is present (the offline *correctness* verdict); None without keywords.

    >>> all_keywords("Twenty days, carried over until March.", ["twenty days", "March"])
    True
    >>> all_keywords("Twenty days.", ["twenty days", "March"])
    False
    """
    hit = keyword_hit(answer, keywords)
    return None if hit is None else hit == 1.0


def numbers_in(text: str) -> set[float]:
    """The numbers stated in ``text``, as values; small number words count ("ten" -> 10).

    >>> sorted(numbers_in("Ten days, 1,200 EUR, 1.50 per km [3]"))
    [1.5, 10.0, 1200.0]
    >>> sorted(numbers_in("twenty-five days"))
    [25.0]
    """
    values: set[float] = set()
    words = tokenize(_CITATION.sub(" ", text))
    tokens = [_NUMBER_WORDS.get(t, t) for t in words]
    skip = False
    for i, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        if not token[0].isdigit():
            continue
        value = float(token)
        # "twenty-five" / "twenty five" -> 25 (only when both parts were spelled out)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        spelled = i + 1 < len(words) and words[i] in _NUMBER_WORDS and words[i + 1] in _NUMBER_WORDS
        if spelled and value in _TENS and nxt.isdigit() and 1 <= int(nxt) <= 9:
            value += int(nxt)
            skip = True
        values.add(value)
    return values


@dataclass(frozen=True)
class Quantity:
    """A number stated in a text, with what stands next to it.

    Attributes
    ----------
    value : float
        The number (``"1,200"`` -> 1200.0, ``"twenty-five"`` -> 25.0).
    percent : bool
        Stated as a percentage (``"5%"``, ``"5 percent"``).
    unit : str
        The word right after the number, stemmed (``"days"`` -> ``"day"``); ``""`` when the
        next token is not a word or is a stopword (``"in 2014, in ..."``).
    near : frozenset of str
        The words next to the number: the one before it and up to two after it (stopwords
        skipped), stemmed.  An answer may put the unit first (``"EUR 210"``) or qualify it
        (``"25 working days"``).
    """

    value: float
    percent: bool
    unit: str
    near: frozenset[str]


def quantities_in(text: str) -> list[Quantity]:
    """The numbers stated in ``text`` with their units, in order (rules in :class:`Quantity`).

    >>> [(q.value, q.percent, q.unit) for q in quantities_in("25 days, 5 % and EUR 1,200 [3]")]
    [(25.0, False, 'day'), (5.0, True, ''), (1200.0, False, '')]
    >>> sorted(quantities_in("EUR 1,200")[0].near)
    ['eur']
    """
    tokens: list[tuple[str, float | None, bool]] = []  # (word, number, percent)
    spelled: list[bool] = []
    for raw in unstemmed_tokens(text):
        if raw[0].isdigit():
            tokens.append(("", float(raw.rstrip("%")), raw.endswith("%")))
            spelled.append(False)
        elif raw in _NUMBER_WORDS:
            value = float(_NUMBER_WORDS[raw])
            if spelled and spelled[-1] and tokens[-1][1] in _TENS and 1 <= value <= 9:
                tokens[-1] = ("", (tokens[-1][1] or 0.0) + value, False)  # twenty-five
                spelled[-1] = False
                continue
            tokens.append(("", value, False))
            spelled.append(True)
        elif raw in ("percent", "pct") and tokens and tokens[-1][1] is not None:
            tokens[-1] = ("", tokens[-1][1], True)  # "five percent"
            spelled[-1] = False
        else:
            tokens.append(("" if raw in STOPWORDS else stem(raw), None, False))
            spelled.append(False)
    found: list[Quantity] = []
    for i, (_, number, percent) in enumerate(tokens):
        if number is None:
            continue
        after: list[str] = []
        for word, next_number, _ in tokens[i + 1 : i + 4]:
            if next_number is not None or len(after) == 2:
                break
            if word:
                after.append(word)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ("", 0.0, False)
        unit = nxt[0] if nxt[1] is None and not percent else ""
        before = tokens[i - 1][0] if i and tokens[i - 1][1] is None else ""
        near = frozenset(w for w in (before, *after) if w)
        found.append(Quantity(number, percent, unit, near))
    return found


def numeric_match(answer: str, reference_answer: str) -> bool | None:
    """Whether ``answer`` states every number of the reference answer, with its unit.

    A number of the reference matches a number of the answer with the same value and the
    same kind (a percentage only matches a percentage), whose neighbouring words include the
    reference's unit (:func:`quantities_in`): ``"25 days"`` is not stated by ``"25 %"`` nor by
    ``"room 25"``.  A number standing alone in the answer (``"You get 25."``: no word next to
    it but stopwords) is taken as stated; a reference number without a unit (``"founded in
    2014"``) only needs its value.  None when the reference states no number.

    >>> numeric_match("You get 25 days [1].", "Employees receive twenty-five (25) days.")
    True
    >>> numeric_match("You get 20 days.", "25 days"), numeric_match("About 25 %.", "25 days")
    (False, False)
    >>> numeric_match("Yes.", "Ask your manager.") is None
    True
    """
    wanted = quantities_in(reference_answer)
    if not wanted:
        return None
    stated = quantities_in(answer)
    return all(
        any(
            s.value == w.value
            and s.percent == w.percent
            and (not w.unit or not s.near or w.unit in s.near)
            for s in stated
        )
        for w in wanted
    )


def evidence_in_context(
    context_texts: Sequence[str], keywords: Sequence[str], reference_answer: str = ""
) -> bool | None:
    """Whether every keyword occurs in the context given to the generator (the fallback).

    Each keyword may occur in a different chunk.  A short bare number (``"24"``) is matched
    as a whole number, in its context: when the reference answer states it with a unit
    (``"24 hours"``), the context must state it with that unit.  A keyword of stopwords only
    (``"No"``) cannot locate anything and is left out; None when no keyword is left.

    >>> evidence_in_context(["Laptops last 3 years.", "Ask IT."], ["3 years", "IT"])
    True
    >>> evidence_in_context(["Refunds within 3 days."], ["3"]), evidence_in_context(
    ...     ["Refunds within 3 days."], ["3"], "Laptops last 3 years.")
    (True, False)
    >>> evidence_in_context(["No."], ["No"]) is None
    True
    """
    units = {q.number: q.unit for q in quantities(tokens(reference_answer)) if q.unit}
    wanted: list[list[str]] = []
    for keyword in keywords:
        raw = unstemmed_tokens(keyword)
        if not raw or all(t in STOPWORDS for t in raw):
            continue
        toks = keyword_tokens(keyword)
        if len(toks) == 1 and toks[0][0].isdigit():
            number = f"{float(toks[0].rstrip('%')):g}" + ("%" if toks[0].endswith("%") else "")
            unit = units.get(number)
            if unit:
                toks = [toks[0], unit]
        wanted.append(toks)
    if not wanted:
        return None
    chunk_words = [keyword_tokens(t) for t in context_texts]
    return all(any(match_tokens(k, w) for w in chunk_words) for k in wanted)


def answer_chunk_in_context(
    context_ids: Collection[str], chunk_grades: Mapping[str, int] | None, min_grade: int = 1
) -> bool | None:
    """Whether a chunk labelled relevant (grade >= ``min_grade``) was in the context.

    None when the question has no chunk labels.

    >>> answer_chunk_in_context(["c1", "c4"], {"c4": 2, "c9": 1})
    True
    >>> answer_chunk_in_context(["c1"], {"c4": 2}), answer_chunk_in_context(["c1"], None)
    (False, None)
    """
    if not chunk_grades:
        return None
    return any(chunk_grades.get(cid, 0) >= min_grade for cid in context_ids)


def judge_offline(
    *,
    answer: str,
    answerable: bool,
    reference_answer: str,
    keywords: Sequence[str],
    context_texts: Sequence[str],
    context_ids: Collection[str] = (),
    chunk_grades: Mapping[str, int] | None = None,
    question: str = "",
    context_docs: Sequence[str] | None = None,
    sources: Sequence[str] = (),
    evidence_from_each_source: bool = False,
) -> dict[str, Any]:
    """All offline verdicts for one answered question.

    * ``correct``: for an unanswerable question, or one whose reference answer itself declines
      (``"The handbook does not say."``), that the answer abstains; for an answerable
      one, that it does not abstain and states the reference answer's claims
      (:func:`ragaudit.judges.reference.answer_states`).  Only when the reference has no
      checkable claim do the keywords decide (all of them in the answer).
    * ``evidence_in_context``: the context holds every claim of the reference, in any chunk
      of any document (:func:`ragaudit.judges.reference.context_holds`); with
      ``evidence_from_each_source`` also a fact from each of the ``sources``.  The keywords
      decide only when the reference cannot (:func:`evidence_in_context`).  None for
      unanswerable questions.
    * ``faithfulness``: the share of the answer's sentences a context chunk supports
      (:func:`ragaudit.judges.faithfulness.faithfulness`).
    * ``keyword_hit``, ``numeric_match``, ``answer_chunk_in_context``: reported beside them.
    * ``reasons``: present only when an applicable verdict is None, verdict -> the reason
      (``"no checkable claim in the reference ..."``), for the funnel's "unjudged" row.

    The methods are named in :data:`OFFLINE_JUDGE_METHODS` (a saved run's
    ``config.offline_judges``).

    Examples
    --------
    >>> verdicts = judge_offline(answer="Within 30 days [1].", answerable=True,
    ...     reference_answer="Refunds within 30 days.", keywords=[],
    ...     context_texts=["Refunds are paid within 30 days."], question="When are refunds paid?")
    >>> verdicts["correct"], verdicts["evidence_in_context"], verdicts["faithfulness"]
    (True, True, 1.0)
    >>> from ragaudit._text import REFUSAL
    >>> judge_offline(answer=REFUSAL, answerable=False, reference_answer="", keywords=[],
    ...     context_texts=[])["correct"]
    True
    >>> judge_offline(answer="Yes.", answerable=True, reference_answer="Ask HR.", keywords=[],
    ...     context_texts=["HR"], question="Whom do I ask, HR?")["reasons"]["correct"][:35]
    'no checkable claim in the reference'
    """
    abstained = is_abstention(answer)
    faith = faithfulness(answer, context_texts, abstained=abstained)
    undecided: dict[str, str] = {}
    if faith is None:
        undecided["faithfulness"] = NO_SENTENCE
    if not answerable:
        verdicts: dict[str, Any] = {
            "abstained": abstained,
            "keyword_hit": None,
            "correct": abstained,
            "numeric_match": None,
            "evidence_in_context": None,
            "answer_chunk_in_context": None,
            "faithfulness": faith,
        }
        return {**verdicts, "reasons": undecided} if undecided else verdicts
    if reference_answer and is_abstention(reference_answer):
        # The reference itself declines ("The handbook does not say."): the golden set calls
        # the question answerable, but the right answer is to abstain, and there is no
        # evidence to look for.
        verdicts = {
            "abstained": abstained,
            "keyword_hit": keyword_hit(answer, keywords),
            "correct": abstained,
            "numeric_match": None,
            "evidence_in_context": None,
            "answer_chunk_in_context": answer_chunk_in_context(context_ids, chunk_grades),
            "faithfulness": faith,
        }
        return {**verdicts, "reasons": {**undecided, "evidence_in_context": REFUSING_REFERENCE}}
    claims = reference_claims(reference_answer, question)
    correct = False if abstained else answer_states(claims, answer, question)
    if correct is None:
        correct = all_keywords(answer, keywords)
        if correct is None:
            undecided["correct"] = str(claims.reason)
    evidence = context_holds(
        claims, context_texts, context_docs, sources, each_source=evidence_from_each_source
    )
    if evidence is None:
        evidence = evidence_in_context(context_texts, keywords, reference_answer or "")
        if evidence is None:
            undecided["evidence_in_context"] = str(claims.reason)
    verdicts = {
        "abstained": abstained,
        "keyword_hit": keyword_hit(answer, keywords),
        "correct": correct,
        "numeric_match": numeric_match(answer, reference_answer or ""),
        "evidence_in_context": evidence,
        "answer_chunk_in_context": answer_chunk_in_context(context_ids, chunk_grades),
        "faithfulness": faith,
    }
    return {**verdicts, "reasons": undecided} if undecided else verdicts
