"""``ragaudit demo``: a full offline audit of the bundled handbook benchmark.

The demo is a composition of public library calls, each returning a typed object: the bundled
benchmark loaded, its two configurations run and its chunks labelled
(:mod:`ragaudit.pipeline.bundled`), then the audit (:func:`ragaudit.audit`, computed by
:func:`~ragaudit.diagnose.audit.build_audit`); the short audit and the
one-page ``report.html`` are the ``table`` and ``html`` forms of one
:func:`~ragaudit.reports.audit_page.audit_report`, through the one renderer.  Everything is
offline and deterministic: two runs of the demo print the same text and write byte-identical
files (but for the wall-clock latency).

``demo --repeats R`` generates every answer ``R`` times with the extractive reader at
:data:`DEMO_TEMPERATURE` (each (question, repeat) from its own recorded seed), so the audit
shows a real variance budget, flaky questions and pass^k, still offline and deterministic;
its files go to ``OUT/repeats-R/`` beside the plain demo's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragaudit.cli._options import emit, format_option, results_dir_option
from ragaudit.data.chunks import Chunk
from ragaudit.data.saved_run import SavedRun
from ragaudit.pipeline.bundled import (
    CONFIGURATIONS,
    SEED,
    Benchmark,
    BenchmarkLabels,
    benchmark_paths,
)
from ragaudit.reports.report import KeyValues, Report, Section

if TYPE_CHECKING:
    from ragaudit.diagnose.audit_result import Audit

__all__ = [
    "CONFIGURATIONS",
    "DEMO_TEMPERATURE",
    "SEED",
    "Demo",
    "benchmark_paths",
    "command",
    "demo_report",
    "run_demo",
]

Echo = Callable[[str], Any]

#: The extractive reader's temperature under ``demo --repeats``: enough for some answers to
#: change between repeats, not so much that the reader stops reading its context (k=3 run,
#: 3 seeds: T = 0.06 made 4 of 54 questions flaky, 0.1 made 13 and cost 0.07 of
#: correctness, 0.5 made 24 and halved it; measured 2026-12-08 to pick this value).
DEMO_TEMPERATURE = 0.1


@dataclass(frozen=True)
class Demo:
    """What the demo computed and wrote.

    Attributes
    ----------
    out_dir : Path
    seed : int
    benchmark : Benchmark
        The bundled benchmark, chunked at the first configuration's chunking.
    runs : dict of str to SavedRun
        Saved runs by configuration name, in :data:`CONFIGURATIONS` order.
    labels : BenchmarkLabels
        The chunk labels and their file.
    audit : Audit
        :func:`ragaudit.audit` of the runs.
    report : Path
        The one-page ``report.html``.
    repeats : int
        Generations of each question (``demo --repeats``; 1 by default).
    """

    out_dir: Path
    seed: int
    benchmark: Benchmark
    runs: dict[str, SavedRun]
    labels: BenchmarkLabels
    audit: Audit
    report: Path
    repeats: int = 1

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """The benchmark's chunks (the runs' chunking)."""
        return self.benchmark.chunks


def run_demo(
    out_dir: str | Path = "ragaudit-results",
    echo: Echo = click.echo,
    *,
    full: bool = False,
    repeats: int = 1,
) -> Demo:
    """Run the demo, writing under ``out_dir``, and print it line by line through ``echo``.

    Parameters
    ----------
    out_dir : str or Path, default "ragaudit-results"
    echo : callable, default click.echo
        Receives each output line (pass ``list.append`` to capture).
    full : bool, default False
        Also print the full label-bias and comparison tables.
    repeats : int, default 1
        Generations of each question; above 1 the reader samples at
        :data:`DEMO_TEMPERATURE` and the files go to ``out_dir/repeats-R/``.
    """
    from ragaudit.diagnose.audit import build_audit  # ragaudit.audit, given loaded labels
    from ragaudit.pipeline.bundled import label_chunks, load_benchmark, run_configurations

    out = Path(out_dir) if repeats == 1 else Path(out_dir) / f"repeats-{repeats}"
    temperature = 0.0 if repeats == 1 else DEMO_TEMPERATURE
    runs: dict[str, SavedRun] = {}
    with benchmark_paths() as (corpus_dir, golden_path):
        benchmark = load_benchmark(corpus_dir, golden_path)
        _echo_benchmark(benchmark, echo)
        if repeats > 1:
            echo(
                f"  {repeats} generations of each question: the reader samples at temperature "
                f"{temperature:g}, each (question, repeat) from its own recorded seed"
            )
        made = run_configurations(benchmark, out, seed=SEED, repeats=repeats,
                                  reader_temperature=temperature)  # fmt: skip
        for config, saved in zip(CONFIGURATIONS, made, strict=True):
            runs[saved.name] = saved
            echo(f"  run {saved.name} (k={config.k}) -> {Path(saved.path or '').as_posix()}")
        labels = label_chunks(benchmark, out)
        echo(
            f"  chunk labels: {labels.n_questions} questions, offline heuristic labeller -> "
            f"{labels.path.as_posix()}"
        )
        echo("")
        audit = build_audit(
            list(runs.values()),
            labels=labels.labels,
            chunk_texts=benchmark.chunk_texts,
            seed=SEED,
            cluster_by="source",  # the benchmark's questions share source documents
        )
    demo = Demo(out, SEED, benchmark, runs, labels, audit, out / "report.html", repeats)
    _echo_audit(demo, echo, full=full)  # each file's path is printed as it is written
    if full:
        _echo_full(demo, echo)
    return demo


def _echo_benchmark(benchmark: Benchmark, echo: Echo) -> None:
    """The benchmark: documents, chunks, questions."""
    chunking, golden = benchmark.chunking, benchmark.golden
    echo("ragaudit demo: the bundled handbook benchmark, fully offline")
    echo(
        f"  {len(benchmark.documents)} documents -> {len(benchmark.chunks)} chunks "
        f"({chunking.chunk_size} characters, {chunking.chunk_overlap} overlap); "
        f"{len(golden)} questions ({benchmark.answerable} answerable, "
        f"{len(golden) - benchmark.answerable} not)"
    )
    echo(f"  pipeline: BM25 retriever -> extractive reader -> offline judges; seed {SEED}")


def _echo_audit(demo: Demo, echo: Echo, *, full: bool) -> None:
    """The short audit (dashboard, funnel, where questions die, bias line, clustering by source,
    comparison), and the one-page report written next to the runs."""
    from dataclasses import replace

    from ragaudit._io import atomic_write_text
    from ragaudit.reports.audit_page import audit_report
    from ragaudit.reports.renderer import render_html, render_text

    page = audit_report(demo.audit, full_bias=full)
    echo(render_text(replace(page, title="")).rstrip("\n"))  # the demo's own lines come first
    atomic_write_text(demo.report, render_html(page))
    echo("")
    echo(f"report: {demo.report.as_posix()}")
    echo("  open it in a browser: each failing question opens to its chunks, answer and verdicts")


def _echo_full(demo: Demo, echo: Echo) -> None:
    """With ``--full``: the complete label-bias and comparison tables as well."""
    from ragaudit.diagnose.compare import compare_runs
    from ragaudit.reports.label_bias import bias_report
    from ragaudit.reports.renderer import render_text

    first, second = (demo.runs[c.name] for c in CONFIGURATIONS)
    echo("")
    echo("=" * 78)
    bias = demo.audit.runs[0].bias  # the audit's label bias of the first run
    if bias is not None:
        echo(render_text(bias_report(bias)))
    result = compare_runs(
        first,
        second,
        ["recall@k", "ndcg@k", "precision@k", "keyword_hit", "correct"],
        seed=demo.seed,
        questions="answerable",
    )
    echo("=" * 78)
    echo(render_text(result.to_report()).rstrip("\n"))


@click.command(name="demo")
@results_dir_option()
@click.option("--full", is_flag=True, help="Also print the full label-bias and comparison tables.")
@click.option(
    "--repeats", type=click.IntRange(min=1), default=1, show_default=True,
    help=f"Generations of each question (above 1 the reader samples at temperature "
    f"{DEMO_TEMPERATURE:g}): adds "
    "the variance budget, flaky questions and pass^k; files under OUT/repeats-R/.",
)  # fmt: skip
@format_option()
def command(out_dir: str, full: bool, repeats: int, output_format: str) -> None:
    """Run the full offline audit on the bundled benchmark (no network, no model).

    Prints a short audit (dashboard, funnel, where questions die, the label-bias line, the
    k=3 vs k=6 comparison) and writes the one-page report.html next to the saved runs.
    --format json|csv|markdown prints the same audit through the one renderer instead.
    """
    if output_format == "table":
        run_demo(out_dir, full=full, repeats=repeats)
        return
    demo = run_demo(out_dir, echo=lambda line: None, full=full, repeats=repeats)
    emit(demo_report(demo), output_format)


def demo_report(demo: Demo) -> Report:
    """The demo as one :class:`~ragaudit.reports.report.Report`: the benchmark, the files
    written, then the audit (:func:`~ragaudit.reports.audit_page.audit_report`)."""
    from ragaudit.reports.audit_page import audit_report

    audit = audit_report(demo.audit)
    benchmark = {
        "documents": len(demo.benchmark.documents),
        "chunks": len(demo.benchmark.chunks),
        "chunk_size": demo.benchmark.chunking.chunk_size,
        "chunk_overlap": demo.benchmark.chunking.chunk_overlap,
        "questions": len(demo.benchmark.golden),
        "answerable": demo.benchmark.answerable,
        "seed": demo.seed,
        **({"repeats": demo.repeats, "reader_temperature": DEMO_TEMPERATURE}
           if demo.repeats > 1 else {}),
    }
    files = {
        **{name: Path(run.path or "").as_posix() for name, run in demo.runs.items()},
        "chunk labels": demo.labels.path.as_posix(),
        "report": demo.report.as_posix(),
    }
    head = (
        Section(
            "Benchmark (bundled handbook, offline)",
            (KeyValues(tuple((key, str(value)) for key, value in benchmark.items())),),
        ),
        Section("Files written", (KeyValues(tuple(files.items())),)),
    )
    data = {"benchmark": benchmark, "files": files, **_mapping(audit.data)}
    return Report("ragaudit demo", head + audit.sections, data=data, notes=audit.notes,
                  theme=audit.theme)  # fmt: skip


def _mapping(data: Any) -> dict[str, Any]:
    """The audit page's JSON, a mapping (checked, never assumed)."""
    if not isinstance(data, dict):
        raise TypeError(f"audit_report: expected its JSON to be a mapping, found {type(data)}")
    return data
