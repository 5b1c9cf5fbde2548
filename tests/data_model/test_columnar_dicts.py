"""The columnar construction of ``Run`` from in-memory rankings equals the per-question path.

Every case is built twice: once as usual (numpy, all questions at once) and once with the
columnar path switched off, and both are checked against the ranking rule written out here
(score descending, ties by id descending in code point order, which is strcmp order on UTF-8).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from ragaudit.data import Run
from ragaudit.data import formats as formats_module
from ragaudit.exceptions import InputError

# Ids sharing prefixes and non-ASCII letters, so the id tie break meets every case of strcmp.
POOL = ["a", "ab", "abc", "b", "B", "é", "éa", "日本", "日", "z9", "z10", "Ω", "doc-1", "doc-10"]


def per_question_run(rankings, **options) -> Run:
    """The same run through the per-question path (the columnar one switched off)."""
    original = formats_module.columns_from_rankings
    formats_module.columns_from_rankings = lambda *args, **kwargs: None  # type: ignore[assignment]
    try:
        return Run(rankings, **options)
    finally:
        formats_module.columns_from_rankings = original  # type: ignore[assignment]


def expected_order(pairs):
    """trec_eval's rule stated directly: (score, id) descending."""
    return [item for item, _ in sorted(pairs, key=lambda p: (p[1], p[0]), reverse=True)]


def expected_ties(scores) -> int:
    return sum(1 for count in Counter(scores).values() if count > 1)


def random_scored(seed: int, n_questions: int = 60) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    print(f"seed={seed}")
    rankings: dict[str, dict[str, float]] = {}
    for q in range(n_questions):
        size = int(rng.integers(0, len(POOL) + 1))  # empty rankings included
        items = rng.choice(POOL, size=size, replace=False).tolist()
        # Few distinct scores: many ties, including -0.0 == 0.0.
        scores = rng.choice([-1.0, -0.0, 0.0, 0.5, 2.0], size=size).tolist()
        rankings[f"q{q}"] = dict(zip(items, scores, strict=True))
    return rankings


def assert_same_run(fast: Run, slow: Run, mixed: bool = False) -> None:
    assert list(fast) == list(slow)
    assert len(fast) == len(slow)
    assert fast.tied_groups == slow.tied_groups
    assert fast.has_scores == slow.has_scores
    for qid in slow:
        assert fast[qid] == slow[qid], qid
        assert fast.scores(qid) == slow.scores(qid), qid
    if not mixed:  # to_dict() has no shape for a run scoring only some questions
        assert fast.to_dict() == slow.to_dict()
    for k in (1, 3):
        cut = fast.truncate(k)
        for qid in slow:
            scores = slow.scores(qid)
            assert cut[qid] == slow[qid][:k]
            assert cut.scores(qid) == (None if scores is None else scores[:k])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scored_dicts_rank_like_trec_eval(seed):
    rankings = random_scored(seed)
    fast, slow = Run(rankings), per_question_run(rankings)
    assert fast.columns is not None and not fast._built  # the columnar path was taken
    assert_same_run(fast, slow)
    for qid, ranking in rankings.items():
        assert fast[qid] == expected_order(ranking.items())
    assert fast.tied_groups == sum(expected_ties(r.values()) for r in rankings.values())


@pytest.mark.parametrize("seed", [3, 4])
def test_given_order_keeps_input_order_and_counts_ties(seed):
    rankings = random_scored(seed)
    fast = Run(rankings, order="given")
    assert fast.columns is not None
    assert_same_run(fast, per_question_run(rankings, order="given"))
    for qid, ranking in rankings.items():
        assert fast[qid] == list(ranking)
        assert fast.scores(qid) == list(ranking.values())
    assert fast.tied_groups == sum(expected_ties(r.values()) for r in rankings.values())


@pytest.mark.parametrize("seed", [5, 6])
def test_pairs_with_duplicates_keep_the_first_occurrence(seed):
    rng = np.random.default_rng(seed)
    print(f"seed={seed}")
    rankings = {}
    for q in range(40):
        size = int(rng.integers(1, 20))
        items = rng.choice(POOL, size=size).tolist()  # with replacement: duplicates
        scores = rng.integers(0, 3, size=size).astype(float).tolist()
        rankings[f"q{q}"] = list(zip(items, scores, strict=True))
    fast = Run(rankings, duplicates="first")
    assert fast.columns is not None
    assert_same_run(fast, per_question_run(rankings, duplicates="first"))
    for qid, pairs in rankings.items():
        first = {}
        for item, score in pairs:
            first.setdefault(item, score)
        assert fast[qid] == expected_order(first.items())


@pytest.mark.parametrize("seed", [7, 8])
def test_id_lists_keep_their_order_and_drop_repeats(seed):
    rng = np.random.default_rng(seed)
    print(f"seed={seed}")
    rankings = {}
    for q in range(40):
        size = int(rng.integers(0, 20))
        rankings[f"q{q}"] = rng.choice(POOL, size=size).tolist()
    fast = Run(rankings, duplicates="first")
    assert fast.columns is not None and not fast.has_scores
    assert_same_run(fast, per_question_run(rankings, duplicates="first"))
    for qid, ids in rankings.items():
        assert fast[qid] == list(dict.fromkeys(ids))
        assert fast.scores(qid) is None
    assert fast.tied_groups == 0


def test_duplicate_error_names_the_first_repeat_on_both_paths():
    rankings = {"q1": ["a", "b"], "q2": ["x", "日本", "y", "y", "日本"], "q3": ["c", "c"]}
    message = r"^question 'q2': item 'y' appears more than once in the ranking"
    with pytest.raises(InputError, match=message):
        Run(rankings)
    with pytest.raises(InputError, match=message):
        per_question_run(rankings)
    named = r"^r\.tsv: question 'q3': item 'c' appears more than once"
    with pytest.raises(InputError, match=named):
        Run({"q3": [("c", 1.0), ("c", 2.0)]}, name="r.tsv")


def test_inputs_outside_the_columnar_path_give_the_same_run():
    cases = [
        {"q1": {"a": 1.0}, "q2": ["b", "c"]},  # mixed kinds
        {"q1": [("a", 1.0)], "q2": []},  # pairs beside an empty ranking
        {"q1": {1: 0.5, "2": 0.7}},  # non-str ids
        {"q1": {"a\x00": 1.0, "a": 1.0}},  # NUL in an id
        {"q1": {"a": 1, "b": True, "c": np.float32(0.5)}},  # non-float numbers
        {"q1": {}, "q2": {}},  # nothing ranked
    ]
    for index, rankings in enumerate(cases):
        assert_same_run(Run(rankings), per_question_run(rankings), mixed=index in (0, 1))
    assert Run({"q1": {"a\x00": 1.0, "a": 1.0}})["q1"] == ["a\x00", "a"]
    with pytest.raises(InputError, match="expected an id or an"):
        Run({"q1": ["a", ("b", 1.0)]})


def test_columnar_run_lifts_chunks_and_answers_membership():
    run = Run({"q1": {"c1": 0.2, "c2": 0.9, "c3": 0.9}, "q2": {"c4": 1.0}}, unit="chunk")
    assert "q2" in run and "q3" not in run
    lifted = run.to_docs({"c1": "D1", "c2": "D2", "c3": "D1", "c4": "D3"})
    assert lifted.to_dict() == {"q1": ["D1", "D2"], "q2": ["D3"]}  # c3 > c2 on the id tie break
