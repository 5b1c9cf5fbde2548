"""JSON and Parquet give the same model of a saved run, and `ragaudit convert` is lossless.

Replaces the agreement tests of the msgspec and standard-library JSON readers (one JSON
reader is left).  The oracle of the Parquet reader is the JSON reader: a run read from JSON,
written as Parquet and read back must be the same model, compared strictly (the JSON of the
run, where ``1``, ``1.0`` and ``true`` differ, and the type of every field and retrieved
column: :func:`.conftest.model_shape`).  A run the JSON reader refuses is not converted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragaudit.cli import main as cli
from ragaudit.data.records import load_saved_run, write_saved_run
from ragaudit.exceptions import FormatError

from .conftest import model_shape

TESTS = Path(__file__).parents[1]
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _shape_without_path(run) -> list:
    return model_shape(run.replace(path=None))


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
@given(rows=st.lists(_row(TEXT, extra=True), max_size=5), indent=st.sampled_from([None, 2]))
def test_json_and_parquet_give_the_same_model(tmp_path, rows, indent):
    path = tmp_path / "run.json"
    text = json.dumps(_document(rows), indent=indent, ensure_ascii=False)
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        from_json = load_saved_run(path)
    except FormatError:
        return  # refused: nothing to convert (the bad-input tables hold both formats)
    target = tmp_path / "run.parquet"
    written = write_saved_run(target, from_json)
    assert _shape_without_path(load_saved_run(target)) == _shape_without_path(from_json)
    assert _shape_without_path(written) == _shape_without_path(from_json)


FIXTURES = sorted(
    path
    for path in TESTS.rglob("*.json")
    if '"format": "ragaudit.run"' in path.read_text(encoding="utf-8", errors="replace")
)


def test_the_fixtures_are_found():
    assert len(FIXTURES) >= 3, FIXTURES


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(TESTS)))
def test_convert_round_trips_every_saved_run_fixture(path, tmp_path):
    """JSON -> Parquet -> JSON with `ragaudit convert`: the Parquet file reads as the model
    of the fixture, and the JSON written back is that model's document, value for value
    and type for type (``json.dumps`` tells 1 from 1.0 and true)."""
    parquet, back = tmp_path / "run.parquet", tmp_path / "back.json"
    runner = CliRunner()
    try:
        load_saved_run(path)
    except FormatError as refused:  # a bad fixture: refused as every command refuses it
        result = runner.invoke(cli, ["convert", str(path), str(parquet)])
        assert (result.exit_code, result.output) == (2, f"ragaudit: error: {refused}\n")
        assert not parquet.exists()
        return
    for source, target in ((path, parquet), (parquet, back)):
        result = runner.invoke(cli, ["convert", str(source), str(target)])
        assert result.exit_code == 0, result.output
    original = load_saved_run(path)
    assert _shape_without_path(load_saved_run(parquet)) == _shape_without_path(original)
    document = json.loads(back.read_text(encoding="utf-8"))
    assert json.dumps(document, sort_keys=True) == json.dumps(original.to_dict(), sort_keys=True)


def test_convert_refuses_to_replace_a_file(tmp_path):
    path = FIXTURES[0]
    target = tmp_path / "run.parquet"
    target.write_bytes(b"keep")
    result = CliRunner().invoke(cli, ["convert", str(path), str(target)])
    assert result.exit_code == 2 and "exists; choose a new path" in result.output
    assert target.read_bytes() == b"keep"
    result = CliRunner().invoke(cli, ["convert", str(path), str(path)])
    assert result.exit_code == 2 and "not an input" in result.output
