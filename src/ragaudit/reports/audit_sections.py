"""The terminal form of the audit (``ragaudit demo``, ``report --format table``): sections of
the audit :class:`~ragaudit.reports.report.Report` shown only as ``table``.

Short on purpose: the dashboard, each run's funnel in a few lines (where questions died, by
id; the label-bias line; the clustering and calibration lines), the comparison with the
questions whose correctness changed, and what moved for real.  With ``detail`` (``report
--format table``) each funnel is its stage table, the comparison has every column and the
configuration follows.  The page's sections (:mod:`ragaudit.reports.audit_page`) carry the
drill-downs.
"""

from __future__ import annotations

from dataclasses import replace

from ragaudit.diagnose.audit_result import (
    AVERAGING,
    INTERVAL_METHODS,
    JUDGED_NOTE,
    MDE_ASSUMPTIONS,
    REPEATED_NOTE,
    Audit,
    RunAudit,
)
from ragaudit.diagnose.noise import describe_clustering
from ragaudit.reports.audit_tables import (
    DASHBOARD_DETAIL,
    bias_line,
    comparison_columns,
    comparison_heading,
    comparison_table,
    config_table,
    dashboard_table,
    discordant_line,
    funnel_lines,
    funnel_table,
)
from ragaudit.reports.confounding import confounding_lines
from ragaudit.reports.funnel import interval_note
from ragaudit.reports.funnel_compare import funnel_comparison_sections
from ragaudit.reports.noise import calibration_summary
from ragaudit.reports.repeats import repeats_section
from ragaudit.reports.report import Block, Section, Table, Text

__all__ = ["TERMINAL", "terminal_sections"]

#: The format that shows these sections.
TERMINAL = ("table",)

_COLUMNS = ("metric", "B - A", "CI", "CI method", "p", "p (Holm)", "p method", "verdict")


def _run(run: RunAudit, full_bias: bool, detail: bool) -> Section:
    f = run.funnel
    lines = funnel_lines(run)
    blocks: list[Block] = (
        [funnel_table(run), Text((interval_note(f), *lines[1:]))]
        if detail
        else [Text(tuple(lines))]
    )
    if run.bias is not None:
        hint = "" if full_bias or detail else " (--full)"
        blocks.append(Text((bias_line(run.bias) + hint,)))
        if full_bias:
            differ = tuple(
                (q.qid, f"{q.doc_recall:.2f}", f"{q.chunk_recall:.2f}", q.verdict)
                for q in run.bias.questions
                if q.verdict
            )
            blocks.append(Table(("id", "doc recall", "chunk recall", "verdict"), differ, "lrrl"))
    if run.clustered is not None:
        blocks.append(Text((describe_clustering(run.clustered),), style="note"))
    if run.calibration is not None:
        blocks.append(Text(("calibrated " + calibration_summary(run.calibration),), style="note"))
    if detail and run.judged is not None and run.judged.warnings():
        blocks.append(Text(tuple(f"unjudged: {w}" for w in run.judged.warnings()), style="note"))
    return Section(
        f"Funnel ({run.name}: k={f.k}, n={f.n} answerable{run.funnel_scope})", tuple(blocks),
        only=TERMINAL,
        compact=True,
    )  # fmt: skip


def repeated_note(audit: Audit) -> tuple[str, ...]:
    """The dashboard's note on repeated runs, when one of its runs is repeated."""
    return (REPEATED_NOTE,) if any(r.repeats is not None for r in audit.runs) else ()


def terminal_sections(
    audit: Audit, *, full_bias: bool = False, detail: bool = False
) -> list[Section]:
    """The terminal audit's sections; ``full_bias`` adds the per-question label-bias rows,
    ``detail`` the funnel tables, every comparison column and the configuration.

    Examples
    --------
    >>> from ragaudit.data.saved_run import SavedRun
    >>> from ragaudit.diagnose.audit import build_audit
    >>> row = {"id": "q1", "answerable": True, "gold_docs": ["G"],
    ...        "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...        "metrics": {"answered": 0.0, "correct": 0.0},
    ...        "judges": {"abstained": True, "correct": False, "evidence_in_context": True}}
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": [row]})
    >>> [s.title.split(" (")[0] for s in terminal_sections(build_audit([run], n_resamples=50))]
    ['Dashboard', 'Funnel']
    """
    out = [
        Section(
            f"Dashboard {DASHBOARD_DETAIL}",
            (
                dashboard_table(audit),
                Text((AVERAGING, INTERVAL_METHODS, MDE_ASSUMPTIONS, JUDGED_NOTE,
                      *repeated_note(audit))),
            ),
            only=TERMINAL,
            compact=True,
        ),
        *(_run(run, full_bias, detail) for run in audit.runs),
        *(repeats_section(r.repeats, only=TERMINAL) for r in audit.runs if r.repeats),
    ]
    funnels: list[Section] = []  # report --format table: after the summary of the pairs
    for pair in audit.pairs:
        differs = confounding_lines(pair.comparison.config_differences)
        out.append(
            Section(  # names inside the parentheses: a terminal title upper-cases the rest
                f"Comparison ({comparison_heading(pair)})",
                (
                    *((Text(differs),) if differs else ()),
                    comparison_table(pair) if detail else comparison_columns(pair, _COLUMNS),
                    Text((discordant_line(pair),)),
                ),
                only=TERMINAL,
                compact=True,
            )
        )
        if detail and pair.funnels is not None:
            funnels += [
                replace(section, only=TERMINAL)
                for section in funnel_comparison_sections(
                    pair.funnels, audit.runs[0].max_drilldowns
                )
            ]
    tail: list[Block] = []
    if audit.notes:
        tail.append(Text(tuple(f"note: {n}" for n in audit.notes)))
    if audit.summary:
        tail.append(Text(audit.summary, style="note"))
    if tail:
        last = out[-1]
        out[-1] = Section(last.title, (*last.blocks, *tail), only=TERMINAL, compact=True)
    out += funnels
    if detail:
        out.append(Section("Configuration", (config_table(audit),), only=TERMINAL))
    return out
