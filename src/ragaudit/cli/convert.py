"""``ragaudit convert``: a saved run from JSON to Parquet or back, losslessly."""

from __future__ import annotations

import click

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]


@click.command("convert")
@click.argument("source", type=click.Path(dir_okay=False))
@click.argument("target", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Replace TARGET when it exists (never SOURCE).")
def command(source: str, target: str, force: bool) -> None:
    """Write the saved run SOURCE to TARGET, as Parquet when TARGET ends in .parquet and as
    JSON otherwise (the format each path is read in is chosen by its extension too).  The
    run is checked as every command checks it; the converted file holds the same run.
    """
    from pathlib import Path

    from ragaudit._io import refuse_input_as_output
    from ragaudit.data.records import load_saved_run, write_saved_run
    from ragaudit.exceptions import InputError

    refuse_input_as_output(target, [source], option="TARGET")
    if Path(target).exists() and not force:
        raise InputError(f"{target}: exists; choose a new path (or pass --force to replace it)")
    run = load_saved_run(source)
    write_saved_run(target, run)
    click.echo(f"{source} -> {target}: {len(run.questions)} questions")
