"""A dependency-free SVG scatter plot for the HTML report.

Coordinates are printed with one decimal, so the same points give byte-identical SVG.
"""

from __future__ import annotations

import math
from html import escape

from ragaudit.reports.report import ScatterPlot

__all__ = ["nice_ticks", "scatter_svg"]

_WIDTH, _HEIGHT = 520, 340
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 20, 36, 52


def nice_ticks(low: float, high: float, target: int = 5) -> list[float]:
    """Round tick values covering ``[low, high]`` with a step of 1, 2 or 5 times a power of 10.

    Examples
    --------
    >>> nice_ticks(0, 1)
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    >>> nice_ticks(2, 9)
    [2.0, 4.0, 6.0, 8.0, 10.0]
    """
    if high <= low:
        high = low + 1.0
    raw = (high - low) / max(target, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = math.floor(low / step + 1e-9) * step
    ticks = []
    value = start
    while value < high + step * 0.999:
        ticks.append(round(value, 10) + 0.0)
        value += step
    return ticks


def _fmt(value: float) -> str:
    return f"{value:.1f}"


def _tick_label(value: float) -> str:
    return f"{value:g}"


def scatter_svg(plot: ScatterPlot) -> str:
    """Render a scatter plot as an inline ``<svg>`` element (with tooltips per point).

    Examples
    --------
    >>> svg = scatter_svg(ScatterPlot("t", "x", "y", ((1.0, 0.5), (3.0, 0.0)), ("q1", "q2")))
    >>> svg.startswith("<svg") and svg.count("<circle") == 2
    True
    """
    xs = [p[0] for p in plot.points] or [0.0]
    ys = [p[1] for p in plot.points] or [0.0]
    x_ticks = nice_ticks(min(xs), max(xs))
    y_ticks = nice_ticks(min(min(ys), 0.0), max(max(ys), 0.0) or 1.0)
    x0, x1 = x_ticks[0], x_ticks[-1]
    y0, y1 = y_ticks[0], y_ticks[-1]
    plot_w = _WIDTH - _LEFT - _RIGHT
    plot_h = _HEIGHT - _TOP - _BOTTOM

    def sx(x: float) -> float:
        return _LEFT + (x - x0) / (x1 - x0) * plot_w

    def sy(y: float) -> float:
        return _TOP + plot_h - (y - y0) / (y1 - y0) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" aria-label="{escape(plot.title)}">',
        f'<text x="{_WIDTH / 2:.1f}" y="20" text-anchor="middle" font-size="14">'
        f"{escape(plot.title)}</text>",
        f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#999"/>',
    ]
    for t in x_ticks:
        tx = _fmt(sx(t))
        parts.append(
            f'<line x1="{tx}" y1="{_TOP + plot_h}" x2="{tx}" y2="{_TOP + plot_h + 5}" '
            'stroke="#999"/>'
        )
        parts.append(
            f'<text x="{tx}" y="{_TOP + plot_h + 18}" text-anchor="middle" '
            f'font-size="11">{_tick_label(t)}</text>'
        )
    for t in y_ticks:
        ty = _fmt(sy(t))
        parts.append(
            f'<line x1="{_LEFT}" y1="{ty}" x2="{_LEFT + plot_w}" y2="{ty}" stroke="#eee"/>'
        )
        parts.append(
            f'<text x="{_LEFT - 6}" y="{ty}" text-anchor="end" '
            f'dominant-baseline="middle" font-size="11">{_tick_label(t)}</text>'
        )
    if y0 < 0.0 < y1:
        parts.append(
            f'<line x1="{_LEFT}" y1="{_fmt(sy(0.0))}" x2="{_LEFT + plot_w}" '
            f'y2="{_fmt(sy(0.0))}" stroke="#666"/>'
        )
    parts.append(
        f'<text x="{_LEFT + plot_w / 2:.1f}" y="{_HEIGHT - 12}" text-anchor="middle" '
        f'font-size="12">{escape(plot.x_label)}</text>'
    )
    mid_y = f"{_TOP + plot_h / 2:.1f}"
    parts.append(
        f'<text x="16" y="{mid_y}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 16 {mid_y})">{escape(plot.y_label)}</text>'
    )
    labels = plot.point_labels or ("",) * len(plot.points)
    for (x, y), label in zip(plot.points, labels, strict=True):
        tip = f"{label}: ({x:g}, {y:g})" if label else f"({x:g}, {y:g})"
        parts.append(
            f'<circle cx="{_fmt(sx(x))}" cy="{_fmt(sy(y))}" r="4" fill="#3465a4" '
            f'fill-opacity="0.6"><title>{escape(tip)}</title></circle>'
        )
    parts.append("</svg>")
    return "\n".join(parts)
