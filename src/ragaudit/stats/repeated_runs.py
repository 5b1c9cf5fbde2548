"""The interval of a saved run's mean when the run holds R generations per question.

A repeated run (``config.repeats``, :mod:`ragaudit.data.saved_run.repeated`) gives each
question ``R`` outcomes that are correlated: the question, never the (question, repeat), is
the unit.  :func:`run_mean_interval` is the mean of one verdict or metric over the run with
:func:`~ragaudit.stats.repeats.repeated_mean_interval` (Korn and Graubard's beta interval on
the cluster-robust variance, questions as clusters); a run with one generation gets the
interval of an unrepeated run (:func:`~ragaudit.stats.policy.mean_interval`).  A comparison
of two repeated runs pairs the per-question means
(:func:`~ragaudit.data.per_question.repeat_means`) and keeps its exact sign-flip verdict.

References
----------
.. [1] Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small
   expected number of positive counts estimated from survey data. *Survey Methodology*
   24(2), 193-201.
.. [2] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640, section 3.
"""

from __future__ import annotations

import numpy as np

from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.stats.clustered import clustered_rate
from ragaudit.stats.intervals import IntervalResult
from ragaudit.stats.policy import mean_interval
from ragaudit.stats.repeats import REPEATED_METHOD, repeated_mean_interval
from ragaudit.stats.resampling import check_confidence

__all__ = ["cells_mean_interval", "run_mean_interval"]


def run_mean_interval(run: SavedRun, name: str, *, confidence: float = 0.95) -> IntervalResult:
    r"""The mean of verdict or metric ``name`` over ``run``, with its interval.

    With ``R`` repeats the statistic is :math:`\sum_{i,r} y_{ir} / \sum_i m_i` over the
    :math:`m_i` repeats of question :math:`i` that have a value (the mean of the question
    means when none is missing) and the interval is
    :func:`~ragaudit.stats.repeats.repeated_mean_interval` of the ``(n, R)`` matrix; when
    some repeats of a question have no value (a failed generation, an undecided verdict) the
    same interval, Korn-Graubard on the CR1 variance with questions as clusters
    (:func:`~ragaudit.stats.clustered.clustered_rate`), is taken over the cells that have
    one.  A question without any value is left out.  With ``R = 1``:
    :func:`~ragaudit.stats.policy.mean_interval` of the non-null values.

    Raises
    ------
    InputError
        No question has a value of ``name``, or a value lies outside [0, 1].

    Examples
    --------
    >>> run = SavedRun.from_dict({"config": {"k": 1, "repeats": 2}, "rows": [
    ...     {"id": f"q{i}", "retrieved": [], "metrics": {"correct": i % 2 == 0},
    ...      "repeats": [{"metrics": {"correct": i % 3 == 0}}]} for i in range(6)]})
    >>> r = run_mean_interval(run, "correct")
    >>> round(r.statistic, 4), r.method
    (0.4167, 'Korn-Graubard beta, questions as clusters')
    """
    return cells_mean_interval(run.repeat_outcomes(name), f"{name} of run {run.name!r}",
                               confidence=confidence)  # fmt: skip


def cells_mean_interval(
    outcomes: np.ndarray, what: str = "outcomes", *, confidence: float = 0.95
) -> IntervalResult:
    r"""The mean of an ``(n, R)`` matrix of (question, repeat) values in [0, 1], NaN where a
    cell has none, with the interval of :func:`run_mean_interval` (questions as clusters).

    The statistic is :math:`\sum_{i,r} y_{ir} / \sum_i m_i` over the valued cells; a row
    with no value is left out; one column is an unrepeated run
    (:func:`~ragaudit.stats.policy.mean_interval`).

    Raises
    ------
    InputError
        No cell has a value, or a value lies outside [0, 1] (``what`` names it).

    Examples
    --------
    >>> nan = float("nan")
    >>> r = cells_mean_interval(np.array([[1, 0], [1, nan], [0, 0], [nan, nan], [1, 1]]))
    >>> round(r.statistic, 4), r.method
    (0.5714, 'Korn-Graubard beta, questions as clusters')
    """
    confidence = check_confidence(confidence)
    outcomes = np.asarray(outcomes, dtype=float)
    valued = ~np.isnan(outcomes)
    outcomes = outcomes[valued.any(axis=1)]
    valued = valued[valued.any(axis=1)]
    if not len(outcomes):
        raise InputError(f"{what}: no question has a value")
    cells = outcomes[valued]
    outside = cells[(cells < 0) | (cells > 1)]
    if outside.size:
        raise InputError(
            f"{what}: expected values in [0, 1] for a mean interval, found {float(outside[0])}"
        )
    if outcomes.shape[1] == 1:
        return mean_interval(outcomes[:, 0], confidence=confidence)
    if valued.all():
        return repeated_mean_interval(outcomes, confidence=confidence)
    questions = np.nonzero(valued)[0]  # row index of each valued cell, row by row
    rate = clustered_rate(cells, questions, confidence=confidence)
    return IntervalResult(float(cells.mean()), rate.confidence_interval, confidence,
                          REPEATED_METHOD)  # fmt: skip
