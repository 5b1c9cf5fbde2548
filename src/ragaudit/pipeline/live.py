"""A live pipeline evaluated in-process: call the user's function on every golden question.

``evaluate_pipeline(pipeline, golden, corpus=...)`` calls ``pipeline(question)`` for each
question of the golden set and writes the same saved run ``ragaudit run`` writes
(``docs/saved-run-format.md``), so ``funnel``, ``compare`` and ``report`` read it as they read
any other run.  The function returns a :class:`PipelineOutput`, or a mapping with the same
keys:

``answer`` (str, required)
    The answer text.  Abstention is the refusal sentence (:data:`~ragaudit._text.REFUSAL`),
    and ``[n]`` markers cite the ``n``-th context, read as for the LLM generator.
``contexts`` (list of str) *or* ``chunk_ids`` (list of str): exactly one, required
    What was retrieved, best first.  Texts are matched to the corpus chunks as ``ragaudit
    import`` matches them (:class:`~ragaudit.data.context_match.ContextIndex`: exact text,
    else the best token overlap >= ``min_overlap``); a text matching no chunk is dropped and
    counted.  Chunk ids must be chunks of the corpus chunked with ``chunk_size``,
    ``chunk_overlap`` and ``chunker``.  The first ``k`` are the context the answer was
    written from; the rest (up to ``depth``) are retrieved but not read.
``scores`` (list of float or None, optional)
    One retrieval score per context, stored in ``retrieved[].score``.
``latency_ms`` (number or mapping of str to number, optional)
    The pipeline's own timing; a number is stored as ``{"total": ms}``.  Without it the call
    is timed here, as ``{"total": ms}``.  Either way latency is the one part of the file that
    differs between two runs (``record_latency=False`` leaves it null).
``cost_usd`` (number, optional)
    Stored as the row's ``usage.cost_usd``; the run's ``summary.llm.cost_usd`` is their sum
    (unknown when one question lacks it).

Everything after the call is the harness's (:func:`~ragaudit.pipeline.harness.
evaluate_configuration`): offline judges, retrieval metrics, the summary, the ``<name>.partial.
jsonl`` checkpoint that makes an interrupted run resume without calling the pipeline again for
a finished question, and rows in the golden set's order whatever order the calls finish in.
"""

from __future__ import annotations

import json
import math
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from ragaudit._validate import name_some
from ragaudit._version import version
from ragaudit.data.chunks import Chunk
from ragaudit.data.context_match import MIN_OVERLAP, ContextIndex
from ragaudit.data.golden import GoldenQuestion, GoldenSet
from ragaudit.data.qrels import Qrels
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError, RagauditWarning
from ragaudit.judges.offline import is_abstention
from ragaudit.llm.citations import extract_citations
from ragaudit.pipeline.build import golden_for_corpus
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.config import check_positive
from ragaudit.pipeline.corpus import corpus_sha256, load_corpus
from ragaudit.pipeline.executors import check_executor
from ragaudit.pipeline.generators import Generation
from ragaudit.pipeline.harness import evaluate_configuration
from ragaudit.pipeline.pipeline_output import PipelineOutput, check_output
from ragaudit.pipeline.retrievers import Retriever
from ragaudit.pipeline.timeout import CALL_TIMEOUT, call_with_timeout

__all__ = ["CALL_TIMEOUT", "PipelineOutput", "evaluate_pipeline"]

Pipeline = Callable[[str], Any]


class _Live:
    """Retriever and generator at once: one call of the user's pipeline per question.

    ``retrieve`` makes the call and keeps its output for ``generate``, which the harness calls
    next on the same thread (a thread-local, so concurrent questions never mix).
    """

    def __init__(
        self,
        pipeline: Pipeline,
        chunks: Sequence[Chunk],
        ids: Mapping[str, str],
        min_overlap: float,
        chunking: str,
        timeout: float | None = None,
    ) -> None:
        self._pipeline = pipeline
        self._timeout = timeout
        self._ids = ids
        self._chunk_ids = {c.chunk_id for c in chunks}
        self._index = ContextIndex(chunks, min_overlap)
        self._chunking = chunking
        self._local = threading.local()

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the thread-local, so the Ray executor can ship it to workers."""
        return {key: value for key, value in self.__dict__.items() if key != "_local"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    def retrieve(self, question: str, depth: int) -> list[tuple[str, float | None]]:
        """The retriever protocol by text (the first golden question with this text)."""
        return self._call(question, self._ids[question], depth)

    def retrieve_question(
        self, question: GoldenQuestion, depth: int
    ) -> list[tuple[str, float | None]]:
        """What the harness calls: errors name this question's id, even when another golden
        question has the same text."""
        return self._call(question.question, question.id, depth)

    def _call(self, question: str, qid: str, depth: int) -> list[tuple[str, float | None]]:
        start = time.perf_counter()
        raw = call_with_timeout(self._pipeline, question, self._timeout, f"question {qid!r}")
        elapsed = (time.perf_counter() - start) * 1000
        output = check_output(raw, qid)
        scores = list(output.scores) if output.scores is not None else None
        ranking: list[str] = []
        kept: list[float | None] = []
        counts: dict[str, int] | None = None
        if output.contexts is not None:
            counts = {"exact": 0, "overlap": 0, "unmatched": 0, "repeated": 0}
            for i, text in enumerate(output.contexts):
                match = self._index.match(text)
                if match.chunk_id is None:
                    counts["unmatched"] += 1
                    continue
                if match.chunk_id in ranking:
                    counts["repeated"] += 1
                    continue
                counts[match.how] += 1
                ranking.append(match.chunk_id)
                kept.append(None if scores is None else scores[i])
        else:
            for i, cid in enumerate(output.chunk_ids or ()):
                if cid not in self._chunk_ids:
                    raise InputError(
                        f"pipeline output of question {qid!r}: chunk_ids[{i}]: {cid!r} is not a "
                        f"chunk of the corpus chunked with {self._chunking}; return the texts "
                        "as contexts, or chunk as ragaudit does (ragaudit.pipeline."
                        "chunk_documents)"
                    )
                if cid not in ranking:  # a chunk retrieved twice counts once, as import does
                    ranking.append(cid)
                    kept.append(None if scores is None else scores[i])
        latency = output.latency_ms
        if latency is None:
            latency = {"total": round(elapsed, 1)}
        elif not isinstance(latency, Mapping):
            latency = {"total": float(latency)}
        usage = None if output.cost_usd is None else {"cost_usd": float(output.cost_usd)}
        self._local.generation = Generation(
            output.answer,
            is_abstention(output.answer),
            [] if is_abstention(output.answer) else extract_citations(output.answer),
            usage=usage,
            latency_ms={str(k): float(v) for k, v in latency.items()},
            row_extra=None if counts is None else {"context_match": counts},
        )
        return list(zip(ranking, kept, strict=True))[:depth]

    def generate(self, question: str, context: list[Chunk]) -> Generation:
        generation: Generation = self._local.generation
        del self._local.generation
        return generation


def _name_of(pipeline: Any) -> str:
    name = getattr(pipeline, "__qualname__", None) or type(pipeline).__qualname__
    module = getattr(pipeline, "__module__", None) or type(pipeline).__module__
    return f"{module}.{name}"


def _default_name(pipeline: Any) -> str:
    name = getattr(pipeline, "__name__", "")
    return name if isinstance(name, str) and name.isidentifier() else "pipeline"


def evaluate_pipeline(
    pipeline: Pipeline,
    golden: str | Path | GoldenSet,
    *,
    corpus: str | Path,
    k: int = 5,
    name: str | None = None,
    out_dir: str | Path = "ragaudit-results",
    config: Mapping[str, Any] | None = None,
    max_workers: int = 4,
    progress: Callable[[int, int], None] | None = None,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    chunker: str = "fixed",
    min_overlap: float = MIN_OVERLAP,
    depth: int | None = None,
    limit: int | None = None,
    chunk_labels: Qrels | None = None,
    record_latency: bool = True,
    executor: str = "threads",
    ray_address: str | None = None,
    timeout: float | None = CALL_TIMEOUT,
    save_as: str = "json",
    repeats: int = 1,
) -> SavedRun:
    """Call ``pipeline(question)`` on every golden question and write the saved run.

    See the module docstring for what ``pipeline`` returns and how it is scored.

    Parameters
    ----------
    pipeline : callable
        ``pipeline(question: str) -> PipelineOutput | Mapping``.  With ``max_workers > 1`` it
        is called from several threads at once.
    golden : str, Path or GoldenSet
        The golden set (its sources name corpus documents).
    corpus : str or Path
        The documents the pipeline retrieves from (a directory or one file).
    k : int, default 5
        How many of the returned contexts the answer was written from (``config.k``, the
        cut-off of every retrieval metric); the rest count as retrieved but not read.
    name : str, optional
        Run name (file stem); default the function's name.
    out_dir : str or Path, default "ragaudit-results"
    config : mapping, optional
        Your pipeline's settings (model, prompt version, ...), JSON values, stored as
        ``config.pipeline_config``.  They are part of the checkpoint's key: change them when
        the pipeline changes, or an interrupted run resumes with the old pipeline's rows.
    max_workers : int, default 4
        Questions in flight at once (threads; with Ray, workers, at most the cluster's CPUs).
    progress : callable, optional
        ``progress(done, total)`` after each question (questions resumed from the checkpoint
        count as done at once).
    chunk_size, chunk_overlap, chunker :
        How the corpus is chunked into the units contexts are matched to (``ragaudit run``'s
        defaults).
    min_overlap : float, default 0.5
        Threshold of the overlap match of a context text.
    depth : int, optional
        Retrieved chunks kept per question (``retrieval_depth``), default ``max(20, k)``.
    limit : int, optional
        Only the first ``limit`` questions (``<name>.limit<N>.json``).
    chunk_labels : Qrels, optional
        Chunk-level labels for the ``chunk_`` metrics.
    record_latency : bool, default True
        False writes ``latency_ms`` null, so every byte of the file is reproducible.
    executor : {"threads", "ray"}, default "threads"
        ``"ray"`` calls the pipeline on Ray workers (the ``ray`` extra): it must pickle, see
        :mod:`ragaudit.pipeline.ray_executor`.  Rows, order and checkpoint are the same; a run
        interrupted on one executor resumes on the other.
    ray_address : str, optional
        With ``executor="ray"``: the cluster (``HOST:6379``); default a local Ray instance.
    timeout : float or None, default 300
        Seconds one call may take (:data:`CALL_TIMEOUT`).  A call that overruns stops the run
        with a :class:`TimeoutError` naming the question (finished questions stay in the
        checkpoint; a rerun resumes after them).  Each call then runs on a helper thread;
        ``None`` waits forever and calls the function on the harness's own thread (with
        ``max_workers=1``, yours).
    save_as : {"json", "parquet"}, default "json"
        The saved run's format: ``<out_dir>/<name>.parquet`` with ``"parquet"``.
    repeats : int, default 1
        Calls per question, R: the pipeline is called R times on each question and the saved
        run holds all R generations (``config.repeats``), each checkpointed as it finishes;
        a resume calls no finished (question, repeat) again.

    Returns
    -------
    SavedRun
        Also written to ``<out_dir>/<name>.json`` (or ``.parquet``).

    Raises
    ------
    InputError
        An unusable input, or an output of the pipeline that breaks the contract (naming the
        question and the field).  Whatever the pipeline itself raises propagates unchanged;
        finished questions stay in the checkpoint and a rerun resumes after them.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "docs").mkdir()
    >>> _ = (root / "docs" / "leave.md").write_text("# Leave\\nStaff get 25 days of leave.")
    >>> _ = (root / "golden.yaml").write_text(
    ...     "- {id: q1, question: How many days of leave do staff get, answer: 25 days, "
    ...     "sources: [leave], keywords: [25 days]}")
    >>> def my_rag(question):
    ...     return {"answer": "Staff get 25 days of leave [1].",
    ...             "contexts": ["# Leave\\nStaff get 25 days of leave."]}
    >>> saved = evaluate_pipeline(my_rag, root / "golden.yaml", corpus=root / "docs", k=1,
    ...                           out_dir=root / "out", record_latency=False)
    >>> saved.rows[0]["metrics"]["hit@k"], saved.rows[0]["judges"]["correct"], saved.summary["n"]
    (1.0, True, 1)
    >>> pathlib.Path(saved.path).name
    'my_rag.json'
    """
    if not callable(pipeline):
        raise InputError(
            f"pipeline: expected a function question -> answer and contexts, found "
            f"{type(pipeline).__name__}"
        )
    k = check_positive("k", k)
    check_positive("max_workers", max_workers)
    check_executor(executor, ray_address)
    if timeout is not None and not (
        isinstance(timeout, (int, float))
        and not isinstance(timeout, bool)
        and math.isfinite(timeout)
        and timeout > 0
    ):
        raise InputError(f"timeout: expected a number of seconds > 0 or None, found {timeout!r}")
    extra = dict(config or {})
    try:
        json.dumps(extra, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"config: expected JSON values (str, number, list, dict), {exc}") from None
    documents = load_corpus(corpus)
    chunks = chunk_documents(documents, chunk_size, chunk_overlap, chunker)
    golden_set = (
        golden if isinstance(golden, GoldenSet) else golden_for_corpus(golden, documents, chunks)
    )
    ids: dict[str, str] = {}
    for question in golden_set:
        ids.setdefault(question.question, question.id)
    chunking = f"chunk_size={chunk_size}, chunk_overlap={chunk_overlap}, chunker={chunker!r}"
    live = _Live(pipeline, chunks, ids, min_overlap, chunking, timeout)
    full_config: dict[str, Any] = {
        "k": k,
        "chunk_size": chunk_size,
        "chunk_overlap": chunk_overlap,
        "chunker": chunker,
        "retriever": "pipeline",
        "generator": "pipeline",
        "judges": "offline",
        "pipeline": _name_of(pipeline),
        "context_match": {"min_overlap": float(min_overlap)},
        "corpus_sha256": corpus_sha256(documents),
        "golden_sha256": golden_set.sha256,
        "ragaudit_version": version(),
    }
    if extra:
        full_config["pipeline_config"] = extra
    repeats = check_positive("repeats", repeats)
    n_questions = len(golden_set) if limit is None else min(len(golden_set), limit)
    n_questions *= repeats  # progress counts (question, repeat) calls
    finished = [0]

    def on_row(row: Mapping[str, Any]) -> None:
        finished[0] += 1
        if progress is not None:
            progress(finished[0], n_questions)

    saved = evaluate_configuration(
        golden_set,
        chunks,
        cast(Retriever, live),
        live,
        config=full_config,
        name=name or _default_name(pipeline),
        out_dir=out_dir,
        limit=limit,
        chunk_labels=chunk_labels,
        record_latency=record_latency,
        on_row=on_row,
        depth=depth,
        max_workers=max_workers,
        executor=executor,
        ray_address=ray_address,
        parts={"pipeline": pipeline},
        save_as=save_as,
        repeats=repeats,
    )
    _warn_context_matches(saved, min_overlap)
    return saved


def _warn_context_matches(saved: SavedRun, min_overlap: float) -> None:
    """Say how many context texts matched no chunk (dropped, so they count as not retrieved)
    and how many matched a chunk an earlier context of the same question had already matched
    (merged into it, so that question retrieved fewer chunks than it returned texts: k and
    every metric count chunks).  The rows are read once for both."""
    counts = [(row["id"], row.get("context_match") or {}) for row in saved.rows]
    total = sum(sum(int(v or 0) for v in c.values()) for _, c in counts)
    missed = [qid for qid, c in counts if c.get("unmatched")]
    if missed:
        n = sum(int(c.get("unmatched") or 0) for _, c in counts)
        warnings.warn(
            f"{n} of {total} context texts match no chunk of the corpus (at least "
            f"{min_overlap:g} of their tokens in one chunk) and were dropped, in "
            f"{len(missed)} question(s): {name_some(missed)}; index the corpus chunked as "
            "ragaudit chunks it, or lower min_overlap",
            RagauditWarning,
            stacklevel=3,
        )
    merged = [qid for qid, c in counts if c.get("repeated")]
    if merged:
        n = sum(int(c.get("repeated") or 0) for _, c in counts)
        warnings.warn(
            f"{n} of {total} context texts matched a chunk that an earlier context of the same "
            f"question already matched, and were merged into it (counted once), in "
            f"{len(merged)} question(s): {name_some(merged)}; the metrics and k count chunks, "
            "not texts: return whole chunks of the corpus as chunked here (or chunk_ids), "
            "one per context",
            RagauditWarning,
            stacklevel=3,
        )
