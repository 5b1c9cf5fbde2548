"""``ragaudit judges stress``: the bundled golden set offline, its output formats and errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

FAMILIES = "currency_name,changed_currency"  # a cheap slice of the bundled set (24 variants)


@pytest.fixture(scope="module")
def bundled_json() -> dict:
    result = CliRunner().invoke(main, ["judges", "stress", "--families", FAMILIES,
                                       "--seed", "3", "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_bundled_offline_table():
    result = CliRunner().invoke(main, ["judges", "stress", "--families", FAMILIES, "--seed", "3"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ragaudit judges stress: the bundled golden set (54 references, ")
    assert lines[0].endswith(", seed 3)")
    header = next(line for line in lines if "decided share [CI]" in line)
    assert "sensitivity" in result.stdout and "specificity" in result.stdout
    assert header.split() == ["family", "meaning", "n", "skipped", "decided", "share", "[CI]",
                              "measures", "decided", "accuracy", "[CI]"]  # fmt: skip
    for family in FAMILIES.split(","):
        assert any(line.split()[:1] == [family] for line in lines)


def test_rows_count_every_variant(bundled_json):
    data = bundled_json
    assert data["seed"] == 3 and data["judges"] == ["offline"]
    assert data["n_references"] == 54 and data["unanswerable"] == 6
    rows = {r["family"]: r for r in data["rows"]}
    for family in FAMILIES.split(","):
        mine = [v for v in data["variants"] if v["family"] == family]
        row = rows[family]
        assert row["n"] == len(mine) and row["n"] + row["skipped"] == 54
        decided = [v for v in mine if v["verdicts"]["offline"] != "undecided"]
        right = [v for v in decided if v["verdicts"]["offline"] == v["expected"]]
        assert (row["decided"], row["right"]) == (len(decided), len(right))
        low, high = row["decided_accuracy"]["ci"]
        assert low <= row["right"] / row["decided"] <= high
    assert rows["all"]["n"] == len(data["variants"])


def test_same_seed_same_output(bundled_json):
    again = CliRunner().invoke(main, ["judges", "stress", "--families", FAMILIES,
                                      "--seed", "3", "--format", "json"])  # fmt: skip
    assert json.loads(again.stdout) == bundled_json


@pytest.mark.parametrize("output_format", ["csv", "markdown"])
def test_other_formats(output_format):
    result = CliRunner().invoke(main, ["judges", "stress", "--families", "date_rewrite",
                                       "--format", output_format])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "date_rewrite" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no/such/golden.yaml"],
         "ragaudit: error: no/such/golden.yaml: expected an existing file, found nothing at "
         "this path"),
        (["--judge", "gpt"], "ragaudit: error: --judge: expected offline or llm, found 'gpt'"),
        (["--families", "refusal,typo"], "ragaudit: error: --families: expected names among "),
        (["--corpus", "no/such/dir"], "ragaudit: error: no/such/dir: expected a directory"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_exit_2(args, message):
    result = CliRunner().invoke(main, ["judges", "stress", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(message)
    assert len(result.stderr.splitlines()) == 1 and result.stdout == ""


def test_a_golden_file_that_does_not_parse(tmp_path):
    bad = tmp_path / "golden.yaml"
    bad.write_text("- id: q1\n  question: [unclosed\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["judges", "stress", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"ragaudit: error: {bad}")
    assert len(result.stderr.splitlines()) == 1
