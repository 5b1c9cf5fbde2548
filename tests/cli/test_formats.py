"""Every command takes the same --format names and renders through the one renderer."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

QRELS, RUN = "tests/data/metrics/qrels.txt", "tests/data/metrics/run.txt"
K3, K6 = "tests/data/stats/k3.json", "tests/data/stats/k6.json"
HARNESS = ["--corpus", "tests/data/harness/corpus", "--golden", "tests/data/harness/golden.yaml"]


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    result = CliRunner().invoke(main, ["run", *HARNESS, "--out", str(out), "--no-timing"])
    assert result.exit_code == 0, result.output
    return str(out / "k5_cs800.json")


COMMANDS = {
    "evaluate": ["evaluate", "--qrels", QRELS, "--run", RUN],
    "plan": ["plan", "--n", "20,100"],
    "agreement": ["agreement", "tests/data/stats/labels_a.qrels",
                  "tests/data/stats/labels_b.jsonl"],
    "illusions": ["illusions"],
    "explain": ["explain", "ap", "--ranking", "A X B", "--relevant", "A B"],
    "compare": ["compare", K3, K6, "--resamples", "200", "--permutations", "200"],
    "compare-all": ["compare", "--all", "tests/data/stats/runs", "--metric", "ndcg@5",
                    "--resamples", "200", "--permutations", "200"],
    "funnel": ["funnel", "SAVED", "--resamples", "50"],
    "import": ["import", "SAVED"],
    "show": ["show", "SAVED", "--failures"],
    "cache": ["cache", "stats", "--cache-dir", "CACHE"],
    "cache-clear": ["cache", "clear", "--cache-dir", "CACHE", "--yes"],
    "labels-build": ["labels", "build", *HARNESS, "--out", "LABELS"],
    "run": ["run", *HARNESS, "--out", "OUT", "--limit", "2", "--no-timing"],
    "judges-audit": ["judges", "audit", "SAVED", "--corpus", "tests/data/harness/corpus"],
    "golden-check": ["golden", "check", *HARNESS],
}  # fmt: skip


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown"])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_takes_every_format(name, fmt, saved_run, tmp_path):
    args = [
        {
            "SAVED": saved_run,
            "CACHE": str(tmp_path),
            "OUT": str(tmp_path),
            "LABELS": str(tmp_path / "labels.yaml"),
        }.get(a, a)
        for a in COMMANDS[name]
    ]
    result = CliRunner().invoke(main, [*args, "--format", fmt])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.endswith("\n")
    if fmt == "json":
        json.loads(out)
    elif fmt == "csv":
        tables = [t for t in out.split("\n\n") if t.strip()]
        assert tables, out
        for table in tables:
            rows = list(csv.reader(io.StringIO(table)))
            assert len({len(r) for r in rows}) == 1  # rectangular
    elif fmt == "markdown":
        assert "Traceback" not in out and out.strip()


def test_labels_build_and_cache_clear_report_what_they_did(tmp_path):
    labels = tmp_path / "labels.yaml"
    built = CliRunner().invoke(
        main, ["labels", "build", *HARNESS, "--out", str(labels), "--format", "json"]
    )
    assert built.exit_code == 0, built.output
    doc = json.loads(built.stdout)
    import yaml

    written = yaml.safe_load(labels.read_text(encoding="utf-8"))["questions"]
    assert doc["complete"] == len(doc["labelled"]) == len(written) and doc["reused"] == []
    assert doc["out"] == str(labels) and doc["labeller"] == "heuristic" and doc["llm"] is None
    again = CliRunner().invoke(main, ["labels", "build", *HARNESS, "--out", str(labels)])
    assert again.stdout.startswith(f"labelled 0 question(s), reused {len(written)};")
    cleared = CliRunner().invoke(
        main, ["cache", "clear", "--cache-dir", str(tmp_path), "--format", "json"]
    )
    assert json.loads(cleared.stdout) == {"path": str(tmp_path / "llm.sqlite"), "removed": 0}
    text = CliRunner().invoke(main, ["cache", "clear", "--cache-dir", str(tmp_path)])
    assert text.stdout == f"cache {tmp_path / 'llm.sqlite'}: nothing to clear\n"


def test_csv_keeps_full_precision():
    result = CliRunner().invoke(
        main, ["evaluate", "--qrels", QRELS, "--run", RUN, "-m", "ndcg@10", "--format", "csv"]
    )
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["metric", "k", "value", "unit", "average", "n"]
    value = float(rows[1][2])
    table = CliRunner().invoke(main, ["evaluate", "--qrels", QRELS, "--run", RUN, "-m", "ndcg@10"])
    assert f"{value:.4f}" in table.stdout and len(rows[1][2]) > 6
