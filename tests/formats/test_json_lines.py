"""One JSON Lines reader: every JSONL file of the package gets the same edge cases right.

The readers of per-question metric files (``compare``), human verdicts (``calibrate``) and
JSONL qrels (``evaluate``, ``agreement``) all read their lines through
``data.formats._source.json_lines``; run checkpoints use its "stop" policy.  Each row of the
table is written by hand: the bytes of the file and what a correct reading gives (the ids) or
the start of the one-line message (file, line, and field where there is one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.formats.jsonl import read_jsonl_qrels
from ragaudit.data.human_grades import read_human_grades
from ragaudit.data.per_question_files import read_per_question_metrics
from ragaudit.data.records import Checkpoint
from ragaudit.exceptions import FormatError

BOM = b"\xef\xbb\xbf"


def _metrics_line(qid: str, value: str) -> bytes:
    return f'{{"id": "{qid}", "m": {value}}}'.encode()


def _verdict_line(qid: str, value: str) -> bytes:
    return f'{{"id": "{qid}", "correct": {value}}}'.encode()


def _qrels_line(qid: str, value: str) -> bytes:
    return f'{{"qid": "{qid}", "docid": "d1", "grade": {value}}}'.encode()


def _ids_metrics(path: Path) -> list[str]:
    return list(read_per_question_metrics(path).values)


def _ids_verdicts(path: Path) -> list[str]:
    return list(read_human_grades(path))


def _ids_qrels(path: Path) -> list[str]:
    return list(read_jsonl_qrels(path).to_dict())


#: reader name -> (line maker, reader returning the question ids, good value, field name,
#: the start of the message for a NaN value)
READERS: dict[str, tuple[Callable[[str, str], bytes], Callable[[Path], list[str]], str, str]] = {
    "per-question": (_metrics_line, _ids_metrics, "1", r"m: question 'q2': expected a finite"),
    "human-verdicts": (_verdict_line, _ids_verdicts, "1", r"correct: expected true/false"),
    "qrels": (_qrels_line, _ids_qrels, "1", r"grade: expected an integer, found nan"),
}


def _lines(make: Callable[[str, str], bytes], good: str, *, second: str | None = None) -> bytes:
    return make("q1", good) + b"\n" + make("q2", good if second is None else second) + b"\n"


# (case id, bytes of the file given (line maker, good value), expected ids or message regex)
CASES: list[tuple[str, Callable[[Callable[[str, str], bytes], str], bytes], object]] = [
    ("bom", lambda m, g: BOM + _lines(m, g), ["q1", "q2"]),
    ("crlf", lambda m, g: _lines(m, g).replace(b"\n", b"\r\n"), ["q1", "q2"]),
    ("blank-lines", lambda m, g: b"\n  \n" + _lines(m, g) + b"\n\n", ["q1", "q2"]),
    ("no-final-newline", lambda m, g: _lines(m, g).rstrip(b"\n"), ["q1", "q2"]),
    # U+2028 and U+0085 are line breaks to str.splitlines, not to JSON Lines
    (
        "unicode-line-separator-in-id",
        lambda m, g: m("q\u2028\x851", g) + b"\n" + m("q2", g) + b"\n",
        ["q\u2028\x851", "q2"],
    ),
    (
        "bad-utf8",
        lambda m, g: m("q1", g) + b"\n" + m("q\xff", g).replace(b"\xc3\xbf", b"\xff") + b"\n",
        r":2: expected UTF-8 text, found byte 0xff; re-save the file as UTF-8$",
    ),
    ("nan", lambda m, g: _lines(m, g, second="NaN"), None),  # the reader's own field message
    (
        "huge-int",
        lambda m, g: _lines(m, g, second="1" * 5000),
        r":2: invalid JSON: Exceeds the limit",
    ),
    (
        "deep-nesting",
        lambda m, g: _lines(m, g, second="[" * 100_000),
        r":2: invalid JSON: nested too deeply",
    ),
    (
        "torn-last-line",
        lambda m, g: m("q1", g) + b"\n" + m("q2", g)[:-4],
        r":2: invalid JSON: .*\(column \d+\); the file ends inside this line without a newline",
    ),
    # a key written twice: the line is whole, so no "interrupted writer" even as the last line
    (
        "duplicate-key-last-line",
        lambda m, g: m("q1", g) + b"\n" + m("q2", g)[:-1] + b', "x": 1, "x": 2}',
        r":2: x: expected each key once in an object, found it twice$",
    ),
    (
        "bad-line-in-the-middle",
        lambda m, g: m("q1", g)[:-1] + b"\n" + m("q2", g) + b"\n",
        r":1: invalid JSON: Expecting ',' delimiter \(column \d+\)$",
    ),
]


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize(("case", "build", "expected"), CASES, ids=[c[0] for c in CASES])
def test_every_jsonl_reader_handles_the_same_edge_cases(tmp_path, reader, case, build, expected):
    make, read, good, nan_message = READERS[reader]
    path = tmp_path / "x.jsonl"
    path.write_bytes(build(make, good))
    if isinstance(expected, list):
        assert read(path) == expected
        return
    pattern = re.escape(str(path)) + (f":2: {nan_message}" if expected is None else expected)
    with pytest.raises(FormatError) as info:
        read(path)
    assert re.match(pattern, str(info.value)), str(info.value)
    assert "\n" not in str(info.value) and len(str(info.value)) < 400


def test_the_cli_prints_the_torn_line_as_one_error_line(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"id": "q1", "m": 1}\n{"id": "q2", "m": 0}\n', encoding="utf-8")
    b.write_text('{"id": "q1", "m": 1}\n{"id": "q2", "m"', encoding="utf-8")
    result = CliRunner().invoke(main, ["compare", str(a), str(b)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"ragaudit: error: {b}:2: invalid JSON: Expecting ':' delimiter (column 17); the file "
        "ends inside this line without a newline (was its writer interrupted?)\n"
    )


def test_checkpoint_keeps_whole_lines_and_redoes_a_torn_utf8_tail(tmp_path):
    sidecar = Checkpoint(tmp_path / "k3.partial.jsonl")
    assert sidecar.resume({"k": 3}) == {}
    sidecar.append({"id": "q1", "answer": "line\u2028separator"})
    sidecar.append({"id": "q2", "answer": "b"})
    torn = json.dumps({"id": "q3", "answer": "é"}, ensure_ascii=False).encode()
    with open(sidecar.path, "ab") as handle:
        handle.write(torn[: torn.index("é".encode()) + 1])  # cut inside the two-byte é
    done = Checkpoint(sidecar.path).resume({"k": 3})
    assert done == {
        ("q1", 0): {"id": "q1", "answer": "line\u2028separator"},
        ("q2", 0): {"id": "q2", "answer": "b"},
    }
    assert sidecar.path.read_bytes().endswith(b'"answer": "b"}\n')  # the torn tail is gone


def test_checkpoint_refuses_a_whole_line_with_a_key_written_twice(tmp_path):
    # Not a torn tail (reading would stop there quietly and redo every question after it):
    # the line is whole, so it is an error naming it.
    sidecar = Checkpoint(tmp_path / "k3.partial.jsonl")
    assert sidecar.resume({"k": 3}) == {}
    sidecar.append({"id": "q1", "answer": "a"})
    with open(sidecar.path, "ab") as handle:
        handle.write(b'{"id": "q2", "answer": "b", "answer": "c"}\n')
    with pytest.raises(FormatError, match=r"k3\.partial\.jsonl:3: answer: expected each key once"):
        Checkpoint(sidecar.path).resume({"k": 3})
