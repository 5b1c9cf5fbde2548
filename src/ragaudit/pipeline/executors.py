"""Where the harness's units of work run: a thread pool here, or Ray workers.

The unit of work is one (question, repeat) pair, :class:`Unit`: the position of the question
in the golden set (the order rows are written in, whatever order units finish in), the repeat
number (0 while a saved run holds one generation per question) and its seed.  The seed is a
pure function of the run's seed, the question id and the repeat (:func:`unit_seed`), so a unit
gets the same seed on any executor, in any order, on a resume: a stochastic generator that
draws from it gives the same rows on threads and on Ray.

Two executors run a list of units, :data:`EXECUTORS`:

``"threads"`` (the default)
    The current thread pool of :mod:`ragaudit.pipeline.steps` (``max_workers`` threads).
``"ray"``
    Ray actors, one per worker (:mod:`ragaudit.pipeline.ray_executor`, the ``ray`` extra),
    on a local Ray instance or the cluster at ``ray_address``.

Either way the driver (this process) appends each finished unit's row to the checkpoint the
moment it arrives, so an interrupted run resumes on either executor without calling a finished
unit again; the executor is not part of the checkpoint's configuration.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragaudit.exceptions import InputError

if TYPE_CHECKING:  # `ragaudit run --help` imports EXECUTORS from here: nothing heavy
    from ragaudit.data.golden import GoldenQuestion

__all__ = ["EXECUTORS", "SEED_RULE", "Unit", "check_executor", "unit_seed", "units_of"]

#: The executors of the harness loop, default first.
EXECUTORS: tuple[str, ...] = ("threads", "ray")


def check_executor(executor: object, ray_address: object = None) -> str:
    """``executor`` checked against :data:`EXECUTORS` (and ``ray_address`` only with Ray).

    >>> check_executor("ray", "127.0.0.1:6379")
    'ray'
    >>> check_executor("processes")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: executor: expected one of threads, ray, found 'processes'
    """
    if executor not in EXECUTORS:
        raise InputError(f"executor: expected one of {', '.join(EXECUTORS)}, found {executor!r}")
    if ray_address is not None and executor != "ray":
        raise InputError("ray_address: only applies with executor 'ray'")
    if ray_address is not None and (not isinstance(ray_address, str) or not ray_address):
        raise InputError(
            f"ray_address: expected an address such as HOST:6379, found {ray_address!r}"
        )
    return str(executor)


#: :func:`unit_seed` in words, as a repeated saved run records it (``config.repeat_seed_rule``).
SEED_RULE = (
    "the seed of (question, repeat) is the first 4 bytes, little-endian, of the SHA-256 of "
    "the JSON [repeat_seeds[repeat], question id, repeat]"
)


def unit_seed(seed: int, question_id: str, repeat: int) -> int:
    """The seed of one (question, repeat) unit: independent of order, executor and resume.

    The first four bytes (little-endian) of the SHA-256 of ``[seed, question_id, repeat]``
    as JSON: a hash that, unlike Python's ``hash``, is the same in every process and on every
    machine, and a 32-bit word any generator (numpy, ``random``, an LLM API's ``seed``) takes.

    >>> unit_seed(0, "q1", 0) == unit_seed(0, "q1", 0)
    True
    >>> len({unit_seed(0, "q1", 0), unit_seed(0, "q1", 1), unit_seed(1, "q1", 0),
    ...      unit_seed(0, "q2", 0)})
    4
    """
    key = json.dumps([int(seed), question_id, int(repeat)], ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:4], "little")


@dataclass(frozen=True)
class Unit:
    """One (question, repeat) pair of a run: the unit an executor runs and a checkpoint holds.

    Attributes
    ----------
    index : int
        Position of the question in the golden set; rows are written in this order.
    question : GoldenQuestion
    repeat : int
        0-based repeat number (0 while a saved run holds one generation per question).
    seed : int
        :func:`unit_seed` of the run's seed, the question id and ``repeat``.
    """

    index: int
    question: GoldenQuestion
    repeat: int
    seed: int


def units_of(questions: list[GoldenQuestion], seed: int, repeats: int = 1) -> list[Unit]:
    """Every (question, repeat) unit, in row order: by question, then by repeat.

    >>> from ragaudit.data.golden import GoldenQuestion
    >>> qs = [GoldenQuestion("q1", "Why?", "", ()), GoldenQuestion("q2", "How?", "", ())]
    >>> [(u.index, u.question.id, u.repeat) for u in units_of(qs, seed=0, repeats=2)]
    [(0, 'q1', 0), (0, 'q1', 1), (1, 'q2', 0), (1, 'q2', 1)]
    """
    return [
        Unit(i, q, r, unit_seed(seed, q.id, r))
        for i, q in enumerate(questions)
        for r in range(repeats)
    ]
