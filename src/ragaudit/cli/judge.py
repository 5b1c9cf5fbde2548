"""``ragaudit judge``: add LLM verdicts (sufficiency, correctness, faithfulness, citations,
relevance) to a saved run, with a dry-run cost estimate first if you want one."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import click

from ragaudit.cli._llm_options import add_llm_options, llm_config_from_cli
from ragaudit.cli._options import (
    corpus_option,
    emit,
    format_option,
    out_file_option,
    quiet_option,
)
from ragaudit.cli._progress import progress_callback

__all__ = ["command"]


@click.command(name="judge")
@click.argument("run", type=click.Path(dir_okay=False))
@corpus_option("The corpus the run was made from (chunks are rebuilt from it).", required=True)
@click.option(
    "--judges",
    "judge_names",
    default="all",
    show_default=True,
    help="Comma-separated: sufficiency,correctness,faithfulness,citations,relevance.",
)
@out_file_option(
    "Write the judged run here [default: update RUN in place, atomically].",
    stdout=False,
    skip=("run",),
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the calls, tokens (chars/4 estimate) and cost, send nothing.",
)
@click.option(
    "--only-undecided",
    is_flag=True,
    help="Send only the answers the offline judges left undecided (judges.reasons); the "
    "others keep their offline verdicts.",
)
@quiet_option()
@format_option()
@add_llm_options
def command(
    run: str,
    corpus_dir: str,
    judge_names: str,
    out_path: str | None,
    dry_run: bool,
    only_undecided: bool,
    quiet: bool,
    output_format: str,
    judge_repeats: int,
    **llm_options: Any,
) -> None:
    """Judge every answer of a saved RUN with an LLM and store the verdicts in the run.

    Verdicts go into each row's `judges` (with prompt versions and the judge model), metrics
    into `metrics`; a judge that gives no valid verdict records `judge_error` and is counted
    apart, never as right or wrong.  Replies are cached: a rerun sends nothing.
    """
    from ragaudit.data.records import load_saved_run
    from ragaudit.judges.llm import JUDGE_NAMES, METRICS_OF
    from ragaudit.pipeline.corpus import run_chunks
    from ragaudit.pipeline.llm_stages import estimate_llm_judging, judge_with_llm
    from ragaudit.reports.runs import judge_report  # numpy: not for `judge --help`

    names = (
        list(JUDGE_NAMES)
        if judge_names == "all"
        else [n.strip() for n in judge_names.split(",") if n.strip()]
    )
    saved = load_saved_run(run)
    chunks = run_chunks(corpus_dir, saved.config)
    config = llm_config_from_cli(**llm_options)
    if dry_run:
        from ragaudit.reports.judging import judge_dry_run_report

        estimate = estimate_llm_judging(
            saved, chunks, config, repeats=judge_repeats, judge_names=names,
            only_undecided=only_undecided,
        )  # fmt: skip
        emit(judge_dry_run_report(estimate, config.model), output_format)
        return
    target = Path(out_path) if out_path else Path(run)
    saved = saved.replace(path=str(target))
    usage: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        progress = progress_callback(stack, "judging", quiet=quiet)

        # One code path with `ragaudit run --judges llm`: the summary is recomputed and the
        # generator's share of the LLM cost is kept next to the judges'.
        judged, report = judge_with_llm(
            saved, chunks, config, repeats=judge_repeats, judge_names=names,
            progress=progress, usage=usage, only_undecided=only_undecided,
        )  # fmt: skip
    wanted = [m for n in names for m in METRICS_OF[n]]
    emit(
        judge_report(judged.name, report, wanted, config, usage["judges"], str(target)),
        output_format,
    )
