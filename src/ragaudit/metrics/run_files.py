"""Scoring a run *file* against loaded labels, as ``ragaudit evaluate`` does.

One place that reads a run file in the way the options say (score or file order, duplicate
policy, a chunk run lifted to documents with a chunk map, or a TREC run streamed in batches of
whole questions) and scores it: ``evaluate``, ``evaluate --filled`` and ``compare --qrels``
all go through :func:`evaluate_run_file`, so a run file scores the same everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ragaudit.data.formats import read_chunk_map, read_run
from ragaudit.data.qrels import Qrels
from ragaudit.exceptions import InputError
from ragaudit.metrics.evaluate import Evaluation, evaluate
from ragaudit.metrics.stream import evaluate_stream

__all__ = ["evaluate_run_file"]


def evaluate_run_file(
    qrels: Qrels,
    run_path: str | os.PathLike[str],
    names: Sequence[str],
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
    """Read the run file ``run_path`` and score it against ``qrels`` (:func:`evaluate`).

    ``unit`` is what the labels identify; with ``chunk_map_path`` the run is read as chunks
    and lifted to documents (``unit`` must be ``"doc"``).  ``stream`` reads a TREC run in
    batches of whole questions (:func:`ragaudit.metrics.stream.evaluate_stream`; macro
    averages only, no chunk map, no ``ignore_identical_ids``).  The other options are
    :func:`evaluate`'s and :func:`ragaudit.data.formats.read_run`'s.

    Raises
    ------
    InputError
        ``stream`` with an option it cannot honour, or ``chunk_map_path`` with ``unit="chunk"``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = path.write_text("q1 Q0 A 1 2.0 t\\nq1 Q0 B 2 1.0 t\\n")
    >>> ev = evaluate_run_file(Qrels({"q1": {"B": 1}}), path, ["mrr"])
    >>> ev.means["mrr"]  # B at rank 2: 1/2
    0.5
    """
    names = list(names)
    if stream:
        if chunk_map_path or average != "macro" or ignore_identical_ids:
            raise InputError(
                "--stream scores a TREC run as is: macro averages only, no --chunk-map, no "
                "--ignore-identical-ids"
            )
        return evaluate_stream(
            qrels,
            os.fspath(run_path),
            names,
            relevance_threshold=relevance_threshold,
            missing=missing,
            order=order,
            duplicates=duplicates,
        )
    run_unit = "chunk" if chunk_map_path else unit
    run = read_run(os.fspath(run_path), unit=run_unit, order=order, duplicates=duplicates)
    if chunk_map_path:
        if unit != "doc":
            raise InputError("--chunk-map lifts a chunk run to documents: use --unit doc")
        run = run.to_docs(read_chunk_map(os.fspath(chunk_map_path)))
    return evaluate(
        qrels,
        run,
        names,
        relevance_threshold=relevance_threshold,
        missing=missing,
        average=average,
        ignore_identical_ids=ignore_identical_ids,
    )
