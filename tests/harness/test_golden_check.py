"""``ragaudit golden check`` and the loader's refusal of misspelt keys (issue 20, part 4).

Every golden set here is written by hand, and each expected finding is read off it by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragaudit
from ragaudit.cli import main
from ragaudit.data.chunks import Chunk, Document
from ragaudit.data.golden import load_golden
from ragaudit.exceptions import FormatError
from ragaudit.pipeline.golden_check import check_golden

BENCHMARK = Path(ragaudit.__file__).parent / "benchmark"
DOCS = {
    "leave": "Every employee receives 24 days of paid leave per year. Parental leave lasts "
    "90 days and is fully paid.",
    "security": "Telemetry is Confidential. Passwords rotate every 4 hours for admin accounts.",
}
GOOD = """\
- id: q1
  question: How many days of paid leave does an employee receive per year?
  answer: 24 days per year.
  sources: [leave]
  keywords: ["24"]
- id: q2
  question: How often do admin passwords rotate?
  answer: Every 4 hours.
  sources: [security]
  keywords: ["4 hours"]
"""


def invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for doc_id, text in DOCS.items():
        (folder / f"{doc_id}.md").write_text(text, encoding="utf-8")
    return folder


def write(tmp_path, text, name="golden.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ run refuses misspelt keys


@pytest.mark.parametrize(
    ("wrong", "right", "line"),
    [("keyword", "keywords", 5), ("qestion", "question", 2), ("sorces", "sources", 4)],
)
def test_run_refuses_a_misspelt_key_naming_the_right_one(tmp_path, corpus, wrong, right, line):
    golden = write(tmp_path, GOOD.replace(f"  {right}:", f"  {wrong}:", 1))
    result = invoke(["run", "--corpus", corpus, "--golden", golden, "--out", tmp_path / "o"])
    assert result.exit_code == 2
    assert result.output.startswith(f"ragaudit: error: {golden}:{line}: {wrong}: expected a ")
    assert f"found the unknown key {wrong!r}; did you mean {right!r}? Rename it" in result.output


def test_a_misspelt_column_of_a_json_golden_set_is_refused_too(tmp_path):
    record = {"id": "q1", "question": "Why?", "answer": "x", "sources": ["leave"], "keyword": ["x"]}
    golden = write(tmp_path, json.dumps([record]), "g.json")
    with pytest.raises(FormatError, match=r"keyword: .*did you mean 'keywords'\? Rename it"):
        load_golden(golden)


def test_other_unknown_keys_stay_metadata(tmp_path):
    golden = load_golden(write(tmp_path, GOOD + "  difficulty: easy\n"))
    assert golden[1].extra == {"difficulty": "easy"}


# ------------------------------------------------------------------ golden check


def test_the_bundled_benchmark_golden_set_is_clean():
    result = invoke(["golden", "check", "--golden", BENCHMARK / "golden.yaml", "--corpus",
                     BENCHMARK / "corpus", "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] and data["problems"] == 0
    assert (data["n_questions"], data["n_answerable"], data["n_documents"]) == (60, 54, 14)


def test_a_clean_golden_set_exits_0(tmp_path, corpus):
    result = invoke(["golden", "check", "--golden", write(tmp_path, GOOD), "--corpus", corpus])
    assert result.exit_code == 0, result.output
    assert "clean: no problem found" in result.stdout


def test_every_kind_of_problem_is_listed_and_exits_1(tmp_path, corpus):
    bad = (
        GOOD
        + """\
- id: q3
  question: How many days of paid leave does an employee receive per year?
  answer: 24 days per year.
  sources: [leaves]
  keyword: ["240"]
  difficulty: hard
- id: q4
  question: How often do the admin passwords rotate, please?
  answer: Every 6 weeks, by the sabbatical board.
  sources: [security]
"""
    )
    result = invoke(["golden", "check", "--golden", write(tmp_path, bad), "--corpus", corpus,
                     "--format", "json"])  # fmt: skip
    assert result.exit_code == 1, result.output
    found = [(f["check"], f["id"], f["problem"]) for f in json.loads(result.stdout)["findings"]]
    # by hand: q3 misspells keywords (a problem) and has its own 'difficulty' (a note); its
    # source 'leaves' is no document; its keyword 240 is in no chunk (24 is not 240); it
    # repeats q1 word for word; q4's answer (6 weeks, sabbatical board) is in no document;
    # q4 is q2 with "the" and "please" added: a paraphrase duplicate (a note; the BM25
    # similarity itself is measured in tests/pipeline/test_golden_validity.py)
    assert found == [
        ("unknown key", "q3", True),
        ("unknown key", "q3", False),
        ("source not in corpus", "q3", True),
        ("answer not in corpus", "q4", True),
        ("keyword in no chunk", "q3", True),
        ("duplicate question", "q3", True),
        ("paraphrase duplicate", "q4", False),
    ]
    text = invoke(["golden", "check", "--golden", tmp_path / "golden.yaml", "--corpus", corpus])
    assert "did you mean 'keywords'? Rename it (in 1 question(s))" in text.stdout
    assert "'leaves' names no document of the corpus; did you mean 'leave'?" in text.stdout


def test_the_library_reads_a_misspelt_key_as_what_it_misspells(tmp_path):
    docs = [Document("leave", DOCS["leave"])]
    chunks = [Chunk("leave#0", "leave", 0, DOCS["leave"])]
    text = GOOD.replace("keywords:", "keyword:").replace("[security]", "[leave]")
    check = check_golden(write(tmp_path, text), docs, chunks)
    # the keywords were read (as 'keywords'): "4 hours" is in no chunk of this one document
    assert [(f.check, f.qid, f.line) for f in check.problems][:1] == [("unknown key", "q1", 5)]
    assert [(f.check, f.qid) for f in check.problems] == [
        ("unknown key", "q1"),
        ("answer not in corpus", "q2"),
        ("keyword in no chunk", "q2"),
    ]


def test_unreadable_input_exits_2(tmp_path, corpus):
    result = invoke(["golden", "check", "--golden", tmp_path / "none.yaml", "--corpus", corpus])
    assert result.exit_code == 2
    broken = write(tmp_path, "- {id: q1, question: [unclosed\n")
    result = invoke(["golden", "check", "--golden", broken, "--corpus", corpus])
    assert result.exit_code == 2 and "invalid YAML" in result.output
