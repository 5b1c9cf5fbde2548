"""Bad saved runs and human verdicts end in one line naming file, row and field, exit 2.

The saved-run rows go through ``import`` (the one saved-run loader every command uses), the
human verdicts through ``calibrate --human``; same table shape as
:mod:`tests.formats.test_bad_inputs` (:mod:`tests.formats.bad_input_table`).  Expected
messages are written by hand from the issues' cases.
"""

from __future__ import annotations

import pytest

from .bad_input_table import BOM, DEEP, SAVED_RUN_HEAD, Case, check_case

CASES = [
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
    # The question's own keys are never repeated: an entry holding one is refused, not read
    # as that repeat's question
    Case(
        "saved-run-repeat-gold-docs",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"seed": 1, "gold_docs": ["x"]}]}]}',
        r"run\.json: rows\[0\]\.repeats\[0\]\.gold_docs: expected only per-generation keys "
        r"in a repeat.*\(question 'q1'\)",
    ),
    Case(
        "saved-run-repeat-reference-answer",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"seed": 1, "reference_answer": "x"}]}]}',
        r"run\.json: rows\[0\]\.repeats\[0\]\.reference_answer: expected only per-generation keys "
        r"in a repeat.*\(question 'q1'\)",
    ),
    Case(
        "saved-run-repeat-keywords",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"seed": 1, "keywords": ["x"]}]}]}',
        r"run\.json: rows\[0\]\.repeats\[0\]\.keywords: expected only per-generation keys "
        r"in a repeat.*\(question 'q1'\)",
    ),
    Case(
        "saved-run-repeat-id",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"seed": 1, "id": "q9"}]}]}',
        r"run\.json: rows\[0\]\.repeats\[0\]\.id: expected only per-generation keys "
        r"in a repeat.*\(question 'q1'\)",
    ),
    Case(
        "saved-run-repeat-answerable",
        "saved-run",
        "run.json",
        SAVED_RUN_HEAD + b'"config": {"k": 1, "repeats": 2}, "rows": [{"id": "q1", '
        b'"retrieved": [], "repeats": [{"seed": 1, "answerable": false}]}]}',
        r"run\.json: rows\[0\]\.repeats\[0\]\.answerable: expected only per-generation keys "
        r"in a repeat.*\(question 'q1'\)",
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


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_or_the_right_value(case, tmp_path):
    check_case(case, tmp_path)
