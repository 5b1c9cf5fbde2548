"""The compiled validity tests of saved runs agree with the schema walk on every document.

Two compiled tests: of a whole document (``check._compile``) and of a batch of rows, column by
column (``batch_check``).

``find_problems`` skips the walk when the compiled test says "valid", so the two must agree:
the walk (the interpreter of the schema file, tested by every bad-input row) is the oracle.
Documents are a valid run mutated at random places with random values (wrong types, NaN,
infinities, out-of-range numbers, booleans for integers, empty strings, missing keys).
"""

from __future__ import annotations

import copy
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ragaudit.data.saved_run import check
from ragaudit.data.saved_run.batch_check import RowChecker, rows_valid
from ragaudit.data.saved_run.check import _valid_fast, _walk, saved_run_schema

BASE = {
    "format": "ragaudit.run", "format_version": 1, "name": "r",
    "config": {"k": 2, "retrieval_depth": 3, "chunk_size": 800, "seed": None},
    "rows": [
        {"id": "q1", "question": "?", "answerable": True, "gold_docs": ["D"],
         "retrieved": [{"chunk_id": "D#0", "doc_id": "D", "score": 2.5, "rank": 1},
                       {"chunk_id": "E#0", "doc_id": "E", "score": None, "rank": 2}],
         "context_ids": ["D#0"], "answer": "a", "latency_ms": {"total": 3.5},
         "judges": {"correct": True, "abstained": 0, "answer_relevance": 4},
         "metrics": {"recall@k": 1.0, "correct": True, "faithfulness": None, "own": 7}},
        {"id": "q2", "retrieved": []},
    ],
    "summary": {"n": 2},
}  # fmt: skip

VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([2**31, -(2**40)]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=2),
    st.lists(st.integers(0, 1), max_size=2),
    st.dictionaries(st.text(max_size=1), st.none(), max_size=1),
)  # fmt: skip


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*path, i))


PATHS = [p for p in _paths(BASE) if p]


def _change(root, changes) -> None:
    """Apply each ``(path, value, delete)`` under ``root``: set the value at the path, or
    delete its last key; a change whose parent an earlier change replaced is skipped."""
    for path, value, delete in changes:
        parent = root
        try:
            for step in path[:-1]:
                parent = parent[step]
            if delete and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change replaced a parent


def _walk_ok(doc) -> bool:
    problems: list[str] = []
    _walk(doc, saved_run_schema(), "", problems, 50, frozenset())
    return not problems


@settings(max_examples=600, deadline=None)
@given(changes=st.lists(st.tuples(st.sampled_from(PATHS), VALUES, st.booleans()), max_size=3))
def test_the_compiled_test_agrees_with_the_walk(changes):
    doc = copy.deepcopy(BASE)
    _change(doc, changes)
    assert _valid_fast(frozenset())(doc) == _walk_ok(doc), changes


def test_the_base_document_is_valid_and_a_nan_score_is_not():
    assert _valid_fast(frozenset())(BASE) and _walk_ok(BASE)
    doc = copy.deepcopy(BASE)
    doc["rows"][0]["retrieved"][0]["score"] = math.nan
    assert not _valid_fast(frozenset())(doc) and not _walk_ok(doc)


# -- the column-wise check of whole batches of rows (ragaudit.data.saved_run.batch_check) ------
# ``find_problems`` skips the walk when the column check says a batch of rows is valid, so a
# batch it passes must hold no problem: the oracle is ``find_problems`` forced through the walk
# and the row loop.  Besides the mutations above: metric values out of their declared range,
# repeated ids and too many context chunks.

ROWS_BASE = {
    "format": "ragaudit.run", "format_version": 1, "name": "r",
    "config": {"k": 2, "retrieval_depth": 3},
    "rows": [
        {"id": "q1", "question": "?", "answerable": True, "gold_docs": ["D"], "keywords": ["k"],
         "retrieved": [{"chunk_id": "D#0", "doc_id": "D", "score": 2.5, "rank": 1},
                       {"chunk_id": "E#0", "doc_id": "E", "score": None, "rank": 2, "x": 1}],
         "context_ids": ["D#0"], "answer": "a", "latency_ms": {"total": 3.5},
         "judges": {"correct": True, "abstained": 0, "answer_relevance": 4,
                    "reasons": {"correct": "why"}, "judge_error": None},
         "metrics": {"recall@k": 1.0, "correct": True, "faithfulness": None, "own": 7},
         "generation_error": None, "error": None},
        {"id": "q2", "retrieved": []},
        {"id": "q3", "retrieved": [{"chunk_id": "F#1", "doc_id": "F"}], "metrics": {"hit@k": 0}},
    ],
}  # fmt: skip

ROW_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([2**31, -(2**40), 1.5, 0.5]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=2),
    st.sampled_from(["q1", "q2", "D#0"]),
    st.lists(st.one_of(st.integers(0, 1), st.text(max_size=1)), max_size=3),
    st.dictionaries(st.sampled_from(["chunk_id", "doc_id", "a"]), st.text(max_size=1), max_size=2),
)  # fmt: skip


ROW_PATHS = [p for p in _paths(ROWS_BASE["rows"]) if p]


def _walk_problems(doc) -> list[str]:
    """``find_problems`` with the fast checks switched off: the walk and the row loop."""
    problems: list[str] = []
    check._walk(doc, check.saved_run_schema(), "", problems, 50, frozenset())
    if not problems:
        problems = check._row_problems(doc["rows"], 50) or check._k_problems(doc)
    return problems


@settings(max_examples=800, deadline=None)
@given(
    changes=st.lists(st.tuples(st.sampled_from(ROW_PATHS), ROW_VALUES, st.booleans()), max_size=3)
)
def test_the_column_check_passes_only_rows_the_walk_passes(changes):
    doc = copy.deepcopy(ROWS_BASE)
    _change(doc["rows"], changes)
    walk = _walk_problems(doc)
    if rows_valid(doc["rows"], 2):
        assert walk == [], changes
    assert check.find_problems(doc) == check._name_questions(walk, doc)[:50]


def test_the_base_rows_pass_and_each_kind_of_problem_fails():
    assert rows_valid(ROWS_BASE["rows"], 2) and _walk_problems(ROWS_BASE) == []
    for path, value in [
        ((0, "metrics", "recall@k"), 1.5),  # out of the declared range
        ((0, "metrics", "correct"), 2),  # not 0/1
        ((1, "id"), "q1"),  # a repeated id
        ((0, "context_ids"), ["a", "b", "c"]),  # more than k = 2
        ((0, "retrieved", 0, "rank"), 0),
        ((0, "judges", "answer_relevance"), 6),
        ((0, "retrieved", 1, "score"), float("inf")),
    ]:
        doc = copy.deepcopy(ROWS_BASE)
        parent = doc["rows"]
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = value
        assert not rows_valid(doc["rows"], 2), path
        assert _walk_problems(doc), path


def test_ids_must_be_unique_across_batches():
    checker = RowChecker(k=None)
    assert checker.valid([{"id": "a", "retrieved": []}])
    assert not checker.valid([{"id": "a", "retrieved": []}])
