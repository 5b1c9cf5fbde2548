"""The dashboard of the audit page: the chapter's six numbers, each with a 95% interval and n.

Each number is computed from the same function as the single-purpose command that prints it,
so the page and that command's JSON agree:

================================  ==========================================================
dashboard number                  equals
================================  ==========================================================
recall@k, document level          ``compare --questions answerable`` ``mean`` of ``recall@k``
recall@k, chunk level             ``labels bias`` ``summary.recall.chunk`` (with labels), else
                                  the mean of the run's ``chunk_recall@k``
nDCG@k, precision@k              ``compare --questions answerable`` ``mean`` of ``ndcg@k``,
                                  ``precision@k`` (both at document level)
end-to-end correctness            ``funnel`` ``correct_end_to_end``
faithfulness                      ``compare --questions answerable`` ``mean`` of
                                  ``faithfulness`` (offline sentence support, or the LLM judge)
over-refusal                      :func:`~ragaudit.diagnose.abstention.abstention_rates`:
                                  ``died.3-refusal`` / questions with the evidence in context
answered unanswerable             ``unanswerable.answered_ids`` / ``unanswerable.n``
p95 latency                       the rows' ``latency_ms.total``:
                                  :func:`~ragaudit.stats.quantile.quantile_interval`
$/question                        the rows' ``usage.cost_usd``:
                                  :func:`~ragaudit.stats.policy.amount_interval`; $0 offline
judged@k (labelled share)         :func:`~ragaudit.diagnose.unjudged.run_judged` ``doc``: the
                                  share of the top k's documents that carry a label (gold)
================================  ==========================================================

On a repeated run (``--repeats R``) the audit replaces the judged rows (correctness,
faithfulness, both wrong-abstention rates) by their means over every (question, repeat), with
the question-clustered interval: :func:`~ragaudit.diagnose.dashboard_repeats.repeated_judged_rows`.

Beside each number that rests on a judge (correctness, faithfulness, over-refusal through
the evidence judge) stands its decided share, ``decided 52/54``: the answerable questions
whose verdict the judge decided (:attr:`DashboardRow.decided`).  An undecided verdict is never
counted as right; the funnel counts it in its "unjudged" row.

Intervals: a 0/1 number (correctness, wrong abstention, a recall that is 0 or 1 on every
question) gets :func:`~ragaudit.stats.intervals.proportion_interval` (Clopper-Pearson exact,
Clopper & Pearson 1934: coverage never below 95%, which matters for rates near 1); a mean of
fractional per-question scores gets :func:`~ragaudit.stats.bounded.bounded_mean_interval`
(both through :func:`~ragaudit.stats.policy.mean_interval`)
(betting, Waudby-Smith & Ramdas 2024: coverage at least 95% for every distribution of the
scores in [0, 1]).  The choice follows the sample, not the metric: a nearly binary recall (a
few questions at 0.5) often gives an all-0/1 sample and Clopper-Pearson; that mixture covers
0.979-1.000 at n = 10-200 (``tests/stats/test_coverage_switch.py``).  The percentile
bootstrap covered 0.41-0.77 for recall-like means near 1 at n = 50 (most questions at 1.0)
and was the zero-width ``[v, v]`` whenever every question scored the same; the
Korn-Graubard MOVER interval that followed it covered 0.47 when 1% of questions score 0 and
4% score 0.95; the betting interval covers 0.997-1.000 in every scenario of
``benchmarks/coverage_stats.py`` (``tests/stats/test_coverage.py``).
Beside each number, the minimum detectable effect at its n
(:func:`~ragaudit.stats.minimum_detectable_effect`: exact McNemar power 0.8, alpha 0.05, 20%
of questions discordant between two systems, the chapter's planning assumption).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ragaudit.data.saved_run import QuestionResult, SavedRun
from ragaudit.diagnose.abstention import abstention_rates
from ragaudit.diagnose.audit_result import MDE_DISCORDANCE, DashboardRow
from ragaudit.diagnose.funnel import FunnelResult
from ragaudit.diagnose.label_bias import BiasResult
from ragaudit.diagnose.repeats import RepeatsAnalysis
from ragaudit.diagnose.unjudged import RunJudged
from ragaudit.stats.intervals import proportion_interval
from ragaudit.stats.mde import run_mde
from ragaudit.stats.policy import amount_interval, is_binary, mean_interval
from ragaudit.stats.quantile import min_n_for_upper, quantile_interval

__all__ = ["dashboard_rows", "flakiness_row"]


def _mde(values: Sequence[float]) -> tuple[float | None, str]:
    """The MDE of comparing this run with one like it, and what it assumes (stats.mde)."""
    if not len(values):
        return None, ""
    found = run_mde(values, discordance=MDE_DISCORDANCE)
    return found.mde, found.assumption


def _answerable_values(questions: Sequence[QuestionResult], metric: str) -> list[float]:
    """The metric's non-null values over ``questions`` (the caller keeps the answerable)."""
    values = (q.metric(metric) for q in questions)
    return [v for v in values if v is not None]


def _decided(questions: Sequence[QuestionResult], metric: str) -> tuple[int, int]:
    """``(decided, of)``: the questions whose ``metric`` verdict is not null, of all given."""
    return sum(q.metric(metric) is not None for q in questions), len(questions)


def _mean_row(key: str, label: str, values: list[float], source: str, note: str) -> DashboardRow:
    if not values:
        return DashboardRow(key, label, None, None, None, 0, None, "", None, source, note)
    # One function for every mean ragaudit prints (the --cluster-by naive column too): a 0/1
    # sample is a rate and gets Clopper-Pearson (a bootstrap of 54 ones is the zero-width
    # [1, 1], issue 11); fractional scores get the betting interval, never zero-width.
    result = mean_interval(values)
    ci = result.confidence_interval
    binary = is_binary(values)
    mde, assumption = _mde(values)
    return DashboardRow(
        key,
        label,
        result.statistic,
        ci.low,
        ci.high,
        len(values),
        int(sum(values)) if binary else None,
        result.method,
        mde,
        source,
        note,
        mde_assumption=assumption,
    )


def _rate_row(key: str, label: str, count: int, n: int, source: str, note: str) -> DashboardRow:
    if not n:
        return DashboardRow(key, label, None, None, None, 0, None, "", None, source, note)
    result = proportion_interval(count, n)
    ci = result.confidence_interval
    mde, assumption = _mde([1.0] * count + [0.0] * (n - count))
    return DashboardRow(
        key, label, count / n, ci.low, ci.high, n, count, result.method, mde, source, note,
        mde_assumption=assumption,
    )  # fmt: skip


_ABSTENTION_SOURCE = {
    "over_refusal": "len(died.3-refusal) / questions with the evidence in the context",
    "answered_unanswerable": "len(unanswerable.answered_ids) / unanswerable.n",
}


def _total_latency(latency: Mapping[str, float | None] | None) -> float | None:
    """A question's wall-clock time: ``total``, else the sum of its recorded steps."""
    if not latency:
        return None
    if latency.get("total") is not None:
        return float(latency["total"])  # type: ignore[arg-type]
    steps = [float(v) for v in latency.values() if v is not None]
    return sum(steps) if steps else None


def _latency_row(questions: Sequence[QuestionResult]) -> DashboardRow:
    label = "p95 latency (varies run to run)"
    source = "the rows' latency_ms.total (wall clock, varies from run to run)"
    values = [v for v in (_total_latency(q.latency_ms) for q in questions) if v is not None]
    if not values:
        return DashboardRow(
            "latency_p95", label, None, None, None, 0, None, "", None, source,
            "not recorded (the run was made with --no-timing)", unit="ms",
        )  # fmt: skip
    result = quantile_interval(values, q=0.95)
    ci = result.confidence_interval
    unbounded = math.isinf(ci.high)
    note = "the slow tail users wait for; wall clock: varies from run to run"
    if unbounded:
        note += f" (no upper bound below n = {min_n_for_upper(0.95)})"
    return DashboardRow(
        "latency_p95", label, result.statistic, ci.low, ci.high, result.n, None,
        result.method, None, source, note, unit="ms", varies=True,
    )  # fmt: skip


def _cost_row(saved: SavedRun) -> DashboardRow:
    label = "$/question"
    source = "the rows' usage.cost_usd (price table; a cache hit costs what the call would)"
    used = [q.usage for q in saved.questions if q.usage is not None]
    if not used:
        # no model was called (the extractive reader, offline judges): exactly $0, not n/a
        n = len(saved.questions)
        return DashboardRow(
            "cost_per_question", label, 0.0, 0.0, 0.0, n, None, "exact (no model calls)",
            None, "offline: no model calls", "offline: $0, no model was called", unit="usd",
        )  # fmt: skip
    costs = [u.get("cost_usd") for u in used]
    if any(c is None for c in costs) or len(used) < len(saved.questions):
        return DashboardRow(
            "cost_per_question", label, None, None, None, len(used), None, "", None, source,
            "unknown: a question has no priced usage (model not in the price table: --prices)",
            unit="usd",
        )  # fmt: skip
    result = amount_interval([float(c) for c in costs if c is not None])
    ci = result.confidence_interval
    return DashboardRow(
        "cost_per_question", label, result.statistic, ci.low, ci.high, len(costs), None,
        result.method, None, source, "what each answer costs at the price table's rates",
        unit="usd",
    )  # fmt: skip


def _judged_row(judged: RunJudged | None, k: int) -> DashboardRow:
    """judged@k at document level: what the nDCG@k and precision@k rows rest on.  No MDE: it
    says how much of the other numbers is measured, it is not compared."""
    doc = None if judged is None else judged.doc
    label = f"judged@{k}: labelled share of the top k"
    source = "ragaudit compare RUN_A RUN_B (its warnings); diagnose.unjudged.run_judged(run).doc"
    if doc is None:
        return DashboardRow(
            "judged", label, None, None, None, 0, None, "", None, source,
            "not measured: no answerable question names a gold document",
        )  # fmt: skip
    below = f"{len(doc.below)}/{doc.n_queries} questions below {doc.threshold:.0%}"
    row = _mean_row(
        "judged",
        label,
        list(doc.values),
        source,
        "documents never labelled count as non-relevant in nDCG@k and precision@k; " + below,
    )
    return replace(row, mde=None, mde_assumption="")


def dashboard_rows(
    saved: SavedRun,
    funnel: FunnelResult,
    bias: BiasResult | None,
    judged: RunJudged | None = None,
) -> tuple[DashboardRow, ...]:
    """The six dashboard numbers of one run (see the module docstring for each definition),
    then precision@k and judged@k (with ``judged``)."""
    rows = saved.questions
    answerable = [q for q in rows if q.answerable]  # filtered once, not once per metric
    k = funnel.k
    compare_src = "ragaudit compare --questions answerable (--format json): metrics[{}].mean"
    out = [
        _mean_row(
            "recall_doc",
            f"recall@{k}, document level",
            _answerable_values(answerable, "recall@k"),
            compare_src.format("recall@k"),
            "the ceiling: nothing downstream recovers a fact never retrieved",
        )
    ]
    if bias is not None:
        chunk = [q.chunk_recall for q in bias.questions]
        out.append(
            _mean_row(
                "recall_chunk",
                f"recall@{k}, chunk level",
                chunk,
                "ragaudit labels bias (--format json): summary.recall.chunk",
                "document labels cannot see chunking failures",
            )
        )
    else:
        chunk = _answerable_values(answerable, "chunk_recall@k")
        out.append(
            _mean_row(
                "recall_chunk",
                f"recall@{k}, chunk level",
                chunk,
                compare_src.format("chunk_recall@k"),
                "document labels cannot see chunking failures"
                if chunk
                else "no chunk labels (pass --labels FILE)",
            )
        )
    out.append(
        _mean_row(
            "ndcg",
            f"nDCG@{k}, document level",
            _answerable_values(answerable, "ndcg@k"),
            compare_src.format("ndcg@k"),
            "order: the generator reads the first chunks first",
        )
    )
    correct = funnel.correct.count  # the one end-to-end count (data.saved_run_summary)
    out.append(
        replace(
            _rate_row(
                "correct",
                "end-to-end correctness",
                correct,
                funnel.n,
                "ragaudit funnel (--format json): correct_end_to_end",
                "what the user experiences (answerable questions; an undecided verdict is "
                "the funnel's unjudged row, counted in n but never as correct)",
            ),
            decided=_decided(answerable, "correct"),
        )
    )
    faith = _answerable_values(answerable, "faithfulness")
    out.append(
        replace(
            _mean_row(
                "faithfulness",
                "faithfulness",
                faith,
                compare_src.format("faithfulness"),
                "claims supported by the context"
                if faith
                else "not measured: run `ragaudit judge` (LLM faithfulness judge)",
            ),
            decided=_decided(answerable, "faithfulness"),
        )
    )
    abstention = abstention_rates(funnel)
    for rate, label, note in (
        (abstention.over_refusal, "wrong abstention: refused with evidence",
         "refused although the evidence was in the context"),
        (abstention.answered_unanswerable, "wrong abstention: answered unanswerable",
         "answered a question the corpus cannot answer"),
    ):  # fmt: skip
        row = _rate_row(
            rate.key,
            label,
            rate.count,
            rate.n,
            f"ragaudit funnel (--format json): {_ABSTENTION_SOURCE[rate.key]}",
            f"{note} (over the {rate.denominator})",
        )
        if rate.key == "over_refusal":  # its denominator rests on the evidence judge
            row = replace(row, decided=_decided(answerable, "evidence_in_context"))
        out.append(row)
    out.append(_latency_row(rows))
    out.append(_cost_row(saved))
    out.append(
        _mean_row(
            "precision",
            f"precision@{k}, document level",
            _answerable_values(answerable, "precision@k"),
            compare_src.format("precision@k"),
            "an extra row: relevant documents among the k sent, the chapter's cost-and-"
            "distraction term",
        )
    )
    out.append(_judged_row(judged, k))
    return tuple(out)


def flakiness_row(analysis: RepeatsAnalysis | None) -> DashboardRow:
    """The dashboard's flakiness row: the share of answerable questions right on some repeats
    and wrong on others (Clopper-Pearson exact), pass^R beside it; "n/a" for an unrepeated run
    shown beside repeated ones."""
    label = "flaky questions (repeats disagree)"
    source = "ragaudit funnel (--format json): repeats.flaky"
    if analysis is None:
        return DashboardRow("flaky", label, None, None, None, 0, None, "", None, source,
                            "one generation per question: run --repeats R to measure")
    flaky, n = len(analysis.flaky), analysis.n_questions
    interval = proportion_interval(flaky, n)
    every = analysis.pass_all[-1]
    low, high = every.confidence_interval.low, every.confidence_interval.high
    worst = ", ".join(analysis.ids[f.index] for f in analysis.flaky[:3])
    note = (
        f"right on some of {analysis.repeats} repeats, wrong on others; pass^{every.k} "
        f"{every.statistic:.3f} [{low:.3f}, {high:.3f}]"
        + (f"; most changeable: {worst} (ragaudit show RUN QID)" if worst else "")
    )
    return DashboardRow(
        "flaky", label, flaky / n, interval.confidence_interval.low,
        interval.confidence_interval.high, n, flaky, interval.method, None, source, note,
    )  # fmt: skip
