"""Packages whose names are imported on first use (start-up stays instant, issue 15)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``package.<where[name]>`` when ``name`` is used.

    >>> getattr_ = lazy_attributes("json", {"JSONDecoder": "decoder"})
    >>> getattr_("JSONDecoder").__name__
    'JSONDecoder'
    """

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
