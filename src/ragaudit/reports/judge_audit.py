"""The report of ``ragaudit judges audit``: one row per bias test, as ``compare`` prints a
metric (difference, interval, exact p-value, verdict), and the section ``report`` adds.

Both render the plain document of :meth:`ragaudit.diagnose.judge_audit.JudgeAudit.to_dict`
(the ``judges audit --format json`` output, and what ``judges audit --save`` stores in the
run), so ``report RUN`` shows exactly what the command printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.reports.report import Report, Section, Table, Text
from ragaudit.stats.verdicts import format_pvalue

__all__ = ["judge_audit_report", "judge_audit_section"]

_COLUMNS = ("test", "verdict on", "n", "A", "B", "B - A [95% CI]", "p", "verdict", "method")
_NOTE = (
    "each answer judged as given (A) and changed (B); B - A with the interval, exact p-value "
    "and verdict of `ragaudit compare` (0/1 verdicts: Tango score interval and McNemar's "
    "table; scores: the sign-flip test inverted).  SIGNIFICANT: the change moves the judge, a "
    "bias.  Position: a pairwise judge shown the run's answer and the reference, then swapped; "
    "A only = the first-shown answer won both times, B only = the second-shown.  Repeat "
    "noise: repeat 1 against the first answer, and the share of questions whose R repeats all "
    "agree with its interval."
)


def _row(row: Mapping[str, Any]) -> tuple[str, ...]:
    if row.get("verdict") == "not run":
        return (row["test"], row["metric"], "-", "-", "-", "-", "-", "not run", row["reason"])
    method = f"{row['ci_method']}; p {row['p_method']}; {row['n_differing']} differ"
    table = row.get("mcnemar")
    if table is not None:
        method += f" (A only {table['a_only']}, B only {table['b_only']})"
    if row.get("excluded_null"):
        method += (
            f"; {row['excluded_null']} without a verdict (not applicable, undecided, failed"
            + (", tie" if row["test"] == "position" else "") + ") left out"
        )
    agreement = row.get("agreement")
    if agreement:
        if agreement["value"] is None:
            method += f"; R = {agreement['repeats']} repeats: no question with all verdicts"
        else:
            method += (
                f"; R = {agreement['repeats']} repeats agree on "
                f"{round(agreement['value'] * agreement['n'])} of {agreement['n']} questions: "
                f"{agreement['value']:.3f} [{agreement['ci_low']:.3f}, "
                f"{agreement['ci_high']:.3f}] ({agreement['method']})"
            )
    return (
        row["test"], row["metric"], str(row["n"]), f"{row['mean_a']:.3f}",
        f"{row['mean_b']:.3f}",
        f"{row['diff']:+.3f} [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]",
        format_pvalue(row["p_value"]), row["verdict"], method,
    )  # fmt: skip


def judge_audit_section(audit: Mapping[str, Any]) -> Section:
    """The judge audit (a :meth:`JudgeAudit.to_dict` document) as one section.

    >>> from ragaudit.diagnose.judge_audit import AuditRow, JudgeAudit
    >>> audit = JudgeAudit("k3", "offline", None, None, False, 2, 0,
    ...     (AuditRow("self-preference", "correct", "-", None, "offline judge: no model"),))
    >>> section = judge_audit_section(audit.to_dict())
    >>> section.title, section.blocks[1].rows[0][-2:]
    ('judge audit', ('not run', 'offline judge: no model'))
    """
    model, generator = audit.get("judge_model"), audit.get("generator_model")
    if audit.get("self_preference_flag"):
        flag = (
            f"self-preference: the judge ({model}) is the generator's model or family "
            f"({generator}): tested below"
        )
    elif model is None:
        flag = "self-preference: not flagged (offline judge)"
    else:
        flag = f"self-preference: not flagged (judge {model}, generator {generator or '-'})"
    unanswered = audit.get("n_unanswered") or 0
    pairwise = audit.get("pairwise_judge")
    lines = (
        f"judge {audit['judge']}" + (f" ({model})" if model else "")
        + f" on {audit['n_items']} answers of run {audit['run']}"
        + (f" ({unanswered} questions without an answer left out)" if unanswered else "")
        + (f"; position judged by {pairwise}" if pairwise else "")
        + f"; seed {audit['seed']}",
        flag,
    )  # fmt: skip
    table = Table(_COLUMNS, tuple(_row(r) for r in audit["rows"]), align="llrrrrrll")
    return Section("judge audit", (Text(lines), table, Text((_NOTE,), style="note")))


def judge_audit_report(audit: Any) -> Report:
    """The whole ``judges audit`` output; JSON is :meth:`JudgeAudit.to_dict`."""
    data = audit.to_dict()
    title = f"ragaudit judges audit: {audit.run} ({audit.judge} judge)"
    return Report(title, (judge_audit_section(data),), data=data)
