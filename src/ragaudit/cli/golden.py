"""``ragaudit golden check``: a golden set checked against its corpus before any run."""

from __future__ import annotations

import click

from ragaudit.cli._options import (
    chunking_options,
    corpus_option,
    emit,
    format_option,
    golden_map_option,
)

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]


@click.group("golden")
def command() -> None:
    """Golden sets: check one against its corpus."""


@command.command("check")
@click.option(
    "--golden", "golden_path", type=click.Path(dir_okay=False), required=True,
    help="Golden set (YAML, JSON, JSON Lines or CSV), as `run --golden` reads it.",
)  # fmt: skip
@corpus_option("The corpus directory the golden set's sources name.", required=True)
@chunking_options
@golden_map_option()
@format_option()
@click.pass_context
def check(
    ctx: click.Context,
    golden_path: str,
    corpus_dir: str,
    chunk_size: int,
    chunk_overlap: int,
    chunker: str,
    golden_columns: dict[str, str] | None,
    output_format: str,
) -> None:
    """Check a golden set against its corpus before running it.

    Lists unknown keys with the nearest accepted name (a misspelling such as `keyword` for
    `keywords` is a problem: `run` refuses it), sources that name no document of the corpus,
    answerable questions whose reference answer is found in no document (every number and 60%
    of its content words in one document), keywords no chunk contains (as whole words, with
    the chunking of --chunk-size/--chunk-overlap/--chunker), and duplicate and near-duplicate
    questions (Jaccard similarity of content words >= 0.8).

    Exit codes: 0 clean (notes allowed), 1 problems found, 2 unreadable input (a file that
    does not parse, a missing field: the same one-line error as `run`).
    """
    from ragaudit.pipeline.golden_check import check_corpus_golden
    from ragaudit.reports.golden import golden_check_report

    result = check_corpus_golden(
        golden_path, corpus_dir, chunk_size=chunk_size, chunk_overlap=chunk_overlap,
        chunker=chunker, columns=golden_columns,
    )  # fmt: skip
    emit(golden_check_report(result), output_format)
    if not result.ok:
        ctx.exit(1)
