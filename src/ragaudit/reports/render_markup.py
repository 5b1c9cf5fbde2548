"""Markdown and LaTeX of a :class:`~ragaudit.reports.report.Report`.

* :func:`render_markdown`: GitHub-flavoured Markdown (a pull-request comment).  Every string
  is escaped (:func:`~ragaudit.reports._escape.md_inline`); a drill-down
  (:class:`~ragaudit.reports.report.Details`) is a ``<details>`` element whose body is the
  nested blocks as terminal text in an HTML-escaped ``<pre>``.  Drill-downs marked
  ``droppable`` are kept in order while the comment stays under ``limit`` characters
  (:data:`MARKDOWN_LIMIT`; GitHub's comment limit is 65,536) and counted, never cut mid-way.
* :func:`render_latex`: a LaTeX fragment (booktabs tables; a figure becomes a comment and its
  text alternative and caption).
"""

from __future__ import annotations

import re
from html import escape

from ragaudit.reports._escape import latex, md_fence, md_inline, visible
from ragaudit.reports.render_text import block_text, report_sections
from ragaudit.reports.report import (
    Block,
    Details,
    Figure,
    Inline,
    Items,
    KeyValues,
    Report,
    ScatterPlot,
    Table,
    Text,
    plain,
    shown,
)

__all__ = ["MARKDOWN_LIMIT", "render_latex", "render_markdown"]

#: Characters a Markdown report stays under when it has droppable drill-downs.
MARKDOWN_LIMIT = 65_000

_SUMMARY_CHARS = 160
_PLAIN_CODE = re.compile(r"[\w .,:;@/=+#()\[\]-]*")


def _md_span_text(text: str, style: str, line_start: bool) -> str:
    if style == "br":
        return " "
    if style == "code" and text and _PLAIN_CODE.fullmatch(text):
        return f"`{text}`"
    out = md_inline(text, line_start=line_start)
    if style == "strong" and out.strip():
        return f"**{out}**"
    if style == "em" and out.strip():
        return f"*{out}*"
    return out


def md_text(text: Inline, *, line_start: bool = False) -> str:
    """Inline text as escaped Markdown on one line (code, bold and italic runs kept).

    Examples
    --------
    >>> from ragaudit.reports.report import Span
    >>> md_text((Span("q|1", "code"), Span(" <b>"), Span("ok", "strong")))
    'q\\\\|1 \\\\<b>**ok**'
    """
    if isinstance(text, str):
        return md_inline(text, line_start=line_start)
    return "".join(
        _md_span_text(s.text, s.style, line_start and i == 0) for i, s in enumerate(text)
    )


def _md_cell(cell: object) -> str:
    text = " ".join(str(cell).split())
    return md_inline(text) if text else " "


def _html_text(text: str) -> str:
    """Escape for raw HTML inside Markdown (``<details>``/``<pre>``): entities for ``<>&`` and
    for the brackets of a would-be link."""
    return escape(text, quote=False).replace("[", "&#91;").replace("]", "&#93;")


def _md_details(block: Details) -> str:
    summary = " ".join(plain(block.summary).split())[:_SUMMARY_CHARS]
    lines: list[str] = []
    for i, inner in enumerate(shown(block.blocks, "markdown")):
        if i:
            lines.append("")
        lines += block_text(inner, "", "markdown")
    return (
        f"<details><summary>{_html_text(summary)}</summary>\n"
        f"<pre>{_html_text(chr(10).join(lines))}</pre>\n</details>"
    )


def _md_block(block: Block) -> list[str]:
    if isinstance(block, Table):
        return [
            "| " + " | ".join(_md_cell(c) for c in block.columns) + " |",
            "| " + " | ".join(":---" if a == "l" else "---:" for a in block.align) + " |",
            *("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.text_rows),
        ]
    if isinstance(block, KeyValues):
        return [
            "  \n".join(f"{md_inline(k, line_start=True)}: {md_text(v)}" for k, v in block.pairs)
        ]
    if isinstance(block, Text):
        if block.monospace:
            lines = [visible(plain(line)) for line in block.lines]
            fence = md_fence(lines)
            return [fence, *lines, fence]
        if block.style == "callout":
            return ["\n\n".join(f"> {md_text(line)}" for line in block.lines)]
        if block.style == "list":
            return ["\n".join(f"- {md_text(line)}" for line in block.lines)]
        return ["  \n".join(md_text(line, line_start=True) for line in block.lines)]
    if isinstance(block, Items):
        out = []
        for i, (head, body) in enumerate(block.items):
            mark = f"{i + 1}." if block.ordered else "-"
            out.append(f"{mark} {md_text(head)}")
            if plain(body):
                out.append(" " * (len(mark) + 1) + md_text(" ".join(plain(body).split())))
        return ["\n".join(out)]
    if isinstance(block, Figure | ScatterPlot):
        caption = block.text_lines
        return ["  \n".join(md_inline(x, line_start=True) for x in caption)] if caption else []
    if isinstance(block, Details):
        return [_md_details(block)]
    return []


def _fit(pieces: list[str | list[str]], limit: int) -> str:
    """Join; a list is a run of droppable drill-downs, kept in order while they fit."""
    fixed = [p for p in pieces if isinstance(p, str)]
    budget = limit - len("\n\n".join(fixed)) - 200
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(piece)
            continue
        kept = []
        for block in piece:
            if len(block) + 1 <= budget:
                kept.append(block)
                budget -= len(block) + 1
        if len(kept) < len(piece):
            kept.append(
                f"{len(piece) - len(kept)} more drill-down(s) in the HTML report (size limit)"
            )
        out.append("\n".join(kept))
    return "\n\n".join(out) + "\n"


def render_markdown(report: Report, limit: int = MARKDOWN_LIMIT) -> str:
    """GitHub-flavoured Markdown: ``#`` title, ``##`` sections, pipe tables, code blocks.

    Every string is escaped, so ids and names cannot add HTML, headings, links or cells.
    Droppable drill-downs that would take the text over ``limit`` characters are left out
    and counted.

    Examples
    --------
    >>> from ragaudit.reports.report import Section
    >>> r = Report("T", (Section("S", (Table(("id", "n"), (("a|b", "1"),)),)),))
    >>> print(render_markdown(r), end="")
    # T
    <BLANKLINE>
    ## S
    <BLANKLINE>
    | id | n |
    | :--- | ---: |
    | a\\|b | 1 |
    """
    pieces: list[str | list[str]] = [f"# {md_inline(report.title)}"] if report.title else []
    for section in report_sections(report, "markdown"):
        if section.title:
            pieces.append("#" * max(2, section.level) + f" {md_inline(section.title)}")
        for block in shown(section.blocks, "markdown"):
            if isinstance(block, Details) and block.droppable:
                if pieces and isinstance(pieces[-1], list):
                    pieces[-1].append(_md_details(block))
                else:
                    pieces.append([_md_details(block)])
                continue
            lines = _md_block(block)
            if lines:
                pieces.append("\n".join(lines))
    return _fit(pieces, limit)


def _latex_text(text: Inline) -> str:
    return latex(plain(text))


def _latex_block(block: Block) -> list[str]:
    if isinstance(block, Table):
        return [
            r"\begin{tabular}{" + block.align + "}",
            r"\toprule",
            " & ".join(latex(c) for c in block.columns) + r" \\",
            r"\midrule",
            *(" & ".join(latex(c) for c in row) + r" \\" for row in block.text_rows),
            r"\bottomrule",
            r"\end{tabular}",
        ]
    if isinstance(block, KeyValues):
        return [" \\\\\n".join(f"{latex(k)}: {_latex_text(v)}" for k, v in block.pairs)]
    if isinstance(block, Text):
        if block.monospace:
            return [
                r"\begin{verbatim}",
                *(visible(plain(line)) for line in block.lines),
                r"\end{verbatim}",
            ]
        if block.style == "list":
            return [r"\begin{itemize}", *(r"\item " + _latex_text(x) for x in block.lines),
                    r"\end{itemize}"]  # fmt: skip
        return [" \\\\\n".join(_latex_text(line) for line in block.lines)]
    if isinstance(block, Items):
        env = "enumerate" if block.ordered else "itemize"
        items = [
            r"\item " + _latex_text(head) + (r" \\ " + _latex_text(body) if plain(body) else "")
            for head, body in block.items
        ]
        return [r"\begin{" + env + "}", *items, r"\end{" + env + "}"]
    if isinstance(block, Figure | ScatterPlot):
        lines = block.text_lines
        return [
            "% figure omitted (HTML only)",
            *([" \\\\\n".join(latex(line) for line in lines)] if lines else []),
        ]
    if isinstance(block, Details):
        out = [r"\paragraph{" + _latex_text(block.summary) + "}"]
        for inner in shown(block.blocks, "latex"):
            out += ["", *_latex_block(inner)]
        return out
    return []


def render_latex(report: Report) -> str:
    """A LaTeX fragment: booktabs tables, escaped paragraphs (needs ``booktabs``, ``amssymb``).

    Examples
    --------
    >>> from ragaudit.reports.report import Section
    >>> r = Report("", (Section("", (Table(("run", "mrr"), (("a_1", "0.5 ▲"),)),)),))
    >>> print(render_latex(r), end="")
    % ragaudit output; needs \\usepackage{booktabs,amssymb}
    <BLANKLINE>
    \\begin{tabular}{lr}
    \\toprule
    run & mrr \\\\
    \\midrule
    a\\_1 & 0.5 \\ensuremath{\\blacktriangle} \\\\
    \\bottomrule
    \\end{tabular}
    """
    out = [r"% ragaudit output; needs \usepackage{booktabs,amssymb}"]
    if report.title:
        out += ["", r"\section*{" + latex(report.title) + "}"]
    for section in report_sections(report, "latex"):
        if section.title:
            sub = "subsubsection" if section.level > 2 else "subsection"
            out += ["", "\\" + sub + "*{" + latex(section.title) + "}"]
        for block in shown(section.blocks, "latex"):
            out += ["", *_latex_block(block)]
    return "\n".join(out) + "\n"
