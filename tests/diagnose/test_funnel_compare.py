"""``ragaudit funnel A B`` and ``compare_funnels``: two funnels stage by stage.

Hand-made runs give every expected number by hand (each question's place is chosen); on the
demo's k=3 and k=6 runs the expected moves are read off the two single-run funnels' JSON
(``died`` lists), independently of the comparison code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import stats

from ragaudit.cli import main
from ragaudit.diagnose.abstention import abstention_rates, paired_abstention
from ragaudit.diagnose.funnel import compute_funnel
from ragaudit.diagnose.funnel_compare import compare_funnels

BENCH = Path(__file__).resolve().parents[2] / "src" / "ragaudit" / "benchmark"


def invoke(*args: object) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("demo")
    for k in (3, 6):
        invoke("run", "--corpus", BENCH / "corpus", "--golden", BENCH / "golden.yaml", "--k", k,
               "--no-timing", "--quiet", "--out", out)  # fmt: skip
    return {"k3": out / "k3_cs800.json", "k6": out / "k6_cs800.json"}


def row(qid: str, *, hit: bool = True, evidence: bool = True, abstained: bool = False,
        correct: bool = True, answerable: bool = True) -> dict[str, object]:  # fmt: skip
    return {
        "id": qid,
        "answerable": answerable,
        "gold_docs": ["G"] if answerable else [],
        "retrieved": [{"chunk_id": "G#0" if hit else "X#0", "doc_id": "G" if hit else "X"}],
        "judges": {"abstained": abstained, "correct": correct, "evidence_in_context": evidence},
    }


def test_hand_made_runs_give_the_hand_counted_stages():
    # 10 questions: under A, q1-q2 lose their evidence and q3 refuses; under B, q1 is fixed,
    # q3 still refuses and q4 now refuses too
    a_rows = [row("q1", evidence=False, correct=False), row("q2", evidence=False, correct=False),
              row("q3", abstained=True, correct=False)] + [row(f"q{i}") for i in range(4, 11)]
    b_rows = [row("q1"), row("q2", evidence=False, correct=False),
              row("q3", abstained=True, correct=False), row("q4", abstained=True, correct=False)
              ] + [row(f"q{i}") for i in range(5, 11)]  # fmt: skip
    a = compute_funnel({"name": "A", "config": {"k": 1}, "rows": a_rows})
    b = compute_funnel({"name": "B", "config": {"k": 1}, "rows": b_rows})
    result = compare_funnels(a, b)
    evidence, answered = result.stages[1], result.stages[2]
    assert (evidence.a_kept, evidence.a_reached, evidence.b_kept, evidence.b_reached) == (8, 10,
                                                                                       9, 10)
    assert evidence.paired_n == 10 and evidence.b_only == ("q1",) and evidence.a_only == ()
    assert evidence.difference == pytest.approx(1 / 10)
    # answered: A 7/8, B 7/9; paired on the 8 questions with evidence in both (not q1, q2)
    assert (answered.a_kept, answered.a_reached, answered.b_kept, answered.b_reached) == (7, 8,
                                                                                       7, 9)
    assert answered.paired_n == 8 and answered.a_only == ("q4",) and answered.b_only == ()
    assert answered.difference == pytest.approx(-1 / 8)
    assert answered.pvalue == pytest.approx(stats.binomtest(0, 1, 0.5).pvalue)  # 1 discordant
    assert [(m.id, m.a, m.b) for m in result.moved] == [("q1", "2-evidence", "ok"),
                                                        ("q4", "ok", "3-refusal")]
    assert result.most_lost == ("2-evidence", "3-refusal")
    assert result.largest_move is answered  # |-1/8| > |+1/10|


def test_funnel_a_b_on_the_demo_lists_the_moves_the_single_funnels_imply(demo):
    one = {k: json.loads(invoke("funnel", demo[k], "--format", "json")) for k in ("k3", "k6")}
    place = {
        k: {q: stage for stage, ids in one[k]["died"].items() for q in ids} for k in ("k3", "k6")
    }
    expected = sorted(
        (q, place["k3"].get(q, "ok"), place["k6"].get(q, "ok"))
        for q in set(place["k3"]) | set(place["k6"])
        if place["k3"].get(q, "ok") != place["k6"].get(q, "ok")
    )
    both = json.loads(invoke("funnel", demo["k3"], demo["k6"], "--format", "json"))
    assert sorted((m["id"], m["a"], m["b"]) for m in both["moved"]) == expected
    assert ("q06", "2-evidence", "3-refusal") in expected  # the case
    for j, stage in enumerate(both["stages"]):
        for side, k in (("a", "k3"), ("b", "k6")):
            reached = one[k]["stages"][j - 1]["kept"] if j else one[k]["n"]
            assert stage[side]["kept"] == one[k]["stages"][j]["kept"]
            assert stage[side]["reached"] == reached
    text = invoke("funnel", demo["k3"], demo["k6"])
    assert "q06       2-evidence   3-refusal" in text
    assert "the stage that loses the most questions: A " in text


def test_abstention_split_on_the_demo_has_the_stated_denominators(demo):
    funnels = {k: compute_funnel(demo[k]) for k in ("k3", "k6")}
    for k, f in funnels.items():
        rates = abstention_rates(f)
        # over-refusal: refused with the evidence present / questions with the evidence present
        assert rates.over_refusal.n == f.stages[1].kept, k
        assert rates.over_refusal.ids == tuple(sorted(f.died["3-refusal"])), k
        # answered-unanswerable: over the unanswerable questions (6 in the golden set)
        assert rates.answered_unanswerable.n == 6
        assert rates.answered_unanswerable.ids == f.unanswerable.answered_ids
    refusal, _ = paired_abstention(funnels["k3"], funnels["k6"])
    # paired on the questions with evidence in both runs; q06 reaches its evidence only at
    # k=6 (where it refuses), so it is not in the pair
    assert refusal.paired_from == (funnels["k3"].stages[1].kept, funnels["k6"].stages[1].kept)
    assert "q06" not in refusal.ids and refusal.denominators_differ
    assert refusal.a_only == refusal.b_only == () and refusal.difference == 0.0


def test_more_than_two_runs_or_cluster_by_with_two_is_a_usage_error(demo):
    runner = CliRunner()
    result = runner.invoke(main, ["funnel", str(demo["k3"]), str(demo["k6"]), str(demo["k3"])])
    assert result.exit_code == 2 and "expected one run or two (A B), found 3" in result.output
    result = runner.invoke(main, ["funnel", str(demo["k3"]), str(demo["k6"]), "--cluster-by",
                                  "source"])  # fmt: skip
    assert result.exit_code == 2 and "--cluster-by: applies to one run" in result.output
