"""One call of the user's pipeline with a time limit (``evaluate_pipeline(timeout=...)``).

A model endpoint that never answers would otherwise stall the run, and the thread pool
waiting for it, forever.  Python cannot stop a thread, so the call runs on a daemon thread
that is waited for at most ``timeout`` seconds: past that the run stops with a
:class:`TimeoutError` naming the question, and the overrunning call goes on in the background
without holding the interpreter open.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["CALL_TIMEOUT", "call_with_timeout"]

#: Seconds one call may take by default: ten times what a slow LLM answer takes (the openai
#: client's own request timeout is 600 s).
CALL_TIMEOUT = 300.0


def call_with_timeout(
    function: Callable[[Any], Any], argument: Any, timeout: float | None, what: str
) -> Any:
    """``function(argument)``, waited for at most ``timeout`` seconds (None: in this thread,
    for as long as it takes).

    Whatever the function raises is raised here unchanged; ``what`` names the call in the
    timeout's message.

    >>> call_with_timeout(str.upper, "ok", 1.0, "question 'q1'")
    'OK'
    >>> import time
    >>> call_with_timeout(time.sleep, 1, 0.01, "question 'q1'")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TimeoutError: pipeline call for question 'q1' did not return within 0.01 s (timeout=0.01); ...
    """
    if timeout is None:
        return function(argument)
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["value"] = function(argument)
        except BaseException as exc:  # re-raised in the caller's thread, unchanged
            box["error"] = exc

    thread = threading.Thread(target=call, name="ragaudit-pipeline-call", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(
            f"pipeline call for {what} did not return within {timeout:g} s (timeout={timeout:g}); "
            "finished questions are in the checkpoint and a rerun resumes after them; pass a "
            "larger timeout= if your pipeline is this slow, or timeout=None to wait forever"
        )
    if "error" in box:
        raise box["error"]
    return box["value"]
