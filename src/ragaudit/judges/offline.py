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

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ragaudit._text import STOPWORDS
from ragaudit.judges.claims import quantities, states_number, tokens
from ragaudit.judges.doubts import answer_verdict
from ragaudit.judges.faithfulness import faithfulness
from ragaudit.judges.keywords import keyword_tokens, match_tokens, unstemmed_tokens
from ragaudit.judges.reference import context_holds, reference_claims
from ragaudit.judges.refusals import is_abstention

__all__ = [
    "NO_SENTENCE",
    "OFFLINE_JUDGE_METHODS",
    "REFUSING_REFERENCE",
    "all_keywords",
    "answer_chunk_in_context",
    "evidence_in_context",
    "is_abstention",
    "judge_offline",
    "keyword_hit",
    "match_tokens",
    "numeric_match",
]

#: What each offline verdict is decided by; written to a saved run's ``config.offline_judges``
#: and explained in docs/guide/judges.md.  Bump the version when a rule changes.
OFFLINE_JUDGE_METHODS: dict[str, str] = {
    "correct": "reference-claims/5",
    "evidence_in_context": "reference-claims-in-context/3",
    "faithfulness": "sentence-support/1",
    "keyword_hit": "keywords/1",
    "abstained": "refusal-phrases/5",
}

#: Why faithfulness is None: the answer has no sentence with a content word, number or date.
NO_SENTENCE = "no checkable sentence in the answer"
#: Why evidence is None for a question whose reference answer itself declines to answer.
REFUSING_REFERENCE = "the reference answer declines to answer: no evidence to look for"


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


def numeric_match(answer: str, reference_answer: str) -> bool | None:
    """Whether ``answer`` states every number of the reference answer, with its unit.

    Every number of the reference (not only those of the clause that answers) must be
    stated as :func:`ragaudit.judges.claims.states_number` reads it: same value and kind (a
    percentage only matches a percentage), its unit among the words next to it or the same
    amount in another unit of its kind, never another currency or rate period.  A number
    standing alone in the answer (``"You get 25."``) is taken as stated.  None when the
    reference states no number.

    >>> numeric_match("You get 25 days [1].", "Employees receive twenty-five (25) days.")
    True
    >>> numeric_match("You get 20 days.", "25 days"), numeric_match("About 25 %.", "25 days")
    (False, False)
    >>> numeric_match("Yes.", "Ask your manager.") is None
    True
    """
    wanted = quantities(tokens(reference_answer))
    if not wanted:
        return None
    stated = quantities(tokens(answer))
    return all(states_number(w, stated) for w in wanted)


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
    correct, doubt = (
        (False, None)
        if abstained
        else answer_verdict(claims, reference_answer or "", answer, question, context_texts)
    )
    if correct is None and claims.reason is not None:
        correct = all_keywords(answer, keywords)
    if correct is None:
        undecided["correct"] = str(doubt or claims.reason)
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
