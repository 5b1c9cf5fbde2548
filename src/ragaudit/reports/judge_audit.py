"""The report of ``ragaudit judges audit``: one row per bias test, as ``compare`` prints a
metric (difference, interval, exact p-value, verdict), and the section ``report`` adds."""

from __future__ import annotations

from typing import Any

from ragaudit.reports.report import Report, Section, Table, Text
from ragaudit.stats.verdicts import format_pvalue

__all__ = ["judge_audit_report", "judge_audit_section"]

_COLUMNS = ("test", "verdict on", "n", "A", "B", "B - A [95% CI]", "p", "verdict", "method")


def _row(row: Any) -> tuple[str, ...]:
    c = row.comparison
    if c is None:
        return (row.test, row.metric, "-", "-", "-", "-", "-", "not run", row.reason)
    ci = c.confidence_interval
    method = f"{c.ci_method}; p {c.p_method}; {c.n_differing} differ"
    if c.mcnemar is not None:
        method += f" (A only {c.mcnemar.a_only}, B only {c.mcnemar.b_only})"
    return (
        row.test, row.metric, str(c.n), f"{c.mean_a:.3f}", f"{c.mean_b:.3f}",
        f"{c.statistic:+.3f} [{ci.low:+.3f}, {ci.high:+.3f}]", format_pvalue(c.pvalue),
        c.verdict, method,
    )  # fmt: skip


def judge_audit_section(audit: Any) -> Section:
    """The judge audit as one section (the audit page adds it when given one).

    >>> from ragaudit.diagnose.judge_audit import AuditRow, JudgeAudit
    >>> audit = JudgeAudit("k3", "offline", None, None, False, 2, 0,
    ...     (AuditRow("self-preference", "correct", "-", None, "offline judge: no model"),))
    >>> judge_audit_section(audit).title
    'judge audit'
    """
    flag = (
        f"self-preference: the judge ({audit.judge_model}) is the generator's model or family "
        f"({audit.generator_model}): tested below"
        if audit.self_preference_flag
        else "self-preference: not flagged (" + (
            "offline judge" if audit.judge_model is None else
            f"judge {audit.judge_model}, generator {audit.generator_model or 'not an LLM'}") + ")"
    )  # fmt: skip
    lines = (
        f"judge {audit.judge}" + (f" ({audit.judge_model})" if audit.judge_model else "")
        + f" on {audit.n_items} answers of run {audit.run}; seed {audit.seed}",
        flag,
    )  # fmt: skip
    note = (
        "each answer judged as given (A) and changed (B); B - A with the interval, exact "
        "p-value and verdict of `ragaudit compare` (0/1 verdicts: Tango score interval and "
        "McNemar's table; scores: the sign-flip test inverted).  SIGNIFICANT: the change moves "
        "the judge, a bias; position bias needs a pairwise judge (none in ragaudit)."
    )
    table = Table(_COLUMNS, tuple(_row(r) for r in audit.rows), align="llrrrrrll")
    return Section("judge audit", (Text(lines), table, Text((note,), style="note")))


def judge_audit_report(audit: Any) -> Report:
    """The whole ``judges audit`` output; JSON is :meth:`JudgeAudit.to_dict`."""
    title = f"ragaudit judges audit: {audit.run} ({audit.judge} judge)"
    return Report(title, (judge_audit_section(audit),), data=audit.to_dict())
