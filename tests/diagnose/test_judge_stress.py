"""diagnose.judge_stress with scripted judges: counts, intervals (scipy's beta quantiles as
the oracle) and the rendered rows."""

from __future__ import annotations

import json

import pytest
from scipy.stats import beta

from ragaudit.data.golden import GoldenQuestion
from ragaudit.diagnose.judge_stress import stress_test
from ragaudit.exceptions import InputError
from ragaudit.reports.judge_stress import stress_report
from ragaudit.reports.renderer import render

QUESTIONS = [
    GoldenQuestion("q1", "How fast?", "Within 5 minutes.", ("d",), keywords=("5 minutes",)),
    GoldenQuestion("q2", "How many?", "At most 600 requests per minute.", ("d",)),
    GoldenQuestion("q3", "Who?", "Only the incident commander.", ("d",)),
    GoldenQuestion("q4", "Anything else?", "", (), answerable=False),
]


def always(verdict):
    return lambda cases: [verdict] * len(cases)


@pytest.fixture(scope="module")
def result():
    judges = {"yes": always(True), "unsure": always(None),
              "by family": lambda cases: [c.variant.family == "number_words" for c in cases]}
    return stress_test(QUESTIONS, None, judges, families=["number_words", "refusal"], seed=1,
                       golden_name="g.yaml")  # fmt: skip


def rows(result, judge):
    return {r.family: r for r in result.rows if r.judge == judge}


def test_counts(result):
    assert (result.n_references, result.unanswerable, len(result.variants)) == (3, 1, 5)
    yes = rows(result, "yes")
    # q3 has no number: number_words made 2 variants and skipped one; refusal made 3
    assert (yes["number_words"].n, yes["number_words"].skipped) == (2, 1)
    assert (yes["number_words"].right, yes["refusal"].right) == (2, 0)
    assert (yes["all"].n, yes["all"].decided, yes["all"].right) == (5, 5, 2)
    unsure = rows(result, "unsure")
    assert all(r.decided == 0 and r.accuracy is None for r in unsure.values())
    assert unsure["refusal"].decided_share.statistic == 0.0
    assert all(r.right == r.decided for r in rows(result, "by family").values())


def test_family_intervals_are_clopper_pearson(result):
    yes = rows(result, "yes")
    ci = yes["number_words"].accuracy.confidence_interval  # 2/2
    assert ci.low == pytest.approx(beta.ppf(0.025, 2, 1)) and ci.high == 1.0
    ci = yes["refusal"].accuracy.confidence_interval  # 0/3
    assert ci.low == 0.0 and ci.high == pytest.approx(beta.ppf(0.975, 1, 3))


def test_rendered_rows_and_json(result):
    text = render(stress_report(result), "table")
    title = "ragaudit judges stress: g.yaml (3 references, 5 variants, seed 1)"
    assert text.splitlines()[0] == title
    low = beta.ppf(0.025, 2, 1)
    first = next(line for line in text.splitlines() if line.split()[:1] == ["number_words"])
    assert first.split() == ["number_words", "kept", "2", "1", "2/2", "=", "1.000",
                             f"[{low:.3f},", "1.000]", "specificity", "2/2", "=", "1.000",
                             f"[{low:.3f},", "1.000]"]  # fmt: skip
    assert "misjudged or undecided: 3" in text  # the "yes" judge on the three refusals
    data = json.loads(render(stress_report(result), "json"))
    assert data["seed"] == 1 and data["judges"] == ["yes", "unsure", "by family"]
    verdicts = [v["verdicts"]["unsure"] for v in data["variants"]]
    assert verdicts == ["undecided"] * 5


def test_a_judge_that_returns_the_wrong_number_of_verdicts():
    with pytest.raises(InputError, match="judge 'short': expected 1 verdicts, found 0"):
        stress_test(QUESTIONS[:1], None, {"short": lambda cases: []}, families=["refusal"])
