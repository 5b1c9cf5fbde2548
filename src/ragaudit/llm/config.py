"""Configuration of the LLM layer: endpoint, model, sampling and retry policy.

Everything can come from command-line flags or from the environment; flags win.  The API key
is the one exception: it is read from the environment only (``RAGAUDIT_LLM_API_KEY`` or
``OPENAI_API_KEY``), kept out of ``repr``, and never written to a cache, a saved run, a log
or a report (:meth:`LLMConfig.to_public_dict` is what gets recorded).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ragaudit.exceptions import InputError

__all__ = [
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_CACHE_DIR",
    "ENV_MODEL",
    "LLMConfig",
    "default_cache_path",
    "redact_url",
    "url_secrets",
]

#: Environment variables read, in order of preference.
ENV_BASE_URL: tuple[str, ...] = ("RAGAUDIT_LLM_BASE_URL", "OPENAI_BASE_URL")
ENV_MODEL: tuple[str, ...] = ("RAGAUDIT_LLM_MODEL",)
ENV_API_KEY: tuple[str, ...] = ("RAGAUDIT_LLM_API_KEY", "OPENAI_API_KEY")
ENV_CACHE_DIR = "RAGAUDIT_CACHE_DIR"

CACHE_FILE_NAME = "llm.sqlite"


def default_cache_path(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the LLM response cache lives.

    Resolution order: the ``cache_dir`` argument, then ``$RAGAUDIT_CACHE_DIR``, then
    ``~/.cache/ragaudit``; the file inside is always ``llm.sqlite``.

    Examples
    --------
    >>> default_cache_path("/tmp/ra").as_posix()
    '/tmp/ra/llm.sqlite'
    """
    if cache_dir is None:
        cache_dir = os.environ.get(ENV_CACHE_DIR) or Path.home() / ".cache" / "ragaudit"
    return Path(cache_dir).expanduser() / CACHE_FILE_NAME


def redact_url(url: str) -> str:
    """Drop any ``user:password@`` part of a URL, and the values of its query parameters,
    before it is shown or recorded (``?api-key=...`` is how some gateways take the key).

    Examples
    --------
    >>> redact_url("http://bob:s3cret@127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    >>> redact_url("https://api.openai.com/v1/")
    'https://api.openai.com/v1'
    >>> redact_url("https://gw.example/v1?api-key=s3cret&api-version=2024-06-01")
    'https://gw.example/v1?api-key=[redacted]&api-version=[redacted]'
    """
    parts = urlsplit(url.strip())
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = "&".join(
        f"{name}=[redacted]" for name, _ in parse_qsl(parts.query, keep_blank_values=True)
    )
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), query, ""))


def url_secrets(url: str) -> tuple[str, ...]:
    """The secret parts of a URL: the password of ``user:password@`` and the query values.

    >>> url_secrets("http://bob:pw1234@h/v1?api-key=k-5678&v=1")
    ('pw1234', 'k-5678', '1')
    """
    parts = urlsplit(url.strip())
    found = [parts.password] if parts.password else []
    found.extend(value for _, value in parse_qsl(parts.query) if value)
    return tuple(found)


@dataclass(frozen=True)
class LLMConfig:
    """How to reach an OpenAI-compatible chat-completions endpoint, and how hard to try.

    Parameters
    ----------
    base_url : str or None
        Endpoint root, e.g. ``https://api.openai.com/v1`` or ``http://localhost:11434/v1``.
    model : str or None
        Model name as the endpoint knows it.
    api_key : str or None
        Secret; environment only, excluded from ``repr``, equality and every written record.
    temperature : float, default 0.0
        Sampling temperature.
    seed : int or None, default 0
        Sent as the request ``seed`` (honoured by OpenAI, vLLM, Ollama, llama.cpp); ``None``
        omits it for servers that reject the field.  Also seeds the retry jitter.
    timeout : float, default 60.0
        Seconds per HTTP request.
    max_tokens : int or None, default None
        Completion token cap sent with every request (``None`` = server default).
    max_concurrency : int, default 8
        Requests in flight at once.
    max_retries : int, default 4
        Extra attempts after a timeout, connection error, HTTP 429 or 5xx.
    backoff_base, backoff_max : float, default 0.5 and 30.0
        Retry ``a`` waits ``min(backoff_max, backoff_base * 2**a) * u`` seconds with the
        jitter ``u`` drawn uniformly from [0.5, 1] by a generator seeded from ``seed`` and the
        request, so two runs wait the same; a ``Retry-After`` header overrides the wait.
    schema_retries : int, default 2
        Follow-up attempts when a judge's JSON is invalid, each quoting the validation error.
    json_mode : bool, default True
        Ask for ``response_format={"type": "json_object"}`` on judge calls.
    use_cache : bool, default True
        Read and write the sqlite response cache.
    cache_path : str or None
        Cache file; ``None`` means :func:`default_cache_path`.
    prices_path : str or None
        YAML price table overriding the shipped default.

    Examples
    --------
    >>> cfg = LLMConfig(base_url="http://127.0.0.1:8000/v1/", model="m", api_key="sk-secret")
    >>> "sk-secret" in repr(cfg), cfg.endpoint
    (False, 'http://127.0.0.1:8000/v1')
    >>> "api_key" in cfg.to_public_dict()
    False
    """

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    temperature: float = 0.0
    seed: int | None = 0
    timeout: float = 60.0
    max_tokens: int | None = None
    max_concurrency: int = 8
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    schema_retries: int = 2
    json_mode: bool = True
    use_cache: bool = True
    cache_path: str | None = None
    prices_path: str | None = None

    def __post_init__(self) -> None:
        checks: list[tuple[str, bool, str]] = [
            ("temperature", 0.0 <= self.temperature <= 2.0, "a number in [0, 2]"),
            ("timeout", self.timeout > 0 and math.isfinite(self.timeout), "seconds > 0"),
            ("max_concurrency", self.max_concurrency >= 1, "an integer >= 1"),
            ("max_retries", self.max_retries >= 0, "an integer >= 0"),
            ("schema_retries", self.schema_retries >= 0, "an integer >= 0"),
            ("backoff_base", self.backoff_base >= 0, "seconds >= 0"),
            ("backoff_max", self.backoff_max >= 0, "seconds >= 0"),
            ("max_tokens", self.max_tokens is None or self.max_tokens >= 1, "an integer >= 1"),
        ]
        for name, ok, expected in checks:
            if not ok:
                raise InputError(
                    f"LLM config {name}: expected {expected}, found {getattr(self, name)!r}"
                )

    @classmethod
    def from_env_and_flags(cls, env: Mapping[str, str] | None = None, **flags: Any) -> LLMConfig:
        """Build a config from flags, falling back to the environment.

        ``None`` flags are ignored, so a CLI can pass every option through unchanged.
        ``base_url`` falls back to ``$RAGAUDIT_LLM_BASE_URL`` then ``$OPENAI_BASE_URL``;
        ``model`` to ``$RAGAUDIT_LLM_MODEL``; the API key always comes from
        ``$RAGAUDIT_LLM_API_KEY`` or ``$OPENAI_API_KEY`` (an ``api_key`` flag is refused so
        that secrets never end up in shell history).

        Examples
        --------
        >>> env = {"RAGAUDIT_LLM_BASE_URL": "http://h/v1", "RAGAUDIT_LLM_MODEL": "env-model"}
        >>> cfg = LLMConfig.from_env_and_flags(env, model="flag-model", timeout=None)
        >>> cfg.base_url, cfg.model, cfg.timeout
        ('http://h/v1', 'flag-model', 60.0)
        """
        environ = os.environ if env is None else env
        if "api_key" in flags:
            raise InputError(
                "the API key is read from the environment only: set RAGAUDIT_LLM_API_KEY "
                "or OPENAI_API_KEY"
            )
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(flags) - known)
        if unknown:
            raise InputError(f"LLM config: unknown option(s) {', '.join(unknown)}")
        values = {name: value for name, value in flags.items() if value is not None}

        def from_env(names: tuple[str, ...]) -> str | None:
            for name in names:
                if environ.get(name):
                    return environ[name]
            return None

        values.setdefault("base_url", from_env(ENV_BASE_URL))
        values.setdefault("model", from_env(ENV_MODEL))
        values["api_key"] = from_env(ENV_API_KEY)
        return cls(**values)

    @property
    def endpoint(self) -> str:
        """The base URL without credentials or trailing slash (what caches and reports use)."""
        return redact_url(self.base_url or "")

    @property
    def secrets(self) -> tuple[str, ...]:
        """Strings that must never be stored: the key and the secret parts of the base URL.

        >>> LLMConfig(base_url="http://h/v1?key=abcd", api_key="sk-1").secrets
        ('sk-1', 'abcd')
        """
        found = (self.api_key,) if self.api_key else ()
        return found + url_secrets(self.base_url or "")

    def require_endpoint(self, stage: str = "this LLM stage") -> None:
        """Fail with one line naming the flag and variable when the endpoint is incomplete.

        Examples
        --------
        >>> LLMConfig(model="m").require_endpoint("the LLM judge stage")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ragaudit.exceptions.InputError: the LLM judge stage needs an endpoint: pass ...
        """
        if not self.base_url:
            raise InputError(
                f"{stage} needs an endpoint: pass --llm-base-url or set "
                "RAGAUDIT_LLM_BASE_URL (or OPENAI_BASE_URL)"
            )
        if urlsplit(self.base_url).scheme not in ("http", "https"):
            raise InputError(
                f"--llm-base-url: expected an http:// or https:// URL, found "
                f"{redact_url(self.base_url)!r}"
            )
        if not self.model:
            raise InputError(
                f"{stage} needs a model name: pass --llm-model or set RAGAUDIT_LLM_MODEL"
            )

    def resolved_cache_path(self) -> Path:
        """The cache file this config reads and writes."""
        if self.cache_path is not None:
            return Path(self.cache_path)
        return default_cache_path()

    def to_public_dict(self) -> dict[str, Any]:
        """Everything worth recording about the config, minus the API key.

        Examples
        --------
        >>> d = LLMConfig(base_url="http://u:p@h/v1", model="m", api_key="k").to_public_dict()
        >>> d["base_url"], "api_key" in d
        ('http://h/v1', False)
        """
        public = {
            f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "api_key"
        }
        public["base_url"] = self.endpoint or None
        public["cache_path"] = None  # machine-specific; not part of a result's identity
        return public
