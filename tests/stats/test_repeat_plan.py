"""``plan --calls``: the questions and repeats that minimise the interval for a budget of
generations, held to the formula V = s2_q/n + s2_g/(nR) + s2_j/(nRJ) computed by hand here
for every design, and to allocate_repeats' choice."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.exceptions import InputError
from ragaudit.stats.repeat_plan import plan_repeats
from ragaudit.stats.repeats import allocate_repeats, variance_budget


def _by_hand(s2q: float, s2g: float, calls: int, available: int | None, cost: float = 0.0,
             s2j: float = 0.0, j: int = 1) -> list[tuple[int, int, float]]:  # fmt: skip
    out = []
    for r in range(1, 51):
        n = math.floor(calls / (r + cost))
        if available is not None:
            n = min(n, available)
        if n < 1:
            break
        out.append((n, r, s2q / n + s2g / (n * r) + s2j / (n * r * j)))
    return out


@pytest.mark.parametrize(
    ("s2q", "s2g", "calls", "available", "cost"),
    [(0.04, 0.16, 300, 100, 0.0), (0.05, 0.05, 1000, None, 9.0), (0.1, 0.01, 500, 40, 0.0)],
)
def test_every_design_and_the_best_follow_the_formula(s2q, s2g, calls, available, cost):
    plan = plan_repeats({"questions": s2q, "generations": s2g}, calls,
                        questions_available=available, question_cost=cost)  # fmt: skip
    grid = _by_hand(s2q, s2g, calls, available, cost)
    best = min(grid, key=lambda p: (p[2], p[1]))
    assert (plan.best.questions, plan.best.repeats) == best[:2]
    assert plan.best.variance_of_mean == pytest.approx(best[2], rel=1e-12)
    for d in plan.designs:
        n, r, v = grid[d.repeats - 1]
        assert (d.questions, d.calls) == (n, n * r)
        assert d.variance_of_mean == pytest.approx(v, rel=1e-12)
        assert d.relative_width == pytest.approx(math.sqrt(v / best[2]))


def test_worked_example_and_the_judge_level():
    # 100 questions, 300 generations: R = 3 spends them all on the questions there are;
    # V = 0.04/100 + 0.16/300 = 0.000933..., R = 2 gives 0.04/100 + 0.16/200 = 0.0012
    plan = plan_repeats({"questions": 0.04, "generations": 0.16}, 300, questions_available=100)
    assert (plan.best.questions, plan.best.repeats) == (100, 3)
    assert plan.designs[1].variance_of_mean == pytest.approx(0.0012)
    judged = plan_repeats({"questions": 0.04, "generations": 0.1, "judge": 0.12}, 300,
                          judge_calls=2, questions_available=100)  # fmt: skip
    assert judged.best.variance_of_mean == pytest.approx(0.04 / 100 + 0.1 / 300 + 0.12 / 600)


def test_from_a_budget_it_agrees_with_allocate_repeats():
    budget = variance_budget([[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1], [0, 1, 1]])
    for calls, available, cost in [(60, 12, 0.0), (300, None, 8.0), (50, 5, 0.0)]:
        plan = plan_repeats(budget, calls, questions_available=available, question_cost=cost)
        want = allocate_repeats(budget, calls, questions_available=available, question_cost=cost)
        assert (plan.best.questions, plan.best.repeats) == (want.questions, want.repeats)
        assert plan.current is not None and plan.current.questions == 5


def test_bad_components_are_refused():
    with pytest.raises(InputError, match="expected a 'generations' variance"):
        plan_repeats({"questions": 0.1}, 10)
    with pytest.raises(InputError, match=r"expected 'questions' >= 0, found -0\.1"):
        plan_repeats({"questions": -0.1, "generations": 0.1}, 10)
    with pytest.raises(InputError, match="every variance is 0"):
        plan_repeats({"questions": 0.0, "generations": 0.0}, 10)


def test_cli_prints_the_best_design_and_its_method():
    result = CliRunner().invoke(main, [
        "plan", "--calls", "300", "--between-questions", "0.04", "--within", "0.16",
        "--questions-available", "100",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "best for 300 generations: 100 questions x 3 repeats (300 generations)" in text
    assert f"standard error of the mean {math.sqrt(0.04 / 100 + 0.16 / 300):.4f}" in text
    assert "Searle, Casella & McCulloch 1992" in text and "Cochran 1977" in text
    data = json.loads(CliRunner().invoke(main, [
        "plan", "--calls", "300", "--between-questions", "0.04", "--within", "0.16",
        "--questions-available", "100", "--format", "json",
    ]).output)  # fmt: skip
    assert data["best"]["repeats"] == 3
    assert data["best"]["variance_of_mean"] == pytest.approx(0.04 / 100 + 0.16 / 300)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--calls", "10", "--between-questions", "0.1"], "both --between-questions and --within"),
        (["--between-questions", "0.1"], "apply to --calls N"),
        (["--calls", "10", "--from", "x.json", "--within", "0.1"], "not both"),
    ],
)
def test_cli_option_errors(args, message):
    result = CliRunner().invoke(main, ["plan", *args])
    assert result.exit_code == 2
    assert message in result.output
