"""Reports of the commands that make or check saved runs: ``cache stats`` (more to come)."""

from __future__ import annotations

from typing import Any

from ragaudit.reports.report import KeyValues, Report, Section, Table

__all__ = ["cache_report"]


def cache_report(path: str, info: Any | None) -> Report:
    """What the LLM cache holds (``info`` is a :class:`~ragaudit.llm.cache.CacheStats`).

    Examples
    --------
    >>> from ragaudit.reports.render import render
    >>> print(render(cache_report("/tmp/llm.sqlite", None), "table"), end="")
    cache /tmp/llm.sqlite: no cache yet (0 entries)
    """
    if info is None:
        return Report(
            f"cache {path}: no cache yet (0 entries)", (), data={"path": path, "entries": 0}
        )
    data = {
        "path": info.path,
        "entries": info.entries,
        "size_bytes": info.size_bytes,
        "input_tokens": info.input_tokens,
        "output_tokens": info.output_tokens,
        "by_model": info.by_model,
        "by_prompt_version": info.by_prompt_version,
    }
    blocks: list[Any] = [
        KeyValues(
            (
                ("entries", str(info.entries)),
                ("size", f"{info.size_bytes / 1024:.1f} KiB"),
                ("tokens cached", f"{info.input_tokens} input, {info.output_tokens} output"),
            )
        )
    ]
    sections = [Section("Cache", tuple(blocks))]
    for title, counts in (
        ("By model", info.by_model),
        ("By prompt version", info.by_prompt_version),
    ):
        if counts:
            rows = tuple((name, str(n)) for name, n in counts.items())
            sections.append(
                Section(title, (Table(("name", "entries"), rows, values=tuple(counts.items())),))
            )
    return Report(f"cache {info.path}", tuple(sections), data=data)
