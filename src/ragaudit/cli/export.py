"""``ragaudit export``: a saved run as a TREC run, a golden set as TREC qrels."""

from __future__ import annotations

import click

from ragaudit.cli._options import golden_map_option, out_file_option, write_output

# The readers and writers are imported inside the command (fast --help).

__all__ = ["command"]


@click.command(name="export")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option(
    "--to",
    "target",
    type=click.Choice(["trec-run", "trec-qrels"]),
    required=True,
    help="trec-run: SOURCE is a saved run; trec-qrels: SOURCE is a golden set (any layout).",
)
@click.option(
    "--unit",
    type=click.Choice(["chunk", "doc"]),
    default="chunk",
    show_default=True,
    help="trec-run: chunk ids as retrieved, or documents, each at the rank of its first chunk.",
)
@click.option(
    "--k",
    type=click.IntRange(min=1),
    default=None,
    help="trec-run: only the first K retrieved chunks of each question [default: all].",
)
@click.option("--tag", default=None, help="trec-run: run tag (last column) [default: run name].")
@golden_map_option()
@out_file_option("Write to this file (atomically) instead of stdout.")
def command(
    source: str,
    target: str,
    unit: str,
    k: int | None,
    tag: str | None,
    golden_columns: dict[str, str] | None,
    out_path: str | None,
) -> None:
    """Write SOURCE in a format trec_eval, ranx and ir_measures read.

    A saved run becomes TREC run lines `qid Q0 id rank score tag`, in the run's own rank
    order; scores are the run's (imported runs have none: then score = n - rank + 1, which
    keeps the order).  With --unit doc each document appears once, at the rank of its first
    chunk, scored n - rank + 1.  A golden set becomes TREC qrels `qid 0 doc_id 1`, one line
    per source document of each answerable question (unanswerable questions have none).
    """
    from ragaudit.data.formats import format_trec_qrels, format_trec_run
    from ragaudit.exceptions import InputError

    if target == "trec-qrels":
        from ragaudit.data.golden import load_golden

        for name, value in (("--k", k), ("--tag", tag)):
            if value is not None:
                raise InputError(f"{name}: only applies with --to trec-run")
        text = format_trec_qrels(load_golden(source, columns=golden_columns).qrels())
    else:
        if golden_columns:
            raise InputError("--map: only applies with --to trec-qrels (a golden set)")
        from ragaudit.data.records import load_saved_run

        saved = load_saved_run(source)
        run = saved.to_run(unit=unit, k=k)
        label = tag if tag is not None else "_".join(saved.name.split()) or "ragaudit"
        text = format_trec_run(run, tag=label)
    write_output(text, out_path)
