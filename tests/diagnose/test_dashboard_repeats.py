"""The dashboard of a repeated run: its judged rows are means over repeats with the
question-clustered interval, the very number of the repeats section; the funnel says it is
repeat 0's; an unrepeated run is untouched.

Fixture: the hand-written plan of tests/diagnose/test_repeats_show.py (five answerable
questions and one unanswerable, three repeats each); every expected count below is counted
from that table, by hand, in the comments.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.audit import build_audit
from ragaudit.reports.audit_page import audit_report
from ragaudit.reports.renderer import render
from ragaudit.stats.mde import run_mde

from .test_repeats_show import OK, _plan, _row, repeated_run


@pytest.fixture(scope="module")
def audit():
    return build_audit([repeated_run(_plan())], n_resamples=50)


def _rows(audit):
    return {row.key: row for row in audit.runs[0].dashboard}


def test_correctness_is_the_mean_over_repeats_of_the_repeats_section(audit):
    row = _rows(audit)["correct"]
    # correct cells: q1 1,1,1  q2 1,0,1  q3 1,0,0  q4 0,0,0  q5 0,1,0 -> 7 of 15
    assert row.value == pytest.approx(7 / 15)
    assert row.label == "end-to-end correctness, mean of 3 repeats"
    mean = audit.runs[0].repeats.mean  # the repeats section's number: one number, one interval
    assert (row.value, row.ci_low, row.ci_high, row.interval) == (
        mean.statistic, mean.confidence_interval.low, mean.confidence_interval.high,
        mean.method)  # fmt: skip
    assert row.ci_low < row.value < row.ci_high
    assert row.n == 5 and row.count is None and row.size == "n=5"
    assert row.decided == (15, 15) and row.decided_text == "decided 15/15 cells"
    # the MDE of a comparison of per-question means: (1, 2/3, 1/3, 0, 1/3)
    assert row.mde == run_mde([1, 2 / 3, 1 / 3, 0, 1 / 3], discordance=0.2).mde


def test_wrong_abstention_over_the_cells_that_qualify(audit):
    rows = _rows(audit)
    refused = rows["over_refusal"]
    # evidence in the context: q1 x3, q2 x3, q3 x3, q5 repeat 1 -> 10 cells, 4 questions;
    # refused: q3 repeat 1 -> 1 of 10
    assert refused.value == pytest.approx(0.1) and refused.n == 4
    assert refused.label.endswith("mean of 3 repeats")
    # decided: every cell but those left undecided at stages 1-2 (none here) -> 15 of 15
    assert refused.decided == (15, 15)
    una = rows["answered_unanswerable"]
    # u1 refused in all 3 repeats: 0 of 3 cells, one question: no interval over questions
    assert una.value == 0.0 and una.n == 1 and una.ci_low is None


def test_funnel_is_labelled_repeat_0_in_text_markup_and_html(audit):
    report = audit.to_report()
    assert "FUNNEL (rep: k=1, n=5 answerable, repeat 0 of 3)" in render(report, "table")
    assert "rep (k=1, n=5 answerable questions, repeat 0 of 3)" in render(report, "markdown")
    html = render(audit_report(audit), "html")
    assert "answerable questions, repeat 0 of 3)" in html
    assert "mean of 3 repeats" in html and "decided 15/15 cells" in html
    data = audit.to_dict()["runs"][0]["dashboard"]
    assert {d["key"]: d["decided"] for d in data}["correct"] == {"n": 15, "of": 15,
                                                                 "unit": "cells"}  # fmt: skip


def test_an_unrepeated_run_keeps_its_dashboard():
    rows = [_row(f"q{i}", OK) for i in range(4)]
    one = build_audit([SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": rows})],
                      n_resamples=50)  # fmt: skip
    row = {r.key: r for r in one.runs[0].dashboard}["correct"]
    assert row.label == "end-to-end correctness" and row.size == "4/4"
    assert row.decided_text.startswith("decided ") and "cells" not in row.decided_text
    text = render(one.to_report(), "table")
    assert "repeat 0 of" not in text and "mean of" not in text and "repeated runs:" not in text
    assert np.isclose(row.value, 1.0)
