"""``demo --repeats 3``: three generations of every question at the reader's temperature,
stored in the runs it writes, and the audit's repeats numbers are the library's on those
files (read back).  One demo run, so marked slow (about 10 CPU-seconds)."""

from __future__ import annotations

import pytest

from ragaudit.cli.demo import DEMO_TEMPERATURE, run_demo
from ragaudit.data.records import load_saved_run
from ragaudit.diagnose.repeats import analyse_repeats


@pytest.mark.slow
def test_demo_repeats_shows_a_real_budget_and_flaky_list(tmp_path):
    lines: list[str] = []
    demo = run_demo(tmp_path, lines.append, repeats=3)
    assert demo.out_dir == tmp_path / "repeats-3"
    text = "\n".join(lines)
    for run, audited in zip(demo.runs.values(), demo.audit.runs, strict=True):
        saved = load_saved_run(run.path)
        assert saved.repeats == 3 and saved.config.get("reader_temperature") == DEMO_TEMPERATURE
        again = analyse_repeats(saved)
        shown = audited.repeats
        assert again is not None and shown is not None
        flaky = [shown.ids[f.index] for f in shown.flaky]
        assert [again.ids[f.index] for f in again.flaky] == flaky
        assert again.budget.components == shown.budget.components
        assert len(shown.flaky) > 0 and shown.budget.shares["generations"] > 0  # real variation
        assert f"flaky questions: {len(shown.flaky)} of {shown.n_questions} answerable" in text
        row = audited.dashboard[-1]
        assert (row.key, row.count) == ("flaky", len(shown.flaky))
