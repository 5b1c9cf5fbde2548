"""``ragaudit baseline update RUN --to FILE``: write the baseline a CI gate compares against."""

from __future__ import annotations

import click

from ragaudit.cli._options import emit, format_option, guards_output

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]

DEFAULT_BASELINE = "baseline.json"


@click.group(name="baseline")
def command() -> None:
    """Keep a baseline run in the repository for `compare --baseline` and assert_not_worse."""


@command.command(name="update")
@click.argument("run", type=click.Path(dir_okay=False))
@click.option(
    "--to",
    "target",
    default=DEFAULT_BASELINE,
    show_default=True,
    type=click.Path(dir_okay=False),
    help="The baseline file to write (commit it).",
)
@format_option()
@guards_output("target", "--to")
def update(run: str, target: str, output_format: str) -> None:
    """Make RUN the baseline: validate it, then copy it byte for byte, atomically, to --to.

    RUN is anything `compare` reads (a saved run, `evaluate --per-query --format json`
    output, JSON or JSONL per-question metrics); a file compare would reject is refused and
    the old baseline is left as it was.  The output shows each metric's mean before and now.
    """
    from ragaudit.data.per_question_files import update_baseline
    from ragaudit.reports.stats import baseline_report

    done = update_baseline(run, target)
    emit(baseline_report(target, run, done.new, done.old, done.unchanged), output_format)
