"""The exceptions and warnings ragaudit raises.

Every user-facing failure is a :class:`RagauditError`; the CLI turns it into one line on
stderr and exit code 2, never a traceback.  Messages follow one template: *where* (file, line,
field), *what was expected*, *what was found*, and, when there is one, *how to fix it*.
"""

from __future__ import annotations

__all__ = [
    "FormatError",
    "InputError",
    "JudgeError",
    "MissingExtraError",
    "RagauditError",
    "RagauditWarning",
    "UndefinedMetricWarning",
    "UnjudgedWarning",
    "unreadable",
    "unwritable",
]


class RagauditError(Exception):
    """Base class of every error ragaudit raises on purpose."""


class InputError(RagauditError, ValueError):
    """Invalid arguments or data (a bad metric name, k < 1, runs that do not overlap...)."""


class FormatError(InputError):
    """A file that does not parse, located as ``FILE:LINE: field: message``.

    Parameters
    ----------
    message : str
        What was expected and what was found.
    path : str or None
        The file, if the data came from one.
    line : int or None
        1-based line number, if known.
    field : str or None
        The field (column, key) at fault, if known.

    Examples
    --------
    >>> err = FormatError("expected an integer, found 'x'", path="q.txt", line=3, field="grade")
    >>> str(err)
    "q.txt:3: grade: expected an integer, found 'x'"
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.field = field
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        if self.field is not None:
            where += f"{self.field}: "
        return where + self.message


_OS_FOUND = {
    FileNotFoundError: ("an existing file", "nothing at this path"),
    IsADirectoryError: ("a file", "a directory"),
    NotADirectoryError: ("a directory", "a file where a directory should be"),
    PermissionError: ("a readable file", "permission denied"),
    FileExistsError: ("a free path", "an existing file"),
}


def unreadable(path: object, exc: OSError | UnicodeDecodeError) -> FormatError:
    r"""The one message for a file that cannot be opened or decoded.

    Every reader raises this instead of quoting the exception (``[Errno 2] ...``); the CLI
    turns a stray ``OSError`` into the same message.

    Parameters
    ----------
    path : str or path-like
        The file, as the user gave it.
    exc : OSError or UnicodeDecodeError

    Examples
    --------
    >>> str(unreadable("runs/k3.json", FileNotFoundError(2, "No such file or directory")))
    'runs/k3.json: expected an existing file, found nothing at this path'
    >>> str(unreadable("q.txt", UnicodeDecodeError("utf-8", b"ok\n\xff", 3, 4, "invalid")))
    'q.txt:2: expected UTF-8 text, found byte 0xff; re-save the file as UTF-8'
    """
    if isinstance(exc, UnicodeDecodeError):
        data = exc.object if isinstance(exc.object, bytes) else bytes(exc.object)
        line = data[: exc.start].count(b"\n") + 1
        bad = data[exc.start : exc.start + 1].hex()
        found = f"byte 0x{bad}" if bad else "a truncated character"
        return FormatError(
            f"expected UTF-8 text, found {found}; re-save the file as UTF-8",
            path=str(path),
            line=line,
        )
    default = ("a readable file", (exc.strerror or type(exc).__name__).lower())
    expected, found = next((v for k, v in _OS_FOUND.items() if isinstance(exc, k)), default)
    return FormatError(f"expected {expected}, found {found}", path=str(path))


_OS_WRITE_FOUND = {
    PermissionError: "permission denied",
    IsADirectoryError: "a directory",
    NotADirectoryError: "a file where a directory should be",
    FileExistsError: "a file where a directory should be",
    FileNotFoundError: "a folder where no file can be created",
}


def unwritable(path: object, exc: OSError) -> FormatError:
    """The one message for an output that cannot be written (every writer raises it).

    Examples
    --------
    >>> str(unwritable("out/k3.json", PermissionError(13, "Permission denied")))
    'out/k3.json: expected a writable path, found permission denied'
    >>> str(unwritable("/mnt/cd/r.html", OSError(30, "Read-only file system")))
    '/mnt/cd/r.html: expected a writable path, found read-only file system'
    """
    found = next((v for k, v in _OS_WRITE_FOUND.items() if isinstance(exc, k)), None)
    if found is None:
        found = (exc.strerror or type(exc).__name__).lower()
    return FormatError(f"expected a writable path, found {found}", path=str(path))


class JudgeError(RagauditError):
    """An LLM judge that could not produce a valid verdict after its retry budget."""


class MissingExtraError(RagauditError, ImportError):
    """An optional dependency is needed; the message names the extra that installs it."""

    def __init__(self, package: str, extra: str, feature: str) -> None:
        super().__init__(
            f"{feature} needs the optional package '{package}'; "
            f"install it with: pip install 'ragaudit[{extra}]'  (or: uv sync --extra {extra})"
        )


class RagauditWarning(UserWarning):
    """Base class of ragaudit's warnings (legal but suspicious input)."""


class UndefinedMetricWarning(RagauditWarning):
    """A metric is undefined for some questions (e.g. no relevant items) and was set to 0."""


class UnjudgedWarning(RagauditWarning):
    """Much of a ranking was never judged: its unjudged items count as non-relevant."""
