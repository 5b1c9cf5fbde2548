"""``ragaudit import``: check a saved run written by another pipeline and summarise it."""

from __future__ import annotations

import click

from ragaudit.data.records import load_saved_run, write_saved_run
from ragaudit.data.saved_run_summary import summarise_run
from ragaudit.pipeline.config import saved_run_path

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
def command(file: str, out_dir: str | None) -> None:
    """Validate FILE against the saved-run format and print what it holds.

    Problems are reported as FILE: LOCATION: expected ..., found ... (exit code 2).
    """
    saved = load_saved_run(file)
    k = saved.k
    summary = summarise_run(saved).to_dict()
    n_retrieved = [len(q.retrieved) for q in saved.questions]
    click.echo(f"{file}: valid ragaudit.run v1, name {saved.name!r}")
    click.echo(
        f"  {summary['n']} questions ({summary['n_answerable']} answerable, "
        f"{summary['n_unanswerable']} unanswerable, {summary['n_errors']} with errors)"
    )
    depth = f"{min(n_retrieved)}-{max(n_retrieved)}" if n_retrieved else "0"
    click.echo(f"  k={k}, retrieved per question: {depth}")
    if summary["metrics"]:
        click.echo("  mean over questions where defined (macro):")
        for name, value in summary["metrics"].items():
            click.echo(f"    {name:<24} {value:.3f}  (n={summary['n_scored'][name]})")
    if out_dir is not None:
        target = saved_run_path(out_dir, saved.name)
        write_saved_run(target, saved.replace(summary=summary))
        click.echo(f"saved: {target}")
