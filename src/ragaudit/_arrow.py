"""The Arrow memory pool a process reading saved runs uses.

pyarrow's default pool on Linux, mimalloc, spent about 0.6 s of system time on the first
read of a 100,000-question Parquet run (18 MB, 150 MB of buffers) on a loaded 2-core
machine, and held about 90 MB more at its peak than jemalloc, which spent 0.1 s
(``benchmarks/bench_scale.py``, ``funnel``: 3.6 against 3.0 CPU s).  So a saved run is read
into jemalloc's pool when the build has it, unless ``ARROW_DEFAULT_MEMORY_POOL`` names one
(before pyarrow is imported, by setting that variable on Linux, so ``--help`` stays free of
pyarrow and numpy).
Only the CLI entry point (:func:`ragaudit.cli.main`) does this: the pool is the whole
process's, and a library (``load_saved_run`` in someone else's application) must not change
its host's global state.
"""

from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["use_fast_pool"]

_DONE: list[bool] = []


def use_fast_pool() -> None:
    """Make jemalloc Arrow's default pool, once per process (see the module docstring); a
    build without it, or a pool named in ``ARROW_DEFAULT_MEMORY_POOL``, is left as it is.

    >>> use_fast_pool()
    >>> import pyarrow as pa
    >>> pa.default_memory_pool().backend_name in ("jemalloc", "mimalloc", "system")
    True
    """
    if _DONE or os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    _DONE.append(True)
    if "pyarrow" not in sys.modules and sys.platform.startswith("linux"):
        # Arrow reads the variable when its default pool is first made: naming the pool
        # here keeps pyarrow (and numpy) out of `ragaudit --help`; Linux wheels carry jemalloc
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "jemalloc"
        return
    import pyarrow as pa

    with contextlib.suppress(NotImplementedError):  # a build without jemalloc (macOS arm64)
        pa.set_memory_pool(pa.jemalloc_memory_pool())
