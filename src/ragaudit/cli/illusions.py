"""``ragaudit illusions``: the six cases where metrics tie and systems differ."""

from __future__ import annotations

import click

from ragaudit.cli._options import format_option, render_json
from ragaudit.diagnose.illusions import compute_illusions

__all__ = ["command"]


@click.command("illusions")
@format_option("table", "json", "markdown")
def command(output_format: str) -> None:
    """Print six small cases where two systems tie on one metric and differ on another.

    Every number is computed live by the metrics engine on hand-made rankings; the output
    is the same, byte for byte, on every run.
    """
    report = compute_illusions()
    if output_format == "json":
        click.echo(render_json(report.to_dict()), nl=False)
    elif output_format == "markdown":
        click.echo(report.to_markdown(), nl=False)
    else:
        click.echo(report.to_text(), nl=False)
