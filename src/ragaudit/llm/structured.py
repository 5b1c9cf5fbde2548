"""Structured output: which ``response_format`` to send, and how to ask again after a bad reply.

Three modes, tried in this order and lowered only when a server *refuses* one
(HTTP 400/422/501 whose message names ``response_format``, ``json_schema``, a grammar or an
unsupported feature: see :func:`is_format_refusal`):

1. ``json_schema``: ``{"type": "json_schema", "json_schema": {"name", "strict": true,
   "schema"}}``.  OpenAI constrains decoding to the schema; llama.cpp's server compiles it to
   a grammar, so even a 135M-parameter model cannot emit anything but schema-shaped JSON;
2. ``json_object``: any JSON object.  Small models given only this often produce runaway JSON
   (a list that never closes) until the token cap cuts it;
3. ``text``: no ``response_format`` at all; the reply is still parsed and validated.

A reply that fails validation, or that was cut by the token cap (``finish_reason ==
"length"``: the JSON cannot be complete), is answered by a *repair request*: the original
system message, and the original user message followed by a repair section that quotes the
start of the rejected reply, the parse error, the attempt number and the JSON schema again.
The repair request therefore never repeats the original byte for byte (at temperature 0 an
identical request gets the identical invalid reply), each attempt differs from the one before,
and its cache key is its own: the original request's cache entry keeps the original reply.
The roles stay ``system, user`` so that chat templates that insist on alternating roles
accept it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ragaudit.llm.replies import LLMRequestError, Message

__all__ = [
    "MODES",
    "REPAIR_MARKER",
    "FormatRefused",
    "Mode",
    "is_format_refusal",
    "repair_messages",
    "response_format",
]

Mode = Literal["json_schema", "json_object", "text"]
#: The modes from the most constrained to the least; a refusal moves one step right.
MODES: tuple[Mode, ...] = ("json_schema", "json_object", "text")

#: The first words of every repair section (tests and logs look for it).
REPAIR_MARKER = "REPAIR:"
_EXCERPT = 300  # characters of the rejected reply quoted back: enough to see the mistake

_REFUSAL_STATUS = frozenset({400, 415, 422, 501})
_REFUSAL_WORDS = re.compile(
    r"response_format|json_schema|json_object|schema|grammar|structured output|"
    r"not supported|unsupported|not implemented",
    re.IGNORECASE,
)


class FormatRefused(LLMRequestError):
    """The server refused the requested ``response_format``: retry with the next mode."""


def is_format_refusal(status: int, message: str) -> bool:
    """Whether an HTTP error answering a request with a ``response_format`` refuses the format.

    Examples
    --------
    >>> is_format_refusal(400, "response_format type json_schema is not supported")
    True
    >>> is_format_refusal(400, "this model's maximum context length is 4096 tokens")
    False
    >>> is_format_refusal(500, "unsupported")  # a server fault, retried elsewhere
    False
    """
    return status in _REFUSAL_STATUS and bool(_REFUSAL_WORDS.search(message or ""))


def response_format(mode: Mode, schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The ``response_format`` request field for ``mode`` (``None``: send no field).

    ``schema`` is ``{"name": str, "schema": {...}}``; ``json_schema`` mode needs it.

    Examples
    --------
    >>> response_format("json_object", None)
    {'type': 'json_object'}
    >>> fmt = response_format("json_schema", {"name": "score", "schema": {"type": "object"}})
    >>> fmt["json_schema"]
    {'name': 'score', 'strict': True, 'schema': {'type': 'object'}}
    >>> response_format("text", None) is None
    True
    """
    if mode == "text":
        return None
    if mode == "json_object" or schema is None:
        return {"type": "json_object"}
    return {
        "type": "json_schema",
        "json_schema": {"name": schema["name"], "strict": True, "schema": schema["schema"]},
    }


def _excerpt(text: str, limit: int = _EXCERPT) -> str:
    """The first ``limit`` characters of ``text``, saying how much was left out.

    >>> _excerpt("abcdef", 4)
    'abcd... [2 more characters]'
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


def repair_messages(
    messages: Sequence[Message],
    rejected: str,
    problem: str,
    schema: Mapping[str, Any] | None,
    attempt: int,
    attempts: int,
) -> list[dict[str, str]]:
    """The request to send after reply ``attempt`` (1-based) of ``attempts`` was rejected.

    The messages are copied; the last user message gets a repair section appended that quotes
    ``_excerpt(rejected)``, ``problem`` and the schema (or points to the one in the
    instructions), so the request differs from the original and from every earlier repair.

    Examples
    --------
    >>> original = [{"role": "system", "content": "Rate it."}, {"role": "user", "content": "Q"}]
    >>> fixed = repair_messages(original, '{"score": 9', "not valid JSON", None, 1, 3)
    >>> [m["role"] for m in fixed], fixed[0] == original[0], fixed[1] != original[1]
    (['system', 'user'], True, True)
    >>> print(fixed[1]["content"])  # doctest: +NORMALIZE_WHITESPACE
    Q
    <BLANKLINE>
    REPAIR: your reply (attempt 1 of 3) was rejected: not valid JSON
    It began:
    <rejected>
    {"score": 9
    </rejected>
    Reply again with only one complete JSON object (no prose, no code fence) that matches the
    schema in the instructions. Keep every string short.
    """
    if schema is not None:
        shape = "this JSON schema:\n" + json.dumps(
            schema["schema"], separators=(",", ":"), sort_keys=True
        )
    else:
        shape = "the schema in the instructions."
    section = (
        f"{REPAIR_MARKER} your reply (attempt {attempt} of {attempts}) was rejected: {problem}\n"
        f"It began:\n<rejected>\n{_excerpt(rejected)}\n</rejected>\n"
        "Reply again with only one complete JSON object (no prose, no code fence) that matches "
        f"{shape} Keep every string short."
    )
    copied = [dict(m) for m in messages]
    last_user = max((i for i, m in enumerate(copied) if m.get("role") == "user"), default=None)
    if last_user is None:
        return [*copied, {"role": "user", "content": section}]
    copied[last_user]["content"] = f"{copied[last_user]['content']}\n\n{section}"
    return copied
