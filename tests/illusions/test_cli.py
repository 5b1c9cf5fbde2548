"""``ragaudit illusions`` and ``ragaudit explain`` from the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

HERE = Path(__file__).parent


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_illusions_table_is_the_hand_written_snapshot() -> None:
    code, out, err = _run("illusions")
    assert code == 0, err
    assert out == (HERE / "expected_illusions.txt").read_text(encoding="utf-8")


# Runs the three formats through the CLI in a fresh interpreter.
ALL_FORMATS = (
    "import sys; from click.testing import CliRunner; from ragaudit.cli import main; "
    "runner = CliRunner(); "
    "[sys.stdout.write(runner.invoke(main, ['illusions', '--format', f]).stdout) "
    "for f in ('table', 'json', 'markdown')]"
)


@pytest.mark.slow
def test_illusions_output_is_byte_identical_across_processes() -> None:
    outputs = []
    for hash_seed in ("1", "2"):  # set/dict order must not leak into the output
        done = subprocess.run(
            [sys.executable, "-c", ALL_FORMATS],
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            check=True,
            timeout=120,
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].count(b"Metric illusions: ") == 2 and b'"computed_by"' in outputs[0]


def test_illusions_json_gives_all_numbers() -> None:
    code, out, _ = _run("illusions", "--format", "json")
    assert code == 0
    data = json.loads(out)
    first = {s["name"]: s["metrics"] for s in data["cases"][0]["systems"]}
    assert round(first["middle"]["ndcg@5"], 3) == 0.693
    assert round(first["bottom"]["map@5"], 3) == 0.325
    assert data["cases"][4]["derivation_matches_evaluate"] is True
    assert {c["key"] for c in data["cases"]} == {
        "same_recall_different_rank",
        "same_mrr_partial_evidence",
        "same_hit_fluke",
        "k_tradeoff",
        "whiteboard",
        "graded_vs_binary",
        "unjudged_is_not_irrelevant",
    }


def test_illusions_markdown() -> None:
    code, out, _ = _run("illusions", "--format", "markdown")
    assert code == 0
    assert out.startswith("# Metric illusions: systems that tie")
    assert "| 3 | 0.667 | 0.667 | 0.667 | 0.704 |" in out


def test_explain_ndcg_prints_the_whiteboard() -> None:
    code, out, err = _run("explain", "ndcg", "--ranking", "B A D C E", "--relevant", "A C")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "ndcg@5 for ranking: B A D C E"
    assert lines[1] == "labels (item=grade): A=1, C=1"
    assert lines[2].split() == [
        "rank",
        "i",
        "item",
        "gain",
        "log2(i+1)",
        "discount",
        "contribution",
    ]
    assert lines[4].split() == ["2", "A", "1", "1.585", "0.631", "0.631"]
    assert lines[-4:] == [
        "DCG@5 = 0.6309 + 0.4307 = 1.0616",
        "IDCG@5 = 1/log2(2) + 1/log2(3) = 1.0000 + 0.6309 = 1.6309",
        "nDCG@5 = 1.0616 / 1.6309 = 0.6509",
        "evaluate(): ndcg@5 = 0.6509 (same as the derivation)",
    ]


def test_explain_graded_exp_gain_and_k() -> None:
    code, out, err = _run(
        "explain", "ndcg", "--ranking", "B A X", "--grades", "A=2,B=1", "--gain", "exp", "--k", "2"
    )
    assert code == 0, err
    assert "IDCG@2 = 3/log2(2) + 1/log2(3) = 3.0000 + 0.6309 = 3.6309" in out
    assert "evaluate(): ndcg_exp@2 = 0.7967 (same as the derivation)" in out


@pytest.mark.parametrize(
    ("metric", "expected_line"),
    [
        ("ap", "AP = (0.5000 + 0.5000) / |relevant| = 1.0000 / 2 = 0.5000"),
        (
            "context_precision",
            "context precision@5 = (0.5000 + 0.5000) / (relevant in top 5) = 1.0000 / 2 = 0.5000",
        ),
    ],
)
def test_explain_ap_and_context_precision(metric: str, expected_line: str) -> None:
    code, out, err = _run("explain", metric, "--ranking", "B A D C E", "--relevant", "A C")
    assert code == 0, err
    assert expected_line in out.splitlines()


def test_explain_json() -> None:
    code, out, _ = _run(
        "explain", "ap", "--ranking", "B A D C E", "--relevant", "A C", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["value"] == 0.5 and data["metric"] == "map"
    assert data["grades"] == {"A": 1, "C": 1}
    assert [s["precision@i"] for s in data["steps"]] == pytest.approx(
        [0, 1 / 2, 1 / 3, 2 / 4, 2 / 5]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ranking", " ", "--relevant", "A"], "--ranking: expected item ids separated by spaces"),
        (["--ranking", "A B A", "--relevant", "A"], "--ranking: item 'A' appears more than once"),
        (["--ranking", "A B", "--grades", "A:2"], "--grades: expected ITEM=GRADE pairs"),
        (["--ranking", "A B", "--grades", "A=x"], "--grades: item 'A': expected an integer grade"),
        (["--ranking", "A B"], "expected --relevant and/or --grades, found neither"),
        (["--ranking", "A B", "--relevant", "A", "--grades", "A=0"], "has grade 0 in --grades"),
        (["--ranking", "A B", "--relevant", "A", "--k", "0"], "k: expected an integer >= 1"),
    ],
)
def test_explain_bad_input_is_one_line_exit_2(args: list[str], message: str) -> None:
    code, out, err = _run("explain", "ndcg", *args)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("ragaudit: error: ")
    assert message in err


def test_explain_gain_only_for_ndcg() -> None:
    code, _, err = _run("explain", "ap", "--ranking", "A", "--relevant", "A", "--gain", "exp")
    assert code == 2
    assert "--gain: applies to ndcg only" in err
