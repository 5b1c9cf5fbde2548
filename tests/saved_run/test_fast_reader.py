"""The msgspec reader (``data/saved_run/fast.py``) loads every file into the very model the
standard-library reader builds, or steps aside (returns None) so that the latter words the
problem.

The oracle is the standard-library path with the fast reader turned off
(``RAGAUDIT_READER=stdlib``) and the whole-document reader (``parse_saved_run``).  Models are
compared strictly: the JSON of the run (1, 1.0 and true differ there) and the type of every
field and retrieved column.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragaudit.data.formats._source import read_json_file
from ragaudit.data.records import load_saved_run, parse_saved_run
from ragaudit.data.saved_run import fast
from ragaudit.data.saved_run.fast import fast_saved_run, reader_name
from ragaudit.data.saved_run.load import stream_saved_run
from ragaudit.exceptions import FormatError

from .conftest import model_shape

msgspec = pytest.importorskip("msgspec")
TESTS = Path(__file__).parents[1]
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _stdlib(path: Path, monkeypatch) -> object:
    with monkeypatch.context() as patch:
        patch.setattr(fast, "ENABLED", False)
        try:
            return model_shape(load_saved_run(path))
        except FormatError as exc:
            return str(exc)


def _loaded(path: Path) -> object:
    try:
        return model_shape(load_saved_run(path))
    except FormatError as exc:
        return str(exc)


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
PLAIN = st.text(st.characters(codec="ascii", blacklist_characters='"\\:'), max_size=6)
NUMBER = st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False))


def _row(text: st.SearchStrategy[str], extra: bool) -> st.SearchStrategy[dict]:
    entry = st.fixed_dictionaries(
        {"chunk_id": text, "doc_id": text},
        optional={"score": st.one_of(st.none(), NUMBER), "rank": st.integers(1, 30)},
    )
    optional = {
        "question": text,
        "answerable": st.booleans(),
        "reference_answer": st.one_of(st.none(), text),
        "keywords": st.lists(text, max_size=2),
        "gold_docs": st.lists(text, max_size=2),
        "tags": st.one_of(st.none(), st.lists(text, max_size=2)),
        "context_ids": st.lists(text, max_size=2),
        "answer": st.one_of(st.none(), text),
        "abstained": st.one_of(st.none(), st.booleans()),
        "citations": st.one_of(st.none(), st.lists(st.integers(0, 3), max_size=2)),
        "judges": st.fixed_dictionaries(
            {},
            optional={
                "correct": st.sampled_from([True, False, None, 0, 1]),
                "faithfulness": st.one_of(st.none(), st.floats(0, 1)),
                "judge_error": st.one_of(st.none(), text),
                "reasons": st.dictionaries(text, text, max_size=2),
            },
        ),
        "latency_ms": st.one_of(st.none(), st.dictionaries(text, st.one_of(st.none(), NUMBER))),
        "generation_error": st.one_of(st.none(), text),
        "error": st.one_of(st.none(), text),
        "usage": st.one_of(st.none(), st.dictionaries(text, st.integers(0, 9), max_size=2)),
        "metrics": st.dictionaries(
            st.sampled_from(["recall@k", "hit@k", "correct", "rouge_l", "ndcg@10", "mrr"]),
            st.one_of(st.none(), st.booleans(), st.floats(0, 1), st.integers(0, 1)),
        ),
    }
    if extra:
        optional["x-extra"] = st.one_of(st.none(), st.integers(), st.lists(text, max_size=2))
    return st.fixed_dictionaries(
        {"id": text.filter(bool), "retrieved": st.lists(entry, max_size=4)}, optional=optional
    )


def _document(rows: list[dict], k: int = 2) -> dict:
    unique = list({row["id"]: row for row in rows}.values())
    for row in unique:
        row["context_ids"] = row.get("context_ids", [])[:k]
    return {"format": "ragaudit.run", "format_version": 1, "name": "r",
            "config": {"k": k, "retrieval_depth": 5}, "rows": unique,
            "summary": {"n_generation_errors": 0}}  # fmt: skip


@SETTINGS
@given(
    rows=st.lists(_row(PLAIN, extra=False), max_size=6),
    indent=st.sampled_from([None, 0, 1, 2, 4]),
    slice_bytes=st.integers(1, 400),
)
def test_plain_rows_are_read_fast_into_the_same_model(
    tmp_path, monkeypatch, rows, indent, slice_bytes
):
    """Rows with no unknown key and no quote or colon in their strings: the fast reader
    vouches for every valid one (it returns a run) and builds the standard model."""
    monkeypatch.setattr(fast, "SLICE", slice_bytes)  # many slices: cuts between most rows
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_document(rows), indent=indent), encoding="utf-8")
    run, expected = fast_saved_run(path), _stdlib(path, monkeypatch)
    if isinstance(expected, str):  # a metric out of its range: refused, in the standard words
        assert run is None
        return
    assert run is not None
    assert model_shape(run) == expected
    assert model_shape(run) == model_shape(parse_saved_run(read_json_file(path), str(path)))


@SETTINGS
@given(
    rows=st.lists(_row(TEXT, extra=True), max_size=5),
    indent=st.sampled_from([None, 1, 2]),
    ascii_only=st.booleans(),
    slice_bytes=st.integers(1, 300),
)
def test_any_rows_load_into_the_same_model_or_error(
    tmp_path, monkeypatch, rows, indent, ascii_only, slice_bytes
):
    """Unicode ids, extra keys, nulls, empty lists, quotes and colons in strings: the model
    (or the error) is the standard-library path's."""
    monkeypatch.setattr(fast, "SLICE", slice_bytes)
    path = tmp_path / "run.json"
    text = json.dumps(_document(rows), indent=indent, ensure_ascii=ascii_only)
    path.write_text(text, encoding="utf-8")
    assert _loaded(path) == _stdlib(path, monkeypatch)


BREAKS = [
    ('"answer": "a"', '"answer": "a", "answer": "b"'),  # a key written twice in a row
    ('"recall@k": 1.0', '"recall@k": 1.0, "recall@k": 0.5'),  # ... in its metrics
    ('"chunk_id": "D#0"', '"chunk_id": "D#0", "chunk_id": "D#1"'),  # ... in a retrieved entry
    ('"correct": true', '"correct": true, "correct": false'),  # ... in its judges
    ('"name": "r"', '"name": "r", "name": "s"'),  # ... at the top level
    ('"answer": "a"', '"answer": "\\ud800"'),  # a lone surrogate
    ('"answer": "a"', '"answer" : "a"'),  # a space before a colon (allowed)
    ('"answer": "a"', '"answer": "a\\": 1"'),  # a quote and a colon in a string (allowed)
    ('"rank": 1', '"rank": null'),  # the schema: an integer
    ('"rank": 1', '"rank": 0'),
    ('"score": 2.5', '"score": NaN'),
    ('"score": 2.5', '"score": 1e400'),
    ('"score": 2.5', '"score": true'),
    ('"recall@k": 1.0', '"recall@k": 3.0'),  # out of its range
    ('"correct": true', '"correct": 2'),  # a verdict out of its range
    ('"id": "q1"', '"id": "q0"'),  # a repeated id
    ('"id": "q1"', '"id": ""'),
    ('"k": 2', '"k": 0'),
    ('"context_ids": [', '"context_ids": ["E#0", "F#0", '),  # more than k
    ('"answer": "a"', '"answer": "a", "x": {"y": 1}'),  # an unknown key (kept in extra)
    ('"abstained": false', '"abstained": 0'),
    ('"tokens": 3', '"tokens": {"in": 1, "in": 2}'),  # a key written twice, deeper
    ('"rows": [', '"rows": [1, '),
    ("}\n  ]", "}\n  ],\n  \"rows\": []"),  # rows written twice
]  # fmt: skip


def _row_text(i: int) -> dict:
    return {
        "id": f"q{i}", "question": "Où?", "answerable": True, "keywords": ["k"],
        "gold_docs": ["D"], "retrieved": [{"chunk_id": "D#0", "doc_id": "D", "score": 2.5,
                                           "rank": 1}],
        "context_ids": ["D#0"], "answer": "a", "abstained": False,
        "judges": {"correct": True}, "usage": {"tokens": 3},
        "metrics": {"recall@k": 1.0, "correct": True},
    }  # fmt: skip


@pytest.mark.parametrize(("old", "new"), BREAKS)
def test_each_break_gives_the_standard_model_or_message(tmp_path, monkeypatch, old, new):
    doc = _document([_row_text(i) for i in range(3)])
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    assert old in text
    path = tmp_path / "run.json"
    path.write_bytes(text.replace(old, new, 1).encode("utf-8"))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert _loaded(path) == _stdlib(path, monkeypatch)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # never written


def test_a_key_written_twice_is_refused_with_the_standard_message(tmp_path):
    doc = _document([_row_text(0)])
    text = json.dumps(doc, indent=2).replace('"recall@k": 1.0', '"recall@k": 1.0, "recall@k": 9')
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    assert fast_saved_run(path) is None
    with pytest.raises(FormatError, match=r"run\.json:\d+: recall@k: expected each key once"):
        load_saved_run(path)


def test_a_lone_surrogate_is_refused_with_the_standard_message(tmp_path):
    path = tmp_path / "run.json"
    text = json.dumps(_document([_row_text(0)]), indent=2).replace('"a"', '"q\\ud800x"')
    path.write_text(text, encoding="utf-8")
    assert fast_saved_run(path) is None
    with pytest.raises(FormatError, match=r"run\.json:\d+: .*lone surrogate \\ud800"):
        load_saved_run(path)


def test_show_builds_only_its_questions(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_document([_row_text(i) for i in range(4)]), indent=1))
    run = fast_saved_run(path, questions={"q2"})
    assert run is not None and [q.id for q in run.questions] == ["q2"]


def test_the_switch_and_the_environment_turn_it_off(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_document([_row_text(0)])), encoding="utf-8")
    assert fast_saved_run(path) is not None
    assert reader_name() == f"msgspec {msgspec.__version__}"
    monkeypatch.setenv(fast.READER_ENV, "stdlib")
    assert fast_saved_run(path) is None and reader_name() == "stdlib json"
    assert stream_saved_run(path) is not None


FIXTURES = sorted(
    path
    for path in TESTS.rglob("*.json")
    if '"format": "ragaudit.run"' in path.read_text(encoding="utf-8", errors="replace")
)


def test_the_fixtures_are_found():
    assert len(FIXTURES) >= 3, FIXTURES


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_saved_run_fixture_loads_into_the_same_model(path, monkeypatch):
    assert _loaded(path) == _stdlib(path, monkeypatch)


@pytest.mark.slow
def test_the_demos_runs_are_read_fast_into_the_same_model(tmp_path, monkeypatch):
    from ragaudit.pipeline.bundled import SEED, benchmark_paths, load_benchmark, run_configurations

    with benchmark_paths() as (corpus, golden):
        bench = load_benchmark(corpus, golden)
        runs = list(run_configurations(bench, tmp_path, seed=SEED))
    assert runs
    for run in runs:
        path = Path(run.path)
        assert fast_saved_run(path) is not None, path
        assert _loaded(path) == _stdlib(path, monkeypatch)


@pytest.mark.parametrize("indent", [None, 1, 2, "\t"])
@pytest.mark.parametrize("n", [0, 1, 5])
def test_objects_after_the_rows_do_not_end_them(tmp_path, monkeypatch, indent, n):
    """The rows' end is found after the last row, not in a summary or an extra key whose
    objects sit at the rows' indentation."""
    monkeypatch.setattr(fast, "SLICE", 1)
    doc = _document([_row_text(i) for i in range(n)])
    doc["summary"] = {"judge_errors": {"a": 1}, "n_judge_errors": 1, "z": {"b": 2}}
    doc["extra_key"] = [{"a": None}, {"b": [{"c": 1}]}]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc, indent=indent), encoding="utf-8")
    run = fast_saved_run(path)
    assert run is not None and len(run.questions) == n
    assert model_shape(run) == _stdlib(path, monkeypatch)


@pytest.mark.parametrize("slice_bytes", [1, 1 << 19])
def test_rows_longer_than_the_buffer_are_read_whole(tmp_path, monkeypatch, slice_bytes):
    """A row of about 1 MB between short ones: the slice buffer grows past it (more than
    one read step, fast._STEP = 64 KB), and the rows after it are read on."""
    monkeypatch.setattr(fast, "SLICE", slice_bytes)
    rows = [_row_text(i) for i in range(5)]
    rows[2]["answer"] = "word " * 200_000
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_document(rows), indent=2), encoding="utf-8")
    run = fast_saved_run(path)
    assert run is not None and [q.id for q in run.questions] == [f"q{i}" for i in range(5)]
    assert len(run.questions[2].answer) == 1_000_000
    assert model_shape(run) == _stdlib(path, monkeypatch)
