"""``ragaudit funnel``: where answerable questions are lost between retrieval and a right answer."""

from __future__ import annotations

from typing import Any

import click

from ragaudit.cli._options import (
    all_ids_option,
    batch_rows_option,
    corpus_option,
    echo_warnings,
    emit,
    format_option,
    judged_margin_option,
    judged_threshold_option,
    k_option,
    labels_option,
    seed_option,
)

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]

_CONFIDENCE = 0.95  # the funnel has no --confidence; its intervals are 95%


@click.command("funnel")
@click.argument("runs", metavar="RUN [RUN_B]", nargs=-1, required=True,
                type=click.Path(dir_okay=False))  # fmt: skip
@k_option("Cut-off (default: the run's own k). Re-slices a run that retrieved deeper.")
@labels_option("Chunk-label file (ragaudit labels build): decides stage 2 from answer chunks.")
@corpus_option(
    "The run's corpus: with --k != the run's k, re-decides stage 2 from the keywords in the "
    "top-k chunk texts (re-chunked with the run's chunking)."
)
@seed_option()
@click.option(
    "--resamples", type=click.IntRange(min=1), default=2000, show_default=True,
    help="Bootstrap resamples of the questions.",
)  # fmt: skip
@click.option(
    "--ci", "rate_ci", type=click.Choice(["clopper-pearson", "wilson", "wilson-cc", "bootstrap"]),
    default="clopper-pearson", show_default=True,
    help="Interval of the stage and abstention rates (the gap gets Tango's paired score "
    "interval); bootstrap = paired percentile bootstrap for every interval.",
)  # fmt: skip
@click.option(
    "--cluster-by",
    metavar="source|tag|FIELD",
    help="Add clustered intervals (betting over whole clusters) of hit@k, nDCG@k, answered "
    "and end-to-end correctness (answerable questions) beside the naive ones, the number of "
    "clusters and the design effect.",
)
@all_ids_option()
@judged_threshold_option(
    "judged@k (share of the top k that carries a label) is shown beside the retrieval "
    "stages; questions below this share are named in a warning."
)
@judged_margin_option(
    "Two runs: warn when their judged@k differ by more (the comparison then favours the run "
    "more like the one the labels came from)."
)
@batch_rows_option()
@format_option()
def command(
    runs: tuple[str, ...],
    k: int | None,
    labels_path: str | None,
    corpus_dir: str | None,
    seed: int,
    resamples: int,
    rate_ci: str,
    cluster_by: str | None,
    judged_threshold: float,
    judged_margin: float,
    max_ids: int | None,
    batch_rows: int | None,
    output_format: str,
) -> None:
    """The funnel of a saved RUN: retrieved -> evidence in context -> answered -> correct.

    Prints each stage's kept count, share and conditional rate with a Clopper-Pearson interval,
    the product identity P(correct) = p1 x p2 x p3 x p4, the gap between hit rate and
    end-to-end correctness, where each failing question died, the questions answered right
    by luck, and the abstention rate on unanswerable questions.

    With two runs (funnel A B), compares them stage by stage: each run's conditional rate,
    their paired difference on the questions that reached the stage in both (Tango score
    interval, exact McNemar p), the stage that loses the most questions in each, and every
    question that moved between stages.
    """
    if len(runs) > 2:
        raise click.UsageError(f"expected one run or two (A B), found {len(runs)}")
    from ragaudit.data.records import numbers_only

    # no question text is read: a Parquet run is held as a batch plus its numeric columns
    click.get_current_context().with_resource(numbers_only(batch_rows))
    if len(runs) == 2 and cluster_by:
        raise click.UsageError("--cluster-by: applies to one run; compare two runs with "
                               "ragaudit compare A B --cluster-by")  # fmt: skip
    from ragaudit.reports.funnel import funnel_report, with_run_judged

    options = (k, labels_path, corpus_dir, seed, resamples, rate_ci, judged_threshold)
    if len(runs) == 2:
        from ragaudit.data.records import load_saved_runs
        from ragaudit.diagnose.funnel_compare import compare_funnels
        from ragaudit.diagnose.judged_beside import runs_judged
        from ragaudit.reports.funnel_compare import funnel_comparison_report
        from ragaudit.reports.judged import with_judged_runs

        (saved_a, first, judged_a, _), (saved_b, second, judged_b, _) = (
            _funnel(saved, *options) for saved in load_saved_runs(runs)
        )
        # each run's judged@k at the depth its funnel used, the pair at the common depth
        judged = runs_judged(
            [saved_a, saved_b], k=k, threshold=judged_threshold, margin=judged_margin,
            known=(judged_a, judged_b),
        )  # fmt: skip
        echo_warnings(judged.warnings())
        report = funnel_comparison_report(compare_funnels(first, second), max_ids)
        title = "judged@k (how much of the retrieval stages rests on labels)"
        emit(with_judged_runs(report, judged, title), output_format)
        return
    from ragaudit.data.records import load_saved_run
    from ragaudit.reports.repeats import with_repeats

    saved, result, judged, repeats = _funnel(load_saved_run(runs[0]), *options)
    report = with_repeats(with_run_judged(funnel_report(result, max_ids), judged), repeats)
    if cluster_by:
        from ragaudit.diagnose.noise import clustered_means
        from ragaudit.reports.noise import with_noise_sections

        clustered = clustered_means(saved, cluster_by)
        report = with_noise_sections(report, {"clustered": clustered}, _CONFIDENCE)
    emit(report, output_format)


def _funnel(
    saved: Any,
    k: int | None,
    labels_path: str | None,
    corpus_dir: str | None,
    seed: int,
    resamples: int,
    rate_ci: str,
    judged_threshold: float,
) -> tuple[Any, Any, Any, Any]:
    """The funnel of one loaded saved run (with its labels or corpus), its notes warned:
    ``(saved run, funnel, judged@k of its top k, its repeats or None)``."""
    from ragaudit.diagnose.funnel import compute_funnel
    from ragaudit.labels.format import load_chunk_labels

    labels = None if labels_path is None else load_chunk_labels(labels_path, expect=saved.config)
    from ragaudit.pipeline.corpus import chunk_texts

    texts = None if corpus_dir is None else chunk_texts(corpus_dir, saved.config)
    if labels is not None:
        labels.check_run_ids(saved.rows, texts, corpus_hint=True)
    result = compute_funnel(
        saved,
        k=k,
        labels=labels,
        chunk_texts=texts,
        seed=seed,
        n_resamples=resamples,
        rate_ci=rate_ci,
    )
    for note in result.notes:
        click.echo(f"ragaudit: warning: {note}", err=True)
    from ragaudit.diagnose.unjudged import run_judged

    corpus = None if texts is None else texts.keys()
    judged = run_judged(saved, labels, k=result.k, threshold=judged_threshold, corpus_chunks=corpus)
    from ragaudit.diagnose.repeats import analyse_repeats

    repeats = analyse_repeats(saved, k=result.k, labels=labels, chunk_texts=texts)
    return saved, result, judged, repeats
