"""``ragaudit demo``: a full offline audit of the bundled handbook benchmark.

The demo is a sequence of *sections*, each a function ``section(ctx, echo)`` that reads and
extends a shared :class:`DemoContext` (paths, saved runs, anything a later section needs).
:data:`SECTIONS` lists them in order: the benchmark, the two runs, chunk labels, then the short
audit and the one-page ``report.html``: the ``table`` and ``html`` forms of one
:func:`~ragaudit.reports.audit_page.audit_report`, through the one renderer.  Everything is
offline and deterministic: two runs of the demo print the same text and write byte-identical
files.
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

from ragaudit.cli._options import emit, format_option, results_dir_option
from ragaudit.data.chunks import Chunk, Document
from ragaudit.data.golden import GoldenSet, load_golden
from ragaudit.data.saved_run import SavedRun
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.config import RunConfig
from ragaudit.pipeline.corpus import load_corpus
from ragaudit.reports.report import KeyValues, Report, Section

__all__ = [
    "CONFIGURATIONS",
    "SECTIONS",
    "DemoContext",
    "benchmark_paths",
    "command",
    "demo_report",
    "run_demo",
    "section_audit",
    "section_benchmark",
    "section_full",
    "section_labels",
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
        f"  {len(ctx.documents)} documents -> {len(ctx.chunks)} chunks ({first['chunk_size']} "
        f"characters, {first['chunk_overlap']} overlap); {len(ctx.golden)} questions "
        f"({answerable} answerable, {len(ctx.golden) - answerable} not)"
    )
    echo(f"  pipeline: BM25 retriever -> extractive reader -> offline judges; seed {ctx.seed}")


def section_runs(ctx: DemoContext, echo: Echo) -> None:
    """Evaluate each configuration and keep the saved runs (one line each)."""
    from ragaudit.pipeline.harness import run_pipeline  # numpy, BM25: not for `demo --help`

    for config in CONFIGURATIONS:
        run = RunConfig(
            ctx.corpus_dir,
            ctx.golden_path,
            k=config["k"],
            chunk_size=config["chunk_size"],
            chunk_overlap=config["chunk_overlap"],
            name=config["name"],
            out_dir=ctx.out_dir,
            seed=ctx.seed,
            # the dashboard's p95 latency is wall clock: its line (and each row's latency_ms)
            # is the one part of the demo that varies from run to run
            record_latency=True,
        )
        saved = run_pipeline(run)
        ctx.runs[saved.name] = saved
        echo(f"  run {saved.name} (k={config['k']}) -> {Path(saved.path or '').as_posix()}")


def section_labels(ctx: DemoContext, echo: Echo) -> None:
    """Chunk-level labels from the offline heuristic labeller (for chunk recall and label bias)."""
    from ragaudit.labels.build import build_chunk_labels
    from ragaudit.labels.format import Chunking, save_chunk_labels
    from ragaudit.labels.heuristic import HeuristicLabeller
    from ragaudit.pipeline.corpus import corpus_sha256

    first = CONFIGURATIONS[0]
    if ctx.golden is None:
        raise RuntimeError("section_labels needs section_benchmark first")
    chunking = Chunking(
        "fixed", first["chunk_size"], first["chunk_overlap"], corpus_sha256(ctx.documents)
    )
    summary = build_chunk_labels(list(ctx.golden), ctx.chunks, HeuristicLabeller(), chunking)
    labels_path = ctx.out_dir / "chunk_labels.yaml"
    save_chunk_labels(summary.labels, labels_path)
    ctx.extra["chunk_labels"] = summary.labels
    echo(
        f"  chunk labels: {len(summary.labelled)} questions, offline heuristic labeller -> "
        f"{labels_path.as_posix()}"
    )
    echo("")


def section_audit(ctx: DemoContext, echo: Echo) -> None:
    """The short audit (dashboard, funnel, where questions die, bias line, clustering by source,
    comparison) and the one-page report written next to the runs."""
    from dataclasses import replace

    from ragaudit._io import atomic_write_text
    from ragaudit.diagnose.audit import build_audit
    from ragaudit.reports.audit_page import audit_report
    from ragaudit.reports.renderer import render_html, render_text

    texts = {c.chunk_id: c.text for c in ctx.chunks}
    audit = build_audit(
        list(ctx.runs.values()),
        labels=ctx.extra.get("chunk_labels"),
        chunk_texts=texts,
        seed=ctx.seed,
        cluster_by="source",  # the benchmark's questions share source documents
    )
    ctx.extra["audit"] = audit
    page = audit_report(audit, full_bias=bool(ctx.extra.get("full")))
    echo(render_text(replace(page, title="")).rstrip("\n"))  # the demo's own lines come first
    report = ctx.out_dir / "report.html"
    atomic_write_text(report, render_html(page))
    ctx.extra["report"] = report
    echo("")
    echo(f"report: {report.as_posix()}")
    echo("  open it in a browser: each failing question opens to its chunks, answer and verdicts")


def section_full(ctx: DemoContext, echo: Echo) -> None:
    """With ``--full``: the complete label-bias and comparison tables as well."""
    if not ctx.extra.get("full"):
        return
    from ragaudit.reports.label_bias import bias_report
    from ragaudit.reports.renderer import render_text
    from ragaudit.reports.stats import comparison_report
    from ragaudit.stats.compare import compare_runs

    name_a, name_b = (c["name"] for c in CONFIGURATIONS)
    echo("")
    echo("=" * 78)
    bias = ctx.extra["audit"].runs[0].bias  # the audit's label bias of the first run
    echo(render_text(bias_report(bias)))
    result = compare_runs(
        ctx.runs[name_a],
        ctx.runs[name_b],
        ["recall@k", "ndcg@k", "precision@k", "keyword_hit", "correct"],
        seed=ctx.seed,
        questions="answerable",
    )
    echo("=" * 78)
    echo(render_text(comparison_report(result)).rstrip("\n"))


SECTIONS: list[Callable[[DemoContext, Echo], None]] = [
    section_benchmark,
    section_runs,
    section_labels,
    section_audit,
    section_full,
]


def run_demo(
    out_dir: str | Path = "ragaudit-results", echo: Echo = click.echo, *, full: bool = False
) -> DemoContext:
    """Run every section of the demo, writing under ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path, default "ragaudit-results"
    echo : callable, default click.echo
        Receives each output line (pass ``list.append`` to capture).
    full : bool, default False
        Also print the full label-bias and comparison tables.

    Returns
    -------
    DemoContext
        With the saved runs of every configuration.
    """
    with benchmark_paths() as (corpus_dir, golden_path):
        ctx = DemoContext(Path(out_dir), corpus_dir, golden_path)
        ctx.extra["full"] = full
        for section in SECTIONS:  # each file's path is printed as it is written
            section(ctx, echo)
    return ctx


@click.command(name="demo")
@results_dir_option()
@click.option("--full", is_flag=True, help="Also print the full label-bias and comparison tables.")
@format_option()
def command(out_dir: str, full: bool, output_format: str) -> None:
    """Run the full offline audit on the bundled benchmark (no network, no model).

    Prints a short audit (dashboard, funnel, where questions die, the label-bias line, the
    k=3 vs k=6 comparison) and writes the one-page report.html next to the saved runs.
    --format json|csv|markdown prints the same audit through the one renderer instead.
    """
    if output_format == "table":
        run_demo(out_dir, full=full)
        return
    ctx = run_demo(out_dir, echo=lambda line: None, full=full)
    emit(demo_report(ctx), output_format)


def demo_report(ctx: DemoContext) -> Report:
    """The demo as one :class:`~ragaudit.reports.report.Report`: the benchmark, the files
    written, then the audit (:func:`~ragaudit.reports.audit_page.audit_report`)."""
    from ragaudit.reports.audit_page import audit_report

    audit = audit_report(ctx.extra["audit"])
    golden = ctx.golden
    answerable = 0 if golden is None else sum(1 for q in golden if q.answerable)
    first = CONFIGURATIONS[0]
    benchmark = {
        "documents": len(ctx.documents),
        "chunks": len(ctx.chunks),
        "chunk_size": first["chunk_size"],
        "chunk_overlap": first["chunk_overlap"],
        "questions": 0 if golden is None else len(golden),
        "answerable": answerable,
        "seed": ctx.seed,
    }
    files = {
        **{name: Path(run.path or "").as_posix() for name, run in ctx.runs.items()},
        "chunk labels": (ctx.out_dir / "chunk_labels.yaml").as_posix(),
        "report": Path(ctx.extra["report"]).as_posix(),
    }
    head = (
        Section(
            "Benchmark (bundled handbook, offline)",
            (KeyValues(tuple((key, str(value)) for key, value in benchmark.items())),),
        ),
        Section("Files written", (KeyValues(tuple(files.items())),)),
    )
    assert isinstance(audit.data, dict)  # audit_report's JSON is a mapping
    data = {"benchmark": benchmark, "files": files, **audit.data}
    return Report("ragaudit demo", head + audit.sections, data=data, notes=audit.notes,
                  theme=audit.theme)  # fmt: skip
