"""The evaluation harness: run every golden question through retrieve -> read -> judge.

For one configuration it writes one saved run (``docs/saved-run-format.md``):

1. each question is retrieved to ``retrieval_depth = max(20, k)`` chunks, so the run can be
   re-sliced later at any ``k <= depth``; the top ``k`` chunks are the generator's context;
2. the generator answers, the offline judges score the answer;
3. finished rows are checkpointed to ``<name>.partial.jsonl`` as they complete, so an
   interrupted run resumes where it stopped (when the configuration is unchanged);
4. retrieval metrics are computed once for all questions with
   :func:`ragaudit.metrics.evaluate`, at document level by lifting each question's top-``k``
   chunks to their documents (a document counts at the rank of its first chunk), and at chunk
   level (``chunk_`` prefix) when chunk labels are given;
5. the file ``<out>/<name>.json`` (``<name>.limit<N>.json`` with a limit) is written
   atomically and the checkpoint removed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragaudit.data.chunks import Chunk
from ragaudit.data.golden import GoldenSet
from ragaudit.data.qrels import Qrels
from ragaudit.data.records import Checkpoint, write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run.repeated import with_repeats
from ragaudit.data.saved_run.summary import summarise_run
from ragaudit.judges.offline import OFFLINE_JUDGE_METHODS
from ragaudit.labels.format import check_label_ids
from ragaudit.pipeline.build import build_generator, prepare
from ragaudit.pipeline.config import RunConfig, check_positive, saved_run_path
from ragaudit.pipeline.costs import combine_llm_costs, generator_identity, llm_cost_of_rows
from ragaudit.pipeline.executors import SEED_RULE, Unit, check_executor, units_of
from ragaudit.pipeline.generators import Generator
from ragaudit.pipeline.llm_stages import judge_with_llm
from ragaudit.pipeline.ray_executor import check_shippable, import_ray, run_on_ray
from ragaudit.pipeline.retrievers import Retriever
from ragaudit.pipeline.steps import (
    Retrieved,
    UnitWork,
    answer,
    concurrent_map,
    pool_each,
    retrieve,
)
from ragaudit.pipeline.summary import (
    RETRIEVAL_METRICS,
    judge_metrics,
    metric_key,
    retrieval_metrics,
)

__all__ = ["RowCallback", "evaluate_configuration", "run_pipeline"]

RowCallback = Callable[[dict[str, Any]], None]


def _with_judge_methods(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with ``offline_judges`` (the methods of :mod:`ragaudit.judges.offline`) after
    ``judges``: every row is judged offline here (:func:`ragaudit.pipeline.steps.answer`),
    whichever path built the configuration (``run``, an import replay, ``evaluate_pipeline``).
    """
    if "offline_judges" in config:
        return config
    out: dict[str, Any] = {}
    for key, value in config.items():
        out[key] = value
        if key == "judges":
            out["offline_judges"] = dict(OFFLINE_JUDGE_METHODS)
    out.setdefault("offline_judges", dict(OFFLINE_JUDGE_METHODS))
    return out


def evaluate_configuration(
    golden: GoldenSet,
    chunks: Sequence[Chunk],
    retriever: Retriever,
    generator: Generator,
    *,
    config: Mapping[str, Any],
    name: str,
    out_dir: str | Path,
    limit: int | None = None,
    chunk_labels: Qrels | None = None,
    record_latency: bool = True,
    on_row: RowCallback | None = None,
    depth: int | None = None,
    max_workers: int | None = None,
    executor: str = "threads",
    ray_address: str | None = None,
    parts: Mapping[str, Any] | None = None,
    save_as: str = "json",
    repeats: int = 1,
) -> SavedRun:
    """Run every golden question through one configuration and write its saved run.

    Parameters
    ----------
    golden : GoldenSet
    chunks : sequence of Chunk
        The chunked corpus the retriever indexes.
    retriever : Retriever
    generator : Generator
    config : mapping
        Must hold ``k``; stored verbatim (plus ``retrieval_depth``) in the saved run.
    name : str
        Configuration name (file stem).
    out_dir : str or Path
    limit : int, optional
        Only the first ``limit`` questions; written to ``<name>.limit<N>.json`` so a full run is
        never overwritten.
    chunk_labels : Qrels, optional
        Chunk-level labels (unit ``"chunk"``) for ``chunk_`` metrics and the
        ``answer_chunk_in_context`` judge.
    record_latency : bool, default True
        Without latency every byte of the file is reproducible.
    on_row : callable, optional
        Called with each finished row (progress bars).
    depth : int, optional
        Chunks retrieved per question (``retrieval_depth``); default ``max(20, k)``.
    max_workers : int, optional
        Retrieve and answer each question on a pool of this many threads, checkpointing each
        row as it finishes (a live pipeline whose calls wait on a network); the retriever and
        generator must then be thread-safe.  Rows keep the golden set's order.  With Ray,
        the number of workers (default and at most the cluster's CPUs).
    executor : {"threads", "ray"}, default "threads"
        Where the (question, repeat) units run (:mod:`ragaudit.pipeline.executors`); the
        executor is not part of the configuration, so a run interrupted on one resumes on the
        other.
    ray_address : str, optional
        With ``executor="ray"``: the cluster; default a local Ray instance.
    parts : mapping of str to object, optional
        With Ray: the user-supplied parts of the work, by the name a pickling error gives
        them; default ``{"retriever": retriever, "generator": generator}``.
    save_as : {"json", "parquet"}, default "json"
        The saved run's format (:data:`~ragaudit.pipeline.config.SAVE_FORMATS`); the format is
        not part of the configuration, so a run interrupted under one resumes under the other.
    repeats : int, default 1
        Generations per question, R: each (question, repeat) unit is retrieved and answered
        with its own seed (:func:`~ragaudit.pipeline.executors.unit_seed`) and the saved run
        holds all R (``docs/saved-run-format.md``, repeated runs).  Each finished unit is
        checkpointed; a resume calls none twice.

    Returns
    -------
    SavedRun
        Also written to disk (its ``path`` is set).
    """
    k = check_positive("k", config.get("k"))
    executor = check_executor(executor, ray_address)
    if limit is not None:
        check_positive("limit", limit)
    depth = max(20, k) if depth is None else check_positive("depth", depth)
    repeats = check_positive("repeats", repeats)
    seed = config.get("seed", 0)
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else 0
    full_config = _with_judge_methods({**config, "retrieval_depth": depth})
    if repeats > 1:
        full_config.update(repeats=repeats, repeat_seeds=[seed] * repeats,
                           repeat_seed_rule=SEED_RULE)  # fmt: skip
    if parts is None:
        parts = {"retriever": retriever, "generator": generator}
    if executor == "ray":
        check_shippable(parts)  # before the checkpoint is touched
    questions = list(golden)[:limit] if limit is not None else list(golden)
    path = saved_run_path(out_dir, name, limit, save_as)
    checkpoint = Checkpoint(path.with_suffix(".partial.jsonl"))
    done = checkpoint.resume(full_config)
    chunks_by_id = {c.chunk_id: c for c in chunks}
    every = units_of(questions, seed, repeats)
    by_unit: dict[tuple[str, int], dict[str, Any]] = {}
    for unit in every:
        row = done.get((unit.question.id, unit.repeat))
        if row is not None:
            by_unit[unit.question.id, unit.repeat] = _unit_row(row)
            if on_row is not None:
                on_row(by_unit[unit.question.id, unit.repeat])
    units = [u for u in every if (u.question.id, u.repeat) not in by_unit]
    work = UnitWork(retriever, generator, chunks_by_id, k, depth, chunk_labels, record_latency)
    lock = threading.Lock()

    def record(unit: Unit, row: dict[str, Any]) -> None:
        with lock:  # a repeat after the first says which it is, in the checkpoint only
            said = {"id": row["id"], "repeat": unit.repeat, "seed": unit.seed, **row}
            checkpoint.append(row if unit.repeat == 0 else said)
            by_unit[unit.question.id, unit.repeat] = row
            if on_row is not None:
                on_row(row)

    mapper = concurrent_map(generator)
    if executor == "ray":
        workers = None if max_workers is None else check_positive("max_workers", max_workers)
        run_on_ray(work, units, record, parts=parts, workers=workers, address=ray_address)
    elif max_workers is not None and units:
        workers = check_positive("max_workers", max_workers)
        pool_each(lambda unit: record(unit, work(unit)), units, workers)
    elif mapper is None:
        for unit in units:
            record(unit, work(unit))
    elif units:
        # Retrieval stays in this thread (local indexes need not be thread-safe); the model
        # calls run concurrently and each row is checkpointed as soon as it is finished.
        found_all = [(u, retrieve(u.question, retriever, chunks_by_id, k, depth)) for u in units]

        def answer_one(pair: tuple[Unit, Retrieved]) -> None:
            unit, found = pair
            row = answer(found, generator, chunk_labels=chunk_labels,
                         record_latency=record_latency, seed=unit.seed,
                         repeat=unit.repeat)  # fmt: skip
            record(unit, row)

        mapper(answer_one, found_all)
    lift = {c.chunk_id: c.doc_id for c in chunks}
    generations = [[by_unit[q.id, r] for q in questions] for r in range(repeats)]
    for rows in generations:  # each repeat's own retrieval (a live pipeline's may differ)
        _add_metrics(rows, k, lift, golden.qrels(), chunk_labels)
    seeds = {(u.question.id, u.repeat): u.seed for u in every}
    rows = [
        with_repeats(first, [(seeds[q.id, r], generations[r][i]) for r in range(1, repeats)])
        for i, (q, first) in enumerate(zip(questions, generations[0], strict=True))
    ]
    saved = SavedRun.from_dict({"name": name, "config": full_config, "rows": rows})
    summary = summarise_run(saved).to_dict()
    every_row = [row for rows in generations for row in rows]  # every call was paid for
    if any(isinstance(row.get("usage"), Mapping) for row in every_row):
        costs = llm_cost_of_rows(every_row, generator)
        summary["llm"] = combine_llm_costs({"generator": costs})
    saved = write_saved_run(path, saved.replace(summary=summary))
    checkpoint.remove()
    return saved


def _unit_row(row: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint line as the unit's row (without the ``repeat`` and ``seed`` it holds)."""
    if "repeat" not in row:
        return row
    return {key: value for key, value in row.items() if key not in ("repeat", "seed")}


def _add_metrics(
    rows: list[dict[str, Any]],
    k: int,
    lift: Mapping[str, str],
    qrels: Qrels,
    chunk_labels: Qrels | None,
) -> None:
    """Set each row's ``metrics``: retrieval at document (and chunk) level, then the judges'."""
    doc_metrics = retrieval_metrics(rows, k, lift, qrels=qrels, unit="doc")
    chunk_metrics = (
        retrieval_metrics(rows, k, lift, qrels=chunk_labels, unit="chunk")
        if chunk_labels is not None
        else {}
    )
    chunk_names = [metric_key(f, "chunk_") for f in RETRIEVAL_METRICS] if chunk_labels else []
    for row in rows:
        metrics: dict[str, float | None] = {
            metric_key(f): doc_metrics.get(row["id"], {}).get(metric_key(f))
            for f in RETRIEVAL_METRICS
        }
        metrics.update({n: chunk_metrics.get(row["id"], {}).get(n) for n in chunk_names})
        metrics.update(judge_metrics(row))
        row["metrics"] = metrics


def run_pipeline(
    run: RunConfig,
    *,
    on_start: Callable[[int], None] | None = None,
    on_row: RowCallback | None = None,
    on_judge_progress: Callable[[int, int], None] | None = None,
    llm_usage: dict[str, Any] | None = None,
    executor: str = "threads",
    ray_address: str | None = None,
) -> SavedRun:
    """Load, chunk, index, and evaluate one configuration end to end (what ``ragaudit run`` does).

    Every input is validated before anything is written: ``k >= 1``, ``chunk_size >
    chunk_overlap``, a known chunker/retriever/generator, a readable UTF-8 corpus with at least
    one document, and a golden set whose sources name corpus documents.

    ``generator="openai"`` answers with the LLM generator (concurrently, up to the config's
    ``max_concurrency``; each finished row is checkpointed at once).  ``judges="llm"`` then adds
    the LLM judges with :func:`~ragaudit.pipeline.llm_stages.judge_with_llm` (``judge_repeats``
    times each).  Both use ``run.llm_config`` (or the environment when it is ``None``); the
    run's ``summary.llm`` holds their calls, tokens and cost.

    Parameters
    ----------
    run : RunConfig
        The configuration.
    on_start : callable, optional
        ``on_start(n_questions)`` once the inputs are loaded (progress bars).
    on_row : callable, optional
        Called with each finished row.
    on_judge_progress : callable, optional
        ``on_judge_progress(done, total)`` over the LLM judges' tasks.
    llm_usage : dict, optional
        Receives what this invocation actually sent, per stage.
    executor : {"threads", "ray"}, default "threads"
        ``"ray"`` retrieves and answers the questions on Ray workers (the retriever and the
        generator are pickled and sent to them), see :func:`evaluate_configuration`.
    ray_address : str, optional
        With ``executor="ray"``: the cluster; default a local Ray instance.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "docs").mkdir()
    >>> _ = (root / "docs" / "leave.md").write_text("# Leave\\nStaff get 25 days of leave.")
    >>> _ = (root / "docs" / "it.md").write_text("# Laptops\\nLaptops are replaced every 3 years.")
    >>> _ = (root / "golden.yaml").write_text(
    ...     "- {id: q1, question: How many days of leave do staff get, answer: 25 days, "
    ...     "sources: [leave], keywords: [25 days]}")
    >>> saved = run_pipeline(RunConfig(root / "docs", root / "golden.yaml", k=1,
    ...                                out_dir=root / "out", record_latency=False))
    >>> saved.rows[0]["answer"], saved.rows[0]["metrics"]["hit@k"], saved.summary["n"]
    ('Staff get 25 days of leave [1].', 1.0, 1)
    """
    if check_executor(executor, ray_address) == "ray":
        import_ray()  # a missing extra is said before the corpus is read
    prepared = prepare(run)
    if run.judges == "llm":
        from ragaudit.llm.config import LLMConfig

        judge_config = (
            run.llm_config if run.llm_config is not None else LLMConfig.from_env_and_flags()
        )
        # Fail before any answer is generated, not after the whole run.
        judge_config.require_endpoint("the LLM judge stage")
    the_generator = build_generator(
        run.generator,
        prepared.chunks,
        seed=run.seed,
        llm_config=run.llm_config,
        temperature=run.reader_temperature,
    )
    config = prepared.config
    if run.chunk_labels is not None:
        check_label_ids(
            run.chunk_labels.to_dict(),
            {chunk.chunk_id for chunk in prepared.chunks},
            where=run.chunk_labels.name or "--chunk-labels",
        )
    try:
        if run.generator == "openai":
            config["llm_generator"] = generator_identity(the_generator)
        if on_start is not None:
            n_golden = len(prepared.golden)
            on_start(n_golden if run.limit is None else min(run.limit, n_golden))
        saved = evaluate_configuration(
            prepared.golden,
            prepared.chunks,
            prepared.retriever,
            the_generator,
            config=config,
            name=run.run_name,
            out_dir=run.out_dir,
            limit=run.limit,
            chunk_labels=run.chunk_labels,
            record_latency=run.record_latency,
            on_row=on_row,
            executor=executor,
            ray_address=ray_address,
            save_as=run.save_as,
            repeats=run.repeats,
            parts={
                f"retriever {run.retriever!r}": prepared.retriever,
                f"generator {run.generator!r}": the_generator,
            },
        )
    finally:
        if llm_usage is not None and run.generator == "openai":
            llm_usage["generator"] = the_generator.client.usage_summary()  # type: ignore[attr-defined]
        close = getattr(the_generator, "close", None)
        if callable(close):
            close()
    if run.judges == "llm":
        saved, _ = judge_with_llm(
            saved,
            prepared.chunks,
            judge_config,
            repeats=run.judge_repeats,
            progress=on_judge_progress,
            usage=llm_usage,
        )
    return saved
