"""The audit as one :class:`~ragaudit.reports.report.Report`: the page of ``ragaudit report``.

:func:`audit_report` builds it from the :class:`~ragaudit.diagnose.audit_result.Audit`; the one
renderer (:mod:`ragaudit.reports.renderer`) prints every form of it:

* ``html``: the self-contained page (theme ``audit``): dashboard, funnel charts, failing
  questions that open to their chunks, label bias, noise, the paired comparison, configuration;
* ``markdown``: the same sections as a pull-request comment (drill-downs are droppable, so
  the comment stays under :data:`~ragaudit.reports.render_markup.MARKDOWN_LIMIT`);
* ``table``: the short terminal audit ``ragaudit demo`` prints (its own compact sections;
  ``detail=True`` adds the funnel and comparison tables and the configuration);
* ``json``: every number (:meth:`~ragaudit.diagnose.audit_result.Audit.to_dict`); ``csv``,
  ``tsv``, ``latex``: the page's tables.

Cells and lines come from :mod:`ragaudit.reports.audit_tables`, formatted once; nothing here
is escaped (the renderer escapes), except the funnel chart's SVG, which
:func:`~ragaudit.reports.html_charts.funnel_svg` escapes as it draws.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from ragaudit.diagnose.audit_result import (
    AVERAGING,
    INTERVAL_METHODS,
    JUDGED_NOTE,
    MDE_ASSUMPTIONS,
    Audit,
    DashboardRow,
    PairView,
    RunAudit,
)
from ragaudit.diagnose.drilldown import QuestionView
from ragaudit.diagnose.funnel import FIX_HINTS, STAGE_KEYS, unjudged_hint
from ragaudit.diagnose.label_bias import BiasResult
from ragaudit.reports.audit_sections import repeated_note, terminal_sections
from ragaudit.reports.audit_tables import (
    comparison_table,
    config_table,
    cut_ids,
    dashboard_interval,
    dashboard_table,
    dashboard_value,
    fmt,
    funnel_table,
    mde_text,
    run_columns,
)
from ragaudit.reports.confounding import confounding_lines
from ragaudit.reports.funnel import interval_note
from ragaudit.reports.funnel_compare import funnel_comparison_sections
from ragaudit.reports.golden import finding_sections, golden_validity_sections
from ragaudit.reports.html_charts import funnel_svg
from ragaudit.reports.judge_audit import judge_audit_section
from ragaudit.reports.label_bias import inflation_plot, per_question_table, summary_table
from ragaudit.reports.noise import noise_section
from ragaudit.reports.repeats import repeats_section
from ragaudit.reports.report import (
    Block,
    Cell,
    Details,
    Figure,
    Inline,
    Items,
    KeyValues,
    Report,
    Section,
    Span,
    Table,
    Text,
)
from ragaudit.reports.stats import comparison_methods
from ragaudit.stats.verdicts import verdict_rule

__all__ = ["PAGE", "audit_report", "highlight"]

#: The formats that show the page's sections (the terminal has its own).
PAGE = ("html", "markdown", "csv", "tsv", "latex")
_HTML = ("html",)
_NOT_HTML = ("markdown", "csv", "tsv", "latex")
_DRILL = ("html", "markdown")  # drill-downs: a page to click through, a comment to expand


def highlight(text: str, keywords: Iterable[str]) -> tuple[Span, ...]:
    """``text`` as spans, case-insensitive keyword matches as ``mark`` runs.

    Examples
    --------
    >>> [(s.text, s.style) for s in highlight("Founded in 2014 <b>", ["2014"])]
    [('Founded in ', ''), ('2014', 'mark'), (' <b>', '')]
    """
    words = sorted({k for k in keywords if k.strip()}, key=lambda k: (-len(k), k))
    if not words:
        return (Span(text),)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out, last = [], 0
    for match in pattern.finditer(text):
        if match.start() > last:
            out.append(Span(text[last : match.start()]))
        out.append(Span(match.group(0), "mark"))
        last = match.end()
    if last < len(text):
        out.append(Span(text[last:]))
    return tuple(out)


def _code_spans(text: str) -> tuple[Span, ...]:
    """Our own notes' `` `x` `` as code runs."""
    parts = re.split(r"`([^`]+)`", text)
    return tuple(Span(p, "code" if i % 2 else "") for i, p in enumerate(parts) if p)


def _dash_cell(run: str, row: DashboardRow) -> Cell:
    attrs = (("run", run), ("metric", row.key))
    if row.value is None:
        return Cell("n/a", cls="val none", attrs=attrs)
    numbers = (("value", repr(row.value)), ("n", str(row.n)), ("low", repr(row.ci_low)),
               ("high", repr(row.ci_high)))  # fmt: skip
    return Cell(
        dashboard_value(row, row.value),
        sub=" ".join(filter(None, (dashboard_interval(row), row.size, row.decided_text))),
        cls="val", attrs=attrs + numbers,
    )  # fmt: skip


def _dashboard(audit: Audit) -> Section:
    runs = audit.runs
    rows: tuple[tuple[str | Cell, ...], ...] = tuple(
        (
            audit.dashboard_label(i),
            *(_dash_cell(r.name, r.dashboard[i]) for r in runs),
            mde_text([r.dashboard[i] for r in runs]),
            Cell((*_code_spans(row.note), Span("", "br"), Span(row.source, "code")), cls="note"),
        )
        for i, row in enumerate(runs[0].dashboard)
    )
    page = Table(
        ("number", *run_columns(audit), "MDE", "guards against / source"), rows,
        "l" + "r" * (len(runs) + 1) + "l", only=_HTML, cls="dash", row_headers=True,
    )  # fmt: skip
    note = (
        "The chapter's six numbers, each gameable alone, so read them together: recall@k "
        "(chunk level beside document level), nDCG@k, end-to-end correctness, faithfulness, "
        "wrong abstention (its two failures on their own lines, each over its own "
        "denominator), and p95 latency with $/question; precision@k follows as an extra row, "
        "then judged@k: the share of the top k's documents that carry a label (documents "
        "never labelled count as non-relevant in nDCG@k and precision@k). "
        "Each with its 95% interval and n; MDE = the smallest change a paired comparison at "
        f"this n detects; {MDE_ASSUMPTIONS}; {AVERAGING}; {INTERVAL_METHODS}; {JUDGED_NOTE}"
        + "".join(f"; {n}" for n in repeated_note(audit)) + "."
    )
    return Section(
        "Dashboard",
        (Text((note,), style="note"), page, replace(dashboard_table(audit), only=_NOT_HTML)),
        anchor="dashboard", only=PAGE,
    )  # fmt: skip


def _funnel(run: RunAudit) -> Section:
    f = run.funnel
    title = f"share of questions still in, {round(f.confidence * 100)}% intervals"
    chart = Figure(
        (funnel_svg(f, f"{run.name}: {title}"), funnel_svg(f, title, narrow=True)),
        cls="chart", only=_HTML,
    )  # fmt: skip
    if f.undefined_reason is None:
        note = interval_note(f)
        gap_ci = "" if f.gap_ci is None else f" [{f.gap_ci[0]:+.3f}, {f.gap_ci[1]:+.3f}]"
        identity = Text(((
            Span(
                f"P(correct) = {' x '.join(fmt(x) for x in f.factors)} = {fmt(f.p_correct)}; "
                f"end-to-end correct {fmt(f.correct_end_to_end)}; the gap between hit rate@{f.k}"
                " and correctness "
            ),
            Span(fmt(f.gap, "+.3f"), "strong"),
            Span(f"{gap_ci}. {note[0].upper()}{note[1:]}."),
        ),))  # fmt: skip
        undefined: list[Block] = []
    else:
        reason = f": {f.undefined_reason}."
        identity = Text(((Span("P(correct) = "), Span("undefined", "strong"), Span(reason)),),
                        only=_HTML)  # fmt: skip
        undefined = [Text((f"P(correct) and the gap are undefined{reason}",), only=_NOT_HTML)]
    extra = run.answered - f.stages[2].kept
    answered = (
        Span(f"Answered: {run.answered}/{run.n_answerable} answerable questions got an answer "
             "(the run summary's "),
        Span("answered", "em"),
        Span(f"); funnel stage 3 keeps {f.stages[2].kept}: answered "),
        Span("with the evidence in the context", "em"),
        Span(f" ({extra} answered without it)." if extra > 0 else "."),
    )  # fmt: skip
    blocks: list[Block] = [
        chart,
        funnel_table(run),
        identity,
        *undefined,
        Text((answered,), style="note"),
    ]
    if run.errors:
        blocks.append(Text((run.errors,), style="note"))
    return Section(
        f"{run.name} (k={f.k}, n={f.n} answerable questions{run.funnel_scope})", tuple(blocks),
        level=3, only=PAGE,
    )


def _chunk_items(q: QuestionView) -> tuple[Items, Items]:
    """The retrieved chunks: highlighted in full on the page, cut to 400 characters elsewhere."""
    page, short, boxes = [], [], []
    for c in q.chunks:
        tags = [
            *(["gold document"] if c.gold_doc else []),
            *(["answer chunk"] if c.answer_chunk else []),
        ]
        head = (Span(c.doc_id, "code"), Span(" "), Span(c.chunk_id, "code"),
                *(Span(t, "tag") for t in tags))  # fmt: skip
        body: Inline = (
            highlight(c.text, q.keywords)
            if c.text is not None
            else (Span("chunk text not available (pass --corpus DIR)", "em"),)
        )
        page.append((head, body))
        boxes.append(" ".join(["chunk", *(["gold"] if c.gold_doc else []),
                               *(["answer"] if c.answer_chunk else [])]))  # fmt: skip
        marks = "".join(f" [{t}]" for t in tags)
        text = "" if c.text is None else " ".join(c.text.split())[:400]
        short.append((f"{c.doc_id} {c.chunk_id}{marks}", text))
    return (
        Items(tuple(page), cls="chunks", body_cls=tuple(boxes), only=_HTML),
        Items(tuple(short), only=("markdown", "table", "latex")),
    )


def _question(q: QuestionView) -> Details:
    answer = highlight(q.answer, q.keywords) if q.answer else (Span("(empty)", "em"),)
    facts = KeyValues((
        ("question", q.question),
        ("reference answer", highlight(q.reference_answer, q.keywords)),
        ("model answer", answer),
        ("stage died", q.stage),
        ("evidence keywords", ", ".join(q.keywords) or "-"),
    ))  # fmt: skip
    lead = (
        Span("retrieved chunks, rank order", "strong"),
        Span(" (highlighted: evidence keywords)"),
    )
    chunks = Text((lead,), only=_HTML)
    ranked = Text(("retrieved chunks, rank order:",), only=_NOT_HTML)
    judges = Table(("judge", "verdict / reason"), tuple(q.judges), "ll")
    return Details(
        (Span(f"{q.stage}:", "stage"), Span(" "), Span(q.qid, "code"), Span(f" {q.question}")),
        (facts, chunks, ranked, *_chunk_items(q), judges),
        cls="question", attrs=(("qid", q.qid),), droppable=True, only=_DRILL,
    )  # fmt: skip


def _where(run: RunAudit) -> Section:
    f = run.funnel
    cut = run.max_drilldowns
    rows = [(key, str(len(f.died[key])), cut_ids(f.died[key], cut), FIX_HINTS[key])
            for key in STAGE_KEYS]  # fmt: skip
    una = f.unanswerable
    rows += [
        ("unjudged", str(len(f.unjudged)),
         cut_ids([f"{u.id} ({u.stage}: {u.reason})" for u in f.unjudged], cut, "; "),
         unjudged_hint(u.reason for u in f.unjudged) if f.unjudged else ""),
        ("ok", str(len(f.ok_ids)), "", ""),
        ("correct by luck", str(len(f.lucky)), cut_ids(f.lucky, cut), ""),
        ("unanswerable, answered", str(len(una.answered_ids)), cut_ids(una.answered_ids, cut),
         "should have said it does not know"),
    ]  # fmt: skip
    drill: list[Block] = [_question(q) for q in run.failures] or [Text(("No question died.",))]
    if run.failures_left_out:
        counts = ", ".join(f"{stage}: {n:,}" for stage, n in run.failures_left_out.items())
        drill.append(
            Text((
                f"{sum(run.failures_left_out.values()):,} more failing questions are counted "
                f"but not opened here ({counts}): the page opens the first {cut} per stage; "
                "raise report --max-drilldowns, or read them with "
                "`ragaudit show RUN --failures`.",
            ))
        )  # fmt: skip
    return Section(
        run.name, (Table(("stage", "n", "ids", "fix"), tuple(rows), "lrll"), *drill),
        level=3, only=PAGE,
    )  # fmt: skip


def _bias(run: RunAudit, bias: BiasResult) -> Section:
    """Label bias (the ``labels bias`` tables): summary, the questions whose verdict says the
    labels differ, the full table, the plot with its Spearman rho."""
    differ = [q for q in bias.questions if q.verdict]
    out: list[Block] = [
        summary_table(bias),
        Text(
            (
                f"Questions where document and chunk labels disagree: {len(differ)} of {bias.n} "
                "(phantom hits, a document hit without the answer chunk: "
                f"{', '.join(bias.phantom_hits) or 'none'}).",
            )
        ),
        per_question_table(bias, differ),
        Details(
            f"Full table ({bias.n} questions)",
            (per_question_table(bias),),
            cls="full-table",
            only=_HTML,
        ),
    ]
    plot = inflation_plot(bias)
    if plot is not None:
        out.append(plot)
    return Section(
        f"{run.name} (k={bias.k}, n={bias.n} questions with chunk labels)", tuple(out), level=3,
        only=PAGE,
    )  # fmt: skip


_VERDICT_CLASS = {"SIGNIFICANT": "sig", "borderline": "border"}


def _comparison(audit: Audit, pair: PairView) -> Section:
    c = pair.comparison
    a, b = audit.runs[pair.a].name, audit.runs[pair.b].name
    full = comparison_table(pair, short_methods=False)
    rows = tuple(
        (*row[:-1], Cell((Span(str(row[-1]), _VERDICT_CLASS.get(str(row[-1]), "none")),)))
        for row in full.rows
    )
    short = comparison_table(pair)
    note = (
        "Each row names its methods, as `ragaudit compare` does. p (Holm): Holm-Bonferroni "
        "across every row of every pair shown; the summary at the top counts a metric as moved "
        "only when that p is below alpha and the interval excludes 0. The verdict column is "
        f"compare's, on the unadjusted p: {verdict_rule(c.alpha)}"
    )
    left_out = pair.n_discordant - len(pair.discordant)
    count = (
        Span(f"Discordant questions on correctness: {pair.n_discordant:,}", "strong"),
        Span(" (the rows that changed; read them before believing a summary)" if pair.discordant
             else " (none: every question got the same verdict in both runs)"),
        *((Span(f"; the first {len(pair.discordant):,} are opened here, {left_out:,} more are "
                "counted (raise report --max-drilldowns, or read them all in report --format "
                "json: discordant_ids)"),) if left_out else ()),
    )  # fmt: skip
    side = [
        Details(
            (Span(qa.qid, "code"), Span(f" {qa.question}")),
            (
                Text((f"reference: {qa.reference_answer}",)),
                Items(
                    (
                        ((Span(f"{a}: {qa.stage}", "strong"),), highlight(qa.answer, qa.keywords)),
                        ((Span(f"{b}: {qb.stage}", "strong"),), highlight(qb.answer, qb.keywords)),
                    ),
                    ordered=False,
                    cls="pair",
                ),
            ),
            cls="discordant",
            attrs=(("qid", qa.qid),),
            droppable=True,
        )
        for qa, qb in pair.discordant
    ]
    differs = confounding_lines(c.config_differences)
    return Section(
        f"B = {b} vs A = {a} ({c.n_common} paired answerable questions)",
        (*((Text(differs, style="callout"),) if differs else ()),
         replace(full, rows=rows, only=_HTML, cls="compare"), replace(short, only=_NOT_HTML),
         Text((comparison_methods(c), _code_spans(note)), style="note"), Text((count,)), *side),
        level=3, only=PAGE,
    )  # fmt: skip


def funnels_compared(
    pair: PairView, only: tuple[str, ...], limit: int | None = None
) -> list[Section]:
    """The pair's funnels compared stage by stage (computed in the audit), as subsections;
    ``limit`` (``--max-drilldowns``) cuts the lists of questions that changed or moved."""
    if pair.funnels is None:
        return []
    return [
        replace(section, level=3, only=only)
        for section in funnel_comparison_sections(pair.funnels, limit)
    ]


def _config(audit: Audit) -> Section:
    return Section("Configuration", (config_table(audit),), anchor="config", only=PAGE)


def _page_sections(audit: Audit) -> list[Section]:
    runs = len(audit.runs)
    meta = f"ragaudit {audit.version} · seed {audit.seed} · {runs} run{'s' if runs > 1 else ''}"
    head: list[Block] = [Text((meta,), style="meta")]
    if audit.summary:
        head.append(Text(audit.summary, style="callout"))
    out = [Section("", tuple(head), only=PAGE), _dashboard(audit)]
    out.append(Section("The funnel", (), anchor="funnel", only=PAGE))
    out += [_funnel(run) for run in audit.runs]
    out += [repeats_section(r.repeats, level=3, only=PAGE) for r in audit.runs if r.repeats]
    intro = (
        "Each failing question opens to its question, reference answer, model answer, the "
        "retrieved chunks in rank order with the evidence highlighted, and the judges' verdicts."
    )
    out.append(Section("Where questions die", (Text((intro,), style="note"),), anchor="where",
                       only=PAGE))  # fmt: skip
    out += [_where(run) for run in audit.runs]
    with_bias = [(run, run.bias) for run in audit.runs if run.bias is not None]
    if with_bias:
        out.append(Section("Label bias: document vs chunk labels", (), anchor="labels", only=PAGE))
        out += [_bias(run, bias) for run, bias in with_bias]
    for run in audit.runs:  # --cluster-by / --human
        noise = noise_section(run.name, run.clustered, run.calibration)
        if noise is not None:
            out.append(Section(noise.title, noise.blocks, only=PAGE))
    if audit.pairs:
        out.append(Section("Paired comparison", (), anchor="compare", only=PAGE))
        for pair in audit.pairs:
            cut = audit.runs[0].max_drilldowns
            out += [_comparison(audit, pair), *funnels_compared(pair, PAGE, cut)]
    out.append(_config(audit))
    notes = [f"{r.name}: {n}" for r in audit.runs for n in r.notes]
    notes += [w for r in audit.runs if r.judged is not None for w in r.judged.warnings()]
    notes += [f"comparison: {n}" for n in audit.notes]
    if notes:
        out.append(Section("Notes", (Text(tuple(notes), style="list"),), anchor="notes", only=PAGE))
    footer = f"Generated by ragaudit {audit.version}, seed {audit.seed}."
    out.append(Section("", (Text((footer,), style="meta"),), only=_HTML))
    return out


def audit_report(
    audit: Audit,
    *,
    full_bias: bool = False,
    detail: bool = False,
) -> Report:
    """The audit page as one :class:`~ragaudit.reports.report.Report` (see the module
    docstring for what each format shows); ``full_bias`` adds the per-question label-bias rows
    to the terminal form, ``detail`` its funnel tables, every comparison column and the
    configuration (``report --format table``).  A run that carries a judges audit
    (``judges audit RUN --save OUT``) gets its "judge audit" section; the audit's
    ``golden_check`` (``report --corpus``) adds the golden set's findings and validity
    checks.

    Examples
    --------
    Two questions, the gold document retrieved for both, one answer correct:

    >>> from ragaudit.data.saved_run import SavedRun
    >>> from ragaudit.diagnose.audit import build_audit
    >>> from ragaudit.reports.renderer import render
    >>> rows = [{"id": q, "gold_docs": ["D"], "retrieved": [{"chunk_id": "D#0", "doc_id": "D",
    ...          "rank": 1}], "answer": "<script>", "judges": {"evidence_in_context": True,
    ...          "abstained": False, "correct": ok}} for q, ok in (("q1", True), ("q2", False))]
    >>> audit = build_audit([SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": rows})],
    ...                     n_resamples=50)
    >>> report = audit_report(audit)
    >>> page = render(report, "html")
    >>> "<script" in page, "&lt;script&gt;" in page
    (False, True)
    >>> [line for line in render(report, "table").splitlines() if "died" in line]
    ['  died: 4-generation q2']
    """
    names = " vs ".join(r.name for r in audit.runs)
    sections = (*_page_sections(audit), *terminal_sections(audit, full_bias=full_bias,
                                                           detail=detail))  # fmt: skip
    data = audit.to_dict()  # each run's judge audit is in its "judge_audit" key
    sections += tuple(judge_audit_section(r.judge_audit) for r in audit.runs if r.judge_audit)
    golden = audit.golden_check
    if golden is not None:
        sections += (*finding_sections(golden, "golden set: "),
                     *golden_validity_sections(golden, "golden set: "))  # fmt: skip
    return Report(f"ragaudit report: {names}", sections, data=data, theme="audit")
