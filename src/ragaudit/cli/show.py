"""``ragaudit show``: the drill-down of single questions of a saved run, in the terminal."""

from __future__ import annotations

import click

from ragaudit.cli._options import corpus_option, emit, format_option, k_option, labels_option
from ragaudit.exceptions import InputError

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
    from ragaudit.diagnose.drilldown import answer_chunk_sets, question_view
    from ragaudit.diagnose.funnel import compute_funnel
    from ragaudit.labels.format import load_chunk_labels
    from ragaudit.reports.show import show_report

    # Named questions: only they are checked in full and built (a 200,000-question run is
    # not validated again to show one; see ragaudit.data.saved_run.load).
    saved = load_saved_run(run, questions=qids or None)
    labels = None if labels_path is None else load_chunk_labels(labels_path, expect=saved.config)
    from ragaudit.pipeline.corpus import chunk_texts

    texts = None if corpus_dir is None else chunk_texts(corpus_dir, saved.config)
    funnel = compute_funnel(saved, k=k, labels=labels, chunk_texts=texts, n_resamples=1)
    stages = funnel.places()
    by_id = saved.by_id()
    unknown = [q for q in qids if q not in by_id]
    if unknown:
        known = ", ".join(list(by_id)[:5])
        raise InputError(
            f"{run}: question id: expected ids of the run (e.g. {known}), found "
            + ", ".join(repr(q) for q in unknown[:5])
        )
    selected = [by_id[q] for q in dict.fromkeys(qids)] if qids else list(saved.questions)
    if failures:
        failed = set(funnel.failure_ids())
        selected = [q for q in selected if q.id in failed]
    if stage == "lucky":
        lucky = set(funnel.lucky)  # built once: inside the test it was one set per question
        selected = [q for q in selected if q.id in lucky]
    elif stage == "unjudged":
        unjudged = {u.id for u in funnel.unjudged}
        selected = [q for q in selected if q.id in unjudged]
    elif stage is not None:
        died = set(funnel.died[stage])
        selected = [q for q in selected if q.id in died]
    answers = answer_chunk_sets(labels) if labels is not None else {}
    views = [question_view(q, stages[q.id], funnel.k, texts, answers) for q in selected]
    note = "" if corpus_dir else "pass --corpus DIR to see each retrieved chunk's text"
    emit(show_report(saved.name, funnel.k, views, note=note), output_format)
