"""Progress bars on stderr for long commands (``run``, ``judge``, ``labels build``).

The library reports progress through a callback ``progress(done, total)``; this module turns
it into a :func:`click.progressbar` with position, rate and ETA.  The bar is drawn only when
stderr is a terminal and ``--quiet`` is not given, so pipes, CI logs and tests see nothing.
click is already a core dependency and its bar has an ETA; the rate is shown through its
``item_show_func``, so no new dependency (rich, tqdm) is needed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import click

__all__ = ["Progress", "progress_callback"]

Progress = Callable[[int, int], None]


def _shown(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


def progress_callback(stack: ExitStack, label: str, *, quiet: bool, unit: str = "q") -> Progress:
    """A ``progress(done, total)`` callback drawing one bar, opened on the first call.

    The bar is entered on ``stack`` so it is closed (and its line finished) when the command's
    ``with`` block ends, even on an error.

    Examples
    --------
    >>> from contextlib import ExitStack
    >>> with ExitStack() as stack:  # not a terminal: a no-op
    ...     tick = progress_callback(stack, "questions", quiet=False)
    ...     tick(1, 3)
    """
    if not _shown(quiet):
        return lambda done, total: None
    state: dict[str, Any] = {}

    def tick(done: int, total: int) -> None:
        if "bar" not in state:
            if total <= 0:
                return
            state["start"] = time.monotonic()
            state["done"] = 0
            state["bar"] = stack.enter_context(
                click.progressbar(
                    length=total,
                    label=label,
                    file=sys.stderr,
                    show_eta=True,
                    show_pos=True,
                    item_show_func=lambda rate: rate,
                )
            )
        elapsed = time.monotonic() - state["start"]
        rate = f"{done / elapsed:.1f} {unit}/s" if elapsed > 0 and done else ""
        state["bar"].update(max(0, done - state["done"]), rate)
        state["done"] = done

    return tick
