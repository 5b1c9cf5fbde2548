"""``ragaudit compare``: is the difference between two saved runs real?"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ragaudit.cli._options import (
    all_ids_option,
    append_step_summary,
    batch_rows_option,
    echoed_warnings,
    emit,
    format_option,
    seed_option,
)
from ragaudit.exceptions import InputError
from ragaudit.stats.options import CI_METHODS
from ragaudit.stats.verdicts import format_pvalue

if TYPE_CHECKING:
    from ragaudit.stats.compare import Comparison

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]


@click.command("compare")
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False),
    help="Run A: a baseline kept in the repository (see `ragaudit baseline update`); then "
    "pass only the candidate run.",
)
@click.option(
    "--qrels",
    "qrels_path",
    type=click.Path(dir_okay=False),
    help="Relevance labels: the runs are retrieval runs (TREC, JSONL or JSON, as `evaluate` "
    "reads them), scored per question with the -m metrics (default: evaluate's) first.",
)
@click.option(
    "--all",
    "all_dir",
    type=click.Path(file_okay=False),
    help="Compare every pair of saved runs in this directory (needs one --metric).",
)
@click.option(
    "-m",
    "--metric",
    "metrics",
    multiple=True,
    help="Metric to compare (repeatable; the spellings of evaluate -m, with @k for the run's "
    "k: recall@k, nDCG@k, chunk_R@k, correct...); default every metric in both runs.",
)
@click.option(
    "--resamples", type=int, default=10_000, show_default=True, help="Bootstrap resamples."
)
@click.option(
    "--permutations",
    type=int,
    default=10_000,
    show_default=True,
    help="Random sign flips when the permutation test is not exact.",
)
@click.option(
    "--exact-max-n",
    type=int,
    default=20,
    show_default=True,
    help="Enumerate all 2^m sign patterns up to this many non-zero differences (differences "
    "on a lattice, e.g. 0/1 metrics, are exact at any size).",
)
@seed_option()
@click.option(
    "--confidence",
    type=float,
    default=0.95,
    show_default=True,
    help="Confidence level of the interval; alpha = 1 - confidence.",
)
@click.option(
    "--ci",
    "ci_method",
    type=click.Choice([*CI_METHODS, "wilson"]),
    default="auto",
    show_default=True,
    help="Interval: auto/score = McNemar's exact test inverted for 0/1 metrics and the inverted "
    "sign-flip test (the verdict's own test: it excludes 0 exactly when p < alpha) otherwise; "
    "betting = the betting interval (Waudby-Smith-Ramdas), valid for any distribution and "
    "wider, for other scores in [0, 1]; bootstrap (= percentile) or bca = that bootstrap for "
    "every metric. The verdict is always the exact test. (wilson is for single rates: the "
    "funnel.)",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Compare runs that share fewer than half of their questions.",
)
@click.option(
    "--allow-different-data",
    is_flag=True,
    help="Compare saved runs whose corpus or golden set differ (refused otherwise: the "
    "questions are not the same experiment).",
)
@click.option(
    "--questions",
    type=click.Choice(["all", "answerable", "unanswerable"]),
    default="all",
    show_default=True,
    help="Which questions of saved runs to compare.",
)
@click.option(
    "--fail-if-worse",
    "gates",
    multiple=True,
    metavar="METRIC",
    help="Exit with code 1 when run B is SIGNIFICANTLY worse than A on METRIC (repeatable): "
    "a regression gate for CI.",
)
@click.option(
    "--cluster-by",
    metavar="source|tag|FIELD",
    help="Questions sharing a gold source, a first tag or a row FIELD are correlated: add "
    "clustered intervals (betting over whole clusters; CR1 t for values outside [0, 1]) "
    "beside the naive ones, the number of clusters and the design effect (saved runs only).",
)
@click.option(
    "--judge-repeats",
    "judge_repeats",
    is_flag=True,
    help="Split the variance of judged metrics into question sampling and judge noise, from "
    "the per-repeat verdicts of `ragaudit judge --judge-repeats R` (saved runs only).",
)
@click.option(
    "--judged-threshold",
    type=float,
    default=0.5,
    show_default=True,
    help="Warn about questions whose judged@k (share of the top k that carries a label, "
    "shown beside the retrieval metrics: compared with --qrels, against the gold documents "
    "for saved runs and --all) is below this.",
)
@click.option(
    "--judged-margin",
    type=float,
    default=0.1,
    show_default=True,
    help="Warn when two compared runs' mean judged@k differ by more than this (the "
    "comparison then favours the run more like the one the labels came from).",
)
@click.option(
    "--full",
    is_flag=True,
    help="Also print the methods, a paired view of each 0/1 metric, what each interval rules "
    "out with its MDE, and the verdict rule (default: the table and the verdict sentence).",
)
@all_ids_option()
@batch_rows_option()
@format_option()
def command(
    runs: tuple[str, ...],
    baseline: str | None,
    qrels_path: str | None,
    all_dir: str | None,
    metrics: tuple[str, ...],
    resamples: int,
    permutations: int,
    exact_max_n: int,
    seed: int,
    confidence: float,
    ci_method: str,
    allow_partial: bool,
    allow_different_data: bool,
    questions: str,
    gates: tuple[str, ...],
    cluster_by: str | None,
    judge_repeats: bool,
    judged_threshold: float,
    judged_margin: float,
    full: bool,
    max_ids: int | None,
    batch_rows: int | None,
    output_format: str,
) -> None:
    """Paired comparison of RUN_A and RUN_B (diff = B - A), question by question.

    Each run is a saved run, the output of `evaluate --per-query --format json`, a JSON
    {question_id: {metric: value}} file or JSONL lines {"id": question_id, metric: value};
    with --qrels, a retrieval run (TREC, JSONL or JSON).  With --baseline FILE, FILE is A and
    the one RUN is B.  When $GITHUB_STEP_SUMMARY is set, the comparison is also appended to
    that file as Markdown.  For every metric: a paired permutation p-value (exact whenever
    affordable), the verdict of that test, and a confidence interval (McNemar's exact test
    inverted for 0/1 metrics, the same sign-flip test inverted otherwise, so it excludes 0
    exactly when the verdict is SIGNIFICANT), each row naming its methods, with what it rules
    out and its minimum detectable effect; for 0/1 metrics also McNemar's exact test and the
    ids of the questions that differ.  With --cluster-by every verdict flips whole clusters.
    """
    from ragaudit.data.records import numbers_only
    from ragaudit.diagnose.compare import compare_directory, compare_runs

    # no question text is read, nor retrieved entries below k (judged@k reads the top k):
    # a Parquet run is held as a batch plus the columns the statistics read
    click.get_current_context().with_resource(numbers_only(batch_rows, top_k=True))
    from ragaudit.reports.stats import comparison_report, matrix_report

    if baseline is not None:
        if all_dir is not None or len(runs) != 1:
            raise InputError(
                f"compare --baseline: expected one candidate run, found {len(runs)}"
                + (" and --all" if all_dir is not None else "")
            )
        runs = (baseline, *runs)
    if qrels_path is not None and (all_dir or cluster_by or judge_repeats):
        raise InputError("compare --qrels: --all, --cluster-by and --judge-repeats need saved runs")
    if (cluster_by or judge_repeats) and all_dir is not None:
        raise InputError("compare: --cluster-by and --judge-repeats need two runs, not --all")
    if gates and all_dir is not None:
        raise InputError("compare: --fail-if-worse needs two runs, not --all")
    if all_dir is not None:
        if runs:
            raise InputError("compare: pass either --all DIR or two runs, not both")
        if len(metrics) != 1:
            raise InputError(f"compare --all: expected exactly one --metric, found {len(metrics)}")
        with echoed_warnings():  # each printed once, also when the comparison fails
            matrix = compare_directory(
                all_dir,
                metrics[0],
                n_resamples=resamples,
                n_permutations=permutations,
                confidence=confidence,
                method=ci_method,
                seed=seed,
                exact_max_n=exact_max_n,
                allow_partial=allow_partial,
                judged_threshold=judged_threshold,
                judged_margin=judged_margin,
            )
        emit(matrix_report(matrix), output_format)
        append_step_summary(matrix_report(matrix), f"ragaudit compare --all {all_dir}")
        return
    if len(runs) != 2:
        raise InputError(f"compare: expected two runs RUN_A RUN_B, found {len(runs)}")
    with echoed_warnings():  # each printed once, also when the comparison fails
        result = compare_runs(
            runs[0],
            runs[1],
            list(metrics) or None,
            qrels=qrels_path,
            cluster_by=cluster_by,
            judge_repeats=judge_repeats,
            questions=questions,
            seed=seed,
            confidence=confidence,
            method=ci_method,
            n_resamples=resamples,
            n_permutations=permutations,
            exact_max_n=exact_max_n,
            allow_partial=allow_partial,
            allow_different_data=allow_different_data,
            judged_threshold=judged_threshold,
            judged_margin=judged_margin,
            fail_if_worse=gates,
        )
    # result.to_report(), the id lists cut; the detail sections only with --full
    report = comparison_report(result, max_ids, full=full)
    emit(report, output_format)
    append_step_summary(report, f"ragaudit compare: {result.name_b} vs {result.name_a}")
    if gates:
        _apply_gates(result, gates)


def _apply_gates(result: Comparison, gates: tuple[str, ...]) -> None:
    """Exit 1 when B is significantly worse than A on a gated metric (diagnostic on stderr).

    Only a SIGNIFICANT verdict with a negative difference fails the gate: "no evidence" of a
    change is not a regression, and a borderline one is reported but does not fail.
    """
    try:
        failed = result.regressions(gates)
    except InputError as exc:
        raise InputError(f"--fail-if-worse: {exc}") from None
    for row in failed:
        low, high = row.confidence_interval.low, row.confidence_interval.high
        click.echo(
            f"ragaudit: gate failed: {row.metric} is worse in B by {row.statistic:+.3f} "
            f"(CI [{low:+.3f}, {high:+.3f}], p {format_pvalue(row.pvalue)})",
            err=True,
        )
    if failed:
        raise SystemExit(1)
