"""Golden sets in YAML, JSON, JSONL, CSV and a DataFrame, other tools' column names, --map.

Every file here is written by the test; expected values are the ones written into it.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.chunks import Chunk
from ragaudit.data.context_match import ContextIndex
from ragaudit.data.golden import (
    golden_from_dataframe,
    load_golden,
    sources_from_contexts,
)
from ragaudit.exceptions import FormatError, InputError

CORPUS = Path(__file__).parent.parent / "data" / "harness" / "corpus"

# Two questions, written out by hand in every layout below.
EXPECTED = [
    ("q1", "How many leave days?", "25 days.", ("leave-policy",), True, ("25 days",), ("n",)),
    ("q2", "Who owns the moon?", "", (), False, (), ()),
]


def fields(golden):
    return [
        (q.id, q.question, q.answer, q.sources, q.answerable, q.keywords, q.tags) for q in golden
    ]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


RECORDS = [
    {
        "id": "q1",
        "question": "How many leave days?",
        "answer": "25 days.",
        "sources": ["leave-policy"],
        "keywords": ["25 days"],
        "tags": ["n"],
    },
    {"id": "q2", "question": "Who owns the moon?", "answerable": False},
]


def test_every_file_layout_gives_the_same_questions(tmp_path):
    yaml_file = write(
        tmp_path,
        "g.yaml",
        "- id: q1\n  question: How many leave days?\n  answer: 25 days.\n"
        "  sources: [leave-policy]\n  keywords: [25 days]\n  tags: [n]\n"
        "- {id: q2, question: 'Who owns the moon?', answerable: false}\n",
    )
    jsonl = write(tmp_path, "g.jsonl", "".join(json.dumps(r) + "\n" for r in RECORDS))
    json_list = write(tmp_path, "g.json", json.dumps(RECORDS))
    json_wrapped = write(tmp_path, "w.json", json.dumps({"questions": RECORDS}))
    # A BOM, quoted commas, a JSON list cell, a pandas-style Python list cell, empty cells.
    csv_file = tmp_path / "g.csv"
    csv_file.write_bytes(
        "\ufeffid,question,answer,sources,answerable,keywords,tags\r\n"
        'q1,How many leave days?,25 days.,"[""leave-policy""]",true,'
        "\"['25 days']\",n\r\n"
        "q2,Who owns the moon?,,,false,,\r\n".encode()
    )
    for path in (yaml_file, jsonl, json_list, json_wrapped, csv_file):
        golden = load_golden(path, doc_ids={"leave-policy", "x"})
        assert fields(golden) == EXPECTED, path.name
        assert golden.qrels().to_dict() == {"q1": {"leave-policy": 1}}
    assert load_golden(jsonl)[0].line == 1 and load_golden(jsonl)[1].line == 2
    assert load_golden(csv_file)[1].line == 3


def test_dataframe_with_nan_and_array_cells():
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    frame = pd.DataFrame(
        {
            "input": ["How many leave days?", "Who owns the moon?"],
            "expected_output": ["25 days.", np.nan],
            "doc_ids": [np.array(["leave-policy"]), None],
            "answerable": [True, False],
        }
    )
    golden = golden_from_dataframe(frame)
    assert [(q.id, q.question, q.answer, q.sources, q.answerable) for q in golden] == [
        ("q1", "How many leave days?", "25 days.", ("leave-policy",), True),
        ("q2", "Who owns the moon?", "", (), False),
    ]
    with pytest.raises(FormatError, match=r"^DataFrame:2: sources: question 'q2': an unans"):
        golden_from_dataframe(frame.assign(doc_ids=[["a"], ["b"]]))
    with pytest.raises(InputError, match="expected a pandas DataFrame, found list"):
        golden_from_dataframe([1, 2])


def test_ragas_and_deepeval_column_names(tmp_path):
    ragas = write(
        tmp_path,
        "ragas.jsonl",
        json.dumps({"user_input": "Q?", "reference": "A.", "reference_context_ids": ["d1"]}) + "\n",
    )
    deepeval = write(
        tmp_path,
        "deepeval.json",
        json.dumps([{"input": "Q?", "expected_output": "A.", "doc_ids": ["d1"]}]),
    )
    for path in (ragas, deepeval):
        assert fields(load_golden(path)) == [("q1", "Q?", "A.", ("d1",), True, (), ())]


def test_reference_contexts_give_the_sources_through_the_corpus():
    chunks = [
        Chunk("c1", "leave", 0, "Full-time staff receive 25 days of annual leave per year."),
        Chunk("c2", "it", 0, "Laptops are replaced every three years."),
    ]
    golden = load_golden_records(
        [
            {
                "user_input": "Leave?",
                "reference": "25 days.",
                "reference_contexts": ["Full-time staff receive 25 days of annual leave per year."],
            },
            {
                "user_input": "Laptops?",
                "reference": "3 years.",
                # another chunker's cut: 5 of its 6 tokens are in c2 (5/6 >= 0.5)
                "reference_contexts": ["laptops are replaced every three"],
            },
        ]
    )
    resolved = sources_from_contexts(golden, ContextIndex(chunks))
    assert [q.sources for q in resolved] == [("leave",), ("it",)]
    bad = load_golden_records(
        [{"user_input": "Q?", "reference": "A.", "reference_contexts": ["The canteen is shut."]}]
    )
    with pytest.raises(FormatError, match=r"reference_contexts: question 'q1': none of its 1 ref"):
        sources_from_contexts(bad, ContextIndex(chunks))


def load_golden_records(records):
    from ragaudit.data.golden import golden_from_records

    return golden_from_records([(i + 1, r) for i, r in enumerate(records)], path="t.jsonl")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "g.jsonl",
            '{"question": "A?", "answer": "a", "sources": ["d"]}\n{"question": "B?", answer}\n',
            r"g\.jsonl:2: invalid JSON",
        ),
        (
            "g.jsonl",
            '{"question": "A?", "answer": "a", "sources": "d"}\n',
            r"g\.jsonl:1: sources: question 'q1': expected a list of strings, found a string",
        ),
        (
            "g.json",
            '[{"question": "A?", "answer": "a", "sources": ["d"], "answerable": "yes"}]',
            r"g\.json:1: answerable: question 'q1': expected a boolean, found a string 'yes'",
        ),
        (
            "g.csv",
            "question,answer,sources\nA?,a,d\nB?,b\n",
            r"g\.csv:3: expected 3 cells \(one per header column\), found 2",
        ),
        (
            "g.csv",
            "question,answer,sources\nA?,a,d\nB?,,d\n",
            r"g\.csv:3: answer: question 'q2': missing required field",
        ),
        (
            "g.csv",
            "question,answer,sources,answerable\nA?,a,d,maybe\n",
            r"g\.csv:2: answerable: question 'q1': expected a boolean, found a string 'maybe'",
        ),
        ("g.csv", "question,question\nA?,B?\n", r"g\.csv:1: column 'question' appears twice"),
        ("g.csv", "", r"g\.csv: expected a header line naming the columns"),
        (
            "g.jsonl",
            '{"id": "a", "question": "A?", "answer": "a", "sources": ["d"]}\n'
            '{"id": "a", "question": "B?", "answer": "b", "sources": ["d"]}\n',
            r"g\.jsonl:2: id: duplicate question id 'a' \(first used on line 1\)",
        ),
        (
            "g.jsonl",
            '{"question": "A?", "answer": "a", "ground_truth": "b", "sources": ["d"]}\n',
            r"g\.jsonl: answer: columns 'answer' and 'ground_truth' both name the answer; "
            r"pass --map answer=answer",
        ),
        (
            "g.jsonl",
            '{"prompt": "A?", "gold": "a"}\n',
            r"^g\.jsonl:1: question: unrecognised golden-set layout: expected a question column, "
            r"found columns prompt, gold; accepted names: id: id/question_id/qid/query_id; "
            r"question: question/user_input/input; answer: answer/ground_truth/reference/"
            r"expected_output; sources: sources/reference_context_ids/doc_ids; ",
        ),
    ],
)
def test_malformed_files_give_one_line_errors(tmp_path, monkeypatch, name, text, message):
    monkeypatch.chdir(tmp_path)
    Path(name).write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match=message):
        load_golden(name)


def run_cli(tmp_path, golden, *extra):
    args = ["run", "--corpus", str(CORPUS), "--golden", str(golden), "--k", "2", "--no-timing"]
    return CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out"), *extra])


def test_run_reads_a_csv_golden_set_with_map(tmp_path):
    golden = write(
        tmp_path,
        "g.csv",
        "prompt,gold,docs\n"
        "How many days of annual leave does a full-time employee receive?,25 days.,leave-policy\n"
        "How often are laptops replaced?,Every 3 years.,it-handbook\n",
    )
    refused = run_cli(tmp_path, golden)
    assert refused.exit_code == 2
    assert refused.output.startswith(
        f"ragaudit: error: {golden}:1: question: unrecognised golden-set layout: expected a "
        "question column, found columns prompt, gold, docs; accepted names: "
    )
    assert len(refused.output.splitlines()) == 1
    result = run_cli(
        tmp_path,
        golden,
        "--map",
        "question=prompt",
        "--map",
        "answer=gold",
        "--map",
        "sources=docs",
    )
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "out" / "k2_cs800.json").read_text(encoding="utf-8"))
    assert [(r["id"], r["gold_docs"], r["reference_answer"]) for r in saved["rows"]] == [
        ("q1", ["leave-policy"], "25 days."),
        ("q2", ["it-handbook"], "Every 3 years."),
    ]
    bad_map = run_cli(tmp_path, golden, "--map", "colour=prompt")
    assert bad_map.exit_code == 2
    assert bad_map.output.startswith("ragaudit: error: --map: expected FIELD=COLUMN with FIELD")
    missing = run_cli(tmp_path, golden, "--map", "question=nope")
    assert missing.exit_code == 2
    assert missing.output == (
        f"ragaudit: error: {golden}: question: --map question=nope: expected a column of the "
        "file, found columns prompt, gold, docs\n"
    )


def test_run_with_a_malformed_jsonl_golden_set_exits_2(tmp_path):
    golden = write(tmp_path, "g.jsonl", '{"question": "A?", "answer": "a", "sources": ["nope"]}\n')
    result = run_cli(tmp_path, golden)
    assert result.exit_code == 2
    assert result.output.startswith(
        f"ragaudit: error: {golden}:1: sources[0]: question 'q1': 'nope' names no document"
    )


def test_golden_set_to_pandas_round_trips_through_the_dataframe_reader(tmp_path):
    pytest.importorskip("pandas")
    path = write(tmp_path, "g.jsonl", "".join(json.dumps(r) + "\n" for r in RECORDS))
    frame = load_golden(path).to_pandas()
    assert list(frame.index) == ["q1", "q2"]
    assert fields(golden_from_dataframe(frame.reset_index())) == EXPECTED


def test_golden_set_through_pandas_csv_with_its_index_and_back(tmp_path):
    # Regression: pandas' DataFrame.to_csv writes its index as an unnamed first column, which
    # the CSV reader refused ("expected a column name, found an empty one"); and a frame read
    # back with pd.read_csv holds list cells as the text to_csv wrote ("['leave-policy']"),
    # which golden_from_dataframe refused ("expected a list of strings, found a string").
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "id": ["q1", "q2"],
            "user_input": ["How many leave days?", "Who owns the moon?"],
            "reference": ["25 days.", None],
            "reference_context_ids": [["leave-policy"], []],
            "answerable": [True, False],
            "keywords": [["25 days"], []],
            "tags": [["n"], []],
        }
    )
    path = tmp_path / "g.csv"
    frame.to_csv(path)  # index=True: the header starts with an empty column name
    assert path.read_text(encoding="utf-8").splitlines()[0].startswith(",id,user_input,")
    assert fields(load_golden(path, doc_ids={"leave-policy"})) == EXPECTED
    assert fields(golden_from_dataframe(pd.read_csv(path))) == EXPECTED
    assert fields(golden_from_dataframe(pd.read_csv(path, index_col=0))) == EXPECTED
    # only pandas' index column may be unnamed
    bad = write(tmp_path, "b.csv", "question,,answer\nA?,x,a\n")
    with pytest.raises(FormatError, match=r"b\.csv:1: expected a column name, found an empty "
                       r"one \(column 2\)"):  # fmt: skip
        load_golden(bad)


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("g.jsonl", '{"question": "A?", "answer": "a", "sources": ["d"]}\n{"question"\n', ":2: "),
        ("g.json", '[{"question": "A?", "answer": 3, "sources": ["d"]}]', ":1: answer: "),
        ("g.csv", "question,answer,sources\nA?,a,d\nB?,b,\n", ":3: sources: "),
        ("g.yaml", "- id: a\n  question: A\n  answer: a\n  sources: d\n", ":4: sources: "),
    ],
)
def test_malformed_golden_sets_exit_2_with_one_line(tmp_path, name, text, where):
    path = write(tmp_path, name, text)
    result = CliRunner().invoke(main, ["export", str(path), "--to", "trec-qrels"])
    assert result.exit_code == 2
    assert len(result.output.splitlines()) == 1
    assert result.output.startswith(f"ragaudit: error: {path}{where}"), result.output
