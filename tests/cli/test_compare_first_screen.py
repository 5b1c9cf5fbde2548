"""`compare A B` prints the decision on the first screen; the rest is behind --full (issue 32
item 14: it printed 169 lines on the book's golden set, a paired view per metric before any
verdict)."""

from __future__ import annotations

from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.diagnose.compare import compare_runs
from ragaudit.reports.renderer import render
from ragaudit.reports.stats import comparison_report
from ragaudit.reports.verdict_sentence import FULL_HINT

K3, K6 = "tests/data/stats/k3.json", "tests/data/stats/k6.json"
OPTIONS = ["--resamples", "300", "--permutations", "300"]


def _compare(*extra: str) -> str:
    result = CliRunner().invoke(main, ["compare", K3, K6, *OPTIONS, *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_default_is_the_table_and_the_verdict_sentence():
    out = _compare()
    lines = out.splitlines()
    assert len(lines) <= 30, len(lines)
    assert lines[0].startswith("A = k3_cs800   B = k6_cs800   (") and lines[0].endswith("seed 0")
    table = next(i for i, line in enumerate(lines) if line.startswith("metric "))
    verdict = next(i for i, line in enumerate(lines) if line.startswith("verdict: k6_cs800 vs "))
    assert table < verdict and "moved for real: " in lines[verdict]
    assert lines[-1] == FULL_HINT
    for detail in (
        "paired view of correct",
        "what each comparison rules out",
        "interval: McNemar exact inverted",
    ):
        assert detail not in out, detail  # fmt: skip


def test_full_prints_every_section_and_the_library_prints_both():
    full = _compare("--full")
    for detail in (
        "paired view of correct",
        "what each comparison rules out",
        "interval: McNemar exact inverted",
        "verdict: SIGNIFICANT = ",
    ):
        assert detail in full, detail  # fmt: skip
    assert len(full.splitlines()) > 2 * len(_compare().splitlines())
    result = compare_runs(K3, K6, n_resamples=300, n_permutations=300)
    assert render(comparison_report(result, full=False), "table") == _compare()
    assert render(comparison_report(result), "table") == full  # the library's default: all
    assert render(result.to_report(), "table") == full


def test_a_zero_width_interval_is_explained_not_left_beside_none_detectable():
    # Issue 32 item 18: with every difference equal (a run against itself, a bootstrap
    # interval), "[+0.000, +0.000]" stood beside "MDE: none detectable" without a word.
    args = ["compare", K3, K3, *OPTIONS, "-m", "recall@k", "-m", "correct", "--ci", "bootstrap"]
    short = CliRunner().invoke(main, args)
    assert short.exit_code == 0, short.output
    assert ("zero-width intervals (recall@k, correct): every question differs by the same "
            "amount, no spread to measure, not proof of no change") in short.stdout  # fmt: skip
    full = CliRunner().invoke(main, [*args, "--full"]).stdout
    for metric in ("recall@k", "correct"):
        line = next(x for x in full.splitlines() if x.startswith(f"  {metric}: no evidence"))
        assert "none detectable" in line and line.endswith(
            "every question has the same difference (+0.000), so the interval has zero width: "
            "the data show no spread, which is not proof that no change exists"
        ), line
