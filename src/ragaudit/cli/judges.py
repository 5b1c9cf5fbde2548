"""``ragaudit judges``: measure a judge before trusting its numbers (``stress``, ``audit``)."""

from __future__ import annotations

import contextlib
from typing import Any

import click

from ragaudit.cli._llm_options import add_llm_options, llm_config_from_cli
from ragaudit.cli._options import corpus_option, emit, format_option, quiet_option, seed_option
from ragaudit.cli.judges_audit import command as audit
from ragaudit.exceptions import InputError

# Library modules are imported inside the command, so `--help` stays instant
# (tests/cli/test_lazy_imports.py).

__all__ = ["command"]

_JUDGES = ("offline", "llm")


@click.group("judges")
def command() -> None:
    """Judges: stress-test one on labelled rewrites, audit its biases on a run's answers."""


@command.command("stress", short_help="Measure judges on labelled rewrites of reference answers.")
@click.argument("golden", required=False, type=click.Path(dir_okay=False))
@corpus_option("The golden set's corpus (default: the bundled one when GOLDEN is omitted). "
               "Gives the judge's context, the added sentences and the other names.")  # fmt: skip
@click.option(
    "--judge", "judge_names", multiple=True, default=("offline",), show_default=True,
    help="A judge to test (repeatable): offline, or llm (the LLM correctness judge, cached; "
    "needs --llm-base-url and --llm-model or their environment variables).",
)  # fmt: skip
@click.option(
    "--families", default="all", show_default=True,
    help="Comma-separated families of rewrite to make (see above), or all.",
)  # fmt: skip
@seed_option()
@click.option("--dry-run", is_flag=True,
              help="With --judge llm: print the calls, tokens (chars/4 estimate) and cost, "
              "send nothing.")  # fmt: skip
@click.option(
    "--min-accuracy", type=click.FloatRange(0, 1), default=None,
    help="Exit 1 when a family's decided accuracy is below this (e.g. 0.97).",
)  # fmt: skip
@click.option(
    "--min-decided", type=click.FloatRange(0, 1), default=None,
    help="Exit 1 when the decided share of the meaning-kept variants is below this (e.g. 0.85).",
)  # fmt: skip
@click.option(
    "--all-examples",
    is_flag=True,
    help="List every misjudged variant in the text output (default: the first 10).",
)
@quiet_option()
@format_option()
@add_llm_options
def stress(
    golden: str | None,
    corpus_dir: str | None,
    judge_names: tuple[str, ...],
    families: str,
    seed: int,
    dry_run: bool,
    min_accuracy: float | None,
    min_decided: float | None,
    all_examples: bool,
    quiet: bool,
    output_format: str,
    judge_repeats: int,
    **llm_options: Any,
) -> None:
    """Rewrite each reference answer of GOLDEN (default: the bundled benchmark) into labelled
    variants and measure each judge on them, per family of rewrite.

    Meaning kept (should be judged correct): number words, unit conversions, currency names,
    date rewrites, reordered clauses, an added true sentence of the source document.  Meaning
    broken (should be judged wrong): a changed number, unit, currency, rate, weekday or month,
    another name of the corpus, swapped values, a flipped polarity, a dropped fact, a refusal.
    Prints per family the decided share and, among decided verdicts, the specificity (kept)
    or sensitivity (broken), with exact intervals.

    Exit codes: 0 done (or every target met), 1 a --min-accuracy or --min-decided target
    missed, 2 bad input.
    """
    unknown = [j for j in judge_names if j not in _JUDGES]
    if unknown:
        raise InputError(f"--judge: expected offline or llm, found {unknown[0]!r}")
    if dry_run and "llm" not in judge_names:
        raise InputError("--dry-run: estimates the LLM judge's calls; add --judge llm")
    from ragaudit.judges.stress import FAMILIES

    chosen = FAMILIES if families == "all" else tuple(
        f.strip() for f in families.split(",") if f.strip())  # fmt: skip
    wrong = [f for f in chosen if f not in FAMILIES]
    if wrong or not chosen:
        raise InputError(f"--families: expected names among {', '.join(FAMILIES)} or all, "
                         f"found {wrong[0] if wrong else families!r}")  # fmt: skip
    from ragaudit.data.golden import load_golden
    from ragaudit.diagnose.judge_stress import (
        llm_dry_run,
        llm_judge,
        offline_judge,
        stress_cases,
        stress_test,
    )
    from ragaudit.pipeline.bundled import benchmark_paths
    from ragaudit.pipeline.corpus import load_corpus
    from ragaudit.reports.judge_stress import stress_report

    with contextlib.ExitStack() as stack:
        golden_path: Any = golden
        if golden is None:
            bundled_corpus, golden_path = stack.enter_context(benchmark_paths())
            corpus_dir = corpus_dir or str(bundled_corpus)
            name = "the bundled golden set"
        else:
            name = golden
        documents = None
        if corpus_dir is not None:
            documents = {d.doc_id: d.text for d in load_corpus(corpus_dir)}
        questions = load_golden(golden_path, doc_ids=None if documents is None else documents)
        judges: dict[str, Any] = {}
        for judge_name in dict.fromkeys(judge_names):
            if judge_name == "offline":
                judges["offline"] = offline_judge
            else:
                from ragaudit.cli._progress import progress_callback
                from ragaudit.llm.client import LLMClient

                config = llm_config_from_cli(**llm_options)
                client = stack.enter_context(LLMClient(config, stage="the LLM judge"))
                if dry_run:
                    from ragaudit.reports.judging import judge_dry_run_report

                    _, cases = stress_cases(list(questions), documents, families=chosen,
                                            seed=seed)  # fmt: skip
                    estimate = llm_dry_run(client, cases, repeats=judge_repeats)
                    emit(judge_dry_run_report(estimate, config.model), output_format)
                    return
                progress = progress_callback(stack, "judging", quiet=quiet)
                judges[f"llm ({client.model})"] = llm_judge(
                    client, repeats=judge_repeats, progress=progress
                )
        result = stress_test(list(questions), documents, judges, families=chosen, seed=seed,
                             golden_name=name)  # fmt: skip
    emit(stress_report(result, None if all_examples else 10), output_format)
    failed = result.gate(min_accuracy=min_accuracy, min_decided=min_decided)
    for line in failed:
        click.echo(f"ragaudit: gate failed: {line}", err=True)
    if failed:
        raise SystemExit(1)


command.add_command(audit)  # cli/judges_audit.py
