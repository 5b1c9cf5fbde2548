"""Metrics against pytrec_eval on random small runs with ties, including float32-only ties.

trec_eval stores run scores as 32-bit floats, so 0.812345678 and 0.812345671 are one score to
it and the tie is broken by document id.  Hypothesis draws small runs whose scores are often
equal, and often equal only after rounding to float32; every per-question value must match
pytrec_eval's, through the dict path and through a TREC file.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragaudit.data import Qrels, Run
from ragaudit.data.formats import read_trec_run
from ragaudit.metrics import evaluate

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = {
    "ndcg@5": "ndcg_cut_5",
    "ndcg@10": "ndcg_cut_10",
    "map@10": "map_cut_10",
    "P@3": "P_3",
    "recall@5": "recall_5",
    "mrr": "recip_rank",
}
BASE = [0.812345678, 0.5, 0.25, 1.0, 3.0]
# Neighbours of a base score that round to the same float32 (1e-9 apart) or not (1e-6 apart).
SCORE = st.builds(
    lambda base, step: base + step,
    st.sampled_from(BASE),
    st.sampled_from([0.0, 1e-9, -7e-9, 2e-9, 1e-6]),
)
DOCS = [f"d{i}" for i in range(8)]


@st.composite
def runs(draw):
    n_questions = draw(st.integers(1, 4))
    run, qrels = {}, {}
    for q in range(n_questions):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        run[f"q{q}"] = {d: draw(SCORE) for d in docs}
        labelled = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5, unique=True))
        grades = {d: draw(st.integers(0, 3)) for d in labelled}
        grades[labelled[0]] = max(grades[labelled[0]], 1)  # at least one relevant
        qrels[f"q{q}"] = grades
    return qrels, run


def _check(ev, expected):
    for name, measure in MEASURES.items():
        ours = dict(zip(ev.query_ids, ev.per_query[name].tolist(), strict=True))
        for qid, values in expected.items():
            assert ours[qid] == pytest.approx(values[measure], abs=1e-12), (name, qid)


@settings(  # 60 examples, 150 before (issue 32, CPU budget)
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=runs())
def test_metrics_match_pytrec_eval_with_float32_ties(tmp_path, data):
    qrels, run = data
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(run)
    _check(evaluate(Qrels(qrels), Run(run), list(MEASURES), missing="skip"), expected)
    path = tmp_path / "run.txt"
    path.write_text(
        "".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, docs in run.items() for d, s in docs.items())
    )
    _check(evaluate(Qrels(qrels), read_trec_run(path), list(MEASURES), missing="skip"), expected)


def test_the_issue_example_is_a_tie_and_is_counted():
    qrels = {"q1": {"a": 1}}
    run = {"q1": {"a": 0.812345678, "b": 0.812345671}}  # float64: a first (mrr 1.0)
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    assert expected["q1"]["recip_rank"] == 0.5  # tie broken by id descending: b, then a
    ranked = Run(run)
    assert ranked["q1"] == ["b", "a"]
    assert (ranked.tied_groups, ranked.float32_tied_groups) == (1, 1)
    ev = evaluate(Qrels(qrels), ranked, ["mrr"])
    assert ev.means["mrr"] == 0.5 and ev.float32_tied_groups == 1
    assert np.float32(0.812345678) == np.float32(0.812345671)  # the premise, checked
