"""``ragaudit cache stats|clear``: inspect or empty the LLM response cache."""

from __future__ import annotations

import click

from ragaudit.cli._options import format_option, render_json
from ragaudit.llm.cache import LLMCache
from ragaudit.llm.config import default_cache_path

__all__ = ["command"]

_CACHE_DIR_HELP = "Cache directory [env: RAGAUDIT_CACHE_DIR; default ~/.cache/ragaudit]."


@click.group(name="cache")
def command() -> None:
    """Inspect or clear the LLM response cache (llm.sqlite)."""


@command.command(name="stats")
@click.option("--cache-dir", default=None, help=_CACHE_DIR_HELP)
@format_option("table", "json")
def stats(cache_dir: str | None, output_format: str) -> None:
    """Entries, size and the tokens the cached replies cost, by model and prompt version."""
    path = default_cache_path(cache_dir)
    if not path.exists():
        if output_format == "json":
            click.echo(render_json({"path": str(path), "entries": 0}), nl=False)
        else:
            click.echo(f"cache {path}: no cache yet (0 entries)")
        return
    with LLMCache(path) as cache:
        info = cache.stats()
    if output_format == "json":
        click.echo(
            render_json(
                {
                    "path": info.path,
                    "entries": info.entries,
                    "size_bytes": info.size_bytes,
                    "input_tokens": info.input_tokens,
                    "output_tokens": info.output_tokens,
                    "by_model": info.by_model,
                    "by_prompt_version": info.by_prompt_version,
                }
            ),
            nl=False,
        )
        return
    lines = [
        f"cache {info.path}",
        f"  entries        {info.entries}",
        f"  size           {info.size_bytes / 1024:.1f} KiB",
        f"  tokens cached  {info.input_tokens} input, {info.output_tokens} output",
    ]
    if info.by_model:
        lines.append("  by model")
        lines.extend(f"    {name:<28} {count}" for name, count in info.by_model.items())
    if info.by_prompt_version:
        lines.append("  by prompt version")
        lines.extend(f"    {name:<28} {count}" for name, count in info.by_prompt_version.items())
    click.echo("\n".join(lines))


@command.command(name="clear")
@click.option("--cache-dir", default=None, help=_CACHE_DIR_HELP)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def clear(cache_dir: str | None, yes: bool) -> None:
    """Delete every cached reply (the next run pays for its calls again)."""
    path = default_cache_path(cache_dir)
    if not path.exists():
        click.echo(f"cache {path}: nothing to clear")
        return
    if not yes:
        click.confirm(f"Delete every entry of {path}?", abort=True, err=True)
    with LLMCache(path) as cache:
        removed = cache.clear()
    click.echo(f"cache {path}: removed {removed} entries")
