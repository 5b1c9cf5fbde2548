"""Escaping for each output format, in one place: producers pass raw text, renderers escape.

Ids, run names, questions and answers come from users' files, so any of them may hold
``<script>``, ``"><img onerror=...>``, a newline followed by ``# heading`` or a code fence,
a pipe that would split a table cell, or a terminal escape sequence.  Each renderer passes
every string through the function for its format:

* :func:`visible` (terminal text, and inside Markdown code blocks): control characters
  become their backslash escapes (``\\n``, ``\\x1b``), so one value stays on one line and
  cannot move the cursor or recolour the terminal;
* :func:`md_inline` (Markdown text and table cells): :func:`visible`, then a backslash before
  every character that Markdown or its inline HTML would interpret;
* :func:`md_fence`: a code fence longer than any run of backticks in the block;
* :func:`latex` (LaTeX text and table cells): :func:`visible`, then every character TeX
  treats specially as its text command, and the significance markers as math symbols;
* HTML uses :func:`html.escape` with ``quote=True``.
"""

from __future__ import annotations

import re

__all__ = ["latex", "md_fence", "md_inline", "visible"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Backslash, code, emphasis, table cells, strikethrough: escaped wherever they are.
_MD_SPECIAL = re.compile(r"([\\`*|~])")
# Only where they mean something: `<` opening a tag, comment or autolink; `&` starting an
# entity; `_` at a word edge (intraword `_` is literal in GFM); `]` closing a link text or
# a reference definition.
_MD_CONTEXT = re.compile(
    r"(<(?=[A-Za-z/!?])|&(?=#?\w+;)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|\](?=[(\[:]))"
)
# Every character the two patterns above can escape (a cell without any needs neither).
_MD_ANY = re.compile(r"[\\`*|~<&_\]]")
# At the start of a line: headings, block quotes, list items, setext underlines.  An ordered
# list marker is escaped at its `.` or `)`: a backslash before a digit is shown as is.
_MD_LINE_START = re.compile(r"^(\d{1,9}(?=[.)])|)([#>+=.)-])")


def visible(text: str) -> str:
    r"""Control characters as backslash escapes; everything else unchanged.

    Examples
    --------
    >>> visible("q1\n# title\x1b[31m")
    'q1\\n# title\\x1b[31m'
    """
    if text.isprintable():  # no control or line-separator character (the usual cell): as is
        return text
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(0), repr(m.group(0))[1:-1]), text)


def md_inline(text: str, *, line_start: bool = False) -> str:
    r"""Text that Markdown shows literally, on one line.

    Parameters
    ----------
    text : str
    line_start : bool, default False
        The text begins a line of a paragraph: also escape a leading list or heading marker.

    Examples
    --------
    >>> md_inline('"><img src=x onerror=alert(1)> | k3_cs800 _x_ p <0.001')
    '">\\<img src=x onerror=alert(1)> \\| k3_cs800 \\_x\\_ p <0.001'
    >>> md_inline("[x](javascript:alert(1))")
    '[x\\](javascript:alert(1))'
    >>> md_inline("- item", line_start=True), md_inline("1. item", line_start=True)
    ('\\- item', '1\\. item')
    """
    out = visible(text)
    if _MD_ANY.search(out):  # most cells hold none of these: no substitution to run
        out = _MD_SPECIAL.sub(r"\\\1", out)
        out = _MD_CONTEXT.sub(r"\\\1", out)
    if line_start:
        out = _MD_LINE_START.sub(r"\1\\\2", out)
    return out


def md_fence(lines: tuple[str, ...] | list[str]) -> str:
    """A backtick fence longer than the longest backtick run inside ``lines`` (at least 3).

    Examples
    --------
    >>> md_fence(["plain"]), md_fence(["```python"])
    ('```', '````')
    """
    longest = max((len(run) for line in lines for run in re.findall("`+", line)), default=0)
    return "`" * max(3, longest + 1)


_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "\u25b2": r"\ensuremath{\blacktriangle}",
    "\u25bc": r"\ensuremath{\blacktriangledown}",
}
_LATEX_SPECIAL = re.compile("|".join(re.escape(c) for c in _LATEX))


def latex(text: str) -> str:
    r"""Text safe inside a LaTeX paragraph or tabular cell (markers need ``amssymb``).

    Examples
    --------
    >>> print(latex("recall@5 50% a_b ▲a,c"))
    recall@5 50\% a\_b \ensuremath{\blacktriangle}a,c
    """
    return _LATEX_SPECIAL.sub(lambda m: _LATEX[m.group(0)], visible(text))
