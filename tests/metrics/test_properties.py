"""Invariants over every metric (hypothesis) and a loop-based oracle for the kernels."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragaudit.data import Qrels, Run
from ragaudit.metrics import evaluate, list_metrics

ITEMS = [f"d{i}" for i in range(12)]
ALL = [info.family + ("@3" if info.cutoff == "required" else "") for info in list_metrics()]
NORMALISED = [m for m in ALL if not m.startswith("dcg")]

labels_strategy = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3", "q4"]),
    st.dictionaries(st.sampled_from(ITEMS), st.integers(0, 3), min_size=1, max_size=6),
    min_size=1,
)
ranking_strategy = st.lists(st.sampled_from(ITEMS), min_size=1, max_size=10, unique=True)


def run_for(labels, rankings):
    return Run({qid: rankings[i % len(rankings)] for i, qid in enumerate(labels)})


def quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(*args, **kwargs)


@settings(max_examples=60, deadline=None)
@given(labels_strategy, st.lists(ranking_strategy, min_size=1, max_size=4))
def test_scores_are_between_zero_and_one(labels, rankings):
    ev = quiet(Qrels(labels), run_for(labels, rankings), NORMALISED)
    for name in NORMALISED:
        assert np.all(ev.per_query[name] >= 0.0)
        assert np.all(ev.per_query[name] <= 1.0 + 1e-12), name


@settings(max_examples=60, deadline=None)
@given(labels_strategy, st.lists(ranking_strategy, min_size=1, max_size=4))
def test_recall_and_hit_are_monotone_in_k(labels, rankings):
    names = [f"{m}@{k}" for m in ("recall", "hit", "map") for k in range(1, 12)]
    ev = quiet(Qrels(labels), run_for(labels, rankings), names)
    for metric in ("recall", "hit", "map"):
        values = np.stack([ev.per_query[f"{metric}@{k}"] for k in range(1, 12)])
        assert np.all(np.diff(values, axis=0) >= -1e-12)


@settings(max_examples=40, deadline=None)
@given(labels_strategy, st.lists(ranking_strategy, min_size=1, max_size=4), st.randoms())
def test_invariant_to_question_order(labels, rankings, rnd):
    run = run_for(labels, rankings)
    qids = list(labels)
    rnd.shuffle(qids)
    shuffled_labels = Qrels({q: labels[q] for q in qids})
    shuffled_run = Run({q: run[q] for q in reversed(qids)})
    a = quiet(Qrels(labels), run, ALL)
    b = quiet(shuffled_labels, shuffled_run, ALL)
    for name in ALL:
        by_q_a = dict(zip(a.query_ids, a.per_query[name], strict=True))
        by_q_b = dict(zip(b.query_ids, b.per_query[name], strict=True))
        assert by_q_a == by_q_b
        assert a.means[name] == np.float64(a.means[name])
        assert abs(a.means[name] - b.means[name]) < 1e-12


def loop_oracle(labels: dict[str, int], ranking: list[str], k: int) -> dict[str, float]:
    """Plain-Python definitions, one question at a time."""
    rel = [labels.get(d, 0) >= 1 for d in ranking[:k]]
    n_rel = sum(g >= 1 for g in labels.values())
    found = sum(rel)
    out = {"precision": found / k, "recall": found / n_rel if n_rel else 0.0}
    precisions = [sum(rel[: i + 1]) / (i + 1) for i in range(len(rel))]
    out["context_precision"] = (
        sum(p for p, r in zip(precisions, rel, strict=True) if r) / found if found else 0.0
    )
    gains = [labels.get(d, 0) for d in ranking[:k]]
    dcg = sum(g / np.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted((g for g in labels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / np.log2(i + 2) for i, g in enumerate(ideal))
    out["ndcg"] = dcg / idcg if idcg else 0.0
    exp_dcg = sum((2**g - 1) / np.log2(i + 2) for i, g in enumerate(gains))
    exp_idcg = sum((2**g - 1) / np.log2(i + 2) for i, g in enumerate(ideal))
    out["ndcg_exp"] = exp_dcg / exp_idcg if exp_idcg else 0.0
    return out


@settings(max_examples=60, deadline=None)
@given(labels_strategy, st.lists(ranking_strategy, min_size=1, max_size=4), st.integers(1, 8))
def test_kernels_match_a_loop_oracle(labels, rankings, k):
    run = run_for(labels, rankings)
    names = [f"{m}@{k}" for m in ("precision", "recall", "context_precision", "ndcg", "ndcg_exp")]
    ev = quiet(Qrels(labels), run, names)
    for i, qid in enumerate(ev.query_ids):
        expected = loop_oracle(labels[qid], run[qid], k)
        for name in names:
            assert abs(ev.per_query[name][i] - expected[name.split("@")[0]]) < 1e-12
