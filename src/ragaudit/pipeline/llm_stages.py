"""The LLM stages around the harness loop: the LLM judges of a saved run, and the dry run
that estimates what a run's generator and judges would send."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ragaudit.data.chunks import Chunk
from ragaudit.data.records import write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run.summary import summarise_run
from ragaudit.exceptions import InputError
from ragaudit.pipeline.build import build_generator, prepare
from ragaudit.pipeline.config import RunConfig
from ragaudit.pipeline.costs import combine_llm_costs
from ragaudit.pipeline.executors import units_of
from ragaudit.pipeline.steps import retrieve

if TYPE_CHECKING:
    from ragaudit.llm.config import LLMConfig
    from ragaudit.llm.replies import DryRunEstimate

__all__ = ["estimate_llm_judging", "judge_with_llm", "plan_llm_run"]


def judge_with_llm(
    saved: SavedRun,
    chunks: Sequence[Chunk],
    llm_config: LLMConfig,
    *,
    repeats: int = 1,
    judge_names: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    usage: dict[str, Any] | None = None,
    only_undecided: bool = False,
) -> tuple[SavedRun, dict[str, Any]]:
    """Add the LLM judges' verdicts to a saved run, recompute its summary, rewrite it.

    Each answered row (each (question, repeat) generation of a repeated run, its verdicts in
    its own entry of ``repeats``) gets the verdicts of
    :class:`ragaudit.judges.llm.LLMJudges` merged into ``judges`` (offline verdicts of other
    names are kept) and the judge metrics in ``metrics``; a judge that fails records
    ``judge_error`` and nulls only its own metrics.  The summary is recomputed with
    :func:`~ragaudit.data.saved_run.summary.summarise_run` (so ``n_scored`` and
    ``metrics_answerable`` cover the new metrics), ``judge_errors`` counts failures per
    judge, and ``llm`` adds the judges' calls, tokens and cost (cached replies included, so a
    rerun records the same figure) to those of the generator.  The file at ``saved.path`` is
    replaced atomically.

    Parameters
    ----------
    saved : SavedRun
        Written by :func:`ragaudit.pipeline.harness.evaluate_configuration` (``path`` set).
    chunks : sequence of Chunk
        The chunks the run was made with (context texts are rebuilt from ``context_ids``).
    llm_config : LLMConfig
    repeats : int, default 1
        Ask each judge ``repeats`` times and record the agreement.
    judge_names : sequence of str, optional
        Default: every judge of :data:`ragaudit.judges.llm.JUDGE_NAMES`.
    progress : callable, optional
        ``progress(done, total)`` over (question, judge, repeat) tasks.
    usage : dict, optional
        Receives ``usage["judges"]``: what this call sent (HTTP requests, cache hits, tokens).
    only_undecided : bool, default False
        Send only the rows the offline judges left undecided (``judges.reasons``).

    Returns
    -------
    (SavedRun, dict)
        The judged run as written (``path`` set) and
        :func:`ragaudit.judges.llm.summarize_judges` of the judged rows.
    """
    from ragaudit.judges.llm import JUDGE_NAMES, LLMJudges, judge_saved_run
    from ragaudit.llm.client import LLMClient

    if saved.path is None:
        raise InputError("judge_with_llm: the saved run has no path to write to")
    texts = {c.chunk_id: c.text for c in chunks}
    previous = dict(saved.summary.get("llm") or {}).get("by_stage") or {}
    with LLMClient(llm_config, stage="the LLM judge stage") as client:
        judges = LLMJudges(client, tuple(judge_names or JUDGE_NAMES), repeats=repeats)
        judged, report = judge_saved_run(saved, texts, judges, progress, only_undecided)
        judge_cost = client.run_cost()
        if usage is not None:
            usage["judges"] = client.usage_summary()
    summary = summarise_run(judged).to_dict()
    stages = {name: cost for name, cost in previous.items() if name != "judges"}
    stages["judges"] = judge_cost
    summary["llm"] = combine_llm_costs(stages)
    return write_saved_run(saved.path, judged.replace(summary=summary)), report


def estimate_llm_judging(
    saved: SavedRun,
    chunks: Sequence[Chunk],
    llm_config: LLMConfig,
    *,
    repeats: int = 1,
    judge_names: Sequence[str] | None = None,
    only_undecided: bool = False,
) -> DryRunEstimate:
    """What :func:`judge_with_llm` would send, sending nothing (``ragaudit judge --dry-run``):
    calls, cache hits, tokens (``ceil(chars / 4)``) and cost, by
    :meth:`ragaudit.judges.llm.LLMJudges.dry_run` over the run's answered rows (every
    (question, repeat) generation of a repeated run)."""
    from ragaudit.judges.llm import JUDGE_NAMES, LLMJudges, generation_rows, items_from_rows
    from ragaudit.llm.client import LLMClient

    texts = {c.chunk_id: c.text for c in chunks}
    with LLMClient(llm_config, stage="the LLM judge stage") as client:
        judges = LLMJudges(client, tuple(judge_names or JUDGE_NAMES), repeats=repeats)
        # every (question, repeat) generation of a repeated run, as judge_with_llm sends them
        _, items = items_from_rows(generation_rows(saved), texts, only_undecided)
        return judges.dry_run(items)


def plan_llm_run(run: RunConfig) -> dict[str, Any]:
    """Dry run of :func:`~ragaudit.pipeline.harness.run_pipeline`: the LLM calls, tokens and
    cost it would need.

    Nothing is sent and nothing is written.  Retrieval runs for real (it is local), so the
    generator's prompts are exact; input tokens are estimated as ``ceil(chars / 4)`` and the
    output as each prompt's expected length, and calls already in the cache count as free.
    The judges need answers: a cached answer (or the extractive reader's) is used as is; an
    answer not generated yet is assumed to be a non-refusal with one citation, of the
    generator's expected length, which bounds the judges' calls from above.

    Returns
    -------
    dict
        ``{"n_questions", "generator": estimate or None, "judges": estimate or None,
        "calls", "cached_calls", "estimated_input_tokens", "estimated_output_tokens",
        "estimated_cost_usd"}`` (estimates as :meth:`DryRunEstimate.to_dict`; cost ``None``
        when a model is not in the price table).  With ``run.repeats`` R every (question,
        repeat) unit is counted: the generator and the judges each get R times the prompts of
        one repeat (``n_units``); a repeat that answers as another does is a cache hit when
        run, so this is an upper bound for the judges.
    """
    from ragaudit.judges.prompts import GENERATOR
    from ragaudit.llm.client import LLMClient

    prepared = prepare(run)
    limit, k, generator = run.limit, run.k, run.generator
    questions = list(prepared.golden)[:limit] if limit is not None else list(prepared.golden)
    chunks_by_id = {c.chunk_id: c for c in prepared.chunks}
    depth = max(20, k)
    found = [retrieve(q, prepared.retriever, chunks_by_id, k, depth) for q in questions]
    pairs = [(f.question.question, f.context) for f in found]
    repeats = run.repeats
    estimates: dict[str, Any] = {"generator": None, "judges": None}
    answers: list[str]
    placeholder = "x" * (4 * GENERATOR.expected_output_tokens) + " [1]."
    the_generator = build_generator(
        generator, prepared.chunks, seed=run.seed, llm_config=run.llm_config
    )
    try:
        if generator == "openai":
            gen: Any = the_generator
            # every (question, repeat) unit is one request with the unit's seed and repeat
            every = units_of(questions, run.seed, run.repeats)
            unit_pairs = [pairs[u.index] for u in every]
            seeds = [(u.seed, u.repeat) for u in every]
            estimates["generator"] = gen.dry_run(unit_pairs, seeds).to_dict()
            answers = []
            for u in every[:: run.repeats]:  # the judges read the first repeat's answer
                cached = gen.cached_answer(*pairs[u.index], seed=u.seed, repeat=u.repeat)
                answers.append(placeholder if cached is None else cached)
        else:
            answers = [the_generator.generate(q, ctx).answer for q, ctx in pairs]
    finally:
        close = getattr(the_generator, "close", None)
        if callable(close):
            close()
    llm_config = run.llm_config
    if run.judges == "llm":
        if llm_config is None:
            raise InputError("judges 'llm': an LLM config is needed")
        from ragaudit.judges.llm import LLMJudges, items_from_rows

        rows = [
            {
                "id": f.question.id,
                "question": f.question.question,
                "answer": answer,
                "context_ids": [c.chunk_id for c in f.context],
                "reference_answer": f.question.answer,
                "answerable": f.question.answerable,
            }
            for f, answer in zip(found, answers, strict=True)
        ]
        _, items = items_from_rows(rows * repeats, {c.chunk_id: c.text for c in prepared.chunks})
        with LLMClient(llm_config, stage="the LLM judge stage") as client:
            estimates["judges"] = (
                LLMJudges(client, repeats=run.judge_repeats).dry_run(items).to_dict()
            )
    parts = [e for e in estimates.values() if e is not None]
    costs = [e["estimated_cost_usd"] for e in parts]
    return {
        "n_questions": len(questions),
        **({"n_units": len(questions) * repeats, "repeats": repeats} if repeats > 1 else {}),
        **estimates,
        "calls": sum(e["calls"] for e in parts),
        "cached_calls": sum(e["cached_calls"] for e in parts),
        "estimated_input_tokens": sum(e["estimated_input_tokens"] for e in parts),
        "estimated_output_tokens": sum(e["estimated_output_tokens"] for e in parts),
        "estimated_cost_usd": None if any(c is None for c in costs) else math.fsum(costs),
    }
