"""The recurring argument checks, with one message template each.

Every check raises :class:`~ragaudit.exceptions.InputError` as ``name: expected ..., found
...`` and returns the cleaned value, so a caller writes ``k = check_int(k, "k")``.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ragaudit.exceptions import InputError

__all__ = [
    "check_choice",
    "check_fraction",
    "check_int",
    "check_metric_names",
    "check_path",
    "check_unique",
    "name_some",
]

T = TypeVar("T")


def check_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """``value`` as an ``int`` if it is an integer >= ``minimum`` (booleans are not integers).

    >>> check_int(3, "k"), check_int(0, "seed", minimum=0)
    (3, 0)
    >>> check_int(0, "k")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: k: expected an integer >= 1, found 0
    >>> check_int(True, "n_resamples")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: n_resamples: expected an integer >= 1, found True
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InputError(f"{name}: expected an integer >= {minimum}, found {value!r}")
    return int(value)


def check_path(value: Any, name: str) -> str | os.PathLike[str]:
    """``value`` if it is a file path: a ``str`` or an ``os.PathLike`` of one.

    Bytes, integers (a file descriptor would be read) and other objects are refused, naming
    the argument, before anything is opened.

    >>> check_path("run.trec", "path")
    'run.trec'
    >>> check_path(3, "path")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: path: expected a file path (str or os.PathLike), found int 3
    """
    if isinstance(value, str) or (
        isinstance(value, os.PathLike) and isinstance(os.fspath(value), str)
    ):
        return value
    shown = type(value).__name__ + ("" if value is None else f" {value!r}"[:60])
    raise InputError(f"{name}: expected a file path (str or os.PathLike), found {shown}")


def check_metric_names(value: Any, name: str = "metrics") -> list[str] | None:
    """Metric names as a list: one string is ONE metric (never its characters); None stays
    None (every metric).

    >>> check_metric_names("recall@k"), check_metric_names(("correct", "ndcg@k"))
    (['recall@k'], ['correct', 'ndcg@k'])
    >>> check_metric_names([1])
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: metrics: expected a metric name or a list of them, found [1]
    """
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        names = list(value)
        if all(isinstance(v, str) for v in names):
            return names
    raise InputError(f"{name}: expected a metric name or a list of them, found {value!r:.80}")


def check_fraction(value: Any, name: str) -> float:
    """``value`` as a ``float`` strictly between 0 and 1 (a confidence level, a rate).

    >>> check_fraction(0.95, "confidence")
    0.95
    >>> check_fraction(1, "confidence")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: confidence: expected a number strictly between 0 and 1, found 1
    """
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not (ok and math.isfinite(value) and 0.0 < float(value) < 1.0):
        raise InputError(f"{name}: expected a number strictly between 0 and 1, found {value!r}")
    return float(value)


def check_choice(value: T, name: str, choices: Iterable[T]) -> T:
    """``value`` if it is one of ``choices``.

    >>> check_choice("macro", "average", ("macro", "micro"))
    'macro'
    >>> check_choice("mean", "average", ("macro", "micro"))
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: average: expected one of macro, micro, found 'mean'
    """
    options = tuple(choices)
    if value not in options:
        raise InputError(f"{name}: expected one of {', '.join(map(str, options))}, found {value!r}")
    return value


def check_unique(items: Sequence[str], field: str) -> None:
    """Refuse an item listed twice, naming both positions (1-based).

    >>> check_unique(["B", "A", "B"], "ranking")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: ranking: item 'B' appears more than once (positions 1 and 3)
    """
    first_seen: dict[str, int] = {}
    for position, item in enumerate(items, start=1):
        if item in first_seen:
            raise InputError(
                f"{field}: item {item!r} appears more than once "
                f"(positions {first_seen[item]} and {position})"
            )
        first_seen[item] = position


def name_some(ids: Sequence[str], shown: int = 5) -> str:
    """The first ``shown`` of ``ids`` and how many more, for a message naming questions.

    >>> name_some(["q1", "q2"]), name_some([f"q{i}" for i in range(8)], shown=3)
    ('q1, q2', 'q0, q1, q2, ... (5 more)')
    """
    listed = ", ".join(ids[:shown])
    return listed + (f", ... ({len(ids) - shown} more)" if len(ids) > shown else "")
