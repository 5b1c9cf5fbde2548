"""``ragaudit cache stats|clear``: inspect or empty the LLM response cache."""

from __future__ import annotations

import click

from ragaudit.cli._options import emit, format_option
from ragaudit.llm.cache import LLMCache
from ragaudit.llm.config import default_cache_path

__all__ = ["command"]

_CACHE_DIR_HELP = "Cache directory [env: RAGAUDIT_CACHE_DIR; default ~/.cache/ragaudit]."


@click.group(name="cache")
def command() -> None:
    """Inspect or clear the LLM response cache (llm.sqlite)."""


@command.command(name="stats")
@click.option("--cache-dir", default=None, help=_CACHE_DIR_HELP)
@format_option()
def stats(cache_dir: str | None, output_format: str) -> None:
    """Entries, size and the tokens the cached replies cost, by model and prompt version."""
    from ragaudit.reports.runs import cache_report  # numpy: not for `cache --help`

    path = default_cache_path(cache_dir)
    info = None
    if path.exists():
        with LLMCache(path) as cache:
            info = cache.stats()
    emit(cache_report(str(path), info), output_format)


@command.command(name="clear")
@click.option("--cache-dir", default=None, help=_CACHE_DIR_HELP)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@format_option()
def clear(cache_dir: str | None, yes: bool, output_format: str) -> None:
    """Delete every cached reply (the next run pays for its calls again)."""
    from ragaudit.reports.runs import cache_clear_report  # numpy: not for `cache --help`

    path = default_cache_path(cache_dir)
    removed = None
    if path.exists():
        if not yes:
            click.confirm(f"Delete every entry of {path}?", abort=True, err=True)
        with LLMCache(path) as cache:
            removed = cache.clear()
    emit(cache_clear_report(str(path), removed), output_format)
