"""``ragaudit judges audit RUN``: paired bias tests of a judge on a saved run's own answers."""

from __future__ import annotations

from typing import Any

import click

from ragaudit.cli._llm_options import add_llm_options, llm_config_from_cli
from ragaudit.cli._options import (
    corpus_option,
    emit,
    format_option,
    guards_output,
    seed_option,
)

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
@click.option(
    "--save", "save_path", type=click.Path(dir_okay=False), default=None,
    help="Also write a copy of RUN carrying the audit (.json or .parquet, atomically; never "
    "RUN itself): `ragaudit report` then shows its \"judge audit\" section.",
)  # fmt: skip
@seed_option()
@format_option()
@add_llm_options
@guards_output("save_path", "--save")
def command(
    run: str,
    corpus_dir: str,
    judge_kind: str,
    llm_judges: str,
    dry_run: bool,
    save_path: str | None,
    seed: int,
    output_format: str,
    judge_repeats: int,
    **llm_options: Any,
) -> None:
    """Is the judge biased?  Paired tests on the answers of a saved RUN.

    Each answer is judged as given and changed one way that should not matter: padded with a
    true but irrelevant corpus sentence (verbosity), its retrieved chunks reversed (context
    order, for verdicts that read the context), a refusal in two wordings (refusal
    phrasing), the same request sent again (repeat noise: R = --judge-repeats sends, at
    least 2, and the share of questions whose R verdicts agree); a pairwise judge (the offline
    verdicts, or the LLM with --judge llm) sees the run's answer and the reference answer,
    then the two swapped (position); an LLM judge of the generator's model or family is also
    compared with the offline judge (self-preference).  Every row is a paired difference with
    the interval, exact p-value and verdict words of `compare`.

    The seed draws the padding sentences and is printed.  LLM calls go through the cache;
    --dry-run prints their cost first.  --save writes a copy of RUN carrying the audit.
    """
    from ragaudit.data.records import load_saved_run, write_saved_run
    from ragaudit.diagnose.judge_audit import OfflineAuditJudge, audit_judge
    from ragaudit.judges.pairwise import OfflinePairwiseJudge
    from ragaudit.pipeline.corpus import run_chunks
    from ragaudit.reports.judge_audit import judge_audit_report

    if judge_repeats < 1:
        raise click.BadParameter(f"expected R >= 1, found {judge_repeats}",
                                 param_hint="--judge-repeats")  # fmt: skip
    if dry_run and save_path is not None:
        raise click.UsageError("--dry-run sends nothing, so there is no audit to --save")
    repeats = max(judge_repeats, 2)  # the repeat test needs a second send
    saved = load_saved_run(run)
    chunks = run_chunks(corpus_dir, saved.config)
    if judge_kind == "offline":
        if dry_run:
            raise click.UsageError("--dry-run needs --judge llm (the offline judges cost nothing)")
        audit = audit_judge(saved, chunks, OfflineAuditJudge(), seed=seed,
                            pairwise=OfflinePairwiseJudge(), repeats=repeats)  # fmt: skip
    else:
        from ragaudit.diagnose.judge_audit_llm import LLMAuditJudge, audit_cost
        from ragaudit.judges.llm import LLMJudges
        from ragaudit.judges.pairwise import LLMPairwiseJudge
        from ragaudit.llm import LLMClient

        names = [n.strip() for n in llm_judges.split(",") if n.strip()]
        config = llm_config_from_cli(**llm_options)
        with LLMClient(config, stage="the audited LLM judge") as client:
            judge, pairwise = LLMAuditJudge(LLMJudges(client, names)), LLMPairwiseJudge(client)
            if dry_run:
                from ragaudit.reports.judging import judge_dry_run_report

                cost = audit_cost(saved, chunks, judge, seed=seed, pairwise=pairwise,
                                  repeats=repeats)  # fmt: skip
                emit(judge_dry_run_report(cost, client.model), output_format)
                return
            audit = audit_judge(saved, chunks, judge, seed=seed, pairwise=pairwise,
                                repeats=repeats)  # fmt: skip
    emit(judge_audit_report(audit), output_format)
    if save_path is not None:
        write_saved_run(save_path, saved.replace(judge_audit=audit.to_dict()))
        click.echo(f"saved: {save_path} (run {saved.name} with its judge audit)", err=True)
