"""The LLM labeller: one call per question grades every chunk of its gold documents.

The model sees the question, the reference answer, the keywords and the candidate chunks
numbered from 1, and returns ``{"answer_chunks": [...], "supporting_chunks": [...]}`` by number.
Numbers are validated (integers in ``1..n``); an invalid reply is sent back with the error, and
after the retry budget the question raises :class:`~ragaudit.exceptions.JudgeError` with the
reason instead of being labelled (an unlabelled question is honest; an all-zero one is not).

Grades: 2 for an answer chunk, 1 for a supporting chunk, 0 for every other candidate (a chunk
named in both lists is an answer chunk).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ragaudit.data.chunks import Chunk
from ragaudit.exceptions import JudgeError
from ragaudit.judges.prompts import LABELLER, data_block, numbered_chunks
from ragaudit.llm.client import LLMClient
from ragaudit.llm.config import LLMConfig
from ragaudit.llm.replies import DryRunEstimate, PlannedCall

__all__ = ["LLMLabeller", "LabelRequest"]

#: ``(question, reference_answer, keywords, candidates)``, the arguments of ``label``.
LabelRequest = tuple[str, str, Sequence[str], list[Chunk]]


class LLMLabeller:
    """Chunk-level relevance labels from an LLM (implements the Labeller protocol).

    Parameters
    ----------
    client : LLMClient, optional
        The client to use; otherwise one is built from ``config`` (or from the environment and
        ``llm_options``, the keyword arguments of :meth:`LLMConfig.from_env_and_flags`).
    config : LLMConfig, optional

    Examples
    --------
    >>> from ragaudit.llm import LLMClient, LLMConfig
    >>> cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="gpt-4o-mini", use_cache=False)
    >>> chunks = [Chunk("c0", "D", 0, "Leave: 20 days."), Chunk("c1", "D", 1, "Sick leave.")]
    >>> labeller = LLMLabeller(config=cfg)
    >>> labeller.dry_run([("How much leave?", "20 days", ["20 days"], chunks)]).calls
    1
    >>> labeller.close()
    """

    name = "llm"

    def __init__(
        self,
        client: LLMClient | None = None,
        config: LLMConfig | None = None,
        **llm_options: Any,
    ) -> None:
        self._owns_client = client is None
        if client is None:
            if config is None:
                config = LLMConfig.from_env_and_flags(**llm_options)
            client = LLMClient(config, stage="the LLM labeller")
        self.client = client
        self.prompt_version = LABELLER.version
        #: question -> reason, for questions that got no valid labels.
        self.errors: dict[str, str] = {}

    def close(self) -> None:
        """Close the client if this labeller created it."""
        if self._owns_client:
            self.client.close()

    def messages(
        self, question: str, reference_answer: str, keywords: Sequence[str], candidates: list[Chunk]
    ) -> list[dict[str, str]]:
        """The chat messages sent for one question."""
        return LABELLER.messages(
            question=data_block("question", question),
            reference=data_block("reference", reference_answer),
            keywords=data_block("keywords", ", ".join(keywords) if keywords else "(none)"),
            context=numbered_chunks([c.text for c in candidates]),
        )

    def label(
        self,
        question: str,
        reference_answer: str,
        keywords: Sequence[str],
        candidates: list[Chunk],
    ) -> dict[str, int]:
        """``{chunk_id: grade}`` for every candidate; raises JudgeError after the retry budget."""
        if not candidates:
            return {}
        from ragaudit.judges.schemas import parse_labels

        n = len(candidates)
        outcome = self.client.chat_json(
            self.messages(question, reference_answer, keywords, candidates),
            lambda value: parse_labels(value, n),
            prompt_version=self.prompt_version,
        )
        if outcome.value is None:
            reason = outcome.error or "no labels"
            self.errors[question] = reason
            raise JudgeError(f"LLM labeller: no valid labels for {question!r}: {reason}")
        grades = dict.fromkeys((c.chunk_id for c in candidates), 0)
        for number in outcome.value.supporting_chunks:
            grades[candidates[number - 1].chunk_id] = 1
        for number in outcome.value.answer_chunks:
            grades[candidates[number - 1].chunk_id] = 2
        return grades

    def label_many(
        self,
        requests: Sequence[LabelRequest],
        progress: Callable[[int, int], None] | None = None,
    ) -> list[dict[str, int] | JudgeError]:
        """:meth:`label` for many questions, ``max_concurrency`` at a time.

        A question without valid labels yields its :class:`JudgeError` in place of the grades.
        """

        def one(request: LabelRequest) -> dict[str, int] | JudgeError:
            try:
                return self.label(*request)
            except JudgeError as exc:
                return exc

        return self.client.map(one, requests, progress)

    def dry_run(self, requests: Sequence[LabelRequest]) -> DryRunEstimate:
        """Calls, cache hits, tokens (chars/4) and cost of labelling, sending nothing."""
        return self.client.estimate(
            PlannedCall(
                tuple(self.messages(*request)),
                self.prompt_version,
                json_mode=self.client.config.json_mode,
                expected_output_tokens=LABELLER.expected_output_tokens,
            )
            for request in requests
            if request[3]
        )
