"""Reports of ``ragaudit labels fill`` and ``ragaudit evaluate --filled``: a metric on the
original labels, on the filled labels, and the change, with judged@k before and after; with
``evaluate --filled --human``, the filled metric corrected by a person's sample."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragaudit.labels.fill import FillResult, RunChange
from ragaudit.labels.fill_ppi import CorrectedMetric
from ragaudit.metrics import Evaluation  # the result type (reports renders, never computes)
from ragaudit.reports.report import Block, KeyValues, Report, Section, Table, Text

__all__ = ["change_table", "corrected_table", "fill_report", "filled_evaluation_report"]


def change_table(changes: Sequence[RunChange]) -> Table:
    """One row per run and metric: original, filled, change, judged@k before -> after."""
    return Table(
        ("run", "metric", "original", "filled", "change", "judged@k before", "judged@k after"),
        tuple(
            (
                c.run,
                c.metric,
                f"{c.original:.4f}",
                f"{c.filled:.4f}",
                f"{c.change:+.4f}",
                f"{c.judged_original:.3f}",
                f"{c.judged_filled:.3f}",
            )
            for c in changes
        ),
        align="llrrrrr",
        values=tuple(
            (c.run, c.metric, c.original, c.filled, c.change, c.judged_original, c.judged_filled)
            for c in changes
        ),
    )


def fill_report(result: FillResult, out_path: str) -> Report:
    """The report of ``ragaudit labels fill``."""
    counts = result.grade_counts()
    summary = KeyValues(
        (
            ("runs pooled", ", ".join(result.runs)),
            ("labeller", f"{result.labeller} ({result.date})"),
            (
                "filled",
                f"{len(result.added)} unjudged chunks judged: {counts[2]} answer (2), "
                f"{counts[1]} related (1), {counts[0]} not relevant (0)",
            ),
            ("written", out_path),
        )
    )
    data: dict[str, Any] = {
        "runs": list(result.runs),
        "labeller": result.labeller,
        "date": result.date,
        "out": out_path,
        "n_filled": len(result.added),
        "grades": {str(g): n for g, n in counts.items()},
        "changes": [
            {
                "run": c.run,
                "k": c.k,
                "metric": c.metric,
                "original": c.original,
                "filled": c.filled,
                "change": c.change,
                "judged_original": c.judged_original,
                "judged_filled": c.judged_filled,
            }
            for c in result.changes
        ],
    }
    caveat = Text(
        (
            "Filled grades come from the labeller named above, not from a person: read the "
            "change as how much the conclusion rests on the holes, and have a sample of the "
            "filled chunks checked by hand before trusting the filled number.",
        ),
        style="note",
    )
    return Report(
        "Labels filled: the unjudged chunks in the runs' top k, judged",
        (Section("", (summary, change_table(result.changes), caveat)),),
        data=data,
    )


def filled_evaluation_report(
    original: Evaluation,
    filled: Evaluation,
    run: str,
    filled_path: str,
    corrected: Sequence[CorrectedMetric] = (),
) -> Report:
    """``evaluate --filled``: each metric on the original and the filled labels; with
    ``--human``, the filled metric corrected by a person's grades on a sample."""
    changes = [
        RunChange(
            run, original.specs[name].k or 0, name, original.means[name], filled.means[name],
            _judged(original, name), _judged(filled, name),
        )
        for name in original.means
        if original.specs[name].family != "judged"
    ]  # fmt: skip
    header = Text(
        (
            f"unit={original.unit} average={original.average} n={original.n_queries} "
            f"relevance_threshold={original.relevance_threshold} missing={original.missing} "
            f"filled={filled_path}",
        )
    )
    data: dict[str, Any] = {
        "original": original.to_dict(),
        "filled": filled.to_dict(),
        "change": {name: filled.means[name] - original.means[name] for name in original.means},
    }
    blocks: list[Block] = [header, change_table(changes)]
    if corrected:
        data["corrected"] = {c.metric: c.to_dict() for c in corrected}
        blocks.append(corrected_table(corrected))
        blocks.append(Text(tuple(_corrected_notes(corrected)), style="note"))
    return Report("", (Section("", tuple(blocks)),), data=data)


def corrected_table(corrected: Sequence[CorrectedMetric]) -> Table:
    """One row per metric: filled, corrected with its interval, the labeller's measured
    error and how many questions a person checked."""
    level = f"{100 * corrected[0].confidence:g}% CI"
    return Table(
        ("metric", "filled", "corrected", level, "labeller error", "checked"),
        tuple(
            (
                c.metric,
                f"{c.filled:.4f}",
                f"{c.statistic:.4f}",
                f"[{c.confidence_interval.low:.4f}, {c.confidence_interval.high:.4f}]",
                f"{c.rectifier:+.4f}",
                f"{c.n_checked}/{c.n_filled}",
            )
            for c in corrected
        ),
        align="lrrrrr",
        values=tuple(
            (
                c.metric,
                c.filled,
                c.statistic,
                f"[{c.confidence_interval.low!r}, {c.confidence_interval.high!r}]",
                c.rectifier,
                c.n_checked,
            )
            for c in corrected
        ),
    )


def _corrected_notes(corrected: Sequence[CorrectedMetric]) -> list[str]:
    first = corrected[0]
    notes = [
        f"corrected: {first.label}; labeller error = mean of (person - labeller) over the "
        f"checked questions; corrected = filled + {first.n_filled}/{first.n} x labeller error "
        "(the share of questions with filled items)"
    ]
    if first.n_partial:
        notes.append(
            f"{first.n_partial} question(s) had only some filled items graded by the person: "
            "left out of the checked ones (grade every filled item of a checked question)"
        )
    return notes


def _judged(ev: Evaluation, name: str) -> float:
    """The mean judged@k at ``name``'s cutoff (NaN when it was not computed)."""
    k = ev.specs[name].k
    for other, spec in ev.specs.items():
        if spec.family == "judged" and spec.k == k:
            return ev.means[other]
    return float("nan")
