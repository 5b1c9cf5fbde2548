"""``ragaudit report``: the one page a RAG team reads (HTML, or Markdown for a pull request)."""

from __future__ import annotations

import click

from ragaudit.cli._options import (
    corpus_option,
    labels_option,
    out_file_option,
    seed_option,
    write_output,
)

__all__ = ["command"]


@click.command("report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@out_file_option(
    "File to write [default: report.html; report.md, .json, .csv or .txt by --format]."
)
@click.option(
    "--format", "output_format", type=click.Choice(["html", "markdown", "json", "csv", "table"]),
    default="html", show_default=True,
    help="html: one self-contained page; markdown: a pull-request comment; table: the terminal "
    "audit `demo` prints, with the funnel and comparison tables and the configuration; json, "
    "csv: the audit's numbers.  One report, one renderer.",
)  # fmt: skip
@labels_option(
    "Chunk-label file (ragaudit labels build): chunk-level recall, label bias, answer chunks "
    "in the drill-down."
)
@corpus_option(
    "The runs' corpus: shows the retrieved chunk texts in the drill-down, and checks the golden "
    "questions the first run carries against it (`golden check`'s findings and validity checks, "
    "each with n, interval and method)."
)
@click.option(
    "--cluster-by", "cluster_by", default=None, metavar="source|tag|FIELD",
    help="Clustered intervals per run (betting over whole clusters) beside the dashboard's, "
    "the design effect, and a line saying when it exceeds 1.1.",
)  # fmt: skip
@click.option(
    "--human", "human_paths", multiple=True, type=click.Path(dir_okay=False),
    help="Human verdicts on correctness (as for `ragaudit calibrate`), repeated once per run "
    "in order: shows the calibrated (PPI++) correctness next to the judge-only one.",
)  # fmt: skip
@click.option(
    "--max-drilldowns", type=click.IntRange(min=0), default=50, show_default=True,
    help="Failing questions opened per stage and run (the first ones; the rest are counted, and "
    "the stage table's id lists are cut to as many): keeps a 200,000-question page small.",
)  # fmt: skip
@click.option(
    "--allow-different-data", is_flag=True,
    help="Compare runs whose corpus or golden set differ from the first run's (refused "
    "otherwise: the questions are not the same experiment).",
)  # fmt: skip
@click.option(
    "--judged-threshold", type=click.FloatRange(0, 1), default=0.5, show_default=True,
    help="The dashboard shows judged@k (share of the top k that carries a label); questions "
    "below this share are named in a warning.",
)  # fmt: skip
@click.option(
    "--judged-margin", type=click.FloatRange(0, 1), default=0.1, show_default=True,
    help="Note a run whose judged@k differs from the first run's by more (the comparison then "
    "favours the run more like the one the labels came from).",
)  # fmt: skip
@seed_option()
@click.option(
    "--resamples", type=click.IntRange(min=1), default=2000, show_default=True,
    help="Resamples of the funnel's bootstrap columns (not shown on the page); the paired "
    "comparison uses 10,000, as compare does.",
)  # fmt: skip
def command(
    runs: tuple[str, ...],
    out_path: str | None,
    output_format: str,
    labels_path: str | None,
    corpus_dir: str | None,
    cluster_by: str | None,
    human_paths: tuple[str, ...],
    max_drilldowns: int,
    allow_different_data: bool,
    judged_threshold: float,
    judged_margin: float,
    seed: int,
    resamples: int,
) -> None:
    """One page for saved RUNS: dashboard, funnel, failing questions, label bias, comparison.

    The dashboard shows the chapter's six numbers (wrong abstention split in two, p95 latency
    and $/question), precision@k and judged@k (the labelled share of the top k) with 95%
    intervals, n and the minimum detectable effect;
    every failing question opens to its retrieved chunks, answer and judge verdicts.  With two
    or more runs each later run is compared with the first (paired tests, Holm-adjusted,
    the funnels stage by stage, and every configuration field that differs).
    With --cluster-by each run gets clustered intervals; with --human, its correctness
    calibrated against people (PPI++).  A run that carries a judges audit (`ragaudit judges
    audit RUN --save OUT`) gets a "judge audit" section.  The page has no scripts and no
    external resources; the same inputs give the same bytes.
    """
    from ragaudit.data.human_grades import read_human_grades_file
    from ragaudit.data.records import load_saved_runs
    from ragaudit.diagnose.audit import build_audit
    from ragaudit.labels.format import load_chunk_labels
    from ragaudit.pipeline.corpus import chunk_texts

    saved = load_saved_runs(runs)
    labels = None if labels_path is None else load_chunk_labels(labels_path)
    texts = None if corpus_dir is None else chunk_texts(corpus_dir, saved[0].config)
    human = [read_human_grades_file(path) for path in human_paths]
    audit = build_audit(
        saved, labels=labels, chunk_texts=texts, seed=seed, n_resamples=resamples,
        cluster_by=cluster_by, human=human, max_drilldowns=max_drilldowns,
        allow_different_data=allow_different_data, judged_threshold=judged_threshold,
        judged_margin=judged_margin,
    )  # fmt: skip
    from ragaudit.reports.audit_page import audit_report
    from ragaudit.reports.renderer import render

    if corpus_dir is not None:
        from dataclasses import replace

        from ragaudit.pipeline.golden_check import run_golden_check

        audit = replace(audit, golden_check=run_golden_check(saved[0], corpus_dir))
    text = render(audit_report(audit, detail=True), output_format)
    suffix = {"markdown": "md", "table": "txt"}.get(output_format, output_format)
    write_output(text, out_path, default=f"report.{suffix}")
