"""``ragaudit evaluate``: score a run file against a labels file."""

from __future__ import annotations

import warnings

import click

from ragaudit.cli._options import emit, format_option
from ragaudit.metrics.registry import list_metrics

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]

DEFAULT_METRICS = ("ndcg@10", "recall@5", "precision@5", "mrr", "map")


def _metric_help() -> str:
    names = ", ".join(info.pattern for info in list_metrics())
    return f"Metric to compute (repeatable). Default: {', '.join(DEFAULT_METRICS)}. Valid: {names}."


@click.command("evaluate")
@click.option("--qrels", "qrels_path", required=True, help="Labels: TREC qrels or JSONL/JSON.")
@click.option("--run", "run_path", required=True, help="Run: TREC run or JSONL/JSON.")
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
@format_option()
def command(
    qrels_path: str,
    run_path: str,
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
    output_format: str,
) -> None:
    """Score a run against relevance labels (trec_eval-exact for trec_eval's metrics)."""
    from ragaudit.data.formats import read_chunk_map, read_qrels, read_run
    from ragaudit.metrics.evaluate import evaluate
    from ragaudit.metrics.stream import evaluate_stream
    from ragaudit.reports.metrics import evaluate_report

    names = list(metrics) or list(DEFAULT_METRICS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qrels = read_qrels(qrels_path, unit=unit)
        if stream:
            if chunk_map_path or average != "macro":
                raise click.UsageError("--stream scores a TREC run as is: macro averages only")
            ev = evaluate_stream(
                qrels,
                run_path,
                names,
                relevance_threshold=relevance_threshold,
                missing=missing,
                order=order,
                duplicates=duplicates,
            )
        else:
            run_unit = "chunk" if chunk_map_path else unit
            run = read_run(run_path, unit=run_unit, order=order, duplicates=duplicates)
            if chunk_map_path:
                if unit != "doc":
                    raise click.UsageError(
                        "--chunk-map lifts a chunk run to documents: use --unit doc"
                    )
                run = run.to_docs(read_chunk_map(chunk_map_path))
            ev = evaluate(
                qrels,
                run,
                names,
                relevance_threshold=relevance_threshold,
                missing=missing,
                average=average,
            )
    for warning in caught:
        click.echo(f"ragaudit: warning: {warning.message}", err=True)
    emit(evaluate_report(ev, per_query), output_format)
