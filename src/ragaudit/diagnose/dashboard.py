"""The dashboard of the audit page: seven numbers, each with a 95% interval, n and the MDE.

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
                                  ``faithfulness`` (LLM judge runs only)
wrong abstention                  ``funnel``: (``died.3-refusal`` + ``unanswerable.answered_ids``)
                                  / (``stages[1].kept`` + ``unanswerable.n``)
================================  ==========================================================

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

from collections.abc import Sequence

from ragaudit.data.saved_run import QuestionResult, SavedRun
from ragaudit.diagnose.audit_result import MDE_DISCORDANCE, DashboardRow
from ragaudit.diagnose.funnel import FunnelResult
from ragaudit.diagnose.label_bias import BiasResult
from ragaudit.stats.intervals import proportion_interval
from ragaudit.stats.policy import is_binary, mean_interval
from ragaudit.stats.power import minimum_detectable_effect

__all__ = ["dashboard_rows"]


def _mde(n: int) -> float | None:
    return minimum_detectable_effect(n, MDE_DISCORDANCE) if n else None


def _answerable_values(questions: Sequence[QuestionResult], metric: str) -> list[float]:
    values = (q.metric(metric) for q in questions if q.answerable)
    return [v for v in values if v is not None]


def _mean_row(key: str, label: str, values: list[float], source: str, note: str) -> DashboardRow:
    if not values:
        return DashboardRow(key, label, None, None, None, 0, None, "", None, source, note)
    # One function for every mean ragaudit prints (the --cluster-by naive column too): a 0/1
    # sample is a rate and gets Clopper-Pearson (a bootstrap of 54 ones is the zero-width
    # [1, 1], issue 11); fractional scores get the betting interval, never zero-width.
    result = mean_interval(values)
    ci = result.confidence_interval
    binary = is_binary(values)
    return DashboardRow(
        key,
        label,
        result.statistic,
        ci.low,
        ci.high,
        len(values),
        int(sum(values)) if binary else None,
        result.method,
        _mde(len(values)),
        source,
        note,
    )


def _rate_row(key: str, label: str, count: int, n: int, source: str, note: str) -> DashboardRow:
    if not n:
        return DashboardRow(key, label, None, None, None, 0, None, "", None, source, note)
    result = proportion_interval(count, n)
    ci = result.confidence_interval
    return DashboardRow(
        key, label, count / n, ci.low, ci.high, n, count, result.method, _mde(n), source, note
    )


def dashboard_rows(
    saved: SavedRun, funnel: FunnelResult, bias: BiasResult | None
) -> tuple[DashboardRow, ...]:
    """The six dashboard numbers of one run (see the module docstring for each definition)."""
    rows = saved.questions
    k = funnel.k
    compare_src = "ragaudit compare --questions answerable (--format json): metrics[{}].mean"
    out = [
        _mean_row(
            "recall_doc",
            f"recall@{k}, document level",
            _answerable_values(rows, "recall@k"),
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
        chunk = _answerable_values(rows, "chunk_recall@k")
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
            _answerable_values(rows, "ndcg@k"),
            compare_src.format("ndcg@k"),
            "order: the generator reads the first chunks first",
        )
    )
    out.append(
        _mean_row(
            "precision",
            f"precision@{k}, document level",
            _answerable_values(rows, "precision@k"),
            compare_src.format("precision@k"),
            "relevant documents among the k sent: the cost and distraction term",
        )
    )
    correct = funnel.correct.count  # the one end-to-end count (data.saved_run_summary)
    out.append(
        _rate_row(
            "correct",
            "end-to-end correctness",
            correct,
            funnel.n,
            "ragaudit funnel (--format json): correct_end_to_end",
            "what the user experiences (answerable questions)",
        )
    )
    faith = _answerable_values(rows, "faithfulness")
    out.append(
        _mean_row(
            "faithfulness",
            "faithfulness",
            faith,
            compare_src.format("faithfulness"),
            "claims supported by the context"
            if faith
            else "not measured: run `ragaudit judge` (LLM faithfulness judge)",
        )
    )
    una = funnel.unanswerable
    wrong = len(funnel.died["3-refusal"]) + len(una.answered_ids)
    base = (funnel.stages[1].kept if funnel.n else 0) + una.n
    out.append(
        _rate_row(
            "wrong_abstention",
            "wrong abstention",
            wrong,
            base,
            "ragaudit funnel (--format json): (len(died.3-refusal) + "
            "len(unanswerable.answered_ids)) / (stages[1].kept + unanswerable.n)",
            "refusals with the evidence present + answers to unanswerable questions",
        )
    )
    return tuple(out)
