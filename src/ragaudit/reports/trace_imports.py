"""Reports of ``ragaudit import --from openinference``, ``--from inspect``, ``--from promptfoo``
and ``--from mlflow``: what the file held, what was matched, counted and left out, and the
saved run's means."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ragaudit._validate import name_some
from ragaudit.diagnose.audit_result import DashboardRow
from ragaudit.diagnose.trace_numbers import trace_numbers
from ragaudit.pipeline.inspect_import import EPOCHS_NOTE, InspectImport
from ragaudit.pipeline.scored_import import ScoredImport
from ragaudit.pipeline.trace_import import TraceImport
from ragaudit.reports.imports import _means
from ragaudit.reports.report import Block, Report, Section, Table, Text

__all__ = ["inspect_import_report", "scored_import_report", "trace_import_report"]


def _listed(label: str, items: Sequence[str]) -> str:
    return f"{label} {len(items)}" + (f": {name_some(list(items))}" if items else "")


def _value(row: DashboardRow, value: float | None) -> str:
    if value is None:
        return "n/a"
    if row.unit == "ms":
        return f"{value:.1f} ms" if value != float("inf") else "inf"
    if row.unit == "usd":
        return f"${value:.6f}"
    return f"{value:.3f}"


def _numbers(rows: Sequence[DashboardRow]) -> Table:
    return Table(
        ("number", "value", "95% CI", "n", "interval", "note"),
        tuple(
            (
                r.label,
                _value(r, r.value),
                "" if r.ci_low is None else f"[{_value(r, r.ci_low)}, {_value(r, r.ci_high)}]",
                r.size,
                r.interval,
                r.note,
            )
            for r in rows
        ),
        align="lrrrll",
        values=tuple(
            (r.label, r.value, f"{r.ci_low}, {r.ci_high}", r.n, r.interval, r.note) for r in rows
        ),
    )


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def _numbers_data(rows: Sequence[DashboardRow]) -> list[dict[str, Any]]:
    """The rows for ``--format json``: an interval bound that is infinite (p95 latency from
    too few questions has no upper bound) is null, as JSON has no infinity."""
    return [
        {"key": r.key, "value": _finite(r.value), "ci_low": _finite(r.ci_low),
         "ci_high": _finite(r.ci_high), "n": r.n, "interval": r.interval, "note": r.note}
        for r in rows
    ]  # fmt: skip


def trace_import_report(
    file: str, result: TraceImport, summary: Mapping[str, Any], numbers: Sequence[DashboardRow]
) -> Report:
    """What ``import --from openinference`` made of one span file."""
    saved = result.saved
    docs = result.documents
    lines = [
        f"{file}: {result.n_spans} spans, {result.n_traces} traces -> saved run {saved.name!r} "
        f"(k={saved.k}, {summary['n']} questions)",
        f"traces: {result.matched} made a row; "
        + "; ".join(
            (
                _listed("unmatched (no golden question)", result.unmatched_traces),
                _listed("repeats of a question (first kept)", result.repeated_traces),
                _listed("without a question (root input.value)", result.no_question),
            )
        ),
        _listed(
            "golden questions with no trace (rows with the error 'no trace')",
            result.unmatched_questions,
        ),
        _listed("traces with no retriever span (nothing retrieved)", result.no_retriever),
        f"documents: {docs['total']}; by chunk id {docs['by_id']}, by exact text "
        f"{docs['exact']}, by token overlap {docs['overlap']}; unmatched (dropped) "
        f"{docs['unmatched']}; same chunk twice (kept once) {docs['repeated']}",
        "span kinds outside OpenInference (counted, not read): "
        + (", ".join(f"{k} {v}" for k, v in sorted(result.unknown_kinds.items())) or "none"),
    ]
    sections = [Section("", (Text(tuple(lines)),))]
    title = "Answered, latency and cost (no golden set needed)"
    sections.append(Section(title, (_numbers(numbers),)))
    sections += _means(dict(summary), None)
    sections.append(Section("", (Text((f"saved: {saved.path}",)),)))
    data = {
        "file": file,
        "from": "openinference",
        "name": saved.name,
        "saved": str(saved.path),
        "spans": result.n_spans,
        "traces": result.n_traces,
        "matched": result.matched,
        "unmatched_traces": list(result.unmatched_traces),
        "unmatched_questions": list(result.unmatched_questions),
        "repeated_traces": list(result.repeated_traces),
        "no_question": list(result.no_question),
        "no_retriever": list(result.no_retriever),
        "unknown_span_kinds": result.unknown_kinds,
        "documents": docs,
        "numbers": _numbers_data(numbers),
        "summary": dict(summary),
    }
    return Report("", tuple(sections), data=data)


def inspect_import_report(file: str, result: InspectImport) -> Report:
    """What ``import --from inspect`` made of one log."""
    saved, log = result.saved, result.log
    summary = saved.summary
    lines = [
        f"{file}: inspect_ai {log.inspect_version or '?'} log of task {log.task!r}, model "
        f"{log.model!r}, status {log.status} -> saved run {saved.name!r} "
        f"({len(log.rows)} questions)",
        f"scores as metrics: {', '.join(log.scorers) or 'none'}",
        f"epochs: {log.epochs}" + (f"; {EPOCHS_NOTE}" if log.epochs > 1 else ""),
        _listed("epochs that ended in an error (left out of the means)", log.failed_epochs),
    ]
    blocks: list[Block] = [Text(tuple(lines))]
    sections = [Section("", tuple(blocks))]
    sections += _means(dict(summary), None)
    sections.append(Section("", (Text((f"saved: {saved.path}",)),)))
    data = {
        "file": file,
        "from": "inspect",
        "name": saved.name,
        "saved": str(saved.path),
        "task": log.task,
        "model": log.model,
        "status": log.status,
        "inspect_ai_version": log.inspect_version,
        "epochs": log.epochs,
        "epoch_aggregation": EPOCHS_NOTE if log.epochs > 1 else None,
        "scorers": list(log.scorers),
        "failed_epochs": list(log.failed_epochs),
        "summary": dict(summary),
    }
    return Report("", tuple(sections), data=data)


#: where each tool records the dashboard's numbers (the rows' latency_ms.total, usage.cost_usd)
_RECORDED = {
    "promptfoo": ("each result's latencyMs", "each result's cost"),
    "mlflow": ("each trace's execution_duration_ms", "each trace's mlflow.trace.cost"),
}


def _scored_numbers(tool: str, saved: Any) -> tuple[DashboardRow, ...]:
    latency_from, cost_from = _RECORDED[tool]
    out = []
    for row in trace_numbers(saved):
        if row.key == "answered":
            row = replace(
                row,
                label="answered (an output, no error)",
                source=f"the rows' answered metric: {tool} recorded an output",
            )
        elif row.key == "latency_p95":
            row = replace(
                row,
                label="p95 latency",
                note=f"as recorded by {tool}",
                source=f"the rows' latency_ms.total: {latency_from}",
            )
        elif row.key == "cost_per_question":
            known = row.value is not None
            row = replace(
                row,
                source=f"the rows' usage.cost_usd: {cost_from}",
                note=f"as recorded by {tool}"
                if known
                else f"unknown: a question has no recorded cost ({cost_from})",
            )
        out.append(row)
    return tuple(out)


def scored_import_report(file: str, result: ScoredImport) -> Report:
    """What ``import --from promptfoo`` or ``--from mlflow`` made of one results file: a
    saved run per system (promptfoo provider and prompt, MLflow evaluation run)."""
    sections: list[Section] = []
    data = []
    tool = f"{result.tool} {result.tool_version}" if result.tool_version else result.tool
    for system, saved in result.runs:
        errors = [r["id"] for r in system.rows if r.get("generation_error")]
        lines = (
            f"{file}: {tool} results, system {system.label!r} -> saved run "
            f"{saved.name!r} ({len(system.rows)} questions)",
            f"scores as metrics: {', '.join(system.metrics) or 'none'}",
            _listed("questions with an error (kept, answered 0)", errors),
        )
        numbers = _scored_numbers(result.tool, saved)
        sections.append(Section("", (Text(lines),)))
        sections.append(Section("Answered, latency and cost", (_numbers(numbers),)))
        sections += _means(dict(saved.summary), None)
        sections.append(Section("", (Text((f"saved: {saved.path}",)),)))
        data.append({
            "file": file, "from": result.tool, "tool_version": result.tool_version,
            "system": system.label, "details": system.details, "name": saved.name,
            "saved": str(saved.path), "metrics": list(system.metrics), "errors": errors,
            "numbers": _numbers_data(numbers),
            "summary": dict(saved.summary),
        })  # fmt: skip
    return Report("", tuple(sections), data={"imports": data})
