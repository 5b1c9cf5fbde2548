"""The JSON Schema of the saved-run format, read once from the package data."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["saved_run_schema"]


@lru_cache(maxsize=1)
def saved_run_schema() -> dict[str, Any]:
    """The JSON Schema of the saved-run format (package data).

    >>> saved_run_schema()["properties"]["format"]
    {'const': 'ragaudit.run'}
    """
    text = (
        resources.files("ragaudit.data")
        .joinpath("schemas/saved-run.schema.json")
        .read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema
