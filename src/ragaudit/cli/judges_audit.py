"""``ragaudit judges audit RUN``: paired bias tests of a judge on a saved run's own answers."""

from __future__ import annotations

from typing import Any

import click

from ragaudit.cli._llm_options import add_llm_options, llm_config_from_cli
from ragaudit.cli._options import corpus_option, emit, format_option, seed_option

# Library modules are imported inside the command, so `--help` stays instant.

__all__ = ["command"]


@click.command("audit")
@click.argument("run", type=click.Path(dir_okay=False))
@corpus_option("The corpus the run was made from (contexts and padding come from it).",
               required=True)  # fmt: skip
@click.option(
    "--judge", "judge_kind", type=click.Choice(["offline", "llm"]), default="offline",
    show_default=True, help="Audit the offline judges or the LLM judges (--llm-*).",
)  # fmt: skip
@click.option(
    "--llm-judges", default="correctness,sufficiency", show_default=True,
    help="With --judge llm: correctness plus any of sufficiency, faithfulness.",
)  # fmt: skip
@click.option(
    "--dry-run", is_flag=True,
    help="With --judge llm: print the calls, cache hits, tokens and cost; send nothing.",
)  # fmt: skip
@seed_option()
@format_option()
@add_llm_options
def command(
    run: str,
    corpus_dir: str,
    judge_kind: str,
    llm_judges: str,
    dry_run: bool,
    seed: int,
    output_format: str,
    judge_repeats: int,
    **llm_options: Any,
) -> None:
    """Is the judge biased?  Paired tests on the answers of a saved RUN.

    Each answer is judged as given and changed one way that should not matter: padded with a
    true but irrelevant corpus sentence (verbosity), its retrieved chunks reversed (context
    order, for verdicts that read the context), a refusal in two wordings (refusal
    phrasing), the same request sent again (repeat noise); an LLM judge of the generator's
    model or family is also compared with the offline judge (self-preference).  Every row is
    a paired difference with the interval, exact p-value and verdict words of `compare`.

    The seed draws the padding sentences and is printed.  LLM calls go through the cache;
    --dry-run prints their cost first.
    """
    from ragaudit.data.records import load_saved_run
    from ragaudit.diagnose.judge_audit import OfflineAuditJudge, audit_judge
    from ragaudit.pipeline.corpus import run_chunks
    from ragaudit.reports.judge_audit import judge_audit_report

    saved = load_saved_run(run)
    chunks = run_chunks(corpus_dir, saved.config)
    if judge_kind == "offline":
        if dry_run:
            raise click.UsageError("--dry-run needs --judge llm (the offline judges cost nothing)")
        emit(judge_audit_report(audit_judge(saved, chunks, OfflineAuditJudge(), seed=seed)),
             output_format)  # fmt: skip
        return
    from ragaudit.diagnose.judge_audit_llm import LLMAuditJudge, audit_cost
    from ragaudit.judges.llm import LLMJudges
    from ragaudit.llm import LLMClient

    names = [n.strip() for n in llm_judges.split(",") if n.strip()]
    config = llm_config_from_cli(**llm_options)
    with LLMClient(config, stage="the audited LLM judge") as client:
        judge = LLMAuditJudge(LLMJudges(client, names))
        if dry_run:
            from ragaudit.reports.judging import judge_dry_run_report

            emit(judge_dry_run_report(audit_cost(saved, chunks, judge, seed=seed), client.model),
                 output_format)  # fmt: skip
            return
        audit = audit_judge(saved, chunks, judge, seed=seed)
    emit(judge_audit_report(audit), output_format)
