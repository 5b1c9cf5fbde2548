"""The LLM layer: one cached, retrying, accounted client for OpenAI-compatible endpoints.

Importing this package does not import ``openai`` or ``pydantic`` (extra ``llm``); they are
loaded on the first request.
"""

from __future__ import annotations

from ragaudit.llm.cache import CacheStats, LLMCache
from ragaudit.llm.client import (
    ChatResult,
    DryRunEstimate,
    InvalidReply,
    JSONOutcome,
    LLMClient,
    LLMRequestError,
    LLMUnavailableError,
    MalformedReply,
    PlannedCall,
    estimate_tokens,
)
from ragaudit.llm.config import LLMConfig, default_cache_path
from ragaudit.llm.prices import ModelPrice, PriceTable

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
