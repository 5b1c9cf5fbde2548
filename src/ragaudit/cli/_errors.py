"""The one place where the CLI turns an error into its one-line message and exit code 2.

Every command runs inside :func:`handle_errors`: a :class:`~ragaudit.exceptions.RagauditError`
prints as ``ragaudit: error: FILE:LINE: field: expected ..., found ...``; an ``OSError`` or a
``UnicodeDecodeError`` that escaped a reader prints in the same template
(:func:`~ragaudit.exceptions.unreadable`), never as ``[Errno 2] ...`` and never as a
traceback.  A closed pipe (``ragaudit ... | head``) is normal use and exits 0.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from ragaudit.exceptions import RagauditError, unreadable

__all__ = ["error_line", "handle_errors"]


def error_line(exc: BaseException) -> str:
    """The line printed for ``exc``.

    Examples
    --------
    >>> error_line(FileNotFoundError(2, "No such file or directory", "runs/k3.json"))
    'ragaudit: error: runs/k3.json: expected an existing file, found nothing at this path'
    """
    if isinstance(exc, OSError | UnicodeDecodeError) and not isinstance(exc, RagauditError):
        where = getattr(exc, "filename", None) or "input"
        exc = unreadable(where, exc)
    message = " ".join(str(exc).split()) or type(exc).__name__
    return f"ragaudit: error: {message}"


@contextmanager
def handle_errors(ctx: click.Context) -> Iterator[None]:
    """Run a command; print errors as one line on stderr and exit 2."""
    try:
        yield
    except BrokenPipeError:
        sys.stderr.close()
        ctx.exit(0)
    except (RagauditError, OSError, UnicodeDecodeError) as exc:
        click.echo(error_line(exc), err=True)
        ctx.exit(2)
