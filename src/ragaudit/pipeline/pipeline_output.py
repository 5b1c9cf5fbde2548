"""What a live pipeline returns for one question, and the checks that read it.

:func:`check_output` turns a pipeline's return value (a :class:`PipelineOutput` or a mapping)
into a checked :class:`PipelineOutput`, naming the question and the field of any problem.
Split from :mod:`ragaudit.pipeline.live`, which calls it once per question.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ragaudit.exceptions import InputError

__all__ = ["PipelineOutput", "check_output"]


@dataclass(frozen=True)
class PipelineOutput:
    """What a live pipeline returns for one question (see the module docstring).

    Examples
    --------
    >>> PipelineOutput("Staff get 25 days [1].", contexts=["Staff get 25 days of leave."])
    PipelineOutput(answer='Staff get 25 days [1].', contexts=['Staff get 25 days of leave.'], \
chunk_ids=None, scores=None, latency_ms=None, cost_usd=None)
    """

    answer: str
    contexts: Sequence[str] | None = None
    chunk_ids: Sequence[str] | None = None
    scores: Sequence[float | None] | None = None
    latency_ms: float | Mapping[str, float] | None = None
    cost_usd: float | None = None


_KEYS = tuple(f.name for f in fields(PipelineOutput))


def _number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def _strings(value: Any, where: str, field: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InputError(
            f"{where}: {field}: expected a list of strings, found {type(value).__name__}"
        )
    bad = next((i for i, x in enumerate(value) if not isinstance(x, str)), None)
    if bad is not None:
        raise InputError(
            f"{where}: {field}[{bad}]: expected a string, found {type(value[bad]).__name__}"
        )
    return list(value)


def check_output(value: Any, question_id: str) -> PipelineOutput:
    """``value`` as a validated :class:`PipelineOutput`, else a one-line :class:`InputError`.

    >>> check_output({"answer": "x", "chunk_ids": ["c1"], "cost_usd": 0.01}, "q1").cost_usd
    0.01
    >>> check_output({"answer": "x"}, "q1")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: pipeline output of question 'q1': contexts, chunk_ids: \
expected exactly one of them (a list, possibly empty), found neither
    """
    where = f"pipeline output of question {question_id!r}"
    if isinstance(value, Mapping):
        unknown = sorted(str(key) for key in value if key not in _KEYS)
        if unknown:
            raise InputError(
                f"{where}: {unknown[0]}: unknown key; expected some of {', '.join(_KEYS)}"
            )
        if "answer" not in value:
            raise InputError(f"{where}: answer: missing; return the answer text")
        value = PipelineOutput(**value)
    elif not isinstance(value, PipelineOutput):
        raise InputError(
            f"{where}: expected a PipelineOutput or a mapping with keys {', '.join(_KEYS)}, "
            f"found {type(value).__name__}"
        )
    if not isinstance(value.answer, str):
        raise InputError(f"{where}: answer: expected a string, found {type(value.answer).__name__}")
    given = [name for name in ("contexts", "chunk_ids") if getattr(value, name) is not None]
    if len(given) != 1:
        found = "both" if given else "neither"
        raise InputError(
            f"{where}: contexts, chunk_ids: expected exactly one of them (a list, possibly "
            f"empty), found {found}"
        )
    items = _strings(getattr(value, given[0]), where, given[0])
    if value.scores is not None:
        scores = value.scores
        if isinstance(scores, (str, bytes)) or not isinstance(scores, Sequence):
            raise InputError(f"{where}: scores: expected a list of numbers, found {scores!r}")
        if len(scores) != len(items):
            raise InputError(
                f"{where}: scores: expected one per {given[0][:-1]} ({len(items)}), "
                f"found {len(scores)}"
            )
        for i, score in enumerate(scores):
            if score is not None and not (
                isinstance(score, (int, float))
                and not isinstance(score, bool)
                and math.isfinite(score)
            ):
                raise InputError(f"{where}: scores[{i}]: expected a finite number, found {score!r}")
    latency = value.latency_ms
    if latency is not None and not _number(latency):
        if not isinstance(latency, Mapping):
            raise InputError(
                f"{where}: latency_ms: expected a number of milliseconds >= 0 or a mapping of "
                f"them, found {latency!r}"
            )
        for key, ms in latency.items():
            if not isinstance(key, str) or not _number(ms):
                raise InputError(
                    f"{where}: latency_ms.{key}: expected a number of milliseconds >= 0, "
                    f"found {ms!r}"
                )
    if value.cost_usd is not None and not _number(value.cost_usd):
        raise InputError(
            f"{where}: cost_usd: expected a number of dollars >= 0, found {value.cost_usd!r}"
        )
    return value
