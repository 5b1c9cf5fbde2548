"""Added clauses that say the opposite of the reference while keeping all its values.

An answer can state every number and key word of the reference and still add a clause that
contradicts it.  Three such reversals are read here, each from the reference's own wording
(no phrase of a particular corpus):

1. **Inclusion flipped** (:func:`inclusion_flip`).  The reference sets a term apart with
   ``plus``, ``in addition to``, ``on top of``, ``except``, ``excluding``, ``apart from`` or
   ``other than`` ("27 days, plus public holidays"; "deleted, except invoices kept by law"),
   and the answer puts the same term *inside* with ``included``, ``including``, ``counted
   in/within``, ``part of`` ("public holidays included"; "invoices included"), without the
   reference's word.  The answer is **wrong**.
2. **Opposite word in the same slot** (:func:`opposite_slot`).  The reference has a word of
   an antonym pair (``start``/``end``, ``full``/``half``, ``first``/``last``, ``earliest``/
   ``latest``, ``minimum``/``maximum``, ``oldest``/``newest``, ...) before a content word,
   and the answer has its opposite before the same content word and never the reference's
   ("half pay" for "full pay"; "the start of their last working day" for "the end of ...").
   The answer is **wrong**.
3. **A sameness claim** (:func:`sameness`).  The answer says its value is ``the same as``,
   ``identical to`` or ``equal to`` something the reference names ("the same as the R3").
   The reference rules check values, not comparisons: **undecided**.
4. **A value moved to another label** (:func:`relabelled`).  A number of the answer stands
   right after a word (its label: ``every``, ``extension``, ``RPO``) and with a unit that
   the reference also pairs with a *different* number, and neither text pairs that label
   and unit with the other's number ("once every four years" where the reference says
   "once every five years" and "four years of service"; "extension 4400" for "extension
   4411").  The answer has stated the reference's values but put one where another belongs:
   **wrong**.
5. **Alternatives narrowed** (:func:`narrowed`).  The reference gives alternative conditions
   (``, or when``, ``, or if``) and the answer says ``only when``/``only if``: it may deny the
   other alternative, which no key word shows: **undecided**.

Examples
--------
>>> inclusion_flip("27 days a year, plus public holidays.", "27 days, public holidays included.")
'the answer counts "public holidays" in, the reference sets it apart (plus)'
>>> opposite_slot("6 weeks on full pay.", "6 weeks at half pay.")
'the answer says "half pay" where the reference says "full pay"'
>>> sameness("3 years (the R3 has 5 years).", "3 years, the same as the R3.")[:42]
'the answer compares its value with "the r3'
"""

from __future__ import annotations

import re

from ragaudit.judges.claims import content_words, quantities, tokens

__all__ = ["inclusion_flip", "narrowed", "opposite_slot", "relabelled", "reversal", "sameness"]

_APART = re.compile(
    r"\b(plus|in addition to|on top of|except(?: for)?|excluding|apart from|other than"
    r"|not including)\s+((?:the |any |all )?[a-z][a-z\-]*(?: [a-z][a-z\-]*){0,2})"
)
_INSIDE = re.compile(
    r"\b(?:included|including|includes|include|incl|counted (?:in|within|towards?|as part of)"
    r"|count (?:in|within|towards?)|part of|within those|inside)\b"
)
_STOP = frozenset({
    "the", "a", "an", "any", "all", "of", "by", "to", "in", "on", "for", "and", "or", "is",
    "are", "be", "that", "which", "who", "kept", "law"
})  # fmt: skip
_WORD = re.compile(r"[a-z][a-z\-]*")
_CLAUSE_ENDS = ",;:()\n."


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower())]


def inclusion_flip(reference: str, answer: str) -> str | None:
    """Rule 1 of the module docstring: the reason, or None.

    >>> inclusion_flip("Deleted within 60 days, except invoices kept by law.",
    ...                "Deleted within 60 days, except invoices.") is None
    True
    """
    ref, ans = reference.lower(), answer.lower()
    for match in _APART.finditer(ref):
        marker = match[1].split()[0]
        if re.search(rf"\b{marker}\b", ans):
            continue  # the answer keeps the reference's word: no flip
        # its content words, numbers left out ("plus two magazines": magazines)
        term = [w for w in content_words(tokens(match[2])) if w not in _STOP][:2]
        if not term:
            continue
        for inside in _INSIDE.finditer(ans):
            # the clause of the marker: "(loans include renewals), and two magazines" is no
            # inclusion of the magazines
            start = max(ans.rfind(c, 0, inside.start()) for c in _CLAUSE_ENDS) + 1
            ends = [i for i in (ans.find(c, inside.end()) for c in _CLAUSE_ENDS) if i >= 0]
            window = set(content_words(tokens(ans[start : min(ends, default=len(ans))])))
            if all(w in window for w in term):
                return (
                    f'the answer counts "{" ".join(match[2].split()[-2:])}" in, the '
                    f"reference sets it apart ({marker})"
                )
    return None


_PAIRS = (
    ("start", "end"), ("beginning", "end"), ("full", "half"), ("full", "part"),
    ("first", "last"), ("earliest", "latest"), ("minimum", "maximum"), ("oldest", "newest"),
    ("highest", "lowest"), ("increase", "decrease"), ("inclusive", "exclusive"),
    ("paid", "unpaid"), ("upper", "lower"), ("inbound", "outbound"),
)  # fmt: skip
_OPPOSITES: dict[str, set[str]] = {}
for _a, _b in _PAIRS:
    _OPPOSITES.setdefault(_a, set()).add(_b)
    _OPPOSITES.setdefault(_b, set()).add(_a)
_SLOT_STOP = frozenset(["of", "the", "their", "his", "her", "its", "your", "our", "a", "an"])


def _slots(text: str) -> set[tuple[str, str]]:
    """(antonym-pair word, the next content word within three words) pairs of ``text``."""
    words = _WORD.findall(text.lower())
    out = set()
    for i, word in enumerate(words):
        if word in _OPPOSITES:
            after = [w for w in words[i + 1 : i + 4] if w not in _SLOT_STOP]
            if after:
                out.add((word, after[0]))
    return out


def opposite_slot(reference: str, answer: str) -> str | None:
    """Rule 2 of the module docstring: the reason, or None.

    >>> opposite_slot("Within 4 hours of the end of their last day.",
    ...               "Within 4 hours of the end of the last day, at the latest.") is None
    True
    """
    ref, ans = _slots(reference), _slots(answer)
    for word, slot in sorted(ref - ans):
        for other in sorted(_OPPOSITES[word]):
            if (other, slot) in ans and (other, slot) not in ref:
                return f'the answer says "{other} {slot}" where the reference says "{word} {slot}"'
    return None


_SAME = re.compile(
    r"\b(?:the same(?: \w+){0,3} as|identical to|equal to|just like|no different from)\s+"
    r"((?:the |its |their )?[\w\-]+)"
)


def sameness(reference: str, answer: str) -> str | None:
    """Rule 3 of the module docstring: the reason, or None.

    >>> sameness("3 years (the R3 has 5 years).", "3 years, like every Relay.") is None
    True
    """
    ref = set(_WORD.findall(reference.lower())) | set(re.findall(r"\w+", reference.lower()))
    for match in _SAME.finditer(answer.lower()):
        if match[1].split()[-1] in ref:
            return (
                f'the answer compares its value with "{match[1]}", which the reference also '
                "names: a comparison the key words cannot check"
            )
    return None


#: Words before a number that label nothing ("up to 30", "of 5", "at least 4").
_NO_LABEL = frozenset({
    "the", "a", "an", "to", "of", "and", "or", "is", "are", "was", "be", "for", "in", "on",
    "at", "by", "with", "it", "its", "than", "up", "least", "most", "more", "less", "over",
    "under", "about", "around", "within", "after", "before", "from", "each", "per"
})  # fmt: skip


def _labelled(text: str) -> set[tuple[str, str, str]]:
    """(label, unit, number) of each number of ``text`` that stands right after a label."""
    toks = tokens(text)
    out = set()
    for q in quantities(toks):
        before = toks[q.position - 1] if q.position > 0 else None
        if before is not None and before.kind in ("word", "stop") and before.text not in _NO_LABEL:
            out.add((before.text, q.unit, q.number))
    return out


def relabelled(reference: str, answer: str) -> str | None:
    """Rule 4 of the module docstring: the reason, or None.

    >>> relabelled("RTO 30 minutes, RPO 5 minutes.", "RPO 5 minutes and RTO 30 minutes.") is None
    True
    >>> relabelled("Call extension 4411.", "Call the desk on extension 4400.")
    'the answer pairs "extension" with 4400, the reference with 4411'
    """
    ref, ans = _labelled(reference), _labelled(answer)
    for label, unit, number in sorted(ans - ref):
        if any((lab, n) == (label, number) for lab, _, n in ref):
            continue  # the reference pairs them too, with another word after the number
        others = {n for lab, u, n in ref if (lab, u) == (label, unit) and n != number}
        if others and not any((label, unit, n) in ans for n in others):
            return f'the answer pairs "{label}" with {number}, the reference with {min(others)}'
    return None


_ALTERNATIVES = re.compile(r"[,;]\s*or (?:when|if|where|for|whenever)\b")
_ONLY = re.compile(r"\bonly (?:when|if|where|for|whenever)\b")


def narrowed(reference: str, answer: str) -> str | None:
    """Rule 5 of the module docstring: the reason, or None.

    >>> narrowed("When it rains, or when it snows.", "Only when it rains.")[:36]
    'the answer says "only when" where th'
    """
    only = _ONLY.search(answer.lower())
    if only and _ALTERNATIVES.search(reference.lower()):
        return (
            f'the answer says "{only[0]}" where the reference gives alternatives: it may deny '
            "one of them"
        )
    return None


def reversal(reference: str, answer: str) -> tuple[bool | None, str]:
    """``(False, reason)`` for rules 1, 2 and 4, ``(None, reason)`` for rules 3 and 5, else
    ``(True, "")``.

    >>> reversal("Up to 60 EUR per person.", "At most sixty euros per head.")
    (True, '')
    """
    why = (
        inclusion_flip(reference, answer) or opposite_slot(reference, answer)
        or relabelled(reference, answer)
    )  # fmt: skip
    if why:
        return False, why
    doubt = sameness(reference, answer) or narrowed(reference, answer)
    return (None, doubt) if doubt else (True, "")
