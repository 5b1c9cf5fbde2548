"""The LLM generator: a grounded answer with ``[n]`` citations from an OpenAI-compatible model.

The prompt (:data:`ragaudit.judges.prompts.GENERATOR`) numbers the context chunks from 1, asks
for a citation ``[n]`` after every supported sentence, forbids outside knowledge, and asks for
the exact refusal :data:`~ragaudit.pipeline.generators.REFUSAL` when the passages do not cover
the question.  Requests go through :class:`ragaudit.llm.LLMClient` (cache, retries, accounting).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ragaudit.data.chunks import Chunk
from ragaudit.judges.prompts import GENERATOR, data_block, numbered_chunks
from ragaudit.llm.citations import extract_citations
from ragaudit.llm.client import LLMClient
from ragaudit.llm.config import LLMConfig
from ragaudit.llm.replies import DryRunEstimate, LLMRequestError, PlannedCall
from ragaudit.pipeline.generators import Generation

__all__ = ["LLMGenerator", "make_generator"]


class LLMGenerator:
    """Answer from the retrieved chunks with an LLM (implements the Generator protocol).

    Parameters
    ----------
    client : LLMClient

    Notes
    -----
    ``abstained`` is decided by :func:`ragaudit.judges.offline.is_abstention` (the exact
    refusal phrase or a common refusal wording); ``citations`` are the ``[n]`` markers in
    order of first appearance.  A request that fails for good gives a ``Generation`` with
    ``error`` set, which the harness keeps and does not judge.

    Examples
    --------
    >>> from ragaudit.llm import LLMClient, LLMConfig
    >>> cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="gpt-4o-mini", use_cache=False)
    >>> with LLMClient(cfg) as client:
    ...     messages = LLMGenerator(client).messages("How long?", [Chunk("c1", "d", 0, "30 days")])
    >>> print(messages[1]["content"])
    <context>
    <chunk n="1">
    30 days
    </chunk>
    </context>
    <question>
    How long?
    </question>
    """

    name = "openai"
    # The harness passes each (question, repeat) unit's seed and repeat: the request's seed
    # is the unit's and the cache key holds the repeat, so R repeats are R distinct requests.
    takes_seed = True
    takes_repeat = True

    def __init__(self, client: LLMClient, *, owns_client: bool = False) -> None:
        self.client = client
        self.prompt_version = GENERATOR.version
        self._owns_client = owns_client

    def close(self) -> None:
        """Close the client if this generator created it (see :func:`make_generator`)."""
        if self._owns_client:
            self.client.close()

    def messages(self, question: str, context: Sequence[Chunk]) -> list[dict[str, str]]:
        """The chat messages sent for one question."""
        return GENERATOR.messages(
            context=numbered_chunks([chunk.text for chunk in context]),
            question=data_block("question", question),
        )

    def generate(
        self,
        question: str,
        context: list[Chunk],
        seed: int | None = None,
        repeat: int = 0,
    ) -> Generation:
        """Answer one question (see the class notes).

        ``seed`` and ``repeat`` are the (question, repeat) unit's: the seed is sent as the
        request's ``seed`` (without it, the config's seed plus ``repeat``) and both are part
        of the cache key, so each repeat is its own request and its own cache entry.
        """
        from ragaudit.judges.offline import is_abstention

        try:
            result = self.client.chat(
                self.messages(question, context),
                prompt_version=self.prompt_version,
                repeat=repeat,
                seed=seed,
            )
        except LLMRequestError as exc:
            return Generation(answer="", abstained=False, citations=[], usage=None, error=str(exc))
        answer = result.text.strip()
        usage: dict[str, Any] = {
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens,
            "cached": result.cached,
            "model": self.client.model,
            # what answering this question costs with this configuration, from the price
            # table (a cache hit costs the same in production); None: the model is unpriced
            "cost_usd": self.client.prices.cost(
                self.client.model, result.input_tokens, result.output_tokens
            ),
        }
        abstained = is_abstention(answer)
        return Generation(
            answer=answer,
            abstained=abstained,
            citations=[] if abstained else extract_citations(answer),
            usage=usage,
            error=None,
        )

    def generate_many(
        self,
        requests: Sequence[tuple[str, list[Chunk]]],
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Generation]:
        """:meth:`generate` for many ``(question, context)`` pairs, ``max_concurrency`` at a
        time; results in input order."""
        return self.client.map(lambda pair: self.generate(*pair), requests, progress)

    def plan(
        self,
        requests: Sequence[tuple[str, list[Chunk]]],
        units: Sequence[tuple[int | None, int]] | None = None,
    ) -> list[PlannedCall]:
        """The requests :meth:`generate` would send (for dry runs); ``units`` gives each
        request's ``(seed, repeat)`` (default ``(None, 0)``)."""
        pairs = units if units is not None else [(None, 0)] * len(requests)
        return [
            PlannedCall(
                tuple(self.messages(q, ctx)),
                self.prompt_version,
                repeat=repeat,
                expected_output_tokens=GENERATOR.expected_output_tokens,
                seed=seed,
            )
            for (q, ctx), (seed, repeat) in zip(requests, pairs, strict=True)
        ]

    def cached_answer(
        self, question: str, context: list[Chunk], seed: int | None = None, repeat: int = 0
    ) -> str | None:
        """The cached answer :meth:`generate` would return, or ``None`` (sends nothing)."""
        if self.client.cache is None:
            return None
        key = self.client.key_for(
            self.messages(question, context), self.prompt_version, repeat, seed=seed
        )
        hit = self.client.cache.get(key)
        return None if hit is None else hit.text.strip()

    def dry_run(
        self,
        requests: Sequence[tuple[str, list[Chunk]]],
        units: Sequence[tuple[int | None, int]] | None = None,
    ) -> DryRunEstimate:
        """Calls, cache hits, tokens (chars/4) and cost, sending nothing."""
        return self.client.estimate(self.plan(requests, units))


def make_generator(
    seed: int | None = None, config: LLMConfig | None = None, **llm_options: Any
) -> LLMGenerator:
    """The generator ``ragaudit run --generator openai`` uses.

    Without ``config``, the endpoint comes from the environment (``RAGAUDIT_LLM_BASE_URL`` /
    ``OPENAI_BASE_URL``, ``RAGAUDIT_LLM_MODEL``, the key from ``RAGAUDIT_LLM_API_KEY`` /
    ``OPENAI_API_KEY``) and ``llm_options`` (keyword arguments of
    :meth:`LLMConfig.from_env_and_flags`); ``seed`` is the run's seed, sent with every request.
    A missing endpoint or model is one clear error naming the flag and variable.

    >>> make_generator(config=LLMConfig(model="m"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragaudit.exceptions.InputError: the LLM generator needs an endpoint: pass --llm-base-url ...
    """
    if config is None:
        config = LLMConfig.from_env_and_flags(seed=seed, **llm_options)
    elif seed is not None and "seed" not in llm_options:
        config = dataclasses.replace(config, seed=seed)
    client = LLMClient(config, stage="the LLM generator")
    return LLMGenerator(client, owns_client=True)
