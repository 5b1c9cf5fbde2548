"""The budget question: for a fixed number of generations, how many questions and how many
repeats of each give the narrowest interval of the run's mean.

The variance of the mean of ``n`` questions x ``R`` generations x ``J`` judge calls under the
balanced nested random-effects model (Searle, Casella & McCulloch 1992, ch. 4) is

.. math:: V(n, R) = \\sigma^2_q / n + \\sigma^2_g / (nR) + \\sigma^2_j / (nRJ),

and a budget of ``C`` generations buys :math:`n = \\lfloor C / (R + c) \\rfloor` questions at
``R`` repeats (``c`` the cost of one more labelled question in generations; Cochran 1977,
section 10.6, two-stage sampling).  :func:`plan_repeats` lays out every ``R`` and marks the
best, the one :func:`~ragaudit.stats.repeats.allocate_repeats` returns.  The components come
from a repeated run (:func:`~ragaudit.stats.repeats.variance_budget`) or are given.
No file I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.exceptions import InputError
from ragaudit.stats.repeats import RepeatAllocation, VarianceBudget, allocation_grid

__all__ = ["PLAN_METHOD", "RepeatPlan", "plan_repeats"]

#: The method and references ``plan --calls`` prints.
PLAN_METHOD = (
    "V(n, R) = s2_questions/n + s2_generations/(nR) + s2_judge/(nRJ), the balanced nested "
    "random-effects model (Searle, Casella & McCulloch 1992, ch. 4), minimised over R with "
    "n = floor(calls / (R + question cost)) (Cochran 1977, section 10.6)"
)


@dataclass(frozen=True)
class RepeatPlan:
    """Result of :func:`plan_repeats`.

    Attributes
    ----------
    calls : int
        Generations to spend.
    components : dict of str to float
        ``questions``, ``generations`` and (optionally) ``judge`` variances.
    judge_calls : int
    designs : tuple of RepeatAllocation
        One per number of repeats shown (``R = 1..shown`` and the best), each with its
        ``relative_width`` to the best design's.
    best : RepeatAllocation
        The smallest variance (ties: fewer repeats).
    current : RepeatAllocation or None
        The run's own design, when the components came from a run.
    questions_available : int or None
    question_cost : float
    method : str
    """

    calls: int
    components: dict[str, float]
    judge_calls: int
    designs: tuple[RepeatAllocation, ...]
    best: RepeatAllocation
    current: RepeatAllocation | None
    questions_available: int | None
    question_cost: float
    method: str = PLAN_METHOD

    def to_dict(self) -> dict[str, Any]:
        def one(a: RepeatAllocation) -> dict[str, Any]:
            return {"questions": a.questions, "repeats": a.repeats, "calls": a.calls,
                    "variance_of_mean": a.variance_of_mean,
                    "standard_error": math.sqrt(a.variance_of_mean),
                    "relative_width": a.relative_width}  # fmt: skip

        return {
            "calls": self.calls, "components": self.components, "judge_calls": self.judge_calls,
            "questions_available": self.questions_available, "question_cost": self.question_cost,
            "best": one(self.best), "current": None if self.current is None else one(self.current),
            "designs": [one(d) for d in self.designs], "method": self.method,
        }  # fmt: skip


def _components(given: Mapping[str, float]) -> dict[str, float]:
    out = {}
    for key in ("questions", "generations", "judge"):
        value = given.get(key)
        if value is None:
            if key == "judge":
                continue
            raise InputError(f"components: expected a {key!r} variance, found none")
        if not math.isfinite(value) or value < 0:
            raise InputError(f"components: expected {key!r} >= 0, found {value}")
        out[key] = float(value)
    if not any(out.values()):
        raise InputError("components: every variance is 0; nothing to plan (the mean is exact)")
    return out


def plan_repeats(
    budget: VarianceBudget | Mapping[str, float],
    calls: int,
    *,
    judge_calls: int | None = None,
    questions_available: int | None = None,
    question_cost: float = 0.0,
    shown: int = 10,
) -> RepeatPlan:
    """Lay out ``R = 1..shown`` repeats (and the best ``R`` up to 50) for ``calls``
    generations.

    Parameters
    ----------
    budget : VarianceBudget or mapping
        A repeated run's :func:`~ragaudit.stats.repeats.variance_budget`, or the components
        ``{"questions": s2_q, "generations": s2_g[, "judge": s2_j]}``.
    calls : int
        Generations to spend (each with its judge call(s)).
    judge_calls : int, optional
        Judge calls per answer ``J`` (default: the budget's, else 1).
    questions_available : int, optional
        The questions there are (default unlimited).
    question_cost : float, default 0
        One more labelled question's cost, in generations.

    Examples
    --------
    s2_q = 0.04, s2_g = 0.16, 100 questions: 300 generations are best spent as 3 repeats
    (V = 0.04/100 + 0.16/300 = 0.000933).

    >>> plan = plan_repeats({"questions": 0.04, "generations": 0.16}, 300,
    ...                     questions_available=100)
    >>> plan.best.questions, plan.best.repeats, round(plan.best.variance_of_mean, 6)
    (100, 3, 0.000933)
    """
    current = None
    if isinstance(budget, VarianceBudget):
        components = dict(budget.components)
        calls_j = budget.n_judge_calls if judge_calls is None else judge_calls
        n, r = budget.n_questions, budget.n_repeats
        current = RepeatAllocation(n, r, n * r, budget.variance_of_mean, 1.0)
    else:
        components = _components(budget)
        calls_j = 1 if judge_calls is None else judge_calls
    if calls_j < 1:
        raise InputError(f"judge_calls: expected >= 1, found {calls_j}")
    if questions_available is not None and questions_available < 1:
        raise InputError(f"questions_available: expected >= 1, found {questions_available}")
    grid = allocation_grid(components, calls, judge_calls=calls_j,
                           questions_available=questions_available,
                           question_cost=question_cost)  # fmt: skip
    n, r, v = grid[0]
    for point in grid[1:]:  # allocate_repeats' rule: fewer repeats unless beaten by > 1e-15
        if point[2] < v - 1e-15:
            n, r, v = point

    def design(point: tuple[int, int, float]) -> RepeatAllocation:
        width = math.sqrt(point[2] / v) if v > 0 else 1.0
        return RepeatAllocation(point[0], point[1], point[0] * point[1], point[2], width)

    best = design((n, r, v))
    designs = tuple(design(p) for p in grid if p[1] <= shown or p[1] == r)
    if current is not None:
        current = design((current.questions, current.repeats, current.variance_of_mean))
    return RepeatPlan(calls, components, calls_j, designs, best, current, questions_available,
                      question_cost)  # fmt: skip
