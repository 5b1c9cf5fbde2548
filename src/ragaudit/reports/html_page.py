"""The audit page as one self-contained HTML file (``ragaudit report``).

Inline CSS and inline SVG only: no script, no external resource, no link built from data, and a
Content-Security-Policy that forbids scripts anyway.  Drill-downs are ``<details>`` elements, so
the page works from ``file://`` without JavaScript.  Every string that comes from a corpus, a
golden set, an answer or a run name passes through :func:`html.escape` (quotes included).
The output is a pure function of the :class:`~ragaudit.reports.html_data.Audit`: no
timestamps, byte-identical for equal input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from html import escape

from ragaudit.diagnose.funnel import FIX_HINTS, STAGE_KEYS
from ragaudit.diagnose.label_bias import BiasResult
from ragaudit.reports.audit_tables import (
    comparison_table,
    config_table,
    fmt,
    funnel_table,
    mde_text,
)
from ragaudit.reports.funnel import interval_note
from ragaudit.reports.html_charts import funnel_svg
from ragaudit.reports.html_dashboard import INTERVAL_METHODS, MDE_DISCORDANCE, DashboardRow
from ragaudit.reports.html_data import (
    Audit,
    PairView,
    QuestionView,
    RunAudit,
)
from ragaudit.reports.label_bias import bias_report
from ragaudit.reports.noise import noise_section
from ragaudit.reports.report import ScatterPlot, Table, Text
from ragaudit.reports.svg import scatter_svg
from ragaudit.stats.verdicts import verdict_rule

__all__ = ["highlight", "render_audit_html"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_CSS = """
:root{--fg:#1d1d1f;--muted:#5f6368;--line:#e2e4e8;--accent:#3465a4;--bad:#b00020;--ok:#2e7d32}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
max-width:76rem;margin:0 auto;padding:1.5rem 1.25rem 4rem}
h1{font-size:1.6rem;margin:0 0 .2rem}h2{font-size:1.25rem;margin:2.2rem 0 .6rem;
border-bottom:2px solid var(--line);padding-bottom:.25rem}
h3{font-size:1.02rem;margin:1.2rem 0 .4rem}
.meta{color:var(--muted);margin:0 0 1rem}
.callout{background:#f3f6fb;border-left:4px solid var(--accent);padding:.6rem .9rem;margin:.8rem 0}
table{border-collapse:collapse;margin:.4rem 0 .8rem}th,td{padding:.3rem .6rem;
border-bottom:1px solid var(--line);vertical-align:top;text-align:left}
th{font-weight:600;background:#fafbfc}td.num,th.num{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}
.dash tbody th{background:none;min-width:13rem}
.dash td.val{font-size:1.25rem;font-weight:600;font-variant-numeric:tabular-nums}
.dash .ci{display:block;font-size:.8rem;font-weight:400;color:var(--muted)}
.note{color:var(--muted);font-size:.85rem}
.sig{color:var(--ok);font-weight:600}.border{color:#a15c00}.none{color:var(--muted)}
details{border:1px solid var(--line);border-radius:6px;margin:.35rem 0;padding:.3rem .6rem}
details[open]{background:#fcfcfd}summary{cursor:pointer}
summary .stage{display:inline-block;min-width:7.5rem;color:var(--bad);font-weight:600}
dl{display:grid;grid-template-columns:10rem 1fr;gap:.25rem .8rem;margin:.5rem 0}
dt{color:var(--muted)}dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
ol.chunks{padding-left:1.4rem}ol.chunks li{margin:.35rem 0}
.chunk{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f9;padding:.35rem .5rem;
border-radius:4px;font-size:.85rem;max-height:18rem;overflow:auto}
.gold{border-left:3px solid var(--accent)}.answer{border-left:3px solid var(--ok)}
mark{background:#ffe27a;padding:0 .1rem}
.tag{font-size:.75rem;padding:0 .35rem;border-radius:3px;background:#eef1f6;margin-left:.3rem}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:.8rem}
.pair>div{min-width:0}code{font-size:.85em;overflow-wrap:anywhere}
svg{max-width:100%;height:auto}
.scroll{overflow-x:auto;max-width:100%}.scroll>table{margin-top:0}
.chart{overflow-x:auto}.chart svg{max-width:none}.chart svg.narrow{display:none}
.dash td.note{min-width:18rem}
table.compare td{white-space:nowrap}table.compare td:last-child{white-space:normal}
table.config{table-layout:fixed;width:100%;min-width:36rem}
table.config th:first-child{width:12rem}table.config td{overflow-wrap:anywhere}
@media (max-width:40rem){body{font-size:14px;padding:1rem .7rem 3rem}h1{font-size:1.3rem}
.dash tbody th{min-width:8rem}dl{grid-template-columns:1fr;gap:0}dt{font-weight:600;
margin-top:.4rem}.pair{grid-template-columns:1fr}summary .stage{min-width:0;margin-right:.3rem}
table.config th:first-child{width:9rem}table:not(.config) td:first-child{white-space:nowrap}
.chart svg{display:none}
.chart svg.narrow{display:block}}
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def highlight(text: str, keywords: Iterable[str]) -> str:
    """Escape ``text`` and wrap case-insensitive keyword matches in ``<mark>``.

    The text is split on the keywords first and every piece escaped, so nothing in the text
    or in a keyword can open a tag.

    Examples
    --------
    >>> highlight("Founded in 2014 <b>", ["2014"])
    'Founded in <mark>2014</mark> &lt;b&gt;'
    >>> highlight("a<b", [])
    'a&lt;b'
    """
    words = sorted({k for k in keywords if k.strip()}, key=lambda k: (-len(k), k))
    if not words:
        return _e(text)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out, last = [], 0
    for match in pattern.finditer(text):
        out.append(_e(text[last : match.start()]))
        out.append(f"<mark>{_e(match.group(0))}</mark>")
        last = match.end()
    out.append(_e(text[last:]))
    return "".join(out)


def _table(
    header: Sequence[str], rows: Iterable[Sequence[str]], numeric: str = "", cls: str = ""
) -> str:
    """A table of already-escaped cells; ``numeric`` has ``r`` for right-aligned columns."""
    align = numeric.ljust(len(header), "l")
    c = [' class="num"' if a == "r" else "" for a in align]
    head = "".join(f"<th{c[i]}>{h}</th>" for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(f"<td{c[i]}>{v}</td>" for i, v in enumerate(row)) + "</tr>" for row in rows
    )
    klass = f' class="{cls}"' if cls else ""
    return (
        f'<div class="scroll"><table{klass}><thead><tr>{head}</tr></thead><tbody>{body}'
        "</tbody></table></div>"
    )


def _code_spans(escaped: str) -> str:
    """`` `x` `` in already-escaped text of our own notes -> ``<code>x</code>``."""
    return re.sub(r"`([^`<>]+)`", r"<code>\1</code>", escaped)


def _dash_cell(run: str, row: DashboardRow) -> str:
    if row.value is None:
        return f'<td class="val none" data-run="{_e(run)}" data-metric="{row.key}">n/a</td>'
    return (
        f'<td class="val num" data-run="{_e(run)}" data-metric="{row.key}" '
        f'data-value="{row.value!r}" data-n="{row.n}" data-low="{row.ci_low!r}" '
        f'data-high="{row.ci_high!r}">{row.value:.3f}'
        f'<span class="ci">[{fmt(row.ci_low)}, {fmt(row.ci_high)}] {row.size}</span></td>'
    )


def _dashboard(audit: Audit) -> str:
    runs = audit.runs
    head = "".join(f"<th class=num>{_e(r.name)}</th>" for r in runs)
    out = [
        "<h2 id=dashboard>Dashboard</h2>",
        '<p class="note">Six numbers, each gameable alone, so read them together. Each with its '
        "95% interval and n; MDE = the smallest change a paired comparison at this n detects "
        f"with power 0.8 (exact McNemar, alpha 0.05, {MDE_DISCORDANCE:.0%} of questions "
        f"discordant); {_e(INTERVAL_METHODS)}.</p>",
        f'<div class="scroll"><table class="dash"><thead><tr><th>number</th>{head}'
        "<th class=num>MDE</th><th>guards against / source</th></tr></thead><tbody>",
    ]
    for i, row in enumerate(runs[0].dashboard):
        cells = "".join(_dash_cell(r.name, r.dashboard[i]) for r in runs)
        mde = mde_text([r.dashboard[i] for r in runs])
        out.append(
            f"<tr><th>{_e(audit.dashboard_label(i))}</th>{cells}<td class=num>{_e(mde)}</td>"
            f'<td class="note">{_code_spans(_e(row.note))}<br><code>{_e(row.source)}</code>'
            "</td></tr>"
        )
    out.append("</tbody></table></div>")
    return "\n".join(out)


def _funnel(run: RunAudit) -> str:
    f = run.funnel
    pct = round(f.confidence * 100)
    extra = run.answered - f.stages[2].kept
    answered = (
        f"Answered: {run.answered}/{run.n_answerable} answerable questions got an answer (the run "
        f"summary's <em>answered</em>); funnel stage 3 keeps {f.stages[2].kept}: answered "
        "<em>with the evidence in the context</em>"
        + (f" ({extra} answered without it)." if extra > 0 else ".")
    )
    identity = " x ".join(fmt(x) for x in f.factors)
    title = f"share of questions still in, {pct}% intervals"
    return "\n".join(
        [
            f"<h3>{_e(run.name)} (k={f.k}, n={f.n} answerable questions)</h3>",
            f'<div class="chart">{funnel_svg(f, f"{run.name}: {title}")}'
            f"{funnel_svg(f, title, narrow=True)}</div>",
            _report_table(funnel_table(run)),
            (
                f"<p>P(correct) = {identity} = {fmt(f.p_correct)}; end-to-end correct "
                f"{fmt(f.correct_end_to_end)}; the gap between hit rate@{f.k} and correctness "
                f"<strong>{fmt(f.gap, '+.3f')}</strong>"
                + ("" if f.gap_ci is None else f" [{f.gap_ci[0]:+.3f}, {f.gap_ci[1]:+.3f}]")
                + f". {_e(interval_note(f)[0].upper() + interval_note(f)[1:])}.</p>"
                if f.undefined_reason is None
                else f"<p>P(correct) = <strong>undefined</strong>: {_e(f.undefined_reason)}.</p>"
            ),
            f'<p class="note">{answered}</p>',
        ]
        + ([f'<p class="note">{_e(run.errors)}</p>'] if run.errors else [])
    )


def _question(q: QuestionView, open_: bool = False) -> str:
    chunks = []
    for c in q.chunks:
        tags = []
        classes = ["chunk"]
        if c.gold_doc:
            tags.append('<span class="tag">gold document</span>')
            classes.append("gold")
        if c.answer_chunk:
            tags.append('<span class="tag">answer chunk</span>')
            classes.append("answer")
        body = (
            f'<div class="{" ".join(classes)}">{highlight(c.text, q.keywords)}</div>'
            if c.text is not None
            else f'<div class="{" ".join(classes)}"><em>chunk text not available (pass '
            "--corpus DIR)</em></div>"
        )
        chunks.append(
            f"<li><code>{_e(c.doc_id)}</code> <code>{_e(c.chunk_id)}</code>{''.join(tags)}"
            f"{body}</li>"
        )
    judges = _table(("judge", "verdict / reason"), ((_e(k), _e(v)) for k, v in q.judges))
    attrs = ' data-qid="' + _e(q.qid) + '"' + (" open" if open_ else "")
    return (
        f"<details class=question{attrs}><summary><span class=stage>{_e(q.stage)}</span> "
        f"<code>{_e(q.qid)}</code> {_e(q.question)}</summary><dl>"
        f"<dt>question</dt><dd>{_e(q.question)}</dd>"
        f"<dt>reference answer</dt><dd>{highlight(q.reference_answer, q.keywords)}</dd>"
        f"<dt>model answer</dt><dd>{highlight(q.answer, q.keywords) or '<em>(empty)</em>'}</dd>"
        f"<dt>stage died</dt><dd>{_e(q.stage)}</dd>"
        f"<dt>evidence keywords</dt><dd>{_e(', '.join(q.keywords)) or '-'}</dd></dl>"
        f"<p><strong>retrieved chunks, rank order</strong> (highlighted: evidence keywords)</p>"
        f'<ol class="chunks">{"".join(chunks)}</ol>{judges}</details>'
    )


def _where(run: RunAudit) -> str:
    f = run.funnel
    rows = [
        (_e(key), str(len(f.died[key])), _e(", ".join(f.died[key])), _e(FIX_HINTS[key]))
        for key in STAGE_KEYS
    ]
    rows.append(("ok", str(len(f.ok_ids)), "", ""))
    rows.append(("correct by luck", str(len(f.lucky)), _e(", ".join(f.lucky)), ""))
    una = f.unanswerable
    rows.append(
        (
            "unanswerable, answered",
            str(len(una.answered_ids)),
            _e(", ".join(una.answered_ids)),
            "should have said it does not know",
        )
    )
    drill = "".join(_question(q) for q in run.failures)
    return (
        f"<h3>{_e(run.name)}</h3>"
        + _table(("stage", "n", "ids", "fix"), rows, "lr")
        + (f"<div class=drill>{drill}</div>" if drill else "<p>No question died.</p>")
    )


def _report_table(table: Table, rows: Iterable[tuple[str, ...]] | None = None) -> str:
    """A :class:`~ragaudit.reports.report.Table` of the shared Report as HTML (cells escaped);
    ``rows`` selects some of its rows."""
    chosen = table.rows if rows is None else rows
    return _table(
        [_e(c) for c in table.columns], ([_e(c) for c in row] for row in chosen), table.align
    )


def _bias(run: RunAudit, bias: BiasResult) -> str:
    """Label bias from the ``labels bias`` Report: summary, rows that differ, full table, plot."""
    k = bias.k
    blocks = [b for section in bias_report(bias).sections for b in section.blocks]
    tables = [b for b in blocks if isinstance(b, Table)]
    per_question, summary = tables[0], tables[1]
    differ = [row for row in per_question.rows if row[-1]]
    plot = next((b for b in blocks if isinstance(b, ScatterPlot)), None)
    rho = "undefined" if bias.spearman is None else f"{bias.spearman:+.3f}"
    return (
        f"<h3>{_e(run.name)} (k={k}, n={bias.n} questions with chunk labels)</h3>"
        + _report_table(summary)
        + f"<p>Questions where document and chunk labels disagree: {len(differ)} of {bias.n}"
        + f" (phantom hits, a document hit without the answer chunk: "
        f"{_e(', '.join(bias.phantom_hits)) or 'none'}).</p>"
        + _report_table(per_question, differ)
        + f"<details class=full-table><summary>Full table ({bias.n} questions)</summary>"
        + _report_table(per_question)
        + "</details>"
        + (
            f"<figure>{scatter_svg(plot)}<figcaption class=note>Spearman rho (candidate chunks "
            f"vs recall inflation): {rho}</figcaption></figure>"
            if plot is not None
            else ""
        )
    )


def _verdict_class(verdict: str) -> str:
    return {"SIGNIFICANT": "sig", "borderline": "border"}.get(verdict, "none")


def _comparison(audit: Audit, pair: PairView) -> str:
    c = pair.comparison
    a, b = audit.runs[pair.a].name, audit.runs[pair.b].name
    table = comparison_table(pair, short_methods=False)
    rows = [
        (
            *(_e(cell) for cell in row[:-1]),
            f'<span class="{_verdict_class(row[-1])}">{_e(row[-1])}</span>',
        )
        for row in table.rows
    ]
    side = []
    for qa, qb in pair.discordant:
        side.append(
            f'<details class=discordant data-qid="{_e(qa.qid)}"><summary><code>{_e(qa.qid)}'
            f"</code> {_e(qa.question)}</summary><p>reference: {_e(qa.reference_answer)}</p>"
            f'<div class="pair"><div><h4>{_e(a)}: {_e(qa.stage)}</h4><p>'
            f"{highlight(qa.answer, qa.keywords)}</p></div><div><h4>{_e(b)}: {_e(qb.stage)}"
            f"</h4><p>{highlight(qb.answer, qb.keywords)}</p></div></div></details>"
        )
    return (
        f"<h3>B = {_e(b)} vs A = {_e(a)} ({c.n_common} paired answerable questions)</h3>"
        + _table([_e(h) for h in table.columns], rows, table.align, cls="compare")
        + f'<p class="note">Seed {c.seed}. Intervals: Tango score for 0/1 metrics, '
        "betting (Waudby-Smith-Ramdas) for other scores in [0, 1], paired bootstrap "
        f"({c.n_resamples} resamples) otherwise; p: the exact sign-flip "
        f"distribution where affordable, else {c.n_permutations} random flips, "
        "(count+1)/(trials+1); each row names its methods, as <code>ragaudit compare</code> "
        "does. p (Holm): Holm-Bonferroni across every row of every pair shown; the summary at "
        "the top counts a metric as moved only when that p is below alpha and the interval "
        f"excludes 0. The verdict column is compare's, on the unadjusted p: "
        f"{_e(verdict_rule(c.alpha))}</p>"
        + f"<p><strong>Discordant questions on correctness: {len(pair.discordant)}</strong>"
        + (
            " (the rows that changed; read them before believing a summary)</p>"
            if side
            else " (none: every question got the same verdict in both runs)</p>"
        )
        + "".join(side)
    )


def _noise(audit: Audit) -> list[str]:
    """Per run, with ``--cluster-by`` / ``--human``: clustered intervals and the calibrated rate
    (the Report section of :func:`~ragaudit.reports.noise.noise_section`; wide tables and
    monospace blocks scroll inside their own box)."""
    out = []
    for run in audit.runs:
        section = noise_section(run.name, run.clustered, run.calibration)
        if section is None:
            continue
        out.append(f"<h2>{_e(section.title)}</h2>")
        for block in section.blocks:
            if block.only and "html" not in block.only:
                continue
            if isinstance(block, Table):
                out.append(_report_table(block))
            elif isinstance(block, Text) and block.monospace:
                text = _e("\n".join(block.lines))
                out.append(f'<div class="scroll"><pre>{text}</pre></div>')
            elif isinstance(block, Text):
                out += [f'<p class="note">{_e(line)}</p>' for line in block.lines]
    return out


def _config(audit: Audit) -> str:
    table = config_table(audit)
    rows = [(f"<code>{_e(row[0])}</code>", *(_e(v) for v in row[1:])) for row in table.rows]
    return _table([_e(h) for h in table.columns], rows, cls="config")


def render_audit_html(audit: Audit) -> str:
    """Render the audit page (see the module docstring for what it guarantees).

    Examples
    --------
    >>> from ragaudit.data.saved_run import SavedRun
    >>> from ragaudit.reports.html_data import build_audit
    >>> row = {"id": "<q1>", "answerable": True, "gold_docs": ["G"], "answer": "<script>",
    ...        "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...        "metrics": {"recall@k": 1.0, "answered": 1.0, "correct": 0.0},
    ...        "judges": {"abstained": False, "correct": False, "evidence_in_context": True}}
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": [row]})
    >>> page = render_audit_html(build_audit([run], n_resamples=50))
    >>> "<script" in page, "&lt;script&gt;" in page
    (False, True)
    """
    names = " vs ".join(r.name for r in audit.runs)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>ragaudit report: {_e(names)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>ragaudit report: {_e(names)}</h1>",
        f'<p class="meta">ragaudit {_e(audit.version)} · seed {audit.seed} · '
        f"{audit.n_resamples} resamples wherever an interval is bootstrapped · "
        f"{len(audit.runs)} run{'s' if len(audit.runs) > 1 else ''}</p>",
    ]
    if audit.summary:
        parts.append(
            '<div class="callout" id="verdict">'
            + "".join(f"<p>{_e(s)}</p>" for s in audit.summary)
            + "</div>"
        )
    parts.append(_dashboard(audit))
    parts.append("<h2 id=funnel>The funnel</h2>")
    parts += [_funnel(r) for r in audit.runs]
    parts.append("<h2 id=where>Where questions die</h2>")
    parts.append(
        '<p class="note">Each failing question opens to its question, reference answer, model '
        "answer, the retrieved chunks in rank order with the evidence highlighted, and the "
        "judges' verdicts.</p>"
    )
    parts += [_where(r) for r in audit.runs]
    with_bias = [r for r in audit.runs if r.bias is not None]
    if with_bias:
        parts.append("<h2 id=labels>Label bias: document vs chunk labels</h2>")
        parts += [_bias(r, r.bias) for r in with_bias if r.bias is not None]
    parts += _noise(audit)
    if audit.pairs:
        parts.append("<h2 id=compare>Paired comparison</h2>")
        parts += [_comparison(audit, p) for p in audit.pairs]
    parts.append("<h2 id=config>Configuration</h2>")
    parts.append(_config(audit))
    notes = [(r.name, n) for r in audit.runs for n in r.notes]
    notes += [("comparison", n) for n in audit.notes]
    if notes:
        parts.append("<h2 id=notes>Notes</h2><ul>")
        parts += [f"<li>{_e(name)}: {_e(note)}</li>" for name, note in notes]
        parts.append("</ul>")
    parts.append(
        f'<p class="meta">Generated by ragaudit {_e(audit.version)}, seed {audit.seed}.</p>'
    )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
