"""Inline SVG charts of the audit page: the funnel with per-stage intervals and the gap.

Pure functions of their input; coordinates are printed with one decimal so the same numbers
give byte-identical SVG.  Every text that comes from data is escaped.
"""

from __future__ import annotations

from html import escape

from ragaudit.diagnose.funnel import FunnelResult

__all__ = ["funnel_svg"]

_W = 860
_LABEL = 190
_BAR = 420
_ROW = 34
_TOP = 30


def _x(rate: float) -> float:
    return _LABEL + max(0.0, min(1.0, rate)) * _BAR


def funnel_svg(result: FunnelResult, title: str = "") -> str:
    """The funnel as horizontal bars (share of the n answerable questions still in).

    Each stage bar carries its bootstrap interval as a whisker; two dashed lines mark hit
    rate@k and end-to-end correctness, and the arrow between them is the gap, labelled with
    its interval.

    Examples
    --------
    >>> from ragaudit.diagnose.funnel import compute_funnel
    >>> run = {"config": {"k": 1}, "rows": [{"id": "q1", "answerable": True,
    ...        "gold_docs": ["G"], "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...        "judges": {"abstained": False, "correct": True, "evidence_in_context": True}}]}
    >>> svg = funnel_svg(compute_funnel(run, n_resamples=10), "t<1>")
    >>> svg.startswith("<svg") and svg.count("<rect") == 5 and "t&lt;1&gt;" in svg
    True
    """
    rows: list[tuple[str, float | None, float | None, float | None, int]] = [
        ("0 asked", 1.0 if result.n else None, None, None, result.n)
    ]
    for j, stage in enumerate(result.stages):
        rows.append((f"{j + 1} {stage.name}", stage.rate, stage.ci_low, stage.ci_high, stage.kept))
    height = _TOP + _ROW * len(rows) + 76
    label = title or f"funnel, k={result.k}, n={result.n}"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="funnel" width="{_W}" height="{height}" '
        f'viewBox="0 0 {_W} {height}" role="img" aria-label="{escape(label)}">',
        f'<text x="4" y="18" font-size="13" font-weight="600">{escape(label)}</text>',
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = f"{_x(tick):.1f}"
        bottom = _TOP + _ROW * len(rows)
        parts.append(
            f'<line x1="{x}" y1="{_TOP - 4}" x2="{x}" y2="{bottom}" stroke="#e3e3e3"/>'
            f'<text x="{x}" y="{bottom + 14}" font-size="10" text-anchor="middle" '
            f'fill="#666">{tick:g}</text>'
        )
    for i, (name, rate, low, high, kept) in enumerate(rows):
        y = _TOP + i * _ROW
        colour = "#c9d7ea" if i == 0 else ("#3465a4" if i < 4 else "#2e7d32")
        parts.append(
            f'<text x="{_LABEL - 8}" y="{y + 17:.1f}" font-size="12" text-anchor="end">'
            f"{escape(name)}</text>"
        )
        shown = "undefined" if rate is None else f"{rate:.3f}"
        parts.append(
            f'<rect x="{_LABEL}" y="{y + 5}" width="{(rate or 0.0) * _BAR:.1f}" '
            f'height="{_ROW - 12}" fill="{colour}" fill-opacity="0.85"><title>{escape(name)}: '
            f"{kept}/{result.n} = {shown}</title></rect>"
        )
        if low is not None and high is not None:
            mid = y + _ROW / 2 - 1
            parts.append(
                f'<path d="M{_x(low):.1f} {mid - 6:.1f}v12M{_x(low):.1f} {mid:.1f}'
                f'H{_x(high):.1f}M{_x(high):.1f} {mid - 6:.1f}v12" stroke="#111" '
                'stroke-width="1.5" fill="none"/>'
            )
        ci = "" if low is None else f"  [{low:.3f}, {high:.3f}]"
        parts.append(
            f'<text x="{_LABEL + _BAR + 8}" y="{y + 17:.1f}" font-size="11">'
            f"{kept}  {shown}{escape(ci)}</text>"
        )
    bottom = _TOP + _ROW * len(rows)
    hit, e2e, gap = result.stage1_rate, result.correct_end_to_end, result.gap
    y = bottom + 30
    if hit is None or e2e is None or gap is None:
        parts.append(
            f'<text x="{_LABEL}" y="{y + 18}" font-size="12" fill="#b00020">'
            f"P(correct) undefined: {escape(result.undefined_reason or '')}</text>"
        )
        parts.append("</svg>")
        return "\n".join(parts)
    for value in (hit, e2e):
        x = f"{_x(value):.1f}"
        parts.append(
            f'<line x1="{x}" y1="{_TOP}" x2="{x}" y2="{bottom}" stroke="#b00020" '
            'stroke-dasharray="4 3"/>'
        )
    parts.append(
        f'<path d="M{_x(e2e):.1f} {y - 8}V{y}H{_x(hit):.1f}V{y - 8}" stroke="#b00020" '
        'stroke-width="2" '
        'fill="none"/>'
    )
    gap_ci = "" if result.gap_ci is None else f" [{result.gap_ci[0]:+.3f}, {result.gap_ci[1]:+.3f}]"
    parts.append(
        f'<text x="{_x(hit):.1f}" y="{y + 18}" font-size="12" fill="#b00020" '
        f'text-anchor="end">the gap recall cannot see: {gap:+.3f}{escape(gap_ci)}'
        "</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)
