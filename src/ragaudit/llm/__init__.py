"""The LLM layer: one cached, retrying, accounted client for OpenAI-compatible endpoints.

Importing this package does not import ``openai`` or ``pydantic`` (extra ``llm``); they are
loaded on the first request.  Names are imported lazily from their modules, so using
``ragaudit.llm.config`` (the CLI's options) does not load the client, the cache or the price
table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit._lazy import lazy_package

if TYPE_CHECKING:
    from ragaudit.llm.cache import CacheStats, LLMCache
    from ragaudit.llm.client import LLMClient
    from ragaudit.llm.config import LLMConfig, default_cache_path
    from ragaudit.llm.prices import ModelPrice, PriceTable
    from ragaudit.llm.replies import (
        ChatResult,
        DryRunEstimate,
        InvalidReply,
        JSONOutcome,
        LLMRequestError,
        LLMUnavailableError,
        MalformedReply,
        PlannedCall,
        estimate_tokens,
    )

_WHERE = {
    "CacheStats": "cache", "LLMCache": "cache",
    "LLMClient": "client",
    "ChatResult": "replies", "DryRunEstimate": "replies", "InvalidReply": "replies",
    "JSONOutcome": "replies", "LLMRequestError": "replies", "LLMUnavailableError": "replies",
    "MalformedReply": "replies", "PlannedCall": "replies", "estimate_tokens": "replies",
    "LLMConfig": "config", "default_cache_path": "config",
    "ModelPrice": "prices", "PriceTable": "prices",
}  # fmt: skip

__all__ = [
    "CacheStats",
    "ChatResult",
    "DryRunEstimate",
    "InvalidReply",
    "JSONOutcome",
    "LLMCache",
    "LLMClient",
    "LLMConfig",
    "LLMRequestError",
    "LLMUnavailableError",
    "MalformedReply",
    "ModelPrice",
    "PlannedCall",
    "PriceTable",
    "default_cache_path",
    "estimate_tokens",
]

lazy_package(__name__, _WHERE)
