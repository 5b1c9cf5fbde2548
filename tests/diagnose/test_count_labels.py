"""One label per number (issue 32 item 5): counts that look alike are named apart, and one
line says how they relate.

On the book's golden set the funnel's stage 4 said "answer correct 19" beside "end-to-end
correct 23", `run` said "answered 32/42" beside the funnel's stage 3 "model answered 26", and
the saved run's `correct` mean (0.574) counted correct refusals of unanswerable questions.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "harness"
BENCH = Path(__file__).resolve().parents[2] / "src" / "ragaudit" / "benchmark"


def invoke(*args: object) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[str, str]:
    out = tmp_path_factory.mktemp("counts")
    printed = invoke("run", "--corpus", BENCH / "corpus", "--golden", BENCH / "golden.yaml",
                     "--k", 6, "--no-timing", "--quiet", "--out", out)  # fmt: skip
    return printed, str(out / "k6_cs800.json")


def _count(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found, pattern
    return int(found.group(1))


def test_the_run_and_the_funnel_name_their_counts_apart(run):
    printed, path = run
    funnel = invoke("funnel", path)
    # run: answered over any context, end-to-end correct; never a bare "answered"/"correct"
    answered = _count(r"\n  answered \(any context\) +(\d+)/54 ", printed)
    correct = _count(r"\n  end-to-end correct +(\d+)/54 ", printed)
    assert not re.search(r"\n  (answered|correct) +\d", printed)
    assert "end-to-end correct = stage 4 + correct by luck" in printed
    # funnel: stage 3 and 4 say they count only questions through the stages before
    stage3 = _count(r"\n  3 answered with the evidence +(\d+) ", funnel)
    stage4 = _count(r"\n  4 correct through the funnel +(\d+) ", funnel)
    assert "model answered" not in funnel and "answer correct" not in funnel
    # the one line relating them, and its arithmetic
    line = re.search(r"= correct through the funnel \(stage 4\) (\d+) \([\d.]+\) \+ correct by "
                     r"luck (\d+) \([\d.]+\)", funnel)  # fmt: skip
    assert line and int(line.group(1)) == stage4
    assert _count(r"end-to-end correct: +(\d+)/54", funnel) == correct
    assert stage4 + int(line.group(2)) == correct  # no unjudged question in this run
    assert stage3 <= answered  # answered with the evidence is a part of answered (any)


def test_the_saved_means_say_what_they_count(run):
    printed, path = run
    shown = invoke("import", path)
    correct = float(re.search(r"\n  correct \(\+ refused unanswerable\) +([\d.]+) +60\n",
                              shown).group(1))  # fmt: skip
    answered = float(re.search(r"\n  answered \(all questions\) +([\d.]+) +60\n", shown).group(1))
    e2e = _count(r"\n  end-to-end correct +(\d+)/54 ", printed)
    refused = _count(r"\n  refused \(unanswerable\) +(\d+)/6 ", printed)
    assert correct == pytest.approx((e2e + refused) / 60, abs=5e-4)  # a different number...
    assert answered == pytest.approx(_count(r"answered \(any context\) +(\d+)/54", printed)
                                     / 60, abs=5e-4)  # fmt: skip
    dashboard = invoke("report", path, "--format", "markdown", "--out", "-")
    assert "wrong abstention: refused with evidence" in dashboard
    assert "over-refusal" not in dashboard.split("wrong abstention: refused with evidence")[0]
