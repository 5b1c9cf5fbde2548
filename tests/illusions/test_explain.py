"""Whiteboard derivations: the chapter's numbers, trec_eval agreement, engine agreement, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import pytrec_eval

from ragaudit.cli.explain import parse_grades, parse_items
from ragaudit.data import Qrels, Run
from ragaudit.exceptions import InputError, UndefinedMetricWarning
from ragaudit.metrics.explain import explain, explain_ap, explain_context_precision, explain_ndcg

WHITEBOARD = ["B", "A", "D", "C", "E"]
BINARY_AC = {"A": 1, "C": 1}
LOG2 = np.log2


def test_ndcg_whiteboard_rows_and_totals() -> None:
    d = explain_ndcg(WHITEBOARD, BINARY_AC)
    assert d.metric == "ndcg@5" and d.k == 5
    assert d.columns == ("rank i", "item", "gain", "log2(i+1)", "discount", "contribution")
    assert [row[:3] for row in d.rows] == [
        (1, "B", "0"),
        (2, "A", "1"),
        (3, "D", "0"),
        (4, "C", "1"),
        (5, "E", "0"),
    ]
    ranks = np.arange(1, 6)
    assert [row[3] for row in d.rows] == pytest.approx(LOG2(ranks + 1))
    assert [row[4] for row in d.rows] == pytest.approx(1 / LOG2(ranks + 1))
    assert [row[5] for row in d.rows] == pytest.approx([0, 1 / LOG2(3), 0, 1 / LOG2(5), 0])
    dcg = 1 / LOG2(3) + 1 / LOG2(5)
    idcg = 1 / LOG2(2) + 1 / LOG2(3)
    assert d.totals["dcg"] == pytest.approx(dcg)
    assert d.totals["idcg"] == pytest.approx(idcg)
    assert d.value == pytest.approx(dcg / idcg)
    assert (round(dcg, 4), round(idcg, 4), round(dcg / idcg, 4)) == (1.0616, 1.6309, 0.6509)
    assert d.lines == (
        "DCG@5 = 0.6309 + 0.4307 = 1.0616",
        "IDCG@5 = 1/log2(2) + 1/log2(3) = 1.0000 + 0.6309 = 1.6309",
        "nDCG@5 = 1.0616 / 1.6309 = 0.6509",
    )


def test_ndcg_graded_linear_and_exponential_gain() -> None:
    grades = {"A": 2, "B": 1}
    linear = explain_ndcg(["B", "A", "X"], grades)
    assert linear.value == pytest.approx((1 + 2 / LOG2(3)) / (2 + 1 / LOG2(3)))
    assert round(linear.value, 3) == 0.860
    exp = explain_ndcg(["B", "A", "X"], grades, gain="exp")
    assert exp.metric == "ndcg_exp@3"
    assert exp.columns[2:4] == ("grade", "gain")
    assert [row[2:4] for row in exp.rows] == [(1, "1"), (2, "3"), (0, "0")]
    assert exp.value == pytest.approx((1 + 3 / LOG2(3)) / (3 + 1 / LOG2(3)))
    assert "IDCG@3 = 3/log2(2) + 1/log2(3)" in exp.lines[1]


def test_ndcg_ideal_counts_relevant_items_never_retrieved_and_cuts_at_k() -> None:
    # C is relevant but absent: the ideal ranking still holds it; k beyond the ranking's end
    d = explain_ndcg(["A", "X"], {"A": 1, "C": 1}, k=4)
    assert d.value == pytest.approx(1 / (1 + 1 / LOG2(3)))
    assert len(d.rows) == 2
    assert d.lines[0] == "(the ranking has 2 items: ranks 3..4 add nothing)"
    # at k=1 the ideal holds only one item
    assert explain_ndcg(["X", "A"], {"A": 1, "C": 1}, k=1).totals["idcg"] == pytest.approx(1.0)


def test_ap_whiteboard_and_the_missing_item_penalty() -> None:
    d = explain_ap(WHITEBOARD, BINARY_AC)
    assert d.metric == "map"
    assert d.value == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert d.lines == (
        "relevant at rank 2 -> precision@2 = 1/2 = 0.5000",
        "relevant at rank 4 -> precision@4 = 2/4 = 0.5000",
        "AP = (0.5000 + 0.5000) / |relevant| = 1.0000 / 2 = 0.5000",
    )
    one_of_three = explain_ap(["A", "X", "Y"], {"A": 1, "B": 1, "C": 1}, k=3)
    assert one_of_three.metric == "map@3"
    assert one_of_three.value == pytest.approx(1 / 3)
    assert "never retrieved in the top 3: B, C (each adds 0)" in one_of_three.lines


def test_context_precision_divides_by_relevant_found() -> None:
    d = explain_context_precision(["X", "Y", "Z", "A", "C"], BINARY_AC)
    assert d.metric == "context_precision@5"
    assert d.value == pytest.approx((1 / 4 + 2 / 5) / 2)
    assert [row[4] for row in d.rows] == pytest.approx([0, 0, 0, 1 / 4, 2 / 5])
    # cut at k=4: only A is in the top 4, so the sum is divided by 1
    cut = explain_context_precision(["X", "Y", "Z", "A", "C"], BINARY_AC, k=4)
    assert cut.value == pytest.approx(1 / 4)
    nothing = explain_context_precision(["X", "Y"], BINARY_AC)
    assert nothing.value == 0.0
    assert nothing.lines == ("context precision@2 = 0 (no relevant item in the top 2)",)


def test_threshold_makes_grade_one_irrelevant() -> None:
    grades = {"A": 1, "B": 2}
    assert explain_ap(["A", "B"], grades, threshold=2).value == pytest.approx(1 / 2)
    assert explain_context_precision(["A", "B"], grades, threshold=2).value == pytest.approx(1 / 2)


@pytest.mark.parametrize("metric", ["ndcg", "ap"])
def test_no_relevant_item_warns_and_scores_zero(metric: str) -> None:
    with pytest.warns(UndefinedMetricWarning, match="no item is labelled relevant"):
        d = explain(metric, ["A", "B"], {"A": 0})
    assert d.value == 0.0
    assert "undefined without relevant items" in d.lines[-1]


def test_to_dict_is_json_ready_records() -> None:
    record = explain_ap(["B", "A"], {"A": 1}).to_dict()
    assert record["steps"][1] == {
        "rank i": 2,
        "item": "A",
        "relevant": "yes",
        "hits": 1,
        "precision@i": 0.5,
    }
    assert record["value"] == 0.5 and record["metric"] == "map"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: explain_ndcg([], BINARY_AC), r"^ranking: expected at least one item"),
        (
            lambda: explain_ndcg(["A", "B", "A"], BINARY_AC),
            r"^ranking: item 'A' appears more than once \(positions 1 and 3\)$",
        ),
        (lambda: explain_ndcg(["A"], {"A": -1}), r"^grades: item 'A': expected an integer >= 0"),
        (lambda: explain_ndcg(["A"], {"A": 1.5}), r"grades: item 'A': .*found 1.5"),
        (lambda: explain_ndcg(["A"], BINARY_AC, k=0), r"^k: expected an integer >= 1, found 0$"),
        (lambda: explain_ndcg(["A"], BINARY_AC, gain="log"), r"^gain: expected 'linear' or 'exp'"),
        (lambda: explain("mrr", ["A"], BINARY_AC), r"^metric: expected one of ndcg, ap, context"),
        (lambda: parse_items("  , "), r"^ranking: expected item ids separated by spaces"),
        (
            lambda: parse_grades("A=2,B"),
            r"^grades: expected ITEM=GRADE pairs like 'A=2,B=1', found 'B'$",
        ),
        (
            lambda: parse_grades("A=two"),
            r"^grades: item 'A': expected an integer grade >= 0, found 'two'$",
        ),
        (lambda: parse_grades("A=-1"), r"^grades: item 'A': expected a grade >= 0, found -1$"),
        (lambda: parse_grades("A=1 A=2"), r"^grades: item 'A' is given a grade more than once$"),
        (lambda: parse_grades(""), r"^grades: expected ITEM=GRADE pairs"),
    ],
)
def test_bad_input_is_a_one_line_error(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


def _random_cases(seed: int, n: int) -> list[tuple[list[str], dict[str, int], int]]:
    """Random rankings over a 12-item pool with grades 0-3; at least one relevant item each."""
    rng = np.random.default_rng(seed)
    pool = [f"d{i:02d}" for i in range(12)]
    cases = []
    for _ in range(n):
        ranking = list(rng.choice(pool, size=int(rng.integers(1, 10)), replace=False))
        labelled = rng.choice(pool, size=int(rng.integers(1, 6)), replace=False)
        grades = {str(item): int(rng.integers(0, 4)) for item in labelled}
        grades[str(labelled[0])] = max(grades[str(labelled[0])], 1)
        cases.append(([str(x) for x in ranking], grades, int(rng.integers(1, 12))))
    return cases


def test_ndcg_and_ap_agree_with_trec_eval_on_random_rankings() -> None:
    cases = _random_cases(seed=2024, n=150)
    cutoffs = sorted({k for _, _, k in cases})
    cut = ",".join(map(str, cutoffs))
    qrels = {f"q{i}": grades for i, (_, grades, _) in enumerate(cases)}
    run = {
        f"q{i}": {item: float(100 - r) for r, item in enumerate(ranking)}
        for i, (ranking, _, _) in enumerate(cases)
    }
    trec = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{cut}", f"map_cut.{cut}"}).evaluate(
        run
    )
    for i, (ranking, grades, k) in enumerate(cases):
        assert explain_ndcg(ranking, grades, k=k).value == pytest.approx(
            trec[f"q{i}"][f"ndcg_cut_{k}"], abs=1e-12
        ), (ranking, grades, k)
        assert explain_ap(ranking, grades, k=k).value == pytest.approx(
            trec[f"q{i}"][f"map_cut_{k}"], abs=1e-12
        ), (ranking, grades, k)


def test_explain_equals_the_engine_on_random_rankings() -> None:
    from ragaudit.metrics import evaluate

    cases = _random_cases(seed=7, n=60)
    for ranking, grades, k in cases:
        qrels = Qrels({"q": grades})
        run = Run({"q": ranking})
        derivations = [
            explain_ndcg(ranking, grades, k=k),
            explain_ndcg(ranking, grades, k=k, gain="exp"),
            explain_ap(ranking, grades, k=k),
            explain_ap(ranking, grades),
            explain_context_precision(ranking, grades, k=k),
        ]
        with warnings.catch_warnings():
            # the engine may warn about degenerate questions; explain's warnings are tested above
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            result = evaluate(qrels, run, [d.metric for d in derivations])
        for d in derivations:
            assert float(result.per_query[d.metric][0]) == pytest.approx(d.value, abs=1e-12), (
                d.metric,
                ranking,
                grades,
            )
