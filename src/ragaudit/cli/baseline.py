"""``ragaudit baseline update RUN --to FILE``: write the baseline a CI gate compares against."""

from __future__ import annotations

import click

from ragaudit.cli._options import (
    echo_warnings,
    emit,
    format_option,
    guards_output,
    judged_margin_option,
    judged_threshold_option,
)

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
@judged_threshold_option(
    "A saved run: judged@k (share of the top k that carries a label) of the new and the "
    "previous baseline is shown; questions below this share are named in a warning."
)
@judged_margin_option(
    "Warn when the new baseline's judged@k differs from the previous one's by more (a later "
    "comparison then favours the run more like the one the labels came from)."
)
@format_option()
@guards_output("target", "--to")
def update(
    run: str, target: str, judged_threshold: float, judged_margin: float, output_format: str
) -> None:
    """Make RUN the baseline: validate it, then copy it byte for byte, atomically, to --to.

    RUN is anything `compare` reads (a saved run, `evaluate --per-query --format json`
    output, JSON or JSONL per-question metrics); a file compare would reject is refused and
    the old baseline is left as it was.  The output shows each metric's mean before and now,
    and for saved runs the judged@k of the previous and the new baseline.
    """
    from ragaudit.diagnose.judged_beside import baseline_update
    from ragaudit.reports.judged import with_judged_runs
    from ragaudit.reports.stats import baseline_report

    done, judged = baseline_update(
        run, target, threshold=judged_threshold, margin=judged_margin
    )
    echo_warnings(() if judged is None else judged.warnings())
    report = baseline_report(target, run, done.new, done.old, done.unchanged)
    emit(with_judged_runs(report, judged), output_format)
