"""Runs built from in-memory dicts (the columnar path) score like trec_eval and like the
per-question path: heavy ties broken by non-ASCII ids, repeats, ragged rankings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from ragaudit.data import Qrels, Run  # noqa: E402
from ragaudit.data import formats as formats_module  # noqa: E402
from ragaudit.metrics import evaluate  # noqa: E402

PAIRS = {
    "ndcg@10": "ndcg_cut_10",
    "map@100": "map_cut_100",
    "recall@100": "recall_100",
    "precision@10": "P_10",
    "mrr": "recip_rank",
    "ndcg": "ndcg",
}
# Ids sharing prefixes, upper/lower case and multi-byte letters: the tie break by id
# descending must follow strcmp on UTF-8 bytes, as trec_eval does.
POOL = [f"{stem}{i}" for stem in ("d", "D", "é", "日本", "doc-", "Ωx") for i in range(12)]


def random_case(seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    print(f"seed={seed}")
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(50):
        qid = f"q{q}"
        labelled = rng.choice(POOL, size=int(rng.integers(1, 10)), replace=False).tolist()
        qrels[qid] = {d: int(rng.integers(0, 4)) for d in labelled}
        depth = int(rng.integers(1, len(POOL)))
        ranked = rng.choice(POOL, size=depth, replace=False).tolist()
        scores = rng.integers(0, 3, size=depth) / 2  # three distinct scores: ties everywhere
        run[qid] = dict(zip(ranked, scores.tolist(), strict=True))
    return qrels, run


def per_question_run(rankings, **options) -> Run:
    original = formats_module.columns_from_rankings
    formats_module.columns_from_rankings = lambda *args, **kwargs: None  # type: ignore[assignment]
    try:
        return Run(rankings, **options)
    finally:
        formats_module.columns_from_rankings = original  # type: ignore[assignment]


def quiet_evaluate(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(*args, **kwargs)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_dict_run_matches_trec_eval_and_the_per_question_path(seed):
    qrels, run = random_case(seed)
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(PAIRS.values())).evaluate(run)
    fast = Run(run)
    assert fast.columns is not None  # the columnar path was taken
    ev = quiet_evaluate(Qrels(qrels), fast, list(PAIRS), missing="skip")
    slow = quiet_evaluate(Qrels(qrels), per_question_run(run), list(PAIRS), missing="skip")
    assert ev.query_ids == slow.query_ids and ev.tied_groups == slow.tied_groups > 0
    for ours, theirs in PAIRS.items():
        reference = np.array([expected[qid][theirs] for qid in ev.query_ids])
        np.testing.assert_allclose(ev.per_query[ours], reference, atol=1e-12, err_msg=ours)
        np.testing.assert_array_equal(ev.per_query[ours], slow.per_query[ours])


@pytest.mark.parametrize("seed", [4, 5])
def test_pairs_with_repeats_match_trec_eval(seed):
    qrels, run = random_case(seed)
    rng = np.random.default_rng(seed)
    pairs: dict[str, list[tuple[str, float]]] = {}
    for qid, ranking in run.items():
        items = list(ranking.items())
        repeats = [(item, 9.0) for item, _ in items[: int(rng.integers(0, 3))]]
        pairs[qid] = items + repeats  # a repeat with a better score is dropped ("first")
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(PAIRS.values())).evaluate(run)
    fast = Run(pairs, duplicates="first")
    assert fast.columns is not None  # the columnar path was taken
    ev = quiet_evaluate(Qrels(qrels), fast, list(PAIRS), missing="skip")
    assert set(ev.query_ids) == set(expected)
    for ours, theirs in PAIRS.items():
        reference = np.array([expected[qid][theirs] for qid in ev.query_ids])
        np.testing.assert_allclose(ev.per_query[ours], reference, atol=1e-12, err_msg=ours)
