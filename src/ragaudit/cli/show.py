"""``ragaudit show``: the drill-down of single questions of a saved run, in the terminal."""

from __future__ import annotations

import click

from ragaudit.cli._options import (
    corpus_option,
    emit,
    emit_stream,
    format_option,
    k_option,
    labels_option,
)

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["STAGES", "command"]

#: ``--stage`` choices: a funnel stage a question died at, correct by luck, or unjudged.
STAGES = ("1-retrieval", "2-evidence", "3-refusal", "4-generation", "lucky", "unjudged")


@click.command("show")
@click.argument("run", type=click.Path(dir_okay=False))
@click.argument("qids", nargs=-1)
@click.option(
    "--failures",
    is_flag=True,
    help="Only the questions that did not end well: answerable ones not answered correctly "
    "(died or unjudged), unanswerable ones answered.",
)
@click.option(
    "--stage",
    type=click.Choice(STAGES),
    default=None,
    help="Only the questions that died at this stage (lucky: right by luck; unjudged: no "
    "judge could decide a stage they reached).",
)
@k_option("Cut-off (default: the run's own k), as in `ragaudit funnel`.")
@labels_option("Chunk-label file: marks the answer chunks and decides stage 2 as the funnel does.")
@corpus_option("The run's corpus: shows each retrieved chunk's text (re-chunked as the run was).")
@format_option()
def command(
    run: str,
    qids: tuple[str, ...],
    failures: bool,
    stage: str | None,
    k: int | None,
    labels_path: str | None,
    corpus_dir: str | None,
    output_format: str,
) -> None:
    """Per question of a saved RUN: the question, the reference and the model's answer, the
    retrieved chunks in rank order (gold document and answer chunk marked), the judges'
    verdicts and the funnel stage it died at.

    Pick questions by id (QIDS), with --failures, or with --stage; default: every question.
    """
    from ragaudit.data.records import load_saved_run
    from ragaudit.diagnose.drilldown import select_questions
    from ragaudit.labels.format import load_chunk_labels
    from ragaudit.pipeline.corpus import chunk_texts
    from ragaudit.reports.show import show_report, show_sections

    # Named questions: only they are checked in full and built (a 200,000-question run is
    # not validated again to show one; see ragaudit.data.saved_run.load).
    saved = load_saved_run(run, questions=qids or None)
    labels = None if labels_path is None else load_chunk_labels(labels_path, expect=saved.config)
    texts = None if corpus_dir is None else chunk_texts(corpus_dir, saved.config)
    cutoff, views = select_questions(
        saved, qids, failures=failures, stage=stage, k=k, labels=labels, chunk_texts=texts
    )
    note = "" if corpus_dir else "pass --corpus DIR to see each retrieved chunk's text"
    from ragaudit.diagnose.repeats import analyse_repeats

    repeats = analyse_repeats(saved, k=cutoff, labels=labels, chunk_texts=texts)
    if output_format == "table":  # the terminal: each question printed as it is opened
        emit_stream(*show_sections(saved.name, cutoff, views, note, repeats), output_format)
    else:
        emit(show_report(saved.name, cutoff, views, note=note, repeats=repeats), output_format)
