"""``ragaudit demo``: a full offline audit of the bundled handbook benchmark.

The demo is a sequence of *sections*, each a function ``section(ctx, echo)`` that reads and
extends a shared :class:`DemoContext` (paths, saved runs, anything a later section needs).
:data:`SECTIONS` lists them in order; further analyses (the funnel, label bias, the paired
comparison of the two runs) are added by appending a function to it.  Everything is offline
and deterministic: two runs of the demo print the same text and write byte-identical files.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import click

from ragaudit.cli.run import format_run_summary
from ragaudit.data.golden import GoldenSet, load_golden
from ragaudit.data.records import SavedRun
from ragaudit.pipeline.chunking import Chunk, chunk_documents
from ragaudit.pipeline.corpus import Document, load_corpus
from ragaudit.pipeline.harness import run_pipeline

__all__ = [
    "CONFIGURATIONS",
    "SECTIONS",
    "DemoContext",
    "benchmark_paths",
    "command",
    "run_demo",
    "section_benchmark",
    "section_runs",
]

Echo = Callable[[str], Any]

# The two configurations the chapter compares: same chunking, k=3 against k=6.
CONFIGURATIONS: tuple[dict[str, Any], ...] = (
    {"name": "k3_cs800", "k": 3, "chunk_size": 800, "chunk_overlap": 100},
    {"name": "k6_cs800", "k": 6, "chunk_size": 800, "chunk_overlap": 100},
)
SEED = 0


@dataclass
class DemoContext:
    """What the sections share.

    Attributes
    ----------
    out_dir : Path
        Where every file of the demo goes.
    corpus_dir, golden_path : Path
        The bundled benchmark.
    documents, chunks, golden :
        Loaded by :func:`section_benchmark` (chunks at the first configuration's chunking).
    runs : dict of str to SavedRun
        Saved runs by configuration name, in :data:`CONFIGURATIONS` order.
    seed : int
    extra : dict
        Free space for later sections.
    """

    out_dir: Path
    corpus_dir: Path
    golden_path: Path
    seed: int = SEED
    documents: list[Document] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    golden: GoldenSet | None = None
    runs: dict[str, SavedRun] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@contextmanager
def benchmark_paths() -> Iterator[tuple[Path, Path]]:
    """``(corpus_dir, golden_path)`` of the bundled benchmark as real files.

    Installed normally these are the package's own files; from a zip they are copied to a
    temporary directory for the duration of the ``with`` block.
    """
    root = resources.files("ragaudit.benchmark")
    if isinstance(root, Path):
        yield root / "corpus", root / "golden.yaml"
        return
    tmp = Path(tempfile.mkdtemp(prefix="ragaudit-benchmark-"))
    try:
        (tmp / "corpus").mkdir()
        for item in root.joinpath("corpus").iterdir():
            if item.name.endswith((".md", ".txt")):
                (tmp / "corpus" / item.name).write_bytes(item.read_bytes())
        (tmp / "golden.yaml").write_bytes(root.joinpath("golden.yaml").read_bytes())
        yield tmp / "corpus", tmp / "golden.yaml"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def section_benchmark(ctx: DemoContext, echo: Echo) -> None:
    """Describe the benchmark: documents, chunks, questions."""
    ctx.documents = load_corpus(ctx.corpus_dir)
    first = CONFIGURATIONS[0]
    ctx.chunks = chunk_documents(ctx.documents, first["chunk_size"], first["chunk_overlap"])
    ctx.golden = load_golden(ctx.golden_path, doc_ids={d.doc_id for d in ctx.documents})
    answerable = sum(1 for q in ctx.golden if q.answerable)
    echo("ragaudit demo: the bundled handbook benchmark, fully offline")
    echo(
        f"  {len(ctx.documents)} documents -> {len(ctx.chunks)} chunks of "
        f"{first['chunk_size']} characters ({first['chunk_overlap']} overlap); "
        f"{len(ctx.golden)} questions ({answerable} answerable, "
        f"{len(ctx.golden) - answerable} unanswerable)"
    )
    echo(f"  pipeline: BM25 retriever -> extractive reader -> offline judges; seed {ctx.seed}")
    echo("")


def section_runs(ctx: DemoContext, echo: Echo) -> None:
    """Evaluate each configuration, print its summary, keep the saved runs."""
    for config in CONFIGURATIONS:
        saved = run_pipeline(
            ctx.corpus_dir,
            ctx.golden_path,
            k=config["k"],
            chunk_size=config["chunk_size"],
            chunk_overlap=config["chunk_overlap"],
            name=config["name"],
            out_dir=ctx.out_dir,
            seed=ctx.seed,
            record_latency=False,  # keeps the demo's files byte-identical across runs
        )
        ctx.runs[saved.name] = saved
        echo(format_run_summary(saved))
        echo(f"  saved: {Path(saved.path or '').as_posix()}")
        echo("")


def section_funnel(ctx: DemoContext, echo: Echo) -> None:
    """Recall is not accuracy: the four-stage funnel of the k=3 run."""
    from ragaudit.reports.funnel import funnel_section

    echo("=" * 78)
    funnel_section(ctx.runs[CONFIGURATIONS[0]["name"]], seed=ctx.seed, echo=echo)
    echo("")


def section_label_bias(ctx: DemoContext, echo: Echo) -> None:
    """Chunk-level labels (offline heuristic labeller) and the optimism of document labels."""
    from ragaudit.labels.build import build_chunk_labels
    from ragaudit.labels.format import Chunking, save_chunk_labels
    from ragaudit.labels.heuristic import HeuristicLabeller
    from ragaudit.pipeline.corpus import corpus_sha256
    from ragaudit.reports.label_bias import bias_section

    first = CONFIGURATIONS[0]
    assert ctx.golden is not None  # set by section_benchmark
    chunking = Chunking(
        "fixed", first["chunk_size"], first["chunk_overlap"], corpus_sha256(ctx.documents)
    )
    summary = build_chunk_labels(list(ctx.golden), ctx.chunks, HeuristicLabeller(), chunking)
    labels_path = ctx.out_dir / "chunk_labels.yaml"
    save_chunk_labels(summary.labels, labels_path)
    ctx.extra["chunk_labels"] = summary.labels
    echo("=" * 78)
    echo(
        f"chunk-level labels: {len(summary.labelled)} questions labelled by the offline "
        f"heuristic labeller -> {labels_path.as_posix()}"
    )
    if summary.no_answer_chunk:
        echo(
            "  no single chunk holds every keyword (answer split across chunks): "
            + ", ".join(summary.no_answer_chunk)
        )
    bias_section(ctx.runs[first["name"]], summary.labels, echo=echo)
    echo("")


def section_compare(ctx: DemoContext, echo: Echo) -> None:
    """Is k=6 better than k=3?  Paired bootstrap, permutation test and McNemar."""
    from ragaudit.reports.render import render_text
    from ragaudit.reports.stats import comparison_report
    from ragaudit.stats.compare import compare_runs

    name_a, name_b = (c["name"] for c in CONFIGURATIONS)
    metrics = ["recall@k", "ndcg@k", "precision@k", "keyword_hit", "correct"]
    # The answerable questions, as in the funnel (an unanswerable one is "correct" by refusing).
    result = compare_runs(
        ctx.runs[name_a].path or "",
        ctx.runs[name_b].path or "",
        metrics,
        seed=ctx.seed,
        questions="answerable",
    )
    echo("=" * 78)
    echo(render_text(comparison_report(result)).rstrip("\n"))
    echo("")


SECTIONS: list[Callable[[DemoContext, Echo], None]] = [
    section_benchmark,
    section_runs,
    section_funnel,
    section_label_bias,
    section_compare,
]


def run_demo(out_dir: str | Path = "ragaudit-results", echo: Echo = click.echo) -> DemoContext:
    """Run every section of the demo, writing under ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path, default "ragaudit-results"
    echo : callable, default click.echo
        Receives each output line (pass ``list.append`` to capture).

    Returns
    -------
    DemoContext
        With the saved runs of every configuration.
    """
    with benchmark_paths() as (corpus_dir, golden_path):
        ctx = DemoContext(Path(out_dir), corpus_dir, golden_path)
        for section in SECTIONS:
            section(ctx, echo)
        echo(f"results written under {Path(out_dir).as_posix()}/")
    return ctx


@click.command(name="demo")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="ragaudit-results",
    show_default=True,
    help="Results directory.",
)
def command(out_dir: str) -> None:
    """Run the full offline audit on the bundled benchmark (no network, no model)."""
    run_demo(out_dir)
