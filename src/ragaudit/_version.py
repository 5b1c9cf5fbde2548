"""The installed version of ragaudit, looked up once and only when asked for.

A leaf module, so any layer can record the version without importing the ``ragaudit`` package
(whose ``__init__`` re-exports the public API); ``importlib.metadata`` costs about 50 ms, which
is why nothing calls :func:`version` at import time.
"""

from __future__ import annotations

import functools

__all__ = ["version"]


@functools.cache
def version() -> str:
    """The distribution's version, or ``"0.0.0"`` in a source tree without installation.

    >>> version().count(".") >= 2
    True
    """
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as distribution_version

    try:
        return distribution_version("ragaudit")
    except PackageNotFoundError:
        return "0.0.0"
