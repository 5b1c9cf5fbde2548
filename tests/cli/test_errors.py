"""One error style on every command: one line, FILE: expected ..., found ..., exit 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.cli._errors import error_line

MISSING = "no/such/file.json"
QRELS = "tests/data/metrics/qrels.txt"
RUN = "tests/data/metrics/run.txt"
K6 = "tests/data/stats/k6.json"
NOT_FOUND = f"ragaudit: error: {MISSING}: expected an existing file, found nothing at this path\n"

COMMANDS = [
    ["evaluate", "--qrels", MISSING, "--run", RUN],
    ["evaluate", "--qrels", QRELS, "--run", MISSING],
    ["compare", MISSING, K6],
    ["funnel", MISSING],
    ["show", MISSING],
    ["import", MISSING],
    ["agreement", MISSING, QRELS],
    ["labels", "bias", MISSING, "--labels", QRELS],
    ["run", "--corpus", "tests/data/harness/corpus", "--golden", MISSING],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_missing_file_is_one_line_and_exit_2(args):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.stderr == NOT_FOUND
    assert result.stdout == ""


def test_a_directory_where_a_file_is_expected():
    result = CliRunner().invoke(main, ["funnel", "tests"])
    # click's own path check or ours: either way one line, exit 2, no errno
    assert result.exit_code == 2
    assert "Errno" not in result.output and "Traceback" not in result.output


def test_output_path_under_a_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(
        main,
        ["run", "--corpus", "tests/data/harness/corpus", "--golden",
         "tests/data/harness/golden.yaml", "--out", str(blocker / "sub"), "--limit", "1"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"ragaudit: error: {blocker}")
    assert "expected a directory, found a file where a directory should be" in result.stderr
    assert "Errno" not in result.stderr and len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (
            PermissionError(13, "Permission denied", "secret.txt"),
            "ragaudit: error: secret.txt: expected a readable file, found permission denied",
        ),
        (
            IsADirectoryError(21, "Is a directory", "runs"),
            "ragaudit: error: runs: expected a file, found a directory",
        ),
        (
            OSError(5, "Input/output error"),
            "ragaudit: error: input: expected a readable file, found input/output error",
        ),
    ],
)
def test_error_line_for_os_errors(exc, line):
    assert error_line(exc) == line
