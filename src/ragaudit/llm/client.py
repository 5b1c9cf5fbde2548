"""One client for every LLM call ragaudit makes: cache, retries, concurrency and accounting.

Requests go through the official ``openai`` package (imported lazily, extra ``llm``); the retry
policy and the sorting of failures live in :mod:`ragaudit.llm.transport`, the checks a reply
must pass in :mod:`ragaudit.llm.replies`.  Only a reply that passed them is cached: a server
fault (``{"choices": []}``, an HTML page, a body that is not JSON) is retried, and after the
retries becomes :class:`LLMRequestError` for that item, never an answer.

Every successful reply is committed to the sqlite cache before it is returned, so Ctrl-C
loses at most the requests in flight and a rerun sends nothing it already paid for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ragaudit._io import require
from ragaudit.llm.cache import CachedReply, LLMCache, cache_key
from ragaudit.llm.concurrency import map_in_order
from ragaudit.llm.config import LLMConfig
from ragaudit.llm.prices import PriceTable
from ragaudit.llm.replies import (
    ChatResult,
    DryRunEstimate,
    InvalidReply,
    JSONOutcome,
    LLMRequestError,
    Message,
    PlannedCall,
    estimate_tokens,
    extract_json,
)
from ragaudit.llm.structured import (
    MODES,
    FormatRefused,
    Mode,
    repair_messages,
    response_format,
)
from ragaudit.llm.transport import http_client, redact_secrets, send_with_retries, short
from ragaudit.llm.usage import Totals

__all__ = ["LLMClient"]  # the reply types live in ragaudit.llm.replies

T = TypeVar("T")
R = TypeVar("R")


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
        Named in the missing-endpoint message ("the LLM judge stage needs an endpoint...").

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
        self._totals = Totals()
        self._reached = False  # has the endpoint answered at least once?
        # The most constrained response_format this endpoint has not refused (this run).
        self._format: Mode = "json_schema"
        self._secrets = config.secrets

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
                # A query string (``?api-key=...`` on some gateways) is sent with every
                # request as the SDK's default query; the SDK would mangle it in base_url.
                parts = urlsplit(self.config.base_url or "")
                self._sdk = openai.OpenAI(
                    base_url=urlunsplit(parts._replace(query="", fragment="")),
                    default_query=dict(parse_qsl(parts.query, keep_blank_values=True)) or None,
                    # Local servers (Ollama, llama.cpp, vLLM) need no key, but the SDK wants one.
                    api_key=self.config.api_key or "no-key-needed",
                    timeout=self.config.timeout,
                    max_retries=0,
                    http_client=http_client(openai),  # no redirect to another origin
                )
            return self._sdk

    # -- one call --------------------------------------------------------------------------
    def _params(
        self,
        repeat: int,
        json_mode: bool,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> dict[str, Any]:
        # An explicit seed (the run's (question, repeat) unit seed) wins; else repeats use
        # seed + repeat so that a seeded server samples differently per repeat.
        if seed is None:
            seed = None if self.config.seed is None else self.config.seed + repeat
        params: dict[str, Any] = {
            "temperature": self.config.temperature,
            "seed": seed,
            # An explicit --llm-max-tokens wins; else the caller's cap (a judge's, sized to
            # its schema); else the server's default.
            "max_tokens": self.config.max_tokens if self.config.max_tokens else max_tokens,
            "json_mode": json_mode,
            "repeat": repeat,
        }
        if json_mode and schema is not None:  # json_object requests keep their old keys
            params["response_format"] = "json_schema"
            params["schema"] = dict(schema)
        return params

    def key_for(
        self,
        messages: Sequence[Message],
        prompt_version: str,
        repeat: int = 0,
        json_mode: bool = False,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> str:
        """The cache key of a request (see :func:`ragaudit.llm.cache.cache_key`).

        ``schema`` (``{"name", "schema"}``) with ``json_mode`` means a ``json_schema``
        request; without it, ``json_mode`` means ``json_object``.  ``seed`` overrides the
        request's seed (else the config's seed plus ``repeat``).
        """
        return cache_key(
            endpoint=self.endpoint,
            model=self.model,
            prompt_version=prompt_version,
            messages=[dict(m) for m in messages],
            params=self._params(repeat, json_mode, schema, max_tokens, seed),
        )

    def chat(
        self,
        messages: Sequence[Message],
        *,
        prompt_version: str,
        repeat: int = 0,
        json_mode: bool = False,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> ChatResult:
        """One chat completion, from the cache when possible.

        ``json_mode`` sends ``response_format``: ``json_schema`` with ``schema``
        (``{"name": str, "schema": {...}}``), else ``json_object``.  ``max_tokens`` caps the
        reply unless the config sets its own cap.  ``seed`` is the request's seed (a run's
        (question, repeat) unit seed); without it, the config's seed plus ``repeat``.

        Raises :class:`LLMRequestError` when this request fails for good (its subclass
        :class:`~ragaudit.llm.structured.FormatRefused` when the server refused the
        ``response_format``) and :class:`LLMUnavailableError` when the endpoint is unusable.
        """
        key = self.key_for(messages, prompt_version, repeat, json_mode, schema, max_tokens, seed)
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
            params = self._params(repeat, json_mode, schema, max_tokens, seed)
            reply = self._send(messages, key, params)
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
        self, messages: Sequence[Message], key: str, params: Mapping[str, Any]
    ) -> CachedReply:
        sdk = self._openai()
        json_mode = bool(params["json_mode"])
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
            mode: Mode = "json_schema" if "schema" in params else "json_object"
            request["response_format"] = response_format(mode, params.get("schema"))

        def on_attempt(retry: bool) -> None:
            with self._totals.lock:
                self._totals.http_requests += 1
                self._totals.retries += int(retry)

        def on_reached() -> None:
            self._reached = True

        return send_with_retries(
            create=sdk.chat.completions.create,
            request=request,
            messages=messages,
            config=self.config,
            model=self.model,
            where=self.endpoint,
            key=key,
            json_mode=json_mode,
            reached=lambda: self._reached,
            on_reached=on_reached,
            on_attempt=on_attempt,
            sleep=self._sleep,
        )

    # -- structured output -----------------------------------------------------------------
    def _structured_chat(
        self,
        messages: Sequence[Message],
        prompt_version: str,
        repeat: int,
        schema: Mapping[str, Any] | None,
        max_tokens: int | None,
    ) -> ChatResult:
        """:meth:`chat` in the most constrained format this endpoint has not refused.

        A refusal lowers the format for the rest of this client's life (``json_schema`` ->
        ``json_object`` -> ``text``) and is recorded in :meth:`usage_summary`.
        """
        while True:
            with self._totals.lock:
                mode = self._format
            if not self.config.json_mode:
                mode = "text"
            elif schema is None and mode == "json_schema":
                mode = "json_object"
            try:
                result = self.chat(
                    messages,
                    prompt_version=prompt_version,
                    repeat=repeat,
                    json_mode=mode != "text",
                    schema=schema if mode == "json_schema" else None,
                    max_tokens=max_tokens,
                )
            except FormatRefused as exc:
                with self._totals.lock:
                    lower = MODES[MODES.index(mode) + 1]
                    if MODES.index(self._format) <= MODES.index(mode):
                        self._format = lower  # another thread may have lowered it already
                        self._totals.format_fallbacks.append(f"{mode} -> {lower}: {exc}")
                continue
            with self._totals.lock:
                self._totals.formats[mode] = self._totals.formats.get(mode, 0) + 1
            return result

    def chat_json(
        self,
        messages: Sequence[Message],
        parse: Callable[[Any], T],
        *,
        prompt_version: str,
        repeat: int = 0,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> JSONOutcome[T]:
        """Ask for JSON, validate it with ``parse``, and send a repair request on failure.

        ``schema`` (``{"name": str, "schema": {...}}``) is sent as ``response_format``
        ``json_schema``; a server that refuses it gets ``json_object``, then no format (see
        :mod:`ragaudit.llm.structured`).  ``max_tokens`` bounds the reply (a judge sizes it
        to its schema).  ``parse`` receives the decoded JSON object and raises
        :class:`InvalidReply` (or a ``ValueError``) with a message the model can act on.  A
        reply cut by the token cap (``finish_reason == "length"``) is invalid too.  Each of
        the ``config.schema_retries`` follow-ups is a repair request quoting the rejected
        reply, the error and the schema, never the same bytes; after them the outcome
        carries ``error`` instead of a value.  A request that fails for good also becomes an
        ``error`` (never a verdict).
        """
        attempts = self.config.schema_retries + 1
        problem = "no attempt made"
        request = [dict(m) for m in messages]
        for attempt in range(attempts):
            try:
                result = self._structured_chat(request, prompt_version, repeat, schema, max_tokens)
            except LLMRequestError as exc:
                return JSONOutcome(None, f"request failed: {exc}", attempt + 1)
            try:
                if result.finish_reason == "length":
                    raise InvalidReply(
                        f"the reply was cut at the token limit after {result.output_tokens} "
                        "tokens, before the JSON object was complete; give a shorter answer"
                    )
                value = parse(extract_json(result.text))
            except (InvalidReply, ValueError) as exc:
                problem = short(redact_secrets(str(exc), self._secrets), 300)
                with self._totals.lock:
                    self._totals.invalid_replies += 1
                    self._totals.cut_at_length += int(result.finish_reason == "length")
                    self._totals.repair_requests += int(attempt + 1 < attempts)
            else:
                if attempt:
                    with self._totals.lock:
                        self._totals.repaired += 1
                return JSONOutcome(value, None, attempt + 1)
            request = repair_messages(messages, result.text, problem, schema, attempt + 1, attempts)
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
        return map_in_order(fn, items, self.config.max_concurrency, progress)

    # -- accounting ------------------------------------------------------------------------
    def estimate(self, calls: Iterable[PlannedCall]) -> DryRunEstimate:
        """Dry run: count calls, cache hits and tokens (chars/4) without sending anything."""
        n_calls = n_cached = input_tokens = output_tokens = 0
        for call in calls:
            n_calls += 1
            if (
                self.cache is not None
                and self.key_for(
                    call.messages,
                    call.prompt_version,
                    call.repeat,
                    call.json_mode,
                    call.schema if self._format == "json_schema" else None,
                    call.max_tokens,
                    call.seed,
                )
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
            structured = t.counts()["structured"]
        cost: dict[str, Any] = {
            "endpoint": self.endpoint,
            "model": self.model,
            "calls": calls,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_usd": self.prices.cost(self.model, input_tokens, output_tokens),
            "price_table": self.prices.source if self.prices.lookup(self.model) else None,
        }
        if structured["formats"]:  # JSON calls: the format that answered, repairs (rerun-stable)
            del structured["format_fallbacks"]  # a refusal is met again on every invocation
            cost["structured"] = structured
        return cost

    def usage_summary(self) -> dict[str, Any]:
        """Totals so far, JSON-ready, for a saved run's summary (no secrets).

        ``cost_usd`` covers the tokens actually sent (cache hits are free) and is ``None``
        when the model has no entry in the price table.
        """
        t = self._totals
        with t.lock:
            counts = t.counts()
            cost = self.prices.cost(self.model, t.input_tokens, t.output_tokens)
        return {
            "endpoint": self.endpoint,
            "model": self.model,
            **counts,
            "cost_usd": cost,
            "price_table": self.prices.source if self.prices.lookup(self.model) else None,
        }
