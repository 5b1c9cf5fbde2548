"""``ragaudit golden check``: a golden set checked against its corpus before any run."""

from __future__ import annotations

from typing import Any

import click

from ragaudit.cli._llm_options import add_llm_options, llm_config_from_cli
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
@click.option(
    "--closed-book", is_flag=True,
    help="Also ask the LLM generator (--llm-*) every answerable question with an empty "
    "context; flag the questions it answers correctly without retrieval.",
)  # fmt: skip
@format_option()
@add_llm_options
@click.pass_context
def check(
    ctx: click.Context,
    golden_path: str,
    corpus_dir: str,
    chunk_size: int,
    chunk_overlap: int,
    chunker: str,
    golden_columns: dict[str, str] | None,
    closed_book: bool,
    output_format: str,
    judge_repeats: int,
    **llm_options: Any,
) -> None:
    """Check a golden set against its corpus before running it.

    Lists unknown keys with the nearest accepted name (a misspelling such as `keyword` for
    `keywords` is a problem: `run` refuses it), sources that name no document of the corpus,
    answerable questions whose reference answer is found in no document (every number and 60%
    of its content words in one document), keywords no chunk contains (as whole words, with
    the chunking of --chunk-size/--chunk-overlap/--chunker) and duplicate questions.

    Then the validity of the golden set as an instrument, each check with its n, flagged
    share, 95% interval and method: questions that state their own answer (a problem),
    paraphrase duplicates (BM25 similarity >= 0.7, listed with the score), facts two
    documents state with different values (notes), the questions per document with the
    design effect the skew implies for `--cluster-by source` and the effective n, and with
    --closed-book the questions an LLM answers correctly with no context (a problem).

    Exit codes: 0 clean (notes allowed), 1 problems found, 2 unreadable input (a file that
    does not parse, a missing field: the same one-line error as `run`).
    """
    from ragaudit.pipeline.golden_check import check_corpus_golden
    from ragaudit.reports.golden import golden_check_report

    generator = None
    if closed_book:
        from ragaudit.pipeline.llm_generator import make_generator

        generator = make_generator(config=llm_config_from_cli(**llm_options))
    try:
        result = check_corpus_golden(
            golden_path, corpus_dir, chunk_size=chunk_size, chunk_overlap=chunk_overlap,
            chunker=chunker, columns=golden_columns, generator=generator,
        )  # fmt: skip
    finally:
        if generator is not None:
            generator.close()
    emit(golden_check_report(result), output_format)
    if not result.ok:
        ctx.exit(1)
