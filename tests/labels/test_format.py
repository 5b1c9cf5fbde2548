"""The chunk-label file: round trip, Qrels conversion, chunking checks, error messages."""

from __future__ import annotations

import pytest

from ragaudit.exceptions import FormatError, InputError
from ragaudit.labels.format import (
    Chunking,
    ChunkLabels,
    QuestionLabels,
    dump_chunk_labels,
    load_chunk_labels,
    save_chunk_labels,
)


def sample():
    return ChunkLabels(
        Chunking("fixed", 800, 100, "abc123"),
        "heuristic",
        {
            "q1": QuestionLabels("Q1?", ["D"], 4, ["c2"], ["c1", "c3"], "heuristic"),
            "q2": QuestionLabels(
                "Q2?", ["E"], 2, [], [], "human", complete=False, graded={"e0": 1}
            ),
        },
    )


def test_round_trip_keeps_every_field(tmp_path):
    path = tmp_path / "labels.yaml"
    save_chunk_labels(sample(), path)
    loaded = load_chunk_labels(path)
    assert loaded.to_dict() == sample().to_dict()
    assert loaded.path == str(path)
    text = path.read_text()
    assert text.startswith("format: ragaudit.chunk_labels\nversion: 1\nchunking:\n")
    assert dump_chunk_labels(loaded) == text  # deterministic


def test_to_qrels_grades_answer_2_supporting_1_and_skips_incomplete():
    qrels = sample().to_qrels()
    assert qrels.unit == "chunk"
    assert qrels.to_dict() == {"q1": {"c1": 1, "c3": 1, "c2": 2}}


def test_labels_for_another_chunking_are_an_error_that_says_so():
    labels = sample()
    labels.check_chunking({"chunker": "fixed", "chunk_size": 800, "chunk_overlap": 100})
    with pytest.raises(
        InputError,
        match=r"made for chunker=fixed, chunk_size=800, "
        r"chunk_overlap=100 but the run uses chunker=fixed, chunk_size=400, "
        r"chunk_overlap=50.*--chunk-size 400 --chunk-overlap 50",
    ):
        labels.check_chunking({"chunker": "fixed", "chunk_size": 400, "chunk_overlap": 50})
    with pytest.raises(InputError, match="made for a different corpus"):
        labels.check_chunking({"chunk_size": 800, "corpus_sha256": "zzz"})


def test_load_with_expect_checks_the_chunking(tmp_path):
    path = tmp_path / "labels.yaml"
    save_chunk_labels(sample(), path)
    with pytest.raises(InputError, match=r"labels.yaml: made for .*chunk_size=800"):
        load_chunk_labels(path, expect={"chunk_size": 300, "chunk_overlap": 100})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("format: other\n", r"format: expected 'ragaudit.chunk_labels', found 'other'"),
        ("format: ragaudit.chunk_labels\nversion: 9\n", r"version: expected version 1, found 9"),
        ("format: ragaudit.chunk_labels\nversion: 1\n", r"chunking: expected a mapping"),
        ("a: [1\n", r"bad\.yaml:2: invalid YAML: expected ',' or ']'"),
        (
            "format: ragaudit.chunk_labels\nversion: 1\n"
            "chunking: {chunker: fixed, chunk_size: 8, chunk_overlap: 1}\n"
            "questions:\n  q1:\n    n_candidate_chunks: 2\n  q2:\n    answer_chunks: 5\n",
            r":7: questions.q2.answer_chunks: expected a list of chunk ids, found 5",
        ),
        (
            "format: ragaudit.chunk_labels\nversion: 1\n"
            "chunking: {chunker: fixed, chunk_size: 8, chunk_overlap: 1}\n"
            "questions:\n  q1:\n    n_candidate_chunks: -1\n",
            r":5: questions.q1.n_candidate_chunks: expected an integer >= 0, found -1",
        ),
    ],
)
def test_format_errors_name_file_line_and_field(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(FormatError, match=message) as info:
        load_chunk_labels(path)
    assert str(info.value).startswith(str(path))


def test_missing_file_says_how_to_make_one(tmp_path):
    with pytest.raises(
        InputError,
        match="expected an existing file, found nothing at this path; "
        "build one with ragaudit labels build",
    ):
        load_chunk_labels(tmp_path / "nope.yaml")
