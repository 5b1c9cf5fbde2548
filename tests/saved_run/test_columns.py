"""The columnar readers of a loaded run equal the per-question values they replace.

The oracle is the per-question API as ``compare`` and the audit read it before the columns:
``q.metric(name)``, ``{name: q.metric(name) for name in q.metrics}``, ``q.ranked[:k]``'s
document ids, and the dicts of :class:`PerQuestionMetrics` walked per question.  Each is
checked on runs that take the fast path (every question with the same metric names, as the
loader shares them) and on runs that take the per-question path (names differing between
questions, mappings built by hand).
"""

from __future__ import annotations

import numpy as np
import pytest

from ragaudit.data.per_question import PerQuestionMetrics, QuestionRows
from ragaudit.data.saved_run import QuestionResult, Retrieved, SavedRun
from ragaudit.data.saved_run.columns import (
    _shared_index,
    metric_columns,
    metric_dicts,
    metric_names,
    top_chunk_ids,
    top_doc_ids,
)
from ragaudit.stats._inputs import aligned_values, pair_runs


def _entries(i: int) -> list[dict]:
    """Six entries whose documents repeat; ranks in order, reversed, partial or absent."""
    docs = [f"d{(i * 7 + j) % 5}" for j in range(6)]
    entries = [{"chunk_id": f"{d}#{j}", "doc_id": d, "score": float(6 - j)}
               for j, d in enumerate(docs)]  # fmt: skip
    kind = i % 4
    for j, e in enumerate(entries):
        if kind == 0 or (kind == 2 and j % 2 == 0):
            e["rank"] = j + 1
        elif kind == 1:
            e["rank"] = 6 - j
    return entries


def _uniform_rows(n: int) -> list[dict]:
    """Every question with the same metric names: floats, booleans, integers and nulls."""
    return [
        {
            "id": f"q{i}",
            "answerable": i % 5 != 0,
            "gold_docs": [f"d{i % 3}"] if i % 6 else [],
            "retrieved": _entries(i),
            "metrics": {
                "hit@k": float(i % 2),
                "correct": None if i % 7 == 0 else bool(i % 3),
                "keyword_hit": i % 2,
                "faithfulness": None if i % 4 == 0 else i / n,
            },
        }
        for i in range(n)
    ]


def _mixed_rows(n: int) -> list[dict]:
    """Questions whose metric names differ (some absent, one with none)."""
    rows = _uniform_rows(n)
    for i, row in enumerate(rows):
        if i % 3 == 0:
            del row["metrics"]["faithfulness"]
        if i == 4:
            row["metrics"] = {}
    return rows


RUNS = {
    "uniform": lambda: SavedRun.from_dict({"name": "u", "config": {"k": 3},
                                          "rows": _uniform_rows(40)}),
    "mixed": lambda: SavedRun.from_dict({"name": "m", "config": {"k": 3},
                                        "rows": _mixed_rows(40)}),
    "by hand": lambda: SavedRun("h", {"k": 3}, tuple(
        QuestionResult(f"q{i}", retrieved=tuple(Retrieved.from_dict(e) for e in _entries(i)),
                       metrics={"correct": i % 2 == 0, "hit@k": 1} if i % 2 else {"x": None})
        for i in range(12))),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(RUNS))
def test_metric_columns_equal_question_metric(kind):
    run = RUNS[kind]()
    # the uniform run takes the fast path (one shared index), the others the per-question one
    shared = _shared_index([q.metrics for q in run.questions])
    assert (shared is not None) == (kind == "uniform")
    names = list(dict.fromkeys(n for q in run.questions for n in q.metrics))
    assert metric_names(run.questions) == names
    columns = metric_columns(run.questions, [*names, "absent"])
    for name in [*names, "absent"]:
        expected = [np.nan if (v := q.metric(name)) is None else v for q in run.questions]
        np.testing.assert_array_equal(columns[name], np.array(expected, dtype=float))
        np.testing.assert_array_equal(run.metric_column(name), columns[name])
    assert not run.metric_column(names[0]).flags.writeable  # the cached column is shared


@pytest.mark.parametrize("kind", list(RUNS))
def test_metric_dicts_equal_per_question_dicts(kind):
    run = RUNS[kind]()
    expected = [{name: q.metric(name) for name in q.metrics} for q in run.questions]
    got = metric_dicts(run.questions)
    assert got == expected
    # the same types too: floats and None, never a bool or an int
    assert [list(map(type, d.values())) for d in got] == [
        list(map(type, d.values())) for d in expected
    ]


@pytest.mark.parametrize("kind", list(RUNS))
@pytest.mark.parametrize("k", [1, 3, 6, 10])
def test_top_ids_equal_ranked_entries(kind, k):
    run = RUNS[kind]()
    for q in run.questions:
        assert tuple(top_doc_ids(q, k)) == tuple(r.doc_id for r in q.ranked[:k])
        assert tuple(top_chunk_ids(q, k)) == tuple(r.chunk_id for r in q.ranked[:k])


@pytest.mark.parametrize("kind", list(RUNS))
def test_per_question_metrics_of_a_saved_run_equal_the_walk(kind):
    run = RUNS[kind]()
    got = PerQuestionMetrics.from_saved_run(run)
    # the values as built before the columns, and without the source run behind them
    walked = PerQuestionMetrics(
        run.name,
        {q.id: {name: q.metric(name) for name in q.metrics} for q in run.questions},
        run.path,
        {q.id: q.answerable for q in run.questions},
    )
    assert got == walked and got.source is run and walked.source is None
    assert got.metrics == walked.metrics
    ids = sorted(got.values)[::-1][:25]
    for a, b in [(got.columns(got.metrics, ids), walked.columns(walked.metrics, ids))]:
        assert a.keys() == b.keys()
        for name in a:
            np.testing.assert_array_equal(a[name], b[name])
    answerable = got.subset("answerable")
    assert answerable == walked.subset("answerable") and answerable.source is run


def test_pairing_a_saved_run_reads_the_same_arrays_as_the_walk():
    first, second = RUNS["uniform"](), RUNS["mixed"]()
    pair = pair_runs(PerQuestionMetrics.from_saved_run(first),
                     PerQuestionMetrics.from_saved_run(second))  # fmt: skip
    walk = [
        PerQuestionMetrics(r.name, {q.id: {n: q.metric(n) for n in q.metrics}
                                    for q in r.questions})
        for r in (first, second)
    ]  # fmt: skip
    plain = pair_runs(*walk)
    assert pair.ids == plain.ids and pair.metrics == plain.metrics
    for name in pair.metrics:
        np.testing.assert_array_equal(pair.a[name], plain.a[name])
        np.testing.assert_array_equal(pair.b[name], plain.b[name])
    ids, a, b = aligned_values(PerQuestionMetrics.from_saved_run(first), walk[1], "correct")
    assert ids == list(plain.ids)
    np.testing.assert_array_equal(a, plain.a["correct"])
    np.testing.assert_array_equal(b, plain.b["correct"])


@pytest.mark.parametrize("kind", list(RUNS))
def test_lazy_rows_equal_the_eager_dict(kind):
    run = RUNS[kind]()
    eager = PerQuestionMetrics.from_saved_run(run)
    lazy = PerQuestionMetrics.from_saved_run(run, lazy=True)
    assert type(eager.values) is dict and isinstance(lazy.values, QuestionRows)
    assert list(lazy.values) == list(eager.values) and len(lazy.values) == len(eager.values)
    assert lazy.values._rows is None  # the ids alone made no dict
    assert lazy.metrics == eager.metrics and "q1" in lazy.values and "x" not in lazy.values
    assert lazy == eager and dict(lazy.values) == eager.values
    assert repr(lazy.values) == repr(eager.values)


def test_judgments_get_equals_the_mapping_rule():
    from collections.abc import Mapping

    from ragaudit.data.saved_run import Judgments, RunSettings

    for mapping in (Judgments({"correct": True, "x": None}), RunSettings({"k": 3})):
        for key in (*mapping, "absent"):
            assert mapping.get(key) == Mapping.get(mapping, key)
            assert mapping.get(key, 7) == Mapping.get(mapping, key, 7)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gold_in_top_counts_what_sets_count(seed: int) -> None:
    """gold_in_top's kernels against sets made question by question (repeated documents,
    empty rankings, questions without gold, k beyond the ranking)."""
    import numpy as np

    from ragaudit.data.saved_run.table import rows_to_table
    from ragaudit.data.saved_run.view import gold_in_top

    rng = np.random.default_rng(seed)
    rows = []
    for i in range(60):
        docs = [f"d{d}" for d in rng.integers(0, 6, int(rng.integers(0, 8)))]
        gold = [f"d{d}" for d in rng.integers(0, 6, int(rng.integers(0, 3)))]
        retrieved = [{"chunk_id": f"{d}#{j}", "doc_id": d, "rank": j + 1} for j, d in
                     enumerate(docs)]  # fmt: skip
        rows.append({"id": f"q{i}", "gold_docs": gold, "retrieved": retrieved})
    table = rows_to_table(rows)
    for k in (1, 3, 10):
        counts = gold_in_top(table, k)
        assert counts is not None
        top = [{e["doc_id"] for e in row["retrieved"][:k]} for row in rows]
        assert counts[0].tolist() == [
            len(t & set(r["gold_docs"])) for t, r in zip(top, rows, strict=True)
        ]
        assert counts[1].tolist() == [len(t) for t in top]
        assert counts[2].tolist() == [len(r["gold_docs"]) for r in rows]
