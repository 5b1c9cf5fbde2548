"""Reports of the commands that make, check or judge saved runs: run, import, judge, cache,
and the summary of ``labels build``."""

from __future__ import annotations

from typing import Any

from ragaudit.data.saved_run import QuestionResult, SavedRun
from ragaudit.data.saved_run.metrics import LLM_JUDGE_METRICS
from ragaudit.data.saved_run.summary import (
    EndToEndCorrect,
    correct_refusal,
    count_judge_errors,
    end_to_end_correct,
    metric_means,
)
from ragaudit.diagnose.funnel_result import unjudged_hint
from ragaudit.diagnose.unjudged import RunJudged
from ragaudit.metrics.judged import JudgedCoverage
from ragaudit.pipeline.summary import RETRIEVAL_METRICS
from ragaudit.reports.report import KeyValues, Report, Section, Table, Text

__all__ = [
    "cache_clear_report",
    "cache_report",
    "dry_run_report",
    "invocation_line",
    "judge_report",
    "labels_build_report",
    "money",
    "run_summary_report",
]


def cache_report(path: str, info: Any | None) -> Report:
    """What the LLM cache holds (``info`` is a :class:`~ragaudit.llm.cache.CacheStats`).

    Examples
    --------
    >>> from ragaudit.reports.renderer import render
    >>> print(render(cache_report("/tmp/llm.sqlite", None), "table"), end="")
    cache /tmp/llm.sqlite: no cache yet (0 entries)
    """
    if info is None:
        machine = KeyValues((("path", path), ("entries", "0")), only=("csv",))
        return Report(
            f"cache {path}: no cache yet (0 entries)",
            (Section("", (machine,)),),
            data={"path": path, "entries": 0},
        )
    data = {
        "path": info.path,
        "entries": info.entries,
        "size_bytes": info.size_bytes,
        "input_tokens": info.input_tokens,
        "output_tokens": info.output_tokens,
        "by_model": info.by_model,
        "by_prompt_version": info.by_prompt_version,
    }
    blocks: list[Any] = [
        KeyValues(
            (
                ("entries", str(info.entries)),
                ("size", f"{info.size_bytes / 1024:.1f} KiB"),
                ("tokens cached", f"{info.input_tokens} input, {info.output_tokens} output"),
            )
        )
    ]
    sections = [Section("Cache", tuple(blocks))]
    for title, counts in (
        ("By model", info.by_model),
        ("By prompt version", info.by_prompt_version),
    ):
        if counts:
            rows = tuple((name, str(n)) for name, n in counts.items())
            sections.append(
                Section(title, (Table(("name", "entries"), rows, values=tuple(counts.items())),))
            )
    return Report(f"cache {info.path}", tuple(sections), data=data)


def cache_clear_report(path: str, removed: int | None) -> Report:
    """What ``cache clear`` did (``removed`` None: there was no cache).

    >>> from ragaudit.reports.renderer import render
    >>> print(render(cache_clear_report("/tmp/llm.sqlite", 3), "table"), end="")
    cache /tmp/llm.sqlite: removed 3 entries
    """
    line = f"cache {path}: " + (
        "nothing to clear" if removed is None else f"removed {removed} entries"
    )
    machine = KeyValues((("path", path), ("removed", str(removed or 0))), only=("csv",))
    return Report(line, (Section("", (machine,)),), data={"path": path, "removed": removed or 0})


def labels_build_report(
    summary: Any, out_path: str, chunking: str, labeller: str, usage: dict[str, Any] | None
) -> Report:
    """What ``labels build`` did: questions labelled and reused, complete ones in the file,
    the LLM calls and cost (``usage``: the client's ``usage_summary()``), and whether a person
    stopped the session early (``summary``: a :class:`~ragaudit.labels.build.BuildSummary`).
    """
    complete = len(summary.labels.complete_questions())
    lines = [
        f"labelled {len(summary.labelled)} question(s), reused {len(summary.reused)}; "
        f"{complete} complete in {out_path} ({chunking}, labeller {labeller})"
    ]
    if usage is not None:
        lines.append(
            f"LLM {usage['model']}: {usage['calls']} calls ({usage['cache_hits']} cached, "
            f"{usage['http_requests']} HTTP requests), tokens {usage['input_tokens']} in / "
            f"{usage['output_tokens']} out, cost {money(usage['cost_usd'])}"
        )
    if summary.stopped:
        lines.append(f"stopped: progress saved to {out_path}; run the same command again to resume")
    data = {
        "out": out_path,
        "chunking": chunking,
        "labeller": labeller,
        "labelled": list(summary.labelled),
        "reused": list(summary.reused),
        "complete": complete,
        "no_answer_chunk": list(summary.no_answer_chunk),
        "failed": dict(summary.failed),
        "stopped": summary.stopped,
        "llm": usage,
    }
    machine = KeyValues(
        (
            ("labelled", str(len(summary.labelled))),
            ("reused", str(len(summary.reused))),
            ("complete", str(complete)),
            ("failed", str(len(summary.failed))),
            ("stopped", str(summary.stopped).lower()),
            ("out", out_path),
        ),
        only=("csv",),
    )
    return Report("", (Section("", (Text(tuple(lines)), machine)),), data=data)


def money(value: float | None) -> str:
    """A cost in dollars, or why it is unknown.

    Examples
    --------
    >>> money(0.01234), money(None)
    ('$0.0123', 'unknown (model not in the price table)')
    """
    return "unknown (model not in the price table)" if value is None else f"${value:.4f}"


def _fraction(numerator: int, denominator: int) -> str:
    if denominator == 0:
        return "   n/a"
    return f"{numerator:>3}/{denominator:<3} = {numerator / denominator:.3f}"


def _mean_table(
    questions: list[QuestionResult], k: int, prefix: str, judged: JudgedCoverage | None
) -> Table:
    """The retrieval means at one level, then judged@k: how much of them rests on labelled
    items (the share of the top k that carries a label; "-" when unknown)."""
    keys = [f"{prefix}{family}@k" for family in RETRIEVAL_METRICS]
    means, _ = metric_means(questions, keys)
    values = (*(means.get(key) for key in keys), None if judged is None else judged.mean)
    return Table(
        (*(f"{family}@{k}" for family in RETRIEVAL_METRICS), f"judged@{k}"),
        (tuple("-" if v is None else f"{v:.3f}" for v in values),),
        align="r" * len(values),
        values=(values,),
    )


def _means_table(label: str, rows: tuple[tuple[str, float | None, int], ...]) -> Table:
    """``label | mean | n`` rows (a mean of ``None`` is shown as ``n/a``)."""
    return Table(
        (label, "mean", "n"),
        tuple((m, "n/a" if v is None else f"{v:.3f}", str(n)) for m, v, n in rows),
        values=rows,
    )


def invocation_line(usage: dict[str, Any]) -> str:
    """What this invocation actually sent (a fully cached rerun sends nothing)."""
    stages = [u for u in usage.values() if isinstance(u, dict)]
    requests = sum(int(u.get("http_requests", 0)) for u in stages)
    hits = sum(int(u.get("cache_hits", 0)) for u in stages)
    calls = sum(int(u.get("calls", 0)) for u in stages)
    tokens_in = sum(int(u.get("input_tokens", 0)) for u in stages)
    tokens_out = sum(int(u.get("output_tokens", 0)) for u in stages)
    costs = [u.get("cost_usd") for u in stages]
    cost = None if any(c is None for c in costs) else sum(float(c) for c in costs if c is not None)
    return (
        f"this invocation: {calls} LLM calls ({hits} cached, {requests} HTTP requests), "
        f"tokens sent {tokens_in} in / {tokens_out} out, cost {money(cost)}"
    )


def _unjudged(correct: EndToEndCorrect) -> str:
    """``  (2 unjudged, counted as not correct: q3, q9)`` or nothing."""
    if not correct.unjudged:
        return ""
    return f"  ({len(correct.unjudged)} unjudged, counted as not correct: " + (
        ", ".join(f"{qid} ({why})" for qid, why in correct.unjudged.items()) + ")"
    )


def _judge_error_text(judge_errors: dict[str, int]) -> str:
    if not judge_errors:
        return "none"
    return (
        ", ".join(f"{judge} {n}" for judge, n in judge_errors.items())
        + " (excluded from the means, see each row's 'judge_error')"
    )


def run_summary_report(
    saved: SavedRun,
    *,
    judged: RunJudged | None = None,
    usage: dict[str, Any] | None = None,
    saved_to: str | None = None,
) -> Report:
    """The end-of-run report: retrieval means (stating k, unit and averaging) with judged@k
    beside them, and end to end.

    ``saved`` is a saved run; ``judged`` its judged@k
    (:func:`~ragaudit.diagnose.unjudged.run_judged`: the share of each question's top k that
    carries a label, at document level and with chunk labels at chunk level; below its
    threshold the questions are named in a note); ``usage`` what this invocation sent to an
    LLM; ``saved_to`` where the run was written.  The JSON form is the run's name, config,
    summary and judged@k.

    Examples
    --------
    >>> from ragaudit.reports.renderer import render
    >>> row = {"id": "q1", "retrieved": [], "metrics": {"hit@k": 1.0, "recall@k": 1.0,
    ...        "precision@k": 0.5, "mrr@k": 1.0, "ndcg@k": 1.0, "map@k": 1.0, "answered": 1.0,
    ...        "correct": 0.0}}
    >>> saved = SavedRun.from_dict({"name": "k2", "config": {"k": 2, "seed": 0}, "rows": [row]})
    >>> print(render(run_summary_report(saved), "table"))
    k2  (1 questions: 1 answerable, 0 unanswerable; seed 0)
    <BLANKLINE>
    RETRIEVAL (document level, k=2, macro mean over 1 answerable questions)
      hit@2  recall@2  precision@2  mrr@2  ndcg@2  map@2  judged@2
      1.000     1.000        0.500  1.000   1.000  1.000         -
    <BLANKLINE>
    END TO END (offline judges, answerable questions)
      answered (any context)    1/1   = 1.000
      end-to-end correct        0/1   = 0.000
      vs the funnel           its stages 3 and 4 count only questions through the stages \
before them; end-to-end correct = stage 4 + correct by luck
      generation errors       none
      judge errors            none
    <BLANKLINE>
    """
    k = saved.k
    questions = list(saved.questions)
    answerable = [q for q in questions if q.answerable]
    unanswerable = [q for q in questions if not q.answerable]
    title = (
        f"{saved.name}  ({len(questions)} questions: {len(answerable)} answerable, "
        f"{len(unanswerable)} unanswerable; seed {saved.config.get('seed')})"
    )
    if saved.repeats > 1:  # the numbers below are one generation's: said, not implied
        title += f"; repeat 0 of {saved.repeats} below (every repeat is in the run)"
    sections: list[Section] = []
    scored = [q for q in questions if q.metric("hit@k") is not None]
    chunk_scored = [q for q in scored if q.metric("chunk_hit@k") is not None]
    levels = (
        ("", scored, f"document level, k={k}, macro mean over {len(scored)} answerable questions"),
        (
            "chunk_",
            chunk_scored,
            f"chunk level, k={k}, macro mean over {len(chunk_scored)} questions with chunk labels",
        ),
    )
    for prefix, subset, what in levels:
        if subset:
            coverage = None if judged is None else (judged.chunk if prefix else judged.doc)
            blocks: list[Any] = [_mean_table(subset, k, prefix, coverage)]
            warning = None if coverage is None else coverage.message()
            if warning:
                blocks.append(Text((f"unjudged: {warning}",), style="note"))
            sections.append(Section(f"Retrieval ({what})", tuple(blocks)))
    judged_by = "LLM" if saved.config.judged_by_llm else "offline"
    end: list[tuple[str, str]] = []
    decided = [q for q in answerable if q.metric("answered") is not None]
    if decided:
        end.append(
            (
                "answered (any context)",
                _fraction(sum(int(q.metric("answered") or 0) for q in decided), len(decided)),
            )
        )
    if answerable:
        # the one end-to-end count (every answerable question), as funnel and report print it
        correct = end_to_end_correct(questions)
        end.append(("end-to-end correct", _fraction(correct.count, correct.n) + _unjudged(correct)))
        end.append(
            (
                "vs the funnel",
                "its stages 3 and 4 count only questions through the stages before them; "
                "end-to-end correct = stage 4 + correct by luck",
            )
        )
        if correct.unjudged:
            end.append(("to judge them", unjudged_hint(correct.unjudged.values())))
    refusal = correct_refusal(questions)
    if refusal.n:
        end.append(("refused (unanswerable)", _fraction(refusal.count, refusal.n)))
    errors = sum(1 for q in questions if q.generation_error)
    end.append(
        (
            "generation errors",
            f"{errors} (see each row's 'generation_error'; their answer metrics are null)"
            if errors
            else "none",
        )
    )
    end.append(("judge errors", _judge_error_text(count_judge_errors(questions))))
    sections.append(
        Section(f"End to end ({judged_by} judges, answerable questions)", (KeyValues(tuple(end)),))
    )
    if judged_by == "LLM":
        means, counts = metric_means(questions, LLM_JUDGE_METRICS)
        llm_rows = tuple((m, means[m], counts[m]) for m in LLM_JUDGE_METRICS if m in means)
        sections.append(
            Section(
                "LLM judges (mean over the questions each judge decided)",
                (_means_table("judge", llm_rows),),
            )
        )
    document = saved.to_dict()
    llm = document["summary"].get("llm")
    tail: list[str] = []
    if isinstance(llm, dict):
        stages = llm.get("by_stage") or {}
        detail = ", ".join(f"{name} {cost.get('calls', 0)}" for name, cost in stages.items())
        tail.append(
            f"LLM {llm.get('model')}: {llm.get('calls', 0)} calls"
            + (f" ({detail})" if detail else "")
            + f", tokens {llm.get('input_tokens', 0)} in / {llm.get('output_tokens', 0)} out, "
            f"cost {money(llm.get('cost_usd'))} (cached replies included)"
        )
    expansion = saved.config.get("run_file_expansion")
    if expansion:
        tail.append(f"run file: {expansion}")
    if usage:
        tail.append(invocation_line(usage))
    if saved_to is not None:
        tail.append(f"saved: {saved_to}")
    if tail:
        sections.append(Section("", (Text(tuple(tail)),)))
    data = {
        "name": saved.name,
        "path": saved_to,
        "config": document["config"],
        "summary": document["summary"],
        "invocation": usage or None,
        "judged": None if judged is None else judged.to_dict(),
    }
    return Report(title, tuple(sections), data=data)


def dry_run_report(plan: dict[str, Any] | None) -> Report:
    """What ``run --dry-run`` would send (``plan`` is None when no LLM stage is asked for)."""
    if plan is None:
        line = (
            "dry run: no LLM stage requested (--generator openai or --judges llm); "
            "this run sends nothing"
        )
        return Report("", (Section("", (Text((line,)),)),), data={"calls": 0})
    lines = [f"dry run: nothing sent, nothing written ({plan['n_questions']} questions)"]
    for stage in ("generator", "judges"):
        estimate = plan.get(stage)
        if estimate is None:
            continue
        lines.append(
            f"  {stage:<9} {estimate['calls']} calls ({estimate['cached_calls']} cached), about "
            f"{estimate['estimated_input_tokens']} input + "
            f"{estimate['estimated_output_tokens']} output tokens, cost "
            f"{money(estimate['estimated_cost_usd'])} with {estimate['model']}"
        )
    lines.append(
        f"  total     {plan['calls']} calls ({plan['cached_calls']} cached), about "
        f"{plan['estimated_input_tokens']} input + {plan['estimated_output_tokens']} output "
        f"tokens, cost {money(plan['estimated_cost_usd'])}"
    )
    lines.append(
        "  (tokens: chars/4 estimate, schema retries excluded; judge calls for answers not yet "
        "generated assume a cited, non-refusing answer: an upper bound)"
    )
    return Report("", (Section("", (Text(tuple(lines)),)),), data=plan)


def judge_report(
    name: str,
    report: dict[str, Any],
    wanted: list[str],
    config: Any,
    totals: dict[str, Any],
    target: str,
) -> Report:
    """What ``ragaudit judge`` decided, what it cost, where it wrote the run."""
    title = (
        f"{name}: {report['n']} answers judged by {config.model} "
        f"(seed {config.seed}, temperature {config.temperature:g})"
    )
    rows = tuple((m, report["means"][m], report["n_decided"][m]) for m in wanted)
    table = _means_table("judge metric", rows)
    errors = report["judge_errors"]
    pairs = [("judge errors", ", ".join(f"{k} {v}" for k, v in errors.items()) or "none")]
    if report.get("n_generation_errors"):
        pairs.append(
            (
                "not judged",
                f"{report['n_generation_errors']} (generation_error: no answer to judge)",
            )
        )
    if "mean_agreement" in report:
        pairs.append(
            (
                "agreement between repeats",
                ", ".join(f"{k} {v:.3f}" for k, v in report["mean_agreement"].items()),
            )
        )
    pairs += [
        (
            "calls",
            f"{totals['calls']} ({totals['cache_hits']} cached, {totals['http_requests']} HTTP "
            f"requests), tokens {totals['input_tokens']} in / {totals['output_tokens']} out, "
            f"cost {money(totals['cost_usd'])}",
        ),
        ("written to", target),
    ]
    data = {"name": name, "model": config.model, **report, "usage": totals, "written_to": target}
    return Report(title, (Section("Verdicts", (table, KeyValues(tuple(pairs)))),), data=data)
