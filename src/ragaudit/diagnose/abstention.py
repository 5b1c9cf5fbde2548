"""Wrong abstention, split into the two failures it used to mix.

* **Over-refusal**: the model refused although the evidence was in its context.  Its
  denominator is the answerable questions whose evidence reached the context (funnel stage 2):

  .. math:: \\text{over-refusal} = \\frac{|\\text{refused} \\cap \\text{evidence}|}
            {|\\text{evidence}|} = 1 - P(\\text{answered} \\mid \\text{evidence})

  (the complement of the funnel's stage-3 conditional rate).
* **Answered-unanswerable**: the model answered a question the corpus cannot answer.  Its
  denominator is the unanswerable questions.  Answering one is no abstention at all: it is a
  hallucination risk, and it moves independently of over-refusal.

The old single rate added the two and divided by (stage-2 survivors + unanswerable questions),
a denominator that moves with retrieval: a question whose evidence reached the context only at
the larger k entered the k=6 rate without the model changing at all.  Between two runs the
over-refusal denominators differ whenever retrieval differs, so :func:`paired_abstention`
compares the rates only on what is paired: the questions with the evidence in context under
**both** runs (and the unanswerable questions both runs hold), with Tango's score interval and
McNemar's exact test on those questions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragaudit.diagnose.funnel_compare import paired_change
from ragaudit.diagnose.funnel_result import FunnelResult
from ragaudit.stats.intervals import proportion_interval

__all__ = [
    "AbstentionRate",
    "AbstentionRates",
    "PairedAbstention",
    "abstention_rates",
    "evidence_ids",
    "paired_abstention",
]


@dataclass(frozen=True)
class AbstentionRate:
    """``count / n`` with its Clopper-Pearson interval and the ids counted.

    Attributes
    ----------
    key : {"over_refusal", "answered_unanswerable"}
    count, n : int
    value, ci_low, ci_high : float or None
        None when ``n == 0``.
    ids : tuple of str
        The questions in ``count``.
    denominator : str
        What ``n`` counts, in words.
    method : str
    """

    key: str
    count: int
    n: int
    value: float | None
    ci_low: float | None
    ci_high: float | None
    ids: tuple[str, ...]
    denominator: str
    method: str


@dataclass(frozen=True)
class AbstentionRates:
    """The two abstention failures of one run."""

    over_refusal: AbstentionRate
    answered_unanswerable: AbstentionRate


@dataclass(frozen=True)
class PairedAbstention:
    """One abstention rate of runs A and B on the questions both can be judged on.

    Attributes
    ----------
    key : str
    ids : tuple of str
        The paired questions (the denominator).
    a_count, b_count : int
        Failures of A and of B among ``ids``.
    a_only, b_only : tuple of str
        Questions that failed only under A / only under B.
    difference : float or None
        ``(b_count - a_count) / len(ids)``.
    ci_low, ci_high : float or None
        Tango score interval of the difference.
    pvalue : float
        McNemar's exact two-sided p on the discordant questions.
    paired_from : tuple of (int, int)
        The two runs' own denominators, to say when they differed.
    """

    key: str
    ids: tuple[str, ...]
    a_count: int
    b_count: int
    a_only: tuple[str, ...]
    b_only: tuple[str, ...]
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    pvalue: float
    paired_from: tuple[int, int]

    @property
    def denominators_differ(self) -> bool:
        """The runs' own denominators differ, so their unpaired rates are not comparable."""
        return self.paired_from[0] != self.paired_from[1]


def evidence_ids(funnel: FunnelResult) -> tuple[str, ...]:
    """The answerable questions whose evidence reached the context and whose answer-or-refusal
    is decided: died at stage 3 or 4, passed every stage, or unjudged only at stage 4 (they
    answered; their correctness is undecided).  A question unjudged at stage 3 or earlier
    cannot be told refused or not, and is left out (the funnel names it)."""
    later = ("3-refusal", "4-generation")
    answered_unjudged = (u.id for u in funnel.unjudged if u.stage == "4-generation")
    return tuple(sorted({*(q for key in later for q in funnel.died.get(key, ())),
                         *funnel.ok_ids, *answered_unjudged}))  # fmt: skip


def _rate(key: str, ids: tuple[str, ...], n: int, denominator: str) -> AbstentionRate:
    if not n:
        return AbstentionRate(key, 0, 0, None, None, None, (), denominator, "")
    result = proportion_interval(len(ids), n)
    ci = result.confidence_interval
    return AbstentionRate(
        key, len(ids), n, len(ids) / n, ci.low, ci.high, ids, denominator, result.method
    )


def abstention_rates(funnel: FunnelResult) -> AbstentionRates:
    """Over-refusal and answered-unanswerable of one run (module docstring).

    Examples
    --------
    q2 refused with its evidence in the context; q3 lost its evidence (stage 2); u1,
    unanswerable, was answered and u2 refused.

    >>> from ragaudit.diagnose.funnel import compute_funnel
    >>> def row(qid, evidence=True, abstained=False, answerable=True):
    ...     return {"id": qid, "answerable": answerable, "gold_docs": ["G"] if answerable else [],
    ...             "retrieved": [{"chunk_id": "G#0", "doc_id": "G"}],
    ...             "judges": {"abstained": abstained, "correct": not abstained,
    ...                        "evidence_in_context": evidence}}
    >>> rows = [row("q1"), row("q2", abstained=True), row("q3", evidence=False),
    ...         row("u1", answerable=False), row("u2", abstained=True, answerable=False)]
    >>> funnel = compute_funnel({"name": "r", "config": {"k": 1}, "rows": rows})
    >>> rates = abstention_rates(funnel)
    >>> rates.over_refusal.count, rates.over_refusal.n, rates.over_refusal.ids
    (1, 2, ('q2',))
    >>> rates.answered_unanswerable.count, rates.answered_unanswerable.n
    (1, 2)
    """
    evidence = evidence_ids(funnel)
    refused = tuple(sorted(set(funnel.died.get("3-refusal", ())) & set(evidence)))
    una = funnel.unanswerable
    return AbstentionRates(
        _rate("over_refusal", refused, len(evidence),
              "answerable questions with the evidence in the context"),
        _rate("answered_unanswerable", tuple(una.answered_ids), una.n,
              "unanswerable questions"),
    )  # fmt: skip


def _paired(
    key: str, ids: tuple[str, ...], a_fail: set[str], b_fail: set[str], sizes: tuple[int, int]
) -> PairedAbstention:
    a = np.array([q in a_fail for q in ids], dtype=bool)
    b = np.array([q in b_fail for q in ids], dtype=bool)
    change = paired_change(ids, a, b)
    return PairedAbstention(
        key, ids, int(a.sum()), int(b.sum()), change.a_only, change.b_only, change.difference,
        change.ci_low, change.ci_high, change.pvalue, sizes,
    )  # fmt: skip


def paired_abstention(
    a: FunnelResult, b: FunnelResult
) -> tuple[PairedAbstention, PairedAbstention]:
    """Over-refusal and answered-unanswerable of B vs A on the questions both can be judged on.

    Over-refusal is paired on the questions with the evidence in the context (and a decided
    answer-or-refusal) under both runs; answered-unanswerable on the unanswerable questions
    with an abstention verdict in both.

    Examples
    --------
    Question q3's evidence reaches the context only in B, where the model refuses it: B's own
    over-refusal rate rises, but on the two questions with evidence in both runs nothing
    moved.  B answers the unanswerable u1, which A refused.

    >>> from ragaudit.diagnose.funnel import compute_funnel
    >>> def run(evidence_q3, answers_u1):
    ...     def row(qid, evidence=True, abstained=False, answerable=True):
    ...         return {"id": qid, "answerable": answerable,
    ...                 "gold_docs": ["G"] if answerable else [],
    ...                 "retrieved": [{"chunk_id": "G#0", "doc_id": "G"}],
    ...                 "judges": {"abstained": abstained, "correct": not abstained,
    ...                            "evidence_in_context": evidence}}
    ...     rows = [row("q1"), row("q2", abstained=True),
    ...             row("q3", evidence=evidence_q3, abstained=True),
    ...             row("u1", abstained=not answers_u1, answerable=False),
    ...             row("u2", abstained=True, answerable=False)]
    ...     return compute_funnel({"name": "r", "config": {"k": 1}, "rows": rows})
    >>> refusal, answered = paired_abstention(run(False, False), run(True, True))
    >>> refusal.ids, refusal.difference, refusal.paired_from, refusal.denominators_differ
    (('q1', 'q2'), 0.0, (2, 3), True)
    >>> answered.ids, answered.b_only, answered.difference
    (('u1', 'u2'), ('u1',), 0.5)
    """
    a_evidence, b_evidence = evidence_ids(a), evidence_ids(b)
    shared = tuple(q for q in a_evidence if q in set(b_evidence))
    refusal = _paired(
        "over_refusal", shared, set(a.died.get("3-refusal", ())),
        set(b.died.get("3-refusal", ())), (len(a_evidence), len(b_evidence)),
    )  # fmt: skip
    una_a, una_b = a.unanswerable, b.unanswerable
    decided_b = {*una_b.answered_ids, *una_b.refused_ids}
    unanswerable = tuple(sorted(q for q in (*una_a.answered_ids, *una_a.refused_ids)
                                if q in decided_b))  # fmt: skip
    answered = _paired(
        "answered_unanswerable", unanswerable, set(una_a.answered_ids),
        set(una_b.answered_ids), (una_a.n, una_b.n),
    )  # fmt: skip
    return refusal, answered
