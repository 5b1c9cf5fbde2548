"""MLflow GenAI evaluation results as per-question rows: assessments become metrics.

``mlflow.genai.evaluate`` records one trace per question, and each scorer's verdict as a
feedback assessment on it.  The file read here is those traces, one ``Trace.to_json()`` per
line (``Trace.to_dict()`` layout, MLflow 3), e.g.::

    traces = mlflow.search_traces(run_id=result.run_id, return_type="list")
    Path("sys-a.traces.jsonl").write_text("".join(t.to_json() + "\\n" for t in traces))

A file may hold several evaluation runs (``info.trace_metadata["mlflow.sourceRun"]``): each run
is one system, so one saved run.

==================  ====================================================================
row field           from each trace
==================  ====================================================================
``id``              the inputs' ``question_id``, ``id`` or ``qid`` (``mlflow.traceInputs``,
                    the root span's ``mlflow.spanInputs``), else the question text
``question``        the inputs' ``question``, ``query``, ``input`` or ``request``, else the
                    inputs as JSON
``reference_answer``  the expectation ``expected_response`` (a string)
``answer``          the root span's ``mlflow.spanOutputs`` (else ``mlflow.traceOutputs``):
                    a string as it is, anything else as JSON
``metrics``         every valid feedback assessment, by ``assessment_name``: booleans 1/0,
                    numbers as they are, ``yes``/``no`` (MLflow's ``CategoricalRating``)
                    1/0; a feedback that failed (``feedback.error``) is no value; and
                    ``answered`` (an output and no error)
``latency_ms``      ``info.execution_duration_ms``
``usage``           ``mlflow.trace.tokenUsage`` input and output tokens, and
                    ``mlflow.trace.cost`` ``total_cost`` (else the spans' ``mlflow.llm.cost``
                    summed) in dollars
``tags``            ``[inputs[--cluster-by]]``, else ``[info.tags[--cluster-by]]``
``generation_error``  ``info.state`` ``ERROR``, with the root span's status message
==================  ====================================================================

mlflow itself is not needed to read the file (its layout is plain JSON); the MLflow version is
not recorded in it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragaudit.data.formats import shorten
from ragaudit.data.scored_rows import ScoredSystem, answered_metric
from ragaudit.exceptions import FormatError, InputError

__all__ = ["read_mlflow_traces"]

_ID_KEYS = ("question_id", "id", "qid")
_QUESTION_KEYS = ("question", "query", "input", "request")
_RATINGS = {"yes": 1.0, "no": 0.0}


class _Where:
    """``FILE:LINE: FIELD`` for one line of the file."""

    def __init__(self, path: str, line: int) -> None:
        self.path, self.line = path, line

    def error(self, message: str, field: str) -> FormatError:
        return FormatError(message, path=self.path, line=self.line, field=field)


def _json_attr(value: Any, where: _Where, field: str) -> Any:
    """An MLflow attribute or metadata value: JSON text (MLflow serialises every one; a
    trace that failed before returning has ``mlflow.traceOutputs`` "")."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise where.error(f"expected JSON text, found {shorten(value)}", field)
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise where.error(f"expected JSON text, {exc.msg}: {shorten(value)}", field) from None


def _feedback(value: Any, where: _Where, field: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    if isinstance(value, str) and value.lower() in _RATINGS:
        return _RATINGS[value.lower()]
    raise where.error(f"expected a boolean, a number, yes or no, found {shorten(value)}", field)


def _number(value: Any, where: _Where, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        if value < 0:
            raise where.error(f"expected a number >= 0, found {value!r}", field)
        return float(value)
    raise where.error(f"expected a number >= 0, found {shorten(value)}", field)


def _count(value: Any, where: _Where, field: str) -> int | None:
    """A token count: a whole number >= 0 (a saved run holds token counts as integers)."""
    number = _number(value, where, field)
    if number is None:
        return None
    if not number.is_integer():
        raise where.error(f"expected a whole number of tokens, found {value!r}", field)
    return int(number)


def _root(spans: list[Any], where: _Where) -> Mapping[str, Any]:
    roots = [s for s in spans if isinstance(s, Mapping) and not s.get("parent_span_id")]
    if len(roots) != 1:
        raise where.error(f"expected one root span, found {len(roots)}", "data.spans")
    return roots[0]


def _cost(metadata: Mapping[str, Any], spans: list[Any], where: _Where) -> float | None:
    field = "info.trace_metadata.mlflow.trace.cost"
    cost = _json_attr(metadata.get("mlflow.trace.cost"), where, field)
    if isinstance(cost, Mapping):
        return _number(cost.get("total_cost"), where, f"{field}.total_cost")
    found = []
    for n, span in enumerate(spans):
        field = f"data.spans[{n}].attributes.mlflow.llm.cost"
        value = _json_attr((span.get("attributes") or {}).get("mlflow.llm.cost"), where, field)
        if isinstance(value, Mapping):
            found.append(_number(value.get("total_cost"), where, f"{field}.total_cost") or 0.0)
    return math.fsum(found) if found else None


def _row(trace: Any, where: _Where, cluster_by: str | None) -> tuple[str, dict[str, Any]]:
    if not isinstance(trace, Mapping) or not isinstance(trace.get("info"), Mapping):
        raise where.error(f"expected a trace (info, data), found {shorten(trace)}", "info")
    info = trace["info"]
    data = trace.get("data")
    spans = data.get("spans") if isinstance(data, Mapping) else None
    if not isinstance(spans, list) or not spans:
        raise where.error(f"expected spans, found {shorten(spans)}", "data.spans")
    root = _root(spans, where)
    attributes = root.get("attributes") or {}
    metadata = info.get("trace_metadata") or {}
    if not isinstance(metadata, Mapping) or not isinstance(attributes, Mapping):
        raise where.error("expected objects", "info.trace_metadata")
    inputs = _json_attr(metadata.get("mlflow.traceInputs"), where,
                        "info.trace_metadata.mlflow.traceInputs")  # fmt: skip
    if "mlflow.spanInputs" in attributes:
        inputs = _json_attr(attributes["mlflow.spanInputs"], where,
                            "data.spans.attributes.mlflow.spanInputs")  # fmt: skip
    inputs = inputs if isinstance(inputs, Mapping) else {"request": inputs}
    question = next((inputs[k] for k in _QUESTION_KEYS if isinstance(inputs.get(k), str)), None)
    question = question if question is not None else json.dumps(inputs, sort_keys=True)
    qid = next((str(inputs[k]) for k in _ID_KEYS if isinstance(inputs.get(k), (str, int))
                and not isinstance(inputs.get(k), bool) and str(inputs[k])), None)  # fmt: skip
    if "mlflow.spanOutputs" in attributes:
        output = _json_attr(attributes["mlflow.spanOutputs"], where,
                            "data.spans.attributes.mlflow.spanOutputs")  # fmt: skip
    else:
        output = _json_attr(metadata.get("mlflow.traceOutputs"), where,
                            "info.trace_metadata.mlflow.traceOutputs")  # fmt: skip
    answer = output if isinstance(output, str) or output is None else json.dumps(output)
    state = info.get("state")
    if state not in ("OK", "ERROR", "IN_PROGRESS", "STATE_UNSPECIFIED"):
        raise where.error(f"expected OK or ERROR, found {shorten(state)}", "info.state")
    error = None
    if state != "OK":
        message = (root.get("status") or {}).get("message") if isinstance(
            root.get("status"), Mapping) else None  # fmt: skip
        if isinstance(message, str) and len(message) > 160:
            message = message[:157] + "..."
        error = f"trace state {state}" + (f": {message}" if message else "")
    metrics: dict[str, float | None] = {}
    reference = None
    assessments = info.get("assessments") or []
    if not isinstance(assessments, list):
        raise where.error(f"expected a list, found {shorten(assessments)}", "info.assessments")
    for n, item in enumerate(assessments):
        field = f"info.assessments[{n}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("assessment_name"), str):
            raise where.error(f"expected an assessment with a name, found {shorten(item)}",
                              f"{field}.assessment_name")  # fmt: skip
        if item.get("valid") is False:  # overridden by a later assessment
            continue
        name = item["assessment_name"]
        if isinstance(item.get("expectation"), Mapping):
            value = item["expectation"].get("value")
            if name == "expected_response" and isinstance(value, str):
                reference = value
            continue
        feedback = item.get("feedback")
        if not isinstance(feedback, Mapping):
            raise where.error(f"expected a feedback or an expectation, found {shorten(item)}",
                              field)  # fmt: skip
        if name in metrics or name == "answered":
            raise where.error(f"assessment {name!r} appears twice on this trace",
                              f"{field}.assessment_name")  # fmt: skip
        failed = feedback.get("error") is not None or "value" not in feedback
        metrics[name] = None if failed else _feedback(feedback["value"], where,
                                                        f"{field}.feedback.value")  # fmt: skip
    metrics["answered"] = answered_metric(answer, error)
    duration = _number(info.get("execution_duration_ms"), where, "info.execution_duration_ms")
    usage = _json_attr(metadata.get("mlflow.trace.tokenUsage"), where,
                       "info.trace_metadata.mlflow.trace.tokenUsage")  # fmt: skip
    usage = usage if isinstance(usage, Mapping) else {}
    tags: list[str] = []
    if cluster_by is not None:
        trace_tags = info.get("tags") or {}
        if cluster_by in inputs:
            tags = [str(inputs[cluster_by])]
        elif isinstance(trace_tags, Mapping) and cluster_by in trace_tags:
            tags = [str(trace_tags[cluster_by])]
        else:
            raise where.error(f"--cluster-by {cluster_by}: neither the inputs nor the trace "
                              "tags have this key", "info.tags")  # fmt: skip
    run = metadata.get("mlflow.sourceRun")
    row = {
        "id": qid or question,
        "question": question,
        "answerable": True,
        "reference_answer": reference,
        "keywords": [], "gold_docs": [], "tags": tags, "retrieved": [], "context_ids": [],
        "answer": None if error else answer,
        "abstained": None, "citations": [], "judges": {},
        "latency_ms": None if duration is None else {"total": duration},
        "generation_error": error,
        "usage": {
            "input_tokens": _count(usage.get("input_tokens"), where,
                                    "info.trace_metadata.mlflow.trace.tokenUsage.input_tokens"),
            "output_tokens": _count(usage.get("output_tokens"), where,
                                     "info.trace_metadata.mlflow.trace.tokenUsage.output_tokens"),
            "cost_usd": _cost(metadata, spans, where),
        },
        "metrics": metrics,
    }  # fmt: skip
    return str(run or ""), row


def read_mlflow_traces(
    path: str | Path, *, cluster_by: str | None = None
) -> tuple[str | None, list[ScoredSystem]]:
    """``(None, one ScoredSystem per evaluation run)`` of a file of MLflow traces.

    ``path`` may also be ``runs:/RUN_ID``: the run's traces are then fetched with mlflow's own
    ``mlflow.search_traces`` from the tracking server of ``MLFLOW_TRACKING_URI`` (needs
    ``pip install 'ragaudit[mlflow]'``), and read exactly as the file would be.

    Raises
    ------
    FormatError
        ``FILE:LINE: ...`` for a line that is not JSON (a truncated file), ``FILE:LINE:
        FIELD: ...`` for a malformed trace or a question id seen twice in a run.
    InputError
        ``runs:/RUN_ID`` without mlflow installed (the message says what to install).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> trace = {"info": {"state": "OK", "execution_duration_ms": 12,
    ...                   "trace_metadata": {"mlflow.sourceRun": "r1"},
    ...                   "assessments": [{"assessment_name": "exact_match",
    ...                                    "feedback": {"value": True}}]},
    ...          "data": {"spans": [{"parent_span_id": None, "attributes": {
    ...              "mlflow.spanInputs": json.dumps({"question": "2+2?"}),
    ...              "mlflow.spanOutputs": json.dumps("4")}}]}}
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "traces.jsonl"
    >>> _ = file.write_text(json.dumps(trace) + "\\n")
    >>> _, [system] = read_mlflow_traces(file)
    >>> system.label, system.rows[0]["id"], system.rows[0]["metrics"]
    ('run r1', '2+2?', {'exact_match': 1.0, 'answered': 1.0})
    """
    name = str(path)
    if name.startswith("runs:/"):
        return _systems(_from_server(name), name, cluster_by)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"cannot read: {exc}", path=name) from None
    traces = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            traces.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise FormatError(
                f"expected one MLflow trace as JSON (Trace.to_json()), {exc.msg} at column "
                f"{exc.colno} (a truncated file?)", path=name, line=number,
            ) from None  # fmt: skip
    return _systems(traces, name, cluster_by)


def _from_server(uri: str) -> list[tuple[int, Any]]:
    """``(position, Trace.to_dict())`` of the run's traces, by mlflow's own client."""
    try:
        import mlflow
    except ImportError:
        raise InputError(
            f"--from mlflow {uri}: reading traces from a tracking server needs mlflow: "
            "pip install 'ragaudit[mlflow]' (or pass a file of Trace.to_json() lines)"
        ) from None
    run_id = uri.removeprefix("runs:/").strip("/")
    try:
        experiment = mlflow.get_run(run_id).info.experiment_id
        found = mlflow.search_traces(
            run_id=run_id, locations=[experiment], return_type="list", max_results=None
        )
    except Exception as exc:  # the client raises its own, HTTP and store errors alike
        first = (str(exc).strip().splitlines() or [""])[0]
        raise FormatError(
            f"mlflow cannot list this run's traces ({type(exc).__name__}: {shorten(first, 160)})",
            path=uri,
        ) from None
    ordered = sorted(found, key=lambda t: t.info.request_time)
    return [(n, t.to_dict()) for n, t in enumerate(ordered, start=1)]


def _systems(
    traces: list[tuple[int, Any]], name: str, cluster_by: str | None
) -> tuple[str | None, list[ScoredSystem]]:
    runs: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for number, trace in traces:
        run, row = _row(trace, _Where(name, number), cluster_by)
        runs.setdefault(run, []).append((number, row))
    if not runs:
        raise FormatError("expected MLflow traces, one per line, found none", path=name)
    systems = []
    for run, numbered in runs.items():
        seen: dict[str, int] = {}
        for number, row in numbered:
            if row["id"] in seen:
                raise FormatError(
                    f"question {shorten(row['id'])} appears twice in run {run or '?'} (line "
                    f"{seen[row['id']]}); give each question an id in its inputs (question_id)",
                    path=name, line=number, field="inputs",
                )  # fmt: skip
            seen[row["id"]] = number
        rows = [row for _, row in numbered]
        # MLflow's assessment order is the order scorers finished in: sort by name
        names = [*sorted({m for r in rows for m in r["metrics"]} - {"answered"}), "answered"]
        for r in rows:
            r["metrics"] = {m: r["metrics"].get(m) for m in names}
        label = f"run {run}" if run else "run (none recorded)"
        systems.append(ScoredSystem(label, run[:8] or "run", rows, tuple(names),
                                    {"run_id": run or None}))  # fmt: skip
    return None, systems
