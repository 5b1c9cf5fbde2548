"""Read per-question metric values and pair two runs by question id.

Three file shapes are understood, so ``ragaudit compare`` works on any pipeline's output:

* a saved run (``docs/saved-run-format.md``): each row's ``id`` and flat ``metrics`` dict;
* JSON ``{question_id: {metric: value}}``;
* JSONL, one ``{"id": question_id, metric: value, ...}`` per line (a line may instead carry
  a ``metrics`` dict, as saved-run rows do).

Values are numbers, booleans (read as 1.0 / 0.0) or ``null`` (*not applicable*, excluded
pairwise).  Anything else, including NaN and infinities, is a :class:`FormatError` naming the
file, line (JSONL), question and metric.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit.exceptions import FormatError, InputError, RagauditWarning, unreadable

__all__ = [
    "QUESTION_SUBSETS",
    "PairedMetrics",
    "PerQuestionMetrics",
    "pair_runs",
    "read_per_question_metrics",
]

QUESTION_SUBSETS: tuple[str, ...] = ("all", "answerable", "unanswerable")


@dataclass(frozen=True)
class PerQuestionMetrics:
    """Per-question metric values of one run.

    Attributes
    ----------
    name : str
        The run's name (saved-run ``name`` or the file stem).
    values : dict of str to dict of str to float or None
        ``{question_id: {metric: value}}``; ``None`` means not applicable.
    path : str or None
        The file it was read from.
    answerable : dict of str to bool or None
        Saved runs only: each question's ``answerable`` flag (see :meth:`subset`).
    """

    name: str
    values: dict[str, dict[str, float | None]]
    path: str | None = None
    answerable: dict[str, bool] | None = None

    def subset(self, questions: str) -> PerQuestionMetrics:
        """Keep ``"all"``, only the ``"answerable"`` or only the ``"unanswerable"`` questions.

        >>> run = PerQuestionMetrics("r", {"q1": {"c": 1.0}, "q2": {"c": 0.0}},
        ...                          answerable={"q1": True, "q2": False})
        >>> run.subset("answerable").values
        {'q1': {'c': 1.0}}
        """
        if questions not in QUESTION_SUBSETS:
            raise InputError(
                f"questions: expected one of {', '.join(QUESTION_SUBSETS)}, found {questions!r}"
            )
        if questions == "all":
            return self
        if self.answerable is None:
            raise InputError(
                f"{self.path or self.name}: only saved runs record which questions are "
                f"answerable, so --questions {questions} cannot be applied to this file"
            )
        wanted = questions == "answerable"
        kept = {q: v for q, v in self.values.items() if self.answerable.get(q, True) == wanted}
        return PerQuestionMetrics(self.name, kept, self.path, self.answerable)

    @property
    def metrics(self) -> list[str]:
        """Metric names in order of first appearance."""
        seen: dict[str, None] = {}
        for row in self.values.values():
            for metric in row:
                seen.setdefault(metric, None)
        return list(seen)


@dataclass(frozen=True)
class PairedMetrics:
    """Two runs' values aligned on their common questions (sorted by id).

    Attributes
    ----------
    ids : tuple of str
        Common question ids, sorted.
    a, b : dict of str to ndarray
        Metric -> values aligned to ``ids``; NaN where the value is ``null``.
    only_a, only_b : tuple of str
        Questions present in one run only (excluded).
    name_a, name_b : str
        The runs' names.
    """

    ids: tuple[str, ...]
    a: dict[str, np.ndarray]
    b: dict[str, np.ndarray]
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    name_a: str = "A"
    name_b: str = "B"
    metrics: tuple[str, ...] = field(default=())


def _clean_value(
    value: Any, *, path: str | None, line: int | None, qid: str, metric: str
) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        as_float = float(value)
        if math.isfinite(as_float):
            return as_float
        raise FormatError(
            f"question {qid!r}: expected a finite number or null, found {value!r}",
            path=path,
            line=line,
            field=metric,
        )
    raise FormatError(
        f"question {qid!r}: expected a number, boolean or null, found {value!r}",
        path=path,
        line=line,
        field=metric,
    )


def _clean_row(
    metrics: Any, *, path: str | None, line: int | None, qid: str
) -> dict[str, float | None]:
    if not isinstance(metrics, Mapping):
        raise FormatError(
            f"question {qid!r}: expected a mapping of metric -> value, found "
            f"{type(metrics).__name__}",
            path=path,
            line=line,
            field="metrics",
        )
    return {
        str(metric): _clean_value(value, path=path, line=line, qid=qid, metric=str(metric))
        for metric, value in metrics.items()
    }


def _add(
    values: dict[str, dict[str, float | None]],
    qid: Any,
    row: dict[str, float | None],
    *,
    path: str | None,
    line: int | None,
) -> None:
    if not isinstance(qid, str | int) or isinstance(qid, bool):
        raise FormatError(
            f"expected a question id string, found {qid!r}", path=path, line=line, field="id"
        )
    key = str(qid)
    if key in values:
        raise FormatError(
            f"question {key!r} appears more than once", path=path, line=line, field="id"
        )
    values[key] = row


def _from_jsonl(text: str, path: str | None) -> dict[str, dict[str, float | None]]:
    values: dict[str, dict[str, float | None]] = {}
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON ({exc.msg})", path=path, line=line_no) from None
        if not isinstance(record, dict) or "id" not in record:
            raise FormatError(
                "expected an object with an 'id' key", path=path, line=line_no, field="id"
            )
        qid = record["id"]
        if isinstance(record.get("metrics"), Mapping):
            metrics = record["metrics"]
        else:
            metrics = {k: v for k, v in record.items() if k != "id"}
        row = _clean_row(metrics, path=path, line=line_no, qid=str(qid))
        _add(values, qid, row, path=path, line=line_no)
    return values


def _answerable_flags(doc: Any) -> dict[str, bool] | None:
    """``{question_id: answerable}`` of a saved run, None for other shapes."""
    if not (isinstance(doc, dict) and isinstance(doc.get("rows"), list)):
        return None
    return {
        str(row["id"]): bool(row.get("answerable", True))
        for row in doc["rows"]
        if isinstance(row, dict) and "id" in row
    }


def _from_json(doc: Any, path: str | None) -> tuple[str | None, dict[str, dict[str, float | None]]]:
    values: dict[str, dict[str, float | None]] = {}
    if isinstance(doc, dict) and isinstance(doc.get("rows"), list):  # a saved run
        name = doc.get("name")
        for position, row in enumerate(doc["rows"]):
            if not isinstance(row, dict) or "id" not in row:
                raise FormatError(
                    f"row {position}: expected an object with an 'id' key", path=path, field="rows"
                )
            qid = str(row["id"])
            cleaned = _clean_row(row.get("metrics", {}), path=path, line=None, qid=qid)
            _add(values, row["id"], cleaned, path=path, line=None)
        return (str(name) if name is not None else None), values
    if isinstance(doc, dict):
        for qid, metrics in doc.items():
            values[str(qid)] = _clean_row(metrics, path=path, line=None, qid=str(qid))
        return None, values
    raise FormatError(
        "expected a saved run, a {question_id: {metric: value}} object or JSONL lines, found "
        f"a JSON {type(doc).__name__}",
        path=path,
    )


def read_per_question_metrics(source: str | os.PathLike[str]) -> PerQuestionMetrics:
    """Read per-question metric values from a saved run, a JSON mapping or JSONL lines.

    Parameters
    ----------
    source : path-like
        The file.  ``.jsonl`` files are read line by line; anything else is parsed as one JSON
        document (a saved run or ``{question_id: {metric: value}}``).

    Returns
    -------
    PerQuestionMetrics

    Raises
    ------
    FormatError
        Unreadable file, malformed JSON, duplicate ids, or a value that is not a finite number,
        boolean or null (the message names the question and metric).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "run.jsonl").write_text('{"id": "q1", "hit": true, "cite": null}\\n')
    >>> read_per_question_metrics(folder / "run.jsonl").values
    {'q1': {'hit': 1.0, 'cite': None}}
    """
    path = Path(source)
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(where, exc) from None
    name: str | None = None
    answerable: dict[str, bool] | None = None
    if path.suffix.lower() == ".jsonl":
        values = _from_jsonl(text, where)
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON ({exc.msg})", path=where, line=exc.lineno) from None
        name, values = _from_json(doc, where)
        answerable = _answerable_flags(doc)
    if not values:
        raise FormatError("no questions found", path=where)
    return PerQuestionMetrics(
        name=name or path.stem, values=values, path=where, answerable=answerable
    )


def _as_array(run: PerQuestionMetrics, ids: Sequence[str], metric: str) -> np.ndarray:
    column = [run.values[qid].get(metric) for qid in ids]
    return np.array([np.nan if v is None else v for v in column], dtype=float)


def _preview(ids: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")


def pair_runs(
    run_a: PerQuestionMetrics,
    run_b: PerQuestionMetrics,
    metrics: Sequence[str] | None = None,
    *,
    allow_partial: bool = False,
) -> PairedMetrics:
    """Align two runs on their common question ids.

    Questions present in only one run are excluded with a warning that names them.  When
    fewer than half of the larger run's questions are common it is an error unless
    ``allow_partial``; no common question at all is always an error.  A metric that appears in
    no row of one run is an error when requested, and skipped with a warning otherwise.  A row
    without a metric key counts as ``null`` for that metric.

    Parameters
    ----------
    run_a, run_b : PerQuestionMetrics
    metrics : sequence of str, optional
        Metrics to pair; default every metric present in both runs (A's order).
    allow_partial : bool, default False

    Returns
    -------
    PairedMetrics

    Examples
    --------
    >>> a = PerQuestionMetrics("a", {"q1": {"hit": 1.0}, "q2": {"hit": 0.0}})
    >>> b = PerQuestionMetrics("b", {"q2": {"hit": 1.0}, "q1": {"hit": None}})
    >>> paired = pair_runs(a, b)
    >>> paired.ids, paired.b["hit"].tolist()
    (('q1', 'q2'), [nan, 1.0])
    """
    common = sorted(set(run_a.values) & set(run_b.values))
    only_a = tuple(sorted(set(run_a.values) - set(run_b.values)))
    only_b = tuple(sorted(set(run_b.values) - set(run_a.values)))
    if not common:
        raise InputError(
            f"runs {run_a.name!r} and {run_b.name!r} have no question id in common "
            f"({len(run_a.values)} vs {len(run_b.values)} questions); are they runs of the same "
            "golden set?"
        )
    larger = max(len(run_a.values), len(run_b.values))
    if 2 * len(common) < larger and not allow_partial:
        raise InputError(
            f"runs {run_a.name!r} and {run_b.name!r} share only {len(common)} of {larger} "
            "questions (fewer than half); pass --allow-partial (allow_partial=True) to compare "
            "them anyway"
        )
    for name, missing in ((run_a.name, only_a), (run_b.name, only_b)):
        if missing:
            warnings.warn(
                f"{len(missing)} question(s) only in run {name!r} are excluded: "
                f"{_preview(missing)}",
                RagauditWarning,
                stacklevel=2,
            )
    metrics_a, metrics_b = run_a.metrics, run_b.metrics
    if metrics is None:
        chosen = [m for m in metrics_a if m in metrics_b]
        skipped = [m for m in metrics_a if m not in metrics_b] + [
            m for m in metrics_b if m not in metrics_a
        ]
        if skipped:
            warnings.warn(
                f"metric(s) present in only one run are skipped: {', '.join(skipped)}",
                RagauditWarning,
                stacklevel=2,
            )
        if not chosen:
            raise InputError(
                f"runs {run_a.name!r} and {run_b.name!r} have no metric in common "
                f"(A: {', '.join(metrics_a) or 'none'}; B: {', '.join(metrics_b) or 'none'})"
            )
    else:
        chosen = list(dict.fromkeys(metrics))
        for metric in chosen:
            for run, present in ((run_a, metrics_a), (run_b, metrics_b)):
                if metric not in present:
                    raise InputError(
                        f"metric {metric!r} is missing from run {run.name!r}"
                        f"{f' ({run.path})' if run.path else ''}; it has: "
                        f"{', '.join(present) or 'no metrics'}"
                    )
    return PairedMetrics(
        ids=tuple(common),
        a={m: _as_array(run_a, common, m) for m in chosen},
        b={m: _as_array(run_b, common, m) for m in chosen},
        only_a=only_a,
        only_b=only_b,
        name_a=run_a.name,
        name_b=run_b.name,
        metrics=tuple(chosen),
    )
