"""ragaudit: honest evaluation numbers for retrieval-augmented generation."""

from __future__ import annotations

from typing import Any

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:
    # importlib.metadata costs ~50 ms; look the version up only when someone asks for it.
    if name == "__version__":
        from ragaudit._version import version

        return version()
    raise AttributeError(f"module 'ragaudit' has no attribute {name!r}")
