"""What one chat completion is, and how a reply is checked before anything trusts it.

A reply is accepted only when it is a well-formed chat completion: a JSON object whose
``choices`` is a non-empty list, whose first choice has a ``message`` object with a non-empty
string ``content``, and whose ``usage`` (when present) holds non-negative integer token counts.
Anything else (``{"choices": []}``, ``message: null``, an HTML page, a body that is not JSON,
``choices: "nope"``, ``prompt_tokens: "lots"``) raises :class:`MalformedReply`: a server fault,
retried and never cached, and never read as an empty answer (which would count as a refusal).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ragaudit.exceptions import RagauditError
from ragaudit.llm.cache import CachedReply

__all__ = [
    "ChatResult",
    "DryRunEstimate",
    "InvalidReply",
    "JSONOutcome",
    "LLMRequestError",
    "LLMUnavailableError",
    "MalformedReply",
    "Message",
    "PlannedCall",
    "estimate_tokens",
    "extract_json",
    "reply_from_response",
]

Message = Mapping[str, str]
T = TypeVar("T")


class LLMUnavailableError(RagauditError):
    """The endpoint cannot be used at all (unreachable, bad key, unknown model): abort."""


class LLMRequestError(RagauditError):
    """One request failed for good; the caller records it against that item only."""


class InvalidReply(ValueError):
    """A reply that does not satisfy the expected JSON schema; the message is sent back."""


class MalformedReply(ValueError):
    """The server's reply is not a valid chat completion: a retryable server fault."""


def estimate_tokens(text: str) -> int:
    """The dry-run token heuristic: ``ceil(len(text) / 4)`` (about 4 characters per token
    for English text with GPT-style tokenizers; good to a factor of ~1.3, not to the token).

    Examples
    --------
    >>> estimate_tokens(""), estimate_tokens("abcd"), estimate_tokens("abcde")
    (0, 1, 2)
    """
    return math.ceil(len(text) / 4)


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def extract_json(text: str) -> Any:
    """Parse a JSON object from a reply, tolerating a Markdown code fence around it.

    Raises :class:`InvalidReply` (with the parser's complaint) when there is no JSON object.

    Examples
    --------
    >>> extract_json('```json\\n{"a": 1}\\n```')
    {'a': 1}
    >>> extract_json("sure! here it is")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragaudit.llm.replies.InvalidReply: the reply is not valid JSON (Expecting value at line 1 ...
    """
    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text.strip()
    try:
        value = json.loads(body)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = (
            f" at line {exc.lineno} column {exc.colno}"
            if isinstance(exc, json.JSONDecodeError)
            else ""
        )
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise InvalidReply(
            f"the reply is not valid JSON ({message}{where}); "
            "reply with a single JSON object and nothing else"
        ) from None
    if not isinstance(value, dict):
        raise InvalidReply(f"expected a JSON object, found a JSON {type(value).__name__}")
    return value


@dataclass(frozen=True)
class ChatResult:
    """One completion: its text, token usage, and whether it came from the cache."""

    text: str
    input_tokens: int
    output_tokens: int
    cached: bool
    finish_reason: str | None = None


@dataclass(frozen=True)
class JSONOutcome(Generic[T]):
    """A validated structured reply, or the reason there is none (``value is None``)."""

    value: T | None
    error: str | None
    attempts: int


@dataclass(frozen=True)
class PlannedCall:
    """A first-attempt request, for dry runs: the messages and what they are for.

    ``schema`` and ``max_tokens`` are what :meth:`LLMClient.chat_json` would send, ``seed``
    the explicit seed :meth:`LLMClient.chat` would send (all part of the cache key).
    """

    messages: tuple[Message, ...]
    prompt_version: str
    repeat: int = 0
    json_mode: bool = False
    expected_output_tokens: int = 200
    schema: Mapping[str, Any] | None = None
    max_tokens: int | None = None
    seed: int | None = None


@dataclass(frozen=True)
class DryRunEstimate:
    """What a run would cost before spending anything (chars/4 heuristic; retries excluded).

    ``cost_usd`` is ``None`` when the model is not in the price table.
    """

    model: str
    calls: int
    cached_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "model": self.model,
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "new_calls": self.calls - self.cached_calls,
            "estimated_input_tokens": self.input_tokens,
            "estimated_output_tokens": self.output_tokens,
            "estimated_cost_usd": self.cost_usd,
            "method": "chars/4 heuristic; schema retries not included",
        }


def _field(obj: Any, name: str) -> Any:
    """``obj.name`` for SDK objects, ``obj[name]`` for plain dicts; ``None`` when absent."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _token_count(usage: Any, name: str) -> int | None:
    value = _field(usage, name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MalformedReply(f"usage.{name}: expected an integer >= 0, found {value!r:.40}")
    return value


def reply_from_response(response: Any, messages: Sequence[Message]) -> CachedReply:
    """Check a chat-completion response and return what is worth caching.

    Raises :class:`MalformedReply` naming the first defect (see the module docstring).
    ``usage`` may be absent (some local servers omit it): the tokens are then estimated
    with :func:`estimate_tokens`.

    Examples
    --------
    >>> ok = {"choices": [{"message": {"content": "4"}, "finish_reason": "stop"}],
    ...       "usage": {"prompt_tokens": 9, "completion_tokens": 1}}
    >>> reply_from_response(ok, [])
    CachedReply(text='4', input_tokens=9, output_tokens=1, finish_reason='stop')
    >>> reply_from_response({"choices": []}, [])
    Traceback (most recent call last):
    ...
    ragaudit.llm.replies.MalformedReply: choices: expected a non-empty list, found []
    """
    if isinstance(response, (str, bytes)):
        kind = "an empty body" if not response else f"text ({response[:60]!r})"
        raise MalformedReply(f"expected a JSON chat completion, found {kind}")
    choices = _field(response, "choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedReply(f"choices: expected a non-empty list, found {choices!r:.60}")
    choice = choices[0]
    message = _field(choice, "message")
    if message is None or isinstance(message, (str, int, float, list)):
        raise MalformedReply(f"choices[0].message: expected an object, found {message!r:.60}")
    text = _field(message, "content")
    if not isinstance(text, str) or not text.strip():
        raise MalformedReply(
            f"choices[0].message.content: expected non-empty text, found {text!r:.60}"
        )
    finish = _field(choice, "finish_reason")
    finish = finish if isinstance(finish, str) else None
    usage = _field(response, "usage")
    input_tokens = None if usage is None else _token_count(usage, "prompt_tokens")
    if input_tokens is not None:
        output_tokens = _token_count(usage, "completion_tokens") or 0
    else:  # some servers omit usage: fall back to the documented heuristic
        input_tokens = sum(estimate_tokens(m["content"]) for m in messages)
        output_tokens = estimate_tokens(text)
    return CachedReply(text, input_tokens, output_tokens, finish)
