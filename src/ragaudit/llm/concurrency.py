"""Many LLM calls at once, results in input order, cancellable."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, TypeVar

__all__ = ["map_in_order"]

T = TypeVar("T")
R = TypeVar("R")


def map_in_order(
    fn: Callable[[T], R],
    items: Iterable[T],
    max_workers: int,
    progress: Callable[[int, int], None] | None = None,
) -> list[R]:
    """Apply ``fn`` to every item with at most ``max_workers`` in flight, in input order.

    ``progress(done, total)`` is called from the calling thread after each item.  An
    exception (and Ctrl-C) cancels the items not yet started and propagates.

    Examples
    --------
    >>> map_in_order(lambda x: x * x, [3, 1, 2], max_workers=2)
    [9, 1, 4]
    """
    work = list(items)
    if not work:
        return []
    results: list[Any] = [None] * len(work)
    executor = ThreadPoolExecutor(
        max_workers=min(max_workers, len(work)), thread_name_prefix="ragaudit-llm"
    )
    futures = {executor.submit(fn, item): index for index, item in enumerate(work)}
    try:
        for done, future in enumerate(as_completed(futures), start=1):
            results[futures[future]] = future.result()
            if progress is not None:
                progress(done, len(work))
    except KeyboardInterrupt:
        # Requests in flight finish in the background and land in the cache.
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    except BaseException:
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
    return results
