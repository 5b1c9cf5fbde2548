"""The shared shape of the bad-input tables (:mod:`tests.formats.test_bad_inputs` for ranking,
label and golden files, :mod:`tests.formats.test_bad_saved_runs` for saved runs and human
verdicts): one :class:`Case` per input, run through the command that reads it, and the check
every row makes (one ``ragaudit: error:`` line and exit 2, or exit 0 and the right MRR).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from ragaudit.cli import main

HARNESS = Path(__file__).parent.parent / "data" / "harness"
BOM = b"\xef\xbb\xbf"
GOOD_RUN = b"q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 c 1 1.0 t\n"
GOOD_QRELS = b"q1 0 a 1\nq2 0 c 1\n"
DEEP = 100_000
CHUNK_LABELS_HEAD = b"format: ragaudit.chunk_labels\nversion: 1\n"
STATS = Path(__file__).parent.parent / "data" / "stats"
SAVED_RUN_HEAD = b'{"format": "ragaudit.run", "format_version": 1, "name": "r", '
BOMB = b'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + b"".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n".encode()
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


@dataclass(frozen=True)
class Case:
    """One bad (or edge) input: which command reads it, the file, and the outcome."""

    id: str
    command: str  # "run" (evaluate --run), "qrels", "chunk-map", "labels" (agreement),
    # "chunk-labels" (funnel --labels), "golden", "saved-run" (import), "human" (calibrate)
    name: str
    content: bytes
    message: str | None = None  # regex of the one-line error
    mrr: float | None = None  # the expected mean reciprocal rank (value rows)


def invoke_case(case: Case, tmp_path: Path) -> tuple[int, str]:
    path = tmp_path / case.name
    path.write_bytes(case.content)
    qrels, run = tmp_path / "default.qrels", tmp_path / "default.run"
    qrels.write_bytes(GOOD_QRELS)
    run.write_bytes(GOOD_RUN)
    if case.command in ("run", "qrels", "chunk-map"):
        args = ["evaluate", "-m", "mrr", "--format", "json"]
        args += ["--qrels", str(path if case.command == "qrels" else qrels)]
        if case.command == "chunk-map":
            (tmp_path / "chunks.run").write_bytes(GOOD_RUN)
            args += ["--run", str(tmp_path / "chunks.run"), "--chunk-map", str(path)]
            (tmp_path / "doc.qrels").write_bytes(b"q1 0 D1 1\nq2 0 D3 1\n")
            args[args.index("--qrels") + 1] = str(tmp_path / "doc.qrels")
        else:
            args += ["--run", str(path if case.command == "run" else run)]
    elif case.command == "labels":
        args = ["agreement", str(path), str(path)]
    elif case.command == "chunk-labels":
        args = ["funnel", str(STATS / "k3.json"), "--labels", str(path)]
    elif case.command == "saved-run":
        args = ["import", str(path)]
    elif case.command == "human":
        args = ["calibrate", str(STATS / "k3.json"), "--human", str(path)]
    else:
        args = ["run", "--corpus", str(HARNESS / "corpus"), "--golden", str(path)]
        args += ["--out", str(tmp_path / "out"), "--no-timing"]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


def check_case(case: Case, tmp_path: Path) -> None:
    """The assertions of one row (see the module docstring)."""
    code, output = invoke_case(case, tmp_path)
    assert "Traceback" not in output
    if case.message is None:
        assert code == 0, output
        assert re.search(rf'"mrr": {case.mrr}\b', output), output
        return
    assert code == 2, output
    lines = [line for line in output.splitlines() if line.startswith("ragaudit: error:")]
    assert len(lines) == 1 and len(lines[0]) < 400, output[:2000]
    assert re.search(case.message, lines[0]), lines[0]
