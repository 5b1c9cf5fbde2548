"""The numbers a run of production traces gives without a golden set: how often the system
answered, its p95 latency and its $/question, each with its interval and n.

They are the dashboard's own rows (:func:`~ragaudit.diagnose.dashboard.dashboard_rows`: p95
latency from order statistics, $/question with the amount interval) and the share of questions
answered (not abstained, no generation error) with the Clopper-Pearson interval, the
dashboard's rate row.  No gold document is needed for any of them.
"""

from __future__ import annotations

from dataclasses import replace

from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.audit_result import DashboardRow
from ragaudit.diagnose.dashboard import _rate_row, dashboard_rows
from ragaudit.diagnose.funnel import compute_funnel

__all__ = ["trace_numbers"]


def trace_numbers(saved: SavedRun, *, seed: int = 0) -> tuple[DashboardRow, ...]:
    """Answered share, p95 latency and $/question of ``saved``.

    .. math:: \\text{answered} = \\#\\{q : \\text{answer recorded and not an abstention}\\} / n

    Tested on spans written by the OpenTelemetry SDK (``tests/pipeline/test_trace_import.py``).

    Examples
    --------
    >>> from ragaudit.data.saved_run import SavedRun
    >>> rows = [{"id": f"q{i}", "retrieved": [], "answer": "x", "abstained": i == 3,
    ...          "latency_ms": {"total": 10.0 * i}, "usage": {"cost_usd": 0.01},
    ...          "metrics": {"answered": float(i != 3)}} for i in range(1, 5)]
    >>> run = SavedRun.from_dict({"name": "t", "config": {"k": 1}, "rows": rows})
    >>> [(r.key, r.value) for r in trace_numbers(run)]  # p95 of 10, 20, 30, 40 by numpy
    [('answered', 0.75), ('latency_p95', 38.5), ('cost_per_question', 0.01)]
    """
    funnel = compute_funnel(saved, seed=seed, n_resamples=200)
    by_key = {row.key: row for row in dashboard_rows(saved, funnel, None)}
    questions = saved.questions
    answered = sum(1 for q in questions if q.metric("answered") == 1.0)
    rate = _rate_row(
        "answered",
        "answered (not abstained)",
        answered,
        len(questions),
        "the rows' abstained and generation_error",
        "of every question, errors included",
    )
    # the dashboard's words are about runs ragaudit made (wall clock, a price table); here both
    # numbers were recorded by the traced system
    latency = replace(
        by_key["latency_p95"], label="p95 latency (root spans)", varies=False,
        source="the rows' latency_ms.total: each trace's root span, end minus start",
        note="as recorded in the spans",
    )  # fmt: skip
    cost = by_key["cost_per_question"]
    known = cost.value is not None
    cost = replace(
        cost, source="the rows' usage.cost_usd: llm.cost.total summed over each trace's LLM spans",
        note="as recorded in the spans" if known else
        "unknown: a question has no recorded cost (llm.cost.total on every LLM span)",
    )  # fmt: skip
    return (rate, latency, cost)
