"""The bundled handbook benchmark, run as ``ragaudit demo`` runs it: offline and deterministic.

Three public steps, each returning a typed object, so the demo (and a notebook) is a
composition of library calls: :func:`load_benchmark` (documents, chunks, golden set),
:func:`run_configurations` (one saved run per configuration of :data:`CONFIGURATIONS`, yielded
as each is written) and :func:`label_chunks` (chunk-level labels from the offline heuristic
labeller).  The audit of the runs is then :func:`ragaudit.audit`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ragaudit.data.chunks import Chunk, Document
from ragaudit.data.golden import GoldenSet, load_golden
from ragaudit.data.saved_run import SavedRun
from ragaudit.labels.build import build_chunk_labels
from ragaudit.labels.format import Chunking, ChunkLabels, save_chunk_labels
from ragaudit.labels.heuristic import HeuristicLabeller
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.config import RunConfig
from ragaudit.pipeline.corpus import corpus_sha256, load_corpus

__all__ = [
    "CONFIGURATIONS",
    "SEED",
    "Benchmark",
    "BenchmarkLabels",
    "Configuration",
    "benchmark_paths",
    "label_chunks",
    "load_benchmark",
    "run_configurations",
]


@dataclass(frozen=True)
class Configuration:
    """One configuration of the demo: a name, the retriever's depth ``k`` and the chunking."""

    name: str
    k: int
    chunk_size: int
    chunk_overlap: int


#: The two configurations the chapter compares: same chunking, k=3 against k=6.
CONFIGURATIONS: tuple[Configuration, ...] = (
    Configuration("k3_cs800", 3, 800, 100),
    Configuration("k6_cs800", 6, 800, 100),
)
#: The demo's seed.
SEED = 0


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


@dataclass(frozen=True, repr=False)
class Benchmark:
    """A loaded benchmark: its documents, its chunks at one chunking, and its golden set.

    Attributes
    ----------
    corpus_dir, golden_path : Path
    documents : tuple of Document
    chunks : tuple of Chunk
        At ``chunking`` (the first configuration's).
    golden : GoldenSet
    chunking : Chunking
        ``fixed`` chunks of ``chunk_size`` characters with ``chunk_overlap``, and the corpus hash.
    """

    corpus_dir: Path
    golden_path: Path
    documents: tuple[Document, ...]
    chunks: tuple[Chunk, ...]
    golden: GoldenSet
    chunking: Chunking

    @property
    def answerable(self) -> int:
        """Questions of the golden set that the corpus answers."""
        return sum(1 for q in self.golden if q.answerable)

    @property
    def chunk_texts(self) -> dict[str, str]:
        """``{chunk_id: text}`` (the drill-down's texts in :func:`ragaudit.audit`)."""
        return {c.chunk_id: c.text for c in self.chunks}

    def __repr__(self) -> str:
        return (
            f"Benchmark({len(self.documents)} documents, {len(self.chunks)} chunks, "
            f"{len(self.golden)} questions ({self.answerable} answerable))"
        )


def load_benchmark(
    corpus_dir: str | os.PathLike[str],
    golden_path: str | os.PathLike[str],
    *,
    chunk_size: int = CONFIGURATIONS[0].chunk_size,
    chunk_overlap: int = CONFIGURATIONS[0].chunk_overlap,
) -> Benchmark:
    """Load a corpus directory and its golden set, and chunk the corpus (fixed-size chunks).

    Examples
    --------
    >>> with benchmark_paths() as (corpus, golden):
    ...     bench = load_benchmark(corpus, golden)
    >>> len(bench.golden), bench.answerable, bench.chunking.chunk_size
    (60, 54, 800)
    """
    documents = load_corpus(Path(corpus_dir))
    chunks = chunk_documents(documents, chunk_size, chunk_overlap)
    golden = load_golden(Path(golden_path), doc_ids={d.doc_id for d in documents})
    chunking = Chunking("fixed", chunk_size, chunk_overlap, corpus_sha256(documents))
    return Benchmark(
        Path(corpus_dir), Path(golden_path), tuple(documents), tuple(chunks), golden, chunking
    )


def run_configurations(
    benchmark: Benchmark,
    out_dir: str | os.PathLike[str],
    configurations: tuple[Configuration, ...] = CONFIGURATIONS,
    *,
    seed: int = SEED,
    repeats: int = 1,
    reader_temperature: float = 0.0,
) -> Iterator[SavedRun]:
    """Evaluate each configuration end to end (BM25, the extractive reader, the offline
    judges: :func:`~ragaudit.pipeline.harness.run_pipeline`), yielding each saved run as soon
    as it is written under ``out_dir``; ``repeats`` generations of each question, drawn at
    the reader's ``reader_temperature`` (0: every repeat is the same answer).

    Each row records its wall-clock latency, so the dashboard's p95 latency (and each row's
    ``latency_ms``) is the one part of the output that varies from run to run.
    """
    from ragaudit.pipeline.harness import run_pipeline  # numpy, BM25: not for `demo --help`

    for config in configurations:
        yield run_pipeline(
            RunConfig(
                benchmark.corpus_dir,
                benchmark.golden_path,
                k=config.k,
                chunk_size=config.chunk_size,
                chunk_overlap=config.chunk_overlap,
                name=config.name,
                out_dir=Path(out_dir),
                seed=seed,
                record_latency=True,
                repeats=repeats,
                reader_temperature=reader_temperature,
            )
        )


@dataclass(frozen=True)
class BenchmarkLabels:
    """Chunk labels of a benchmark (:func:`label_chunks`) and where they were written.

    Attributes
    ----------
    labels : ChunkLabels
    path : Path
    n_questions : int
        Questions labelled (the answerable ones).
    """

    labels: ChunkLabels
    path: Path
    n_questions: int


def label_chunks(benchmark: Benchmark, out_dir: str | os.PathLike[str]) -> BenchmarkLabels:
    """Chunk-level labels of the answerable questions from the offline heuristic labeller
    (for chunk recall and label bias), written to ``out_dir/chunk_labels.yaml``."""
    summary = build_chunk_labels(
        list(benchmark.golden), list(benchmark.chunks), HeuristicLabeller(), benchmark.chunking
    )
    path = Path(out_dir) / "chunk_labels.yaml"
    save_chunk_labels(summary.labels, path)
    return BenchmarkLabels(summary.labels, path, len(summary.labelled))
