"""Bad input through every reader ends in one line and exit 2, or in the right number.

One row per case and per reader (issue 10's reader edges).  An error row gives the message the
command must print (it names the file, the line when there is one, and the field); a value row
gives the mean that a correct reading produces, worked out by hand.  Every row asserts exit 2
(or 0 for a value row) and that no traceback reaches the user.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

HARNESS = Path(__file__).parent.parent / "data" / "harness"
BOM = b"\xef\xbb\xbf"
GOOD_RUN = b"q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 c 1 1.0 t\n"
GOOD_QRELS = b"q1 0 a 1\nq2 0 c 1\n"
DEEP = 100_000
CHUNK_LABELS_HEAD = b"format: ragaudit.chunk_labels\nversion: 1\n"
STATS = Path(__file__).parent.parent / "data" / "stats"
SAVED_RUN_HEAD = b'{"format": "ragaudit.run", "format_version": 1, "name": "r", '
BOMB = b'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + b"".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n".encode()
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


@dataclass(frozen=True)
class Case:
    """One bad (or edge) input: which command reads it, the file, and the outcome."""

    id: str
    command: str  # "run" (evaluate --run), "qrels", "chunk-map", "labels" (agreement),
    # "chunk-labels" (funnel --labels), "golden", "saved-run" (import), "human" (calibrate)
    name: str
    content: bytes
    message: str | None = None  # regex of the one-line error
    mrr: float | None = None  # the expected mean reciprocal rank (value rows)


CASES = [
    # TREC run (evaluate --run)
    Case("run-bom", "run", "run.txt", BOM + GOOD_RUN, mrr=1.0),
    Case(
        "run-nan",
        "run",
        "run.txt",
        b"q1 Q0 a 1 nan t\n",
        r"run\.txt:1: score: expected a number, found 'nan'",
    ),
    Case(
        "run-inf",
        "run",
        "run.txt",
        GOOD_RUN + b"q2 Q0 d 2 -inf t\n",
        r"run\.txt:4: score: expected a number, found '-inf'",
    ),
    Case(
        "run-overflow",
        "run",
        "run.txt",
        b"q1 Q0 a 1 1e999 t\n",
        r"run\.txt:1: score: expected a number, found '1e999'",
    ),
    Case(
        "run-latin1-qid",
        "run",
        "run.txt",
        GOOD_RUN + b"q\xe91 Q0 a 1 1.0 t\n",
        r"run\.txt:4: qid: expected UTF-8 text, found 'q\\\\xe91'",
    ),
    Case(
        "run-latin1-docid",
        "run",
        "run.txt",
        b"q1 Q0 caf\xe9 1 1.0 t\n",
        r"run\.txt:1: docid: expected UTF-8 text",
    ),
    Case(
        "run-fields",
        "run",
        "run.txt",
        GOOD_RUN + b"q1 Q0 z 3 0.5\n",
        r"run\.txt:4: expected 6 whitespace-separated fields .*found 5",
    ),
    # TREC qrels (evaluate --qrels)
    Case("qrels-bom", "qrels", "qrels.txt", BOM + GOOD_QRELS, mrr=1.0),
    Case(
        "qrels-latin1",
        "qrels",
        "qrels.txt",
        GOOD_QRELS + b"q2 0 \xff 1\n",
        r"qrels\.txt:3: docid: expected UTF-8 text",
    ),
    Case(
        "qrels-grade-huge",
        "qrels",
        "qrels.txt",
        b"q1 0 a 99999999999999999999999\n",
        r"qrels\.txt:1: grade: expected a grade <= 2147483647, found 99999999999999999999999",
    ),
    Case(
        "qrels-grade-int64",
        "qrels",
        "qrels.txt",
        b"q1 0 a 9223372036854775807\n",
        r"qrels\.txt:1: grade: expected a grade <= 2147483647, found 9223372036854775807",
    ),
    Case(
        "qrels-grade-nan",
        "qrels",
        "qrels.txt",
        b"q1 0 a nan\n",
        r"qrels\.txt:1: grade: expected an integer, found 'nan'",
    ),
    # JSON Lines qrels
    Case(
        "jsonl-qrels-bom",
        "qrels",
        "qrels.jsonl",
        BOM + b'{"qid": "q1", "docid": "a", "grade": 1}\n{"qid": "q2", "docid": "c", "grade": 1}\n',
        mrr=1.0,
    ),
    Case(
        "jsonl-qrels-aliases",
        "qrels",
        "qrels.jsonl",
        b'{"query_id": "q1", "doc_id": "a", "relevance": 1}\n'
        b'{"question_id": "q2", "item": "c", "label": 1}\n',
        mrr=1.0,
    ),
    Case(
        "jsonl-grade-huge",
        "qrels",
        "qrels.jsonl",
        b'{"qid": "q1", "docid": "a", "grade": 99999999999999999999999}\n',
        r"qrels\.jsonl:1: grade: expected a grade <= 2147483647, found 99999999999999999999999",
    ),
    Case(
        "jsonl-grade-int64",
        "qrels",
        "qrels.jsonl",
        b'{"qid": "q1", "docid": "a", "grade": 9223372036854775807}\n',
        r"qrels\.jsonl:1: grade: expected a grade <= 2147483647, found 9223372036854775807",
    ),
    Case(
        "jsonl-deep",
        "qrels",
        "qrels.jsonl",
        b'{"qid": ' + b"[" * DEEP + b"]" * DEEP + b"}\n",
        r"qrels\.jsonl:1: invalid JSON: nested too deeply",
    ),
    Case(
        "jsonl-latin1",
        "qrels",
        "qrels.jsonl",
        b'{"qid": "q1", "docid": "a", "grade": 1}\n{"qid": "q\xe9"}\n',
        r"qrels\.jsonl:2: expected UTF-8 text",
    ),
    # JSON Lines runs
    Case(
        "jsonl-run-nan",
        "run",
        "run.jsonl",
        b'{"qid": "q1", "docid": "a", "score": NaN}\n',
        r"run\.jsonl:1: score: expected a finite number, found nan",
    ),
    Case(
        "jsonl-run-inf",
        "run",
        "run.jsonl",
        b'{"id": "q1", "ranking": [["a", Infinity]]}\n',
        r"run\.jsonl:1: score: expected a finite number, found inf",
    ),
    Case(
        "jsonl-run-1e999",
        "run",
        "run.jsonl",
        b'{"q1": {"a": 1e999}}\n',
        r"run\.jsonl:1: score: expected a finite number, found inf",
    ),
    Case(
        "jsonl-run-bigint",
        "run",
        "run.jsonl",
        b'{"qid": "q1", "docid": "a", "score": ' + b"9" * 400 + b"}\n",
        r"run\.jsonl:1: score: expected a finite number, found 9999",
    ),
    Case(
        "json-run-deep",
        "run",
        "run.json",
        b"[" * DEEP + b"]" * DEEP,
        r"run\.json:1: invalid JSON: nested too deeply",
    ),
    # Chunk -> document map (evaluate --chunk-map)
    Case("chunk-map-bom", "chunk-map", "map.tsv", BOM + b"a\tD1\nb\tD2\nc\tD3\n", mrr=1.0),
    Case(
        "chunk-map-latin1",
        "chunk-map",
        "map.tsv",
        b"a\tD1\nb\tD\xe92\n",
        r"map\.tsv:2: expected UTF-8 text",
    ),
    # Label files (agreement)
    Case(
        "labels-yaml-tag",
        "labels",
        "labels.yaml",
        b"q1: !!python/object/apply:os.system [echo hi]\n",
        r"labels\.yaml:1: expected plain YAML data, found could not determine a constructor",
    ),
    Case(
        "labels-yaml-bomb",
        "labels",
        "labels.yaml",
        BOMB,
        r"labels\.yaml:1: expected at most 1,000,000 values once aliases",
    ),
    Case(
        "labels-yaml-deep",
        "labels",
        "labels.yaml",
        b"[" * DEEP + b"]" * DEEP,
        r"labels\.yaml(:1)?: invalid YAML: nested too deeply",
    ),
    Case(
        "labels-json-nan",
        "labels",
        "labels.json",
        b'{"q1": {"a": NaN}}',
        r"labels\.json:1: grade: expected an integer, found nan",
    ),
    # Chunk-label files (funnel --labels): the same safe YAML loader as golden sets
    Case(
        "chunk-labels-yaml-tag",
        "chunk-labels",
        "chunk_labels.yaml",
        CHUNK_LABELS_HEAD + b"labeller: !!python/object/apply:os.system [echo hi]\n",
        r"chunk_labels\.yaml:3: expected plain YAML data, found could not determine a constructor",
    ),
    Case(
        "chunk-labels-yaml-bomb",
        "chunk-labels",
        "chunk_labels.yaml",
        CHUNK_LABELS_HEAD + BOMB,
        r"chunk_labels\.yaml:1: expected at most 1,000,000 values once aliases",
    ),
    Case(
        "chunk-labels-yaml-deep",
        "chunk-labels",
        "chunk_labels.yaml",
        CHUNK_LABELS_HEAD + b"x: " + b"[" * DEEP + b"]" * DEEP + b"\n",
        r"chunk_labels\.yaml(:\d+)?: invalid YAML: nested too deeply",
    ),
    Case(
        "chunk-labels-latin1",
        "chunk-labels",
        "chunk_labels.yaml",
        CHUNK_LABELS_HEAD + b"labeller: caf\xe9\n",
        r"chunk_labels\.yaml:3: expected UTF-8 text, found byte 0xe9",
    ),
    # Golden sets (run --golden)
    Case(
        "golden-tag",
        "golden",
        "golden.yaml",
        b"- id: q1\n  question: Why?\n  answer: !!python/object/apply:os.system [echo hi]\n"
        b"  sources: [leave-policy]\n",
        r"golden\.yaml:3: expected plain YAML data, found could not determine a constructor",
    ),
    Case(
        "golden-bomb-answer",
        "golden",
        "golden.yaml",
        BOMB + b"questions:\n  - id: q1\n    question: Why?\n    answer: *i\n"
        b"    sources: [leave-policy]\n",
        r"golden\.yaml:1: expected at most 1,000,000 values once aliases",
    ),
    Case(
        "golden-bomb-tags",
        "golden",
        "golden.yaml",
        b'x: &a ["x","x","x","x","x","x","x","x","x"]\n'
        b"questions:\n  - id: q1\n    question: Why?\n    answer: x\n"
        b"    sources: [leave-policy]\n    tags: [*a, *a]\n",
        r"golden\.yaml:1: tags\[0\]: question 'q1': expected a non-empty string, found \['x'",
    ),
    Case(
        "golden-deep",
        "golden",
        "golden.yaml",
        b"[" * DEEP + b"]" * DEEP,
        r"golden\.yaml(:1)?: invalid YAML: nested too deeply",
    ),
    # An alias inside the node it names (`a: &a [*a]`) expanded forever (adversarial pass 3):
    # a golden set, a golden row, a label file and a chunk-label file
    Case(
        "golden-self-alias",
        "golden",
        "golden.yaml",
        b"a: &a [*a]\nquestions:\n  - id: q1\n    question: Why?\n    answer: x\n"
        b"    sources: [leave-policy]\n",
        r"golden\.yaml:1: expected aliases \(\*name\) to refer to values outside themselves",
    ),
    Case(
        "golden-row-self-alias",
        "golden",
        "golden.yaml",
        b"questions:\n  - id: q1\n    question: Why?\n    answer: x\n"
        b"    sources: [leave-policy]\n    tags: &t [a, *t]\n",
        r"golden\.yaml:1: expected aliases \(\*name\) to refer to values outside themselves",
    ),
    Case(
        "labels-yaml-self-alias",
        "labels",
        "labels.yaml",
        b"q1: &a {d1: [*a]}\n",
        r"labels\.yaml:1: expected aliases \(\*name\) to refer to values outside themselves",
    ),
    Case(
        "chunk-labels-yaml-self-alias",
        "chunk-labels",
        "chunk_labels.yaml",
        CHUNK_LABELS_HEAD + b"x: &a [*a]\n",
        r"chunk_labels\.yaml:1: expected aliases \(\*name\) to refer to values outside",
    ),
    # Saved runs (import; the one saved-run loader every command uses)
    Case(
        "saved-run-is-a-golden-set",
        "saved-run",
        "golden.yaml",
        b"- id: q1\n  question: Who?\n  answer: Ada\n",
        r"golden\.yaml: expected a saved run .*found a YAML file: is it a golden set",
    ),
    Case(
        "saved-run-is-a-csv",
        "saved-run",
        "golden.csv",
        b"question,answer\nWho?,Ada\n",
        r"golden\.csv: expected a saved run .*found a CSV file",
    ),
    Case(
        "saved-run-huge-k",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 99999999999999999999999}, "rows": []}',
        r"run\.json: config\.k: expected a value between 1 and 2147483647, found 9999",
    ),
    Case(
        "saved-run-nan-metric",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": [], '
        b'"metrics": {"recall@k": NaN}}]}',
        r"run\.json: rows\[0\]\.metrics\.recall@k: expected a finite number, found nan "
        r"\(question 'q1'\)",
    ),
    Case(
        "saved-run-latin1-id",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1}, "rows": [{"id": "q\xe91", "retrieved": []}]}',
        r"run\.json:1: expected UTF-8 text, found byte 0xe9",
    ),
    Case(
        "saved-run-bom",
        "saved-run",
        "run.json",
        BOM + SAVED_RUN_HEAD + b'"config": {"k": 0}, "rows": []}',
        r"run\.json: config\.k: expected a value >= 1, found 0",
    ),
    Case(
        "saved-run-deep",
        "saved-run",
        "run.json",
        b"[" * DEEP + b"]" * DEEP,
        r"run\.json:1: invalid JSON: nested too deeply",
    ),
    # A repeated run's generations 1 .. R-1 (rows[].repeats, issue 34)
    Case(
        "saved-run-repeat-answer-number",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"seed": 1, "answer": 3}]}]}',
        r"run\.json: rows\[0\]\.repeats\[0\]\.answer: expected a string or null, found 3 "
        r"\(question 'q1'\)",
    ),
    Case(
        "saved-run-repeat-seed-string",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"seed": "7"}]}]}',
        r"run\.json: rows\[0\]\.repeats\[0\]\.seed: expected an integer or null, found \"7\"",
    ),
    Case(
        "saved-run-repeat-negative-latency",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"latency_ms": {"generate": -5}}]}]}',
        r"run\.json: rows\[0\]\.repeats\[0\]\.latency_ms\.generate: expected a non-negative "
        r"number of milliseconds or null, found -5",
    ),
    Case(
        "saved-run-repeat-metric-out-of-range",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"metrics": {"recall@k": 1.5}}]}]}',
        r"run\.json: rows\[0\]\.repeats\[0\]\.metrics\.recall@k: expected a number between "
        r"0 and 1 or null, found 1\.5",
    ),
    Case(
        "saved-run-repeats-not-a-list",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": "b"}]}',
        r"run\.json: rows\[0\]\.repeats: expected an array of objects .*found \"b\"",
    ),
    Case(
        "saved-run-repeats-too-few",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 3}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"seed": 1}]}]}',
        r"run\.json: rows\[0\]\.repeats: expected 2 entries "
        r"\(config\.repeats is 3",
    ),
    Case(
        "saved-run-repeats-without-header",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"seed": 1}]}]}',
        r"run\.json: rows\[0\]\.repeats: expected no entries \(config\.repeats is absent",
    ),
    Case(
        "saved-run-repeats-one",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 1}, "rows": []}',
        r"run\.json: config\.repeats: expected a value between 2 and 100000, found 1",
    ),
    Case(
        "saved-run-repeat-seeds-short",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2, "repeat_seeds": [4]}, "rows": []}',
        r"run\.json: config\.repeat_seeds: expected 2 seeds \(one per repeat",
    ),
    # Human verdicts (calibrate --human)
    Case(
        "human-verdict-inf",
        "human",
        "human.jsonl",
        b'{"id": "q01", "correct": 1e400}\n',
        r"human\.jsonl:1: correct: expected true/false, 1/0 or 'correct'/'wrong', found inf",
    ),
    Case(
        "human-verdict-yaml-tag",
        "human",
        "human.yaml",
        b"q01: !!python/object/apply:os.system [echo hi]\n",
        r"human\.yaml:1: expected plain YAML data",
    ),
    # A key written twice in one JSON object: json.loads keeps the last one silently, which
    # dropped a question (or an item) without a word.
    Case(
        "run-json-duplicate-question",
        "run",
        "run.json",
        b'{"q1": {"a": 2.0, "b": 1.0},\n "q2": {"c": 1.0},\n "q1": {"b": 3.0}}',
        r"run\.json:3: q1: expected each key once in an object, found it twice",
    ),
    Case(
        "run-jsonl-duplicate-item",
        "run",
        "run.jsonl",
        b'{"id": "q1", "ranking": {"a": 2.0, "b": 1.0}}\n'
        b'{"id": "q2", "ranking": {"c": 1.0, "c": 0.5}}\n',
        r"run\.jsonl:2: c: expected each key once in an object, found it twice",
    ),
    Case(
        "qrels-json-duplicate-question",
        "qrels",
        "qrels.json",
        b'{"q1": {"a": 1},\n "q1": {"c": 1}, "q2": {"c": 1}}',
        r"qrels\.json:2: q1: expected each key once in an object, found it twice",
    ),
    Case(
        "golden-jsonl-duplicate-field",
        "golden",
        "golden.jsonl",
        b'{"question": "How many leave days?", "answer": "25", "sources": ["leave-policy"], '
        b'"question": "Who?"}\n',
        r"golden\.jsonl:1: question: expected each key once in an object, found it twice",
    ),
    Case(
        "human-verdict-duplicate-field",
        "human",
        "human.jsonl",
        b'{"id": "q01", "correct": true}\n{"id": "q02", "correct": false, "correct": true}\n',
        r"human\.jsonl:2: correct: expected each key once in an object, found it twice",
    ),
    Case(
        "saved-run-duplicate-metric",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1},\n"rows": [{"id": "q1", "retrieved": [], '
        b'"metrics": {"correct": true, "correct": false}}]}',
        r"run\.json:2: correct: expected each key once in an object, found it twice",
    ),
]


def _invoke(case: Case, tmp_path: Path) -> tuple[int, str]:
    path = tmp_path / case.name
    path.write_bytes(case.content)
    qrels, run = tmp_path / "default.qrels", tmp_path / "default.run"
    qrels.write_bytes(GOOD_QRELS)
    run.write_bytes(GOOD_RUN)
    if case.command in ("run", "qrels", "chunk-map"):
        args = ["evaluate", "-m", "mrr", "--format", "json"]
        args += ["--qrels", str(path if case.command == "qrels" else qrels)]
        if case.command == "chunk-map":
            (tmp_path / "chunks.run").write_bytes(GOOD_RUN)
            args += ["--run", str(tmp_path / "chunks.run"), "--chunk-map", str(path)]
            (tmp_path / "doc.qrels").write_bytes(b"q1 0 D1 1\nq2 0 D3 1\n")
            args[args.index("--qrels") + 1] = str(tmp_path / "doc.qrels")
        else:
            args += ["--run", str(path if case.command == "run" else run)]
    elif case.command == "labels":
        args = ["agreement", str(path), str(path)]
    elif case.command == "chunk-labels":
        args = ["funnel", str(STATS / "k3.json"), "--labels", str(path)]
    elif case.command == "saved-run":
        args = ["import", str(path)]
    elif case.command == "human":
        args = ["calibrate", str(STATS / "k3.json"), "--human", str(path)]
    else:
        args = ["run", "--corpus", str(HARNESS / "corpus"), "--golden", str(path)]
        args += ["--out", str(tmp_path / "out"), "--no-timing"]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_or_the_right_value(case, tmp_path):
    code, output = _invoke(case, tmp_path)
    assert "Traceback" not in output
    if case.message is None:
        assert code == 0, output
        assert re.search(rf'"mrr": {case.mrr}\b', output), output
        return
    assert code == 2, output
    lines = [line for line in output.splitlines() if line.startswith("ragaudit: error:")]
    assert len(lines) == 1 and len(lines[0]) < 400, output[:2000]
    assert re.search(case.message, lines[0]), lines[0]
