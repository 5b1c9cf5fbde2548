"""Progress bars: drawn on a terminal only, silenced by --quiet, never one line per question."""

from __future__ import annotations

import io
import sys
from contextlib import ExitStack

from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.cli._progress import progress_callback

BENCH = "src/ragaudit/benchmark"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def draw(monkeypatch, quiet: bool) -> str:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with ExitStack() as stack:
        tick = progress_callback(stack, "questions", quiet=quiet)
        for done in range(1, 5):
            tick(done, 4)
    return terminal.getvalue()


def test_bar_on_a_terminal_shows_position_rate_and_finishes(monkeypatch):
    out = draw(monkeypatch, quiet=False)
    assert "questions" in out and "4/4" in out and "q/s" in out
    assert out.endswith("\n")  # the bar's line is finished when the command ends


def test_quiet_draws_nothing(monkeypatch):
    assert draw(monkeypatch, quiet=True) == ""


def test_not_a_terminal_draws_nothing(capsys):
    with ExitStack() as stack:
        tick = progress_callback(stack, "questions", quiet=False)
        tick(1, 2)
        tick(2, 2)
    assert capsys.readouterr().err == ""


def test_labels_build_prints_no_line_per_question(tmp_path):
    result = CliRunner().invoke(
        main,
        ["labels", "build", "--corpus", f"{BENCH}/corpus", "--golden", f"{BENCH}/golden.yaml",
         "--out", str(tmp_path / "labels.yaml"), "--limit", "10"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(result.stderr.splitlines()) <= 1  # at most the grade-2 warning
    assert result.stdout.startswith("labelled 10 question(s)")  # the summary, rendered
    assert len(result.stdout.splitlines()) == 1


def test_run_and_judge_accept_quiet(tmp_path):
    result = CliRunner().invoke(
        main,
        ["run", "--corpus", "tests/data/harness/corpus", "--golden",
         "tests/data/harness/golden.yaml", "--out", str(tmp_path), "--quiet", "--no-timing"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    help_text = CliRunner().invoke(main, ["judge", "--help"]).output
    assert "--quiet" in help_text
