"""The CI examples of docs/guide/ci.md run as written.

* ``docs/examples/rag-regression.yml``: every ``uv run ragaudit`` step of the workflow runs in
  a sandbox holding the bundled benchmark as ``corpus/`` and ``golden.yaml``, with
  ``$GITHUB_STEP_SUMMARY`` pointing at a file.  Against a baseline of the same pipeline the job
  passes; after a "broken ingestion" (every document cut to its first quarter) it fails.
* ``docs/examples/test_rag_regression.py``: run by pytest in a subprocess against a baseline
  and candidates written here, passing when the candidate is not worse and failing, with the
  ids of the questions that got worse, when it is.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from ragaudit.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
BENCHMARK = ROOT / "src" / "ragaudit" / "benchmark"
PREFIX = "uv run ragaudit "


def workflow_commands() -> list[list[str]]:
    doc = yaml.safe_load((EXAMPLES / "rag-regression.yml").read_text())
    steps = doc["jobs"]["golden-set"]["steps"]
    return [
        shlex.split(step["run"][len(PREFIX) :])
        for step in steps
        if step.get("run", "").startswith(PREFIX)
    ]


def run_workflow(summary: Path, *extra_compare: str) -> list[int]:
    codes = []
    for argv in workflow_commands():
        if argv[0] == "compare":
            argv = [*argv, *extra_compare]
        result = CliRunner().invoke(main, argv, env={"GITHUB_STEP_SUMMARY": str(summary)})
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        codes.append(result.exit_code)
    return codes


@pytest.fixture
def project(tmp_path, monkeypatch):
    shutil.copytree(BENCHMARK / "corpus", tmp_path / "corpus")
    shutil.copy(BENCHMARK / "golden.yaml", tmp_path / "golden.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_workflow_steps_are_the_documented_ones():
    steps = [argv[0] for argv in workflow_commands()]
    assert steps == ["run", "compare"]
    compare = workflow_commands()[1]
    assert "--baseline" in compare and compare.count("--fail-if-worse") == 2
    guide = (ROOT / "docs" / "guide" / "ci.md").read_text()
    assert (EXAMPLES / "rag-regression.yml").read_text() in guide


def test_workflow_passes_against_its_own_baseline_and_fails_on_a_regression(project):
    summary = project / "summary.md"
    # the maintainer's deliberate step: run once, keep the result as the baseline
    first = CliRunner().invoke(main, workflow_commands()[0])
    assert first.exit_code == 0, first.output
    update = CliRunner().invoke(
        main, ["baseline", "update", "results/candidate.json", "--to", "ci/baseline.json"]
    )
    assert update.exit_code == 0, update.output
    assert (project / "ci" / "baseline.json").read_bytes() == (
        project / "results" / "candidate.json"
    ).read_bytes()

    assert run_workflow(summary) == [0, 0]
    text = summary.read_text()
    assert text.startswith("# ragaudit compare: candidate.json vs baseline.json\n")
    assert "| correct | 60 |" in text and "SIGNIFICANT" not in text.split("verdict:")[0]

    # a pull request that breaks ingestion: every document keeps only its first quarter
    for doc in (project / "corpus").iterdir():
        body = doc.read_text()
        doc.write_text(body[: len(body) // 4])
    summary.unlink()
    # the edited documents change the corpus fingerprint: the gate refuses (exit 2), as the
    # questions are no longer the same experiment, until the change is acknowledged
    assert run_workflow(summary) == [0, 2]
    assert run_workflow(summary, "--allow-different-data") == [0, 1]
    text = summary.read_text()
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if " | " in line}
    assert rows["correct"].endswith("| SIGNIFICANT |")
    assert rows["recall@k"].endswith("| SIGNIFICANT |")


def _write(path: Path, values: dict[str, dict[str, float]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))


def run_example(folder: Path, candidate: dict[str, dict[str, float]]) -> Any:
    baseline = {f"q{i:02d}": {"correct": 1.0, "recall@k": 1.0} for i in range(30)}
    _write(folder / "ci" / "baseline.json", baseline)
    _write(folder / "results" / "candidate.json", candidate)
    shutil.copy(EXAMPLES / "test_rag_regression.py", folder / "test_rag_regression.py")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "test_rag_regression.py", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_example_test_file_passes_then_fails(tmp_path):
    # 4 questions wrong: a drop without evidence (2^(1-4) > 0.05), the test passes
    noisy = {f"q{i:02d}": {"correct": float(i >= 4), "recall@k": 1.0} for i in range(30)}
    passed = run_example(tmp_path / "pass", noisy)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "1 passed" in passed.stdout
    # 9 questions wrong: McNemar exact p = 2 * 0.5**9 < 0.05, the test fails and names them
    worse = {f"q{i:02d}": {"correct": float(i >= 9), "recall@k": 1.0} for i in range(30)}
    failed = run_example(tmp_path / "fail", worse)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    out = failed.stdout
    assert "significantly worse than baseline 'baseline' on correct" in out
    assert "worse on 9 question(s): q00, q01, q02, q03, q04, q05, q06, q07, q08" in out
    assert "mean A  mean B" in out  # the comparison table follows
