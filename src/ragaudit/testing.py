"""A regression gate for pytest: fail a test only when a candidate run is significantly worse.

::

    from ragaudit.testing import assert_not_worse

    def test_rag_is_not_worse_than_the_baseline():
        assert_not_worse("ci/baseline.json", "results/candidate.json",
                         metrics=["correct", "recall@k"], alpha=0.05)

The runs are compared question by question with :func:`ragaudit.compare_runs` (the same
tests, intervals and verdicts as ``ragaudit compare``), and the test fails with the comparison
table and the ids of the questions that got worse.  The rule is ``compare --fail-if-worse``'s:
only a ``SIGNIFICANT`` verdict with a negative difference fails.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ragaudit._validate import check_fraction, check_metric_names
from ragaudit.data.per_question import PerQuestionMetrics
from ragaudit.data.per_question_files import load_per_question_metrics
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.confounding import comparison_differences
from ragaudit.metrics import Evaluation
from ragaudit.reports.confounding import confounding_lines
from ragaudit.reports.renderer import render
from ragaudit.reports.stats import comparison_report
from ragaudit.stats import aligned_values
from ragaudit.stats.compare import Comparison, MetricComparison, compare_runs
from ragaudit.stats.verdicts import format_pvalue

__all__ = ["assert_not_worse"]

#: What :func:`assert_not_worse` compares: a file, a saved run, per-question values or an
#: :class:`~ragaudit.metrics.Evaluation` of a retrieval run.
RunInput = str | os.PathLike[str] | SavedRun | PerQuestionMetrics | Evaluation

_SHOWN_IDS = 20


def _worse_ids(
    row: MetricComparison, baseline: PerQuestionMetrics, candidate: PerQuestionMetrics
) -> list[str]:
    """Questions where the candidate's value is below the baseline's (sorted by id), paired
    as :func:`compare_runs` paired them (a null on either side is never worse)."""
    ids, a, b = aligned_values(baseline, candidate, row.metric)
    return [ids[i] for i in np.flatnonzero(b < a)]


def _failure_message(
    result: Comparison,
    failed: list[MetricComparison],
    baseline: PerQuestionMetrics,
    candidate: PerQuestionMetrics,
) -> str:
    lines = [
        f"candidate {result.name_b!r} is significantly worse than baseline {result.name_a!r} "
        f"on {', '.join(row.metric for row in failed)} (alpha {result.alpha:g})",
    ]
    for row in failed:
        ci = row.confidence_interval
        worse = _worse_ids(row, baseline, candidate)
        shown = ", ".join(worse[:_SHOWN_IDS]) + (
            f", ... ({len(worse)} in all)" if len(worse) > _SHOWN_IDS else ""
        )
        lines.append(
            f"  {row.metric}: {row.statistic:+.4f} (CI [{ci.low:+.4f}, {ci.high:+.4f}], "
            f"p {format_pvalue(row.pvalue)}, {row.p_method}); worse on {len(worse)} "
            f"question(s): {shown}"
        )
        if row.mcnemar is not None:
            m = row.mcnemar
            lines.append(
                f"    discordant: {m.a_only} right only in the baseline, {m.b_only} only in the "
                f"candidate: {', '.join(m.discordant_ids)}"
            )
    lines.extend(f"  {line}" for line in confounding_lines(result.config_differences))
    return "\n".join(lines) + "\n\n" + render(comparison_report(result), "table")


def assert_not_worse(
    baseline: RunInput,
    candidate: RunInput,
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    *,
    seed: int = 0,
    questions: str = "all",
    allow_partial: bool = False,
    allow_different_data: bool = False,
    **options: Any,
) -> Comparison:
    r"""Fail (``AssertionError``) only if ``candidate`` is significantly worse than ``baseline``.

    For each metric, with :math:`d_i = \text{candidate}_i - \text{baseline}_i` over the
    questions both runs hold, the test fails when the verdict of :func:`compare_runs` at
    ``confidence = 1 - alpha`` is ``SIGNIFICANT`` (paired permutation p < alpha *and* the
    interval of :math:`\bar d` excludes 0) and :math:`\bar d < 0`.  A change without evidence
    passes; so does any improvement.

    Parameters
    ----------
    baseline, candidate : path, SavedRun, PerQuestionMetrics or Evaluation
        Files are read as ``ragaudit compare`` reads them (saved runs, ``evaluate --per-query
        --format json`` output, JSON or JSONL per-question metrics).
    metrics : str or sequence of str, optional
        Metric(s) to gate (the spellings of ``compare -m``; one string is one metric);
        default every metric both hold.
    alpha : float in (0, 1), default 0.05
    seed : int, default 0
        Seed of the bootstrap and Monte Carlo parts (printed in the failure message).
    questions : {"all", "answerable", "unanswerable"}, default "all"
    allow_partial : bool, default False
    allow_different_data : bool, default False
        Gate saved runs whose corpus or golden set differ (refused otherwise, InputError).
    **options
        Passed to :func:`compare_runs` (``n_resamples``, ``n_permutations``, ``method``...).

    Returns
    -------
    Comparison
        The comparison, when no gated metric regressed.

    Raises
    ------
    AssertionError
        The message is the list of regressions, with the ids of the questions that got worse
        (and, for 0/1 metrics, the discordant ones), then the full comparison table.

    Examples
    --------
    >>> base = PerQuestionMetrics("base", {f"q{i}": {"hit": 1.0} for i in range(10)})
    >>> same = PerQuestionMetrics("new", {f"q{i}": {"hit": float(i != 3)} for i in range(10)})
    >>> assert_not_worse(base, same, ["hit"]).metrics[0].verdict  # one question: no evidence
    'too few differing questions'
    >>> worse = PerQuestionMetrics("new", {f"q{i}": {"hit": float(i < 2)} for i in range(10)})
    >>> assert_not_worse(base, worse, ["hit"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: candidate 'new' is significantly worse than baseline 'base' on hit (alpha 0.05)
      hit: -0.8000 (CI ..., p 0.008, exact (lattice)); worse on 8 question(s): q2, q3, ...
    ...
    """
    # pytest leaves this frame out of a failure's traceback: the user sees their own test line
    # and the message, not some eighty lines of this helper's source
    __tracebackhide__ = True
    alpha = check_fraction(alpha, "alpha")
    metrics = check_metric_names(metrics)  # "correct" is one metric
    differences = comparison_differences(
        baseline, candidate, allow_different_data=allow_different_data
    )
    first = load_per_question_metrics(baseline, "baseline")
    second = load_per_question_metrics(candidate, "candidate")
    result = compare_runs(
        first,
        second,
        metrics,
        confidence=1.0 - alpha,
        seed=seed,
        questions=questions,
        allow_partial=allow_partial,
        **options,
    )
    result = replace(result, config_differences=differences)
    failed = result.regressions(metrics)
    if failed:
        raise AssertionError(
            _failure_message(result, failed, first.subset(questions), second.subset(questions))
        )
    return result
