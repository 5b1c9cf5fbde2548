"""``ragaudit labels fill`` and ``evaluate --filled``: the unjudged chunks of the runs' top k
judged, and every metric on the original and the filled labels.

Expected values come from trec_eval (pytrec_eval) on the written label file and from hand
formulas; judged@k from a plain loop over the definition.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.chunks import Chunk
from ragaudit.data.qrels import Qrels
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.labels.fill import fill_labels, judged_labels, merge_labels
from ragaudit.labels.format import Chunking, ChunkLabels, QuestionLabels
from ragaudit.labels.heuristic import HeuristicLabeller

pytrec_eval = pytest.importorskip("pytrec_eval")
L2 = np.log2


def test_demo_runs_filled_with_the_heuristic_labeller(tmp_path, copy_demo):
    from ragaudit.cli.demo import benchmark_paths

    copy_demo(tmp_path)  # the session's demo run (tests/conftest.py; issue 32, CPU budget)
    runs = [str(tmp_path / f"{name}.json") for name in ("k3_cs800", "k6_cs800")]
    with benchmark_paths() as (corpus_dir, _):
        corpus = str(corpus_dir)
        _check_demo_fill(tmp_path, runs, corpus)


def _check_demo_fill(tmp_path: Path, runs: list[str], corpus: str) -> None:
    out = tmp_path / "filled.jsonl"
    result = CliRunner().invoke(
        main,
        ["labels", "fill", *runs, "--labels", str(tmp_path / "chunk_labels.yaml"),
         "--corpus", corpus, "--out", str(out), "--date", "2026-12-01", "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    filled = [r for r in records if r["source"] == "filled"]
    assert doc["n_filled"] == len(filled) > 0
    assert {r["labeller"] for r in filled} == {"heuristic"}
    assert {r["date"] for r in filled} == {"2026-12-01"}
    assert {tuple(r["runs"]) for r in filled} == {("k3_cs800", "k6_cs800")}
    original = {}
    everything = {}
    for r in records:
        everything.setdefault(r["qid"], {})[r["docid"]] = r["grade"]
        if r["source"] == "original":
            original.setdefault(r["qid"], {})[r["docid"]] = r["grade"]
    changes = {(c["run"], c["metric"]): c for c in doc["changes"]}
    for path, k in zip(runs, (3, 6), strict=True):
        saved = json.loads(Path(path).read_text())
        name = saved["name"]
        ranking = {
            row["id"]: [h["chunk_id"] for h in sorted(row["retrieved"], key=lambda h: h["rank"])]
            for row in saved["rows"]
            if row["id"] in original
        }
        trec_run = {q: {c: float(100 - i) for i, c in enumerate(r)} for q, r in ranking.items()}
        for labels, column in ((original, "original"), (everything, "filled")):
            got = pytrec_eval.RelevanceEvaluator(labels, {f"ndcg_cut_{k}", f"P_{k}"}).evaluate(
                trec_run
            )
            ndcg = np.mean([got[q][f"ndcg_cut_{k}"] for q in ranking])
            precision = np.mean([got[q][f"P_{k}"] for q in ranking])
            assert changes[(name, f"ndcg@{k}")][column] == pytest.approx(ndcg, abs=1e-12)
            assert changes[(name, f"precision@{k}")][column] == pytest.approx(precision, abs=1e-12)
            judged = np.mean(
                [sum(c in labels[q] for c in r[:k]) / min(k, len(r)) for q, r in ranking.items()]
            )
            key = "judged_original" if column == "original" else "judged_filled"
            assert changes[(name, f"ndcg@{k}")][key] == pytest.approx(judged, abs=1e-12)
        # every pooled chunk is judged afterwards, and it was not before
        assert changes[(name, f"ndcg@{k}")]["judged_filled"] == 1.0
        assert changes[(name, f"ndcg@{k}")]["judged_original"] < 1.0
    assert "judged@k before" in CliRunner().invoke(
        main,
        ["labels", "fill", *runs, "--labels", str(tmp_path / "chunk_labels.yaml"),
         "--corpus", corpus, "--out", str(tmp_path / "again.jsonl"), "--date", "2026-12-01"],
    ).stdout  # fmt: skip
    assert (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()  # deterministic


def small_case():
    chunks = [
        Chunk("g0", "gold", 0, "The cap is 210 EUR per night."),
        Chunk("g1", "gold", 1, "Hotels are booked through Waypoint."),
        Chunk("o0", "other", 0, "Zurich hotels: the cap is 210 EUR per night."),
        Chunk("o1", "other", 1, "Parking is free."),
    ]
    labels = ChunkLabels(
        Chunking("fixed", 800, 100), "heuristic",
        {"q1": QuestionLabels("Cap?", ["gold"], 2, ["g0"], [], "heuristic")},
    )  # fmt: skip
    rows = [{
        "id": "q1", "question": "Cap?", "reference_answer": "210 EUR per night.",
        "keywords": ["210 EUR"],
        "retrieved": [
            {"chunk_id": c, "doc_id": "gold" if c[0] == "g" else "other", "rank": i + 1}
            for i, c in enumerate(["o1", "o0", "g0"])
        ],
    }]  # fmt: skip
    config = {"k": 3, "chunker": "fixed", "chunk_size": 800, "chunk_overlap": 100}
    run = SavedRun.from_dict({"name": "r", "config": config, "rows": rows})
    return chunks, labels, run


def test_fill_by_hand():
    chunks, labels, run = small_case()
    assert judged_labels(labels, chunks) == {"q1": {"g0": 2, "g1": 0}}
    result = fill_labels([run], labels, chunks, HeuristicLabeller(), date="d", k=3)
    # o1 (no keyword) -> 0, o0 (states "210 EUR") -> 2
    assert {(x.item, x.grade) for x in result.added} == {("o1", 0), ("o0", 2)}
    rows = {c.metric: c for c in result.changes}
    # before: only g0 (grade 2) at rank 3 is relevant; ideal = [2]
    assert rows["ndcg@3"].original == pytest.approx((2 / L2(4)) / 2)
    # after: o0 (2) at rank 2, g0 (2) at 3; ideal = [2, 2]
    assert rows["ndcg@3"].filled == pytest.approx((2 / L2(3) + 2 / L2(4)) / (2 + 2 / L2(3)))
    assert rows["recall@3"].original == rows["recall@3"].filled == 1.0
    assert rows["precision@3"].filled == pytest.approx(2 / 3)
    assert (rows["ndcg@3"].judged_original, rows["ndcg@3"].judged_filled) == (1 / 3, 1.0)


def test_fill_refuses_a_chunk_outside_the_corpus():
    chunks, labels, run = small_case()
    with pytest.raises(InputError, match="not in the corpus"):
        fill_labels([run], labels, chunks[:3], HeuristicLabeller(), date="d")


def test_evaluate_filled_reports_original_filled_and_change(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 A 1\nq1 0 B 0\nq2 0 C 1\n")
    (tmp_path / "r.txt").write_text(
        "q1 Q0 X 1 3 t\nq1 Q0 A 2 2 t\nq1 Q0 Y 3 1 t\nq2 Q0 Z 1 2 t\nq2 Q0 C 2 1 t\n"
    )
    (tmp_path / "f.jsonl").write_text(
        '{"qid": "q1", "docid": "X", "grade": 1, "source": "filled", "labeller": "h"}\n'
        '{"qid": "q1", "docid": "Y", "grade": 0}\n{"qid": "q2", "docid": "Z", "grade": 0}\n'
    )
    result = CliRunner().invoke(
        main,
        ["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"),
         "-m", "ndcg@3", "--filled", str(tmp_path / "f.jsonl"), "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    before = 1 / L2(3)  # both questions: the one relevant item at rank 2
    after = (1.0 + before) / 2  # q1: X, A relevant at 1, 2 -> 1; q2 unchanged
    assert doc["original"]["metrics"]["ndcg@3"] == pytest.approx(before)
    assert doc["filled"]["metrics"]["ndcg@3"] == pytest.approx(after)
    assert doc["change"]["ndcg@3"] == pytest.approx(after - before)
    # judged@3: q1 1 of 3 -> 3 of 3; q2 1 of 2 -> 2 of 2
    assert doc["original"]["metrics"]["judged@3"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert doc["filled"]["metrics"]["judged@3"] == 1.0


def test_merge_labels_refuses_another_unit():
    with pytest.raises(InputError, match="chunk-level labels like the originals"):
        merge_labels(Qrels({"q": {"a": 1}}, unit="chunk"), Qrels({"q": {"b": 1}}))


def test_saved_run_coverage_for_the_dashboard():
    from ragaudit.labels.fill import saved_run_coverage

    chunks, labels, run = small_case()
    judged = Qrels(judged_labels(labels, chunks), unit="chunk")
    coverage = saved_run_coverage(run, judged)
    # o1 o0 g0: only g0 is labelled -> 1/3, below 0.5
    assert (coverage.metric, coverage.mean, coverage.below) == ("judged@3", 1 / 3, ("q1",))
    assert saved_run_coverage(run, judged, k=1, threshold=0.0).below == ()


def test_a_person_who_stops_keeps_the_grades_given():
    from ragaudit.labels.human import HumanLabeller

    chunks, labels, run = small_case()
    answers = iter(["1", "q"])  # o1 graded 1, then stop before o0
    person = HumanLabeller(ask=lambda *a: next(answers), show=lambda *a: None)
    result = fill_labels([run], labels, chunks, person, date="d", k=3)
    assert result.stopped
    assert [(x.item, x.grade, x.labeller) for x in result.added] == [("o1", 1, "human")]
    rows = {c.metric: c for c in result.changes}
    assert rows["ndcg@3"].judged_filled == pytest.approx(2 / 3)  # o0 still unjudged
