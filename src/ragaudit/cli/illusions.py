"""``ragaudit illusions``: the seven cases where metrics tie and systems differ."""

from __future__ import annotations

import click

from ragaudit.cli._options import emit, format_option

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]


@click.command("illusions")
@format_option()
def command(output_format: str) -> None:
    """Print seven small cases where two systems tie on one metric and differ on another.

    Every number is computed live by the metrics engine on hand-made rankings; the output
    is the same, byte for byte, on every run.
    """
    from ragaudit.diagnose.illusions import compute_illusions
    from ragaudit.reports.metrics import illusions_report

    emit(illusions_report(compute_illusions()), output_format)
