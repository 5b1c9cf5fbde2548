"""``ragaudit judges``: commands that measure the judges themselves."""

from __future__ import annotations

import click

from ragaudit.cli.judges_audit import command as audit

__all__ = ["command"]


@click.group("judges")
def command() -> None:
    """Judges: audit their biases on a run's own answers."""


command.add_command(audit)
