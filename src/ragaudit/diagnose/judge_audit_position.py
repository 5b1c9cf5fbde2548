r"""The position test of ``judges audit``: a pairwise judge asked twice, A and B swapped.

Each answered question with a reference answer gives one pair: the run's answer and the
golden set's reference answer (two answers of similar quality, where a judge's doubt, and
so its position bias, shows; Zheng et al. found it mostly in close pairs).  The judge sees
the pair once with the run's answer first (A side of the test) and once with it second (B
side).  The verdict compared is ``answer preferred``: 1 when the judge prefers the run's
answer, 0 when it prefers the reference, None on a tie or a failed call (left out, counted).

A judge blind to the order gives the same verdict both times.  A question whose verdict
flips was won by the first-shown answer both times (1 then 0: McNemar's "A only") or by the
second-shown both times (0 then 1: "B only"); without position bias the two are equally
likely, so McNemar's exact test on the flips (a sign test; Zheng et al.'s "consistency" is
the share that does not flip) is the test, and ``mean(B) - mean(A)`` its effect: -1 for a
judge that always picks the first answer, +1 for one that always picks the second.

References
----------
Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena. NeurIPS,
section 3.3 (position bias: the answers swapped; GPT-4 consistent on 65% of pairs).
McNemar, Q. (1947). Note on the sampling error of the difference between correlated
proportions or percentages. Psychometrika 12(2), 153-157.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from ragaudit.judges.offline import is_abstention
from ragaudit.judges.pairwise import PairItem
from ragaudit.llm.replies import PlannedCall

if TYPE_CHECKING:
    from ragaudit.diagnose.judge_audit import AuditItem

__all__ = ["POSITION_METRIC", "PairwiseJudge", "position_pairs", "position_verdicts"]

#: The verdict the position row compares.
POSITION_METRIC = "answer preferred"


class PairwiseJudge(Protocol):
    """What the position test needs of a pairwise judge
    (:class:`~ragaudit.judges.pairwise.OfflinePairwiseJudge`,
    :class:`~ragaudit.judges.pairwise.LLMPairwiseJudge`, or a planted stub)."""

    name: str
    model: str | None

    def prefer(self, items: Sequence[PairItem], repeat: int = 0) -> list[str | None]:
        """``"A"``, ``"B"``, ``"tie"`` or None (no verdict) for each pair."""
        ...


def position_pairs(items: Sequence[AuditItem]) -> list[PairItem]:
    """The pairs the test asks about (run's answer first): answerable questions with a
    reference answer, whose answer neither abstains nor equals the reference.

    >>> from ragaudit.diagnose.judge_audit import AuditItem
    >>> item = AuditItem("q1", "How long?", "30 days.", ("Refunds take 30 days.",), ("d",),
    ...                  "Refunds take 30 days.")
    >>> [(p.first, p.second) for p in position_pairs([item])]
    [('30 days.', 'Refunds take 30 days.')]
    """
    return [
        PairItem(
            item.question_id, item.question, item.answer, item.reference_answer, item.context,
            item.reference_answer, item.keywords, item.answerable,
        )
        for item in items
        if item.answerable
        and item.reference_answer.strip()
        and not is_abstention(item.answer)
        and item.answer.strip() != item.reference_answer.strip()
    ]


def _preferred(winner: str | None, answer_first: bool) -> float | None:
    if winner not in ("A", "B"):
        return None  # a tie or no verdict: left out of the paired test, counted
    return float((winner == "A") == answer_first)


def position_verdicts(
    pairs: Sequence[PairItem], judge: PairwiseJudge
) -> tuple[list[dict[str, float | None]], list[dict[str, float | None]]]:
    """``(A, B)``: :data:`POSITION_METRIC` with the run's answer shown first, then second.

    >>> class First:
    ...     name, model = "first", None
    ...     def prefer(self, items, repeat=0):
    ...         return ["A" for _ in items]
    >>> position_verdicts([PairItem("q1", "Q?", "x", "y")], First())
    ([{'answer preferred': 1.0}], [{'answer preferred': 0.0}])
    """
    first = judge.prefer(list(pairs))
    second = judge.prefer([p.swapped() for p in pairs])
    return (
        [{POSITION_METRIC: _preferred(w, True)} for w in first],
        [{POSITION_METRIC: _preferred(w, False)} for w in second],
    )


def position_plan(pairs: Sequence[PairItem], judge: object) -> list[PlannedCall]:
    """The calls :func:`position_verdicts` sends, for a judge that plans them (the LLM
    pairwise judge); none for the others."""
    plan = getattr(judge, "plan", None)
    if plan is None:
        return []
    calls: list[PlannedCall] = plan(list(pairs), 0) + plan([p.swapped() for p in pairs], 0)
    return calls
