"""`import ragaudit` is the notebook API: the documented names, lazily, with to_dict/to_pandas."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import ragaudit
from ragaudit.exceptions import MissingExtraError

DATA = Path(__file__).parent.parent / "data" / "stats"
PUBLIC = [
    "Qrels", "Run", "evaluate", "load_run", "load_qrels", "load_saved_run", "SavedRun",
    "compare_runs", "compute_funnel", "label_bias", "plan",
]  # fmt: skip


def test_all_lists_the_documented_names_and_each_resolves():
    assert set(PUBLIC) <= set(ragaudit.__all__)
    for name in ragaudit.__all__:
        assert getattr(ragaudit, name) is not None, name
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        ragaudit.nope  # noqa: B018


def test_import_ragaudit_loads_nothing_heavy():
    code = (
        "import sys, ragaudit\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'pandas', 'ragaudit.data', 'ragaudit.stats')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_notebook_session():
    qrels = ragaudit.Qrels({"q1": {"A": 1, "B": 1}, "q2": {"C": 1}})
    run = ragaudit.Run({"q1": ["A", "X"], "q2": ["X", "C"]})
    ev = ragaudit.evaluate(qrels, run, ["recall@1", "hit@2"])
    frame = ev.to_pandas()
    # by hand: recall@1 = 1/2 for q1 (A of A, B), 0 for q2; hit@2 = 1 for both
    assert frame.loc["q1", "recall@1"] == 0.5 and frame.loc["q2", "recall@1"] == 0.0
    assert list(frame["hit@2"]) == [1.0, 1.0]
    assert ev.to_dict()["metrics"]["recall@1"] == 0.25

    saved = ragaudit.load_saved_run(DATA / "k3.json")
    rows = saved.to_pandas()
    assert rows.shape[0] == 42 and rows.loc["q01", "recall@k"] == 1.0
    comparison = ragaudit.compare_runs(saved, DATA / "k6.json", ["correct"], n_resamples=200)
    table = comparison.to_pandas()
    assert list(table.index) == ["correct"] and table.loc["correct", "n"] == 42
    assert json.loads(json.dumps(comparison.to_dict()))["metrics"][0]["metric"] == "correct"

    plan = ragaudit.plan([50, 200], [0.2])
    assert list(plan.to_pandas()["n"]) == [50, 200]


def test_to_pandas_without_pandas_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` fail
    qrels = ragaudit.Qrels({"q1": {"A": 1}})
    ev = ragaudit.evaluate(qrels, ragaudit.Run({"q1": ["A"]}), ["hit@1"])
    with pytest.raises(MissingExtraError, match=r"pip install 'ragaudit\[pandas\]'"):
        ev.to_pandas()
