"""Sending one request with our own retry policy, and sorting every failure into three kinds.

The official ``openai`` client (imported lazily, extra ``llm``) runs with ``max_retries=0``
so that the policy is ours, seeded and testable:

* **retryable**: timeouts, connection errors, HTTP 429 and 5xx, and every *malformed reply*
  (a 200 whose body is not a valid chat completion: see :mod:`ragaudit.llm.replies`; a body
  that is not JSON; a body cut short).  Attempt ``a`` waits
  ``min(backoff_max, backoff_base * 2**a) * u`` with ``u ~ U[0.5, 1]`` drawn from a generator
  seeded by ``(seed, request key)``, or what ``Retry-After`` asks;
* **fatal for the batch** (:class:`LLMUnavailableError`): an endpoint that cannot be reached
  (before it has answered once, a refused connection is retried only once, so a wrong URL
  fails in about a second), or that rejects the key or the model (401, 403, 404);
* **fatal for the item** (:class:`LLMRequestError`): other 4xx (e.g. 400 for an over-long
  prompt), or retries exhausted.  Judges record it as ``judge_error``, the generator as a
  generation error; neither is ever cached.  A 4xx that refuses the request's
  ``response_format`` is :class:`~ragaudit.llm.structured.FormatRefused`, on which the client
  lowers the format.

Every message that leaves this module is passed through :func:`redact_secrets` with the
configured key, so a server that echoes the key in its error body cannot get it stored.

Redirects are followed only within the endpoint's origin (scheme, host and port): a 307 to
another origin would re-send the prompt, which quotes the corpus, to a server nobody named.
:func:`http_client` builds the SDK's HTTP client with a hook that stops such a redirect, and
:func:`send_with_retries` reports it as :class:`LLMUnavailableError` naming both URLs.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit

from ragaudit._io import require
from ragaudit.llm.cache import CachedReply
from ragaudit.llm.config import LLMConfig
from ragaudit.llm.replies import (
    LLMRequestError,
    LLMUnavailableError,
    MalformedReply,
    Message,
    reply_from_response,
)
from ragaudit.llm.structured import FormatRefused, is_format_refusal

__all__ = ["CrossOriginRedirect", "http_client", "redact_secrets", "send_with_retries", "short"]

_RETRY_AFTER_CAP = 300.0  # never sleep longer than this on a server's say-so

_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}")
_KEY_PARAM = re.compile(
    r"(?i)((?:api[-_]?key|access[-_]?token|token|key|secret|password|sig)[\"']?\s*[=:]\s*[\"']?)"
    r"[^\s\"'&,;}]+"
)
_KEY_LIKE = re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_-]{12,}")


def redact_secrets(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Remove the given secrets and anything that looks like a key or a bearer token.

    Each of ``secrets`` (e.g. the configured API key) becomes ``[redacted]`` wherever it
    occurs; so do ``Bearer ...`` / ``Basic ...`` credentials, ``api-key=...``-style
    assignments and ``sk-...`` keys.

    Examples
    --------
    >>> redact_secrets("bad key my-secret-123 (Authorization: Bearer abcdef123456)",
    ...                ["my-secret-123"])
    'bad key [redacted] (Authorization: Bearer [redacted])'
    >>> redact_secrets("GET /v1?api-key=abc123&x=1: 401")
    'GET /v1?api-key=[redacted]&x=1: 401'
    """
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    text = _BEARER.sub(lambda m: f"{m.group(1)} [redacted]", text)
    text = _KEY_PARAM.sub(lambda m: f"{m.group(1)}[redacted]", text)
    return _KEY_LIKE.sub(lambda m: f"{m.group(1)}-[redacted]", text)


def short(text: str, limit: int = 200) -> str:
    """One line of at most ``limit`` characters.

    >>> short("a\\n  b" + "c" * 300, 10)
    'a bccc...'
    """
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a 429/503 asks us to wait (``retry-after-ms`` or numeric ``retry-after``).

    >>> retry_after({"retry-after": "2"}), retry_after({"retry-after-ms": "1500"})
    (2.0, 1.5)
    >>> retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    True
    """
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


class CrossOriginRedirect(Exception):
    """A redirect from ``source`` to ``target`` on another origin (never followed)."""

    def __init__(self, source: str, target: str, status: int) -> None:
        super().__init__(f"HTTP {status} redirect from {source} to {target}")
        self.source, self.target, self.status = source, target, status


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` with the scheme's default port filled in.

    >>> _origin("http://127.0.0.1/v1") == _origin("HTTP://127.0.0.1:80/v2")
    True
    >>> _origin("http://127.0.0.1:8000/v1") == _origin("http://127.0.0.1:8001/v1")
    False
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)


def refuse_cross_origin_redirect(response: Any) -> None:
    """HTTP client response hook: raise :class:`CrossOriginRedirect` on a redirect whose
    ``Location`` leaves the request's origin (same-origin redirects are followed)."""
    status = int(getattr(response, "status_code", 0))
    location = response.headers.get("location")
    if status not in (301, 302, 303, 307, 308) or not location:
        return
    source = str(response.request.url)
    target = urljoin(source, location)
    if _origin(source) != _origin(target):
        raise CrossOriginRedirect(source, target, status)


def http_client(openai: Any) -> Any:
    """The SDK's own HTTP client (its defaults: timeouts, limits) with
    :func:`refuse_cross_origin_redirect` on every response."""
    return openai.DefaultHttpxClient(event_hooks={"response": [refuse_cross_origin_redirect]})


def _redirect(exc: BaseException) -> CrossOriginRedirect | None:
    """The :class:`CrossOriginRedirect` behind ``exc`` (as raised, or wrapped by the SDK)."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, CrossOriginRedirect):
            return exc
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
        seen += 1
    return None


def _is_connect_failure(exc: BaseException) -> bool:
    """Whether a connection error means "nobody answered" (refused, DNS, connect timeout),
    as opposed to a server that answered with a broken or truncated body."""
    cause = exc.__cause__ or exc.__context__
    if cause is None:
        return True
    # By class name: the SDK's transport (httpx, or the fork some openai releases vendor)
    # names its "could not connect" errors ConnectError / ConnectTimeout.
    names = {cls.__name__ for cls in type(cause).__mro__}
    return bool(names & {"ConnectError", "ConnectTimeout", "ConnectionRefusedError"})


def send_with_retries(
    *,
    create: Callable[..., Any],
    request: Mapping[str, Any],
    messages: Sequence[Message],
    config: LLMConfig,
    model: str,
    where: str,
    key: str,
    json_mode: bool,
    reached: Callable[[], bool],
    on_reached: Callable[[], None],
    on_attempt: Callable[[bool], None],
    sleep: Callable[[float], None],
) -> CachedReply:
    """Send ``create(**request)`` until a valid reply, with the policy of the module docstring.

    ``on_attempt(retry)`` is called before each HTTP request (``retry`` is True from the
    second on); ``reached()`` says whether the endpoint has ever answered and ``on_reached()``
    records that it has.  Returns the checked reply; raises :class:`LLMRequestError` or
    :class:`LLMUnavailableError` with secrets redacted.
    """
    openai = require("openai", extra="llm", feature="the LLM layer")
    secrets: tuple[str, ...] = config.secrets

    def clean(text: str) -> str:
        return short(redact_secrets(str(text), secrets))

    jitter = random.Random(f"{config.seed}:{key}")
    for attempt in range(config.max_retries + 1):
        on_attempt(attempt > 0)
        wait: float | None = None
        try:
            try:
                reply = reply_from_response(create(**request), messages)
            except Exception as exc:  # a redirect elsewhere: refused, however it is wrapped
                moved = _redirect(exc)
                if moved is not None:
                    raise LLMUnavailableError(
                        f"the LLM endpoint {where} answered HTTP {moved.status} redirecting "
                        f"{clean(moved.source)} to {clean(moved.target)}, another origin: "
                        "ragaudit follows no redirect to another host or port (it would "
                        "re-send the prompt, your documents, there); if that server is the "
                        "right one, set --llm-base-url / RAGAUDIT_LLM_BASE_URL to it"
                    ) from None
                raise
        except openai.APITimeoutError:
            reason = f"timed out after {config.timeout:g} s"
        except openai.APIConnectionError as exc:
            detail = exc.__cause__ or exc
            reason = clean(f"{detail.__class__.__name__}: {detail}")
            if not _is_connect_failure(exc):
                on_reached()  # it answered, with a body cut short or undecodable
                reason = f"the server sent a broken reply ({reason})"
            else:
                reason = f"connection error ({reason})"
                # Until the endpoint has answered once, a refused connection is most likely
                # a wrong URL or a server that is not running: fail after one retry, not four.
                budget = config.max_retries if reached() else min(1, config.max_retries)
                if attempt >= budget:
                    raise LLMUnavailableError(
                        f"cannot reach the LLM endpoint {where}: {reason}; check "
                        "--llm-base-url / RAGAUDIT_LLM_BASE_URL and that the server is running"
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
                    f"the LLM endpoint {where} answered HTTP 404 for model {model!r}; check "
                    "--llm-base-url (usually ends in /v1) and --llm-model"
                ) from None
            if json_mode and is_format_refusal(status, str(exc.message)):
                # The caller falls back to a plainer response_format (llm.structured).
                raise FormatRefused(
                    f"HTTP {status} from {where}: {clean(exc.message)} (if the server does "
                    "not support response_format, pass --no-llm-json-mode)"
                ) from None
            if status != 429 and status < 500:
                raise LLMRequestError(f"HTTP {status} from {where}: {clean(exc.message)}") from None
            reason = f"HTTP {status}"
            wait = retry_after(exc.response.headers if exc.response is not None else {})
        except openai.APIError as exc:  # e.g. APIResponseValidationError
            on_reached()
            reason = f"malformed reply ({clean(f'{exc.__class__.__name__}: {exc}')})"
        except MalformedReply as exc:
            on_reached()
            reason = f"malformed reply ({clean(str(exc))})"
        except (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError) as exc:
            # The SDK parses the body itself: a body that is not JSON raises JSONDecodeError,
            # one of the wrong shape AttributeError / TypeError / pydantic's ValueError.
            on_reached()
            reason = f"malformed reply ({clean(f'{exc.__class__.__name__}: {exc}')})"
        else:
            on_reached()
            return reply
        if attempt == config.max_retries:
            raise LLMRequestError(
                f"request to {where} failed after {attempt + 1} attempts: {reason}"
            )
        if wait is None:
            wait = min(config.backoff_max, config.backoff_base * 2**attempt)
            wait *= jitter.uniform(0.5, 1.0)
        sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover
