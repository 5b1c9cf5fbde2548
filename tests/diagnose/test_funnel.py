"""The funnel on hand-built saved runs whose right answers are known by construction."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ragaudit.data.qrels import Qrels
from ragaudit.diagnose.funnel import STAGE_KEYS, compute_funnel
from ragaudit.exceptions import FormatError, InputError


def row(
    qid,
    *,
    docs=("G",),
    gold=("G",),
    evidence=True,
    abstained=False,
    correct=True,
    answerable=True,
    context=None,
    **extra_judges,
):
    """A saved-run row whose retrieved list is one chunk per doc in ``docs`` (rank order)."""
    retrieved = [
        {"chunk_id": f"{d}#{i}", "doc_id": d, "score": 10.0 - i, "rank": i + 1}
        for i, d in enumerate(docs)
    ]
    judges = {"abstained": abstained, "correct": correct, "evidence_in_context": evidence}
    judges.update(extra_judges)
    out = {
        "id": qid,
        "answerable": answerable,
        "gold_docs": list(gold) if answerable else [],
        "retrieved": retrieved,
        "judges": judges,
    }
    if context is not None:
        out["context_ids"] = list(context)
    return out


def saved(rows, k=1, depth=None, **config):
    cfg = {"k": k, **config}
    if depth is not None:
        cfg["retrieval_depth"] = depth
    return {"name": "handmade", "config": cfg, "rows": rows}


def chapter_run():
    """The chapter's table: 42 answerable, all retrieve the gold doc; 2 lose the evidence,
    2 refuse, 3 answer wrong; 35 correct."""
    rows = []
    for i in range(1, 43):
        qid = f"q{i:02d}"
        if qid in ("q17", "q37"):
            rows.append(row(qid, evidence=False, correct=False))
        elif qid in ("q23", "q42"):
            rows.append(row(qid, abstained=True, correct=False))
        elif qid in ("q08", "q29", "q41"):
            rows.append(row(qid, correct=False))
        else:
            rows.append(row(qid))
    return saved(rows, k=5, depth=5)


def test_chapter_funnel_counts_rates_and_conditionals():
    f = compute_funnel(chapter_run(), n_resamples=200)
    assert f.n == 42 and f.k == 5
    assert [s.kept for s in f.stages] == [42, 40, 38, 35]
    assert [s.rate for s in f.stages] == pytest.approx([1.0, 40 / 42, 38 / 42, 35 / 42])
    assert list(f.factors) == pytest.approx([1.0, 40 / 42, 38 / 40, 35 / 38])
    # the chapter's printed (rounded) values
    assert [round(x, 3) for x in f.factors] == [1.000, 0.952, 0.950, 0.921]
    assert f.p_correct == pytest.approx(35 / 42)
    assert round(f.p_correct, 3) == 0.833
    assert f.gap == pytest.approx(7 / 42)
    assert f.died == {
        "1-retrieval": (),
        "2-evidence": ("q17", "q37"),
        "3-refusal": ("q23", "q42"),
        "4-generation": ("q08", "q29", "q41"),
    }
    assert len(f.ok_ids) == 35 and f.lucky == ()
    assert f.stage2_source == "evidence_in_context"


def test_lucky_questions_die_at_their_first_failed_stage_and_count_end_to_end():
    rows = [
        row("a"),  # passes everything
        row("b", docs=("X",), evidence=False, correct=True),  # never retrieved, right: lucky
        row("c", evidence=False, correct=True),  # wrong chunk, right anyway: lucky
        row("d", docs=("X",), evidence=True, abstained=True, correct=False),  # died at 1
        row("e", abstained=True, correct=True),  # a refusal is never "correct"
    ]
    f = compute_funnel(saved(rows), n_resamples=100)
    assert [s.kept for s in f.stages] == [3, 2, 1, 1]  # a, c, e | a, e | a | a
    assert f.died["1-retrieval"] == ("b", "d")
    assert f.died["2-evidence"] == ("c",)
    assert f.died["3-refusal"] == ("e",)
    assert f.died["4-generation"] == ()
    assert f.lucky == ("b", "c")
    assert f.p_correct == pytest.approx(1 / 5)
    assert f.correct_end_to_end == pytest.approx(3 / 5)  # a + two lucky
    assert f.stage1_rate == pytest.approx(3 / 5)
    assert f.gap == pytest.approx(0.0)
    # product identity stays exact in the strict funnel
    assert math.prod(f.factors) == pytest.approx(f.p_correct)


def test_product_identity_and_partition_on_random_runs():
    rng = np.random.default_rng(7)
    for _ in range(20):
        rows = []
        for i in range(int(rng.integers(1, 30))):
            rows.append(
                row(
                    f"q{i}",
                    docs=("G",) if rng.random() < 0.8 else ("X",),
                    evidence=bool(rng.random() < 0.8),
                    abstained=bool(rng.random() < 0.2),
                    correct=bool(rng.random() < 0.7),
                )
            )
        f = compute_funnel(saved(rows), n_resamples=50)
        factors = [x for x in f.factors if x is not None]
        if len(factors) == 4:
            assert math.prod(factors) == pytest.approx(f.p_correct)
        else:
            assert f.p_correct == 0.0
        assert sum(len(v) for v in f.died.values()) + len(f.ok_ids) == f.n
        assert f.correct_end_to_end == pytest.approx(f.p_correct + len(f.lucky) / f.n)
        kept = [s.kept for s in f.stages]
        assert kept == sorted(kept, reverse=True)


def test_unanswerable_questions_are_reported_separately():
    rows = [
        row("q1"),
        row("u1", answerable=False, docs=("X",), abstained=True, correct=None, evidence=None),
        row("u2", answerable=False, docs=("X",), abstained=False, correct=None, evidence=None),
        row("u3", answerable=False, docs=("X",), abstained=True, correct=None, evidence=None),
    ]
    f = compute_funnel(saved(rows), n_resamples=100)
    assert f.n == 1
    u = f.unanswerable
    assert (u.n, u.abstained, u.answered_ids) == (3, 2, ("u2",))
    assert u.rate == pytest.approx(2 / 3)
    assert 0.0 <= u.ci_low <= u.rate <= u.ci_high <= 1.0


def test_reslicing_recomputes_stage_one_and_says_what_is_carried_over():
    # gold doc at rank 2: a hit at k=2 (the run's k) and a miss at k=1
    rows = [row("q1", docs=("X", "G", "Y")), row("q2", docs=("G", "X", "Y"))]
    run = saved(rows, k=2, depth=3)
    own = compute_funnel(run, n_resamples=50)
    assert own.stages[0].kept == 2 and own.notes == ()
    at1 = compute_funnel(run, k=1, n_resamples=50)
    assert at1.stages[0].kept == 1
    assert at1.died["1-retrieval"] == ("q1",)
    assert at1.lucky == ("q1",)  # its answer (made from the k=2 context) was right
    assert at1.stages[0].provenance == "re-computed at k=1"
    assert [s.provenance for s in at1.stages[1:]] == ["carried over from the run (k=2)"] * 3
    assert "k=1 differs from the run's k=2" in at1.notes[0]
    assert "stages 3-4 carried over" in at1.notes[0]
    at3 = compute_funnel(run, k=3, n_resamples=50)
    assert at3.stages[0].kept == 2


def test_k_deeper_than_retrieval_is_an_error():
    run = saved([row("q1", docs=("G", "X"))], k=2, depth=2)
    with pytest.raises(InputError, match=r"k=5 is deeper than the run retrieved \(retrieval"):
        compute_funnel(run, k=5)
    with pytest.raises(InputError, match="k: expected an integer >= 1, found 0"):
        compute_funnel(run, k=0)


def labels_for(answer_chunks):
    return Qrels({q: {c: 2 for c in chunks} for q, chunks in answer_chunks.items()}, unit="chunk")


def test_stage_two_from_chunk_labels_uses_the_actual_context_at_the_runs_k():
    # q1: the answer chunk G#1 was retrieved at rank 2 but the context held only G#0
    # (e.g. a reranker dropped it); the judge said "evidence present" - the labels win.
    rows = [
        row("q1", docs=("G", "G"), context=["G#0"], evidence=True),
        row("q2", docs=("G", "G"), context=["G#0", "G#1"], evidence=False),
    ]
    rows[0]["retrieved"][1]["chunk_id"] = "G#1"
    rows[1]["retrieved"][1]["chunk_id"] = "G#1"
    labels = labels_for({"q1": ["G#1"], "q2": ["G#1"]})
    f = compute_funnel(saved(rows, k=2, depth=2), labels=labels, n_resamples=50)
    assert f.stage2_source == "chunk_labels"
    assert f.died["2-evidence"] == ("q1",)
    assert f.stages[1].kept == 1
    # re-sliced at k=1 the labels are applied to retrieved[:1]: neither has G#1 any more
    f1 = compute_funnel(saved(rows, k=2, depth=2), k=1, labels=labels, n_resamples=50)
    assert f1.died["2-evidence"] == ("q1", "q2")
    assert f1.stages[1].provenance == "re-computed at k=1"
    assert "stage 2 re-computed on retrieved[:1]" in f1.notes[0]


def test_stage_two_falls_back_to_sufficiency_then_evidence_judge_per_question():
    rows = [
        row("q1", evidence=True),  # labelled: answer chunk absent -> fails
        row("q2", evidence=True, sufficiency=False),  # sufficiency beats evidence_in_context
        row("q3", evidence=False),  # offline judge
    ]
    labels = labels_for({"q1": ["G#9"]})
    f = compute_funnel(saved(rows), labels=labels, n_resamples=50)
    assert f.died["2-evidence"] == ("q1", "q2", "q3")
    assert f.stage2_source == "mixed"
    assert f.stage2_source_counts == {
        "chunk_labels": 1,
        "sufficiency": 1,
        "evidence_in_context": 1,
    }


def test_document_level_labels_are_rejected_for_stage_two():
    with pytest.raises(InputError, match="needs chunk-level labels"):
        compute_funnel(saved([row("q1")]), labels=Qrels({"q1": {"G": 1}}))


def test_judge_errors_are_unjudged_counted_and_listed_with_their_reason():
    rows = [row("q1"), row("q2", correct=None), row("q3", evidence=None)]
    rows[1]["judges"]["judge_errors"] = {"correctness": "timeout"}
    f = compute_funnel(saved(rows), n_resamples=50)
    assert f.n == 3  # nobody is dropped from the denominator
    got = [(u.id, u.stage, u.reason, u.correct) for u in f.unjudged]
    assert got == [
        ("q2", "4-generation", "correctness judge failed: timeout", None),
        ("q3", "2-evidence", "no evidence-in-context verdict", True),
    ]
    # q1 passes all; q2 reached stage 4 undecided; q3 reached stage 2 undecided
    assert [s.kept for s in f.stages] == [3, 2, 2, 1]
    assert (f.correct.count, f.correct.n) == (2, 3)  # q1 and q3 (right although unjudged)
    assert f.correct_end_to_end == pytest.approx(2 / 3)
    assert any("q2 at 4-generation (correctness judge failed: timeout)" in n for n in f.notes)
    assert "q3" not in f.failure_ids() and "q2" in f.failure_ids()


def test_no_stage_two_source_at_all_is_counted_and_says_how_to_fix_it():
    rows = [row("q1", evidence=None)]
    f = compute_funnel(saved(rows), n_resamples=20)
    assert [(u.id, u.stage) for u in f.unjudged] == [("q1", "2-evidence")]
    assert any("stage 2 is decided for no question" in n and "--labels FILE" in n for n in f.notes)


def test_bad_judge_value_names_file_row_and_field():
    run = saved([row("q1", correct="yes")])
    run["path"] = "runs/x.json"
    with pytest.raises(FormatError, match=r"^runs/x.json: rows\[0\].judges.correct: expected true"):
        compute_funnel(run)


def test_a_run_without_k_is_rejected_as_import_rejects_it():
    # config.k is required by the saved-run format; every command reads through one loader.
    run = {"config": {}, "rows": [row("q1")]}
    with pytest.raises(FormatError, match=r"config: missing required key 'k'"):
        compute_funnel(run, k=1)


def test_a_judge_verdict_out_of_range_names_the_question_and_field():
    run = saved([row("q1"), row("q2", correct=3)])
    with pytest.raises(
        FormatError,
        match=r"rows\[1\]\.judges\.correct: expected true, false, 0, 1 or null, found 3 "
        r"\(question 'q2'\)",
    ):
        compute_funnel(run)


def test_bootstrap_is_seeded_and_reproducible():
    run = chapter_run()
    a = compute_funnel(run, seed=3, n_resamples=300, rate_ci="bootstrap").to_dict()
    b = compute_funnel(run, seed=3, n_resamples=300, rate_ci="bootstrap").to_dict()
    c = compute_funnel(run, seed=4, n_resamples=300, rate_ci="bootstrap").to_dict()
    assert json.dumps(a) == json.dumps(b)
    assert a["gap_ci"] != c["gap_ci"]
    assert a["bootstrap"]["seed"] == 3


def test_stage_rates_get_clopper_pearson_intervals_that_are_never_degenerate():
    from statsmodels.stats.proportion import proportion_confint

    f = compute_funnel(chapter_run(), seed=3, n_resamples=300)
    assert f.rate_ci_method == "Clopper-Pearson exact"
    for stage in f.stages:
        low, high = proportion_confint(stage.kept, f.n, alpha=0.05, method="beta")
        assert (stage.ci_low, stage.ci_high) == (pytest.approx(low), pytest.approx(high))
    # a stage every question passes still has an uncertain rate: low = 0.025 ** (1 / n) < 1
    rows = [row(f"q{i}", correct=True) for i in range(50)]
    every = compute_funnel(saved(rows), n_resamples=50)
    assert every.stages[0].ci_low == pytest.approx(0.025 ** (1 / 50))
    assert every.stages[0].ci_high == 1
    wilson = compute_funnel(saved(rows), n_resamples=50, rate_ci="wilson").stages[0]
    w_low, w_high = proportion_confint(50, 50, alpha=0.05, method="wilson")
    assert (wilson.ci_low, wilson.ci_high) == (pytest.approx(w_low), pytest.approx(w_high))


def test_unknown_rate_interval_is_rejected():
    with pytest.raises(InputError, match=r"rate_ci: expected one of clopper-pearson, .*'exact'"):
        compute_funnel(chapter_run(), rate_ci="exact")


def test_bootstrap_interval_width_matches_the_normal_approximation():
    # 400 questions, half answered correctly: the 95% interval of a proportion is about
    # p +- 1.96 * sqrt(p (1 - p) / n) = 0.5 +- 0.049
    rows = [row(f"q{i}", correct=i % 2 == 0) for i in range(400)]
    f = compute_funnel(saved(rows), n_resamples=2000, seed=1, rate_ci="bootstrap")
    half_width = 1.96 * math.sqrt(0.25 / 400)
    stage4 = f.stages[3]
    assert stage4.ci_low == pytest.approx(0.5 - half_width, abs=0.01)
    assert stage4.ci_high == pytest.approx(0.5 + half_width, abs=0.01)


def test_json_has_the_documented_keys():
    d = compute_funnel(chapter_run(), n_resamples=20).to_dict()
    for key in (
        "stages",
        "p_correct",
        "gap",
        "died",
        "lucky",
        "k",
        "n",
        "stage2_source",
        "unanswerable",
    ):
        assert key in d
    assert set(d["stages"][0]) >= {"name", "kept", "rate", "conditional", "ci_low", "ci_high"}
    assert list(d["died"]) == list(STAGE_KEYS)
    json.dumps(d, allow_nan=False)


def test_reslicing_recomputes_stage_two_from_keywords_in_the_top_k_chunk_texts():
    # the run (k=2) judged the evidence present for both; the keywords "14 days" sit in G#1
    rows = [
        row("q1", docs=("G", "G", "X")),
        row("q2", docs=("X", "Y", "G"), evidence=False, correct=False),
    ]
    for r in rows:
        r["keywords"] = ["14 days"]
    texts = {
        "G#0": "Book in Waypoint.",
        "G#1": "At least 14 days ahead.",
        "X#0": "Hotels.",
        "X#2": "Trains.",
        "Y#1": "Cars.",
        "G#2": "Book 14 days ahead.",
    }
    run = saved(rows, k=2, depth=3)
    at1 = compute_funnel(run, k=1, chunk_texts=texts, n_resamples=20)
    assert at1.stage2_source == "keywords_in_top_k"
    assert at1.died["2-evidence"] == ("q1",)  # G#1 is outside the top 1
    assert at1.died["1-retrieval"] == ("q2",)
    assert "stage 2 re-computed on retrieved[:1]" in at1.notes[0]
    at3 = compute_funnel(run, k=3, chunk_texts=texts, n_resamples=20)
    assert at3.died["2-evidence"] == ()  # q2's G#2 now in the top 3 and says "14 days"
    assert at3.died["4-generation"] == ("q2",)  # its answer, made from the k=2 context, was wrong
    # at the run's own k the texts are not used: the judge saw the real context
    own = compute_funnel(run, chunk_texts=texts, n_resamples=20)
    assert own.stage2_source == "evidence_in_context"
    without = compute_funnel(run, k=1, n_resamples=20)
    assert "carried over from the run's own context (k=2) for 2 of 2 questions" in without.notes[0]
    with pytest.raises(InputError, match=r"rows\[0\] \(q1\): a retrieved chunk is missing"):
        compute_funnel(run, k=1, chunk_texts={"G#9": "x"})


def test_labels_without_an_answer_chunk_leave_stage_two_to_the_judges():
    rows = [row("q1", evidence=True), row("q2", evidence=False)]
    labels = Qrels({"q1": {"G#5": 1}, "q2": {"G#0": 2}}, unit="chunk")  # q1: related only
    f = compute_funnel(saved(rows), labels=labels, n_resamples=20)
    assert f.stage2_source_counts == {"chunk_labels": 1, "evidence_in_context": 1}
    assert f.died["2-evidence"] == ()  # q1 by its judge; q2's answer chunk G#0 was retrieved


def test_to_pandas_has_one_row_per_stage():
    frame = compute_funnel(chapter_run(), n_resamples=50).to_pandas()
    assert list(frame.index) == list(STAGE_KEYS)
    assert list(frame["kept"]) == [42, 40, 38, 35]  # the chapter's table
