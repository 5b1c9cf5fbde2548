"""Id pitfalls: a question retrieving itself (BEIR's ignore_identical_ids), duplicate items in
one ranking, chunks missing from the chunk map."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ragaudit.cli import main
from ragaudit.data import Qrels, Run
from ragaudit.data.formats import read_trec_run, run_columns
from ragaudit.exceptions import InputError, RagauditWarning
from ragaudit.metrics import evaluate
from ragaudit.metrics.id_checks import identical_id_rows

L2 = np.log2


def test_identical_ids_are_counted_and_warned_about():
    qrels = Qrels({"q1": {"d1": 1}, "q2": {"d2": 1}})
    run = Run({"q1": ["q1", "d1"], "q2": ["d2", "x"]})
    with pytest.warns(RagauditWarning, match=r"1 run item\(s\) carry the id of their own"):
        ev = evaluate(qrels, run, ["mrr"])
    assert ev.identical_ids == 1 and not ev.ignored_identical_ids
    assert ev.per_query["mrr"].tolist() == [1 / 2, 1.0]  # q1 scored as given: d1 at rank 2


def test_ignore_identical_ids_drops_them_as_beir_does():
    # BEIR pops results[qid][qid] before pytrec_eval ranks the rest by score.
    pytrec_eval = pytest.importorskip("pytrec_eval")
    labels = {"q1": {"d1": 1, "d3": 2}, "q2": {"d2": 1}}
    scored = {"q1": {"q1": 9.0, "x": 8.0, "d1": 7.0, "d3": 1.0}, "q2": {"d2": 2.0, "q2": 1.0}}
    beir = {q: {d: s for d, s in r.items() if d != q} for q, r in scored.items()}
    expected = pytrec_eval.RelevanceEvaluator(labels, {"ndcg_cut_3"}).evaluate(beir)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning when the flag is on
        ev = evaluate(Qrels(labels), Run(scored), ["ndcg@3"], ignore_identical_ids=True)
    assert ev.identical_ids == 2 and ev.ignored_identical_ids
    want = [expected[q]["ndcg_cut_3"] for q in ev.query_ids]
    np.testing.assert_allclose(ev.per_query["ndcg@3"], want, atol=1e-12)
    # by hand: q1 ranks x, d1(1), d3(2); ideal d3, d1
    assert ev.per_query["ndcg@3"][0] == pytest.approx((1 / L2(3) + 2 / L2(4)) / (2 + 1 / L2(3)))


def test_cli_flag_and_report_line(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 q1 1 3 t\nq1 Q0 d1 2 2 t\nq2 Q0 d2 1 1 t\n")
    args = ["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"),
            "-m", "mrr"]  # fmt: skip
    kept = CliRunner().invoke(main, args)
    assert kept.exit_code == 0, kept.output
    assert "items named like their own question: 1 (scored)" in kept.stdout
    assert "--ignore-identical-ids" in kept.stderr
    dropped = CliRunner().invoke(main, [*args, "--ignore-identical-ids"])
    assert "items named like their own question: 1 (dropped before scoring)" in dropped.stdout
    assert "mrr     all  1.0000" in dropped.stdout


def test_duplicates_dropped_are_counted(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 3 t\nq1 Q0 x 2 2 t\nq1 Q0 d1 3 1 t\nq2 Q0 d2 1 1 t\n")
    run = read_trec_run(path, duplicates="first")
    assert run.dropped_duplicates == 1
    assert Run({"q": ["a", "b", "a", "a"]}, duplicates="first").dropped_duplicates == 2
    assert (
        Run({"q": [("a", 1.0), ("b", 0.5), ("a", 0.2)]}, duplicates="first").dropped_duplicates == 1
    )
    ev = evaluate(Qrels({"q1": {"d1": 1}, "q2": {"d2": 1}}), run, ["mrr"])
    assert ev.dropped_duplicates == 1 and ev.to_dict()["dropped_duplicates"] == 1
    result = CliRunner().invoke(
        main, ["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(path), "-m", "mrr",
               "--duplicates", "first"],
    ) if (tmp_path / "q.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n") else None  # fmt: skip
    assert result is not None and "duplicate items dropped: 1" in result.stdout


def test_chunks_missing_from_the_map_are_counted():
    run = Run({"q1": ["c1", "c9", "c8"], "q2": ["c7"]}, unit="chunk")
    with pytest.raises(InputError, match=r"3 run item\(s\) of 2 question\(s\) are not in the"):
        run.to_docs({"c1": "D1"})


ID = st.sampled_from(["q1", "q2", "qq", "d1", "q", "é", "1", "10", "q10"])


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.tuples(ID, ID, st.integers(0, 3)), min_size=1, max_size=25))
def test_identical_id_rows_equal_a_plain_loop(tmp_path_factory, lines):
    """The vectorised filter finds exactly the ranked rows a loop finds, in rank order, on a
    TREC file with ties and repeated items (duplicates dropped, so items outnumber rows)."""
    path = tmp_path_factory.mktemp("ids") / "run.txt"
    path.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in lines), encoding="utf-8")
    run = read_trec_run(path, duplicates="first")
    cols = run_columns(run)
    expected = [
        (row, qi)
        for qi, qid in enumerate(cols.qids)
        for row, item in enumerate(run[qid], start=int(cols.offsets[qi]))
        if item == qid
    ]
    rows, questions = identical_id_rows(cols)
    assert list(zip(rows.tolist(), questions.tolist(), strict=True)) == expected
