"""The report of two funnels compared (``ragaudit funnel A B``, the audit page's section)."""

from __future__ import annotations

from ragaudit.diagnose.funnel_compare import FunnelComparison, StageComparison
from ragaudit.reports.id_lists import ALL_IDS_HINT, SHOWN_IDS, cut_ids
from ragaudit.reports.report import Report, Section, Table, Text
from ragaudit.stats.verdicts import format_pvalue

__all__ = ["funnel_comparison_report", "funnel_comparison_sections"]


def _rate(kept: int, reached: int, rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.3f} ({kept}/{reached})"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def _ci(stage: StageComparison) -> str:
    if stage.ci_low is None or stage.ci_high is None:
        return "-"
    return f"[{stage.ci_low:+.3f}, {stage.ci_high:+.3f}]"


def _lost(comparison: FunnelComparison, side: int) -> str:
    stage = comparison.most_lost[side]
    if stage is None:
        return "none (no question lost)"
    lost = next(
        (s.a_reached - s.a_kept) if side == 0 else (s.b_reached - s.b_kept)
        for s in comparison.stages
        if s.stage == stage
    )
    return f"{stage} ({lost} questions)"


def funnel_comparison_sections(
    comparison: FunnelComparison, limit: int | None = None, hint: str = ""
) -> tuple[Section, ...]:
    """The stage table, the lines that name the biggest loss and move, and who moved.

    ``limit`` (the report page's ``--max-drilldowns``, ``funnel A B``'s
    :data:`~ragaudit.reports.id_lists.SHOWN_IDS`) cuts each stage's changed ids and the table
    of moved questions to as many, counting the rest; None lists them all.  ``hint`` says
    how to see them all.
    """
    a, b = comparison.a_name or "A", comparison.b_name or "B"
    rows = tuple(
        (
            f"{s.stage} {s.name}",
            _rate(s.a_kept, s.a_reached, s.a_conditional),
            _rate(s.b_kept, s.b_reached, s.b_conditional),
            str(s.paired_n),
            _signed(s.difference),
            _ci(s),
            format_pvalue(s.pvalue),
            cut_ids([*(f"-{q}" for q in s.a_only), *(f"+{q}" for q in s.b_only)], limit, hint=hint)
            or "-",
        )
        for s in comparison.stages
    )
    # typed cells for CSV: full-precision rates and differences, the rest as shown
    values = tuple(
        (row[0], s.a_conditional, s.b_conditional, s.paired_n, s.difference, *row[5:6],
         s.pvalue, row[7])
        for row, s in zip(rows, comparison.stages, strict=True)
    )  # fmt: skip
    table = Table(
        ("stage", f"A: {a}", f"B: {b}", "paired n", "B - A", "95% CI", "p", "changed"),
        rows,
        "lrrrrrrl",
        values=values,
    )
    largest = comparison.largest_move
    lines = [
        "conditional rate = kept/reached in each run; B - A = paired, on the questions that "
        "reached the stage in both runs (exact McNemar p and the interval that inverts it); "
        "changed: -q passed only under A, +q only under B",
        f"the stage that loses the most questions: A {_lost(comparison, 0)}; "
        f"B {_lost(comparison, 1)}",
        "the conditional rate that moved most: "
        + (
            "none (no question passed a stage in one run only)"
            if largest is None
            else f"{largest.stage} {_signed(largest.difference)} {_ci(largest)}"
        ),
    ]
    if comparison.only_in_a or comparison.only_in_b:
        lines.append(
            f"not compared: {len(comparison.only_in_a)} answerable question(s) only in A, "
            f"{len(comparison.only_in_b)} only in B"
        )
    shown = comparison.moved if limit is None else comparison.moved[:limit]
    moved = Table(
        ("question", f"A: {a}", f"B: {b}"),
        tuple((m.id, m.a, m.b) for m in shown),
        "lll",
    )
    more = len(comparison.moved) - len(shown)
    cut = (
        (Text((f"{more:,} more moved (the first {len(shown):,} are listed): "
               f"{hint or 'ragaudit funnel A B --all-ids lists them all'}",), style="note"),)
        if more else ()
    )  # fmt: skip
    title = f"Funnels compared (B = {b} vs A = {a}; {comparison.n} answerable questions)"
    moved_title = f"Questions that moved between stages ({len(comparison.moved)})"
    return (
        Section(title, (table, Text(tuple(lines), style="note"))),
        Section(moved_title, (moved, *cut) if comparison.moved else (Text(("none",)),), level=3),
    )


def funnel_comparison_report(
    comparison: FunnelComparison, max_ids: int | None = SHOWN_IDS
) -> Report:
    """``ragaudit funnel A B``: :func:`funnel_comparison_sections` with the JSON payload (every
    id), the id lists cut to ``max_ids`` (None: all, ``--all-ids``)."""
    sections = funnel_comparison_sections(comparison, max_ids, ALL_IDS_HINT)
    return Report("", sections, data=comparison.to_dict())
