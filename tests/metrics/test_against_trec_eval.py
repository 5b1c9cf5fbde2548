"""ragaudit == trec_eval (through pytrec_eval) on seeded random graded runs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from ragaudit.data import Qrels, Run  # noqa: E402
from ragaudit.metrics import evaluate  # noqa: E402

# ragaudit name -> trec_eval measure name
PAIRS = {
    "precision@1": "P_1",
    "precision@5": "P_5",
    "precision@20": "P_20",
    "recall@5": "recall_5",
    "recall@20": "recall_20",
    "map": "map",
    "map@5": "map_cut_5",
    "map@20": "map_cut_20",
    "ndcg": "ndcg",
    "ndcg@3": "ndcg_cut_3",
    "ndcg@10": "ndcg_cut_10",
    "mrr": "recip_rank",
    "r_precision": "Rprec",
    "hit@1": "success_1",
    "hit@5": "success_5",
    "hit@10": "success_10",
}


def random_case(seed: int, *, ties: bool) -> tuple[dict, dict]:
    """Graded labels and scored runs with short rankings, unlabelled items, no-relevant
    questions, questions missing from the run and run questions missing from the labels."""
    rng = np.random.default_rng(seed)
    pool = [f"d{i:03d}" for i in range(60)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(40):
        qid = f"q{q}"
        labelled = rng.choice(pool, size=rng.integers(1, 12), replace=False)
        grades = rng.integers(0, 4, size=len(labelled))
        if q % 9 == 0:
            grades[:] = 0  # a question without relevant items
        qrels[qid] = {str(d): int(g) for d, g in zip(labelled, grades, strict=True)}
        if q % 11 == 5:
            continue  # labelled but missing from the run
        depth = int(rng.integers(1, 30))  # often shorter than k
        ranked = rng.choice(pool, size=depth, replace=False)
        scores = rng.integers(0, 4, size=depth) if ties else rng.random(depth)
        run[qid] = {str(d): float(s) for d, s in zip(ranked, scores, strict=True)}
    run["unlabelled"] = {"d001": 1.0}
    return qrels, run


def trec_eval(qrels: dict, run: dict, threshold: int) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, set(PAIRS.values()), relevance_level=threshold
    )
    return evaluator.evaluate(run)


def quiet_evaluate(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(*args, **kwargs)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("threshold", [1, 2])
def test_per_question_values_match_trec_eval(seed, ties, threshold):
    qrels, run = random_case(seed, ties=ties)
    expected = trec_eval(qrels, run, threshold)
    ev = quiet_evaluate(
        Qrels(qrels), Run(run), list(PAIRS), relevance_threshold=threshold, missing="skip"
    )
    assert set(ev.query_ids) == set(expected)  # trec_eval also drops unlabelled questions
    for ours, theirs in PAIRS.items():
        reference = np.array([expected[qid][theirs] for qid in ev.query_ids])
        np.testing.assert_allclose(ev.per_query[ours], reference, atol=1e-9, err_msg=ours)
        assert ev.means[ours] == pytest.approx(reference.mean(), abs=1e-9)


@pytest.mark.parametrize("seed", [3, 4])
def test_missing_zero_matches_trec_eval_dash_c(seed):
    # pytrec_eval has no -c flag; trec_eval -c averages over every labelled question with
    # 0 for those absent from the run, which is what we rebuild here.
    qrels, run = random_case(seed, ties=True)
    expected = trec_eval(qrels, run, 1)
    ev = quiet_evaluate(Qrels(qrels), Run(run), list(PAIRS), missing="zero")
    assert ev.query_ids == tuple(qrels)
    for ours, theirs in PAIRS.items():
        reference = [expected.get(qid, {}).get(theirs, 0.0) for qid in qrels]
        assert ev.means[ours] == pytest.approx(float(np.mean(reference)), abs=1e-9)


def test_trec_files_match_trec_eval(tmp_path):
    from ragaudit.data.formats import read_trec_qrels, read_trec_run, write_trec_qrels

    qrels, run = random_case(7, ties=True)
    write_trec_qrels(tmp_path / "qrels.txt", qrels)
    lines = [
        f"{qid} Q0 {doc} 0 {score!r} t\n"
        for qid, docs in run.items()
        for doc, score in docs.items()
    ]
    rng = np.random.default_rng(7)
    rng.shuffle(lines)  # file order must not matter with order="score"
    (tmp_path / "run.txt").write_text("".join(lines))
    ev = quiet_evaluate(
        read_trec_qrels(tmp_path / "qrels.txt"),
        read_trec_run(tmp_path / "run.txt"),
        list(PAIRS),
        missing="skip",
    )
    expected = trec_eval(qrels, run, 1)
    for ours, theirs in PAIRS.items():
        reference = np.array([expected[qid][theirs] for qid in ev.query_ids])
        np.testing.assert_allclose(ev.per_query[ours], reference, atol=1e-9, err_msg=ours)
