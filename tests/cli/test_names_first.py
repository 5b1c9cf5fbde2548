"""Metric and gate names are checked before any work, with "did you mean" (issue 32 item 15).

`compare A B -m correct --fail-if-worse correctness` used to print the whole comparison and
only then fail on the gate's name; `-m correctness` listed every valid name without pointing
at `correct`.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import ragaudit.diagnose.compare as library
from ragaudit.cli import main

K3, K6 = "tests/data/stats/k3.json", "tests/data/stats/k6.json"


@pytest.fixture
def no_work(monkeypatch):
    """Record whether the runs were read and whether a comparison was computed."""
    done: list[str] = []
    read, compared = library.load_per_question_metrics, library.compare_loaded

    def reading(*args, **kwargs):
        done.append("read")
        return read(*args, **kwargs)

    def comparing(*args, **kwargs):
        done.append("compared")
        return compared(*args, **kwargs)

    monkeypatch.setattr(library, "load_per_question_metrics", reading)
    monkeypatch.setattr(library, "compare_loaded", comparing)
    return done


@pytest.mark.parametrize(
    ("extra", "message", "work"),
    [
        (["-m", "correct", "--fail-if-worse", "correctness"],
         "--fail-if-worse: 'correctness' is not a compared metric; did you mean 'correct'? "
         "compared: correct", []),
        (["-m", "correct", "-m", "recall@k", "--fail-if-worse", "recal@k"],
         "--fail-if-worse: 'recal@k' is not a compared metric; did you mean 'recall@k'? "
         "compared: correct, recall@k", []),
        (["--fail-if-worse", "correctness"],
         "--fail-if-worse: 'correctness' is not a compared metric; did you mean 'correct'? "
         "compared: ", ["read", "read"]),
        (["-m", "correctness"],
         "unknown metric 'correctness'; did you mean 'correct'? valid metrics are: hit@k, ",
         ["read", "read"]),
    ],
    ids=["gate-vs-m", "gate-typo", "gate-all-metrics", "metric"],
)  # fmt: skip
def test_a_misspelt_name_stops_before_the_comparison(no_work, extra, message, work):
    result = CliRunner().invoke(main, ["compare", K3, K6, *extra])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    error = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(error) == 1 and error[0].startswith(f"ragaudit: error: {message}"), error
    assert no_work == work  # never compared; with -m, the runs are not even read


def test_a_gate_under_another_spelling_of_a_compared_metric_passes(no_work):
    result = CliRunner().invoke(
        main, ["compare", K3, K6, "-m", "recall@k", "--fail-if-worse", "R@k"]
    )
    assert result.exit_code in (0, 1), result.output
    assert no_work == ["read", "read", "compared"]
