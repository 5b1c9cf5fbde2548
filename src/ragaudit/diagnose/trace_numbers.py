"""The numbers a run of production traces gives without a golden set: how often the system
answered, its p95 latency and its $/question, each with its interval and n.

They are the dashboard's own rows (:func:`~ragaudit.diagnose.dashboard.dashboard_rows`: p95
latency from order statistics, $/question with the amount interval) and the share of questions
answered (not abstained, no generation error) with the Clopper-Pearson interval, the
dashboard's rate row.  No gold document is needed for any of them.
"""

from __future__ import annotations

from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.audit_result import DashboardRow
from ragaudit.diagnose.dashboard import _rate_row, dashboard_rows
from ragaudit.diagnose.funnel import compute_funnel

__all__ = ["trace_numbers"]


def trace_numbers(saved: SavedRun, *, seed: int = 0) -> tuple[DashboardRow, ...]:
    """Answered share, p95 latency and $/question of ``saved``.

    .. math:: \\text{answered} = \\#\\{q : \\text{answer recorded and not an abstention}\\} / n

    Tested on spans written by the OpenTelemetry SDK (``tests/pipeline/test_trace_import.py``).
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
    return (rate, by_key["latency_p95"], by_key["cost_per_question"])
