"""The abstention detector: whether an answer declines to answer.

An answer abstains when it says that the documents (context, sources, handbook, passages...)
do not hold the answer, or that the speaker does not know or cannot find it.  A substantive
negative answer does not abstain: "No, travel insurance is not refunded", "The travel policy
does not cover contractors", "Smoking is not allowed".  What tells the two apart is the
*subject* of the negation: the documents or the speaker (``"the documents don't say"``, ``"I
couldn't find"``), a deictic standing for the question (``"This is not mentioned"``), or a
statement that the answer or the information is missing (``"no information about"``, ``"the
answer is not in the context"``), never a thing the question is about.

Contractions are expanded first (``don't`` -> ``do not``, ``isn't`` -> ``is not``, ``I'm`` ->
``I am``), typographic apostrophes and dashes folded, case ignored.  The patterns below are
tested on the fixture ``tests/judges/data/refusals.yaml`` (108 refusals, 106 non-refusals,
written by hand after reading this detector's earlier phrase list: a tuning set; see
docs/guide/judges.md for what it misses).
"""

from __future__ import annotations

import re

from ragaudit._text import REFUSAL

__all__ = ["is_abstention"]

_CONTRACTIONS = (
    (r"\bcan't\b", "cannot"), (r"\bwon't\b", "will not"), (r"\b(\w+)n't\b", r"\1 not"),
    (r"\bi'm\b", "i am"), (r"\b(it|that|there|what)'s\b", r"\1 is"), (r"\bi've\b", "i have"),
    # typed without the apostrophe ("I dont know", "the documents dont say")
    (r"\bcant\b", "cannot"),
    (r"\b(do|does|did|could|would|should|is|are|was|were|has|have|had)nt\b", r"\1 not"),
)  # fmt: skip
#: What holds the answer: the documents and their synonyms.
_SOURCE = (
    r"(?:documents?|docs|context|sources?|handbook|passages?|excerpts?|text|material|snippets?"
    r"|records?|files?|information provided|provided information|knowledge base)"
)
_SAY = (
    r"(?:say|state|specify|mention|cover|contain|include|provide|address|give|tell|answer"
    r"|list|describe|indicate|discuss|show|explain|clarify|have|disclose|name|report)"
)
_SAID = (
    r"(?:mentioned|specified|stated|covered|addressed|provided|available|given|listed"
    r"|documented|described|discussed|indicated|found|explained|known|clear)"
)
_DEICTIC = r"(?:this|that|it|which|the (?:answer|amount|figure|number|detail|date|information))"
#: Kinds of document a model names as its source ("the runbook", "the price list", "the SLA").
#: They also hold facts ("the policy does not cover contractors"), so with them only a verb
#: of reporting says that the document is silent.
_DOC_KIND = (
    r"(?:policy|policies|runbook|guide|manual|overview|faq|sla|price list|handbook|wiki"
    r"|documentation|page|section|notes|agreement|specification|spec)"
)
_REPORT = r"(?:say|state|specify|mention|give|list|describe|report|name|disclose|indicate)"
#: The verbs of _REPORT that only speak: after them any object is what the document is silent on.
_SPEAK = r"(?:say|state|specify|mention|describe|report|disclose|indicate)"
_DESCRIBED = r"(?:mentioned|specified|stated|disclosed|documented|described|addressed|discussed)"
_PATTERNS = [
    # the documents do not say
    rf"\b{_SOURCE}(?: \w+){{0,2}} (?:do|does|did) not (?:\w+ )?{_SAY}\b",
    rf"\b{_SOURCE}(?: \w+){{0,2}} (?:is|are) (?:silent|unclear)\b",
    rf"\b(?:none of|neither of|neither|nothing in) (?:the |these |those )?(?:\w+ ){{0,2}}"
    rf"{_SOURCE}\b",
    rf"\b{_SOURCE}(?: \w+){{0,6}} never (?:{_SAY}|name|disclose)s?\b",
    rf"\b(?:{_SOURCE}|it) (?:\w+ )?(?:give|say|state|list|mention|name|provide)s? no\b",
    # a named kind of document that is silent: "the manual does not mention bike leasing".
    # give, name and list also grant or designate ("the policy does not give contractors paid
    # leave", "the SLA does not name weekends as business days": facts), so after them the
    # object must be what was asked: an article, a wh-word, or nothing ("doesn't give a time")
    rf"\b{_DOC_KIND}(?: \w+){{0,1}} (?:do|does|did) not {_SPEAK}\b",
    rf"\b{_DOC_KIND}(?: \w+){{0,1}} (?:do|does|did) not (?:give|name|list)"
    r"(?:$|[^\w\s]| (?:a|an|any|the|this|that|it|one|how|what|when|where|which|who|whom|whose"
    r"|whether|if|anything|such|specific|exact|precise)\b)",
    # "that is not something the documents address", "pricing is not part of these documents"
    rf"\bnot (?:something|anything) (?:that )?(?:the |these |any )?(?:\w+ )?{_SOURCE}\b",
    rf"\bnot (?:a )?part of (?:the |these |those |any )?(?:\w+ )?{_SOURCE}\b",
    # "nothing about stock options appears in the provided context"
    rf"^(?:nothing|no \w+)(?: \w+){{0,6}} (?:appears?|is|are|shows? up|exists?) (?:anywhere )?in "
    rf"(?:the |these |any |my )?(?:\w+ )?{_SOURCE}\b",
    # the subject named: "No parking allowance is mentioned", "The bonus is not mentioned"
    rf"^no \w+(?: \w+){{0,3}} (?:is|are|was|were) (?:{_DESCRIBED}|listed|given|provided)\b",
    rf"^(?:the )?\w+(?: \w+){{0,3}} (?:is|are|was|were) not {_DESCRIBED}\b",
    rf"^(?:it|this|that) is not in (?:the |these |my |any |your )?(?:\w+ )?{_SOURCE}\b",
    # "there is no pension percentage anywhere in the provided material"
    rf"\bthere (?:is|are) no [\w']+(?: [\w']+){{0,4}} (?:anywhere )?in (?:the |these |any |my )?"
    rf"(?:\w+ )?{_SOURCE}\b",
    # "it doesn't describe a parking allowance": the document just named, silent
    rf"^(?:it|they) (?:do|does|did) not {_REPORT}\b",
    # "the document describes what X does, (but) not what it is written in"
    rf"\b(?:{_SOURCE}|{_DOC_KIND}) (?:{_REPORT}|explain)s? .{{0,160}}(?:,|\bbut) not "
    r"(?:the |what |which |how |who |when |where |whether |its |their )",
    # it is not mentioned (in the documents)
    rf"\bnot {_SAID}(?: anywhere)? (?:in|by|within|from|among) (?:the |these |any )?(?:\w+ ){{0,2}}"
    rf"{_SOURCE}\b",
    rf"^{_DEICTIC}(?: \w+)? (?:is|was|are|were) not (?:mentioned|specified|stated|covered"
    r"|addressed|documented)\b",
    rf"^{_DEICTIC}(?: \w+)? (?:is|was|are|were) not {_SAID}$",
    r"^(?:not (?:mentioned|specified|stated|covered|addressed|available|known|enough\b)"
    r"|unknown\b|n/a\b)",
    # no information about it
    r"\bno (?:relevant |specific |further |such |clear )?(?:information|mention|details?|indication"
    r"|data|answer)\b",
    r"\b(?:answer|information|info|details?) (?:is|are|was|were) not (?:in|available|provided"
    r"|given|included|present|found|contained|there)\b",
    r"\b(?:not|insufficient|not sufficient) (?:enough )?information\b|\bnot enough (?:data|detail)",
    r"\binsufficient to (?:answer|say|tell|determine)\b|\bunclear (?:from|in|based)\b",
    r"\b(?:cannot|can not|could not) be (?:determined|found|answered|established|inferred"
    r"|confirmed|said|told)\b",
    # I do not know, I could not find
    r"\bi (?:really |simply |just |honestly )?(?:do not|did not) know\b",
    r"\bi (?:could not|cannot|can not|was unable to|am unable to|was not able to|am not able to"
    r"|did not|do not|have not been able to) (?:\w+ )?(?:find|locate|answer|determine|tell|say"
    r"|see|identify|confirm|verify)\b",
    r"\bi (?:do not|did not) have (?:enough |any |that |the |this |sufficient |relevant |such )*"
    r"(?:information|details?|data|answer|knowledge|info)\b",
    r"\bi have no (?:information|details?|data|answer|knowledge|idea)\b",
    r"\bi am not (?:sure|certain)\b|\bno idea\b",
    r"\b(?:cannot|can't|can not|unable to|could not) (?:answer|find|determine|tell)\b",
]
_ABSTAIN = re.compile("|".join(f"(?:{p})" for p in _PATTERNS))
#: A figure worked out in place of the missing one ("it would have been roughly 6.7 million"):
#: the answer gives a value, so it is judged as an answer, not as a refusal.
_ESTIMATE = re.compile(
    r"\b(?:would (?:have )?(?:be|been|come to|amount to)|roughly|approximately|an estimated"
    r"|estimated? (?:at|to be)|works? out (?:at|to))\b[^.;!?]{0,40}\d"
)
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\s+-\s+|\n+")


def _normal(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u2014", " - ")
    text = " ".join(text.replace("\u2013", " - ").lower().split())
    for pattern, repl in _CONTRACTIONS:
        text = re.sub(pattern, repl, text)
    return text


def is_abstention(answer: str) -> bool:
    """Whether ``answer`` declines to answer (rules in the module docstring).

    True for the fixed refusal sentence (:data:`ragaudit._text.REFUSAL`), for an empty answer,
    and when a sentence of the answer says the documents do not hold the answer or the speaker
    does not know.  A negative fact is no refusal.

    Examples
    --------
    >>> is_abstention("The documents don't say."), is_abstention("Not mentioned.")
    (True, True)
    >>> is_abstention("I couldn't find this; there is no information about parking.")
    True
    >>> is_abstention("No, travel insurance is not refunded.")
    False
    >>> is_abstention("The travel policy does not cover contractors [2].")
    False
    >>> is_abstention("")
    True
    """
    text = _normal(answer)
    if not text or text == _normal(REFUSAL):
        return True
    if _ESTIMATE.search(text):
        return False  # "not stated, but it would have been roughly 6.7 million": an answer
    return any(_ABSTAIN.search(s.strip(" .!?;:,")) for s in _SENTENCES.split(text))
