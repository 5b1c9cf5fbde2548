"""The checks of a repeated run beyond its schema: R entries, their metrics and contexts.

The schema (``rows[].repeats[]``) checks each entry's types as it checks a row's.  What it
cannot say is here: every row holds ``config.repeats - 1`` entries (none without
``config.repeats``), ``config.repeat_seeds`` has one seed per repeat, an entry's metrics lie
in their declared ranges and its context has at most ``config.k`` chunks.  The documents
checked here already passed the schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.data.saved_run.metrics import check_metric_value
from ragaudit.data.saved_run.repeated import QUESTION_KEYS

__all__ = ["declared_repeats", "repeat_problems"]


def declared_repeats(config: Any) -> int:
    """R as the header states it (1 when ``config.repeats`` is absent or not an integer)."""
    value = config.get("repeats") if isinstance(config, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _count_problem(i: int, found: int, repeats: int) -> str | None:
    if found == repeats - 1:
        return None
    if repeats == 1:
        return (
            f"rows[{i}].repeats: expected no entries (config.repeats is absent: one generation "
            f"per question), found {found}; set config.repeats to {found + 1}"
        )
    entries = "1 entry" if repeats == 2 else f"{repeats - 1} entries"
    return (
        f"rows[{i}].repeats: expected {entries} (config.repeats is {repeats}: "
        f"repeat 0 is the row itself), found {found}"
    )


def repeat_problems(data: Mapping[str, Any], cap: int = 50, *, counted: bool = True) -> list[str]:
    """The problems of a schema-valid document's repeats (see the module docstring);
    ``counted=False`` leaves out the number of entries and seeds (a batch of rows read
    before the header: the reader compares the counts with it afterwards).

    >>> print(repeat_problems({"config": {"k": 1, "repeats": 3}, "rows": [
    ...     {"id": "q1", "retrieved": [], "repeats": [{"seed": 1}]}]})[0])
    rows[0].repeats: expected 2 entries (config.repeats is 3: repeat 0 is the row itself), found 1
    >>> repeat_problems({"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1",
    ...     "retrieved": [], "repeats": [{"metrics": {"recall@k": 2}}]}]})[0]
    'rows[0].repeats[0].metrics.recall@k: expected a number between 0 and 1 or null, found 2'
    """
    config = data.get("config") or {}
    repeats = declared_repeats(config)
    k = config.get("k")
    problems: list[str] = []
    seeds = config.get("repeat_seeds")
    if counted and isinstance(seeds, list) and len(seeds) != repeats:
        problems.append(
            f"config.repeat_seeds: expected {repeats} seeds (one per repeat, config.repeats "
            f"{repeats}), found {len(seeds)}"
        )
    for i, row in enumerate(data.get("rows") or ()):
        entries = row.get("repeats") or []
        for j, entry in enumerate(entries):
            where = f"rows[{i}].repeats[{j}]"
            # The question's keys are never repeated (docs/saved-run-format.md): an entry's
            # own gold_docs or id would silently replace the question's for that repeat.
            for name in (*QUESTION_KEYS, "repeats"):
                if isinstance(entry, Mapping) and name in entry:
                    problems.append(
                        f"{where}.{name}: expected only per-generation keys in a repeat; "
                        f"{name!r} describes the question and is never repeated (set it on "
                        "the row)"
                    )
            for name, value in (entry.get("metrics") or {}).items():
                reason = None if value is None else check_metric_value(name, value)
                if reason is not None:
                    problems.append(f"{where}.metrics.{name}: {reason}")
            contexts = entry.get("context_ids")
            if isinstance(k, int) and isinstance(contexts, list) and len(contexts) > k:
                problems.append(
                    f"{where}.context_ids: expected at most config.k ({k}) chunks, found "
                    f"{len(contexts)}: the context is the top k retrieved chunks"
                )
        count = _count_problem(i, len(entries), repeats) if counted else None
        if count is not None and not problems:  # an entry's own problem says more
            problems.append(count)
        if len(problems) >= cap:
            break
    return problems[:cap]
