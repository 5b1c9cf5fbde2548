"""Small file helpers shared by every reader and writer: the regular-file check every reader
makes, the guard that keeps an output off its inputs, atomic writes, an advisory lock for
files two sessions update, and lazy optional imports."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType

from ragaudit.exceptions import FormatError, MissingExtraError, unreadable, unwritable

__all__ = [
    "append_text",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_regular_file",
    "locked",
    "read_file_bytes",
    "refuse_input_as_output",
    "require",
]

_NOT_REGULAR = (
    (stat.S_ISFIFO, "a pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_regular_file(path: str | os.PathLike[str], why: str = "") -> None:
    """Refuse a pipe, FIFO, socket or device with a one-line FormatError (every reader).

    ``/dev/zero`` never ends (a reader would grow without bound) and a FIFO with no writer
    blocks ``open`` forever; both are refused before anything is opened.  A missing path
    passes: the open that follows names that error.  ``why`` is added to the message.

    >>> check_regular_file(__file__)  # a regular file passes
    >>> check_regular_file("/dev/null")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragaudit.exceptions.FormatError: /dev/null: expected a regular file, found a character ...
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    for test, found in _NOT_REGULAR:
        if test(mode):
            raise FormatError(
                f"expected a regular file, found {found}{why or ''}; save the data to a file first",
                path=str(path),
            )


def read_file_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file (:func:`check_regular_file`); an OS error is
    :func:`~ragaudit.exceptions.unreadable` naming ``path``."""
    check_regular_file(path)
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise unreadable(path, exc) from None


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except (OSError, ValueError, RuntimeError):
        return False


def refuse_input_as_output(
    target: str | os.PathLike[str],
    inputs: Iterable[str | os.PathLike[str] | None],
    option: str = "--out",
) -> None:
    """Refuse to write ``target`` when it is one of ``inputs`` (the same file through any
    name: a symlink, a hard link, ``./x``), so that no command replaces what it reads.

    Compared with :func:`os.path.samefile` when both exist, by resolved path otherwise.

    >>> import pathlib, tempfile
    >>> run = pathlib.Path(tempfile.mkdtemp()) / "run.json"
    >>> _ = run.write_text("{}")
    >>> refuse_input_as_output(run.with_name("report.html"), [run])  # another file: fine
    >>> refuse_input_as_output(run, [None, run])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragaudit.exceptions.FormatError: ...run.json: --out: expected a file that is not an input, ...
    """
    out = Path(target)
    for given in inputs:
        if given is None or str(given) in ("", "-"):
            continue
        if _same_file(out, Path(given)):
            raise FormatError(
                f"expected a file that is not an input, found the input {str(given)!r} "
                f"itself: writing there would destroy it; choose another {option}",
                path=str(target),
                field=option,
            )


@contextlib.contextmanager
def locked(path: str | os.PathLike[str], timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``<path>.lock`` (``fcntl.flock``) for the block.

    Two processes updating one file (two ``labels verdicts`` sessions) take turns: each
    re-reads the file inside the lock before writing it.  The wait is bounded by ``timeout``
    seconds, then a one-line FormatError names the lock file.  Where ``fcntl`` does not
    exist (Windows) the block runs unlocked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    lock_path = f"{os.fspath(path)}.lock"
    try:
        Path(lock_path).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise unwritable(path, exc) from None  # name the file the caller writes
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise FormatError(
                        f"expected to lock the file within {timeout:g} s, found it held by "
                        "another process all along; wait for it to finish (or remove the "
                        "lock file if no ragaudit is running)",
                        path=lock_path,
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


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
