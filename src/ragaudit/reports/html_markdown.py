"""The audit page in text: GitHub-flavoured Markdown (a pull-request comment) and the short
terminal audit ``ragaudit demo`` prints.

Both are pure functions of the :class:`~ragaudit.reports.html_data.Audit` the HTML page is
rendered from, so every form shows the same numbers.  Markdown cells are escaped (HTML
entities for ``< > &``, backslashes for Markdown syntax); drill-downs are ``<details>`` blocks
with HTML-escaped ``<pre>`` bodies.  The Markdown stays under :data:`MARKDOWN_LIMIT`
characters (GitHub's comment limit is 65,536): drill-downs that do not fit are counted, not
cut mid-way.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from html import escape

from ragaudit.diagnose.funnel import STAGE_KEYS
from ragaudit.diagnose.label_bias import QuestionBias
from ragaudit.diagnose.noise import describe_clustering
from ragaudit.reports._escape import md_inline, visible
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
from ragaudit.reports.html_dashboard import INTERVAL_METHODS, MDE_DISCORDANCE
from ragaudit.reports.html_data import Audit, QuestionView
from ragaudit.reports.noise import calibration_summary, noise_section
from ragaudit.reports.render import render_markdown, render_table_text
from ragaudit.reports.report import Report, Table

__all__ = ["MARKDOWN_LIMIT", "md_escape", "render_audit_markdown", "render_audit_text"]

MARKDOWN_LIMIT = 65_000


def _cell(text: object) -> str:
    """A table cell: :func:`md_escape` without the line-start escapes (a cell starts no block)."""
    return md_inline(" ".join(str(text).split()))


def md_escape(text: object) -> str:
    r"""Text for a Markdown table cell or paragraph, on one line (the renderer's
    :func:`~ragaudit.reports._escape.md_inline`, whitespace runs collapsed).

    Examples
    --------
    >>> md_escape("a | b\n# c")
    'a \\| b # c'
    """
    return md_inline(" ".join(str(text).split()), line_start=True)


def _html(text: str) -> str:
    """Escape for raw HTML inside Markdown (``<details>``/``<pre>``): entities for ``<>&`` and
    for the brackets of a would-be link."""
    return escape(text, quote=False).replace("[", "&#91;").replace("]", "&#93;")


def _md_table(table: Table) -> str:
    lines = [
        "| " + " | ".join(_cell(h) for h in table.columns) + " |",
        "| " + " | ".join("---:" if a == "r" else ":---" for a in table.align) + " |",
    ]
    lines += ["| " + " | ".join(_cell(c) or " " for c in row) + " |" for row in table.rows]
    return "\n".join(lines)


def _bias_table(differ: Sequence[QuestionBias]) -> Table:
    """The questions whose document and chunk labels disagree."""
    rows = tuple((q.qid, f"{q.doc_recall:.2f}", f"{q.chunk_recall:.2f}", q.verdict) for q in differ)
    return Table(("id", "doc recall", "chunk recall", "verdict"), rows, "lrrl")


def _details(q: QuestionView) -> str:
    chunks = []
    for c in q.chunks:
        tags = (" [gold document]" if c.gold_doc else "") + (
            " [answer chunk]" if c.answer_chunk else ""
        )
        text = "" if c.text is None else "\n    " + " ".join(c.text.split())[:400]
        chunks.append(f"{c.rank}. {c.doc_id} {c.chunk_id}{tags}{text}")
    judges = "\n".join(f"{k}: {v}" for k, v in q.judges)
    body = (
        f"question:   {q.question}\nreference:  {q.reference_answer}\nanswer:     {q.answer}\n"
        f"stage died: {q.stage}\nkeywords:   {', '.join(q.keywords) or '-'}\n\n"
        "retrieved, rank order:\n" + "\n".join(chunks) + "\n\njudges:\n" + judges
    )
    summary = _html(f"{q.stage}: {q.qid} {' '.join(q.question.split())}"[:160])
    return f"<details><summary>{summary}</summary>\n<pre>{_html(body)}</pre>\n</details>"


def render_audit_markdown(audit: Audit, limit: int = MARKDOWN_LIMIT) -> str:
    """The audit as GitHub-flavoured Markdown, under ``limit`` characters.

    Examples
    --------
    >>> from ragaudit.data.saved_run import SavedRun
    >>> from ragaudit.reports.html_data import build_audit
    >>> row = {"id": "q|1", "answerable": True, "gold_docs": ["G"], "answer": "<b>x</b>",
    ...        "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...        "metrics": {"recall@k": 1.0, "answered": 1.0, "correct": 0.0},
    ...        "judges": {"abstained": False, "correct": False, "evidence_in_context": True}}
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": [row]})
    >>> md = render_audit_markdown(build_audit([run], n_resamples=50))
    >>> "&lt;b&gt;x&lt;/b&gt;" in md and "<b>" not in md
    True
    """
    names = " vs ".join(r.name for r in audit.runs)
    head: list[str | list[str]] = [
        f"# ragaudit report: {md_escape(names)}",
        "",
        f"ragaudit {md_escape(audit.version)} · seed {audit.seed} · {audit.n_resamples} "
        "bootstrap resamples",
    ]
    for sentence in audit.summary:
        head += ["", f"> {md_escape(sentence)}"]
    head += [
        "",
        "## Dashboard",
        "",
        f"95% intervals and n; MDE = smallest change a paired comparison at this n detects "
        f"(power 0.8, exact McNemar, alpha 0.05, {MDE_DISCORDANCE:.0%} discordant); "
        f"{INTERVAL_METHODS}.",
        "",
        _md_table(dashboard_table(audit)),
        "",
        "## The funnel",
    ]
    for run in audit.runs:
        f = run.funnel
        gap_ci = "" if f.gap_ci is None else f" [{f.gap_ci[0]:+.3f}, {f.gap_ci[1]:+.3f}]"
        head += [
            "",
            f"### {md_escape(run.name)} (k={f.k}, n={f.n} answerable)",
            "",
            _md_table(funnel_table(run)),
            "",
            md_escape(
                (
                    f"gap between hit rate@{f.k} and end-to-end correctness: {f.gap:+.3f}{gap_ci}; "
                    if f.gap is not None
                    else f"P(correct) and the gap are undefined: {f.undefined_reason}; "
                )
                + f"answered {run.answered}/{run.n_answerable} (any context), stage 3 keeps "
                f"{f.stages[2].kept} (answered with the evidence in the context)"
            ),
        ]
        die = [(key, str(len(f.died[key])), ", ".join(f.died[key])) for key in STAGE_KEYS]
        die.append(
            (
                "unanswerable, answered",
                str(len(f.unanswerable.answered_ids)),
                ", ".join(f.unanswerable.answered_ids),
            )
        )
        die_table = Table(("stage", "n", "ids"), tuple(die), "lrl")
        head += ["", "Where questions die:", "", _md_table(die_table)]
        head += ["", [_details(q) for q in run.failures]]
        if run.bias is not None:
            b = run.bias
            differ = [q for q in b.questions if q.verdict]
            head += [
                "",
                f"Label bias: document labels inflate recall@{b.k} by {b.recall_inflation:+.3f} "
                f"and hit rate by {b.hit_inflation:+.3f} ({len(differ)} of {b.n} questions "
                "differ):",
                "",
                _md_table(_bias_table(differ)),
            ]
    for run in audit.runs:
        section = noise_section(run.name, run.clustered, run.calibration)
        if section is not None:
            head += ["", render_markdown(Report("", (section,))).rstrip("\n")]
    tail: list[str] = []
    for pair in audit.pairs:
        c = pair.comparison
        tail += [
            "",
            f"## {md_escape(c.name_b)} vs {md_escape(c.name_a)} (paired, n={c.n_common})",
            "",
            _md_table(comparison_table(pair)),
            "",
            f"Discordant questions on correctness: {len(pair.discordant)}",
        ]
        for qa, qb in pair.discordant:
            body = (
                f"question:  {qa.question}\nreference: {qa.reference_answer}\n\n"
                f"{c.name_a} ({qa.stage}):\n{qa.answer}\n\n{c.name_b} ({qb.stage}):\n{qb.answer}"
            )
            tail.append(
                f"<details><summary>{_html(qa.qid)}</summary>\n<pre>{_html(body)}</pre>\n</details>"
            )
    tail += [f"\nNote: {md_escape(n)}" for n in audit.notes]
    tail += ["", "## Configuration", "", _md_table(config_table(audit))]
    return _fit(head, tail, limit)


def _fit(head: Sequence[str | list[str]], tail: Sequence[str], limit: int) -> str:
    """Join; a list in ``head`` is a run's drill-downs, kept in order while they fit."""
    fixed = [part for part in (*head, *tail) if isinstance(part, str)]
    budget = limit - len("\n".join(fixed)) - 200
    out: list[str] = []
    for part in head:
        if isinstance(part, str):
            out.append(part)
            continue
        kept = []
        for block in part:
            if len(block) + 1 <= budget:
                kept.append(block)
                budget -= len(block) + 1
        if len(kept) < len(part):
            kept.append(
                f"{len(part) - len(kept)} more drill-down(s) in the HTML report (size limit)"
            )
        out.append("\n".join(kept))
    return "\n".join([*out, *tail]).rstrip("\n") + "\n"


def render_audit_text(audit: Audit, *, full_bias: bool = False) -> str:
    """The short terminal audit: dashboard, funnel, where questions die (ids), the label-bias
    line, the comparison and what moved.  ``full_bias`` adds the per-question bias rows.

    Examples
    --------
    >>> from ragaudit.data.saved_run import SavedRun
    >>> from ragaudit.reports.html_data import build_audit
    >>> row = {"id": "q1", "answerable": True, "gold_docs": ["G"],
    ...        "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...        "metrics": {"answered": 0.0, "correct": 0.0},
    ...        "judges": {"abstained": True, "correct": False, "evidence_in_context": True}}
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": [row]})
    >>> text = render_audit_text(build_audit([run], n_resamples=50))
    >>> [line for line in text.splitlines() if "died" in line]
    ['  died: 3-refusal q1']
    """
    out = [f"DASHBOARD {DASHBOARD_DETAIL}"]
    out += render_table_text(dashboard_table(audit))
    out.append(f"  {INTERVAL_METHODS}")
    for run in audit.runs:
        f = run.funnel
        out += ["", f"FUNNEL {visible(run.name)} (k={f.k}, n={f.n} answerable)"]
        out += [f"  {visible(line)}" for line in funnel_lines(run)]
        if run.bias is not None:
            out.append(f"  {bias_line(run.bias)}" + ("" if full_bias else " (--full)"))
            if full_bias:
                differ = [q for q in run.bias.questions if q.verdict]
                out += render_table_text(_bias_table(differ), "    ")
        if run.clustered is not None:
            out += textwrap.wrap(
                visible(describe_clustering(run.clustered)), 98, initial_indent="  ",
                subsequent_indent="    ",
            )  # fmt: skip
        if run.calibration is not None:
            out += textwrap.wrap(
                visible(calibration_summary(run.calibration)), 98,
                initial_indent="  calibrated ", subsequent_indent="    ",
            )  # fmt: skip
    for pair in audit.pairs:
        out += ["", f"COMPARISON {visible(comparison_heading(pair))}"]
        columns = ("metric", "B - A", "CI", "CI method", "p (Holm)", "p method", "verdict")
        out += render_table_text(comparison_columns(pair, columns))
        out.append(f"  {visible(discordant_line(pair))}")
    out += [f"  note: {visible(n)}" for n in audit.notes]
    for sentence in audit.summary:
        out += textwrap.wrap(visible(sentence), 98, initial_indent="  ", subsequent_indent="    ")
    return "\n".join(out) + "\n"
