"""Inline SVG charts of the audit page: the funnel with per-stage intervals and the gap.

Pure functions of their input; coordinates are printed with one decimal so the same numbers
give byte-identical SVG.  Every text that comes from data is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from ragaudit.diagnose.funnel import FunnelResult

__all__ = ["funnel_svg"]


@dataclass(frozen=True)
class _Layout:
    """Geometry of one form of the chart: labels left of the bars (wide) or above them."""

    width: int
    bar_x: int
    bar_w: int
    row: int
    bar_y: int
    bar_h: int
    text_y: int
    label_size: int
    value_size: int
    narrow: bool

    def x(self, rate: float) -> float:
        return self.bar_x + max(0.0, min(1.0, rate)) * self.bar_w


_WIDE = _Layout(880, 240, 400, 34, 5, 22, 21, 14, 13, narrow=False)
_NARROW = _Layout(360, 8, 344, 44, 21, 16, 15, 13, 12, narrow=True)
_TOP = 62


def funnel_svg(result: FunnelResult, title: str = "", *, narrow: bool = False) -> str:
    """The funnel as horizontal bars (share of the n answerable questions still in).

    Each stage bar carries its bootstrap interval as a whisker; two dashed lines mark hit
    rate@k and end-to-end correctness, and the bracket between them is the gap, labelled with
    its interval.  ``narrow`` draws the same chart 360 units wide with each stage's label above
    its bar, for a phone screen (the page shows one form or the other by screen width).

    Examples
    --------
    >>> from ragaudit.diagnose.funnel import compute_funnel
    >>> run = {"config": {"k": 1}, "rows": [{"id": "q1", "answerable": True,
    ...        "gold_docs": ["G"], "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...        "judges": {"abstained": False, "correct": True, "evidence_in_context": True}}]}
    >>> svg = funnel_svg(compute_funnel(run, n_resamples=10), "t<1>")
    >>> svg.startswith("<svg") and svg.count("<rect") == 5 and "t&lt;1&gt;" in svg
    True
    >>> 'width="360"' in funnel_svg(compute_funnel(run, n_resamples=10), narrow=True)
    True
    """
    g = _NARROW if narrow else _WIDE
    rows: list[tuple[str, float | None, float | None, float | None, int]] = [
        ("0 asked", 1.0 if result.n else None, None, None, result.n)
    ]
    for j, stage in enumerate(result.stages):
        rows.append((f"{j + 1} {stage.name}", stage.rate, stage.ci_low, stage.ci_high, stage.kept))
    bottom = _TOP + g.row * len(rows)
    height = bottom + 76
    label = title or f"funnel, k={result.k}, n={result.n}"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="funnel{" narrow" * narrow}" '
        f'width="{g.width}" height="{height}" viewBox="0 0 {g.width} {height}" role="img" '
        f'aria-label="{escape(label)}">',
        f'<text x="4" y="18" font-size="{g.label_size}" font-weight="600">{escape(label)}</text>',
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = f"{g.x(tick):.1f}"
        parts.append(
            f'<line x1="{x}" y1="{_TOP - 4}" x2="{x}" y2="{bottom}" stroke="#e3e3e3"/>'
            f'<text x="{x}" y="{bottom + 15}" font-size="12" text-anchor="middle" '
            f'fill="#666">{tick:g}</text>'
        )
    for i, (name, rate, low, high, kept) in enumerate(rows):
        y = _TOP + i * g.row
        colour = "#c9d7ea" if i == 0 else ("#3465a4" if i < 4 else "#2e7d32")
        label_at = 'x="4"' if g.narrow else f'x="{g.bar_x - 8}" text-anchor="end"'
        parts.append(
            f'<text {label_at} y="{y + g.text_y:.1f}" font-size="{g.label_size}">'
            f"{escape(name)}</text>"
        )
        shown = "undefined" if rate is None else f"{rate:.3f}"
        parts.append(
            f'<rect x="{g.bar_x}" y="{y + g.bar_y}" width="{(rate or 0.0) * g.bar_w:.1f}" '
            f'height="{g.bar_h}" fill="{colour}" fill-opacity="0.85"><title>{escape(name)}: '
            f"{kept}/{result.n} = {shown}</title></rect>"
        )
        if low is not None and high is not None:
            mid = y + g.bar_y + g.bar_h / 2
            parts.append(
                f'<path d="M{g.x(low):.1f} {mid - 6:.1f}v12M{g.x(low):.1f} {mid:.1f}'
                f'H{g.x(high):.1f}M{g.x(high):.1f} {mid - 6:.1f}v12" stroke="#111" '
                'stroke-width="1.5" fill="none"/>'
            )
        ci = "" if low is None else f"  [{low:.3f}, {high:.3f}]"
        value_at = (
            f'x="{g.width - 4}" text-anchor="end"' if g.narrow else f'x="{g.bar_x + g.bar_w + 8}"'
        )
        parts.append(
            f'<text {value_at} y="{y + g.text_y:.1f}" font-size="{g.value_size}">'
            f"{kept}  {shown}{escape(ci)}</text>"
        )
    hit, e2e, gap = result.stage1_rate, result.correct_end_to_end, result.gap
    y = bottom + 30
    if hit is None or e2e is None or gap is None:
        parts.append(
            f'<text x="{4 if g.narrow else g.bar_x}" y="{y + 18}" font-size="12" '
            f'fill="#b00020">P(correct) undefined: {escape(result.undefined_reason or "")}</text>'
        )
        parts.append("</svg>")
        return "\n".join(parts)
    # one text line each above the bars; a label reads leftwards from its line when it would
    # run off the right edge
    for line, (value, name) in enumerate(
        ((hit, f"hit rate@{result.k} {hit:.3f}"), (e2e, f"correct {e2e:.3f}"))
    ):
        at, text_y = g.x(value), _TOP - 26 + 14 * line
        anchor, shift = ("start", 3) if at + 110 <= g.width else ("end", -3)
        parts.append(
            f'<line x1="{at:.1f}" y1="{text_y - 10}" x2="{at:.1f}" y2="{bottom}" '
            'stroke="#b00020" stroke-dasharray="4 3"/>'
            f'<text x="{at + shift:.1f}" y="{text_y}" font-size="12" fill="#b00020" '
            f'text-anchor="{anchor}">{escape(name)}</text>'
        )
    parts.append(
        f'<path d="M{g.x(e2e):.1f} {y - 8}V{y}H{g.x(hit):.1f}V{y - 8}" stroke="#b00020" '
        'stroke-width="2" fill="none"/>'
    )
    gap_ci = "" if result.gap_ci is None else f" [{result.gap_ci[0]:+.3f}, {result.gap_ci[1]:+.3f}]"
    # the bracket spans hit rate -> correct: the gap a hit rate (not recall) cannot see
    lead = "gap" if g.narrow else "the gap hit rate cannot see:"
    text_x = min(max(g.x(hit), 200.0), g.width - 4.0) if g.narrow else g.x(hit)
    parts.append(
        f'<text x="{text_x:.1f}" y="{y + 18}" font-size="13" fill="#b00020" '
        f'text-anchor="end">{lead} {gap:+.3f}{escape(gap_ci)}</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)
