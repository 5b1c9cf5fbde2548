import textwrap

import pytest

from ragaudit.data.golden import load_golden, parse_golden
from ragaudit.exceptions import FormatError

GOOD = """\
questions:
  - id: q1
    question: How many leave days?
    answer: 25 days.
    sources: [leave]
    keywords: ["25 days"]
    tags: [numeric]
    difficulty: easy
  - id: q2
    question: Who owns the moon?
    answerable: false
"""


def parse(text, **kwargs):
    return parse_golden(textwrap.dedent(text), path="golden.yaml", **kwargs)


def test_good_file_in_both_layouts(tmp_path):
    golden = parse(GOOD, doc_ids={"leave"})
    q1, q2 = golden
    assert (q1.id, q1.answer, q1.sources, q1.keywords, q1.tags) == (
        "q1",
        "25 days.",
        ("leave",),
        ("25 days",),
        ("numeric",),
    )
    assert q1.line == 2 and q1.extra == {"difficulty": "easy"}
    assert (q2.answerable, q2.sources, q2.answer) == (False, (), "")
    assert golden.qrels().to_dict() == {"q1": {"leave": 1}}
    as_list = "- {id: q1, question: Why, answer: x, sources: [a]}\n"
    assert parse(as_list)[0].id == "q1"
    path = tmp_path / "g.yaml"
    path.write_text(GOOD, encoding="utf-8")
    assert load_golden(path).sha256 == golden.sha256


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            GOOD + "  - id: q1\n    question: Again?\n    answer: x\n    sources: [leave]\n",
            r"golden\.yaml:12: id: duplicate question id 'q1' \(first used on line 2\)",
        ),
        (
            "- id: q1\n  question: Why\n  answer: x\n  sources: [leave, payroll]\n",
            r"golden\.yaml:4: sources\[1\]: question 'q1': 'payroll' names no document in the "
            r"corpus \(known: leave\)",
        ),
        (
            "- id: q1\n  answer: x\n  sources: [leave]\n",
            r"golden\.yaml:1: question: question 'q1': missing required field",
        ),
        (
            "- question: Why\n  answer: x\n",
            r"golden\.yaml:1: id: question #1: missing required field",
        ),
        (
            "- id: q1\n  question: Why\n  answer: x\n  sources: leave\n",
            r"golden\.yaml:4: sources: question 'q1': expected a list of strings, found a string",
        ),
        (
            "- id: q1\n  question: Why\n  answer: x\n  sources: [leave]\n  answerable: 'yes'\n",
            r"golden\.yaml:5: answerable: question 'q1': expected a boolean, found a string 'yes'",
        ),
        (
            "- id: 17\n  question: Why\n",
            r"golden\.yaml:1: id: expected a non-empty string, found 17 \(quote it",
        ),
        (
            "- id: q1\n  question: Why\n  answer: x\n",
            r"golden\.yaml:1: sources: question 'q1': an answerable question needs at least one",
        ),
        (
            "- id: q1\n  question: Why\n  answerable: false\n  sources: [leave]\n",
            r"golden\.yaml:4: sources: question 'q1': an unanswerable question must have no",
        ),
        (
            "- id: q1\n  question: Why\n  keywords: [ok, 5]\n  answer: x\n  sources: [leave]\n",
            r"golden\.yaml:3: keywords\[1\]: question 'q1': expected a non-empty string, found 5",
        ),
        ("- id: q1\n  question: [unclosed\n", r"golden\.yaml:3: invalid YAML"),
        ("", r"golden\.yaml: expected a list of questions, found an empty file"),
        (
            "title: x\n",
            r"golden\.yaml:1: expected a list of questions or a mapping with a 'questions' list",
        ),
        ("- just a string\n", r"golden\.yaml:1: question #1: expected a mapping"),
    ],
)
def test_validation_messages_name_file_line_and_field(text, message):
    with pytest.raises(FormatError, match=message):
        parse(text, doc_ids={"leave"})


def test_unreadable_and_non_utf8_golden_files(tmp_path):
    with pytest.raises(
        FormatError, match=r"nope\.yaml: expected an existing file, found nothing at this path"
    ):
        load_golden(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"- id: q\xff\n")
    with pytest.raises(FormatError, match=r"bad\.yaml:1: expected UTF-8 text, found byte 0xff"):
        load_golden(bad)
