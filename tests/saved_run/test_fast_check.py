"""The compiled validity test of saved runs agrees with the schema walk on every document.

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


def _walk_ok(doc) -> bool:
    problems: list[str] = []
    _walk(doc, saved_run_schema(), "", problems, 50, frozenset())
    return not problems


@settings(max_examples=600, deadline=None)
@given(changes=st.lists(st.tuples(st.sampled_from(PATHS), VALUES, st.booleans()), max_size=3))
def test_the_compiled_test_agrees_with_the_walk(changes):
    doc = copy.deepcopy(BASE)
    for path, value, delete in changes:
        parent = doc
        try:
            for step in path[:-1]:
                parent = parent[step]
            if delete and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change replaced a parent
    assert _valid_fast(frozenset())(doc) == _walk_ok(doc), changes


def test_the_base_document_is_valid_and_a_nan_score_is_not():
    assert _valid_fast(frozenset())(BASE) and _walk_ok(BASE)
    doc = copy.deepcopy(BASE)
    doc["rows"][0]["retrieved"][0]["score"] = math.nan
    assert not _valid_fast(frozenset())(doc) and not _walk_ok(doc)
