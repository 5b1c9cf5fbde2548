"""The Ray executor: a run's (question, repeat) units on Ray actors, rows back to the driver.

Ray is the optional extra ``ray`` (``pip install 'ragaudit[ray]'``), imported only here and
only when ``executor="ray"`` is asked for.

How it runs
-----------
- **Where.**  When Ray is not initialised in this process, :func:`start_ray` starts a local
  instance (``num_cpus`` = the cores this process may use, no dashboard, workers' output not
  forwarded) or connects to the cluster at ``ray_address``, and shuts it down at the end.
  When the caller already called ``ray.init``, that instance is used as it is and left running.
- **What travels.**  The work (the pipeline, or the retriever and generator of ``ragaudit
  run``, with the chunks) is pickled once in the driver, with Ray's cloudpickle, before Ray
  is started: what cannot be pickled is a one-line :class:`~ragaudit.exceptions.InputError`
  that says how to make it shippable.  Every loaded module that is not an installed package
  (the script or project files that define the pipeline and what they import) travels *by
  value*, so the workers never import it from a directory; installed packages (ragaudit, your
  client libraries) are imported from the workers' own environment.
- **Isolation.**  A local start gives the job a ``runtime_env`` whose ``working_dir`` is a new
  empty private directory: Ray then neither puts the driver's current directory on the
  workers' ``sys.path`` nor uploads it, so a ``json.py`` planted in the directory you run from
  is never imported by a worker.  Ray's ``uv run`` hook, which would otherwise make each worker
  run ``uv run`` in your current directory, is switched off (``RAY_ENABLE_UV_RUN_RUNTIME_ENV=0``
  unless you set it).
- **Scheduling** is Ray's: one actor per worker (each holds the work, unpickled once), and
  :class:`ray.util.ActorPool` keeps one unit in flight per actor.  Each finished unit's row
  comes back to the driver, which checkpoints it at once (in completion order; the saved run
  orders rows by question).  The first unit that fails stops new submissions; the units
  already running finish and are recorded, then the failure is raised as the pipeline raised
  it (an :class:`~ragaudit.exceptions.InputError` from a worker is still one).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from ragaudit.exceptions import InputError, MissingExtraError, RagauditError
from ragaudit.pipeline.executors import Unit

__all__ = ["check_shippable", "import_ray", "run_on_ray", "shipped", "start_ray"]

#: How to make a pipeline shippable, the end of every pickling error.
SHIPPABLE = (
    "make it shippable: a module-level function, or a callable class whose __init__ keeps "
    "only settings and that opens its clients, locks and sockets on its first call (or drops "
    "them in __getstate__); or use the threads executor"
)


def import_ray() -> ModuleType:
    """The ``ray`` module, or a :class:`MissingExtraError` that names the extra to install."""
    # Ray's `uv run` hook would start every worker with `uv run` in the current directory,
    # syncing and importing whatever project lives there; the workers use this interpreter.
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    try:
        import ray
    except ImportError:
        raise MissingExtraError("ray", "ray", "executor 'ray'") from None
    return ray


def _usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _installed(module: ModuleType) -> bool:
    """True when ``module`` comes from the interpreter's libraries (stdlib or site-packages,
    editable installs included), which every worker of this environment imports itself."""
    file = getattr(module, "__file__", None)
    if module.__name__ in sys.builtin_module_names or file is None:
        return True
    if module.__name__.split(".")[0] == "ragaudit":
        return True
    path = Path(file).resolve()
    roots = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    return any(path.is_relative_to(Path(root).resolve()) for root in roots)


def _project_modules() -> list[ModuleType]:
    """The modules loaded in this process that are not installed (your project's files, a
    test module), ``__main__`` aside (cloudpickle ships it by value anyway)."""
    return [
        module
        for name, module in list(sys.modules.items())
        if isinstance(module, ModuleType) and name != "__main__" and not _installed(module)
    ]


@contextmanager
def shipped(parts: Mapping[str, Any]) -> Iterator[ModuleType]:
    """Inside: every loaded module that is not installed travels by value (the pipeline's
    module and the project modules it uses), so no worker imports it from a directory.

    Checks that every part pickles (with Ray's cloudpickle) and raises a one-line
    :class:`InputError` naming the part and how to make it shippable when one does not.
    """
    ray = import_ray()
    cloudpickle = ray.cloudpickle
    registered: list[ModuleType] = []
    try:
        for module in _project_modules():
            try:
                cloudpickle.register_pickle_by_value(module)
            except ValueError:  # already registered (by the caller)
                continue
            registered.append(module)
        for what, part in parts.items():
            try:
                cloudpickle.dumps(part)
            except Exception as exc:  # pickling raises TypeError, PicklingError, AttributeError
                reason = " ".join(str(exc).split()) or type(exc).__name__
                raise InputError(
                    f"{what}: cannot be sent to Ray workers ({reason}); {SHIPPABLE}"
                ) from None
        yield ray
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)


def check_shippable(parts: Mapping[str, Any]) -> None:
    """Raise the one-line :class:`InputError` of :func:`shipped` now, before anything runs."""
    with shipped(parts):
        pass


def start_ray(address: str | None = None, num_cpus: int | None = None) -> Callable[[], None]:
    """Start (or connect to) Ray unless it is initialised; returns what undoes it.

    Parameters
    ----------
    address : str, optional
        A running cluster (``HOST:6379`` or ``ray://HOST:10001``); default a local instance
        with ``num_cpus`` CPUs (default the cores this process may use).

    Returns
    -------
    callable
        Shuts down what this call started (nothing when Ray was already initialised).

    Raises
    ------
    RagauditError
        Ray did not start, or the cluster cannot be reached (one line, with Ray's reason).
    """
    ray = import_ray()
    if ray.is_initialized():
        return lambda: None
    workdir = tempfile.mkdtemp(prefix="ragaudit-ray-")
    options: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": logging.WARNING,  # no INFO lines of Ray's own on stderr
        "runtime_env": {"working_dir": workdir},
    }
    if address is None:
        options.update(num_cpus=num_cpus or _usable_cores(), include_dashboard=False)
    try:
        ray.init(address=address, **options)
    except Exception as exc:  # ray.init raises bare Exceptions (a node that timed out)
        shutil.rmtree(workdir, ignore_errors=True)
        reason = " ".join(str(exc).split()) or type(exc).__name__
        where = "a local Ray instance" if address is None else f"the Ray cluster at {address}"
        raise RagauditError(f"executor 'ray': could not start or reach {where}: {reason}") from None

    def stop() -> None:
        ray.shutdown()
        shutil.rmtree(workdir, ignore_errors=True)

    return stop


class _Worker:
    """One Ray actor: holds the work (unpickled once) and runs units on it."""

    def __init__(self, work: Callable[[Unit], dict[str, Any]]) -> None:
        self._work = work

    def run(self, unit: Unit) -> tuple[Unit, dict[str, Any]]:
        return unit, self._work(unit)


def run_on_ray(
    work: Callable[[Unit], dict[str, Any]],
    units: Sequence[Unit],
    record: Callable[[Unit, dict[str, Any]], None],
    *,
    parts: Mapping[str, Any],
    workers: int | None = None,
    address: str | None = None,
) -> None:
    """Run ``work(unit)`` for every unit on Ray actors; ``record(unit, row)`` in this process.

    Parameters
    ----------
    work : callable
        ``work(unit) -> row``, pickled once and unpickled once per actor.
    units : sequence of Unit
    record : callable
        Called in the driver with each finished unit and its row, in completion order
        (the harness checkpoints the row there).
    parts : mapping of str to object
        The named parts of ``work`` that the user supplied (``{"pipeline": fn}``), each
        checked for pickling so an error names the part.
    workers : int, optional
        Actors (one CPU each); default and at most the cluster's CPUs.
    address : str, optional
        The cluster (see :func:`start_ray`).
    """
    if not units:
        return
    with shipped({**parts, "the work": work}) as ray:
        stop = start_ray(address)
        try:
            from ray.util import ActorPool

            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
            n = min(cpus, workers or cpus, len(units))
            actor = ray.remote(num_cpus=1)(_Worker)
            shared = ray.put(work)
            actors = [actor.remote(shared) for _ in range(n)]
            try:
                _drain(ActorPool(actors), units, record, ray)
            finally:
                for one in actors:
                    ray.kill(one)
        finally:
            stop()


def _drain(pool: Any, units: Sequence[Unit], record: Callable[..., None], ray: Any) -> None:
    """Submit units while an actor is free, record each result as it arrives; after the first
    failure submit nothing more, record what is still running, then raise that failure."""
    todo = iter(units)
    failure: BaseException | None = None

    def submit_while_free() -> None:
        while failure is None and pool.has_free():
            unit = next(todo, None)
            if unit is None:
                return
            pool.submit(lambda a, u: a.run.remote(u), unit)

    submit_while_free()
    while pool.has_next():
        try:
            unit, row = pool.get_next_unordered()
        except ray.exceptions.RayError as exc:  # a unit raised, or a worker died
            failure = failure or _cause(exc, ray)
            continue
        record(unit, row)
        submit_while_free()
    if failure is not None:
        raise failure


def _cause(exc: Any, ray: Any) -> BaseException:
    """What the pipeline raised in the worker (Ray wraps it), so callers see the same error;
    a worker that died (it could not start, unpickle the work, or was killed) as one line."""
    cause = getattr(exc, "cause", None)
    if isinstance(exc, ray.exceptions.RayTaskError) and isinstance(cause, BaseException):
        return cause
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))  # Ray colours its messages
    errors = re.findall(r"^\s*([\w.]+(?:Error|Exception)): (.+)$", text, re.MULTILINE)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else type(exc).__name__
    reason = f"{errors[-1][0].rsplit('.', 1)[-1]}: {errors[-1][1]}" if errors else first
    reason = reason if len(reason) <= 300 else reason[:297] + "..."
    return RagauditError(f"executor 'ray': a worker failed: {reason}")
