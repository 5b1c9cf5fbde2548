"""Reports of the metric commands: ``evaluate``, ``explain`` and ``illusions``."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ragaudit.diagnose.illusions import CaseTable, EngineCheck, IllusionsReport
from ragaudit.metrics import Evaluation
from ragaudit.metrics.explain import Derivation
from ragaudit.metrics.judged import JudgedCoverage
from ragaudit.reports.report import Report, Section, Table, Text

__all__ = [
    "case_table",
    "derivation_lines",
    "engine_check_line",
    "evaluate_report",
    "explain_report",
    "illusions_report",
    "with_judged",
]


def _k(ev: Evaluation, name: str) -> str:
    k = ev.specs[name].k
    return "all" if k is None else str(k)


def evaluate_report(ev: Evaluation, per_query: bool = False) -> Report:
    """The report of ``ragaudit evaluate``: every number labelled with its cut-off and averaging.

    Examples
    --------
    >>> from ragaudit.data import Qrels, Run
    >>> from ragaudit.metrics import evaluate
    >>> from ragaudit.reports.renderer import render
    >>> ev = evaluate(Qrels({"q1": {"A": 1}}), Run({"q1": ["B", "A"]}), ["mrr"])
    >>> print(render(evaluate_report(ev), "table"), end="")
    unit=doc average=macro n=1 relevance_threshold=1 missing=zero
    metric    k   value  trec_eval
    mrr     all  0.5000  recip_rank
    """
    header = Text(
        (
            f"unit={ev.unit} average={ev.average} n={ev.n_queries} "
            f"relevance_threshold={ev.relevance_threshold} missing={ev.missing}",
        )
    )
    means = Table(
        ("metric", "k", "value", "trec_eval"),
        tuple(
            (name, _k(ev, name), f"{value:.4f}", ev.specs[name].trec_eval or "-")
            for name, value in ev.means.items()
        ),
        align="lrrl",
        only=("table", "markdown", "html", "latex"),
    )
    blocks: list[Any] = [header, means]
    if ev.tied_groups:
        blocks.append(
            Text(
                (
                    f"tied score groups: {ev.tied_groups} (order inside a tie: id descending, "
                    "as trec_eval)"
                    + (
                        f"; {ev.float32_tied_groups} of them tie only as 32-bit floats, "
                        "as trec_eval stores scores"
                        if ev.float32_tied_groups
                        else ""
                    ),
                )
            )
        )
    if ev.identical_ids:
        fate = "dropped before scoring" if ev.ignored_identical_ids else "scored"
        blocks.append(Text((f"items named like their own question: {ev.identical_ids} ({fate})",)))
    if ev.dropped_duplicates:
        blocks.append(
            Text(
                (
                    f"duplicate items dropped: {ev.dropped_duplicates} (the first of each kept; "
                    "trec_eval refuses a run with duplicates, pytrec_eval's dict keeps one "
                    "score per item)",
                )
            )
        )
    sections = [Section("", tuple(blocks))]
    names = list(ev.per_query)
    columns = {n: ev.per_query[n].tolist() for n in names}
    if per_query:
        values = tuple((qid, *(columns[n][i] for n in names)) for i, qid in enumerate(ev.query_ids))
        rows = tuple((v[0], *(f"{x:.4f}" for x in v[1:])) for v in values)
        sections.append(Section("", (Table(("qid", *names), rows, values=values),)))
    else:
        summary = tuple(
            (name, _k(ev, name), value, ev.unit, ev.average, ev.n_queries)
            for name, value in ev.means.items()
        )
        sections[0] = Section(
            "",
            (
                *blocks,
                Table(
                    ("metric", "k", "value", "unit", "average", "n"),
                    tuple(tuple(str(c) for c in row) for row in summary),
                    values=summary,
                    only=("csv",),
                ),
            ),
        )
    return Report("", tuple(sections), data=ev.to_dict(per_query=per_query))


def with_judged(
    report: Report,
    coverages: Sequence[Sequence[JudgedCoverage]],
    messages: Sequence[str],
) -> Report:
    """``report`` (of ``evaluate``) with each run's judged@k and the judged warnings.

    ``coverages``: one :func:`~ragaudit.metrics.judged.judged_coverage` result per run;
    ``messages``: their warnings (:func:`~ragaudit.metrics.judged.unjudged_messages`).  The
    JSON gains ``"judged"`` (each coverage: mean, threshold, the questions below it) and
    ``"warnings"``; markdown, HTML and LaTeX show the warnings as a note (the terminal and CSV
    print them on stderr, as every warning).

    Examples
    --------
    >>> from ragaudit.reports.renderer import render
    >>> c = JudgedCoverage("a.run", "judged@5", 5, 0.2, 0.5, ("q1",), 1)
    >>> r = with_judged(Report("", ()), [[c]], [c.message()])
    >>> r.data["judged"][0]["below"], render(r, "markdown").startswith("unjudged: a.run")
    (['q1'], True)
    """
    data = dict(report.data) if isinstance(report.data, dict) else {"result": report.data}
    data["judged"] = [c.to_dict() for run in coverages for c in run]
    data["warnings"] = list(messages)
    sections = report.sections
    if messages:
        note = Text(
            tuple(f"unjudged: {m}" for m in messages),
            only=("markdown", "html", "latex"),
            style="note",
        )
        sections = (*sections, Section("", (note,)))
    return replace(report, sections=sections, data=data)


def _cell(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def derivation_lines(derivation: Derivation, indent: str = "") -> list[str]:
    """A derivation as monospaced text: its table (right-aligned, floats to 3 decimals), then
    the arithmetic lines.

    Examples
    --------
    >>> from ragaudit.metrics.explain import explain_ap
    >>> for line in derivation_lines(explain_ap(["B", "A"], {"A": 1})):
    ...     print(line)
     rank i  item  relevant  hits  precision@i
          1     B        no     0        0.000
          2     A       yes     1        0.500
    relevant at rank 2 -> precision@2 = 1/2 = 0.5000
    AP = (0.5000) / |relevant| = 0.5000 / 1 = 0.5000
    """
    cells = [list(derivation.columns)] + [[_cell(c) for c in row] for row in derivation.rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(derivation.columns))]
    table = [
        indent + " " + "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True))
        for row in cells
    ]
    return table + [indent + line for line in derivation.lines]


def explain_report(
    derivation: Derivation, ranking: list[str], labels: dict[str, int], gain: str, check: str
) -> Report:
    """The whiteboard derivation of one metric for one ranking (``ragaudit explain``)."""
    relevant = ", ".join(f"{i}={g}" for i, g in labels.items() if g > 0) or "none"
    table = Table(
        derivation.columns,
        tuple(tuple(_cell(c) for c in row) for row in derivation.rows),
        align="r" * len(derivation.columns),
        values=derivation.rows,
    )
    data = {
        "ranking": ranking,
        "grades": labels,
        "gain": gain,
        **derivation.to_dict(),
        "evaluate_check": check,
    }
    head = Text(
        (
            f"{derivation.metric} for ranking: {' '.join(ranking)}",
            f"labels (item=grade): {relevant}",
        )
    )
    return Report("", (Section("", (head, table, Text((*derivation.lines, check)))),), data=data)


def _is_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def case_table(table: CaseTable, decimals: int = 3) -> Table:
    """An illusion case's table: floats printed to ``decimals`` places, typed ``values`` kept
    at full precision (CSV and JSON); columns holding any text are left-aligned, the rest
    right-aligned.

    Examples
    --------
    >>> t = case_table(CaseTable(("name", "value"), (("a", 1.0), ("long name", 1 / 3))))
    >>> t.rows, t.align, t.values[1][1]
    ((('a', '1.000'), ('long name', '0.333')), 'lr', 0.3333333333333333)
    """
    rows = tuple(
        tuple(f"{c:.{decimals}f}" if isinstance(c, float) else str(c) for c in row)
        for row in table.rows
    )
    align = "".join(
        "l" if any(not _is_numeric(row[j]) for row in rows) else "r"
        for j in range(len(table.columns))
    )
    return Table(table.columns, rows, align=align, values=table.rows)


def engine_check_line(check: EngineCheck) -> str:
    """The engine's values for a hand derivation (4 decimals) and whether they agree with it.

    Examples
    --------
    >>> engine_check_line(EngineCheck({"ndcg@5": 0.5, "map@5": 1 / 3}, agrees=True))
    'evaluate(): ndcg@5 = 0.5000, map@5 = 0.3333  (same as the hand derivation)'
    """
    values = ", ".join(f"{name} = {value:.4f}" for name, value in check.values.items())
    verdict = "same as" if check.agrees else "DIFFERS from"
    return f"evaluate(): {values}  ({verdict} the hand derivation)"


#: Decimals of the case tables, by case key (3 unless named here).
_CASE_DECIMALS = {"whiteboard": 2}


def _text_lines(part: str | Derivation | EngineCheck) -> list[str]:
    if isinstance(part, str):
        return part.split("\n")
    if isinstance(part, EngineCheck):
        return [engine_check_line(part)]
    return derivation_lines(part)


def illusions_report(result: IllusionsReport) -> Report:
    """The seven metric illusions and the blind-spot table (``ragaudit illusions``)."""
    sections = [
        Section(
            "",
            (
                Text(
                    (
                        "Relevant items are starred; every number is computed by "
                        "ragaudit.metrics.evaluate.",
                        "In cases 1-6 every unstarred item is known to be non-relevant (the "
                        "labels are complete",
                        "by construction); case 7 is what happens when they are not.",
                    )
                ),
            ),
        )
    ]
    for case in result.cases:
        blocks: list[Any] = [Text((case.setup,))]
        for block in case.blocks:
            if isinstance(block, CaseTable):
                blocks.append(case_table(block, _CASE_DECIMALS.get(case.key, 3)))
            else:
                lines = [line for part in block for line in _text_lines(part)]
                blocks.append(Text(tuple(lines), monospace=True))
        lesson = textwrap.wrap("-> " + case.lesson, width=94, subsequent_indent="   ")
        blocks.append(Text(tuple(lesson)))
        sections.append(Section(f"Case {case.number}. {case.title}", tuple(blocks)))
    sections.append(
        Section("What each metric is blind to", (case_table(result.blind_spot_table()),))
    )
    return Report(
        "Metric illusions: systems that tie on one metric and differ on another",
        tuple(sections),
        data=result.to_dict(),
    )
