"""``ragaudit plan``: how many questions a golden set needs (exact McNemar power)."""

from __future__ import annotations

from typing import Any

import click

from ragaudit.cli._options import emit, format_option
from ragaudit.exceptions import InputError
from ragaudit.reports.stats import plan_report
from ragaudit.stats.power import planning_table

__all__ = ["command"]


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
@format_option()
def command(ns: str, disagree: str, power: float, alpha: float, output_format: str) -> None:
    """Minimum detectable effect for each golden-set size and disagreement rate.

    Exact power of McNemar's exact two-sided test, minimum effect searched on a 0.01 grid up
    to the disagreement rate (an effect cannot exceed it).
    """
    sizes = _numbers(ns, "n", int)
    rates = _numbers(disagree, "disagree", float)
    rows = planning_table(sizes, rates, power=power, alpha=alpha)
    emit(plan_report(rows, power, alpha), output_format)
