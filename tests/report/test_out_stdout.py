"""``--out -`` is standard output wherever --out names a file, and a usage error elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

ROOT = Path(__file__).resolve().parents[2]
K3 = "tests/data/stats/k3.json"
QRELS = "tests/data/metrics/qrels.txt"

# Commands whose --out is an optional file: `-` prints what the file would hold.
TO_STDOUT = {
    "report": (["report", "RUN", "--format", "csv"], "number,"),
    "export": (["export", "RUN", "--to", "trec-run"], " q0 "),
    "labels bias": (["labels", "bias", "RUN", "--labels", "LABELS"], "optimism"),
}


def _args(args, bench):
    return [str(bench["k3"]) if a == "RUN" else str(bench["labels"]) if a == "LABELS" else a
            for a in args]  # fmt: skip


@pytest.mark.parametrize("name", sorted(TO_STDOUT))
def test_dash_is_standard_output_and_equals_the_file(name, bench, tmp_path, monkeypatch):
    args, marker = TO_STDOUT[name]
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [*_args(args, bench), "--out", "-"])
    assert result.exit_code == 0, result.output
    assert marker in result.stdout.lower()
    assert list(tmp_path.iterdir()) == []  # no file named "-" (or anything else)
    target = tmp_path / "out.txt"
    to_file = CliRunner().invoke(main, [*_args(args, bench), "--out", str(target)])
    assert to_file.exit_code == 0, to_file.output
    assert result.stdout == target.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args",
    [
        ["demo", "--out", "-"],
        ["labels", "verdicts", K3, "--out", "-"],
        ["judge", K3, "--out", "-"],
        ["import", K3, "--out", "-"],
    ],
)
def test_dash_is_refused_where_the_output_is_a_directory_or_resumable(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = [_abs(a) for a in args]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "--out: expected a path, found '-'" in result.output
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def _abs(arg: str) -> str:
    return str(ROOT / arg) if arg.startswith("tests/") else arg
