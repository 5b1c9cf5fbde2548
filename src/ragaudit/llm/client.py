"""One client for every LLM call ragaudit makes: cache, retries, concurrency and accounting.

Requests go through the official ``openai`` package (imported lazily, extra ``llm``) with
``max_retries=0`` so that the retry policy is ours, seeded and testable:

* timeouts, connection errors, HTTP 429 and 5xx are retried up to ``max_retries`` times,
  waiting ``min(backoff_max, backoff_base * 2**attempt) * u`` with ``u ~ U[0.5, 1]`` drawn from
  a generator seeded by ``(seed, request key, attempt)``, or what ``Retry-After`` asks;
* an endpoint that stays unreachable, or rejects the key / model (401, 403, 404), aborts the
  whole batch at once with the URL in the message (:class:`LLMUnavailableError`); before the
  endpoint has answered once, a connection error is retried only once, so a wrong URL fails
  in about a second;
* other failures (e.g. 400 for an over-long prompt, or retries exhausted) fail only that item
  (:class:`LLMRequestError`), which judges record as ``judge_error``.

Every successful reply is committed to the sqlite cache before it is returned, so Ctrl-C
loses at most the requests in flight and a rerun sends nothing it already paid for.
"""

from __future__ import annotations

import json
import math
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ragaudit._io import require
from ragaudit.exceptions import RagauditError
from ragaudit.llm.cache import CachedReply, LLMCache, cache_key
from ragaudit.llm.config import LLMConfig
from ragaudit.llm.prices import PriceTable

__all__ = [
    "ChatResult",
    "DryRunEstimate",
    "InvalidReply",
    "JSONOutcome",
    "LLMClient",
    "LLMRequestError",
    "LLMUnavailableError",
    "Message",
    "PlannedCall",
    "estimate_tokens",
    "extract_json",
]

Message = Mapping[str, str]
T = TypeVar("T")
R = TypeVar("R")

_RETRY_AFTER_CAP = 300.0  # never sleep longer than this on a server's say-so


class LLMUnavailableError(RagauditError):
    """The endpoint cannot be used at all (unreachable, bad key, unknown model): abort."""


class LLMRequestError(RagauditError):
    """One request failed for good; the caller records it against that item only."""


class InvalidReply(ValueError):
    """A reply that does not satisfy the expected JSON schema; the message is sent back."""


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
    ragaudit.llm.client.InvalidReply: the reply is not valid JSON (Expecting value at line 1 ...
    """
    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text.strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise InvalidReply(
            f"the reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
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
    """A first-attempt request, for dry runs: the messages and what they are for."""

    messages: tuple[Message, ...]
    prompt_version: str
    repeat: int = 0
    json_mode: bool = False
    expected_output_tokens: int = 200


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


@dataclass
class _Totals:
    calls: int = 0
    cache_hits: int = 0
    http_requests: int = 0
    retries: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cached_output_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class LLMClient:
    """Chat completions against an OpenAI-compatible endpoint, cached and accounted.

    Parameters
    ----------
    config : LLMConfig
        Endpoint, model and policies; :meth:`LLMConfig.require_endpoint` is checked here.
    cache : LLMCache, optional
        Defaults to the file named by the config when ``config.use_cache`` (else no cache).
    prices : PriceTable, optional
        Defaults to ``config.prices_path`` or the shipped table.
    sleep : callable, default time.sleep
        Used for backoff waits (tests record them instead of waiting).
    stage : str
        Named in the missing-endpoint message ("the LLM judges needs an endpoint...").

    Examples
    --------
    Without a server, the client can still plan a run (no request is sent):

    >>> cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="gpt-4o-mini", use_cache=False)
    >>> with LLMClient(cfg) as client:
    ...     plan = [PlannedCall(({"role": "user", "content": "x" * 400},), "demo-v1",
    ...                         expected_output_tokens=50)]
    ...     est = client.estimate(plan)
    >>> est.calls, est.input_tokens, est.output_tokens, est.cost_usd
    (1, 100, 50, 4.5e-05)
    """

    def __init__(
        self,
        config: LLMConfig,
        cache: LLMCache | None = None,
        prices: PriceTable | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        stage: str = "this LLM stage",
    ) -> None:
        config.require_endpoint(stage)
        self.config = config
        self.model: str = config.model or ""
        self.endpoint = config.endpoint
        self._owns_cache = False
        if cache is None and config.use_cache:
            cache = LLMCache(config.resolved_cache_path())
            self._owns_cache = True
        self.cache = cache if config.use_cache else None
        self.prices = prices if prices is not None else PriceTable.load(config.prices_path)
        self._sleep = sleep
        self._sdk: Any = None
        self._sdk_lock = threading.Lock()
        self._totals = _Totals()
        self._reached = False  # has the endpoint answered at least once?

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        """Close the HTTP client and, if this client opened it, the cache."""
        if self._sdk is not None:
            self._sdk.close()
            self._sdk = None
        if self._owns_cache and self.cache is not None:
            self.cache.close()
            self._owns_cache = False

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _openai(self) -> Any:
        with self._sdk_lock:
            if self._sdk is None:
                openai = require("openai", extra="llm", feature="the LLM layer")
                self._sdk = openai.OpenAI(
                    base_url=self.config.base_url,
                    # Local servers (Ollama, llama.cpp, vLLM) need no key, but the SDK wants one.
                    api_key=self.config.api_key or "no-key-needed",
                    timeout=self.config.timeout,
                    max_retries=0,
                )
            return self._sdk

    # -- one call --------------------------------------------------------------------------
    def _params(self, repeat: int, json_mode: bool) -> dict[str, Any]:
        # Repeats use seed + repeat so that a seeded server samples differently per repeat.
        seed = None if self.config.seed is None else self.config.seed + repeat
        return {
            "temperature": self.config.temperature,
            "seed": seed,
            "max_tokens": self.config.max_tokens,
            "json_mode": json_mode,
            "repeat": repeat,
        }

    def key_for(
        self,
        messages: Sequence[Message],
        prompt_version: str,
        repeat: int = 0,
        json_mode: bool = False,
    ) -> str:
        """The cache key of a request (see :func:`ragaudit.llm.cache.cache_key`)."""
        return cache_key(
            endpoint=self.endpoint,
            model=self.model,
            prompt_version=prompt_version,
            messages=[dict(m) for m in messages],
            params=self._params(repeat, json_mode),
        )

    def chat(
        self,
        messages: Sequence[Message],
        *,
        prompt_version: str,
        repeat: int = 0,
        json_mode: bool = False,
    ) -> ChatResult:
        """One chat completion, from the cache when possible.

        Raises :class:`LLMRequestError` when this request fails for good and
        :class:`LLMUnavailableError` when the endpoint is unusable.
        """
        key = self.key_for(messages, prompt_version, repeat, json_mode)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                with self._totals.lock:
                    self._totals.calls += 1
                    self._totals.cache_hits += 1
                    self._totals.cached_input_tokens += hit.input_tokens
                    self._totals.cached_output_tokens += hit.output_tokens
                return ChatResult(
                    hit.text, hit.input_tokens, hit.output_tokens, True, hit.finish_reason
                )
        try:
            reply = self._send(messages, key, repeat, json_mode)
        except LLMRequestError:
            with self._totals.lock:
                self._totals.calls += 1
                self._totals.failed_calls += 1
            raise
        if self.cache is not None:
            self.cache.put(
                key,
                endpoint=self.endpoint,
                model=self.model,
                prompt_version=prompt_version,
                reply=reply,
            )
        with self._totals.lock:
            self._totals.calls += 1
            self._totals.input_tokens += reply.input_tokens
            self._totals.output_tokens += reply.output_tokens
        return ChatResult(
            reply.text, reply.input_tokens, reply.output_tokens, False, reply.finish_reason
        )

    def _send(
        self, messages: Sequence[Message], key: str, repeat: int, json_mode: bool
    ) -> CachedReply:
        openai = require("openai", extra="llm", feature="the LLM layer")
        sdk = self._openai()
        params = self._params(repeat, json_mode)
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": params["temperature"],
        }
        if params["seed"] is not None:
            request["seed"] = params["seed"]
        if params["max_tokens"] is not None:
            request["max_tokens"] = params["max_tokens"]
        if json_mode:
            request["response_format"] = {"type": "json_object"}
        jitter = random.Random(f"{self.config.seed}:{key}")
        where = self.endpoint
        for attempt in range(self.config.max_retries + 1):
            with self._totals.lock:
                self._totals.http_requests += 1
            wait: float | None = None
            try:
                response = sdk.chat.completions.create(**request)
            except openai.APITimeoutError:
                reason = f"timed out after {self.config.timeout:g} s"
            except openai.APIConnectionError as exc:
                reason = f"connection error ({exc.__class__.__name__}: {exc})"
                # Until the endpoint has answered once, a refused connection is most likely a
                # wrong URL or a server that is not running: fail after one retry, not four.
                budget = (
                    self.config.max_retries if self._reached else min(1, self.config.max_retries)
                )
                if attempt >= budget:
                    raise LLMUnavailableError(
                        f"cannot reach the LLM endpoint {where}: {reason}; check --llm-base-url "
                        "/ RAGAUDIT_LLM_BASE_URL and that the server is running"
                    ) from None
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status in (401, 403):
                    raise LLMUnavailableError(
                        f"the LLM endpoint {where} refused the request (HTTP {status}); check "
                        "the key in RAGAUDIT_LLM_API_KEY / OPENAI_API_KEY"
                    ) from None
                if status == 404:
                    raise LLMUnavailableError(
                        f"the LLM endpoint {where} answered HTTP 404 for model "
                        f"{self.model!r}; check --llm-base-url (usually ends in /v1) and "
                        "--llm-model"
                    ) from None
                if status != 429 and status < 500:
                    hint = ""
                    if json_mode and status == 400:
                        hint = " (if the server does not support response_format, pass "
                        hint += "--no-llm-json-mode)"
                    raise LLMRequestError(
                        f"HTTP {status} from {where}: {_short(exc.message)}{hint}"
                    ) from None
                reason = f"HTTP {status}"
                wait = _retry_after(exc.response.headers if exc.response is not None else {})
            else:
                self._reached = True
                return _reply_from(response, messages)
            if attempt == self.config.max_retries:
                raise LLMRequestError(
                    f"request to {where} failed after {attempt + 1} attempts: {reason}"
                )
            if wait is None:
                wait = min(self.config.backoff_max, self.config.backoff_base * 2**attempt)
                wait *= jitter.uniform(0.5, 1.0)
            with self._totals.lock:
                self._totals.retries += 1
            self._sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- structured output -----------------------------------------------------------------
    def chat_json(
        self,
        messages: Sequence[Message],
        parse: Callable[[Any], T],
        *,
        prompt_version: str,
        repeat: int = 0,
    ) -> JSONOutcome[T]:
        """Ask for JSON, validate it with ``parse``, and retry with the error on failure.

        ``parse`` receives the decoded JSON object and raises :class:`InvalidReply` (or a
        ``ValueError``) with a message the model can act on.  After
        ``config.schema_retries`` follow-ups the outcome carries ``error`` instead of a value.
        A request that fails for good also becomes an ``error`` (never a verdict).
        """
        conversation = [dict(m) for m in messages]
        attempts = self.config.schema_retries + 1
        problem = "no attempt made"
        for attempt in range(attempts):
            try:
                result = self.chat(
                    conversation,
                    prompt_version=prompt_version,
                    repeat=repeat,
                    json_mode=self.config.json_mode,
                )
            except LLMRequestError as exc:
                return JSONOutcome(None, f"request failed: {exc}", attempt + 1)
            try:
                return JSONOutcome(parse(extract_json(result.text)), None, attempt + 1)
            except (InvalidReply, ValueError) as exc:
                problem = _short(str(exc), 300)
            conversation = [
                *conversation,
                {"role": "assistant", "content": result.text},
                {
                    "role": "user",
                    "content": f"Your reply was rejected: {problem}\n"
                    "Answer again with only the corrected JSON object.",
                },
            ]
        return JSONOutcome(None, f"invalid reply after {attempts} attempts: {problem}", attempts)

    # -- many calls ------------------------------------------------------------------------
    def map(
        self,
        fn: Callable[[T], R],
        items: Iterable[T],
        progress: Callable[[int, int], None] | None = None,
    ) -> list[R]:
        """Apply ``fn`` to every item with at most ``max_concurrency`` in flight.

        Results come back in input order.  ``progress(done, total)`` is called from the calling
        thread after each item.  :class:`LLMUnavailableError` (and Ctrl-C) cancel the items not
        yet started and propagate; everything already completed is in the cache.
        """
        work = list(items)
        if not work:
            return []
        results: list[Any] = [None] * len(work)
        executor = ThreadPoolExecutor(
            max_workers=min(self.config.max_concurrency, len(work)),
            thread_name_prefix="ragaudit-llm",
        )
        futures = {executor.submit(fn, item): index for index, item in enumerate(work)}
        try:
            for done, future in enumerate(as_completed(futures), start=1):
                results[futures[future]] = future.result()
                if progress is not None:
                    progress(done, len(work))
        except KeyboardInterrupt:
            # Requests in flight finish in the background and land in the cache.
            executor.shutdown(wait=False, cancel_futures=True)
            raise
        except BaseException:
            executor.shutdown(wait=True, cancel_futures=True)
            raise
        executor.shutdown(wait=True)
        return results

    # -- accounting ------------------------------------------------------------------------
    def estimate(self, calls: Iterable[PlannedCall]) -> DryRunEstimate:
        """Dry run: count calls, cache hits and tokens (chars/4) without sending anything."""
        n_calls = n_cached = input_tokens = output_tokens = 0
        for call in calls:
            n_calls += 1
            if (
                self.cache is not None
                and self.key_for(call.messages, call.prompt_version, call.repeat, call.json_mode)
                in self.cache
            ):
                n_cached += 1
                continue
            input_tokens += sum(estimate_tokens(m["content"]) for m in call.messages)
            output_tokens += call.expected_output_tokens
        return DryRunEstimate(
            model=self.model,
            calls=n_calls,
            cached_calls=n_cached,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=self.prices.cost(self.model, input_tokens, output_tokens),
        )

    def run_cost(self) -> dict[str, Any]:
        """What the results cost to produce, cached or not: the same on every rerun.

        ``input_tokens``/``output_tokens`` add fresh and cached replies, and ``cost_usd`` prices
        them all, so a saved run records one stable figure however warm the cache was (what
        *this* invocation spent is in :meth:`usage_summary`).

        Examples
        --------
        >>> cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="gpt-4o-mini", use_cache=False)
        >>> with LLMClient(cfg) as client:
        ...     client.run_cost()["calls"], client.run_cost()["cost_usd"]
        (0, 0.0)
        """
        t = self._totals
        with t.lock:
            calls = t.calls - t.failed_calls
            input_tokens = t.input_tokens + t.cached_input_tokens
            output_tokens = t.output_tokens + t.cached_output_tokens
        return {
            "endpoint": self.endpoint,
            "model": self.model,
            "calls": calls,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_usd": self.prices.cost(self.model, input_tokens, output_tokens),
            "price_table": self.prices.source if self.prices.lookup(self.model) else None,
        }

    def usage_summary(self) -> dict[str, Any]:
        """Totals so far, JSON-ready, for a saved run's summary (no secrets).

        ``cost_usd`` covers the tokens actually sent (cache hits are free) and is ``None``
        when the model has no entry in the price table.
        """
        t = self._totals
        with t.lock:
            return {
                "endpoint": self.endpoint,
                "model": self.model,
                "calls": t.calls,
                "cache_hits": t.cache_hits,
                "http_requests": t.http_requests,
                "retries": t.retries,
                "failed_calls": t.failed_calls,
                "input_tokens": t.input_tokens,
                "output_tokens": t.output_tokens,
                "cached_input_tokens": t.cached_input_tokens,
                "cached_output_tokens": t.cached_output_tokens,
                "cost_usd": self.prices.cost(self.model, t.input_tokens, t.output_tokens),
                "price_table": self.prices.source if self.prices.lookup(self.model) else None,
            }


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a 429/503 asks us to wait (``retry-after-ms`` or numeric ``retry-after``)."""
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
        if math.isfinite(seconds) and seconds >= 0:
            return min(seconds, _RETRY_AFTER_CAP)
    return None


def _reply_from(response: Any, messages: Sequence[Message]) -> CachedReply:
    choice = response.choices[0] if getattr(response, "choices", None) else None
    text = "" if choice is None else (choice.message.content or "")
    usage = getattr(response, "usage", None)
    if usage is not None and usage.prompt_tokens is not None:
        input_tokens = int(usage.prompt_tokens)
        output_tokens = int(usage.completion_tokens or 0)
    else:  # some servers omit usage: fall back to the documented heuristic
        input_tokens = sum(estimate_tokens(m["content"]) for m in messages)
        output_tokens = estimate_tokens(text)
    finish = None if choice is None else getattr(choice, "finish_reason", None)
    return CachedReply(text, input_tokens, output_tokens, finish)
