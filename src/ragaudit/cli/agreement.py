"""``ragaudit agreement``: do two labellers agree beyond chance?"""

from __future__ import annotations

import click

from ragaudit.cli._options import emit, format_option

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]


@click.command("agreement")
@click.argument("labels_a", type=click.Path(dir_okay=False))
@click.argument("labels_b", type=click.Path(dir_okay=False))
@click.option(
    "--threshold",
    type=int,
    default=None,
    help="Collapse grades to relevant (grade >= T) / not relevant first.",
)
@format_option()
def command(labels_a: str, labels_b: str, threshold: int | None, output_format: str) -> None:
    """Cohen's kappa, quadratic-weighted kappa and raw agreement of two label files.

    Each file is TREC qrels (qid 0 item grade), JSONL ({"qid", "item"|"doc_id"|"chunk_id",
    "grade"}), JSON/YAML {qid: {item: grade}} or a ragaudit chunk-label YAML.  Only items both
    labelled are compared (chunk-label files: absent chunks of a labelled question are 0).
    """
    from ragaudit.labels.format import read_label_file
    from ragaudit.reports.stats import agreement_report
    from ragaudit.stats.agreement import label_agreement

    qrels_a, implicit_a = read_label_file(labels_a)
    qrels_b, implicit_b = read_label_file(labels_b)
    result = label_agreement(
        qrels_a, qrels_b, threshold=threshold, implicit_zero=implicit_a and implicit_b
    )
    emit(agreement_report(result, labels_a, labels_b), output_format)
