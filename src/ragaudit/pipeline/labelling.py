"""Chunk labels from files: ``ragaudit labels build`` and ``labels fill`` as library calls.

:func:`build_labels_file` chunks a corpus, loads the golden set against it and has a labeller
grade each answerable question's candidate chunks
(:func:`ragaudit.labels.build.build_chunk_labels`), saving the label file atomically after
every question, so an interrupted build resumes from the file.  :func:`fill_labels_file`
pools the top k of saved runs and has a labeller judge the unjudged chunks
(:func:`ragaudit.labels.fill.fill_labels`).  The labeller is the caller's: it may talk to a
person in a terminal or to a model, and the caller closes it.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ragaudit.data.records import load_saved_run
from ragaudit.exceptions import InputError
from ragaudit.labels.build import BuildSummary, build_chunk_labels
from ragaudit.labels.fill import FillResult, fill_labels, write_filled_labels
from ragaudit.labels.format import (
    Chunking,
    ChunkLabels,
    is_chunk_label_file,
    load_chunk_labels,
    save_chunk_labels,
)
from ragaudit.labels.paths import fresh_labels_path
from ragaudit.labels.protocol import Labeller
from ragaudit.pipeline.build import golden_for_corpus
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.corpus import corpus_sha256, load_corpus, run_chunks

__all__ = ["build_labels_file", "fill_labels_file"]

PathLike = str | os.PathLike[str]


def build_labels_file(
    corpus_dir: PathLike,
    golden_path: PathLike,
    out_path: PathLike,
    labeller: Labeller,
    *,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    chunker: str = "fixed",
    golden_columns: Mapping[str, str] | None = None,
    limit: int | None = None,
    rebuild: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[BuildSummary, Chunking]:
    """Label the gold documents' chunks of every answerable question into ``out_path``.

    Complete questions already in ``out_path`` are reused (unless ``rebuild``), and the file
    is saved atomically after each question, so a second call resumes an interrupted one.
    Returns the build's summary and the chunking recorded in the file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ragaudit.labels.heuristic import HeuristicLabeller
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / "docs").mkdir()
    >>> _ = (folder / "docs" / "leave.md").write_text("Staff get 27 days of annual leave.")
    >>> _ = (folder / "golden.yaml").write_text(
    ...     "- id: q1\\n  question: How many days of leave?\\n  answer: 27 days\\n"
    ...     "  keywords: [27 days]\\n  sources: [leave]\\n")
    >>> summary, chunking = build_labels_file(folder / "docs", folder / "golden.yaml",
    ...                                       folder / "labels.yaml", HeuristicLabeller())
    >>> sorted(summary.labels.questions), chunking.chunker
    (['q1'], 'fixed')
    """
    documents = load_corpus(os.fspath(corpus_dir))
    chunks = chunk_documents(documents, chunk_size, chunk_overlap, chunker)
    golden = golden_for_corpus(os.fspath(golden_path), documents, chunks, columns=golden_columns)
    chunking = Chunking(chunker, chunk_size, chunk_overlap, corpus_sha256(documents))
    existing = None
    if Path(out_path).exists() and not rebuild:
        existing = load_chunk_labels(out_path)
    elif Path(out_path).exists() and not is_chunk_label_file(out_path):
        raise InputError(
            f"{out_path}: --rebuild replaces only a ragaudit chunk-label file, and this is "
            "another file: it is left as it is; write the labels to a new file with --out "
            f"{fresh_labels_path(os.fspath(out_path))}"
        )

    def save(labels: ChunkLabels) -> None:
        save_chunk_labels(labels, out_path)

    summary = build_chunk_labels(
        list(golden),
        chunks,
        labeller,
        chunking,
        existing=existing,
        rebuild=rebuild,
        limit=limit,
        save=save,
        progress=progress,
    )
    save_chunk_labels(summary.labels, out_path)
    return summary, chunking


def fill_labels_file(
    run_paths: Sequence[PathLike],
    labels_path: PathLike,
    corpus_dir: PathLike,
    out_path: PathLike,
    labeller: Labeller,
    *,
    date: str | None = None,
    k: int | None = None,
) -> FillResult:
    """Judge the unjudged chunks in the pooled top ``k`` of the saved runs at ``run_paths``
    and write every label with its provenance to ``out_path`` (JSONL).

    ``date`` is recorded with each filled label (default: today, UTC); the corpus is chunked
    as the first run was.  Refuses an ``out_path`` that is one of the inputs.
    """
    inputs = {Path(p).resolve() for p in (labels_path, *run_paths)}
    if Path(out_path).resolve() in inputs:
        raise InputError(
            f"--out {os.fspath(out_path)}: would overwrite an input; write to a new file"
        )
    saved = [load_saved_run(os.fspath(path)) for path in run_paths]
    labels = load_chunk_labels(labels_path)
    chunks = run_chunks(os.fspath(corpus_dir), saved[0].config)
    today = date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    result = fill_labels(saved, labels, chunks, labeller, date=today, k=k)
    write_filled_labels(result, out_path)
    return result
