"""evaluate(): missing questions, warnings, and every error message."""

from __future__ import annotations

import numpy as np
import pytest

from ragaudit.data import Qrels, Run
from ragaudit.exceptions import InputError, RagauditWarning, UndefinedMetricWarning
from ragaudit.metrics import evaluate, list_metrics, parse_metric

QRELS = Qrels({"q1": {"A": 1}, "q2": {"B": 2}, "q3": {"C": 1}})
RUN = Run({"q1": ["A"], "q2": ["X", "B"]})


def test_missing_zero_scores_absent_questions_and_names_them():
    with pytest.warns(RagauditWarning, match=r"1 labelled question\(s\) are missing .* q3"):
        ev = evaluate(QRELS, RUN, ["mrr"])
    assert ev.query_ids == ("q1", "q2", "q3")
    np.testing.assert_allclose(ev.per_query["mrr"], [1.0, 0.5, 0.0])
    assert ev.means["mrr"] == pytest.approx(1.5 / 3)


def test_missing_skip_drops_absent_questions():
    ev = evaluate(QRELS, RUN, ["mrr"], missing="skip")
    assert ev.query_ids == ("q1", "q2")
    assert ev.means["mrr"] == pytest.approx(0.75)
    assert ev.missing == "skip"


def test_unlabelled_run_questions_are_ignored_with_a_warning():
    run = Run({"q1": ["A"], "q2": ["B"], "q3": ["C"], "extra": ["A"]})
    with pytest.warns(RagauditWarning, match=r"1 run question\(s\) have no labels .*extra"):
        ev = evaluate(QRELS, run, ["hit@1"])
    assert ev.means["hit@1"] == 1.0


def test_question_without_relevant_items_warns_and_scores_zero():
    qrels = Qrels({"q1": {"A": 1}, "q2": {"B": 0}})
    run = Run({"q1": ["A"], "q2": ["B"]})
    with pytest.warns(UndefinedMetricWarning, match=r"1 question\(s\) have no relevant .*q2"):
        ev = evaluate(qrels, run, ["recall@1", "ndcg@1"])
    np.testing.assert_allclose(ev.per_query["recall@1"], [1.0, 0.0])
    np.testing.assert_allclose(ev.per_query["ndcg@1"], [1.0, 0.0])


def test_warning_lists_only_the_first_few_ids():
    qrels = Qrels({f"q{i}": {"A": 1} for i in range(8)})
    with pytest.warns(RagauditWarning, match=r"7 labelled .*q1, q2, q3, q4, q5, \.\.\. \(2 more\)"):
        evaluate(qrels, Run({"q0": ["A"]}), ["hit@1"])


def test_requested_names_are_kept_as_keys():
    ev = evaluate(QRELS, RUN, ["nDCG@10", "P@1", "RR"], missing="skip")
    assert list(ev.means) == ["nDCG@10", "P@1", "RR"]
    assert ev.specs["P@1"].name == "precision@1"


def test_to_dict_per_query():
    out = evaluate(QRELS, RUN, ["mrr"], missing="skip").to_dict(per_query=True)
    assert out["per_query"] == {"q1": {"mrr": 1.0}, "q2": {"mrr": 0.5}}
    assert out["n_queries"] == 2 and out["unit"] == "doc" and out["average"] == "macro"


def test_question_order_follows_the_labels_not_the_run():
    run = Run({"q2": ["B"], "q1": ["A"], "q3": ["C"]})
    assert evaluate(QRELS, run, ["hit@1"]).query_ids == ("q1", "q2", "q3")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metrics": ["nope@3"]}, r"unknown metric 'nope@3'; valid metrics are: hit@k, recall@k"),
        ({"metrics": []}, r"expected at least one metric"),
        ({"metrics": ["ndcg@0"]}, r"expected a cutoff k >= 1, found 0"),
        ({"relevance_threshold": 0}, r"relevance_threshold: expected an integer >= 1, found 0"),
        ({"missing": "drop"}, r"missing: expected 'zero' or 'skip', found 'drop'"),
        ({"average": "weighted"}, r"average: expected 'macro' or 'micro', found 'weighted'"),
        (
            {"average": "micro", "metrics": ["recall@5", "ndcg@5", "mrr"]},
            r"micro-averaging is undefined for rank metrics \(ndcg@5, mrr\)",
        ),
    ],
)
def test_bad_arguments_raise_input_error(kwargs, message):
    args = {"metrics": ["hit@1"], **kwargs}
    metrics = args.pop("metrics")
    with pytest.raises(InputError, match=message):
        evaluate(QRELS, RUN, metrics, **args)


def test_unit_mismatch_points_to_the_chunk_map():
    chunk_run = Run({"q1": ["c1"]}, unit="chunk")
    with pytest.raises(
        InputError, match=r"ranks chunks but the labels are at document .*--chunk-map"
    ):
        evaluate(QRELS, chunk_run, ["hit@1"])
    with pytest.raises(InputError, match=r"ranks documents but the labels are at chunk level"):
        evaluate(Qrels({"q1": {"c1": 1}}, unit="chunk"), RUN, ["hit@1"])


def test_lifted_chunk_run_evaluates_at_document_level():
    chunk_run = Run({"q1": ["c1", "c2"], "q2": ["c3"]}, unit="chunk")
    lifted = chunk_run.to_docs({"c1": "X", "c2": "A", "c3": "B"})
    ev = evaluate(QRELS, lifted, ["mrr"], missing="skip")
    np.testing.assert_allclose(ev.per_query["mrr"], [0.5, 1.0])


def test_empty_and_disjoint_runs_raise():
    with pytest.raises(InputError, match=r"the run is empty"):
        evaluate(QRELS, Run({}), ["hit@1"])
    with pytest.raises(InputError, match=r"the run is empty"):
        evaluate(QRELS, Run({"q1": []}), ["hit@1"])
    with pytest.raises(InputError, match=r"share no question id \(run: zz; labels: q1, q2, q3\)"):
        evaluate(QRELS, Run({"zz": ["A"]}), ["hit@1"])
    with pytest.raises(InputError, match=r"the labels are empty"):
        evaluate(Qrels({}), RUN, ["hit@1"])
    with pytest.raises(InputError, match=r"qrels: expected a ragaudit Qrels, found dict"):
        evaluate({"q1": {"A": 1}}, RUN, ["hit@1"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"run: expected a ragaudit Run, found dict"):
        evaluate(QRELS, {"q1": ["A"]}, ["hit@1"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("recall", r"metric 'recall' needs a cutoff: write recall@k, e.g. recall@5"),
        ("r_precision@5", r"r_precision takes no cutoff, found '@5'"),
        ("ndcg@ten", r"expected an integer cutoff after '@', found 'ten'"),
        ("ndcg@-1", r"expected a cutoff k >= 1, found -1"),
        # only ASCII digits: int() would read these as 3, 5 and 10
        ("ndcg@\u0663", r"expected an integer cutoff after '@', found '\u0663'"),
        ("ndcg@+5", r"expected an integer cutoff after '@', found '\+5'"),
        ("ndcg@1_0", r"expected an integer cutoff after '@', found '1_0'"),
        ("bleu", r"unknown metric 'bleu'; valid metrics are: .*context_precision@k"),
        (3, r"metric: expected a name such as 'ndcg@10', found 3"),
    ],
)
def test_parse_metric_errors(name, message):
    with pytest.raises(InputError, match=message):
        parse_metric(name)


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("P@5", "precision@5"),
        ("R@5", "recall@5"),
        ("nDCG@10", "ndcg@10"),
        ("RR", "mrr"),
        ("AP", "map"),
        ("success@5", "hit@5"),
        ("MAP@10", "map@10"),
        (" Rprec ", "r_precision"),
        ("NDCG_EXP@3", "ndcg_exp@3"),
        ("context_precision@5", "context_precision@5"),
    ],
)
def test_aliases(alias, canonical):
    assert parse_metric(alias).name == canonical


def test_registry_declares_every_kernel_once_with_trec_names():
    from ragaudit.metrics.kernels import KERNELS

    families = [info.family for info in list_metrics()]
    assert len(families) == len(set(families))
    assert set(families) == set(KERNELS)
    assert parse_metric("ndcg@10").trec_eval == "ndcg_cut_10"
    assert parse_metric("P@5").trec_eval == "P_5"
    assert parse_metric("map").trec_eval == "map"
    assert parse_metric("mrr@10").trec_eval is None
    assert parse_metric("ndcg_exp@10").trec_eval is None
