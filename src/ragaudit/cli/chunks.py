"""``ragaudit chunks``: the chunks of a corpus with their ids, so other pipelines can write
chunk-level runs."""

from __future__ import annotations

import click

from ragaudit.cli._options import TEXT_FORMATS, chunking_options, emit, format_option

# The corpus loader and the report are imported inside the command (fast --help).

__all__ = ["command"]


@click.command(name="chunks")
@click.option(
    "--corpus",
    type=click.Path(file_okay=False),
    required=True,
    help="Directory of .md/.txt documents (doc id = file stem).",
)
@chunking_options
@click.option(
    "--words",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="How many first words of each chunk to show.",
)
@format_option(*TEXT_FORMATS, "tsv")
def command(
    corpus: str, chunk_size: int, chunk_overlap: int, chunker: str, words: int, output_format: str
) -> None:
    """List the chunks of a corpus: chunk id, document id, index, offsets and first words.

    The ids are the ones `ragaudit run`, `labels build` and `import` use with the same
    --chunk-size, --chunk-overlap and --chunker, so another pipeline can emit a chunk-level
    TREC or JSONL run (`run --run-file`, `evaluate`).  Offsets are character positions in the
    document text, end exclusive.  --format tsv gives one line per chunk for scripts.
    """
    from ragaudit.pipeline.corpus import corpus_chunks
    from ragaudit.reports.chunks import chunks_report

    listing = corpus_chunks(corpus, chunk_size, chunk_overlap, chunker)
    report = chunks_report(listing.chunks, listing.offsets, listing.settings, words=words)
    emit(report, output_format)
