"""A :class:`~ragaudit.reports.report.Report` as one self-contained HTML page.

Inline CSS and inline SVG only: no script, no external resource, no link built from data, and
a Content-Security-Policy that forbids scripts anyway.  A drill-down
(:class:`~ragaudit.reports.report.Details`) is a ``<details>`` element, so the page works from
``file://`` without JavaScript.  Every string passes through :func:`html.escape` (quotes
included); the one exception is a :class:`~ragaudit.reports.report.Figure`'s SVG, escaped by
its producer.  The report's ``theme`` picks the style sheet: a plain page, or the audit page's
(wide tables scroll inside their own box; a chart drawn twice shows its narrow form on a phone).
The output is a pure function of the report: byte-identical for equal input.
"""

from __future__ import annotations

import re
from html import escape

from ragaudit.reports.render_text import report_sections
from ragaudit.reports.report import (
    Block,
    Cell,
    Details,
    Figure,
    Inline,
    Items,
    KeyValues,
    Report,
    ScatterPlot,
    Section,
    Table,
    Text,
    plain,
    shown,
)
from ragaudit.reports.svg import scatter_svg

__all__ = ["html_inline", "render_html", "render_html_fragment", "render_section_html"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_PLAIN_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;"
    "color:#222}table{border-collapse:collapse;margin:.5rem 0}th,td{padding:.2rem .6rem;"
    "border-bottom:1px solid #ddd}th{text-align:left}td.r,th.r{text-align:right;"
    "font-variant-numeric:tabular-nums}pre{background:#f6f6f6;padding:.6rem}"
    ".scroll{overflow-x:auto}.note,.meta{color:#666}dl{display:grid;grid-template-columns:"
    "auto 1fr;gap:.2rem .8rem}dd{margin:0}"
)

_AUDIT_CSS = """
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
th{font-weight:600;background:#fafbfc}td.r,th.r{text-align:right;
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
ul.pair{display:grid;grid-template-columns:1fr 1fr;gap:.8rem;list-style:none;padding:0}
.pair>li{min-width:0}.pair>li>div{margin-top:.3rem;overflow-wrap:anywhere}
code{font-size:.85em;overflow-wrap:anywhere}
svg{max-width:100%;height:auto}figure{margin:.6rem 0}
.scroll{overflow-x:auto;max-width:100%}.scroll>table{margin-top:0}
.chart{overflow-x:auto}.chart svg{max-width:none}.chart svg.narrow{display:none}
.dash td.note{min-width:18rem}
table.compare td:first-child{white-space:nowrap}
table.config{table-layout:fixed;width:100%;min-width:36rem}
table.config th:first-child{width:12rem}table.config td{overflow-wrap:anywhere}
@media (max-width:40rem){body{font-size:14px;padding:1rem .7rem 3rem}h1{font-size:1.3rem}
.dash tbody th{min-width:8rem}dl{grid-template-columns:1fr;gap:0}dt{font-weight:600;
margin-top:.4rem}ul.pair{grid-template-columns:1fr}summary .stage{min-width:0;margin-right:.3rem}
table.config th:first-child{width:9rem}table:not(.config) td:first-child{white-space:nowrap}
.chart svg{display:none}
.chart svg.narrow{display:block;max-width:100%;height:auto}
.dash thead{display:none}.dash tr{display:flex;flex-wrap:wrap;border-bottom:1px solid var(--line)}
.dash tbody th,.dash td.note{flex:1 0 100%;min-width:0;border:0}
.dash td{flex:1 1 0;min-width:0;border:0;text-align:left;white-space:normal}
.dash td[data-run]::before{content:attr(data-run);display:block;font-size:.7rem;font-weight:400;
color:var(--muted)}
.dash td:nth-last-child(2)::before{content:"MDE";display:block;font-size:.7rem;color:var(--muted)}}
"""

_THEMES = {"": _PLAIN_CSS, "audit": _AUDIT_CSS}
_TAGS = {"code": "code", "strong": "strong", "em": "em", "mark": "mark"}
_NAME = re.compile(r"[A-Za-z][\w-]*")


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _cls(*names: str) -> str:
    """`` class="a b"`` of the non-empty names (names are the producer's, never data)."""
    joined = " ".join(n for n in names if n)
    return f' class="{_e(joined)}"' if joined else ""


def _attrs(pairs: tuple[tuple[str, str], ...]) -> str:
    """`` data-NAME="value"`` attributes; a name that is not a plain identifier is dropped."""
    return "".join(f' data-{k}="{_e(v)}"' for k, v in pairs if _NAME.fullmatch(k))


def html_inline(text: Inline) -> str:
    """Inline text as escaped HTML: code, strong, em and mark runs as their tags, ``br`` as
    ``<br>``, any other style as a ``<span>`` of that class.

    Examples
    --------
    >>> from ragaudit.reports.report import Span
    >>> html_inline((Span("2014", "mark"), Span(" <b>"), Span("ok", "sig")))
    '<mark>2014</mark> &lt;b&gt;<span class="sig">ok</span>'
    """
    if isinstance(text, str):
        return _e(text)
    out = []
    for span in text:
        if span.style == "br":
            out.append("<br>")
        elif span.style in _TAGS:
            tag = _TAGS[span.style]
            out.append(f"<{tag}>{_e(span.text)}</{tag}>")
        elif span.style:
            out.append(f"<span{_cls(span.style)}>{_e(span.text)}</span>")
        else:
            out.append(_e(span.text))
    return "".join(out)


def _cell(tag: str, cell: str | Cell, right: bool) -> str:
    if isinstance(cell, str):
        return f"<{tag}{_cls('r' if right else '')}>{_e(cell)}</{tag}>"
    sub = f'<span class="ci">{_e(cell.sub.strip())}</span>' if cell.sub.strip() else ""
    return (
        f"<{tag}{_cls(cell.cls, 'r' if right else '')}{_attrs(cell.attrs)}>"
        # a space before the interval: without the page's CSS (a notebook's _repr_html_) it
        # would run into the value ("1.000[0.753, 1.000]")
        f"{html_inline(cell.text)}{' ' if sub else ''}{sub}</{tag}>"
    )


def _table(block: Table) -> list[str]:
    right = [a == "r" for a in block.align]
    head = "".join(_cell("th", c, r) for c, r in zip(block.columns, right, strict=True))
    rows = [
        "<tr>"
        + "".join(
            _cell("th" if i == 0 and block.row_headers else "td", c, r)
            for i, (c, r) in enumerate(zip(row, right, strict=True))
        )
        + "</tr>"
        for row in block.rows
    ]
    return [
        f'<div class="scroll"><table{_cls(block.cls)}>',
        f"<thead><tr>{head}</tr></thead><tbody>",
        *rows,
        "</tbody></table></div>",
    ]


def _text(block: Text) -> list[str]:
    if block.monospace:
        return [
            '<div class="scroll"><pre>'
            + _e("\n".join(plain(x) for x in block.lines))
            + "</pre></div>"
        ]
    if block.style == "list":
        return ["<ul>", *(f"<li>{html_inline(line)}</li>" for line in block.lines), "</ul>"]
    if block.style == "callout":
        inner = "".join(f"<p>{html_inline(line)}</p>" for line in block.lines)
        return [f'<div class="callout">{inner}</div>']
    cls = _cls(block.style)
    return [f"<p{cls}>{html_inline(line)}</p>" for line in block.lines]


def _items(block: Items) -> list[str]:
    tag = "ol" if block.ordered else "ul"
    out = [f"<{tag}{_cls(block.cls)}>"]
    for i, (head, body) in enumerate(block.items):
        box = ""
        if body:
            cls = block.body_cls[i] if i < len(block.body_cls) else ""
            box = f"<div{_cls(cls)}>{html_inline(body)}</div>"
        out.append(f"<li>{html_inline(head)}{box}</li>")
    out.append(f"</{tag}>")
    return out


def _html_block(block: Block) -> list[str]:
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, KeyValues):
        pairs = "".join(f"<dt>{_e(k)}</dt><dd>{html_inline(v)}</dd>" for k, v in block.pairs)
        return [f"<dl>{pairs}</dl>"]
    if isinstance(block, Text):
        return _text(block)
    if isinstance(block, Items):
        return _items(block)
    if isinstance(block, Figure | ScatterPlot):
        svg = block.svg if isinstance(block, Figure) else (scatter_svg(block),)
        caption = f'<figcaption class="note">{_e(block.caption)}</figcaption>'
        return [
            f"<figure{_cls(block.cls if isinstance(block, Figure) else '')}>",
            *svg,
            *([caption] if block.caption else []),
            "</figure>",
        ]
    if isinstance(block, Details):
        inner = [line for b in shown(block.blocks, "html") for line in _html_block(b)]
        return [
            f"<details{_cls(block.cls)}{_attrs(block.attrs)}>"
            f"<summary>{html_inline(block.summary)}</summary>",
            *inner,
            "</details>",
        ]
    raise TypeError(f"not a block: {type(block).__name__}")


def render_section_html(section: Section) -> list[str]:
    """HTML lines of one section (``<h2>`` title, or ``<h3>`` at level 3, and its blocks).

    >>> render_section_html(Section("S", (Text(("a<b",)),)))
    ['<h2>S</h2>', '<p>a&lt;b</p>']
    """
    level = min(max(section.level, 2), 6)
    anchor = f" id={section.anchor}" if _NAME.fullmatch(section.anchor) else ""
    out = [f"<h{level}{anchor}>{_e(section.title)}</h{level}>"] if section.title else []
    for block in shown(section.blocks, "html"):
        out.extend(_html_block(block))
    return out


def render_html(report: Report) -> str:
    """A standalone HTML page (inline CSS, inline SVG, no scripts, a CSP that forbids them).

    Examples
    --------
    >>> page = render_html(Report("T<1>", (Section("S", (Text(("x",)),)),)))
    >>> "<title>T&lt;1&gt;</title>" in page and "<p>x</p>" in page
    True
    """
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(report.title)}</title>",
        f"<style>{_THEMES.get(report.theme, _PLAIN_CSS)}</style></head>",
        "<body>",
        f"<h1>{_e(report.title)}</h1>",
    ]
    for section in report_sections(report, "html"):
        out.extend(render_section_html(section))
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def render_html_fragment(report: Report) -> str:
    """The page's body as a fragment for a notebook cell: a ``<div>``, no ``<html>``, no
    style sheet (the page's rules for ``body`` and ``table`` would restyle the notebook).

    Examples
    --------
    >>> print(render_html_fragment(Report("T", (Section("S", (Text(("a<b",)),)),))), end="")
    <div class="ragaudit">
    <h3>T</h3>
    <h2>S</h2>
    <p>a&lt;b</p>
    </div>
    """
    out = ['<div class="ragaudit">']
    if report.title:
        out.append(f"<h3>{_e(report.title)}</h3>")
    for section in report_sections(report, "html"):
        out.extend(render_section_html(section))
    out.append("</div>")
    return "\n".join(out) + "\n"
