"""``ragaudit labels``: build chunk-level labels, and measure what document labels hide."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import click

from ragaudit.cli._llm_options import add_llm_options, llm_config_from_cli
from ragaudit.cli._options import (
    TEXT_FORMATS,
    corpus_option,
    echo_warnings,
    emit,
    format_option,
    golden_map_option,
    judged_threshold_option,
    k_option,
    labels_option,
    out_file_option,
    quiet_option,
    write_output,
)
from ragaudit.cli._progress import progress_callback

__all__ = ["command"]


class _TypedChoice(click.Choice):
    """A choice typed at a prompt: surrounding whitespace, and the ``\r`` of piped CRLF
    input (a file saved on Windows), is not part of the answer."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return super().convert(value.strip() if isinstance(value, str) else value, param, ctx)


def _ask_grade(prompt: str, choices: Sequence[str]) -> str:
    """The human labeller's question, through click (asks again until the answer is valid)."""
    try:
        answer: str = click.prompt(prompt, type=_TypedChoice(list(choices)), show_choices=False)
    except click.Abort:
        click.echo()  # end the prompt's line
        raise EOFError from None
    return answer


@contextlib.contextmanager
def _labeller(kind: str, llm_options: dict[str, Any]) -> Iterator[Any]:
    """The labeller ``--labeller`` names, bound to this terminal (human) or to the
    ``--llm-*`` endpoint (llm); closed when the command ends."""
    from ragaudit.labels.build import make_labeller

    if kind == "llm":
        labeller = make_labeller("llm", config=llm_config_from_cli(**llm_options))
    elif kind == "human":
        labeller = make_labeller("human", ask=_ask_grade, show=click.echo)
    else:
        labeller = make_labeller(kind)
    try:
        yield labeller
    finally:
        close = getattr(labeller, "close", None)
        if callable(close):
            close()


@click.group("labels")
def command() -> None:
    """Chunk-level relevance labels: build them, then measure document-label bias; human
    verdicts on a run's answers for `ragaudit calibrate`."""


@command.command("build")
@corpus_option("Folder of .md/.txt documents.", required=True)
@click.option(
    "--golden",
    "golden_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="Golden set, YAML/JSON/JSONL/CSV (questions, reference answers, keywords, sources).",
)
@golden_map_option()
@click.option("--chunk-size", type=int, default=800, show_default=True)
@click.option("--chunk-overlap", type=int, default=100, show_default=True)
@click.option("--chunker", type=click.Choice(["fixed", "markdown"]), default="fixed",
              show_default=True)  # fmt: skip
@click.option(
    "--labeller",
    type=click.Choice(["heuristic", "llm", "human"]),
    default="heuristic",
    show_default=True,
    help="heuristic: offline keyword matching; llm: one model call per question; human: "
    "interactive, resumable.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Only the first N answerable questions.")  # fmt: skip
@click.option(
    "--rebuild",
    is_flag=True,
    help="Ignore existing labels in --out (a ragaudit label file; any other file is kept).",
)
@out_file_option("Label file to write (and to resume from).", stdout=False, required=True)
@quiet_option()
@format_option()
@add_llm_options
def build(
    corpus_dir: str,
    golden_path: str,
    golden_columns: dict[str, str] | None,
    chunk_size: int,
    chunk_overlap: int,
    chunker: str,
    labeller: str,
    limit: int | None,
    rebuild: bool,
    out_path: str,
    quiet: bool,
    output_format: str,
    judge_repeats: int,
    **llm_options: Any,
) -> None:
    """Label every chunk of each question's gold document(s): 2 answer, 1 related, 0 not.

    Existing complete labels in --out are reused (unless --rebuild); the file is saved
    atomically after every question, and for --labeller human after every answer, so an
    interrupted session resumes where it stopped.  With --labeller llm the --llm-* options
    (or RAGAUDIT_LLM_* variables) name the endpoint; a question the model gives no valid
    labels for is left incomplete and reported, and the next build retries it.
    """
    from ragaudit.exceptions import InputError
    from ragaudit.pipeline.labelling import build_labels_file
    from ragaudit.reports.runs import labels_build_report

    if judge_repeats != 1:
        raise InputError("--judge-repeats: does not apply to labels build")
    with contextlib.ExitStack() as stack:
        labeller_obj = stack.enter_context(_labeller(labeller, llm_options))
        progress = progress_callback(stack, "labelling", quiet=quiet)
        if labeller == "human":  # a person reads prompts in the terminal: a line, not a bar

            def progress(done: int, total: int) -> None:
                if done < total:
                    click.echo(f"question {done + 1} of {total}", err=True)

        summary, chunking = build_labels_file(
            corpus_dir, golden_path, out_path, labeller_obj, chunk_size=chunk_size,
            chunk_overlap=chunk_overlap, chunker=chunker, golden_columns=golden_columns,
            limit=limit, rebuild=rebuild, progress=progress,
        )  # fmt: skip
    client = getattr(labeller_obj, "client", None)
    usage = client.usage_summary() if labeller == "llm" and client is not None else None
    report = labels_build_report(summary, out_path, chunking.describe(), labeller, usage)
    emit(report, output_format)
    if summary.no_answer_chunk:
        click.echo(
            "ragaudit: warning: no chunk got grade 2 (the answer may be split across chunks) "
            "for: " + ", ".join(summary.no_answer_chunk),
            err=True,
        )
    if summary.failed:
        click.echo(
            f"ragaudit: warning: {len(summary.failed)} question(s) got no valid labels and are "
            "left incomplete (not used, not counted as all-zero; rerun to retry): "
            + "; ".join(f"{qid} ({reason})" for qid, reason in summary.failed.items()),
            err=True,
        )


@command.command("bias")
@click.argument("run", type=click.Path(dir_okay=False))
@labels_option("Chunk-label file made for the run's chunking.", required=True)
@k_option("Cut-off (default: the run's own k).")
@judged_threshold_option(
    "judged@k (share of the top k that carries a label, document and chunk level) is shown "
    "beside the metrics; questions below this share are named in a warning."
)
@format_option(*TEXT_FORMATS, "html")
@out_file_option("Write the report to a file instead of stdout.")
def bias(
    run: str,
    labels_path: str,
    k: int | None,
    judged_threshold: float,
    output_format: str,
    out_path: str | None,
) -> None:
    """How much document-level labels flatter a saved RUN, measured with chunk labels.

    Per question: doc vs chunk hit, recall and MRR with a verdict; the optimism bias (hit
    rate and recall inflation); questions where a document "hit" never retrieved the answer
    chunk; inflation by gold-document size; graded nDCG and the largest rank shifts.
    """
    from ragaudit.data.records import load_saved_run
    from ragaudit.diagnose.judged_beside import judged_label_bias
    from ragaudit.labels.format import load_chunk_labels
    from ragaudit.reports.label_bias import bias_report
    from ragaudit.reports.renderer import render

    saved = load_saved_run(run)
    labels = load_chunk_labels(labels_path, expect=saved.config)
    labels.check_run_ids(saved.rows)
    result = judged_label_bias(saved, labels, k=k, threshold=judged_threshold)
    for note in result.notes:
        click.echo(f"ragaudit: warning: {note}", err=True)
    echo_warnings(result.judged.warnings())  # judged@k at both levels, at its k
    text = render(bias_report(result), output_format)
    write_output(text, out_path)


@command.command("verdicts")
@click.argument("run", type=click.Path(dir_okay=False))
@out_file_option("Verdict file (.jsonl) to write and to resume from.", stdout=False, required=True)
@click.option(
    "--metric",
    default="correct",
    show_default=True,
    help="The run's judged 0/1 metric the person grades (and the file's verdict key).",
)
@click.option(
    "--sample",
    "sample_size",
    type=click.IntRange(min=1),
    default=None,
    help="Grade a uniformly random sample of N judged questions (default: all of them; a "
    "resumed session keeps the file's N unless given).",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    help="Seed of the random order (default 0; a resumed session keeps the file's).",
)
@corpus_option("The run's corpus: shows each retrieved chunk's text (re-chunked as the run was).")
@labels_option("Chunk-label file: marks the chunks that hold the answer, as `ragaudit show` does.")
@click.option(
    "--show-judge",
    is_flag=True,
    help="Also show the judges' verdicts (hidden by default: seeing them biases people).",
)
@click.option(
    "--only-undecided",
    is_flag=True,
    help="Grade the answers the offline judges left undecided (judges.reasons) instead of a "
    "random sample of the judged ones; the file then fills those verdicts and is no "
    "calibration sample.",
)
def verdicts(
    run: str,
    out_path: str,
    metric: str,
    sample_size: int | None,
    seed: int | None,
    corpus_dir: str | None,
    labels_path: str | None,
    show_judge: bool,
    only_undecided: bool,
) -> None:
    """A person grades the answers of a saved RUN, correct or wrong, for `ragaudit calibrate`.

    For each question: the question, the reference answer, the model's answer and the
    retrieved evidence (with --corpus, the chunks' text); the judge's verdict stays hidden
    unless --show-judge; --labels marks the chunks that hold the answer.  Type c (correct),
    w (wrong), s (skip) or q (quit).  Each verdict is saved to --out atomically as it is
    typed; rerun the same command to resume.

    The questions come in a seeded uniformly random order of the run's judged questions, and
    --sample N grades its first N: the prediction-powered interval of `ragaudit calibrate`
    assumes the human-labelled questions are a uniformly random sample (missing completely at
    random), so do not pick the questions by hand, do not skip the hard ones, and decide N
    before you start.  The first line of --out records the sample (seed, N, of how many);
    calibrate reports it and warns about skipped questions.  A larger --sample with the same
    seed extends the sample (its first N stay the same).
    """
    from ragaudit.data.records import load_saved_run
    from ragaudit.diagnose.drilldown import answer_chunk_sets, question_view
    from ragaudit.labels.format import load_chunk_labels
    from ragaudit.labels.grading import GradingSession
    from ragaudit.pipeline.corpus import chunk_texts
    from ragaudit.reports.renderer import render
    from ragaudit.reports.show import grading_report

    saved = load_saved_run(run)
    session = GradingSession.open(
        saved, out_path, metric, sample_size=sample_size, seed=seed,
        only_undecided=only_undecided,
    )  # fmt: skip
    session.save()  # the header now: an unwritable --out fails before anyone grades
    sample = session.sample
    which = "undecided answers" if only_undecided else "judged questions"
    click.echo(
        f"grading {metric!r} of run {saved.name!r}: {sample.n} of {sample.of} {which} "
        f"in a uniformly random order, seed {sample.seed}; {len(session.entries)} done, "
        f"{session.to_go} to go; c = 1, w = 0",
        err=True,
    )
    texts = None if corpus_dir is None else chunk_texts(corpus_dir, saved.config)
    labels = None if labels_path is None else load_chunk_labels(labels_path, expect=saved.config)
    answer_chunks = {} if labels is None else answer_chunk_sets(labels)
    by_id = saved.by_id()

    def describe(qid: str) -> str:
        question = by_id[qid]
        view = question_view(question, "", saved.config.k, texts, answer_chunks)
        note = "" if question.answerable else "unanswerable: correct means the model declined"
        return render(grading_report(view, show_judge=show_judge, note=note), "table")

    summary = session.grade(describe, ask=_ask_grade, show=click.echo)
    state = "stopped: progress saved" if summary.stopped else "done"
    click.echo(
        f"{state}: {out_path} has {session.graded} verdict(s) and {session.skipped} skip(s) on "
        f"{len(session.entries)} of {sample.n} sampled questions (seed {sample.seed})"
    )
    if summary.stopped:
        click.echo("rerun the same command to resume", err=True)
    if session.graded >= 2:
        click.echo(f"next: ragaudit calibrate {run} --human {out_path} --metric {metric}", err=True)


@command.command("fill")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@labels_option("Chunk-label file made for the runs' chunking.", required=True)
@corpus_option("Folder of the runs' documents (the labeller reads the chunks).", required=True)
@click.option(
    "--labeller",
    type=click.Choice(["heuristic", "llm", "human"]),
    default="heuristic",
    show_default=True,
    help="Who judges the unjudged chunks: offline keyword matching, a model, or you.",
)
@k_option("Pool depth: the top k of each run (default: each run's own k).")
@click.option(
    "--date",
    default=None,
    help="Date recorded with each filled label (default: today, UTC); fix it for "
    "byte-identical files.",
)
@out_file_option("Filled labels to write (JSONL: qid, docid, grade + provenance).",
                 stdout=False, required=True)  # fmt: skip
@format_option()
@add_llm_options
def fill(
    runs: tuple[str, ...],
    labels_path: str,
    corpus_dir: str,
    labeller: str,
    k: int | None,
    date: str | None,
    out_path: str,
    output_format: str,
    judge_repeats: int,
    **llm_options: Any,
) -> None:
    """Judge the unjudged chunks in the top k of saved RUNS (pooled), and show what changes.

    The labels grade the chunks of each question's gold documents; every other chunk a run
    retrieved is unjudged and counts as non-relevant.  This pools the runs' top k, has the
    labeller grade the unjudged chunks, writes every label with its provenance (original, or
    filled: labeller, date, runs) to --out, and prints per run judged@k and the metrics on the
    original and on the filled labels.  `evaluate --qrels ORIGINAL --filled OUT` does the same
    for any run file.
    """
    from ragaudit.exceptions import InputError
    from ragaudit.pipeline.labelling import fill_labels_file
    from ragaudit.reports.labels_fill import fill_report

    if judge_repeats != 1:
        raise InputError("--judge-repeats: does not apply to labels fill")
    with _labeller(labeller, llm_options) as labeller_obj:
        result = fill_labels_file(
            runs, labels_path, corpus_dir, out_path, labeller_obj, date=date, k=k
        )
    if result.stopped:
        click.echo(
            f"ragaudit: warning: labelling stopped: {len(result.added)} chunk(s) judged; the "
            "rest of the pool stays unjudged (a new fill starts the pool again)",
            err=True,
        )
    for note in result.notes:
        click.echo(f"ragaudit: warning: {note}", err=True)
    emit(fill_report(result, out_path), output_format)
