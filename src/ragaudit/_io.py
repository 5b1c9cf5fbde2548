"""Small file helpers shared by every writer: atomic writes and lazy optional imports."""

from __future__ import annotations

import contextlib
import importlib
import os
import tempfile
from pathlib import Path
from types import ModuleType

from ragaudit.exceptions import MissingExtraError

__all__ = ["atomic_write_bytes", "atomic_write_text", "require"]


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    The bytes go to a temporary file in the same directory, are flushed and fsync'ed, then
    renamed over the target (``os.replace`` is atomic on POSIX and Windows).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates the file 0600; give the result the mode a plain open() would have
        # (or keep the mode of the file it replaces), so reports stay readable by others.
        os.fchmod(fd, _mode_for(target))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        # Leave nothing half-written behind, whatever interrupted us (including Ctrl-C).
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Atomically write UTF-8 text (see :func:`atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def require(module: str, *, extra: str, feature: str) -> ModuleType:
    """Import an optional dependency, or fail with a message naming the extra to install.

    >>> require("json", extra="none", feature="parsing").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(module.split(".")[0], extra, feature) from exc
