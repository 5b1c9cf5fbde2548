"""``ragaudit demo`` is a composition of public library calls with typed results: the bundled
benchmark (:mod:`ragaudit.pipeline.bundled`), then :func:`ragaudit.audit`.  The same calls made
by hand give the demo's numbers, and the command holds no computation of its own."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import ragaudit
from ragaudit.pipeline.bundled import (
    CONFIGURATIONS,
    SEED,
    benchmark_paths,
    label_chunks,
    load_benchmark,
    run_configurations,
)

SRC = Path(__file__).parents[2] / "src" / "ragaudit"


@pytest.mark.slow
def test_the_library_calls_give_the_demos_json(tmp_path):
    from ragaudit.cli.demo import demo_report, run_demo
    from ragaudit.reports.renderer import render

    demo = run_demo(tmp_path / "demo", lambda line: None)
    with benchmark_paths() as (corpus, golden):
        bench = load_benchmark(corpus, golden)
        runs = list(run_configurations(bench, tmp_path / "lib", seed=SEED))
        labels = label_chunks(bench, tmp_path / "lib")
    assert [run.name for run in runs] == [c.name for c in CONFIGURATIONS] == list(demo.runs)
    assert (labels.path.read_bytes(), labels.n_questions) == (
        demo.labels.path.read_bytes(),
        demo.labels.n_questions,
    )
    audit = ragaudit.audit(
        runs, labels=labels.path, chunk_texts=bench.chunk_texts, seed=SEED, cluster_by="source"
    )
    expected = json.loads(render(demo_report(demo), "json"))
    got = json.loads(render(audit.to_report(), "json"))
    # the wall-clock p95 latency is the one number that varies from run to run
    for doc in (expected, got):
        for run in doc["runs"]:
            for number in run["dashboard"]:
                if number["key"] == "latency_p95":
                    number.update(value=None, ci_low=None, ci_high=None)
    assert {k: v for k, v in expected.items() if k not in ("benchmark", "files")} == got
    assert expected["benchmark"] == {
        "documents": len(bench.documents), "chunks": len(bench.chunks), "chunk_size": 800,
        "chunk_overlap": 100, "questions": 60, "answerable": 54, "seed": SEED,
    }  # fmt: skip


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    found |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return {m for m in found if m.startswith("ragaudit")}


def test_the_demo_command_only_composes_library_calls():
    imported = _imported(SRC / "cli" / "demo.py")
    # no statistics, no loader, no labeller of its own: the bundled benchmark, the audit, the
    # comparison (--full) and the renderer
    assert not {m for m in imported if m.startswith(("ragaudit.stats", "ragaudit.metrics"))}
    assert {m for m in imported if m.startswith("ragaudit.diagnose")} <= {
        "ragaudit.diagnose.audit", "ragaudit.diagnose.audit_result", "ragaudit.diagnose.compare",
    }  # fmt: skip
    assert {m for m in imported if m.startswith("ragaudit.pipeline")} == {
        "ragaudit.pipeline.bundled"
    }
    # what the demo computed is a typed record, no free-form dictionary
    from dataclasses import fields

    from ragaudit.cli.demo import Demo

    assert not [f.name for f in fields(Demo) if "Any" in str(f.type)]
