"""A saved run read in a helper process (``data/saved_run/helper.py``) is the model an
in-process read makes, or the helper steps aside and the file is read here.

The oracle is :func:`ragaudit.data.records.load_saved_run` of the same file (the msgspec
reader, itself held to the standard-library reader by ``test_fast_reader.py``); models are
compared as ``test_fast_reader.py`` compares them: the run's JSON (``1``, ``1.0`` and ``true``
differ there) and the type of every field and retrieved column.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ragaudit.data import records
from ragaudit.data.records import load_saved_run, load_saved_runs
from ragaudit.data.saved_run import fast, helper
from ragaudit.data.saved_run.fast_rows import CheckedBatch
from ragaudit.data.saved_run.helper import Helper, _decoded, _encoded, start_helper
from ragaudit.diagnose.compare import compare_runs
from ragaudit.exceptions import FormatError, UnjudgedWarning

from .conftest import model_shape

pytest.importorskip("msgspec")


def _row(rng: random.Random, i: int) -> dict:
    """A row of many shapes: int and float scores, ranks in and out of order or absent,
    null and absent optional keys, the legacy ``error`` key, ids shared across rows."""
    docs = [f"d{rng.randrange(40)}-é" for _ in range(rng.randrange(0, 6))]
    retrieved = [{"chunk_id": f"{d}#{j % 3}", "doc_id": d} for j, d in enumerate(docs)]
    for j, entry in enumerate(retrieved):
        if i % 4:
            entry["score"] = [1.5 - j, j, None][i % 3]
        if i % 5:
            entry["rank"] = j + 1 if i % 7 else len(retrieved) - j
    row: dict = {"id": f"q{i}", "retrieved": retrieved, "question": f"why {i}?"}
    if i % 3:
        row["context_ids"] = [e["chunk_id"] for e in retrieved[:2]]
    if i % 2:
        row.update(gold_docs=docs[:1], keywords=["a", "b"][: i % 3], tags=None)
    if i % 6 == 1:
        row["error"] = "timeout"  # the old name of generation_error
    row["judges"] = {"correct": [True, False, None, 1][i % 4], "reasons": {"x": "y"}}
    row["metrics"] = {"recall@k": [0.5, 1, 0, None][i % 4], "correct": [1.0, 0.0, True][i % 3]}
    row["latency_ms"] = None if i % 2 else {"total": 12.5 + i}
    return row


def _write(path: Path, n: int, seed: int = 0, indent: int | None = 1) -> Path:
    rng = random.Random(seed)
    doc = {"format": "ragaudit.run", "format_version": 1, "name": path.stem,
           "config": {"k": 2, "retrieval_depth": 5}, "rows": [_row(rng, i) for i in range(n)],
           "summary": {"n_generation_errors": 0}}  # fmt: skip
    path.write_text(json.dumps(doc, indent=indent, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def helped(monkeypatch):
    """Helpers for every file, on any machine (the size and core thresholds lifted)."""
    monkeypatch.setattr(records, "LARGE_RUN_BYTES", 0)
    monkeypatch.setattr(helper, "cores", lambda: 2)
    monkeypatch.delenv(helper.HELPERS_ENV, raising=False)
    monkeypatch.delenv(fast.READER_ENV, raising=False)


@pytest.mark.parametrize("indent", [None, 1])
@pytest.mark.parametrize("n", [0, 1, 2_500])  # 2,500 rows: several slices in the helper
def test_a_helper_reads_the_model_an_in_process_read_makes(tmp_path, helped, n, indent):
    path = _write(tmp_path / "run.json", n, indent=indent)
    started = start_helper(str(path))
    assert started is not None
    run = started.result()
    assert run is not None, "the helper doubted a good file"
    assert model_shape(run) == model_shape(load_saved_run(path))
    assert started._process.poll() == 0 and started._batches.closed


def test_load_saved_runs_reads_the_later_runs_in_helpers(tmp_path, monkeypatch, helped):
    paths = [_write(tmp_path / f"r{i}.json", 300, seed=i) for i in range(3)]
    results: list = []
    real = Helper.result
    monkeypatch.setattr(Helper, "result", lambda self: results.append(real(self)) or results[-1])
    runs = load_saved_runs(paths)
    assert [r is not None for r in results] == [True]  # cores() - 1 = one helper, for r1
    assert [model_shape(r) for r in runs] == [model_shape(load_saved_run(p)) for p in paths]


def test_a_file_the_helper_doubts_is_read_here_with_the_usual_message(tmp_path, helped):
    good = _write(tmp_path / "good.json", 50)
    bad = _write(tmp_path / "bad.json", 50)
    bad.write_text(bad.read_text(encoding="utf-8").replace('"correct": 1.0', '"correct": 1.5'))
    started = start_helper(str(bad))
    assert started is not None and started.result() is None
    with pytest.raises(FormatError) as expected:
        load_saved_run(bad)
    with pytest.raises(FormatError) as found:
        load_saved_runs([good, bad])
    assert str(found.value) == str(expected.value)
    assert "rows[0].metrics.correct" in str(found.value) and "found 1.5" in str(found.value)


def test_a_killed_helper_is_a_doubt_and_the_file_is_read_here(tmp_path, helped):
    path = _write(tmp_path / "run.json", 200)
    started = start_helper(str(path))
    assert started is not None
    started._process.kill()
    assert started.result() is None
    assert started._batches.closed


def test_no_helper_when_it_cannot_help(tmp_path, monkeypatch, helped):
    path = str(_write(tmp_path / "run.json", 5))
    with monkeypatch.context() as patch:
        patch.setenv(helper.HELPERS_ENV, "0")
        assert start_helper(path) is None
    with monkeypatch.context() as patch:
        patch.setattr(fast, "ENABLED", False)  # no msgspec reader: nothing to hand over
        assert start_helper(path) is None
    with monkeypatch.context() as patch:
        patch.setattr(helper, "cores", lambda: 1)
        assert start_helper(path) is None
    with monkeypatch.context() as patch:
        patch.setattr(records, "LARGE_RUN_BYTES", 1 << 40)  # small files are read here
        started: list = []
        patch.setattr(helper, "start_helper", started.append)  # looked up at each call
        assert [r.name for r in load_saved_runs([path, path])] == ["run", "run"]
        assert started == []
    started = []
    monkeypatch.setattr(helper, "start_helper", started.append)  # returns None: read here
    assert [r.name for r in load_saved_runs([path, path])] == ["run", "run"]
    assert started == [path]  # the same call asks for a helper once the file counts as large


def test_batches_go_across_as_they_were_checked():
    """The codes stand for the same strings; other columns are untouched."""
    codes: dict[str, int] = {}
    strings: list[str] = []
    for chunks, scores, kinds in (
        (["a#0", "b#0", "a#0"], [2.0, 1.0, 0.5], {float}),
        (["b#0", "c#1"], [3, None], {int, type(None)}),
    ):
        columns = {"chunk_id": chunks, "doc_id": [c[0] for c in chunks], "score": scores,
                   "rank": [1] * len(chunks), "question": ["q?"]}  # fmt: skip
        batch = CheckedBatch(["q1"], [len(chunks)], columns, kinds, {int})
        back = _decoded(_encoded(batch, codes), strings)
        assert back.columns["chunk_id"] == chunks and back.columns["doc_id"] == columns["doc_id"]
        assert list(back.columns["score"]) == scores
        assert back._replace(columns={}) == batch._replace(columns={})
    assert strings == ["a#0", "b#0", "a", "b", "c#1", "c"]  # each string sent once


def test_compare_gives_the_same_comparison_with_and_without_helpers(tmp_path, monkeypatch, helped):
    a = _write(tmp_path / "a.json", 400, seed=1)
    b = _write(tmp_path / "b.json", 400, seed=2)
    with pytest.warns(UnjudgedWarning) as helped_warnings:
        helped_result = compare_runs(a, b, n_resamples=200).to_dict()
    monkeypatch.setenv(helper.HELPERS_ENV, "0")
    with pytest.warns(UnjudgedWarning) as warnings_here:
        assert compare_runs(a, b, n_resamples=200).to_dict() == helped_result
    assert [str(w.message) for w in helped_warnings] == [str(w.message) for w in warnings_here]


def test_a_cpu_quota_caps_the_cores(tmp_path, monkeypatch):
    """A container limited to one CPU that sees more starts no helper."""
    quota, period = tmp_path / "cfs_quota_us", tmp_path / "cfs_period_us"
    period.write_text("100000\n")
    for written, expected in (("-1\n", None), ("250000\n", 2.5), ("50000\n", 0.5)):
        quota.write_text(written)
        assert helper.cpu_quota([[str(tmp_path / "absent")], [str(quota), str(period)]]) == expected
    monkeypatch.setattr(helper.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(helper, "cpu_quota", lambda: 1.5)
    assert helper.cores() == 1
    monkeypatch.setattr(helper, "cpu_quota", lambda: None)
    assert helper.cores() == 4


# The modules the helper process imports (its own package aside): a file of any of these
# names in the working directory must never be imported by it (adversarial pass 3, item 6).
_PLANTED = ["msgspec", "pickle", "array", "tempfile", "gc", "json", "numpy", "ragaudit"]


@pytest.mark.parametrize("name", _PLANTED)
def test_a_module_planted_in_the_working_directory_is_never_imported(
    tmp_path, helped, monkeypatch, name
):
    path = _write(tmp_path / "run.json", 3)
    planted = tmp_path / "cwd"
    planted.mkdir()
    marker = tmp_path / "executed"
    (planted / f"{name}.py").write_text(
        f"open({str(marker)!r}, 'w').write('planted {name} ran')\n", encoding="utf-8"
    )
    monkeypatch.chdir(planted)
    monkeypatch.setenv("PYTHONPATH", str(planted))  # -I ignores PYTHON* variables too
    started = start_helper(str(path))
    assert started is not None
    run = started.result()
    assert not marker.exists(), marker.read_text()
    assert run is not None and model_shape(run) == model_shape(load_saved_run(path))


def test_a_stopped_helper_is_given_up_on_and_the_file_read_here(tmp_path, helped):
    import os
    import signal

    path = _write(tmp_path / "run.json", 3)
    started = start_helper(str(path))
    assert started is not None
    os.kill(started._process.pid, signal.SIGSTOP)  # a helper that never finishes
    started.timeout = 0.5
    assert started.result() is None  # not a hang: the caller reads the file itself
    assert started._process.poll() is not None  # and the stopped helper was killed
