"""Hand-derived golden values (written as formulas) and the seed chapter's tables."""

from __future__ import annotations

import numpy as np
import pytest

from ragaudit.data import Qrels, Run
from ragaudit.metrics import evaluate

L2 = np.log2


def scores(relevant: dict[str, int], ranking: list[str], metrics: list[str]) -> dict[str, float]:
    ev = evaluate(Qrels({"q": relevant}), Run({"q": ranking}), metrics)
    return {name: float(values[0]) for name, values in ev.per_query.items()}


def test_chapter_ndcg_derivation_b_a_d_c_e():
    got = scores({"A": 1, "C": 1}, ["B", "A", "D", "C", "E"], ["ndcg@5", "dcg@5", "map"])
    assert got["dcg@5"] == pytest.approx(1 / L2(3) + 1 / L2(5), abs=1e-12)
    assert got["ndcg@5"] == pytest.approx((1 / L2(3) + 1 / L2(5)) / (1 + 1 / L2(3)), abs=1e-12)
    assert round(got["ndcg@5"], 4) == 0.6509  # the chapter's printed value
    assert got["map"] == pytest.approx((1 / 2 + 2 / 4) / 2, abs=1e-12)


TOP, MIDDLE, BOTTOM = (
    ["A", "C", "X", "Y", "Z"],
    ["X", "A", "C", "Y", "Z"],
    ["X", "Y", "Z", "A", "C"],
)
IDCG2 = 1 + 1 / L2(3)


@pytest.mark.parametrize(
    ("ranking", "mrr", "ap", "ndcg", "ctxp", "chapter"),
    [
        (TOP, 1.0, 1.0, 1.0, 1.0, (1.0, 1.0, 1.0, 1.0)),
        (
            MIDDLE,
            1 / 2,
            (1 / 2 + 2 / 3) / 2,
            (1 / L2(3) + 1 / L2(4)) / IDCG2,
            (1 / 2 + 2 / 3) / 2,
            (0.5, 0.583, 0.693, 0.583),
        ),
        (
            BOTTOM,
            1 / 4,
            (1 / 4 + 2 / 5) / 2,
            (1 / L2(5) + 1 / L2(6)) / IDCG2,
            (1 / 4 + 2 / 5) / 2,
            (0.25, 0.325, 0.501, 0.325),
        ),
    ],
    ids=["top", "middle", "bottom"],
)
def test_chapter_illusions_identical_recall_rows(ranking, mrr, ap, ndcg, ctxp, chapter):
    names = ["hit@5", "recall@5", "precision@5", "mrr", "map", "ndcg@5", "context_precision@5"]
    got = scores({"A": 1, "C": 1}, ranking, names)
    assert got["hit@5"] == 1.0
    assert got["recall@5"] == 1.0
    assert got["precision@5"] == pytest.approx(2 / 5)
    assert got["mrr"] == pytest.approx(mrr, abs=1e-12)
    assert got["map"] == pytest.approx(ap, abs=1e-12)
    assert got["ndcg@5"] == pytest.approx(ndcg, abs=1e-12)
    assert got["context_precision@5"] == pytest.approx(ctxp, abs=1e-12)
    printed = [round(got[m], 3) for m in ("mrr", "map", "ndcg@5", "context_precision@5")]
    assert printed == list(chapter)


def test_chapter_identical_mrr_one_third_of_the_evidence():
    relevant = {"A": 1, "B": 1, "C": 1}
    one_hit = scores(relevant, ["A", "X", "Y", "Z", "W"], ["mrr", "map", "ndcg@5", "recall@5"])
    assert one_hit["mrr"] == 1.0
    assert one_hit["map"] == pytest.approx(1 / 3)
    assert one_hit["recall@5"] == pytest.approx(1 / 3)
    assert one_hit["ndcg@5"] == pytest.approx(1 / (1 + 1 / L2(3) + 1 / L2(4)), abs=1e-12)
    assert round(one_hit["ndcg@5"], 3) == 0.469


def test_chapter_k_table_relevant_at_ranks_1_3_6():
    relevant = {"r1": 1, "r3": 1, "r6": 1}
    ranking = ["r1", "x2", "r3", "x4", "x5", "r6", "x7", "x8"]
    idcg = 1 + 1 / L2(3) + 1 / L2(4)
    expected = {  # k: recall, precision, f1, ndcg
        1: (1 / 3, 1.0, 2 * (1 / 3) / (1 + 1 / 3), 1.0),
        3: (2 / 3, 2 / 3, 2 / 3, (1 + 1 / L2(4)) / idcg),
        5: (2 / 3, 2 / 5, 2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3), (1 + 1 / L2(4)) / idcg),
        8: (1.0, 3 / 8, 2 * (3 / 8) / (1 + 3 / 8), (1 + 1 / L2(4) + 1 / L2(7)) / idcg),
    }
    chapter = {
        1: (0.333, 1.0, 0.5, 1.0),
        3: (0.667, 0.667, 0.667, 0.704),
        5: (0.667, 0.4, 0.5, 0.704),
        8: (1.0, 0.375, 0.545, 0.871),
    }
    for k, values in expected.items():
        names = [f"recall@{k}", f"precision@{k}", f"f1@{k}", f"ndcg@{k}"]
        got = scores(relevant, ranking, names)
        np.testing.assert_allclose([got[n] for n in names], values, atol=1e-12)
        assert tuple(round(got[n], 3) for n in names) == chapter[k]


def test_graded_gains_linear_and_exponential():
    labels = {"A": 2, "B": 1, "C": 0}
    ranking = ["C", "B", "A"]
    got = scores(labels, ranking, ["ndcg@3", "ndcg_exp@3", "dcg@3"])
    assert got["dcg@3"] == pytest.approx(1 / L2(3) + 2 / L2(4))
    assert got["ndcg@3"] == pytest.approx((1 / L2(3) + 2 / L2(4)) / (2 + 1 / L2(3)))
    exp_dcg = (2**1 - 1) / L2(3) + (2**2 - 1) / L2(4)
    assert got["ndcg_exp@3"] == pytest.approx(exp_dcg / ((2**2 - 1) + (2**1 - 1) / L2(3)))


def test_ndcg_gains_ignore_the_relevance_threshold():
    qrels = Qrels({"q": {"A": 2, "B": 1}})
    run = Run({"q": ["B", "A"]})
    low = evaluate(qrels, run, ["ndcg@2", "recall@1"], relevance_threshold=1)
    high = evaluate(qrels, run, ["ndcg@2", "recall@1"], relevance_threshold=2)
    assert low.per_query["ndcg@2"][0] == high.per_query["ndcg@2"][0]
    assert low.per_query["ndcg@2"][0] == pytest.approx((1 + 2 / L2(3)) / (2 + 1 / L2(3)))
    assert low.per_query["recall@1"][0] == pytest.approx(1 / 2)  # B counts at threshold 1
    assert high.per_query["recall@1"][0] == 0.0  # only A counts at threshold 2


def test_short_ranking_precision_divides_by_k_and_mrr_cutoff():
    got = scores({"A": 1}, ["X", "Y", "A"], ["precision@10", "mrr@2", "mrr@3", "hit@2"])
    assert got["precision@10"] == pytest.approx(1 / 10)
    assert got["mrr@2"] == 0.0
    assert got["mrr@3"] == pytest.approx(1 / 3)
    assert got["hit@2"] == 0.0


def test_context_precision_is_zero_without_relevant_in_top_k():
    got = scores({"A": 1}, ["X", "Y", "A"], ["context_precision@2", "context_precision@3"])
    assert got["context_precision@2"] == 0.0
    assert got["context_precision@3"] == pytest.approx(1 / 3)


def test_micro_pools_counts_and_differs_from_macro():
    # one question with 4 relevant (2 found), three with 1 relevant (all found)
    qrels = Qrels(
        {
            "big": {"a": 1, "b": 1, "c": 1, "d": 1},
            "s1": {"x": 1},
            "s2": {"y": 1},
            "s3": {"z": 1},
        }
    )
    run = Run({"big": ["a", "b", "n1"], "s1": ["x"], "s2": ["y"], "s3": ["z"]})
    names = ["recall@3", "precision@3", "f1@3", "hit@3"]
    macro = evaluate(qrels, run, names, average="macro").means
    micro = evaluate(qrels, run, names, average="micro").means
    assert macro["recall@3"] == pytest.approx((2 / 4 + 1 + 1 + 1) / 4)
    assert micro["recall@3"] == pytest.approx((2 + 1 + 1 + 1) / (4 + 1 + 1 + 1))
    assert micro["precision@3"] == pytest.approx(5 / (4 * 3))
    p, r = 5 / 12, 5 / 7
    assert micro["f1@3"] == pytest.approx(2 * p * r / (p + r))
    assert micro["hit@3"] == macro["hit@3"] == 1.0
