"""``ragaudit run``: evaluate one pipeline configuration on a golden set and save the run."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import replace
from typing import Any

import click

from ragaudit.cli._llm_options import add_llm_options, llm_config_from_cli
from ragaudit.cli._options import seed_option
from ragaudit.data.records import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.pipeline.chunking import CHUNKERS
from ragaudit.pipeline.config import JUDGE_MODES, RunConfig
from ragaudit.pipeline.generators import GENERATORS
from ragaudit.pipeline.harness import run_pipeline
from ragaudit.pipeline.llm_stages import plan_llm_run
from ragaudit.pipeline.retrievers import RETRIEVERS
from ragaudit.pipeline.summary import RETRIEVAL_METRICS, count_judge_errors

__all__ = ["command", "format_run_summary"]


def _fraction(numerator: int, denominator: int) -> str:
    if denominator == 0:
        return "   n/a"
    return f"{numerator:>3}/{denominator:<3} = {numerator / denominator:.3f}"


def format_run_summary(saved: SavedRun) -> str:
    """The end-of-run report: retrieval means (stating k, unit and averaging) and end to end.

    >>> row = {"id": "q1", "answerable": True, "metrics": {"hit@k": 1.0, "recall@k": 1.0,
    ...        "precision@k": 0.5, "mrr@k": 1.0, "ndcg@k": 1.0, "map@k": 1.0, "answered": 1.0,
    ...        "correct": 0.0}}
    >>> print(format_run_summary(SavedRun("k2_cs800", {"k": 2, "seed": 0}, [row])))
    k2_cs800  (1 questions: 1 answerable, 0 unanswerable; seed 0)
      retrieval, document level, k=2, macro mean over 1 answerable questions
        hit@2  recall@2  precision@2  mrr@2  ndcg@2  map@2
        1.000     1.000        0.500  1.000   1.000  1.000
      end to end (offline judges), answerable questions
        answered    1/1   = 1.000
        correct     0/1   = 0.000
      judge errors  none
    """
    k = saved.config["k"]
    rows = saved.rows
    answerable = [r for r in rows if r.get("answerable")]
    unanswerable = [r for r in rows if not r.get("answerable")]
    lines = [
        f"{saved.name}  ({len(rows)} questions: {len(answerable)} answerable, "
        f"{len(unanswerable)} unanswerable; seed {saved.config.get('seed')})"
    ]
    scored = [r for r in rows if r["metrics"].get("hit@k") is not None]
    if scored:
        names = [f"{family}@{k}" for family in RETRIEVAL_METRICS]
        means = [
            sum(r["metrics"][f"{family}@k"] for r in scored) / len(scored)
            for family in RETRIEVAL_METRICS
        ]
        lines.append(
            f"  retrieval, document level, k={k}, "
            f"macro mean over {len(scored)} answerable questions"
        )
        lines.append("    " + "  ".join(names))
        lines.append(
            "    " + "  ".join(f"{m:.3f}".rjust(len(n)) for n, m in zip(names, means, strict=True))
        )
        chunk_scored = [r for r in scored if r["metrics"].get("chunk_hit@k") is not None]
        if chunk_scored:
            chunk_means = [
                sum(r["metrics"][f"chunk_{family}@k"] for r in chunk_scored) / len(chunk_scored)
                for family in RETRIEVAL_METRICS
            ]
            lines.append(
                f"  retrieval, chunk level, k={k}, macro mean over {len(chunk_scored)} questions "
                "with chunk labels"
            )
            lines.append("    " + "  ".join(names))
            lines.append(
                "    "
                + "  ".join(
                    f"{m:.3f}".rjust(len(n)) for n, m in zip(names, chunk_means, strict=True)
                )
            )
    judged = [r for r in answerable if r["metrics"].get("answered") is not None]
    judged_by = "LLM" if saved.config.get("judges") == "offline+llm" else "offline"
    if judged:
        answered = sum(int(r["metrics"]["answered"]) for r in judged)
        decided = [r for r in judged if r["metrics"].get("correct") is not None]
        correct = sum(int(r["metrics"]["correct"]) for r in decided)
        lines.append(f"  end to end ({judged_by} judges), answerable questions")
        lines.append(f"    answered  {_fraction(answered, len(judged))}")
        lines.append(f"    correct   {_fraction(correct, len(decided))}")
    refusals = [r for r in unanswerable if r["metrics"].get("correct") is not None]
    if refusals:
        abstained = sum(int(r["metrics"]["correct"]) for r in refusals)
        lines.append(
            f"  unanswerable questions correctly refused  {_fraction(abstained, len(refusals))}"
        )
    if judged_by == "LLM":
        lines.append("  LLM judges, mean over the questions each judge decided")
        for metric in _LLM_METRICS:
            values = [r["metrics"][metric] for r in rows if r["metrics"].get(metric) is not None]
            if values:
                mean = sum(float(v) for v in values) / len(values)
                lines.append(f"    {metric:<17} {mean:.3f}  over {len(values)}")
    errors = sum(1 for r in rows if r.get("error"))
    if errors:
        lines.append(f"  {errors} questions failed to generate (see each row's 'error')")
    judge_errors = count_judge_errors(rows)
    lines.append(
        "  judge errors  "
        + (
            ", ".join(f"{judge} {n}" for judge, n in judge_errors.items())
            + " (excluded from the means, see each row's 'judge_error')"
            if judge_errors
            else "none"
        )
    )
    llm = saved.summary.get("llm")
    if isinstance(llm, dict):
        stages = llm.get("by_stage") or {}
        detail = ", ".join(f"{name} {cost.get('calls', 0)}" for name, cost in stages.items())
        lines.append(
            f"  LLM {llm.get('model')}: {llm.get('calls', 0)} calls"
            + (f" ({detail})" if detail else "")
            + f", tokens {llm.get('input_tokens', 0)} in / {llm.get('output_tokens', 0)} out, "
            f"cost {_money(llm.get('cost_usd'))} (cached replies included)"
        )
    return "\n".join(lines)


_LLM_METRICS = (
    "sufficiency",
    "correct",
    "completeness",
    "faithfulness",
    "citation_acc",
    "answer_relevance",
)


def _money(value: float | None) -> str:
    return "unknown (model not in the price table)" if value is None else f"${value:.4f}"


def _invocation_line(usage: dict[str, Any]) -> str:
    """What this invocation actually sent (a fully cached rerun sends nothing)."""
    stages = [u for u in usage.values() if isinstance(u, dict)]
    requests = sum(int(u.get("http_requests", 0)) for u in stages)
    hits = sum(int(u.get("cache_hits", 0)) for u in stages)
    calls = sum(int(u.get("calls", 0)) for u in stages)
    tokens_in = sum(int(u.get("input_tokens", 0)) for u in stages)
    tokens_out = sum(int(u.get("output_tokens", 0)) for u in stages)
    costs = [u.get("cost_usd") for u in stages]
    cost = None if any(c is None for c in costs) else sum(float(c) for c in costs if c is not None)
    return (
        f"  this invocation: {calls} LLM calls ({hits} cached, {requests} HTTP requests), "
        f"tokens sent {tokens_in} in / {tokens_out} out, cost {_money(cost)}"
    )


def _print_dry_run(plan: dict[str, Any]) -> None:
    lines = [f"dry run: nothing sent, nothing written ({plan['n_questions']} questions)"]
    for stage in ("generator", "judges"):
        estimate = plan.get(stage)
        if estimate is None:
            continue
        lines.append(
            f"  {stage:<9} {estimate['calls']} calls ({estimate['cached_calls']} cached), about "
            f"{estimate['estimated_input_tokens']} input + "
            f"{estimate['estimated_output_tokens']} output tokens, cost "
            f"{_money(estimate['estimated_cost_usd'])} with {estimate['model']}"
        )
    lines.append(
        f"  total     {plan['calls']} calls ({plan['cached_calls']} cached), about "
        f"{plan['estimated_input_tokens']} input + {plan['estimated_output_tokens']} output "
        f"tokens, cost {_money(plan['estimated_cost_usd'])}"
    )
    lines.append(
        "  (tokens: chars/4 estimate, schema retries excluded; judge calls for answers not yet "
        "generated assume a cited, non-refusing answer: an upper bound)"
    )
    click.echo("\n".join(lines))


@click.command(name="run")
@click.option(
    "--corpus",
    type=click.Path(file_okay=False),
    required=True,
    help="Directory of .md/.txt documents (doc id = file stem).",
)
@click.option(
    "--golden", type=click.Path(dir_okay=False), required=True, help="Golden-set YAML file."
)
@click.option(
    "--k",
    "k",
    type=int,
    default=5,
    show_default=True,
    help="Chunks given to the generator (and the cut-off of the metrics).",
)
@click.option(
    "--chunk-size", type=int, default=800, show_default=True, help="Characters per chunk."
)
@click.option(
    "--chunk-overlap",
    type=int,
    default=100,
    show_default=True,
    help="Characters shared by consecutive chunks.",
)
@click.option("--chunker", type=click.Choice(CHUNKERS), default="fixed", show_default=True)
@click.option("--retriever", type=click.Choice(RETRIEVERS), default="bm25", show_default=True)
@click.option(
    "--run-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Precomputed TREC/JSONL run (chunk or doc ids) instead of a retriever.",
)
@click.option(
    "--embedding-model",
    default=None,
    help="sentence-transformers model path for --retriever dense/qdrant.",
)
@click.option("--qdrant-url", default=None, help="Qdrant server (default: in-memory).")
@click.option(
    "--chunk-labels",
    "chunk_labels_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Chunk-label file (ragaudit labels build) for chunk_ metrics; same chunking.",
)
@click.option("--generator", type=click.Choice(GENERATORS), default="extractive", show_default=True)
@click.option("--name", default=None, help="Configuration name [default: k<K>_cs<SIZE>...].")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="ragaudit-results",
    show_default=True,
    help="Results directory.",
)
@click.option(
    "--limit",
    type=int,
    default=None,
    help="Only the first N questions (written to <name>.limit<N>.json).",
)
@click.option(
    "--timing/--no-timing",
    default=True,
    show_default=True,
    help="Record latency; --no-timing makes the saved file byte-identical across runs.",
)
@click.option(
    "--judges",
    type=click.Choice(JUDGE_MODES),
    default="offline",
    show_default=True,
    help="offline: keyword and number checks; llm: also the LLM judges (sufficiency, "
    "correctness, faithfulness, citations, relevance).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Estimate the LLM calls, tokens and cost of this run; send and write nothing.",
)
@seed_option()
@add_llm_options
def command(
    corpus: str,
    golden: str,
    k: int,
    chunk_size: int,
    chunk_overlap: int,
    chunker: str,
    retriever: str,
    run_file: str | None,
    embedding_model: str | None,
    qdrant_url: str | None,
    chunk_labels_file: str | None,
    generator: str,
    name: str | None,
    out_dir: str,
    limit: int | None,
    timing: bool,
    judges: str,
    dry_run: bool,
    seed: int,
    judge_repeats: int,
    **llm_options: Any,
) -> None:
    """Run a golden set through retrieve -> generate -> judge and save the run as JSON.

    An interrupted run resumes from <name>.partial.jsonl when rerun with the same options.
    With --generator openai or --judges llm, the --llm-* options (or the RAGAUDIT_LLM_*
    environment variables) name the endpoint; replies are cached, so a rerun sends nothing.
    """
    if judge_repeats != 1 and judges != "llm":
        raise InputError("--judge-repeats: only applies with --judges llm")
    llm_config = None
    if generator == "openai" or judges == "llm":
        if llm_options.get("llm_seed") is None:
            llm_options["llm_seed"] = seed  # one --seed drives every random procedure
        llm_config = llm_config_from_cli(**llm_options)
        if generator == "openai":
            llm_config.require_endpoint("the LLM generator")
        if judges == "llm":
            llm_config.require_endpoint("the LLM judges")
    run = RunConfig(
        corpus, golden, k=k, chunk_size=chunk_size, chunk_overlap=chunk_overlap,
        chunker=chunker, retriever=retriever, generator=generator, judges=judges,
        run_file=run_file, embedding_model=embedding_model, qdrant_url=qdrant_url, name=name,
        out_dir=out_dir, limit=limit, seed=seed, record_latency=timing,
        llm_config=llm_config, judge_repeats=judge_repeats,
    )  # fmt: skip
    if dry_run:
        if llm_config is None:
            click.echo("dry run: no LLM stage requested (--generator openai or --judges llm); "
                       "this run sends nothing")  # fmt: skip
            return
        plan = plan_llm_run(run)
        _print_dry_run(plan)
        return
    chunk_labels = None
    if chunk_labels_file is not None:
        from ragaudit.labels.format import load_chunk_labels

        expect = {"chunker": chunker, "chunk_size": chunk_size, "chunk_overlap": chunk_overlap}
        chunk_labels = load_chunk_labels(chunk_labels_file, expect=expect).to_qrels()
    with contextlib.ExitStack() as stack:
        bar: dict[str, Any] = {}

        def on_start(n: int) -> None:
            if sys.stderr.isatty():
                bar["bar"] = stack.enter_context(
                    click.progressbar(length=n, label="questions", file=sys.stderr)
                )

        def on_row(row: dict[str, Any]) -> None:
            if "bar" in bar:
                bar["bar"].update(1)

        def on_judge_progress(done: int, total: int) -> None:
            if not sys.stderr.isatty():
                return
            if "judge_bar" not in bar:
                bar["judge_bar"] = stack.enter_context(
                    click.progressbar(length=total, label="judging", file=sys.stderr)
                )
            bar["judge_bar"].update(1)

        usage: dict[str, Any] = {}

        saved = run_pipeline(
            replace(run, chunk_labels=chunk_labels),
            on_start=on_start,
            on_row=on_row,
            on_judge_progress=on_judge_progress,
            llm_usage=usage,
        )
    click.echo(format_run_summary(saved))
    if usage:
        click.echo(_invocation_line(usage))
    click.echo(f"saved: {saved.path}")
