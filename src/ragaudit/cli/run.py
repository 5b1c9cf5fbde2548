"""``ragaudit run``: evaluate one pipeline configuration on a golden set and save the run."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import click

from ragaudit.cli._options import seed_option
from ragaudit.data.records import SavedRun
from ragaudit.pipeline.chunking import CHUNKERS
from ragaudit.pipeline.generators import GENERATORS
from ragaudit.pipeline.harness import RETRIEVAL_METRICS, run_pipeline
from ragaudit.pipeline.retrievers import RETRIEVERS

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
    if judged:
        answered = sum(int(r["metrics"]["answered"]) for r in judged)
        correct = sum(int(r["metrics"].get("correct") or 0) for r in judged)
        lines.append("  end to end (offline judges), answerable questions")
        lines.append(f"    answered  {_fraction(answered, len(judged))}")
        lines.append(f"    correct   {_fraction(correct, len(judged))}")
    refusals = [r for r in unanswerable if r["metrics"].get("correct") is not None]
    if refusals:
        abstained = sum(int(r["metrics"]["correct"]) for r in refusals)
        lines.append(
            f"  unanswerable questions correctly refused  {_fraction(abstained, len(refusals))}"
        )
    errors = sum(1 for r in rows if r.get("error"))
    if errors:
        lines.append(f"  {errors} questions failed to generate (see each row's 'error')")
    return "\n".join(lines)


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
@seed_option()
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
    seed: int,
) -> None:
    """Run a golden set through retrieve -> generate -> judge and save the run as JSON.

    An interrupted run resumes from <name>.partial.jsonl when rerun with the same options.
    """
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

        saved = run_pipeline(
            corpus, golden, k=k, chunk_size=chunk_size, chunk_overlap=chunk_overlap,
            chunker=chunker, retriever=retriever, generator=generator, run_file=run_file,
            embedding_model=embedding_model, qdrant_url=qdrant_url, name=name, out_dir=out_dir,
            limit=limit, seed=seed, record_latency=timing, on_row=on_row, on_start=on_start,
            chunk_labels=chunk_labels,
        )  # fmt: skip
    click.echo(format_run_summary(saved))
    click.echo(f"saved: {saved.path}")
