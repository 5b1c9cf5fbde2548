"""Reading a saved run in a helper process while this process reads another one.

``ragaudit compare A B`` of two 100,000-question runs spends most of its time reading the
two files, one after the other, on one core.  :func:`start_helper` starts a second Python
process (``python -m ragaudit.data.saved_run.helper``) that decodes and checks B's rows with
the msgspec reader (:func:`~ragaudit.data.saved_run.fast.check_rows`: every check of the
in-process read) while this process reads A; it hands over each checked batch (plain lists,
dicts and strings, by :mod:`pickle`) through a temporary file that has no name (deleted
at creation, so nothing is left behind whatever happens).  :meth:`Helper.result` then builds
B from those batches with the same :class:`~ragaudit.data.saved_run.fast_rows.StructRows`
builder, so B is the model an in-process read makes (``tests/saved_run/test_helper.py``).

At any doubt (the helper found a problem, failed or was killed) :meth:`Helper.result` is
None, and the caller reads the file itself: the standard path words any problem.  No
helper is started without msgspec, on a single core, off POSIX, or when
``RAGAUDIT_HELPERS=0``.
"""

from __future__ import annotations

import gc
import os
import pickle
import subprocess
import sys
import tempfile
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ragaudit.data.saved_run.model import QuestionResult, SavedRun

if TYPE_CHECKING:
    from ragaudit.data.saved_run.fast_rows import CheckedBatch

__all__ = ["HELPERS_ENV", "Helper", "cores", "cpu_quota", "main", "start_helper"]

#: Environment variable: ``0`` starts no helper process (every run is read in-process).
HELPERS_ENV = "RAGAUDIT_HELPERS"
_END = "end of rows"  # what the helper writes after its last batch, before the top level
_DOUBT = 3  # the helper's exit status at a doubt


def cores() -> int:
    """The processors this process may run on: its affinity, capped by a cgroup CPU quota
    (a container limited to one CPU may see many), whole processors only.

    >>> cores() >= 1
    True
    """
    try:
        found = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        found = os.cpu_count() or 1
    quota = cpu_quota()
    return found if quota is None else max(1, min(found, int(quota)))


#: Where cgroup v2, then v1, state the CPU quota: ``quota period`` in microseconds (the quota
#: ``max``, or -1 in v1's two files, when there is none).
_QUOTA_FILES = (
    ("/sys/fs/cgroup/cpu.max",),
    ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us"),
)


def cpu_quota(files: Sequence[Sequence[str]] = _QUOTA_FILES) -> float | None:
    """The CPUs a cgroup quota allows this process (quota / period), None without a quota.

    >>> import pathlib, tempfile
    >>> limit = pathlib.Path(tempfile.mkdtemp()) / "cpu.max"
    >>> _ = limit.write_text("150000 100000")
    >>> cpu_quota([[str(limit)]])
    1.5
    >>> _ = limit.write_text("max 100000")
    >>> cpu_quota([[str(limit)]]) is None
    True
    """
    for paths in files:
        try:
            words = " ".join(Path(path).read_text() for path in paths).split()
        except OSError:
            continue  # not this cgroup version
        try:
            quota, period = float(words[0]), int(words[1])
        except (IndexError, ValueError):  # "max", or a file of another shape
            return None
        return quota / period if quota > 0 and period > 0 else None
    return None


#: Seconds a helper may take at the least, and per megabyte of its file on top: it reads at
#: about 80 MB/s here, so this is 10-40x its usual time, and a helper that is stopped
#: (``kill -STOP``) or stuck is given up on instead of waited for.
_WAIT_BASE_S, _WAIT_PER_MB_S = 60.0, 0.5


def helper_timeout(path: str) -> float:
    """Seconds to wait for the helper reading ``path`` before reading it in-process.

    >>> helper_timeout("/no/such/file")
    60.0
    """
    try:
        size_mb = os.path.getsize(path) / 1e6
    except OSError:
        size_mb = 0.0
    return _WAIT_BASE_S + _WAIT_PER_MB_S * size_mb


class Helper:
    """A helper process reading one saved run (see the module docstring)."""

    def __init__(self, path: str, process: subprocess.Popen[bytes], batches: IO[bytes]) -> None:
        self.path = path
        self.timeout = helper_timeout(path)
        self._process = process
        self._batches = batches

    def result(self) -> SavedRun | None:
        """The run the helper read, built here; None at any doubt (read the file then)."""
        from ragaudit.data.saved_run.fast_rows import StructRows

        try:
            if self._process.wait(timeout=self.timeout) != 0:
                return None
            self._batches.seek(0)
            rows_of = StructRows(None)  # builds only: the helper checked the rows
            built: list[QuestionResult] = []
            collecting = gc.isenabled()
            gc.disable()  # millions of acyclic objects (as in fast_saved_run)
            try:
                strings: list[str] = []
                while (sent := pickle.load(self._batches)) != _END:
                    built.extend(rows_of.build_batch(_decoded(sent, strings)))
                top = pickle.load(self._batches)
            finally:
                if collecting:
                    gc.enable()
            return SavedRun.from_parts(top, built, self.path)
        except (OSError, EOFError, pickle.UnpicklingError, subprocess.TimeoutExpired):
            # TimeoutExpired: a stopped or stuck helper; close() kills it and the caller reads
            # the file itself, so compare never waits forever.
            return None
        finally:
            self.close()

    def close(self) -> None:
        """Stop the helper if it still runs, and drop its batches."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._batches.close()


def start_helper(path: str) -> Helper | None:
    """A helper process reading the saved run ``path``, or None when none can help (no
    msgspec, one core, not POSIX, ``RAGAUDIT_HELPERS=0``, or it cannot start)."""
    from ragaudit.data.saved_run.fast import msgspec_module

    if os.environ.get(HELPERS_ENV) == "0" or os.name != "posix" or cores() < 2:
        return None
    if msgspec_module() is None:
        return None
    try:
        batches = tempfile.TemporaryFile()  # noqa: SIM115 - the Helper closes it
    except OSError:  # no room for the batches: read in-process
        return None
    try:
        process = subprocess.Popen(
            # -I: isolated mode. Plain ``-m`` puts the working directory first on the import
            # path, so a ``msgspec.py`` (or ``pickle.py`` ...) where the user runs ``compare``
            # would be imported and executed; -I also ignores PYTHON* variables and user site.
            [sys.executable, "-I", "-m", __name__, path, str(batches.fileno())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(batches.fileno(),),
        )
    except OSError:
        batches.close()
        return None
    return Helper(path, process, batches)


def main(argv: list[str] | None = None) -> int:
    """The helper's side: check the rows of ``argv[0]`` and write each checked batch, then
    the top level, to the open file descriptor ``argv[1]``; exit status 0, or 3 at a doubt."""
    from ragaudit.data.saved_run.fast import check_rows, msgspec_module
    from ragaudit.data.saved_run.fast_rows import StructRows

    path, fd = argv if argv is not None else sys.argv[1:]
    msgspec = msgspec_module()
    if msgspec is None:
        return _DOUBT
    gc.disable()  # the process ends after one file: nothing to collect

    with open(path, "rb") as handle, os.fdopen(int(fd), "wb", closefd=False) as out:
        codes: dict[str, int] = {}

        def take(batch: CheckedBatch) -> None:
            pickle.dump(_encoded(batch, codes), out, protocol=pickle.HIGHEST_PROTOCOL)

        try:
            top = check_rows(msgspec, handle, path, StructRows(msgspec.UNSET), take)
        except Exception:  # any doubt: the caller reads the file and words it
            return _DOUBT
        pickle.dump(_END, out)
        pickle.dump(top, out)
    return 0


# The retrieved entries' ids (20 per question) are most of a run's strings, and few are
# distinct: each id goes across once, as the next code of one table, and each entry as its
# code; the scores go as one array of doubles.  Unpickled as strings and floats they would
# cost about as much as decoding the file.
_CODED = ("chunk_id", "doc_id")


def _encoded(batch: CheckedBatch, codes: dict[str, int]) -> tuple[CheckedBatch, list[str]]:
    """``batch`` with its entries' ids as codes into the ids sent so far (``codes``), and
    the ids new in it, in the order of their codes."""
    columns: dict[str, Any] = dict(batch.columns)
    new: list[str] = []
    for key in _CODED:
        values = columns[key]
        fresh = [text for text in dict.fromkeys(values) if text not in codes]
        codes.update(zip(fresh, range(len(codes), len(codes) + len(fresh)), strict=True))
        new += fresh
        columns[key] = array("L", map(codes.__getitem__, values))
    if batch.score_kinds <= {float}:
        columns["score"] = array("d", columns["score"])
    return batch._replace(columns=columns), new


def _decoded(sent: tuple[CheckedBatch, list[str]], strings: list[str]) -> CheckedBatch:
    """The batch :func:`_encoded` sent (``strings``: every id sent before it, by code)."""
    batch, new = sent
    strings += new
    columns: dict[str, Any] = dict(batch.columns)
    for key in _CODED:
        columns[key] = list(map(strings.__getitem__, columns[key]))
    return batch._replace(columns=columns)


if __name__ == "__main__":
    sys.exit(main())
