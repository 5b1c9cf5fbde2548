"""Per-question metric values of one run, read from a saved run or a plain metrics file.

Three file shapes are understood, so ``ragaudit compare`` works on any pipeline's output:

* a saved run (``docs/saved-run-format.md``), read and validated by the one saved-run loader
  (:func:`ragaudit.data.records.parse_saved_run`): a file ``ragaudit import`` rejects is
  rejected here with the same message;
* JSON ``{question_id: {metric: value}}``;
* JSONL, one ``{"id": question_id, metric: value, ...}`` per line (a line may instead carry
  a ``metrics`` dict, as saved-run rows do);
* the output of ``ragaudit evaluate --per-query --format json`` (its ``per_query`` mapping;
  without ``--per-query`` the file holds only means, which is an error that says so).

Values are numbers, booleans (read as 1.0 / 0.0) or ``null`` (*not applicable*, excluded
pairwise); declared metrics must lie in their range
(:mod:`ragaudit.data.saved_run_metrics`).  Anything else, including NaN and infinities, is a
:class:`FormatError` naming the file, line (JSONL), question and metric.  Old metric names
are read under their current spelling (``citation_acc`` as ``citation_accuracy``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit.data.records import parse_saved_run, read_json_document
from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run_metrics import canonical_metric_name, check_metric_value
from ragaudit.exceptions import FormatError, InputError, unreadable

__all__ = [
    "QUESTION_SUBSETS",
    "PerQuestionMetrics",
    "as_per_question_metrics",
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

    @classmethod
    def from_saved_run(cls, run: SavedRun) -> PerQuestionMetrics:
        """The metrics and answerable flags of a saved run (booleans as 0/1).

        An empty run is a :class:`FormatError`: there is nothing to compare.
        """
        if not run.questions:
            raise FormatError("no questions found", path=run.path)
        return cls(
            name=run.name,
            values={q.id: {name: q.metric(name) for name in q.metrics} for q in run.questions},
            path=run.path,
            answerable={q.id: q.answerable for q in run.questions},
        )

    @classmethod
    def from_columns(
        cls,
        name: str,
        ids: Sequence[str],
        columns: Mapping[str, Sequence[float] | Any],
        path: str | None = None,
    ) -> PerQuestionMetrics:
        """Per-question values from metric columns aligned with ``ids`` (NaN read as null).

        This is how an :class:`~ragaudit.metrics.Evaluation` (``query_ids``, ``per_query``)
        of a retrieval run becomes comparable.

        >>> PerQuestionMetrics.from_columns("r", ["q1", "q2"], {"mrr": [0.5, float("nan")]}).values
        {'q1': {'mrr': 0.5}, 'q2': {'mrr': None}}
        """
        lists = {metric: [float(v) for v in values] for metric, values in columns.items()}
        values = {
            qid: {m: (None if math.isnan(col[i]) else col[i]) for m, col in lists.items()}
            for i, qid in enumerate(ids)
        }
        return cls(name=name, values=values, path=path)

    @property
    def metrics(self) -> list[str]:
        """Metric names in order of first appearance."""
        seen: dict[str, None] = {}
        for row in self.values.values():
            for metric in row:
                seen.setdefault(metric, None)
        return list(seen)


def _clean_value(
    value: Any, *, path: str | None, line: int | None, qid: str, metric: str
) -> float | None:
    if value is not None and not isinstance(value, bool | int | float):
        raise FormatError(
            f"question {qid!r}: expected a number, boolean or null, found {value!r}",
            path=path,
            line=line,
            field=metric,
        )
    reason = check_metric_value(metric, value)
    if reason is not None:
        raise FormatError(f"question {qid!r}: {reason}", path=path, line=line, field=metric)
    return None if value is None else float(value)


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
        canonical_metric_name(str(metric)): _clean_value(
            value, path=path, line=line, qid=qid, metric=str(metric)
        )
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


def _is_saved_run(doc: Any) -> bool:
    """A JSON document that claims to be a saved run (anything else is a flat mapping)."""
    return isinstance(doc, dict) and ("format" in doc or isinstance(doc.get("rows"), list))


def _is_evaluate_output(doc: Any) -> bool:
    """``evaluate --format json`` output: means under ``metrics`` plus ``n_queries``."""
    return isinstance(doc, dict) and "n_queries" in doc and isinstance(doc.get("metrics"), dict)


def _from_evaluate_output(doc: dict[str, Any], path: str | None) -> Any:
    per_query = doc.get("per_query")
    if per_query is None:
        raise FormatError(
            "expected per-question values, found only the means of `ragaudit evaluate`; "
            "rerun it with --per-query --format json",
            path=path,
            field="per_query",
        )
    if not isinstance(per_query, dict):
        raise FormatError(
            f"expected a mapping {{question_id: {{metric: value}}}}, found "
            f"{type(per_query).__name__}",
            path=path,
            field="per_query",
        )
    return per_query


def _from_flat_json(doc: Any, path: str | None) -> dict[str, dict[str, float | None]]:
    if _is_evaluate_output(doc):
        doc = _from_evaluate_output(doc, path)
    if not isinstance(doc, dict):
        raise FormatError(
            "expected a saved run, a {question_id: {metric: value}} object or JSONL lines, "
            f"found a JSON {type(doc).__name__}",
            path=path,
        )
    return {
        str(qid): _clean_row(metrics, path=path, line=None, qid=str(qid))
        for qid, metrics in doc.items()
    }


def _looks_like_trec_run(path: Path) -> bool:
    """The first line has the six fields of a TREC run line (``qid Q0 doc rank score tag``)."""
    try:
        with path.open(encoding="utf-8") as handle:
            fields = handle.readline().split()
    except (OSError, UnicodeDecodeError):
        return False
    return len(fields) == 6


def read_per_question_metrics(source: str | os.PathLike[str]) -> PerQuestionMetrics:
    """Read per-question metric values from a saved run, a JSON mapping or JSONL lines.

    Parameters
    ----------
    source : path-like
        The file.  ``.jsonl`` files are read line by line; anything else is parsed as one JSON
        document: a saved run when it has a ``format`` key or a ``rows`` list (validated by
        the saved-run loader), the ``per_query`` values of ``evaluate --per-query --format
        json`` output (``n_queries`` and ``metrics`` keys), otherwise
        ``{question_id: {metric: value}}``.

    Returns
    -------
    PerQuestionMetrics

    Raises
    ------
    FormatError
        Unreadable file, malformed JSON, an invalid saved run, duplicate ids, or a value that
        is not a finite number, boolean or null in its metric's range (the message names the
        question and metric).

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
    if path.suffix.lower() == ".jsonl":
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise unreadable(where, exc) from None
        values = _from_jsonl(text, where)
    else:
        try:
            doc = read_json_document(path)
        except FormatError as exc:
            if exc.line == 1 and _looks_like_trec_run(path):
                raise FormatError(
                    "expected per-question metric values, found a TREC run; score it "
                    "against labels first (compare --qrels LABELS)",
                    path=where,
                    line=1,
                ) from None
            raise
        if _is_saved_run(doc):
            return PerQuestionMetrics.from_saved_run(parse_saved_run(doc, where))
        values = _from_flat_json(doc, where)
    if not values:
        raise FormatError("no questions found", path=where)
    return PerQuestionMetrics(name=path.stem, values=values, path=where)


def as_per_question_metrics(
    run: PerQuestionMetrics | SavedRun | str | os.PathLike[str],
) -> PerQuestionMetrics:
    """Per-question metrics of a :class:`SavedRun`, a file, or ``run`` itself.

    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": [],
    ...     "metrics": {"correct": True}}]})
    >>> as_per_question_metrics(run).values
    {'q1': {'correct': 1.0}}
    """
    if isinstance(run, PerQuestionMetrics):
        return run
    if isinstance(run, SavedRun):
        return PerQuestionMetrics.from_saved_run(run)
    if isinstance(run, str | os.PathLike):
        return read_per_question_metrics(run)
    raise InputError(
        f"expected a SavedRun, PerQuestionMetrics or a file path, found {type(run).__name__}"
    )
