"""The ``--llm-*`` options shared by ``run``, ``judge`` and ``labels build``.

click stays in ``ragaudit.cli``: the LLM layer knows :class:`~ragaudit.llm.config.LLMConfig`,
and this module turns the command line into one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ragaudit.llm.config import LLMConfig, default_cache_path

__all__ = ["add_llm_options", "llm_config_from_cli"]

_F = TypeVar("_F", bound=Callable[..., Any])


def add_llm_options(command: _F) -> _F:
    """Decorate a click command with the ``--llm-*`` flags, ``--no-cache``, ``--cache-dir``,
    ``--prices`` and ``--judge-repeats``; turn them into a config with
    :func:`llm_config_from_cli`.

    The decorated function receives the keyword arguments ``llm_base_url, llm_model,
    llm_temperature, llm_seed, llm_timeout, llm_max_tokens, llm_concurrency, llm_max_retries,
    llm_json_mode, no_cache, cache_dir, prices, judge_repeats``.
    """
    options = [
        click.option(
            "--llm-base-url",
            default=None,
            help="OpenAI-compatible endpoint [env: RAGAUDIT_LLM_BASE_URL, OPENAI_BASE_URL].",
        ),
        click.option("--llm-model", default=None, help="Model name [env: RAGAUDIT_LLM_MODEL]."),
        click.option(
            "--llm-temperature", type=float, default=None, help="Sampling temperature [default: 0]."
        ),
        click.option(
            "--llm-seed",
            type=int,
            default=None,
            help="Request seed and retry-jitter seed [default: 0].",
        ),
        click.option(
            "--llm-timeout", type=float, default=None, help="Seconds per request [default: 60]."
        ),
        click.option("--llm-max-tokens", type=int, default=None, help="Completion token cap."),
        click.option(
            "--llm-concurrency", type=int, default=None, help="Requests in flight [default: 8]."
        ),
        click.option(
            "--llm-max-retries",
            type=int,
            default=None,
            help="Retries on timeouts, connection errors, 429 and 5xx [default: 4].",
        ),
        click.option(
            "--llm-json-mode/--no-llm-json-mode",
            default=None,
            help="Judges send response_format (their JSON schema; json_object, then none, if the "
            "server refuses it) [default: on].",
        ),
        click.option(
            "--no-cache",
            is_flag=True,
            default=False,
            help="Neither read nor write the LLM response cache.",
        ),
        click.option(
            "--cache-dir",
            default=None,
            help="LLM cache directory [env: RAGAUDIT_CACHE_DIR; default ~/.cache/ragaudit].",
        ),
        click.option(
            "--prices",
            default=None,
            type=click.Path(dir_okay=False),
            help="YAML price table (model -> input/output USD per 1M tokens).",
        ),
        click.option(
            "--judge-repeats",
            type=int,
            default=1,
            show_default=True,
            help="Ask each LLM judge R times and report agreement.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def llm_config_from_cli(
    *,
    llm_base_url: str | None = None,
    llm_model: str | None = None,
    llm_temperature: float | None = None,
    llm_seed: int | None = None,
    llm_timeout: float | None = None,
    llm_max_tokens: int | None = None,
    llm_concurrency: int | None = None,
    llm_max_retries: int | None = None,
    llm_json_mode: bool | None = None,
    no_cache: bool = False,
    cache_dir: str | None = None,
    prices: str | None = None,
    **_ignored: Any,
) -> LLMConfig:
    """Turn the options of :func:`add_llm_options` into an :class:`LLMConfig`.

    Examples
    --------
    >>> cfg = llm_config_from_cli(llm_base_url="http://h/v1", llm_model="m", no_cache=True)
    >>> cfg.model, cfg.use_cache
    ('m', False)
    """
    return LLMConfig.from_env_and_flags(
        base_url=llm_base_url,
        model=llm_model,
        temperature=llm_temperature,
        seed=llm_seed,
        timeout=llm_timeout,
        max_tokens=llm_max_tokens,
        max_concurrency=llm_concurrency,
        max_retries=llm_max_retries,
        json_mode=llm_json_mode,
        use_cache=not no_cache,
        cache_path=None if cache_dir is None else str(default_cache_path(cache_dir)),
        prices_path=prices,
    )
