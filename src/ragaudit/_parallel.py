"""Independent slices of array work spread over two threads.

numpy releases the GIL inside its array operations (ufuncs, sorts, searches, gathers), so
two threads working on separate slices of questions use two cores.  Each slice writes its
own part of the output (or returns its result, collected in order): the results do not
depend on the number of threads or on their timing.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["map_slices", "trim_heap"]

_T = TypeVar("_T")
_R = TypeVar("_R")


def _usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS says, as a container or
    ``taskset`` limits it; ``os.cpu_count()`` counts the whole machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


WORKERS = min(2, _usable_cores())  # two threads are enough for slices of numpy work


def map_slices(work: Callable[[_T], _R], slices: Iterable[_T]) -> list[_R]:
    """``[work(s) for s in slices]``, run on up to :data:`WORKERS` threads.

    >>> map_slices(lambda pair: pair[0] + pair[1], [(1, 2), (3, 4), (5, 6)])
    [3, 7, 11]
    """
    items = list(slices)
    if len(items) < 2 or WORKERS < 2:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        results = list(pool.map(work, items))
    trim_heap()  # the threads' malloc arenas keep what their temporaries freed
    return results


def trim_heap() -> None:
    """Return the free pages of the C heap (every malloc arena) to the system, where glibc's
    ``malloc_trim`` exists."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
