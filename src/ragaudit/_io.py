"""Small file helpers shared by every writer: atomic writes and lazy optional imports."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import tempfile
import time
from pathlib import Path
from types import ModuleType

from ragaudit.exceptions import MissingExtraError, unwritable

__all__ = ["append_text", "atomic_write_bytes", "atomic_write_text", "require"]


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    The bytes go to a temporary file in the same directory, are flushed and fsync'ed, then
    renamed over the target (``os.replace`` is atomic on POSIX and Windows).  A path that
    cannot be written raises :func:`~ragaudit.exceptions.unwritable` naming ``path`` (not the
    temporary file).
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(target)
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent
        )
    except OSError as exc:
        raise unwritable(path, exc) from None
    try:
        # mkstemp creates the file 0600; give the result the mode a plain open() would have
        # (or keep the mode of the file it replaces), so reports stay readable by others.
        os.fchmod(fd, _mode_for(target))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException as exc:
        # Leave nothing half-written behind, whatever interrupted us (including Ctrl-C).
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            raise unwritable(path, exc) from None
        raise


#: Temporary files older than this are stale even when their process id is alive (reused).
STALE_TEMP_SECONDS = 24 * 3600


def _remove_stale_temps(target: Path) -> None:
    """Delete temporary files of our own naming (``.<name>.<pid>.<random>.tmp``) left for
    ``target`` by a writer that was killed: its process is gone, or the file is a day old.
    Files of the old naming (no process id) are stale after an hour."""
    ours = re.compile(rf"^\.{re.escape(target.name)}\.(?:(\d+)\.)?[A-Za-z0-9_]{{6,}}\.tmp$")
    try:
        candidates = list(target.parent.iterdir())
    except OSError:
        return
    now = time.time()
    for candidate in candidates:
        match = ours.match(candidate.name)
        if match is None:
            continue
        try:
            age = now - candidate.lstat().st_mtime
        except OSError:
            continue
        pid = match.group(1)
        stale = age > STALE_TEMP_SECONDS or (
            age > 3600 if pid is None else not _process_alive(int(pid))
        )
        if stale:
            with contextlib.suppress(OSError):
                candidate.unlink()


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists, owned by someone else
        return True
    return True


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


def append_text(path: str | os.PathLike[str], text: str) -> None:
    """Append UTF-8 ``text`` to ``path`` in one ``write`` on an ``O_APPEND`` descriptor, fsync'ed.

    Other writers appending to the same file (a CI step summary) never interleave with it,
    and what was there before is kept.  The file is created if missing.
    """
    data = text.encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise unwritable(path, exc) from None


def require(module: str, *, extra: str, feature: str) -> ModuleType:
    """Import an optional dependency, or fail with a message naming the extra to install.

    >>> require("json", extra="none", feature="parsing").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(module.split(".")[0], extra, feature) from exc
