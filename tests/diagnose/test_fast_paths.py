"""The shortcuts that keep the audit linear on large runs give what the plain definitions give.

Each shortcut is checked against the definition it replaces, on random inputs:
``top_k`` against ``QuestionResult.ranked[:k]``, the funnel's end-to-end count against
``end_to_end_correct``, ``QuestionView.to_dict`` against ``dataclasses.asdict``, and the
funnel without ``--ci bootstrap`` against the intervals it printed before the bootstrap was
skipped (exact and score intervals, which never read the bootstrap).
"""

from __future__ import annotations

from dataclasses import asdict

from hypothesis import given, settings
from hypothesis import strategies as st

from ragaudit.data.saved_run import Judgments, QuestionResult, Retrieved, SavedRun
from ragaudit.data.saved_run.summary import end_to_end_correct
from ragaudit.diagnose.drilldown import question_view, show_value
from ragaudit.diagnose.funnel import compute_funnel
from ragaudit.diagnose.stage_outcomes import top_k
from ragaudit.stats.intervals import clopper_pearson_bounds, tango_bounds

ranks = st.lists(st.one_of(st.none(), st.integers(1, 6)), max_size=8)


@given(ranks, st.integers(1, 9))
@settings(max_examples=300, deadline=None)
def test_top_k_is_ranked_prefix(rank_list, k):
    # ties, gaps, missing ranks and unsorted lists included
    entries = tuple(Retrieved(f"c{i}", f"d{i}", rank=r) for i, r in enumerate(rank_list))
    q = QuestionResult("q1", retrieved=entries)
    assert top_k(q, k) == q.ranked[:k]


def _question(i: int, verdicts: dict, error: str | None) -> QuestionResult:
    return QuestionResult(
        f"q{i}",
        retrieved=(Retrieved("G#0", "G", rank=1),),
        gold_docs=("G",),
        judges=Judgments(verdicts),
        generation_error=error,
        answer=None if error else "an answer",
        answerable=i % 7 != 3,
    )


verdict_sets = st.fixed_dictionaries(
    {},
    optional={
        "abstained": st.one_of(st.none(), st.booleans()),
        "correct": st.one_of(st.none(), st.booleans()),
        "evidence_in_context": st.one_of(st.none(), st.booleans()),
        "judge_errors": st.just({"correctness": "timeout"}),
        "reasons": st.just({"correct": "no reference answer"}),
    },
)


@given(st.lists(st.tuples(verdict_sets, st.sampled_from([None, "HTTP 500"])), min_size=1,
                max_size=30))  # fmt: skip
@settings(max_examples=150, deadline=None)
def test_funnel_count_is_end_to_end_correct(rows):
    questions = tuple(_question(i, v, e) for i, (v, e) in enumerate(rows))
    run = SavedRun("r", {"k": 1}, questions)
    funnel = compute_funnel(run, n_resamples=10)
    expected = end_to_end_correct(questions)
    assert (funnel.correct.count, funnel.correct.n) == (expected.count, expected.n)
    assert list(funnel.correct.unjudged.items()) == list(expected.unjudged.items())


def test_stage_intervals_need_no_bootstrap():
    """Without --ci bootstrap each stage gets Clopper-Pearson of kept/n and the gap Tango's
    interval of its 2x2 table, whatever the resamples (the bootstrap is not drawn)."""
    judges = [
        {"abstained": False, "correct": True, "evidence_in_context": True},
        {"abstained": False, "correct": False, "evidence_in_context": True},
        {"abstained": True, "correct": None, "evidence_in_context": True},
        {"abstained": False, "correct": True, "evidence_in_context": False},
    ] * 5
    questions = tuple(_question(i, v, None) for i, v in enumerate(judges))
    run = SavedRun("r", {"k": 1}, questions)
    few, many = compute_funnel(run, n_resamples=1), compute_funnel(run, n_resamples=500)
    n = few.n
    for stage, other in zip(few.stages, many.stages, strict=True):
        low, high = clopper_pearson_bounds([stage.kept], [n], 0.95)
        assert (stage.ci_low, stage.ci_high) == (other.ci_low, other.ci_high)
        assert (stage.ci_low, stage.ci_high) == (float(low[0]), float(high[0]))
    # every question retrieves its gold document: the gap's 2x2 table is (retrieved but not
    # correct, n - correct) and (correct without retrieval, 0)
    assert few.stages[0].kept == n
    gap_low, gap_high = tango_bounds([n - few.correct.count], [0], [n], 0.95)
    assert few.gap_ci == many.gap_ci == (float(gap_low[0]), float(gap_high[0]))


def test_question_view_to_dict_is_asdict():
    q = QuestionResult(
        "q1",
        retrieved=(Retrieved("b#0", "b", rank=2), Retrieved("a#0", "a", rank=1)),
        gold_docs=("a",),
        keywords=("x", "y"),
        judges=Judgments({"correct": True, "score": 0.5, "note": "n", "none": None}),
        answer="A",
    )
    view = question_view(q, "ok", 2, {"a#0": "text"}, {"q1": {"a#0"}})
    assert view.to_dict() == asdict(view)
    assert [show_value(v) for v in (True, False, None, 0.5, [1, "a"])] == [
        "true",
        "false",
        "null",
        "0.5",
        '[1, "a"]',
    ]
