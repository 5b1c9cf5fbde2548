"""The audit's tables, with their cells formatted once for every form of the audit.

The audit :class:`~ragaudit.reports.report.Report`
(:func:`ragaudit.reports.audit_page.audit_report`: the HTML page, the Markdown comment, the
terminal audit ``ragaudit demo`` prints) shows the same dashboard, funnel, comparison and
configuration tables in every form.  Their cells are formatted here as
:class:`~ragaudit.reports.report.Table` blocks of raw (unescaped) text; the one renderer
escapes and lays them out. ``Audit.to_dict()`` is the JSON form.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from ragaudit.diagnose.audit_result import Audit, DashboardRow, PairView, RunAudit
from ragaudit.diagnose.funnel import STAGE_KEYS, unjudged_hint
from ragaudit.diagnose.label_bias import BiasResult
from ragaudit.reports.id_lists import cut_ids  # the one cut of id lists
from ragaudit.reports.report import Cell, Span, Table
from ragaudit.reports.stats import method_labels
from ragaudit.stats.compare import MetricComparison

__all__ = [
    "DASHBOARD_DETAIL",
    "bias_line",
    "comparison_columns",
    "comparison_heading",
    "comparison_table",
    "config_table",
    "cut_ids",
    "dashboard_number",
    "dashboard_table",
    "discordant_line",
    "fmt",
    "funnel_lines",
    "funnel_table",
    "mde_text",
    "p_text",
    "pick_columns",
    "run_columns",
]


#: What the dashboard's intervals and MDE column are (after the title "Dashboard").
DASHBOARD_DETAIL = "(95% intervals; MDE = smallest paired change this n can detect)"


def fmt(value: float | None, spec: str = ".3f") -> str:
    """A number with ``spec``, ``-`` for None.

    >>> fmt(1 / 3), fmt(None), fmt(0.25, ".2f")
    ('0.333', '-', '0.25')
    """
    return "-" if value is None else format(value, spec)


def p_text(value: float) -> str:
    """A p-value as ``compare`` prints it (``<0.001`` below 0.001).

    >>> p_text(0.0004), p_text(0.0421)
    ('<0.001', '0.042')
    """
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def dashboard_value(row: DashboardRow, value: float | None) -> str:
    """One number of a dashboard row in its unit: ``0.796``, ``0.412 s`` (a latency, kept in
    milliseconds; below 1 ms in ms), ``$0.0021``; an interval end that is infinite is ``inf``
    (p95 latency with too few questions).

    >>> from ragaudit.diagnose.audit_result import DashboardRow
    >>> def row(unit):
    ...     return DashboardRow("k", "x", 1.0, 0.0, 1.0, 1, None, "", None, "", "", unit=unit)
    >>> dashboard_value(row(""), 0.5), dashboard_value(row("ms"), 412.4)
    ('0.500', '0.412 s')
    >>> dashboard_value(row("ms"), 4.21), dashboard_value(row("ms"), 0.42)
    ('0.004 s', '0.420 ms')
    >>> dashboard_value(row("usd"), 0.00213), dashboard_value(row("usd"), 0.0)
    ('$0.0021', '$0')
    >>> dashboard_value(row("ms"), float("inf"))
    'inf'
    """
    if value is None:
        return "-"
    if math.isinf(value):
        return "inf"
    if row.unit == "ms":
        # seconds, 3 decimals: a fixed width from 1 ms to 10 s, so the varying latency never
        # moves the other columns; below 1 ms that would read "0.000 s", so milliseconds
        return f"{value:.3f} ms" if value < 1 else f"{value / 1000:.3f} s"
    if row.unit == "usd":
        return "$0" if value == 0 else f"${value:.4f}"
    return f"{value:.3f}"


def dashboard_interval(row: DashboardRow) -> str:
    """``[low, high]`` in the row's unit (``[380 ms, inf]`` when unbounded above)."""
    return f"[{dashboard_value(row, row.ci_low)}, {dashboard_value(row, row.ci_high)}]"


def dashboard_number(row: DashboardRow, width: int = 0) -> str:
    """``value [low, high] size`` (size ``43/54`` or ``n=54``, padded to ``width`` so a
    column's intervals align), or ``n/a`` when the run cannot measure it."""
    if row.value is None:
        return "n/a"
    decided = f" {row.decided_text}" if row.decided_text else ""
    number = f"{dashboard_value(row, row.value)} {dashboard_interval(row)} {row.size}{decided}"
    return f"{number:<{width + len(number) - len(row.size) - len(decided)}}"


def mde_text(rows: Sequence[DashboardRow]) -> str:
    """The minimum detectable effects of one dashboard row across runs (``a / b`` when the
    runs' n differ; ``not detectable`` when no effect is; ``-`` for latency, cost and
    judged@k, which no paired test of ours compares)."""
    if any(r.unit for r in rows) or all(r.mde is None and not r.mde_assumption for r in rows):
        return "-"  # latency, cost, judged@k: no MDE applies
    values = sorted({fmt(r.mde, ".2f") for r in rows if r.n})
    return " / ".join(v if v != "-" else "not detectable" for v in values) or "-"


def run_columns(audit: Audit) -> tuple[str, ...]:
    """The runs' column headings: their names, with their k when the runs' k differ (the row
    labels then say ``@k``)."""
    if len({r.k for r in audit.runs}) == 1:
        return tuple(r.name for r in audit.runs)
    return tuple(f"{r.name} (k={r.k})" for r in audit.runs)


def dashboard_table(audit: Audit) -> Table:
    """One row per dashboard number: each run's value with interval and n, and the MDE."""
    width = max(
        len(row.size) + len(row.decided_text) + 1 for r in audit.runs for row in r.dashboard
    )

    def cells(i: int, pad: int) -> tuple[str, ...]:
        return (
            audit.dashboard_label(i),
            *(dashboard_number(r.dashboard[i], pad) for r in audit.runs),
            mde_text([r.dashboard[i] for r in audit.runs]),
        )

    n = range(len(audit.runs[0].dashboard))
    return Table(
        ("number", *run_columns(audit), "MDE"),
        tuple(cells(i, width) for i in n),  # sizes padded: a column's intervals align
        "l" + "r" * (len(audit.runs) + 1),
        values=tuple(cells(i, 0) for i in n),  # CSV, TSV: no padding
    )


def funnel_table(run: RunAudit) -> Table:
    """The four funnel stages: kept, share of n and its interval, conditional rate."""
    f = run.funnel
    rows = tuple(
        (
            f"{j + 1} {s.name}",
            str(s.kept),
            fmt(s.rate),
            "" if s.ci_low is None else f"[{s.ci_low:.3f}, {s.ci_high:.3f}]",  # of "of n"
            fmt(s.conditional),
        )
        for j, s in enumerate(f.stages)
    )
    pct = round(f.confidence * 100)
    return Table(("stage", "kept", "of n", f"{pct}% CI (of n)", "conditional"), rows, "lrrrr")


def comparison_table(pair: PairView, *, short_methods: bool = True) -> Table:
    """One row per compared metric: n, means, B - A, interval and its method, p, Holm p, the
    p method and the verdict.  ``short_methods``: the methods' short names
    (:func:`ragaudit.reports.stats.method_labels`), else their full names."""
    c = pair.comparison

    def methods(m: MetricComparison) -> tuple[str, str]:
        return method_labels(m) if short_methods else (m.ci_method, m.p_method)

    rows = tuple(
        (
            m.metric,
            str(m.n),
            fmt(m.mean_a),
            fmt(m.mean_b),
            f"{m.statistic:+.3f}",
            f"[{m.confidence_interval.low:+.3f}, {m.confidence_interval.high:+.3f}]",
            methods(m)[0],
            p_text(m.pvalue),
            p_text(holm),
            methods(m)[1],
            m.verdict,
        )
        for m, holm in zip(c.metrics, pair.holm, strict=True)
    )
    values = tuple(  # for CSV and TSV: full precision, p unrounded
        (
            m.metric, m.n, m.mean_a, m.mean_b, m.statistic,
            f"[{m.confidence_interval.low!r}, {m.confidence_interval.high!r}]",
            methods(m)[0], m.pvalue, holm, methods(m)[1], m.verdict,
        )
        for m, holm in zip(c.metrics, pair.holm, strict=True)
    )  # fmt: skip
    pct = round(c.confidence * 100)
    columns = ("metric", "n", "mean A", "mean B", "B - A", f"{pct}% CI", "CI method", "p")
    return Table((*columns, "p (Holm)", "p method", "verdict"), rows, "lrrrrrlrrll", values=values)


def comparison_columns(pair: PairView, columns: Sequence[str]) -> Table:
    """:func:`comparison_table` with only ``columns`` (``CI`` stands for the interval column,
    whatever its confidence)."""
    table = comparison_table(pair)
    return pick_columns(table, [table.columns[5] if c == "CI" else c for c in columns])


def config_table(audit: Audit) -> Table:
    """Every configuration key of any run (first-seen order, the key as code), one column per
    run; the same table in every form of the audit."""
    keys: list[str] = []
    for run in audit.runs:
        keys += [k for k, _ in run.config if k not in keys]
    values = [dict(r.config) for r in audit.runs]
    rows: tuple[tuple[str | Cell, ...], ...] = tuple(
        (Cell((Span(k, "code"),)), *(v.get(k, "-") for v in values)) for k in keys
    )
    return Table(
        ("setting", *(r.name for r in audit.runs)), rows, "l" * (len(audit.runs) + 1),
        cls="config",
    )  # fmt: skip


def pick_columns(table: Table, columns: Sequence[str]) -> Table:
    """The same table with only ``columns`` (in that order): cells, typed values and
    alignment picked alike, every other field kept.

    >>> t = Table(("a", "b", "c"), (("1", "2", "3"),), "lrl", values=((1, 2.5, 3),), cls="x")
    >>> picked = pick_columns(t, ["c", "a"])
    >>> picked.rows, picked.values, picked.align, picked.cls
    ((('3', '1'),), ((3, 1),), 'll', 'x')
    """
    index = [table.columns.index(c) for c in columns]
    return replace(
        table,
        columns=tuple(columns),
        rows=tuple(tuple(row[i] for i in index) for row in table.rows),
        align="".join(table.align[i] for i in index),
        values=tuple(tuple(row[i] for i in index) for row in table.values),
    )


def funnel_lines(run: RunAudit) -> list[str]:
    """The funnel in four lines: stages kept, the gap, answered, and where questions died
    (a fifth, before the last, counts the generation and judge errors when there are any)."""
    f = run.funnel
    gap_ci = (
        "" if f.gap_ci is None
        else f" [{f.gap_ci[0]:+.3f}, {f.gap_ci[1]:+.3f}] ({f.gap_ci_method}, paired)"
    )  # fmt: skip
    cut = run.max_drilldowns  # the ids are cut as the page's stage table cuts them
    died = [f"{key} {cut_ids(f.died[key], cut)}" for key in STAGE_KEYS if f.died[key]]
    if f.unanswerable.answered_ids:
        died.append("unanswerable answered " + cut_ids(f.unanswerable.answered_ids, cut))
    if f.unjudged:
        died.append(
            "unjudged "
            + cut_ids([f"{u.id} ({u.stage}: {u.reason})" for u in f.unjudged], cut)
            + " - to judge them: "
            + unjudged_hint(u.reason for u in f.unjudged)
        )
    return [
        " -> ".join(f"{s.kept} {s.name}" for s in f.stages),
        f"gap hit rate@{f.k} -> correct: {f.gap:+.3f}{gap_ci}"
        if f.gap is not None
        else f"P(correct) and the gap are undefined: {f.undefined_reason}",
        f"answered {run.answered}/{run.n_answerable} (any context); {f.stages[2].kept} with "
        "the evidence in the context (funnel stage 3)",
        *([run.errors] if run.errors else []),
        "died: " + ("; ".join(died) or "none"),
    ]


def bias_line(bias: BiasResult) -> str:
    """How much document labels inflate recall and hit rate, and how many questions differ."""
    differ = sum(1 for q in bias.questions if q.verdict)
    return (
        f"label bias: document labels inflate recall@{bias.k} {bias.recall_inflation:+.3f}, "
        f"hit rate {bias.hit_inflation:+.3f}; {differ}/{bias.n} questions differ"
    )


def comparison_heading(pair: PairView) -> str:
    """``B = name vs A = name; n paired, seed s; Holm across the rows``."""
    c = pair.comparison
    return (
        f"B = {c.name_b} vs A = {c.name_a}; {c.n_common} paired, seed {c.seed}; Holm across "
        "the rows"
    )


def discordant_line(pair: PairView) -> str:
    """The ids of the questions whose correctness changed between the two runs."""
    ids = ", ".join(qa.qid for qa, _ in pair.discordant) or "none"
    left_out = pair.n_discordant - len(pair.discordant)  # beyond report --max-drilldowns
    return f"questions whose correctness changed: {ids}" + (
        f" and {left_out:,} more" if left_out else ""
    )
