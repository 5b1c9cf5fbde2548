"""judged@k in ``funnel A B``, ``labels bias``, ``compare --all`` and ``baseline update``.

Expected values: ir_measures' ``Judged@k`` on the demo runs' rankings lifted to documents
(:func:`test_judged_beside.ir_judged`), or by hand with
``judged@k = |labelled documents in the top k| / min(k, |documents in the top k|)``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import write_saved_run
from ragaudit.diagnose.compare import compare_directory
from ragaudit.exceptions import UnjudgedWarning
from ragaudit.reports.renderer import render
from ragaudit.reports.stats import matrix_report

from .test_judged_beside import K3, K6, demo, ir_judged, mean, saved

__all__ = ["demo"]  # the module fixture, shared


def invoke(*args: object) -> tuple[dict | str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout) if "json" in args else result.stdout
    return out, result.stderr


def test_funnel_of_two_runs(demo: Path):
    a, b = demo / f"{K3}.json", demo / f"{K6}.json"
    labels = demo / "chunk_labels.yaml"
    data, stderr = invoke("funnel", a, b, "--labels", labels, "--format", "json")
    judged = data["judged"]
    got = [r["doc"]["mean"] for r in judged["runs"]]
    assert got == pytest.approx([mean(ir_judged(a, 3)), mean(ir_judged(b, 6))], abs=1e-12)
    assert all(r["chunk"] is not None for r in judged["runs"])  # chunk labels: chunk level too
    assert judged["pairs"][0]["k"] == 3
    assert stderr.splitlines() == [f"ragaudit: warning: {w}" for w in judged["warnings"]]
    assert any(w.startswith(f"{K6}: judged@6 (document level) is ") for w in judged["warnings"])
    # --k 2: both runs and the pair at the funnel's depth
    data, _ = invoke("funnel", a, b, "--k", "2", "--format", "json")
    runs = data["judged"]["runs"]
    assert [r["doc"]["metric"] for r in runs] == ["judged@2", "judged@2"]
    assert runs[1]["doc"]["mean"] == pytest.approx(mean(ir_judged(b, 2)), abs=1e-12)
    text, stderr = invoke("funnel", a, b, "--judged-threshold", "0")
    assert "judged@" not in stderr
    line = f"{K6}: judged@6, the share of each top 6 that carries a label: document level"
    assert line in text and f"{K6} - {K3}: judged@3 (document level)" in text


def test_labels_bias(demo: Path):
    run, labels = demo / f"{K6}.json", demo / "chunk_labels.yaml"
    data, stderr = invoke("labels", "bias", run, "--labels", labels, "--format", "json")
    (own,) = data["judged"]["runs"]
    assert own["doc"]["mean"] == pytest.approx(mean(ir_judged(run, 6)), abs=1e-12)
    assert own["chunk"]["metric"] == "judged@6" and data["judged"]["pairs"] == []
    assert "judged@6 (document level) is" in stderr
    data, _ = invoke("labels", "bias", run, "--labels", labels, "--k", "2", "--format", "json")
    assert data["judged"]["runs"][0]["doc"]["mean"] == pytest.approx(
        mean(ir_judged(run, 2)), abs=1e-12
    )
    markdown, _ = invoke("labels", "bias", run, "--labels", labels, "--format", "markdown")
    assert f"unjudged: {K6}: judged@6 (document level) is" in markdown
    _, stderr = invoke("labels", "bias", run, "--labels", labels, "--judged-threshold", "0")
    assert "judged@" not in stderr


def three_runs(folder: Path) -> Path:
    """12 questions each; judged@2 by hand: a (1/2 + 0/2) / 2 = 1/4, b (1/2 + 1) / 2 = 3/4,
    c (1/2 + 1/2) / 2 = 1/2."""
    runs = {
        "a": [["G", "X"], ["X", "Y"]],
        "b": [["G", "X"], ["G", "G"]],
        "c": [["G", "X"], ["Y", "G"]],
    }
    folder.mkdir()
    for name, rankings in runs.items():
        write_saved_run(folder / f"{name}.json", saved(name, rankings * 6, 2))
    return folder


def test_compare_all(tmp_path: Path):
    folder = three_runs(tmp_path / "runs")
    args = ["compare", "--all", folder, "-m", "hit@k", "--resamples", "100",
            "--permutations", "100"]  # fmt: skip
    data, stderr = invoke(*args, "--format", "json")
    judged = data["judged"]
    assert [r["doc"]["mean"] for r in judged["runs"]] == [1 / 4, 3 / 4, 1 / 2]
    gaps = {(p["run_a"], p["run_b"]): p["gap"] for p in judged["pairs"]}
    assert gaps == pytest.approx({("a", "b"): 1 / 2, ("a", "c"): 1 / 4, ("b", "c"): -1 / 4})
    # a is below 0.5 on half its questions; every pair differs by more than 0.1
    assert len(judged["warnings"]) == 1 + 3
    assert stderr.splitlines() == [f"ragaudit: warning: {w}" for w in judged["warnings"]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        matrix = compare_directory(folder, "hit@k", n_resamples=100, n_permutations=100)
    assert [str(w.message) for w in caught if w.category is UnjudgedWarning] == judged[
        "warnings"
    ]
    assert json.loads(render(matrix_report(matrix), "json")) == data  # library == command
    text, _ = invoke(*args)
    assert "b: judged@2, the share of each top 2 that carries a label: document level 0.750" \
        in text
    quiet, stderr = invoke(*args, "--judged-margin", "0.5", "--judged-threshold", "0",
                           "--format", "json")  # fmt: skip
    assert quiet["judged"]["warnings"] == [] and stderr == ""
    other, stderr = invoke(*args[:3], "-m", "correct", "--format", "json")
    assert "judged" not in other and stderr == ""  # not a retrieval metric


def test_baseline_update(tmp_path: Path):
    folder = three_runs(tmp_path / "runs")
    target = tmp_path / "baseline.json"
    data, stderr = invoke("baseline", "update", folder / "b.json", "--to", target,
                          "--format", "json")  # fmt: skip
    (now,) = data["judged"]["runs"]
    assert now["doc"]["mean"] == 3 / 4 and now["doc"]["run"] == str(folder / "b.json")
    assert stderr == ""  # b: no question below 0.5
    data, stderr = invoke("baseline", "update", folder / "a.json", "--to", target,
                          "--format", "json")  # fmt: skip
    before, now = data["judged"]["runs"]
    assert (before["doc"]["mean"], now["doc"]["mean"]) == (3 / 4, 1 / 4)
    assert before["doc"]["run"] == f"{target} (previous)"
    assert data["judged"]["pairs"][0]["gap"] == -1 / 2
    assert len(stderr.splitlines()) == 2 and "favours " + f"{target} (previous)" in stderr
    # per-question values: no ranking, no judged@k
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"q1": {"hit@k": 1.0}}))
    data, stderr = invoke("baseline", "update", flat, "--to", target, "--format", "json")
    assert "judged" not in data and stderr == ""
