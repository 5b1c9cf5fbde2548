"""inspect_ai evaluation logs as per-question rows: scores become metrics.

The log is read by inspect_ai's own reader (``inspect_ai.log.read_eval_log``, ``.eval`` and
``.json`` alike; ``pip install 'ragaudit[inspect]'``) and taken as its JSON form
(``EvalLog.model_dump(mode="json")``, what a ``.json`` log holds), from which
:func:`rows_from_log` builds the rows:

==================  ====================================================================
row field           from each sample of ``samples``
==================  ====================================================================
``id``              ``id`` (a sample is keyed by ``(id, epoch)``; a pair seen twice is refused)
``question``        ``input`` (a string, or the text of its last user message)
``reference_answer``  ``target`` (a list joined by `` | ``)
``answer``          ``output.choices[0].message.content``
``metrics``         ``scores``: each scorer's ``value`` as a number (``C`` 1, ``I`` 0, ``P``
                    0.5, ``N`` 0, inspect's ``value_to_float`` defaults; booleans 1/0); a
                    dict value gives one metric per key, ``scorer.key``
``latency_ms``      ``total_time`` (seconds) x 1000
``usage``           ``model_usage`` input and output tokens; no cost (inspect records none)
``generation_error``  ``error.message`` of a sample that ended with an error
``tags``            ``[metadata[--cluster-by]]``
==================  ====================================================================

Epochs are repeats of one question: the first epoch is the row's own generation and the
others its ``repeats`` (``docs/saved-run-format.md``, repeated runs), in epoch order, with no
seed (inspect records none per epoch).  An epoch that ended with an error is a generation with
``generation_error`` and null scores; an epoch a sample lacks while others ran it (a log cut
short) is one too, said as "not in the log": no epoch leaves a denominator uncounted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit.data.formats import shorten
from ragaudit.exceptions import FormatError, InputError

__all__ = ["InspectRows", "read_inspect_log", "rows_from_log", "score_number"]

#: inspect_ai's ``value_to_float`` defaults: CORRECT, INCORRECT, PARTIAL, NOANSWER.
LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


@dataclass(frozen=True)
class InspectRows:
    """Rows of one inspect_ai log, with what the log says about itself.

    Attributes
    ----------
    rows : list of dict
        One per sample id, in first-seen order; with several epochs each holds the first
        in its own fields and the others in ``repeats``.
    task, model, status, inspect_version : str
    epochs : int
        The most epochs of a sample.
    scorers : tuple of str
        The metric names, in first-seen order.
    failed_epochs : tuple of str
        ``id@epoch`` of samples that ended with an error (left out of the means).
    """

    rows: list[dict[str, Any]]
    task: str
    model: str
    status: str
    inspect_version: str
    epochs: int
    scorers: tuple[str, ...]
    failed_epochs: tuple[str, ...]


def read_inspect_log(path: str | Path) -> dict[str, Any]:
    """The JSON form of the inspect_ai log at ``path``, read by inspect_ai's own reader.

    Raises
    ------
    InputError
        inspect_ai is not installed (the message says what to install).
    FormatError
        ``FILE: ...`` when inspect_ai cannot read the file (truncated, not a log), with the
        reader's own first line.
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(
            "--from inspect: reading inspect_ai logs needs inspect_ai: "
            "pip install 'ragaudit[inspect]' (or pip install inspect-ai)"
        ) from None
    name = str(path)
    if not Path(path).is_file():
        raise FormatError("no such file", path=name)
    try:
        log = read_eval_log(name)
    except Exception as exc:  # the reader raises JSON, zip, pydantic and key errors alike
        first = (str(exc).strip().splitlines() or [""])[0]
        raise FormatError(
            f"inspect_ai cannot read this log ({type(exc).__name__}: {shorten(first, 160)}); "
            "a truncated or foreign file?",
            path=name,
        ) from None
    dumped: dict[str, Any] = log.model_dump(mode="json")
    return dumped


def score_number(value: Any, path: str, field: str) -> float | None:
    """An inspect_ai score value as a number (None when the scorer gave none).

    >>> score_number("C", "log.json", "samples[0].scores.match.value")
    1.0
    >>> score_number(0.25, "log.json", "x"), score_number(True, "log.json", "x")
    (0.25, 1.0)
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    if isinstance(value, str) and value in LETTERS:
        return LETTERS[value]
    raise FormatError(
        f"expected a number, a boolean or one of C, I, P, N, found {shorten(value)}",
        path=path,
        field=field,
    )


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c.get("text") for c in content if isinstance(c, Mapping)]
        return "".join(p for p in parts if isinstance(p, str))
    return None


def _question(sample: Mapping[str, Any]) -> str:
    given = sample.get("input")
    if isinstance(given, list):
        users = [m for m in given if isinstance(m, Mapping) and m.get("role") == "user"]
        given = _text(users[-1].get("content")) if users else None
    return given if isinstance(given, str) else ""


def _answer(sample: Mapping[str, Any]) -> str | None:
    choices = (sample.get("output") or {}).get("choices") or []
    if not choices or not isinstance(choices[0], Mapping):
        return None
    return _text((choices[0].get("message") or {}).get("content"))


def _metrics(sample: Mapping[str, Any], path: str, where: str) -> dict[str, float | None]:
    scores = sample.get("scores") or {}
    if not isinstance(scores, Mapping):
        raise FormatError(
            f"expected an object, found {shorten(scores)}", path=path, field=f"{where}.scores"
        )
    out: dict[str, float | None] = {}
    for scorer, score in scores.items():
        field = f"{where}.scores.{scorer}"
        if not isinstance(score, Mapping) or "value" not in score:
            raise FormatError(
                f"expected a score with a value, found {shorten(score)}", path=path, field=field
            )
        value = score["value"]
        if isinstance(value, Mapping):
            for key, inner in value.items():
                out[f"{scorer}.{key}"] = score_number(inner, path, f"{field}.value.{key}")
        elif isinstance(value, list):
            raise FormatError(
                f"expected a number or an object, found {shorten(value)}",
                path=path,
                field=f"{field}.value",
            )
        else:
            out[str(scorer)] = score_number(value, path, f"{field}.value")
    return out


def _generation(sample: Mapping[str, Any], path: str, where: str, epoch: int) -> dict[str, Any]:
    """One epoch of a sample as a generation: the keys a row's generation fills in."""
    error = sample.get("error")
    if error:
        message = error.get("message", "") if isinstance(error, Mapping) else str(error)
        return {
            "answer": None, "abstained": None, "citations": [], "judges": {},
            "latency_ms": None,
            "generation_error": f"epoch {epoch}: {shorten(str(message), 120)}",
            "usage": None, "metrics": {},
        }  # fmt: skip
    total = sample.get("total_time")
    timed = isinstance(total, (int, float)) and not isinstance(total, bool)
    seconds = float(total) if timed else 0.0  # type: ignore[arg-type]
    usage = [u for u in (sample.get("model_usage") or {}).values() if isinstance(u, Mapping)]
    return {
        "answer": _answer(sample),
        "abstained": None,
        "citations": [],
        "judges": {},
        "latency_ms": {"total": seconds * 1000} if timed else None,
        "generation_error": None,
        "usage": {
            "input_tokens": sum(int(u.get("input_tokens") or 0) for u in usage),
            "output_tokens": sum(int(u.get("output_tokens") or 0) for u in usage),
            "cost_usd": None,
        }
        if usage
        else None,
        "metrics": _metrics(sample, path, where),
    }


def _missing_epoch(epoch: int) -> dict[str, Any]:
    """An epoch the log does not hold for a sample that others ran (a log cut short)."""
    return {"answer": None, "judges": {}, "latency_ms": None,
            "generation_error": f"epoch {epoch}: not in the log", "metrics": {}}  # fmt: skip


def rows_from_log(
    log: Mapping[str, Any], path: str | Path, *, cluster_by: str | None = None
) -> InspectRows:
    """Per-question rows from an inspect_ai log's JSON form (see the module docstring).

    Examples
    --------
    >>> log = {"eval": {"task": "t", "model": "mockllm/model"}, "status": "success",
    ...        "samples": [{"id": 1, "epoch": e, "input": "2+2?", "target": "4",
    ...                     "output": {"choices": [{"message": {"content": a}}]},
    ...                     "scores": {"match": {"value": v}}}
    ...                    for e, a, v in ((1, "4", "C"), (2, "5", "I"))]}
    >>> got = rows_from_log(log, "log.json")
    >>> got.rows[0]["id"], got.rows[0]["answer"], got.rows[0]["metrics"], got.epochs
    ('1', '4', {'match': 1.0}, 2)
    >>> got.rows[0]["repeats"][0]["answer"], got.rows[0]["repeats"][0]["metrics"]
    ('5', {'match': 0.0})
    """
    name = str(path)
    samples = log.get("samples")
    if not isinstance(samples, list) or not samples:
        raise FormatError(
            "expected samples, found none (a log written with log_samples=False, or a run "
            "that never started)",
            path=name,
            field="samples",
        )
    eval_info = log.get("eval") or {}
    groups: dict[str, list[tuple[int, int, Mapping[str, Any]]]] = {}
    seen: set[tuple[str, int]] = set()
    for i, sample in enumerate(samples):
        where = f"samples[{i}]"
        if not isinstance(sample, Mapping):
            raise FormatError(
                f"expected a sample object, found {shorten(sample)}", path=name, field=where
            )
        sid, epoch = sample.get("id"), sample.get("epoch", 1)
        if not isinstance(sid, (str, int)) or isinstance(sid, bool) or str(sid) == "":
            raise FormatError(
                f"expected a sample id, found {shorten(sid)}", path=name, field=f"{where}.id"
            )
        if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
            raise FormatError(
                f"expected an epoch >= 1, found {shorten(epoch)}", path=name, field=f"{where}.epoch"
            )
        if (str(sid), epoch) in seen:
            raise FormatError(
                f"sample {sid!s} epoch {epoch} appears twice", path=name, field=f"{where}.id"
            )
        seen.add((str(sid), epoch))
        groups.setdefault(str(sid), []).append((epoch, i, sample))
    scorers: dict[str, None] = {}
    failed: list[str] = []
    # epochs are numbered 1..epochs; a sample's numbers are distinct, so this bounds its count
    epochs = max(epoch for g in groups.values() for epoch, _, _ in g)
    made: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for sid, group in groups.items():
        group.sort(key=lambda item: item[0])
        first = group[0][2]
        by_epoch: dict[int, dict[str, Any]] = {}
        for epoch, i, sample in group:
            generation = _generation(sample, name, f"samples[{i}]", epoch)
            if generation["generation_error"] is not None:
                failed.append(f"{sid}@{epoch}")
            scorers.update(dict.fromkeys(generation["metrics"]))
            by_epoch[epoch] = generation
        # repeat r is epoch r + 1: an epoch the log lacks (a log cut short) stays in its
        # place as a generation error, said and never dropped or shifted
        generations = [by_epoch.get(e) or _missing_epoch(e) for e in range(1, epochs + 1)]
        tags: list[str] = []
        if cluster_by is not None:
            metadata = first.get("metadata") or {}
            if cluster_by not in metadata:
                raise FormatError(
                    f"--cluster-by {cluster_by}: sample {sid} has no such metadata key; found "
                    f"{', '.join(map(str, metadata)) or 'no metadata'}",
                    path=name,
                    field=f"samples[{group[0][1]}].metadata",
                )
            tags = [str(metadata[cluster_by])]
        target = first.get("target")
        reference = " | ".join(map(str, target)) if isinstance(target, list) else target
        question = {
            "id": sid,
            "question": _question(first),
            "answerable": True,
            "reference_answer": reference if isinstance(reference, str) else None,
            "keywords": [],
            "gold_docs": [],
            "tags": tags,
            "retrieved": [],
            "context_ids": [],
        }
        made.append((question, generations))
    rows = []
    for question, generations in made:
        for generation in generations:  # every scorer in every generation, null when absent
            generation["metrics"] = {m: generation["metrics"].get(m) for m in scorers}
        first, *others = generations
        row = {**question, **first}
        if others:
            row["repeats"] = [{"seed": None, **g} for g in others]
        rows.append(row)
    packages = eval_info.get("packages") or {}
    return InspectRows(
        rows=rows,
        task=str(eval_info.get("task", "")),
        model=str(eval_info.get("model", "")),
        status=str(log.get("status", "")),
        inspect_version=str(packages.get("inspect_ai", "")),
        epochs=epochs,
        scorers=tuple(scorers),
        failed_epochs=tuple(failed),
    )
