"""The LLM judges as an audit judge (``judges audit --judge llm``), and the audit's cost.

:class:`LLMAuditJudge` sends every variant of :func:`ragaudit.diagnose.judge_audit.variants`
through :class:`ragaudit.judges.llm.LLMJudges` and its cached client: an answer already judged
by ``ragaudit judge`` with the same model and prompts costs nothing.  :func:`audit_cost`
counts the calls, cache hits, tokens and cost of every row, the position test's pairwise
calls and every repeat included, before anything is sent (``--dry-run``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ragaudit.data.chunks import Chunk
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.judge_audit import (
    AuditItem,
    audit_items,
    variants,
)
from ragaudit.diagnose.judge_audit_position import position_pairs, position_plan
from ragaudit.exceptions import InputError
from ragaudit.judges.llm import JudgeItem, LLMJudges, judge_metrics
from ragaudit.judges.pairwise import LLMPairwiseJudge
from ragaudit.llm.replies import DryRunEstimate, PlannedCall

__all__ = ["AUDIT_LLM_JUDGES", "LLMAuditJudge", "audit_cost"]

#: The LLM judges an audit asks by default: correctness (verbosity, refusal, self-preference,
#: repeats) and sufficiency (context order).
AUDIT_LLM_JUDGES: tuple[str, ...] = ("correctness", "sufficiency")
_METRIC = {"correctness": "correct", "sufficiency": "sufficiency", "faithfulness": "faithfulness"}
_READS_CONTEXT = ("sufficiency", "faithfulness")


def _judge_item(item: AuditItem) -> JudgeItem:
    # abstained=None: the judge detects a refusal itself (the refusal-phrasing test)
    return JudgeItem(
        item.question_id, item.question, item.answer, list(item.context),
        reference_answer=item.reference_answer or None, answerable=item.answerable,
    )  # fmt: skip


class LLMAuditJudge:
    """Audit adapter of :class:`~ragaudit.judges.llm.LLMJudges` (correctness must be among
    its judges; sufficiency and faithfulness are the ones that read the context)."""

    name = "llm"

    def __init__(self, judges: LLMJudges) -> None:
        unsupported = [j for j in judges.judges if j not in _METRIC]
        if "correctness" not in judges.judges or unsupported:
            raise InputError(
                "judges audit --llm-judges: expected correctness plus any of sufficiency, "
                f"faithfulness; found {', '.join(judges.judges)}"
            )
        self.judges = judges
        self.model: str | None = judges.client.model
        self.metrics = tuple(_METRIC[j] for j in judges.judges)
        self.context_metrics = tuple(_METRIC[j] for j in judges.judges if j in _READS_CONTEXT)

    def verdicts(
        self, items: Sequence[AuditItem], repeat: int = 0
    ) -> list[dict[str, float | None]]:
        """The LLM verdicts (1.0/0.0 for booleans; None for a judge error)."""
        raw = self.judges.judge_once([_judge_item(i) for i in items], repeat)
        return [{m: judge_metrics(r)[m] for m in self.metrics} for r in raw]


def audit_cost(
    run: SavedRun,
    chunks: Sequence[Chunk],
    judge: LLMAuditJudge,
    *,
    seed: int = 0,
    pairwise: LLMPairwiseJudge | None = None,
    repeats: int = 2,
) -> DryRunEstimate:
    """Calls, cache hits, tokens (chars/4) and cost of auditing ``judge`` (and the position
    test's ``pairwise`` judge) with ``repeats`` sends of the repeat-noise test, sending
    nothing."""
    items = audit_items(run, chunks)
    pairs = variants(items, chunks, seed)
    once = judge.judges
    # as audit_judge sends them: the answers as given once, then each test's changed side
    # (both sides of refusal phrasing; repeats 1..R-1 of the repeat test), then the position
    # test's pairs in both orders
    planned: list[PlannedCall] = once.plan_once([_judge_item(i) for i in items], 0)
    for test, chosen in pairs.items():
        if test == "refusal phrasing":
            planned += once.plan_once([_judge_item(x) for x, _ in chosen], 0)
        sends = range(1, repeats) if test == "repeat noise" else (0,)
        for repeat in sends:
            planned += once.plan_once([_judge_item(y) for _, y in chosen], repeat)
    if pairwise is not None:
        planned += position_plan(position_pairs(items), pairwise)
    # a request two tests share (sufficiency does not read the answer) is sent once: the
    # second is a cache hit within the audit, so it is counted once here too
    unique = {
        json.dumps([c.messages, c.prompt_version, c.repeat, c.schema], sort_keys=True): c
        for c in planned
    }
    return judge.judges.client.estimate(list(unique.values()))
