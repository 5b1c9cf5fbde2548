"""``ragaudit compare``: is the difference between two saved runs real?"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ragaudit.cli._options import emit, format_option, seed_option
from ragaudit.exceptions import InputError
from ragaudit.metrics.registry import resolve_saved_run_metrics
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
    help="Interval: auto/score = Tango score interval for 0/1 metrics and a percentile "
    "bootstrap otherwise; bootstrap (= percentile) or bca = that bootstrap for every metric. "
    "(wilson is for single rates: the funnel.)",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Compare runs that share fewer than half of their questions.",
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
@format_option()
def command(
    runs: tuple[str, ...],
    all_dir: str | None,
    metrics: tuple[str, ...],
    resamples: int,
    permutations: int,
    exact_max_n: int,
    seed: int,
    confidence: float,
    ci_method: str,
    allow_partial: bool,
    questions: str,
    gates: tuple[str, ...],
    output_format: str,
) -> None:
    """Paired comparison of RUN_A and RUN_B (diff = B - A), question by question.

    Each run is a saved run, a JSON {question_id: {metric: value}} file or JSONL lines
    {"id": question_id, metric: value}.  For every metric: a confidence interval (Tango score
    for 0/1 metrics, paired bootstrap otherwise), a paired permutation p-value (exact whenever
    affordable) and a verdict, each row naming its methods; for 0/1 metrics also McNemar's
    exact test, the ids of the questions that differ and the power the comparison had.
    """
    from ragaudit.reports.stats import comparison_report, matrix_report
    from ragaudit.stats.compare import compare_runs
    from ragaudit.stats.pairwise import compare_all

    if gates and all_dir is not None:
        raise InputError("compare: --fail-if-worse needs two runs, not --all")
    if all_dir is not None:
        if runs:
            raise InputError("compare: pass either --all DIR or two runs, not both")
        if len(metrics) != 1:
            raise InputError(f"compare --all: expected exactly one --metric, found {len(metrics)}")
        matrix = compare_all(
            all_dir,
            metrics[0],
            n_resamples=resamples,
            n_permutations=permutations,
            confidence=confidence,
            method=ci_method,
            seed=seed,
            exact_max_n=exact_max_n,
            allow_partial=allow_partial,
        )
        emit(matrix_report(matrix), output_format)
        return
    if len(runs) != 2:
        raise InputError(f"compare: expected two runs RUN_A RUN_B, found {len(runs)}")
    result = compare_runs(
        runs[0],
        runs[1],
        list(metrics) or None,
        n_resamples=resamples,
        n_permutations=permutations,
        confidence=confidence,
        method=ci_method,
        seed=seed,
        exact_max_n=exact_max_n,
        allow_partial=allow_partial,
        questions=questions,
    )
    emit(comparison_report(result), output_format)
    if gates:
        _apply_gates(result, gates)


def _apply_gates(result: Comparison, gates: tuple[str, ...]) -> None:
    """Exit 1 when B is significantly worse than A on a gated metric (diagnostic on stderr).

    Only a SIGNIFICANT verdict with a negative difference fails the gate: "no evidence" of a
    change is not a regression, and a borderline one is reported but does not fail.
    """
    by_name = {row.metric: row for row in result.metrics}
    gates = tuple(resolve_saved_run_metrics(gates, list(by_name)))
    missing = [g for g in gates if g not in by_name]
    if missing:
        raise InputError(
            f"--fail-if-worse: {', '.join(missing)} not compared; compared metrics: "
            f"{', '.join(by_name) or 'none'}"
        )
    failed = [
        by_name[g]
        for g in gates
        if by_name[g].verdict == "SIGNIFICANT" and by_name[g].statistic < 0
    ]
    for row in failed:
        low, high = row.confidence_interval.low, row.confidence_interval.high
        click.echo(
            f"ragaudit: gate failed: {row.metric} is worse in B by {row.statistic:+.3f} "
            f"(CI [{low:+.3f}, {high:+.3f}], p {format_pvalue(row.pvalue)})",
            err=True,
        )
    if failed:
        raise SystemExit(1)
