"""Pairwise judges: which of two answers to one question answers it correctly and better.

A pairwise judge sees a question, the passages it was answered from and two answers, shown as
A (first) and B (second), and returns ``"A"``, ``"B"`` or ``"tie"`` (``None``: no verdict, a
failed call).  ``judges audit`` swaps A and B to measure position bias
(:mod:`ragaudit.diagnose.judge_audit_position`).

=========================== ===================================================================
:class:`OfflinePairwiseJudge` the offline correctness verdict of each answer
                              (:func:`ragaudit.judges.offline.judge_offline`): the correct one
                              wins, a tie when both or neither are correct, None when either is
                              undecided.  It never reads the order, so it cannot be biased by
                              it: the control of the position test.
:class:`LLMPairwiseJudge`     one call of the prompt :data:`ragaudit.judges.prompts.PAIRWISE`
                              through the cached client (reference-free, as MT-Bench's
                              pairwise judge; a repair turn on invalid JSON).
=========================== ===================================================================

References
----------
Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena. NeurIPS,
section 3.3 (pairwise comparison; position bias measured by swapping the answers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit.judges.offline import judge_offline
from ragaudit.judges.prompts import PAIRWISE, data_block, numbered_chunks
from ragaudit.llm.client import LLMClient
from ragaudit.llm.replies import PlannedCall

__all__ = ["WINNERS", "LLMPairwiseJudge", "OfflinePairwiseJudge", "PairItem"]

#: The verdicts of a pairwise judge.
WINNERS: tuple[str, ...] = ("A", "B", "tie")


@dataclass(frozen=True)
class PairItem:
    """Two answers to one question: ``first`` is shown as A, ``second`` as B."""

    question_id: str
    question: str
    first: str
    second: str
    context: tuple[str, ...] = ()
    reference_answer: str = ""
    keywords: tuple[str, ...] = ()
    answerable: bool = True

    def swapped(self) -> PairItem:
        """The same pair with A and B exchanged.

        >>> PairItem("q1", "Q?", "x", "y").swapped().first
        'y'
        """
        return PairItem(
            self.question_id, self.question, self.second, self.first, self.context,
            self.reference_answer, self.keywords, self.answerable,
        )  # fmt: skip


class OfflinePairwiseJudge:
    """The pairwise judge built from the offline correctness verdicts (see the module notes).

    >>> item = PairItem("q1", "How long?", "30 days.", "45 days.",
    ...                 reference_answer="Refunds take 30 days.")
    >>> OfflinePairwiseJudge().prefer([item, item.swapped()])
    ['A', 'B']
    """

    name: str = "offline"
    model: str | None = None

    def _correct(self, item: PairItem, answer: str) -> bool | None:
        found = judge_offline(
            answer=answer, answerable=item.answerable, reference_answer=item.reference_answer,
            keywords=item.keywords, context_texts=item.context, question=item.question,
        )  # fmt: skip
        value = found.get("correct")
        return None if value is None else bool(value)

    def prefer(self, items: Sequence[PairItem], repeat: int = 0) -> list[str | None]:
        """``"A"``, ``"B"``, ``"tie"`` or None for each pair (``repeat`` changes nothing)."""
        out: list[str | None] = []
        for item in items:
            a, b = self._correct(item, item.first), self._correct(item, item.second)
            if a is None or b is None:
                out.append(None)
            else:
                out.append("tie" if a == b else ("A" if a else "B"))
        return out


class LLMPairwiseJudge:
    """The LLM pairwise judge: one :data:`~ragaudit.judges.prompts.PAIRWISE` call per pair,
    through the client's cache (each ``repeat`` its own cache entry and seed).

    >>> from ragaudit.llm import LLMConfig
    >>> cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", use_cache=False)
    >>> with LLMClient(cfg) as client:
    ...     calls = LLMPairwiseJudge(client).plan([PairItem("q1", "Q?", "x", "y")], repeat=0)
    >>> len(calls), calls[0].prompt_version
    (1, 'pairwise-v1')
    """

    name: str = "llm pairwise"

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.model: str | None = client.model

    @staticmethod
    def messages(item: PairItem) -> list[dict[str, str]]:
        """The chat messages of one pair (A first)."""
        return PAIRWISE.messages(
            question=data_block("question", item.question),
            context=numbered_chunks(list(item.context)),
            first=data_block("answer", item.first, label="A"),
            second=data_block("answer", item.second, label="B"),
        )

    @staticmethod
    def _schema() -> dict[str, Any]:
        from ragaudit.judges.schemas import json_schema

        return json_schema("Pairwise")

    def prefer(self, items: Sequence[PairItem], repeat: int = 0) -> list[str | None]:
        """The winner of each pair; None when the call failed or its reply stayed invalid."""
        from ragaudit.judges.schemas import parse_pairwise

        schema = self._schema()

        def ask(item: PairItem) -> str | None:
            outcome = self.client.chat_json(
                self.messages(item), parse_pairwise, prompt_version=PAIRWISE.version,
                repeat=repeat, schema=schema, max_tokens=PAIRWISE.max_output_tokens,
            )  # fmt: skip
            return None if outcome.value is None else str(outcome.value.winner)

        return self.client.map(ask, items)

    def plan(self, items: Sequence[PairItem], repeat: int) -> list[PlannedCall]:
        """The requests :meth:`prefer` would send (for dry runs)."""
        schema = self._schema()
        return [
            PlannedCall(
                tuple(self.messages(item)), PAIRWISE.version, repeat=repeat,
                json_mode=self.client.config.json_mode,
                expected_output_tokens=PAIRWISE.expected_output_tokens, schema=schema,
                max_tokens=PAIRWISE.max_output_tokens,
            )
            for item in items
        ]
