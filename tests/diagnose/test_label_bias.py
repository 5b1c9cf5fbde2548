"""Document- vs chunk-level scores on a hand-built run; expected numbers written as formulas."""

from __future__ import annotations

import math

import pytest

from ragaudit.data.qrels import Qrels
from ragaudit.diagnose.label_bias import (
    VERDICT_ABSENT,
    VERDICT_OPTIMISTIC,
    VERDICT_PESSIMISTIC,
    compute_label_bias,
)
from ragaudit.exceptions import InputError
from ragaudit.labels.format import Chunking, ChunkLabels, QuestionLabels

L3 = math.log2(3)  # discount denominator of rank 2


def row(qid, gold, chunks, answerable=True):
    return {
        "id": qid,
        "answerable": answerable,
        "gold_docs": list(gold),
        "retrieved": [
            {"chunk_id": c, "doc_id": c.split("#")[0], "score": 9.0 - i, "rank": i + 1}
            for i, c in enumerate(chunks)
        ],
    }


RUN = {
    "name": "hand",
    "config": {
        "k": 3,
        "retrieval_depth": 4,
        "chunker": "fixed",
        "chunk_size": 800,
        "chunk_overlap": 100,
    },
    "rows": [
        row("qA", ["D"], ["D#1", "X#0", "D#2", "X#1"]),  # answer chunk D#0 never retrieved
        row("qB", ["D"], ["D#0", "X#0", "Y#0", "D#2"]),  # one of two answer chunks in top 3
        row("qC", ["D", "E"], ["E#0", "X#0", "Z#0", "Y#0"]),  # answer in E; D never retrieved
        row("qD", ["F"], ["X#0", "F#1", "Y#0", "Z#0"]),  # answer chunk at rank 2
        row("qE", ["G"], ["G#0", "X#0", "Y#0", "Z#0"]),  # labels: no answer chunk
        row("qF", ["H"], ["H#0", "X#0", "Y#0", "Z#0"]),  # not labelled
        row("qU", [], ["X#0", "Y#0", "Z#0", "W#0"], answerable=False),
    ],
}


def labels():
    def q(n, answer, support=()):
        return QuestionLabels("?", ["doc"], n, list(answer), list(support), "hand")

    return ChunkLabels(
        Chunking("fixed", 800, 100),
        "hand",
        {
            "qA": q(3, ["D#0"], ["D#1"]),
            "qB": q(4, ["D#0", "D#2"], ["D#1"]),
            "qC": q(5, ["E#0"]),
            "qD": q(3, ["F#1"], ["F#0", "F#2"]),
            "qE": q(2, [], ["G#0"]),
        },
    )


def test_per_question_scores_and_verdicts():
    bias = compute_label_bias(RUN, labels())
    got = {
        q.qid: (q.doc_hit, q.doc_recall, q.chunk_hit, q.chunk_recall, q.chunk_mrr, q.verdict)
        for q in bias.questions
    }
    assert got == {
        "qA": (1.0, 1.0, 0.0, 0.0, 0.0, VERDICT_ABSENT),
        "qB": (1.0, 1.0, 1.0, 0.5, 1.0, VERDICT_OPTIMISTIC),
        "qC": (1.0, 0.5, 1.0, 1.0, 1.0, VERDICT_PESSIMISTIC),
        "qD": (1.0, 1.0, 1.0, 1.0, 0.5, ""),
    }
    assert bias.phantom_hits == ("qA",)
    assert bias.skipped == {
        "no chunk labels": ("qF",),
        "no answer chunk (grade 2) among the candidates": ("qE",),
    }


def test_optimism_bias_summary():
    bias = compute_label_bias(RUN, labels())
    assert (bias.k, bias.n) == (3, 4)
    assert bias.doc_hit_rate == pytest.approx(4 / 4)
    assert bias.chunk_hit_rate == pytest.approx(3 / 4)
    assert bias.hit_inflation == pytest.approx(1 / 4)
    assert bias.doc_recall == pytest.approx((1 + 1 + 0.5 + 1) / 4)
    assert bias.chunk_recall == pytest.approx((0 + 0.5 + 1 + 1) / 4)
    assert bias.recall_inflation == pytest.approx(0.25)


def test_inflation_by_number_of_candidate_chunks():
    bias = compute_label_bias(RUN, labels())
    groups = [
        (g.n_candidate_chunks, g.n, g.mean_hit_inflation, g.mean_recall_inflation)
        for g in bias.by_candidates
    ]
    # 3 chunks: qA (1, 1) and qD (0, 0); 4: qB (0, 0.5); 5: qC (0, -0.5)
    assert groups == [(3, 2, 0.5, 0.5), (4, 1, 0.0, 0.5), (5, 1, 0.0, -0.5)]
    # Spearman by hand: size ranks [1.5, 3, 4, 1.5], inflation ranks [4, 3, 1, 2]
    assert bias.spearman == pytest.approx(-3.0 / math.sqrt(4.5 * 5.0))


def test_graded_ndcg_and_rank_shifts():
    bias = compute_label_bias(RUN, labels())
    per = {q.qid: (q.ndcg_binary, q.ndcg_graded, q.ndcg_exp) for q in bias.questions}
    expected = {
        # retrieved grades (k=3) / ideal grades -> binary, linear 2/1/0, exponential 2^g - 1
        "qA": (0.0, 1 / (2 + 1 / L3), 1 / (3 + 1 / L3)),  # [1,0,0] vs [2,1]
        "qB": (1 / (1 + 1 / L3), 2 / (2 + 2 / L3 + 1 / 2), 3 / (3 + 3 / L3 + 1 / 2)),
        "qC": (1.0, 1.0, 1.0),
        "qD": (1 / L3, (2 / L3) / (2 + 1 / L3 + 1 / 2), (3 / L3) / (3 + 1 / L3 + 1 / 2)),
    }
    for qid, values in expected.items():
        assert per[qid] == pytest.approx(values), qid
    assert bias.ndcg_exp == pytest.approx(sum(v[2] for v in expected.values()) / 4)
    # binary order qC > qD > qB > qA; exponential order qC > qB > qD > qA
    shifts = [(r.qid, r.binary_rank, r.graded_rank, r.shift) for r in bias.rank_shifts]
    assert shifts == [("qB", 3.0, 2.0, 1.0), ("qD", 2.0, 3.0, -1.0)]


def test_k_override_rescores_the_same_run():
    bias = compute_label_bias(RUN, labels(), k=4)
    by_id = {q.qid: q for q in bias.questions}
    assert by_id["qB"].chunk_recall == 1.0 and by_id["qB"].verdict == ""
    with pytest.raises(InputError, match=r"k=5 is deeper than the run retrieved"):
        compute_label_bias(RUN, labels(), k=5)


def test_labels_for_another_chunking_are_rejected():
    run = {**RUN, "config": {**RUN["config"], "chunk_size": 400}}
    with pytest.raises(
        InputError,
        match=r"made for .*chunk_size=800.* but the run uses .*"
        r"chunk_size=400",
    ):
        compute_label_bias(run, labels())


def test_plain_chunk_qrels_work_without_size_groups():
    qrels = Qrels({"qA": {"D#0": 2}}, unit="chunk")
    bias = compute_label_bias(RUN, qrels)
    assert bias.n == 1 and bias.by_candidates == () and bias.spearman is None
    assert any("n_candidate_chunks" in note for note in bias.notes)
    with pytest.raises(InputError, match="expected chunk-level labels"):
        compute_label_bias(RUN, Qrels({"qA": {"D": 1}}))


def test_no_labelled_question_is_an_error():
    with pytest.raises(InputError, match="no answerable question has chunk labels"):
        compute_label_bias(RUN, Qrels({"zz": {"D#0": 2}}, unit="chunk"))


def test_chapter_style_inflation_from_one_missed_answer_chunk():
    # 20 questions, all document-level hits; one (q17) lost its answer chunk: +0.050 hit rate
    rows = [row(f"q{i:02d}", ["D"], [f"D#{i}", "X#0"]) for i in range(1, 21)]
    rows[16]["retrieved"][0]["chunk_id"] = "D#99"
    qrels = Qrels({f"q{i:02d}": {f"D#{i}": 2} for i in range(1, 21)}, unit="chunk")
    bias = compute_label_bias({"config": {"k": 2}, "rows": rows}, qrels)
    assert (bias.doc_hit_rate, bias.chunk_hit_rate) == (1.0, 0.95)
    assert round(bias.hit_inflation, 3) == 0.050
    assert bias.phantom_hits == ("q17",)


def test_to_pandas_has_one_row_per_scored_question():
    frame = compute_label_bias(RUN, labels()).to_pandas()
    assert list(frame.index) == ["qA", "qB", "qC", "qD"]
    assert frame.loc["qD", "chunk_mrr"] == 0.5  # answer chunk at rank 2
