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
``answer``          the first epoch's ``output.choices[0].message.content``
``metrics``         ``scores``: each scorer's ``value`` as a number (``C`` 1, ``I`` 0, ``P``
                    0.5, ``N`` 0, inspect's ``value_to_float`` defaults; booleans 1/0); a
                    dict value gives one metric per key, ``scorer.key``
``latency_ms``      ``total_time`` (seconds) x 1000
``usage``           ``model_usage`` input and output tokens; no cost (inspect records none)
``tags``            ``[metadata[--cluster-by]]``
==================  ====================================================================

Epochs are repeats of one question.  Until saved runs hold repeats, each question's metric is
its **mean over epochs** (over the epochs where the scorer gave a value; an epoch that failed
with an error is left out and counted), as are its latency and tokens; the import says so.
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
        One per sample id, in first-seen order.
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


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


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
    ('1', '4', {'match': 0.5}, 2)
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
    rows: list[dict[str, Any]] = []
    scorers: dict[str, None] = {}
    failed: list[str] = []
    for sid, group in groups.items():
        group.sort(key=lambda item: item[0])
        first = group[0][2]
        values: dict[str, list[float]] = {}
        times: list[float] = []
        tokens_in: list[int] = []
        tokens_out: list[int] = []
        errors: list[str] = []
        for epoch, i, sample in group:
            where = f"samples[{i}]"
            if sample.get("error"):
                failed.append(f"{sid}@{epoch}")
                message = (
                    (sample["error"] or {}).get("message", "")
                    if isinstance(sample["error"], Mapping)
                    else str(sample["error"])
                )
                errors.append(f"epoch {epoch}: {shorten(str(message), 120)}")
                continue
            for metric, number in _metrics(sample, name, where).items():
                scorers.setdefault(metric)
                if number is not None:
                    values.setdefault(metric, []).append(number)
            if isinstance(sample.get("total_time"), (int, float)):
                times.append(float(sample["total_time"]) * 1000)
            usage = [
                u for u in (sample.get("model_usage") or {}).values() if isinstance(u, Mapping)
            ]
            if usage:
                tokens_in.append(sum(int(u.get("input_tokens") or 0) for u in usage))
                tokens_out.append(sum(int(u.get("output_tokens") or 0) for u in usage))
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
        all_failed = len(errors) == len(group)
        rows.append(
            {
                "id": sid,
                "question": _question(first),
                "answerable": True,
                "reference_answer": reference if isinstance(reference, str) else None,
                "keywords": [],
                "gold_docs": [],
                "tags": tags,
                "retrieved": [],
                "context_ids": [],
                "answer": None
                if all_failed
                else _answer(next(s for _, _, s in group if not s.get("error"))),
                "abstained": None,
                "citations": [],
                "judges": {},
                "latency_ms": {"total": _mean(times)} if times else None,
                "generation_error": "; ".join(errors) if all_failed else None,
                # Token counts are whole numbers in a saved run: the question's epochs summed
                # (divide by ``epochs`` for one generation's), not a fractional mean.
                "usage": {
                    "input_tokens": sum(tokens_in),
                    "output_tokens": sum(tokens_out),
                    "cost_usd": None,
                }
                if tokens_in
                else None,
                "epochs": len(group) - len(errors),
                "_values": values,
            }
        )
    for row in rows:
        values = row.pop("_values")
        row["metrics"] = {m: _mean(values.get(m, [])) for m in scorers}
    packages = eval_info.get("packages") or {}
    return InspectRows(
        rows=rows,
        task=str(eval_info.get("task", "")),
        model=str(eval_info.get("model", "")),
        status=str(log.get("status", "")),
        inspect_version=str(packages.get("inspect_ai", "")),
        epochs=max(len(g) for g in groups.values()),
        scorers=tuple(scorers),
        failed_epochs=tuple(failed),
    )
