"""Repeats shown: flaky questions, pass@k/pass^k, the variance budget and the funnel stage
their repeats part at, in ``funnel``, the dashboard and ``show``; nothing for R = 1.

The fixture is written by hand (this file, 2026-12-08): five answerable questions and one
unanswerable, three repeats each, whose places in each repeat are chosen so every expected
number below follows from the table in :func:`_plan` by counting (written beside each
assertion).  The repeated run is written in the saved-run format (``config.repeats``, each
row's ``repeats`` entries) and read through the saved run's repeats API.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.audit import build_audit
from ragaudit.diagnose.repeats import analyse_outcomes, analyse_repeats, stage_flakiness
from ragaudit.reports.audit_page import audit_report
from ragaudit.reports.renderer import render
from ragaudit.reports.repeats import repeats_section, with_repeats
from ragaudit.reports.report import Report
from ragaudit.stats.intervals import proportion_interval
from ragaudit.stats.repeats import variance_budget

# Per question, per repeat: (gold retrieved, evidence in context, abstained, correct).
OK = (True, True, False, True)
WRONG = (True, True, False, False)  # dies at 4-generation
REFUSED = (True, True, True, False)  # dies at 3-refusal
MISSED = (False, False, False, False)  # dies at 1-retrieval
NO_EVIDENCE = (True, False, False, False)  # dies at 2-evidence


def _plan() -> dict[str, tuple[tuple[bool, bool, bool, bool], ...]]:
    return {
        "q1": (OK, OK, OK),  # 3/3, stable
        "q2": (OK, WRONG, OK),  # 2/3, parts at generation
        "q3": (OK, REFUSED, WRONG),  # 1/3, parts at refusal (first stage a repeat missed)
        "q4": (MISSED, MISSED, MISSED),  # 0/3, stable
        "q5": (MISSED, OK, NO_EVIDENCE),  # 1/3, parts at retrieval
    }


def _row(qid: str, facts: tuple[bool, bool, bool, bool]) -> dict[str, Any]:
    hit, evidence, abstained, correct = facts
    doc = "G" if hit else "X"
    return {
        "id": qid, "answerable": True, "gold_docs": ["G"],
        "retrieved": [{"chunk_id": f"{doc}#0", "doc_id": doc, "rank": 1}],
        "judges": {"evidence_in_context": evidence, "abstained": abstained, "correct": correct},
    }  # fmt: skip


def _unanswerable() -> dict[str, Any]:
    return {"id": "u1", "answerable": False, "retrieved": [],
            "judges": {"abstained": True}}  # fmt: skip


def repeated_run(plan: dict[str, Any], name: str = "rep", path: str = "runs/rep.json") -> Any:
    """The saved-run format of a repeated run: repeat 0 in each row's own fields, repeats
    1..R-1 in its ``repeats`` entries, each with its seed."""
    repeats = len(next(iter(plan.values())))
    rows = []
    for qid, places in plan.items():
        row = _row(qid, places[0])
        row["repeats"] = [
            {"seed": 1000 * r + int(qid[1:]), **{key: value for key, value in
             _row(qid, places[r]).items() if key in ("retrieved", "judges")}}
            for r in range(1, repeats)
        ]  # fmt: skip
        rows.append(row)
    unanswerable = _unanswerable()
    unanswerable["repeats"] = [{"seed": 1000 * r, "judges": {"abstained": True}}
                               for r in range(1, repeats)]  # fmt: skip
    config = {"k": 1, "repeats": repeats, "repeat_seeds": list(range(101, 101 + repeats))}
    run = SavedRun.from_dict({"name": name, "config": config, "rows": [*rows, unanswerable]})
    return run.replace(path=path)


@pytest.fixture(scope="module")
def analysis() -> Any:
    return analyse_repeats(repeated_run(_plan()))


def test_an_unrepeated_run_has_no_analysis_and_no_section():
    run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": [_row("q1", OK)]})
    assert analyse_repeats(run) is None
    report = Report("t", ())
    assert with_repeats(report, None) is report


def test_flaky_questions_pass_k_and_stages_by_hand(analysis):
    assert analysis.ids == ("q1", "q2", "q3", "q4", "q5")  # the unanswerable u1 is left out
    assert analysis.outcomes.sum(axis=1).tolist() == [3, 2, 1, 0, 1]
    # disagreement 2c(R-c)/(R(R-1)) = 2*2*1/6 = 2/3 for c = 1 or 2: ties keep question order
    assert [analysis.ids[f.index] for f in analysis.flaky] == ["q2", "q3", "q5"]
    assert [f.disagreement for f in analysis.flaky] == pytest.approx([2 / 3] * 3)
    assert analysis.flaky[0].confidence_interval == proportion_interval(2, 3).confidence_interval
    # pass^3: only q1 all right = 1/5; pass@3: all but q4 = 4/5;
    # pass@2 = mean of 1 - C(3-c, 2)/C(3, 2) = (1 + 1 + 2/3 + 0 + 2/3) / 5
    assert analysis.pass_all[-1].statistic == pytest.approx(1 / 5)
    assert analysis.pass_at[-1].statistic == pytest.approx(4 / 5)
    assert analysis.pass_at[1].statistic == pytest.approx((1 + 1 + 2 / 3 + 0 + 2 / 3) / 5)
    assert analysis.pass_at[0].statistic == pytest.approx(7 / 15)  # k = 1: the mean
    assert analysis.pass_all[0].statistic == pytest.approx(7 / 15)
    assert analysis.places.tolist()[2] == ["ok", "3-refusal", "4-generation"]
    assert analysis.places.tolist()[4] == ["1-retrieval", "ok", "2-evidence"]
    stages = analysis.stages
    assert (stages.changed, stages.n) == (3, 5)
    assert stages.sources == ("1-retrieval", "3-refusal", "4-generation")  # a three-way tie
    assert stages.by_stage == {"1-retrieval": 1, "2-evidence": 0, "3-refusal": 1,
                               "4-generation": 1}  # fmt: skip
    assert analysis.seeds == (101, 102, 103)
    # the budget is the one estimator's, on the same (n, R) array
    want = variance_budget(analysis.outcomes)
    assert analysis.budget.components == want.components


def test_stage_flakiness_counts_unjudged_as_not_passing_its_stage():
    places = np.array([["ok", "unjudged at 2-evidence"], ["4-generation", "4-generation"]])
    result = stage_flakiness(places)
    assert (result.changed, result.by_stage["2-evidence"]) == (1, 1)
    assert result.sources == ("2-evidence",)


def test_undecided_verdicts_count_as_not_correct():
    a = analyse_outcomes(["a", "b"], [[1, 0], [1, 1]], undecided=1)
    assert a.undecided == 1 and a.mean.statistic == pytest.approx(0.75)
    with pytest.raises(Exception, match=r"expected shape \(2, R >= 2\)"):
        analyse_outcomes(["a", "b"], [[1], [0]])


@pytest.mark.parametrize("output_format", ["table", "markdown", "html"])
def test_the_section_says_the_same_in_every_format(analysis, output_format):
    text = " ".join(render(Report("t", (repeats_section(analysis),)), output_format).split())
    for needle in (
        "flaky questions: 3 of 5 answerable",
        "ragaudit show runs/rep.json q2",
        "retrieval 1, evidence 0, refusal 1, generation 1; it comes from retrieval and refusal "
        "and generation alike",
        "Searle et al. 1992",
        "Yao et al. 2024",
        "repeating each question 6 times instead of 3 would narrow this interval by",
        "0.200",  # pass^3
        "run seeds 101, 102, 103; each (question, repeat) has its own seed",
    ):
        assert needle in text, (output_format, needle)


def test_the_sentence_is_the_budgets_narrowing(analysis):
    b = analysis.budget
    s2q, s2g, n, r = b.components["questions"], b.components["generations"], 5, 3
    now = s2q / n + s2g / (n * r)
    twice_r = s2q / n + s2g / (n * 2 * r)
    twice_n = s2q / (2 * n) + s2g / (2 * n * r)
    text = " ".join(render(Report("t", (repeats_section(analysis),)), "table").split())
    assert f"by {100 * (1 - (twice_r / now) ** 0.5):.0f}%;" in text
    assert f"to 10 by {100 * (1 - (twice_n / now) ** 0.5):.0f}%" in text


def test_the_dashboard_gets_a_flakiness_row_and_the_page_a_section():
    repeated = repeated_run(_plan())
    plain = SavedRun.from_dict({"name": "one", "config": {"k": 1},
                                "rows": [_row(q, p[0]) for q, p in _plan().items()]})
    audit = build_audit([repeated, plain], n_resamples=50)
    row = audit.runs[0].dashboard[-1]
    assert (row.key, row.count, row.n) == ("flaky", 3, 5)
    exact = proportion_interval(3, 5).confidence_interval
    assert (row.ci_low, row.ci_high) == (exact.low, exact.high)
    assert audit.runs[1].dashboard[-1].value is None  # the unrepeated run: n/a
    assert "repeats" in audit.runs[0].to_dict() and "repeats" not in audit.runs[1].to_dict()
    report = audit_report(audit)
    for fmt in ("table", "html", "markdown"):
        text = render(report, fmt)
        assert "flaky questions (repeats disagree)" in text
        assert "ragaudit show runs/rep.json q2" in text
    alone = build_audit([plain], n_resamples=50)
    assert all(r.key != "flaky" for r in alone.runs[0].dashboard)


@pytest.mark.parametrize("output_format", ["table", "json"])
def test_show_gives_each_question_its_repeats(analysis, output_format):
    from ragaudit.diagnose.drilldown import select_questions
    from ragaudit.reports.show import show_report

    run = repeated_run(_plan())
    k, views = select_questions(run, ("q3", "u1"))
    report = show_report(run.name, k, views, repeats=analysis)
    text = render(report, output_format)
    if output_format == "json":
        questions = {q["qid"]: q for q in __import__("json").loads(text)["questions"]}
        assert questions["q3"]["repeats"]["right"] == 1
        assert questions["q3"]["repeats"]["places"] == ["ok", "3-refusal", "4-generation"]
        assert "repeats" not in questions["u1"]  # unanswerable: not among the repeats' questions
        return
    exact = proportion_interval(1, 3).confidence_interval
    assert f"correct on 1 of 3 [{exact.low:.3f}, {exact.high:.3f}] (Clopper-Pearson exact)" in text
    assert "ok, 3-refusal, 4-generation" in text
    plain = render(show_report(run.name, k, views), output_format)
    assert "correct on" not in plain  # no analysis (an unrepeated run): nothing added


def test_the_commands_read_a_repeated_run_file(tmp_path):
    """funnel, show and plan --from on a written file: the same numbers as the library."""
    import json

    from click.testing import CliRunner

    from ragaudit.cli import main
    from ragaudit.data.records import write_saved_run
    from ragaudit.stats.repeat_plan import plan_repeats

    path = tmp_path / "rep.json"
    write_saved_run(path, repeated_run(_plan()))
    runner = CliRunner()
    funnel = runner.invoke(main, ["funnel", str(path)])
    assert funnel.exit_code == 0, funnel.output
    text = " ".join(funnel.output.split())
    assert "flaky questions: 3 of 5 answerable" in text
    assert f"ragaudit show {path} q2" in text
    data = json.loads(runner.invoke(main, ["funnel", str(path), "--format", "json"]).output)
    assert [f["id"] for f in data["repeats"]["flaky"]] == ["q2", "q3", "q5"]
    show = runner.invoke(main, ["show", str(path), "q5"])
    assert show.exit_code == 0, show.output
    assert "1-retrieval, ok, 2-evidence" in show.output
    planned = json.loads(runner.invoke(main, ["plan", "--calls", "30", "--from", str(path),
                                              "--format", "json"]).output)  # fmt: skip
    outcomes = [[1, 1, 1], [1, 0, 1], [1, 0, 0], [0, 0, 0], [0, 1, 0]]  # _plan(), by hand
    want = plan_repeats(variance_budget(outcomes), 30, questions_available=5)
    assert planned["best"]["repeats"] == want.best.repeats
    assert planned["best"]["variance_of_mean"] == pytest.approx(want.best.variance_of_mean)
    assert planned["questions_available"] == 5
    one = tmp_path / "one.json"
    write_saved_run(one, SavedRun.from_dict({"name": "one", "config": {"k": 1},
                                             "rows": [_row("q1", OK), _row("q2", WRONG)]}))
    refused = runner.invoke(main, ["plan", "--calls", "30", "--from", str(one)])
    assert refused.exit_code == 2
    assert "one generation per question" in refused.output
    plain = runner.invoke(main, ["funnel", str(one)])
    assert "REPEATS" not in plain.output and "flaky" not in plain.output


def test_judge_repeats_on_every_answer_add_the_judge_level():
    """Two judge calls on each answer (judges.judge_repeat_verdicts): the budget is the
    nested (n, R, J) one, with a "between judge calls" part; the array is written here."""
    from ragaudit.diagnose.repeats import run_budget

    verdicts = {  # question -> per repeat, the judge's two calls
        "q1": ([1, 1], [1, 0], [1, 1]),
        "q2": ([0, 0], [1, 0], [0, 0]),
        "q3": ([1, 1], [1, 1], [0, 1]),
        "q4": ([0, 1], [0, 0], [0, 0]),
    }
    rows = []
    for qid, calls in verdicts.items():
        def judged(c: list[int]) -> dict[str, Any]:
            return {"correct": bool(c[0]), "abstained": False, "evidence_in_context": True,
                    "judge_repeat_verdicts": {"correct": [bool(v) for v in c]}}  # fmt: skip

        row = _row(qid, OK)
        row["judges"] = judged(calls[0])
        row["repeats"] = [{"seed": r, "judges": judged(calls[r])} for r in (1, 2)]
        rows.append(row)
    run = SavedRun.from_dict({"name": "j", "config": {"k": 1, "repeats": 3,
                                                      "repeat_seeds": [1, 2, 3]}, "rows": rows})
    budget = run_budget(run)
    want = variance_budget(np.array(list(verdicts.values()), dtype=float))
    assert set(budget.shares) == {"questions", "generations", "judge"}
    assert budget.components == want.components
    analysis = analyse_repeats(run)
    assert analysis.budget.components == want.components
    text = render(Report("t", (repeats_section(analysis),)), "table")
    assert "between judge calls on one answer" in text


def test_a_repeated_run_without_correctness_verdicts_gets_no_section(tmp_path):
    """An import with R repeats but no end-to-end verdict: funnel prints no repeats section
    (every verdict undecided: nothing to count), plan --from names the metrics to use."""
    from click.testing import CliRunner

    from ragaudit.cli import main
    from ragaudit.data.records import write_saved_run

    rows = []
    for qid in ("q1", "q2", "q3"):
        row = _row(qid, OK)
        del row["judges"]["correct"]
        row["metrics"] = {"score": 0.5}
        row["repeats"] = [{"seed": r, "metrics": {"score": 0.25 * r}} for r in (1, 2)]
        rows.append(row)
    run = SavedRun.from_dict({"name": "u", "config": {"k": 1, "repeats": 3}, "rows": rows})
    assert analyse_repeats(run) is None
    path = tmp_path / "u.json"
    write_saved_run(path, run)
    runner = CliRunner()
    funnel = runner.invoke(main, ["funnel", str(path)])
    assert funnel.exit_code == 0, funnel.output
    assert "REPEATS" not in funnel.output
    refused = runner.invoke(main, ["plan", "--calls", "30", "--from", str(path)])
    assert refused.exit_code == 2
    assert "no repeat of any question has an end-to-end correctness verdict" in refused.output
    scored = runner.invoke(main, ["plan", "--calls", "30", "--from", str(path), "--metric",
                                  "score"])  # fmt: skip
    assert scored.exit_code == 0, scored.output


def test_a_run_written_by_run_repeats_agrees_with_its_repeats_funnels():
    """tests/fixtures/repeated_run/k3_r3.json (written by `ragaudit run --repeats 3`): each
    column of the analysis is what compute_funnel says of that repeat alone, and the flaky
    questions and stage changes are the questions whose per-repeat funnels disagree."""
    from pathlib import Path

    from ragaudit.data.records import load_saved_run
    from ragaudit.diagnose.funnel import compute_funnel

    saved = load_saved_run(Path(__file__).parents[1] / "fixtures" / "repeated_run" / "k3_r3.json")
    analysis = analyse_repeats(saved)
    funnels = [compute_funnel(saved.repeat(r), n_resamples=10) for r in range(saved.repeats)]
    for r, funnel in enumerate(funnels):
        assert int(analysis.outcomes[:, r].sum()) == funnel.correct.count
    right = {qid: sum(qid in set(f.ok_ids) | set(f.lucky) for f in funnels) for qid in analysis.ids}
    assert [analysis.ids[f.index] for f in analysis.flaky] == sorted(
        (q for q, c in right.items() if 0 < c < saved.repeats),
        key=lambda q: (-2 * right[q] * (3 - right[q]) / 6, analysis.ids.index(q)),
    )
    places = [f.places() for f in funnels]
    moved = [q for q in analysis.ids if len({p[q].split(":")[0] for p in places}) > 1]
    assert moved and analysis.stages.changed == len(moved)  # 3 of 6 on this fixture
