"""``ragaudit import``: check a saved run written by another pipeline and summarise it."""

from __future__ import annotations

import click

from ragaudit.cli._options import emit, format_option

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]


@click.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Also copy the validated run to <out>/<name>.json (with a fresh summary).",
)
@format_option()
def command(file: str, out_dir: str | None, output_format: str) -> None:
    """Validate FILE against the saved-run format and print what it holds.

    Problems are reported as FILE: LOCATION: expected ..., found ... (exit code 2).
    """
    from ragaudit.data.records import load_saved_run, write_saved_run
    from ragaudit.data.saved_run_summary import summarise_run
    from ragaudit.pipeline.config import saved_run_path
    from ragaudit.reports.runs import import_report

    saved = load_saved_run(file)
    summary = summarise_run(saved).to_dict()
    target = None
    if out_dir is not None:
        target = saved_run_path(out_dir, saved.name)
        write_saved_run(target, saved.replace(summary=summary))
    emit(
        import_report(file, saved, summary, None if target is None else str(target)), output_format
    )
