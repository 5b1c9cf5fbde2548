"""The compact model of a loaded run behaves as the plain one: entries, rank order, equality.

The oracle is the model built from plain tuples of :class:`Retrieved` (as a user builds it);
the loader's :class:`RetrievedList` and :class:`KeyedValues` must be indistinguishable from it
through the public API.
"""

from __future__ import annotations

import pytest

from ragaudit.data.saved_run import QuestionResult, Retrieved, SavedRun
from ragaudit.data.saved_run.table import rows_to_table, table_questions


def build_questions(rows):
    """The questions the loader makes: rows into the run's table, questions out of it."""
    return table_questions(rows_to_table(rows))


ENTRIES = {
    "in order": [{"chunk_id": "a#0", "doc_id": "a", "score": 2.0, "rank": 1},
                 {"chunk_id": "b#0", "doc_id": "b", "score": 1.0, "rank": 2}],
    "reversed": [{"chunk_id": "a#0", "doc_id": "a", "score": 1.0, "rank": 2},
                 {"chunk_id": "b#0", "doc_id": "b", "score": 2.0, "rank": 1}],
    "some unranked": [{"chunk_id": "a#0", "doc_id": "a", "rank": 2},
                      {"chunk_id": "b#0", "doc_id": "b"}],
    "no ranks, int and null scores": [{"chunk_id": "a#0", "doc_id": "a", "score": 3},
                                      {"chunk_id": "b#0", "doc_id": "b", "score": None}],
    "bool rank-like": [{"chunk_id": "a#0", "doc_id": "a", "rank": 1, "x": [1]},
                       {"chunk_id": "b#0", "doc_id": "b", "rank": 2}],
    "empty": [],
}  # fmt: skip


def _plain_ranked(entries: tuple[Retrieved, ...]) -> tuple[Retrieved, ...]:
    """The rule as written before the compact model: by rank when every entry has one."""
    if entries and all(r.rank is not None for r in entries):
        return tuple(sorted(entries, key=lambda r: r.rank or 0))
    return entries


@pytest.mark.parametrize("name", list(ENTRIES))
def test_loaded_entries_equal_plain_tuples(name):
    row = {"id": "q1", "retrieved": ENTRIES[name], "metrics": {"hit@k": 1.0, "correct": True}}
    loaded = build_questions([row])[0]
    plain = tuple(Retrieved.from_dict(e) for e in ENTRIES[name])
    assert loaded.retrieved == plain and plain == tuple(loaded.retrieved)
    assert tuple(loaded.ranked) == _plain_ranked(plain)
    assert loaded.ranked[:1] == _plain_ranked(plain)[:1]
    assert [r.to_dict() for r in loaded.retrieved] == [r.to_dict() for r in plain]
    assert loaded == QuestionResult("q1", retrieved=plain, metrics={"hit@k": 1.0, "correct": True})
    if plain:
        assert loaded.retrieved[-1] == plain[-1]
        with pytest.raises(IndexError):
            loaded.retrieved[len(plain)]


def test_metrics_keep_their_spelling_rule_and_types():
    rows = [
        {"id": "q1", "retrieved": [], "metrics": {"citation_acc": 1, "correct": True}},
        {"id": "q2", "retrieved": [], "metrics": {"citation_acc": 0.5, "citation_accuracy": 1.0}},
    ]
    q1, q2 = build_questions(rows)
    assert dict(q1.metrics) == {"citation_accuracy": 1, "correct": True}
    assert type(q1.metrics["citation_accuracy"]) is int and q1.metric("correct") == 1.0
    assert dict(q2.metrics) == {"citation_accuracy": 1.0}  # the last of two spellings wins
    run = SavedRun("r", {"k": 1}, (q1, q2))
    assert run.rows[0]["metrics"] == {"citation_accuracy": 1, "correct": True}


def test_questions_made_by_column_are_those_the_constructor_makes() -> None:
    """``QuestionResult._many`` sets the slots directly: it may do so only while the class
    has no ``__post_init__`` (which it would skip), and must give what ``__init__`` gives."""
    import dataclasses

    assert not hasattr(QuestionResult, "__post_init__")
    values = {
        "retrieved": (Retrieved("a#0", "a", 1.0, 1),), "question": "Why?",
        "answerable": False, "reference_answer": "no", "keywords": ("k",),
        "gold_docs": ("a",), "tags": ("t",), "context_ids": ("a#0",), "answer": "yes",
        "abstained": False, "citations": (1,), "latency_ms": {"total": 3.0},
        "generation_error": "timeout", "usage": {"tokens": 2}, "metrics": {"hit@k": 1.0},
    }  # fmt: skip
    by_init = [QuestionResult("q1", **values), QuestionResult("q2")]
    names = [f.name for f in dataclasses.fields(QuestionResult)][1:]
    columns = [[getattr(q, name) for q in by_init] for name in names]
    made = QuestionResult._many(["q1", "q2"], *columns)
    assert made == by_init
    assert [q.__dict__ if hasattr(q, "__dict__") else None for q in made] == [None, None]
    with pytest.raises(TypeError):
        QuestionResult._many(["q1"], *columns[:-1])


@pytest.mark.parametrize(
    "mappings",
    [
        [{"hit@k": 1.0, "correct": True}, {"hit@k": 0.0, "correct": None}],  # one key order
        [{"hit@k": 1.0, "correct": True}, {"correct": True, "hit@k": 1.0}],  # two orders
        [{"hit@k": 1.0}, {}, {"hit@k": 0.5}],  # an empty one among them
        [{"citation_acc": 0.5, "citation_accuracy": 1.0}] * 2,  # two spellings of one name
        [{"citation_acc": 0.5}, {"citation_acc": 0.25}],  # an old spelling only
        [],
    ],
)
@pytest.mark.parametrize("metrics", [False, True])
def test_mappings_keyed_by_batch_are_those_keyed_one_by_one(
    mappings: list[dict[str, object]], metrics: bool
) -> None:
    """The questions made from a batch's table (mappings that share their keys held as
    struct columns) have the mappings each question's own table gives it: same items, same
    order, same value types."""
    key = "metrics" if metrics else "judges"
    rows = [{"id": f"q{i}", "retrieved": [], key: dict(m)} for i, m in enumerate(mappings)]
    by_batch = [getattr(q, key) for q in build_questions(rows)]
    one_by_one = [getattr(build_questions([row])[0], key) for row in rows]
    assert [[(k, v, type(v)) for k, v in m.items()] for m in by_batch] == [
        [(k, v, type(v)) for k, v in m.items()] for m in one_by_one
    ]
