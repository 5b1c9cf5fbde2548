"""``ragaudit evaluate``: score one run file, or several side by side, against a labels file.

With several ``--run``, each run is scored exactly as it would be alone, and each is compared
with the first (or every pair, ``--pairs all``) by ragaudit's paired tests with Holm's
correction (:func:`ragaudit.stats.pairwise.compare_all`).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import click

from ragaudit.cli._options import TEXT_FORMATS, echo_warnings, emit, format_option, seed_option
from ragaudit.exceptions import InputError
from ragaudit.metrics.registry import list_metrics
from ragaudit.metrics.score_file import DEFAULT_METRICS
from ragaudit.metrics.score_file import score_run_file as score_run

if TYPE_CHECKING:
    from ragaudit.data.qrels import Qrels
    from ragaudit.metrics import Evaluation

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["DEFAULT_METRICS", "command", "score_run"]


def _metric_help() -> str:
    names = ", ".join(info.pattern for info in list_metrics())
    return f"Metric to compute (repeatable). Default: {', '.join(DEFAULT_METRICS)}. Valid: {names}."


@click.command("evaluate")
@click.option("--qrels", "qrels_path", required=True, help="Labels: TREC qrels or JSONL/JSON.")
@click.option(
    "--run",
    "run_paths",
    required=True,
    multiple=True,
    help="Run: TREC run or JSONL/JSON. Repeat it for one table of several runs, each compared "
    "with the first (paired tests, Holm-corrected).",
)
@click.option("-m", "--metric", "metrics", multiple=True, help=_metric_help())
@click.option("--per-query", is_flag=True, help="Also print every question's values.")
@click.option(
    "--average",
    type=click.Choice(["macro", "micro"]),
    default="macro",
    show_default=True,
    help="macro: mean over questions; micro: pool counts (hit/recall/precision/f1 only).",
)
@click.option(
    "--unit",
    type=click.Choice(["doc", "chunk"]),
    default="doc",
    show_default=True,
    help="What the labels (and the run, unless --chunk-map is given) identify.",
)
@click.option(
    "--chunk-map",
    "chunk_map_path",
    default=None,
    help="TSV (chunk_id<TAB>doc_id) or JSON map; reads the run as chunks and lifts it to docs.",
)
@click.option(
    "--relevance-threshold",
    type=int,
    default=1,
    show_default=True,
    help="Minimum grade counted as relevant by binary metrics (nDCG uses grades as gains).",
)
@click.option(
    "--missing",
    type=click.Choice(["zero", "skip"]),
    default="zero",
    show_default=True,
    help="Labelled questions absent from the run: score 0 (trec_eval -c) or drop them.",
)
@click.option(
    "--order",
    type=click.Choice(["score", "given"]),
    default="score",
    show_default=True,
    help="Rank by score (ties by id descending, as trec_eval) or keep the file order.",
)
@click.option(
    "--duplicates",
    type=click.Choice(["error", "first"]),
    default="error",
    show_default=True,
    help="An item listed twice for one question: error, or keep the first.",
)
@click.option(
    "--stream",
    is_flag=True,
    help="Read a TREC run in batches of whole questions (runs larger than memory; macro only).",
)
@click.option(
    "--pairs",
    type=click.Choice(["first", "all"]),
    default="first",
    show_default=True,
    help="Several runs: compare each with the first, or every pair.",
)
@click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Several runs: significance level of the markers (Holm-adjusted p < alpha).",
)
@click.option(
    "--judged-threshold",
    type=float,
    default=0.5,
    show_default=True,
    help="Warn about questions whose judged@k (share of the top k that carries a label) is "
    "below this; judged@k is printed beside the metrics.",
)
@click.option(
    "--judged-margin",
    type=float,
    default=0.1,
    show_default=True,
    help="Several runs: warn when a run's mean judged@k differs from the first run's by more "
    "(the comparison then favours the run the labels came from).",
)
@click.option(
    "--ignore-identical-ids",
    is_flag=True,
    help="Drop run items whose id is their question's id (a question that is also a "
    "document retrieves itself; BEIR's ignore_identical_ids). Without it they are scored "
    "and counted in a warning.",
)
@click.option(
    "--filled",
    "filled_path",
    default=None,
    help="Labels filled by `ragaudit labels fill` (or any labels file): report each metric on "
    "--qrels, on --qrels plus these, and the change (one --run).",
)
@click.option(
    "--human",
    "human_path",
    default=None,
    help="With --filled: a person's grades (a labels file) of the filled items of a random "
    "sample of questions; each metric on the filled labels is then corrected by the "
    "labeller's measured error (PPI), with its interval.",
)
@seed_option()
@format_option(*TEXT_FORMATS, "latex")
def command(
    qrels_path: str,
    run_paths: tuple[str, ...],
    metrics: tuple[str, ...],
    per_query: bool,
    average: str,
    unit: str,
    chunk_map_path: str | None,
    relevance_threshold: int,
    missing: str,
    order: str,
    duplicates: str,
    stream: bool,
    pairs: str,
    alpha: float,
    judged_threshold: float,
    judged_margin: float,
    ignore_identical_ids: bool,
    filled_path: str | None,
    human_path: str | None,
    seed: int,
    output_format: str,
) -> None:
    """Score a run against relevance labels (trec_eval-exact for trec_eval's metrics).

    Several --run give one table, a row per run and a column per metric; each run's numbers
    are those of `evaluate` with that run alone, and markers show the differences that are
    significant after Holm's correction (the legend names the test, alpha and the seed).
    """
    from ragaudit.data.formats import read_qrels
    from ragaudit.metrics.judged import judged_coverage, judged_names, warn_unjudged
    from ragaudit.reports.metrics import evaluate_report, with_judged

    names = list(metrics) or list(DEFAULT_METRICS)
    names += judged_names(names)
    if len(run_paths) > 1 and average != "macro":
        raise InputError(
            "evaluate: several runs are compared on per-question values, whose mean is the "
            "macro average; use --average macro (or one --run for a micro average)"
        )
    from ragaudit._validate import check_fraction

    check_fraction(alpha, "alpha")
    if filled_path is not None and len(run_paths) > 1:
        raise InputError("evaluate --filled: expected one --run, found " + str(len(run_paths)))
    if human_path is not None and filled_path is None:
        raise InputError("evaluate --human: expected --filled FILE too (the labels it checks)")
    options: dict[str, Any] = {
        "relevance_threshold": relevance_threshold,
        "missing": missing,
        "order": order,
        "duplicates": duplicates,
        "average": average,
        "chunk_map_path": chunk_map_path,
        "stream": stream,
        "ignore_identical_ids": ignore_identical_ids,
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qrels = read_qrels(qrels_path, unit=unit)
        evaluations = [score_run(qrels, path, names, unit=unit, **options) for path in run_paths]
        coverages = [
            judged_coverage(ev, path, judged_threshold)
            for path, ev in zip(run_paths, evaluations, strict=True)
        ]
        unjudged = warn_unjudged(coverages, judged_margin)
        if len(run_paths) > 1:
            report = _several_runs(evaluations, run_paths, pairs, alpha, seed, per_query)
        if filled_path is not None:
            from ragaudit.labels.fill import merge_labels
            from ragaudit.reports.labels_fill import filled_evaluation_report

            filled = read_qrels(filled_path, unit=unit)
            after = score_run(merge_labels(qrels, filled), run_paths[0], names, unit=unit,
                              **options)  # fmt: skip
            corrected = ()
            if human_path is not None:
                corrected = _corrected(qrels, filled, read_qrels(human_path, unit=unit),
                                       run_paths[0], names, unit, options)  # fmt: skip
            report = filled_evaluation_report(
                evaluations[0], after, run_paths[0], filled_path, corrected
            )
    echo_warnings(str(w.message) for w in caught)  # after success only, as before
    if len(run_paths) == 1 and filled_path is None:
        report = evaluate_report(evaluations[0], per_query)
    emit(with_judged(report, coverages, unjudged), output_format)


def _corrected(
    qrels: Qrels,
    filled: Qrels,
    human: Qrels,
    run_path: str,
    names: list[str],
    unit: str,
    options: dict[str, Any],
) -> Any:
    """``--human``: the filled metrics corrected (labels.fill_ppi.correct_filled)."""
    from ragaudit.labels.fill_ppi import correct_filled
    from ragaudit.metrics.score_file import read_run_file

    if options["stream"] or options["average"] != "macro" or options["ignore_identical_ids"]:
        raise InputError("--human: a macro average of the run as read (no --stream, "
                         "--average micro or --ignore-identical-ids)")  # fmt: skip
    run = read_run_file(run_path, unit=unit, order=options["order"],
                        duplicates=options["duplicates"],
                        chunk_map_path=options["chunk_map_path"])  # fmt: skip
    return correct_filled(
        qrels, filled, human, run, names,
        relevance_threshold=options["relevance_threshold"], missing=options["missing"],
    )  # fmt: skip


def _several_runs(
    evaluations: list[Evaluation],
    paths: tuple[str, ...],
    pairs: str,
    alpha: float,
    seed: int,
    per_query: bool,
) -> Any:
    """The multi-run report: every metric's runs compared in pairs, Holm-adjusted."""
    from pathlib import Path

    from ragaudit.reports.multirun import multirun_report
    from ragaudit.stats.pairwise import compare_all_metrics

    runs = [
        ev.to_per_question(Path(path).stem, path)
        for path, ev in zip(paths, evaluations, strict=True)
    ]
    metrics = list(evaluations[0].means)
    matrices = compare_all_metrics(runs, metrics, pairs=pairs, confidence=1.0 - alpha, seed=seed)
    return multirun_report(evaluations, matrices, list(paths), per_query)
