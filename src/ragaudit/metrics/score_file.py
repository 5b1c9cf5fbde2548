"""Score one run file against relevance labels, as ``ragaudit evaluate`` scores it.

The one path from a run file (TREC, JSONL or JSON; optionally read in batches, or lifted from
chunks to documents by a chunk map) to an :class:`~ragaudit.metrics.Evaluation`: ``evaluate``
calls it for each ``--run``, and :func:`ragaudit.compare_runs` with ``qrels=`` for each of the
two runs, so both score a file the same way.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ragaudit.exceptions import InputError

if TYPE_CHECKING:
    from ragaudit.data.qrels import Qrels
    from ragaudit.data.runs import Run
    from ragaudit.metrics.evaluate import Evaluation

__all__ = ["DEFAULT_METRICS", "read_run_file", "score_run_file"]

#: The metrics of ``ragaudit evaluate`` (and ``compare --qrels``) when none is requested.
DEFAULT_METRICS = ("ndcg@10", "recall@5", "precision@5", "mrr", "map")


def score_run_file(
    qrels: Qrels,
    run_path: str | os.PathLike[str],
    names: list[str],
    *,
    unit: str = "doc",
    relevance_threshold: int = 1,
    missing: str = "zero",
    order: str = "score",
    duplicates: str = "error",
    average: str = "macro",
    chunk_map_path: str | os.PathLike[str] | None = None,
    stream: bool = False,
    ignore_identical_ids: bool = False,
) -> Evaluation:
    """Score the run file ``run_path`` against ``qrels`` on the metrics ``names``.

    Reads the run (:func:`~ragaudit.data.formats.read_run`), lifts it to documents with
    ``chunk_map_path`` when given, and calls :func:`~ragaudit.metrics.evaluate` (or, with
    ``stream``, :func:`~ragaudit.metrics.stream.evaluate_stream`, which reads a TREC run in
    batches of whole questions); the keyword options are those of ``ragaudit evaluate``.

    Raises
    ------
    InputError
        ``stream`` with a chunk map, a micro average or ``ignore_identical_ids``; a chunk map
        with ``unit="chunk"``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ragaudit.data import Qrels
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> _ = path.write_text("q1 Q0 A 1 2.0 bm25\\nq1 Q0 B 2 1.0 bm25\\n")
    >>> score_run_file(Qrels({"q1": {"B": 1}}), path, ["mrr"]).means   # B at rank 2: 1/2
    {'mrr': 0.5}
    """
    # imported on call: `ragaudit evaluate --help` reads DEFAULT_METRICS and stays instant
    from ragaudit.metrics.evaluate import evaluate
    from ragaudit.metrics.stream import evaluate_stream

    if stream:
        if chunk_map_path or average != "macro" or ignore_identical_ids:
            raise InputError(
                "--stream scores a TREC run as is: macro averages only, no --chunk-map, no "
                "--ignore-identical-ids"
            )
        return evaluate_stream(
            qrels,
            run_path,
            names,
            relevance_threshold=relevance_threshold,
            missing=missing,
            order=order,
            duplicates=duplicates,
        )
    run = read_run_file(
        run_path, unit=unit, order=order, duplicates=duplicates, chunk_map_path=chunk_map_path
    )
    return evaluate(
        qrels,
        run,
        names,
        relevance_threshold=relevance_threshold,
        missing=missing,
        average=average,
        ignore_identical_ids=ignore_identical_ids,
    )


def read_run_file(
    run_path: str | os.PathLike[str],
    *,
    unit: str = "doc",
    order: str = "score",
    duplicates: str = "error",
    chunk_map_path: str | os.PathLike[str] | None = None,
) -> Run:
    """Read the run file ``run_path`` as ``evaluate`` does: at ``unit``, or as chunks lifted
    to documents through ``chunk_map_path`` (which needs ``unit="doc"``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> _ = path.write_text("q1 Q0 A 1 2.0 bm25\\nq1 Q0 B 2 1.0 bm25\\n")
    >>> read_run_file(path)["q1"]
    ['A', 'B']
    """
    from ragaudit.data.formats import read_chunk_map, read_run

    if chunk_map_path and unit != "doc":
        raise InputError("--chunk-map lifts a chunk run to documents: use --unit doc")
    run = read_run(run_path, unit="chunk" if chunk_map_path else unit, order=order,
                   duplicates=duplicates)  # fmt: skip
    return run.to_docs(read_chunk_map(chunk_map_path)) if chunk_map_path else run
