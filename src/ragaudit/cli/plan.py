"""``ragaudit plan``: how many questions a golden set needs (exact McNemar power)."""

from __future__ import annotations

from typing import Any

import click

from ragaudit.cli._options import format_option, render_json
from ragaudit.exceptions import InputError
from ragaudit.stats.power import PlanningRow, planning_table

__all__ = ["command", "render_plan"]


def _numbers(text: str, name: str, kind: type) -> list[Any]:
    values: list[Any] = []
    for part in text.split(","):
        part = part.strip()
        try:
            values.append(kind(part))
        except ValueError:
            raise InputError(
                f"--{name}: expected comma-separated {kind.__name__}s, found {part!r}"
            ) from None
    return values


def render_plan(rows: list[PlanningRow], power: float, alpha: float, output_format: str) -> str:
    """Render planning rows as the chapter's table (n down, disagreement across) or JSON."""
    if output_format == "json":
        return render_json([{"n": r.n, "disagree": r.disagree, "mde": r.mde} for r in rows])
    ns = list(dict.fromkeys(r.n for r in rows))
    rates = list(dict.fromkeys(r.disagree for r in rows))
    cell = {(r.n, r.disagree): "-" if r.mde is None else f"{r.mde:.2f}" for r in rows}
    lines = [
        f"minimum detectable effect on a binary metric ({100 * power:g}% power, alpha "
        f"{alpha:g}, McNemar exact test, exact power - no simulation)",
        "by how often the two systems disagree at all; '-' = not detectable",
        f"{'n questions':>12}" + "".join(f"{f'disagree {100 * d:g}%':>15}" for d in rates),
    ]
    for n in ns:
        lines.append(f"{n:>12}" + "".join(f"{cell[(n, d)]:>15}" for d in rates))
    return "\n".join(lines) + "\n"


@click.command("plan")
@click.option(
    "--n",
    "ns",
    default="20,42,100,300,1000",
    show_default=True,
    help="Golden-set sizes, comma-separated.",
)
@click.option(
    "--disagree",
    default="0.1,0.2,0.3",
    show_default=True,
    help="Discordance rates (share of questions where the systems differ).",
)
@click.option("--power", type=float, default=0.8, show_default=True, help="Target power.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level.")
@format_option("table", "json")
def command(ns: str, disagree: str, power: float, alpha: float, output_format: str) -> None:
    """Minimum detectable effect for each golden-set size and disagreement rate.

    Exact power of McNemar's exact two-sided test, minimum effect searched on a 0.01 grid up
    to the disagreement rate (an effect cannot exceed it).
    """
    sizes = _numbers(ns, "n", int)
    rates = _numbers(disagree, "disagree", float)
    rows = planning_table(sizes, rates, power=power, alpha=alpha)
    click.echo(render_plan(rows, power, alpha, output_format), nl=False)
