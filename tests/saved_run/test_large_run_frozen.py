"""A large saved run is set aside from the cyclic garbage collector once loaded.

``load_saved_run`` freezes the heap (:func:`gc.freeze`) after loading a file of
``LARGE_RUN_BYTES`` or more; the threshold is lowered here so that a small file counts.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from ragaudit.data import records


def _write_run(path: Path) -> Path:
    rows = [{"id": f"q{i}", "retrieved": [{"chunk_id": f"d{i}#0", "doc_id": f"d{i}"}]}
            for i in range(3)]  # fmt: skip
    doc = {"format": "ragaudit.run", "format_version": 1, "name": "r", "config": {"k": 1},
           "rows": rows}  # fmt: skip
    path.write_text(json.dumps(doc, indent=1))
    return path


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()  # later tests see the collector as it was


def test_a_large_run_is_frozen_with_its_questions(tmp_path, monkeypatch, unfrozen):
    path = _write_run(tmp_path / "r.json")
    monkeypatch.setattr(records, "LARGE_RUN_BYTES", path.stat().st_size)
    run = records.load_saved_run(path)
    assert gc.get_freeze_count() > 0
    assert [q.id for q in run.questions] == ["q0", "q1", "q2"]


def test_a_small_run_leaves_the_collector_alone(tmp_path, monkeypatch, unfrozen):
    path = _write_run(tmp_path / "r.json")
    monkeypatch.setattr(records, "LARGE_RUN_BYTES", path.stat().st_size + 1)
    records.load_saved_run(path)
    assert gc.get_freeze_count() == 0
