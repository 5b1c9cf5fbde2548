"""Packages whose public names are imported on first use (start-up stays instant, issue 15).

A package ``__init__`` declares where each public name lives and calls :func:`lazy_package`:

    _WHERE = {"compare_runs": "compare", ...}
    lazy_package(__name__, _WHERE)

``from ragaudit.stats import compare_runs`` then imports ``ragaudit.stats.compare`` at that
moment, and ``import ragaudit.stats.options`` loads nothing else of the package (PEP 562).
Names also go in a ``TYPE_CHECKING`` block so type checkers see them.

Where a public name equals the name of the module that defines it (``metrics.evaluate``,
``stats.judge_noise``), the import system binds the submodule to the package attribute as soon
as that module is imported; the package then keeps the public object instead, exactly as an
eager ``from .evaluate import evaluate`` in ``__init__`` would.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping
from typing import Any

__all__ = ["LazyPackage", "lazy_package"]


class LazyPackage(types.ModuleType):
    """A package module that imports its public names from their modules on first access."""

    _lazy_where: Mapping[str, str]

    def __getattr__(self, name: str) -> Any:
        where = self.__dict__.get("_lazy_where", {})
        if name in where:
            return getattr(importlib.import_module(f"{self.__name__}.{where[name]}"), name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        where = self.__dict__.get("_lazy_where", {})
        if (
            isinstance(value, types.ModuleType)
            and where.get(name) == name
            and value.__name__ == f"{self.__name__}.{name}"
        ):
            value = getattr(value, name)  # the public object, not the module of that name
        super().__setattr__(name, value)


def lazy_package(package: str, where: Mapping[str, str]) -> None:
    """Make ``package`` (already in ``sys.modules``) a :class:`LazyPackage` over ``where``.

    >>> import types, sys
    >>> sys.modules["demo_pkg"] = types.ModuleType("demo_pkg")
    >>> sys.modules["demo_pkg"].__path__ = []
    >>> lazy_package("demo_pkg", {"JSONDecoder": "decoder"})
    >>> isinstance(sys.modules["demo_pkg"], LazyPackage)
    True
    >>> del sys.modules["demo_pkg"]
    """
    module = sys.modules[package]
    module.__dict__["_lazy_where"] = dict(where)
    module.__class__ = LazyPackage
