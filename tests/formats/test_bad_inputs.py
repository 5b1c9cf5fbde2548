"""Bad ranking, label and golden files through every reader end in one line and exit 2, or in
the right number.

One row per case and per reader (issue 10's reader edges).  An error row gives the message the
command must print (it names the file, the line when there is one, and the field); a value row
gives the mean that a correct reading produces, worked out by hand.  Every row asserts exit 2
(or 0 for a value row) and that no traceback reaches the user.  Saved runs and human verdicts
have their own table (:mod:`tests.formats.test_bad_saved_runs`).
"""

from __future__ import annotations

import pytest

from .bad_input_table import (
    BOM,
    BOMB,
    CHUNK_LABELS_HEAD,
    DEEP,
    GOOD_QRELS,
    GOOD_RUN,
    Case,
    check_case,
)

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
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_or_the_right_value(case, tmp_path):
    check_case(case, tmp_path)
