"""``ragaudit judge``: add LLM verdicts (sufficiency, correctness, faithfulness, citations,
relevance) to a saved run, with a dry-run cost estimate first if you want one."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragaudit.cli._llm_options import add_llm_options, llm_config_from_cli
from ragaudit.exceptions import InputError

if TYPE_CHECKING:
    from ragaudit.data.chunks import Chunk

__all__ = ["command"]


def _run_chunks(corpus_dir: str, config: Mapping[str, Any]) -> list[Chunk]:
    """The corpus chunked the way the run was (corpus hash checked)."""
    from ragaudit.pipeline.chunking import chunk_documents
    from ragaudit.pipeline.corpus import corpus_sha256, load_corpus

    documents = load_corpus(corpus_dir)
    expected = config.get("corpus_sha256")
    found = corpus_sha256(documents)
    if expected and found != expected:
        raise InputError(
            f"--corpus {corpus_dir}: not the run's corpus (corpus_sha256 {found[:12]}, the run "
            f"has {str(expected)[:12]})"
        )
    try:
        size, overlap = int(config["chunk_size"]), int(config["chunk_overlap"])
    except (KeyError, TypeError, ValueError):
        raise InputError(
            "the run does not record chunk_size and chunk_overlap, so its chunks cannot be "
            "rebuilt from --corpus"
        ) from None
    chunker = str(config.get("chunker") or "fixed")
    return chunk_documents(documents, size, overlap, chunker)


def _money(value: float | None) -> str:
    return "unknown (model not in the price table)" if value is None else f"${value:.4f}"


@click.command(name="judge")
@click.argument("run", type=click.Path(dir_okay=False))
@click.option(
    "--corpus",
    "corpus_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="The corpus the run was made from (chunks are rebuilt from it).",
)
@click.option(
    "--judges",
    "judge_names",
    default="all",
    show_default=True,
    help="Comma-separated: sufficiency,correctness,faithfulness,citations,relevance.",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the judged run here [default: update RUN in place, atomically].",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the calls, tokens (chars/4 estimate) and cost, send nothing.",
)
@add_llm_options
def command(
    run: str,
    corpus_dir: str,
    judge_names: str,
    out_path: str | None,
    dry_run: bool,
    judge_repeats: int,
    **llm_options: Any,
) -> None:
    """Judge every answer of a saved RUN with an LLM and store the verdicts in the run.

    Verdicts go into each row's `judges` (with prompt versions and the judge model), metrics
    into `metrics`; a judge that gives no valid verdict records `judge_error` and is counted
    apart, never as right or wrong.  Replies are cached: a rerun sends nothing.
    """
    from ragaudit.data.records import RunDocument, load_saved_run
    from ragaudit.judges.llm import JUDGE_NAMES, METRICS_OF, LLMJudges, items_from_rows
    from ragaudit.llm.client import LLMClient
    from ragaudit.pipeline.llm_stages import judge_with_llm

    names = (
        list(JUDGE_NAMES)
        if judge_names == "all"
        else [n.strip() for n in judge_names.split(",") if n.strip()]
    )
    saved = load_saved_run(run)
    chunks = _run_chunks(corpus_dir, saved.config)
    config = llm_config_from_cli(**llm_options)
    if dry_run:
        texts = {c.chunk_id: c.text for c in chunks}
        with LLMClient(config, stage="the LLM judges") as client:
            judges = LLMJudges(client, names, repeats=judge_repeats)
            _, items = items_from_rows(saved.rows, texts)
            estimate = judges.dry_run(items)
        click.echo(
            f"dry run: {estimate.calls} calls ({estimate.cached_calls} cached), about "
            f"{estimate.input_tokens} input + {estimate.output_tokens} output tokens "
            f"(chars/4 estimate, schema retries excluded), cost {_money(estimate.cost_usd)} "
            f"with {config.model}"
        )
        return
    target = Path(out_path) if out_path else Path(run)
    document = RunDocument.from_saved_run(saved, path=str(target))
    usage: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        bar: Any = None

        def progress(done: int, total: int) -> None:
            nonlocal bar
            if bar is None and sys.stderr.isatty() and total:
                bar = stack.enter_context(
                    click.progressbar(length=total, label="judging", file=sys.stderr)
                )
            if bar is not None:
                bar.update(1)

        # One code path with `ragaudit run --judges llm`: the summary is recomputed and the
        # generator's share of the LLM cost is kept next to the judges'.
        report = judge_with_llm(
            document, chunks, config, repeats=judge_repeats, judge_names=names,
            progress=progress, usage=usage,
        )  # fmt: skip
    totals = usage["judges"]
    wanted = [m for n in names for m in METRICS_OF[n]]
    lines = [f"{document.name}: {report['n']} answers judged by {config.model} "
             f"(seed {config.seed}, temperature {config.temperature:g})"]  # fmt: skip
    for name in wanted:
        mean = report["means"][name]
        shown = "n/a" if mean is None else f"{mean:.3f}"
        lines.append(f"  {name:<18} {shown:>6}  over {report['n_decided'][name]} questions")
    errors = report["judge_errors"]
    lines.append(
        "  judge errors       "
        + (", ".join(f"{k} {v}" for k, v in errors.items()) if errors else "none")
    )
    if "mean_agreement" in report:
        lines.append("  agreement between repeats  " + ", ".join(
            f"{k} {v:.3f}" for k, v in report["mean_agreement"].items()))  # fmt: skip
    lines.append(
        f"  calls {totals['calls']} ({totals['cache_hits']} cached, {totals['http_requests']} "
        f"HTTP requests), tokens {totals['input_tokens']} in / {totals['output_tokens']} out, "
        f"cost {_money(totals['cost_usd'])}"
    )
    lines.append(f"  written to {target}")
    click.echo("\n".join(lines))
