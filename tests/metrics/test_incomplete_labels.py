"""Measures for incomplete labels against their references.

bpref and infAP against trec_eval (pytrec_eval); the condensed nDCG'/AP' against trec_eval on
the run with its unjudged items removed (and against trec_eval -J); judged@k against
ir_measures' Judged@k, and under ties against trec_eval's own tie order.  Golden values by hand
are written as formulas.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytrec_eval = pytest.importorskip("pytrec_eval")

from ragaudit.data import Qrels, Run  # noqa: E402
from ragaudit.metrics import evaluate, parse_metric  # noqa: E402
from ragaudit.metrics.incomplete import INFAP_EPSILON  # noqa: E402

ITEMS = [f"d{i:02d}" for i in range(16)]


def quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(*args, **kwargs)


@st.composite
def cases(draw, ties: bool = True):
    """Graded labels (some questions without relevant items), rankings with unjudged items,
    tied scores (drawn from few values) and empty rankings."""
    qids = [f"q{i}" for i in range(draw(st.integers(1, 5)))]
    qrels = {
        qid: draw(
            st.dictionaries(st.sampled_from(ITEMS), st.integers(0, 3), min_size=1, max_size=8)
        )
        for qid in qids
    }
    score = st.integers(0, 3).map(float) if ties else st.floats(0, 1, allow_nan=False)
    run = {
        qid: draw(st.dictionaries(st.sampled_from(ITEMS), score, min_size=0, max_size=12))
        for qid in qids
    }
    if not ties:  # ir_measures breaks ties by id ascending, trec_eval by id descending
        run = {q: {d: s + i * 1e-6 for i, (d, s) in enumerate(r.items())} for q, r in run.items()}
    if not any(run.values()):
        run[qids[0]] = {ITEMS[0]: 1.0}
    return qrels, run


def reference(qrels, run, measures, threshold, **flags):
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, set(measures), relevance_level=threshold, **flags
    )
    return evaluator.evaluate({q: r for q, r in run.items() if r})


def ours(qrels, run, metrics, threshold):
    return quiet(Qrels(qrels), Run(run), metrics, relevance_threshold=threshold, missing="skip")


# 60 examples (150 before issue 32's CPU budget): each calls pytrec_eval/ir_measures too
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(cases(), st.sampled_from([1, 2]))
def test_bpref_and_infap_equal_trec_eval(case, threshold):
    qrels, run = case
    expected = reference(qrels, run, ["bpref", "infAP"], threshold)
    ev = ours(qrels, run, ["bpref", "infAP"], threshold)
    for name, theirs in (("bpref", "bpref"), ("infAP", "infAP")):
        # An empty ranking is absent from trec_eval's output; it scores 0 (trec_eval -c).
        want = [expected.get(qid, {}).get(theirs, 0.0) for qid in ev.query_ids]
        np.testing.assert_allclose(ev.per_query[name], want, rtol=0, atol=1e-9, err_msg=name)


@SETTINGS
@given(cases(), st.sampled_from([1, 2]), st.sampled_from([1, 3, 5, 10]))
def test_condensed_equal_trec_eval_on_the_run_without_unjudged(case, threshold, k):
    qrels, run = case
    judged_only = {q: {d: s for d, s in r.items() if d in qrels[q]} for q, r in run.items()}
    measures = [f"ndcg_cut_{k}", "ndcg", "map", f"map_cut_{k}"]
    expected = reference(qrels, judged_only, measures, threshold)
    dash_j = reference(qrels, run, measures, threshold, judged_docs_only_flag=True)
    names = [f"ndcg'@{k}", "ndcg'", "ap'", f"ap'@{k}"]
    ev = ours(qrels, run, names, threshold)
    for name, theirs in zip(names, measures, strict=True):
        for source in (expected, dash_j):
            want = [source.get(qid, {}).get(theirs, 0.0) for qid in ev.query_ids]
            np.testing.assert_allclose(ev.per_query[name], want, atol=1e-9, err_msg=name)


@SETTINGS
@given(cases(ties=False), st.sampled_from([1, 3, 5, 10, 20]))
def test_judged_equals_ir_measures(case, k):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = case
    measure = ir_measures.Judged @ k
    expected = {
        m.query_id: m.value
        for m in ir_measures.judged.iter_calc([measure], qrels, {q: r for q, r in run.items() if r})
    }
    ev = ours(qrels, run, [f"judged@{k}", "judged"], 1)
    want = [expected.get(qid, 0.0) for qid in ev.query_ids]
    np.testing.assert_allclose(ev.per_query[f"judged@{k}"], want, atol=1e-12)
    whole = {
        m.query_id: m.value
        for m in ir_measures.judged.iter_calc(
            [ir_measures.Judged], qrels, {q: r for q, r in run.items() if r}
        )
    }
    np.testing.assert_allclose(
        ev.per_query["judged"], [whole.get(q, 0.0) for q in ev.query_ids], atol=1e-12
    )


@SETTINGS
@given(cases(ties=True), st.sampled_from([1, 3, 5]))
def test_judged_follows_trec_eval_tie_order(case, k):
    # With every label made relevant, trec_eval's P_k * k counts the labelled items in its
    # top k (its tie order: id descending), and num_ret gives the ranking's length.
    qrels, run = case
    all_relevant = {q: dict.fromkeys(labels, 1) for q, labels in qrels.items()}
    expected = reference(all_relevant, run, [f"P_{k}", "num_ret"], 1)
    ev = ours(qrels, run, [f"judged@{k}"], 1)
    want = []
    for qid in ev.query_ids:
        row = expected.get(qid)
        want.append(0.0 if row is None else row[f"P_{k}"] * k / min(k, row["num_ret"]))
    np.testing.assert_allclose(ev.per_query[f"judged@{k}"], want, atol=1e-12)


def test_golden_values_by_hand():
    # Ranking A x n C y; labels: A=1, C=2 relevant, n=0, m=0 judged non-relevant.
    qrels = Qrels({"q": {"A": 1, "C": 2, "n": 0, "m": 0}})
    run = Run({"q": ["A", "x", "n", "C", "y"]})
    ev = evaluate(qrels, run, ["bpref", "infap", "judged@3", "judged", "ndcg'@2", "ap'"])
    got = {name: float(values[0]) for name, values in ev.per_query.items()}
    eps = INFAP_EPSILON
    # C at rank 4 (j = 3): r = 2, n = 1.
    infap_c = 1 / 4 + (3 / 4) * ((1 + 1) / 3) * ((1 + eps) / (1 + 1 + 2 * eps))
    expected = {
        "bpref": (1 + (1 - 1 / 2)) / 2,  # n above C: 1 of min(N=2, R=2)
        "infap": (1 + infap_c) / 2,
        "judged@3": 2 / 3,  # A, n of A x n
        "judged": 3 / 5,
        "ndcg'@2": (1 + 0 / np.log2(3)) / (2 + 1 / np.log2(3)),  # condensed: A n C
        "ap'": (1 / 1 + 2 / 3) / 2,
    }
    assert got == pytest.approx(expected, abs=1e-12)


def test_names_and_aliases():
    assert parse_metric("nDCG'@10").name == "ndcg_condensed@10"
    assert parse_metric("AP'").name == "map_condensed"
    assert parse_metric("infAP").name == "infap"
    assert parse_metric("Judged@10").name == "judged@10"
    assert parse_metric("bpref").trec_eval == "bpref"
    with pytest.raises(Exception, match="takes no cutoff"):
        parse_metric("bpref@10")


def test_full_labels_make_condensed_equal_plain():
    qrels = Qrels({"q": {"A": 1, "B": 0, "C": 2}})
    run = Run({"q": ["B", "A", "C"]})
    ev = evaluate(qrels, run, ["ndcg@2", "ndcg'@2", "map", "ap'", "judged@3"])
    assert ev.means["ndcg@2"] == ev.means["ndcg'@2"]
    assert ev.means["map"] == ev.means["ap'"]
    assert ev.means["judged@3"] == 1.0


def test_stream_gives_the_same_numbers(tmp_path):
    from ragaudit.metrics import evaluate_stream

    rng = np.random.default_rng(0)
    qrels = {
        f"q{i}": {d: int(rng.integers(0, 3)) for d in rng.choice(ITEMS, 5, replace=False)}
        for i in range(30)
    }
    lines = []
    for qid in qrels:
        for rank, d in enumerate(rng.choice(ITEMS, 10, replace=False)):
            lines.append(f"{qid} Q0 {d} {rank + 1} {10 - rank} t\n")
    (tmp_path / "run.txt").write_text("".join(lines))
    names = ["bpref", "infap", "judged@5", "ndcg'@5", "ap'@3", "ndcg@5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        streamed = evaluate_stream(Qrels(qrels), tmp_path / "run.txt", names, batch_bytes=200)
    from ragaudit.data.formats import read_trec_run

    whole = quiet(Qrels(qrels), read_trec_run(tmp_path / "run.txt"), names)
    for name in names:
        np.testing.assert_array_equal(streamed.per_query[name], whole.per_query[name])


def test_bpref_and_infap_equal_trec_eval_across_kernel_slices(monkeypatch):
    # Many questions scored a few rows per slice (two threads), so that the judged cells of
    # one slice start mid-matrix: the counts above each cell must restart at every row.
    import importlib

    # the module, not the function the package re-exports under the same name
    monkeypatch.setattr(importlib.import_module("ragaudit.metrics.evaluate"), "_KERNEL_CELLS", 280)
    rng = np.random.default_rng(24)
    pool = [f"d{i}" for i in range(60)]
    qrels, run = {}, {}
    for i in range(300):
        labelled = rng.choice(pool, int(rng.integers(1, 12)), replace=False)
        qrels[f"q{i}"] = {d: int(rng.integers(0, 4)) for d in labelled}
        ranked = rng.choice(pool, int(rng.integers(0, 40)), replace=False)
        run[f"q{i}"] = {d: float(rng.integers(0, 6)) for d in ranked}  # ties
    for threshold in (1, 2):
        expected = reference(qrels, run, ["bpref", "infAP"], threshold)
        ev = ours(qrels, run, ["bpref", "infAP", "judged@10"], threshold)
        for name, theirs in (("bpref", "bpref"), ("infAP", "infAP")):
            want = [expected.get(qid, {}).get(theirs, 0.0) for qid in ev.query_ids]
            np.testing.assert_allclose(ev.per_query[name], want, rtol=0, atol=1e-9)
        assert ev.per_query["bpref"].any() and ev.per_query["infAP"].any()


def test_relevant_cells_count_by_hand():
    from ragaudit.metrics.incomplete import relevant_cells

    # row 0: n A x C (A: 1 non-relevant above; C: 1 relevant, 1 non-relevant above);
    # row 1: nothing judged; row 2: B m m D (D: 1 relevant, 2 non-relevant above).
    grades = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 0, 1]])
    judged = np.array([[1, 1, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]], dtype=bool)
    cells = relevant_cells(grades, judged, threshold=1)
    assert cells.rows.tolist() == [0, 0, 2, 2]
    assert cells.ranks.tolist() == [1, 3, 0, 3]
    assert cells.relevant_above.tolist() == [0, 1, 0, 1]
    assert cells.nonrelevant_above.tolist() == [1, 1, 0, 2]
    at_two = relevant_cells(grades, judged, threshold=2)  # only C and B are relevant
    assert at_two.rows.tolist() == [0, 2]
    assert at_two.nonrelevant_above.tolist() == [2, 0]  # n and A above C


# judged@k against trec_eval's ``unj`` (unjudged at cutoff, Soboroff 2023).  trec_eval's
# ``unj_k`` is the number of unjudged items in the top k divided by k, even when fewer than k
# were retrieved (the missing slots count as judged), so
#     judged@k = 1 - unj_k * k / min(k, |ranking|)        (= 1 - unj_k when |ranking| >= k).
# The binding installed here (pytrec_eval-terrier 0.5.11) builds a trec_eval without ``unj``;
# the reference is then a line-by-line transcription of trec_eval's ``te_calc_unj`` (public
# domain) over trec_eval's order (score descending, then id descending).  When the binding
# gains the measure, the ``binding`` case checks against it directly.
_ROOT = Path(__file__).resolve().parents[2]
HAS_UNJ = "unj" in pytrec_eval.supported_measures


def unj_transcribed(qrels: dict[str, int], ranking: dict[str, float], k: int) -> float:
    """trec_eval's te_calc_unj for one cutoff: unjudged in the top k over k."""
    ordered = sorted(ranking, key=lambda d: (ranking[d], d), reverse=True)
    unjudged = 0
    for i, doc in enumerate(ordered):
        if i == k:
            return unjudged / i
        if doc not in qrels:  # RELVALUE_NONPOOL (our grades are never negative)
            unjudged += 1
    return unjudged / k  # the cutoff was not reached: divide by k all the same


def unj_binding(qrels, run, k):
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"unj.{k}"})
    return {q: v[f"unj_{k}"] for q, v in evaluator.evaluate(run).items()}


@SETTINGS
@given(cases(ties=True), st.sampled_from([1, 3, 5, 10]))
@pytest.mark.parametrize(
    "source",
    [
        "transcription",
        pytest.param(
            "binding",
            marks=pytest.mark.skipif(not HAS_UNJ, reason="pytrec_eval built without unj"),
        ),
    ],
)
def test_judged_is_one_minus_trec_eval_unj(source, case, k):
    qrels, run = case
    ranked = {q: r for q, r in run.items() if r}
    if source == "binding":
        unj = unj_binding(qrels, ranked, k)
    else:
        unj = {q: unj_transcribed(qrels.get(q, {}), r, k) for q, r in ranked.items()}
    ev = ours(qrels, run, [f"judged@{k}"], 1)
    want = [
        1 - unj[q] * k / min(k, len(run[q])) if run.get(q) else 0.0  # empty ranking: 0
        for q in ev.query_ids
    ]
    np.testing.assert_allclose(ev.per_query[f"judged@{k}"], want, atol=1e-12)


def test_the_docs_name_trec_evals_unj_and_the_binding_here():
    readme = " ".join((_ROOT / "README.md").read_text(encoding="utf-8").split())
    guide = " ".join((_ROOT / "docs" / "guide" / "metrics.md").read_text(encoding="utf-8").split())
    assert "judged@k has no trec_eval measure" not in readme
    for text in (readme, guide):
        assert "`unj`" in text and "1 − unj" in text
    says_missing = "builds a trec_eval without `unj`" in readme
    assert says_missing == (not HAS_UNJ)  # the sentence must change when the binding does
