"""TREC / JSONL / pandas readers and writers."""

from __future__ import annotations

import numpy as np
import pytest

from ragaudit.data import Qrels, Run
from ragaudit.data.formats import (
    load_arrays,
    qrels_from_dataframe,
    qrels_to_dataframe,
    read_jsonl_qrels,
    read_jsonl_run,
    read_qrels,
    read_run,
    read_run_columns,
    read_trec_qrels,
    read_trec_run,
    run_from_dataframe,
    run_to_dataframe,
    write_jsonl_qrels,
    write_jsonl_run,
    write_trec_qrels,
    write_trec_run,
)
from ragaudit.exceptions import FormatError, InputError


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_trec_run_sorts_by_score_then_id_descending(tmp_path):
    path = write(
        tmp_path,
        "run.txt",
        (
            "q1 Q0 a 1 1.0 t\nq1 Q0 c 2 1.0 t\nq1 Q0 b 3 2.0 t\nq1 Q0 d 4 1.0 t\n"
            "q2 Q0 x 1 -0.5 t\nq2 Q0 y 2 3e2 t\n"
        ),
    )
    run = read_trec_run(path)
    assert list(run) == ["q1", "q2"]
    assert run["q1"] == ["b", "d", "c", "a"]  # same rule as Run and trec_eval
    assert run["q2"] == ["y", "x"]
    assert run.scores("q2") == [300.0, -0.5]
    assert run.tied_groups == 1
    reference = Run({"q1": {"a": 1.0, "c": 1.0, "b": 2.0, "d": 1.0}, "q2": {"x": -0.5, "y": 300}})
    assert run.to_dict() == reference.to_dict()


def test_trec_run_given_order_and_interleaved_questions(tmp_path):
    path = write(
        tmp_path, "run.txt", "q2 Q0 a 1 1 t\nq1 Q0 b 1 1 t\nq2 Q0 c 2 5 t\nq1 Q0 d 2 1 t\n"
    )
    given = read_trec_run(path, order="given")
    assert given["q2"] == ["a", "c"] and given["q1"] == ["b", "d"]
    assert given.tied_groups == 1
    assert read_trec_run(path)["q2"] == ["c", "a"]


def test_small_blocks_give_the_same_columns(tmp_path):
    rng = np.random.default_rng(0)
    lines = [
        f"q{rng.integers(5)} Q0 d{rng.integers(1000)}x{i} {i} {rng.integers(3)}.5 t\n"
        for i in range(400)
    ]
    path = write(tmp_path, "run.txt", "".join(lines) + "\n\n")
    big = read_run_columns(path)
    small = read_run_columns(path, block_bytes=64)
    assert big.qids == small.qids
    np.testing.assert_array_equal(big.offsets, small.offsets)
    np.testing.assert_array_equal(big.scores, small.scores)
    np.testing.assert_array_equal(big.item_hash, small.item_hash)
    assert big.tied_groups == small.tied_groups


def test_blank_lines_crlf_and_missing_final_newline(tmp_path):
    path = write(tmp_path, "run.txt", "q1 Q0 a 1 2 t\r\n\r\n  \nq1\tQ0\tb 2 1 t")
    assert read_trec_run(path)["q1"] == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0\n",
            r"run\.txt:2: expected 6 whitespace-separated fields \(qid, Q0, docid, rank, score, "
            r"tag\), found 5",
        ),
        (
            "q1 Q0 a 1 1.0 t\n\nq1 Q0 b 2 high t\n",
            r"run\.txt:3: score: expected a number, found 'high'",
        ),
        ("q1 Q0 a 1 nan t\n", r"run\.txt:1: score: expected a number, found 'nan'"),
    ],
)
def test_trec_run_errors_name_file_line_and_field(tmp_path, text, message):
    with pytest.raises(FormatError, match=message):
        read_trec_run(write(tmp_path, "run.txt", text))


def test_error_line_numbers_survive_block_boundaries(tmp_path):
    text = "q1 Q0 a 1 1.0 t\n" * 50 + "q1 Q0 b 2\n"
    path = write(tmp_path, "run.txt", text)
    with pytest.raises(FormatError, match=r"run\.txt:51: expected 6"):
        read_run_columns(path, block_bytes=100)


def test_duplicates_error_or_first(tmp_path):
    path = write(
        tmp_path, "run.txt", "q1 Q0 a 1 1 t\nq1 Q0 b 2 3 t\nq1 Q0 a 3 5 t\nq2 Q0 a 1 1 t\n"
    )
    with pytest.raises(InputError, match=r"question 'q1': item 'a' appears more than once"):
        read_trec_run(path)
    run = read_trec_run(path, duplicates="first")
    assert run["q1"] == ["b", "a"]  # the first line's score (1) is kept
    assert run.scores("q1") == [3.0, 1.0]
    assert run["q2"] == ["a"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "q1 0 A\n",
            r"qrels\.txt:1: expected 4 whitespace-separated fields \(qid, iteration, "
            r"docid, grade\), found 3",
        ),
        ("q1 0 A 1\nq1 0 B x\n", r"qrels\.txt:2: grade: expected an integer, found 'x'"),
        ("q1 0 A 1.5\n", r"qrels\.txt:1: grade: expected an integer, found '1.5'"),
        ("q1 0 A -1\n", r"qrels\.txt:1: grade: expected a grade >= 0, found -1"),
    ],
)
def test_trec_qrels_errors(tmp_path, text, message):
    with pytest.raises(FormatError, match=message):
        read_trec_qrels(write(tmp_path, "qrels.txt", text))


def test_missing_file_is_a_format_error(tmp_path):
    with pytest.raises(FormatError, match=r"nope\.txt: expected an existing file, found nothing"):
        read_trec_run(tmp_path / "nope.txt")
    with pytest.raises(FormatError, match=r"nope\.jsonl: expected an existing file, found nothing"):
        read_qrels(tmp_path / "nope.jsonl")


def test_trec_round_trip(tmp_path):
    qrels = Qrels({"q1": {"A": 2, "B": 0}, "q2": {"C": 1}}, unit="chunk")
    write_trec_qrels(tmp_path / "q.txt", qrels)
    assert read_trec_qrels(tmp_path / "q.txt", unit="chunk").to_dict() == qrels.to_dict()
    run = Run({"q1": {"A": 0.25, "B": 0.75}, "q2": {"C": 1e-9}})
    write_trec_run(tmp_path / "r.txt", run, tag="mine")
    again = read_trec_run(tmp_path / "r.txt")
    assert again.to_dict() == run.to_dict()
    assert (tmp_path / "r.txt").read_text().splitlines()[0] == "q1 Q0 B 1 0.75 mine"
    unscored = Run({"q1": ["X", "Y", "Z"]})
    write_trec_run(tmp_path / "u.txt", unscored)
    assert read_trec_run(tmp_path / "u.txt")["q1"] == ["X", "Y", "Z"]


def test_trec_writer_rejects_ids_with_spaces(tmp_path):
    with pytest.raises(InputError, match=r"ids must be non-empty without whitespace, found 'a b'"):
        write_trec_run(tmp_path / "r.txt", Run({"q1": ["a b"]}))
    with pytest.raises(InputError, match=r"tag: expected a non-empty string without spaces"):
        write_trec_run(tmp_path / "r.txt", Run({"q1": ["a"]}), tag="my tag")


def test_jsonl_variants(tmp_path):
    pairs = write(
        tmp_path,
        "a.jsonl",
        '{"qid": "q1", "docid": "A", "score": 0.2}\n{"qid": "q1", "docid": "B", "score": 0.9}\n',
    )
    assert read_run(pairs)["q1"] == ["B", "A"]
    ranking = write(
        tmp_path,
        "b.jsonl",
        '{"id": "q1", "ranking": ["X", "Y"]}\n\n{"id": "q2", "ranking": [["Z", 1.0]]}\n',
    )
    run = read_jsonl_run(ranking)
    assert run["q1"] == ["X", "Y"] and run["q2"] == ["Z"]
    whole = write(tmp_path, "c.json", '{"q1": {"A": 1, "B": 0}}')
    assert read_qrels(whole).to_dict() == {"q1": {"A": 1, "B": 0}}
    qrels = write(tmp_path, "d.jsonl", '{"qid": "q1", "docid": "A", "grade": 2}\n')
    assert read_jsonl_qrels(qrels, unit="chunk").unit == "chunk"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("q.jsonl", '{"qid": "q1", "docid": "A"}\n', r"q\.jsonl:1: grade: expected a key 'grade'"),
        (
            "q.jsonl",
            '{"qid": "q1", "docid": "A", "grade": 1}\n{oops\n',
            r"q\.jsonl:2: invalid JSON",
        ),
        (
            "q.jsonl",
            '{"qid": "q1", "docid": "A", "grade": "high"}\n',
            r"q\.jsonl:1: grade: expected an integer, found 'high'",
        ),
        ("q.jsonl", "[1, 2]\n", r"q\.jsonl:1: expected a JSON object, found list"),
    ],
)
def test_jsonl_qrels_errors(tmp_path, name, text, message):
    with pytest.raises(FormatError, match=message):
        read_qrels(write(tmp_path, name, text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"qid": "q1", "docid": "A", "score": "x"}\n', r"r\.jsonl:1: score: expected a number"),
        (
            '{"id": "q1", "ranking": [["A"]]}\n',
            r"r\.jsonl:1: ranking: expected an id or an \[id, score\]",
        ),
        ('{"foo": 1}\n', r"r\.jsonl:1: expected keys 'qid', 'docid', 'score' or 'id', 'ranking'"),
        ('{"id": "q1", "ranking": ["A", "A"]}\n', r"r\.jsonl: .*item 'A' appears more than once"),
    ],
)
def test_jsonl_run_errors(tmp_path, text, message):
    with pytest.raises(FormatError, match=message):
        read_run(write(tmp_path, "r.jsonl", text))


def test_jsonl_round_trip(tmp_path):
    qrels = Qrels({"q1": {"A": 2}, "q2": {"B": 1}})
    write_jsonl_qrels(tmp_path / "q.jsonl", qrels)
    assert read_qrels(tmp_path / "q.jsonl").to_dict() == qrels.to_dict()
    run = Run({"q1": {"A": 0.5, "B": 0.7}})
    write_jsonl_run(tmp_path / "r.jsonl", run)
    assert read_run(tmp_path / "r.jsonl").to_dict() == run.to_dict()


def test_pandas_round_trip():
    qrels = Qrels({"q1": {"A": 2}, "q2": {"B": 1}})
    frame = qrels_to_dataframe(qrels)
    assert list(frame.columns) == ["qid", "docid", "grade"]
    assert qrels_from_dataframe(frame).to_dict() == qrels.to_dict()
    run = Run({"q1": {"A": 0.5, "B": 0.7}})
    assert run_from_dataframe(run_to_dataframe(run)).to_dict() == run.to_dict()
    ranks = run_to_dataframe(Run({"q1": ["X", "Y"]})).drop(columns="score")
    assert run_from_dataframe(ranks)["q1"] == ["X", "Y"]
    with pytest.raises(
        InputError, match=r"DataFrame: expected columns qid, docid, grade, missing grade"
    ):
        qrels_from_dataframe(frame.drop(columns="grade"))


def test_load_arrays_gives_columns_without_python_lists(tmp_path):
    write(tmp_path, "q.txt", "q1 0 A 1\n")
    write(tmp_path, "r.txt", "q1 Q0 B 1 1.0 t\nq1 Q0 A 2 2.0 t\nq2 Q0 C 1 1.0 t\n")
    qrels, columns = load_arrays(tmp_path / "q.txt", tmp_path / "r.txt")
    assert qrels.to_dict() == {"q1": {"A": 1}}
    assert columns.qids == ("q1", "q2")
    assert columns.offsets.tolist() == [0, 2, 3]
    assert columns.items.decode(columns.row_order) == ["A", "B", "C"]
    run = read_trec_run(tmp_path / "r.txt", unit="chunk")
    assert len(run) == 2 and list(run) == ["q1", "q2"]
    assert not run._built  # nothing materialised yet
    assert run.to_docs({"A": "D1", "B": "D1", "C": "D2"})["q1"] == ["D1"]


def test_chunk_map_tsv_and_json(tmp_path):
    from ragaudit.data.formats import read_chunk_map

    assert read_chunk_map(write(tmp_path, "m.tsv", "c1\tD1\n\nc2\tD2\n")) == {
        "c1": "D1",
        "c2": "D2",
    }
    assert read_chunk_map(write(tmp_path, "m.json", '{"c1": "D1"}')) == {"c1": "D1"}
    with pytest.raises(
        FormatError, match=r"m2\.json:1: expected a JSON object \{chunk_id: doc_id\}"
    ):
        read_chunk_map(write(tmp_path, "m2.json", '{"c1": 3}'))
