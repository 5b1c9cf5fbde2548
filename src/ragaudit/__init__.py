"""ragaudit: honest evaluation numbers for retrieval-augmented generation."""

from __future__ import annotations

from typing import Any

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:
    # importlib.metadata costs ~50 ms; look the version up only when someone asks for it.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("ragaudit")
        except PackageNotFoundError:  # a source tree without installation
            return "0.0.0"
    raise AttributeError(f"module 'ragaudit' has no attribute {name!r}")
