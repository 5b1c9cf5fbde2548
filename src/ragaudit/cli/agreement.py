"""``ragaudit agreement``: do two labellers agree beyond chance?"""

from __future__ import annotations

import click

from ragaudit.cli._options import format_option, render_json
from ragaudit.data.formats import declared_format, read_labels
from ragaudit.data.qrels import Qrels
from ragaudit.stats.agreement import AgreementResult, label_agreement

__all__ = ["command", "read_label_file", "render_agreement"]


def read_label_file(path: str) -> tuple[Qrels, bool]:
    """Labels for ``agreement``, and whether absent items mean grade 0.

    Chunk-label files (``format: ragaudit.chunk_labels``) list positive grades only, so
    their absent chunks count as 0; any other format goes through the shared reader.
    """
    if declared_format(path) == "ragaudit.chunk_labels":
        from ragaudit.labels.format import load_chunk_labels

        return load_chunk_labels(path).to_qrels(), True
    return read_labels(path), False


def render_agreement(result: AgreementResult, name_a: str, name_b: str, output_format: str) -> str:
    """Render an :class:`~ragaudit.stats.AgreementResult` as a table or JSON."""
    if output_format == "json":
        return render_json(
            {
                "labels_a": name_a,
                "labels_b": name_b,
                "n_items": result.n_items,
                "n_questions": result.n_questions,
                "only_a": result.only_a,
                "only_b": result.only_b,
                "raw_agreement": result.raw_agreement,
                "kappa": result.kappa,
                "weighted_kappa_quadratic": result.weighted_kappa,
                "categories": list(result.categories),
                "confusion": [list(row) for row in result.confusion],
            }
        )
    lines = [
        f"A = {name_a}   B = {name_b}",
        f"items labelled by both: {result.n_items} across {result.n_questions} questions "
        f"(excluded: {result.only_a} only in A, {result.only_b} only in B)",
        "",
        f"raw agreement              {result.raw_agreement:.3f}",
        f"Cohen's kappa              {result.kappa:.3f}",
        f"quadratic-weighted kappa   {result.weighted_kappa:.3f}",
        "",
        "grade A \\ grade B" + "".join(f"{c:>7}" for c in result.categories),
    ]
    for grade, row in zip(result.categories, result.confusion, strict=True):
        lines.append(f"{grade:>17}" + "".join(f"{x:>7}" for x in row))
    return "\n".join(lines) + "\n"


@click.command("agreement")
@click.argument("labels_a", type=click.Path(dir_okay=False))
@click.argument("labels_b", type=click.Path(dir_okay=False))
@click.option(
    "--threshold",
    type=int,
    default=None,
    help="Collapse grades to relevant (grade >= T) / not relevant first.",
)
@format_option("table", "json")
def command(labels_a: str, labels_b: str, threshold: int | None, output_format: str) -> None:
    """Cohen's kappa, quadratic-weighted kappa and raw agreement of two label files.

    Each file is TREC qrels (qid 0 item grade), JSONL ({"qid", "item"|"doc_id"|"chunk_id",
    "grade"}), JSON/YAML {qid: {item: grade}} or a ragaudit chunk-label YAML.  Only items both
    labelled are compared (chunk-label files: absent chunks of a labelled question are 0).
    """
    qrels_a, implicit_a = read_label_file(labels_a)
    qrels_b, implicit_b = read_label_file(labels_b)
    result = label_agreement(
        qrels_a, qrels_b, threshold=threshold, implicit_zero=implicit_a and implicit_b
    )
    click.echo(render_agreement(result, labels_a, labels_b, output_format), nl=False)
