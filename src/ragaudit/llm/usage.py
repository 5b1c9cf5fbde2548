"""What an :class:`~ragaudit.llm.client.LLMClient` has done so far: calls, tokens, repairs."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Totals"]


@dataclass
class Totals:
    """Running counts, updated under ``lock`` by the client's worker threads.

    Examples
    --------
    >>> t = Totals(calls=3, cache_hits=1)
    >>> t.counts()["calls"], t.counts()["structured"]["repaired"]
    (3, 0)
    """

    calls: int = 0
    cache_hits: int = 0
    http_requests: int = 0
    retries: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cached_output_tokens: int = 0
    # structured output (chat_json): the formats used, replies rejected and repairs
    formats: dict[str, int] = field(default_factory=dict)
    format_fallbacks: list[str] = field(default_factory=list)
    invalid_replies: int = 0
    cut_at_length: int = 0
    repair_requests: int = 0
    repaired: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def counts(self) -> dict[str, Any]:
        """The counts, JSON-ready (call under ``lock`` for a consistent snapshot).

        ``structured.formats`` counts the JSON calls by the ``response_format`` that answered
        them; ``format_fallbacks`` lists each refusal that lowered it; ``invalid_replies``
        (of which ``cut_at_length`` were cut by the token cap) were each followed by a repair
        request while the budget lasted (``repair_requests``); ``repaired`` calls ended valid
        after at least one repair.
        """
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "http_requests": self.http_requests,
            "retries": self.retries,
            "failed_calls": self.failed_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cached_output_tokens": self.cached_output_tokens,
            "structured": {
                "formats": dict(sorted(self.formats.items())),
                "format_fallbacks": list(self.format_fallbacks),
                "invalid_replies": self.invalid_replies,
                "cut_at_length": self.cut_at_length,
                "repair_requests": self.repair_requests,
                "repaired": self.repaired,
            },
        }
