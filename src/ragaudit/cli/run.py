"""``ragaudit run``: evaluate one pipeline configuration on a golden set and save the run."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Any

import click

from ragaudit.cli._llm_options import add_llm_options, llm_config_from_cli
from ragaudit.cli._options import (
    chunking_options,
    emit,
    format_option,
    golden_map_option,
    quiet_option,
    results_dir_option,
    save_as_option,
    seed_option,
)
from ragaudit.cli._progress import progress_callback
from ragaudit.exceptions import InputError
from ragaudit.pipeline.config import JUDGE_MODES, RETRIEVERS, RunConfig
from ragaudit.pipeline.executors import EXECUTORS
from ragaudit.pipeline.generators import GENERATORS

# The pipeline (numpy, BM25) and the reports are imported inside the command: `ragaudit run
# --help` loads only what the options need (tests/cli/test_lazy_imports.py).

__all__ = ["command"]


@click.command(name="run")
@click.option(
    "--corpus",
    type=click.Path(file_okay=False),
    required=True,
    help="Directory of .md/.txt documents (doc id = file stem).",
)
@click.option(
    "--golden",
    type=click.Path(dir_okay=False),
    required=True,
    help="Golden set: YAML, JSON, JSONL or CSV.",
)
@golden_map_option()
@click.option(
    "--k",
    "k",
    type=int,
    default=5,
    show_default=True,
    help="Chunks given to the generator (and the cut-off of the metrics).",
)
@chunking_options
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
@click.option(
    "--reader-temperature",
    type=float,
    default=0.0,
    show_default=True,
    help="The extractive reader draws its answer sentence with probability proportional to "
    "exp(support / T), from each question's seed; 0 answers deterministically.",
)
@click.option(
    "--repeats",
    type=int,
    default=1,
    show_default=True,
    help="Generations per question, R: each (question, repeat) draws from its own seed and the "
    "saved run holds all R (with --reader-temperature > 0 the offline reader varies).",
)
@click.option("--name", default=None, help="Configuration name [default: k<K>_cs<SIZE>...].")
@results_dir_option()
@save_as_option()
@click.option(
    "--limit",
    type=int,
    default=None,
    help="Only the first N questions (written to <name>.limit<N>.json or .parquet).",
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
@click.option(
    "--executor",
    type=click.Choice(EXECUTORS),
    default="threads",
    show_default=True,
    help="Where questions are retrieved and answered: this process, or Ray workers "
    "(pip install 'ragaudit[ray]'); a run interrupted on one resumes on the other.",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="ADDR",
    help="With --executor ray: the cluster (HOST:6379) [default: a local Ray instance].",
)
@seed_option()
@quiet_option()
@format_option()
@add_llm_options
def command(
    corpus: str,
    golden: str,
    golden_columns: dict[str, str] | None,
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
    reader_temperature: float,
    repeats: int,
    name: str | None,
    out_dir: str,
    save_as: str,
    limit: int | None,
    timing: bool,
    judges: str,
    dry_run: bool,
    executor: str,
    ray_address: str | None,
    seed: int,
    quiet: bool,
    output_format: str,
    judge_repeats: int,
    **llm_options: Any,
) -> None:
    """Run a golden set through retrieve -> generate -> judge and save the run (JSON, or
    Parquet with --save-as parquet).

    An interrupted run resumes from <name>.partial.jsonl when rerun with the same options;
    a checkpoint of other options is never replaced: the run stops (exit 2) naming the
    options that differ, so give it another --name or --out, or delete the file yourself.
    With --generator openai or --judges llm, the --llm-* options (or the RAGAUDIT_LLM_*
    environment variables) name the endpoint; replies are cached, so a rerun sends nothing.
    """
    from ragaudit.pipeline.harness import run_pipeline
    from ragaudit.pipeline.llm_stages import plan_llm_run
    from ragaudit.reports.runs import dry_run_report, run_summary_report

    if judge_repeats != 1 and judges != "llm":
        raise InputError("--judge-repeats: only applies with --judges llm")
    if ray_address is not None and executor != "ray":
        raise InputError("--ray-address: only applies with --executor ray")
    llm_config = None
    if generator == "openai" or judges == "llm":
        if llm_options.get("llm_seed") is None:
            llm_options["llm_seed"] = seed  # one --seed drives every random procedure
        llm_config = llm_config_from_cli(**llm_options)
        if generator == "openai":
            llm_config.require_endpoint("the LLM generator")
        if judges == "llm":
            llm_config.require_endpoint("the LLM judge stage")
    run = RunConfig(
        corpus, golden, k=k, chunk_size=chunk_size, chunk_overlap=chunk_overlap,
        chunker=chunker, retriever=retriever, generator=generator, judges=judges,
        run_file=run_file, embedding_model=embedding_model, qdrant_url=qdrant_url, name=name,
        out_dir=out_dir, limit=limit, seed=seed, record_latency=timing,
        llm_config=llm_config, judge_repeats=judge_repeats, golden_columns=golden_columns,
        reader_temperature=reader_temperature, save_as=save_as, repeats=repeats,
    )  # fmt: skip
    if dry_run:
        if llm_config is None:
            emit(dry_run_report(None), output_format)
            return
        plan = plan_llm_run(run)
        emit(dry_run_report(plan), output_format)
        return
    chunk_labels = labels = None
    if chunk_labels_file is not None:
        from ragaudit.labels.format import load_chunk_labels

        expect = {"chunker": chunker, "chunk_size": chunk_size, "chunk_overlap": chunk_overlap}
        labels = load_chunk_labels(chunk_labels_file, expect=expect)
        chunk_labels = labels.to_qrels()
    with contextlib.ExitStack() as stack:
        questions = progress_callback(stack, "questions", quiet=quiet)
        judging = progress_callback(stack, "judging", quiet=quiet)
        done = {"n": 0, "total": 0}

        def on_start(n: int) -> None:
            done["total"] = n * repeats  # one tick per (question, repeat)
            questions(0, done["total"])

        def on_row(row: dict[str, Any]) -> None:
            done["n"] += 1
            questions(done["n"], done["total"])

        usage: dict[str, Any] = {}

        saved = run_pipeline(
            replace(run, chunk_labels=chunk_labels),
            on_start=on_start,
            on_row=on_row,
            on_judge_progress=judging,
            llm_usage=usage,
            executor=executor,
            ray_address=ray_address,
        )
    from ragaudit.diagnose.unjudged import run_judged

    judged = run_judged(saved, labels)  # what the retrieval means rest on, as the dashboard
    report = run_summary_report(saved, judged=judged, usage=usage, saved_to=str(saved.path))
    emit(report, output_format)
