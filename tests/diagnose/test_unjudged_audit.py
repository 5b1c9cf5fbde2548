"""judged@k of saved runs: the audit's dashboard row and warnings, ``report`` and ``compare``.

Expected values come from a plain loop over the definition (ir_measures' Judged@k:
labelled items in the top k / min(k, ranking length)) on the demo's runs, read from the JSON
files; the chunk level is checked against ``labels fill``, which reads the corpus to know every
chunk of a gold document, while the audit reads only the run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import load_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.audit import build_audit
from ragaudit.diagnose.judged_beside import saved_pair_judged
from ragaudit.diagnose.unjudged import pair_judged_gap, run_judged
from ragaudit.metrics.judged_runs import gold_doc_labels, saved_run_coverage


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, copy_demo: Callable[[Path], Path]) -> Path:
    # a copy of the session's demo run (tests/conftest.py; issue 32, CPU budget)
    return copy_demo(tmp_path_factory.mktemp("demo"))


def doc_judged_by_hand(path: Path, k: int) -> dict[str, float]:
    """Each answerable question's top k chunks lifted to documents (first occurrence), the
    share that is a gold document."""
    saved = json.loads(path.read_text())
    out = {}
    for row in saved["rows"]:
        if not row.get("answerable", True) or not row.get("gold_docs"):
            continue
        hits = sorted(row["retrieved"], key=lambda h: h["rank"])[:k]
        docs = list(dict.fromkeys(h["doc_id"] for h in hits))
        out[row["id"]] = sum(d in row["gold_docs"] for d in docs) / min(k, len(docs))
    return out


def test_document_level_judged_by_hand(demo: Path):
    for name, k in (("k3_cs800", 3), ("k6_cs800", 6)):
        expected = doc_judged_by_hand(demo / f"{name}.json", k)
        got = run_judged(load_saved_run(demo / f"{name}.json")).doc
        assert got is not None and got.metric == f"judged@{k}" and got.unit == "doc"
        assert got.n_queries == len(expected) == 54
        assert got.mean == pytest.approx(sum(expected.values()) / len(expected), abs=1e-12)
        assert set(got.below) == {q for q, v in expected.items() if v < 0.5}
        assert 0 < len(got.below) < 54  # the demo's runs do leave holes
        # the audit's one-pass loop equals the registry's judged@k on the lifted rankings
        run = load_saved_run(demo / f"{name}.json")
        registry = saved_run_coverage(run, gold_doc_labels(run))
        assert (registry.mean, registry.below) == (pytest.approx(got.mean, abs=1e-12), got.below)
        assert registry.values == pytest.approx(got.values, abs=1e-12)


def test_chunk_level_equals_labels_fill(demo: Path):
    """The audit's chunk judged@k (from the run's doc ids) equals labels fill's (from the
    corpus): k=3 0.698, k=6 0.528 in the fill's report."""
    from ragaudit.cli.demo import benchmark_paths
    from ragaudit.labels.format import load_chunk_labels

    labels = load_chunk_labels(demo / "chunk_labels.yaml")
    runs = [str(demo / f"{n}.json") for n in ("k3_cs800", "k6_cs800")]
    with benchmark_paths() as (corpus, _):
        result = CliRunner().invoke(
            main,
            ["labels", "fill", *runs, "--labels", str(demo / "chunk_labels.yaml"),
             "--corpus", str(corpus), "--out", str(demo / "filled.jsonl"), "--date", "d",
             "--format", "json"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    before = {c["run"]: c["judged_original"] for c in json.loads(result.stdout)["changes"]}
    for path in runs:
        chunk = run_judged(load_saved_run(path), labels).chunk
        assert chunk is not None and chunk.unit == "chunk"
        assert chunk.mean == pytest.approx(before[Path(path).stem], abs=1e-12)


def test_dashboard_row_json_and_threshold(demo: Path):
    runs = [load_saved_run(demo / f"{n}.json") for n in ("k3_cs800", "k6_cs800")]
    audit = build_audit(runs, n_resamples=20, compare_resamples=20)
    expected = doc_judged_by_hand(demo / "k6_cs800.json", 6)
    row = audit.runs[1].dashboard[-1]
    assert (row.key, row.n, row.mde) == ("judged", 54, None)
    assert row.value == pytest.approx(sum(expected.values()) / 54, abs=1e-12)
    assert row.ci_low is not None and row.ci_high is not None
    assert row.ci_low <= row.value <= row.ci_high
    data = audit.to_dict()["runs"][1]["judged"]["doc"]
    assert data["below"] == sorted(q for q, v in expected.items() if v < 0.5)
    assert data["n_below"] == len(data["below"]) and data["warning"].startswith("k6_cs800:")
    # the same depth (3) on both runs: the k=6 run's top 3 is the k=3 run's, no gap note
    assert not [n for n in audit.notes if "judged@" in n]
    quiet = build_audit(runs, n_resamples=20, compare_resamples=20, judged_threshold=0.0)
    assert all(r.judged is not None and r.judged.warnings() == () for r in quiet.runs)


def saved(name: str, docs: list[str], k: int | None = None) -> SavedRun:
    hits = [{"chunk_id": f"{d}#0", "doc_id": d, "rank": i + 1} for i, d in enumerate(docs)]
    row = {"id": "q1", "gold_docs": ["G"], "retrieved": hits}
    return SavedRun.from_dict({"name": name, "config": {"k": k or len(docs)}, "rows": [row]})


def test_gap_at_the_common_depth_by_hand():
    a, b = saved("a", ["G", "X", "Y"]), saved("b", ["X", "Y", "G", "Z"])
    # common depth 3: a has G among 3 documents (1/3), b has G among X, Y, G (1/3): no gap
    assert pair_judged_gap(a, b) is None
    c = saved("c", ["G", "X"])  # depth 2: c 1/2, b 0/2
    text = pair_judged_gap(c, b)
    assert text is not None and "judged@2 (document level) differs by 0.500" in text
    assert "favours c" in text
    assert pair_judged_gap(c, b, margin=0.5) is None  # not more than the margin
    audit = build_audit([c, b], n_resamples=20, compare_resamples=20, allow_different_data=True)
    assert any("favours c" in n for n in audit.notes)


def test_compare_of_saved_runs_warns(demo: Path):
    runs = [str(demo / f"{n}.json") for n in ("k3_cs800", "k6_cs800")]
    result = CliRunner().invoke(main, ["compare", *runs, "-m", "ndcg@k", "--format", "json"])
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)  # warnings go to stderr only
    assert "k6_cs800: judged@6 (document level) is 0.403 on average" in result.stderr
    for quiet in (["-m", "correct"], ["-m", "ndcg@k", "--judged-threshold", "0"]):
        result = CliRunner().invoke(main, ["compare", *runs, *quiet])
        assert result.exit_code == 0 and "judged@" not in result.stderr, result.output
    assert saved_pair_judged(runs[0], {"q1": {"x": 1.0}}) is None  # not a saved run


def test_report_names_the_questions(demo: Path):
    runs = [str(demo / f"{n}.json") for n in ("k3_cs800", "k6_cs800")]
    result = CliRunner().invoke(
        main, ["report", *runs, "--labels", str(demo / "chunk_labels.yaml"), "--format",
               "table", "--out", "-"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "judged@k: labelled share of the top k" in text
    assert "unjudged: k6_cs800: judged@6 (chunk level) is 0.528 on average" in text
    md = CliRunner().invoke(main, ["report", *runs, "--format", "markdown", "--out", "-"])
    assert "k3_cs800: judged@3 (document level) is 0.664 on average" in md.stdout
    quiet = CliRunner().invoke(
        main, ["report", *runs, "--format", "table", "--out", "-", "--judged-threshold", "0"]
    )
    assert "unjudged:" not in quiet.stdout


def test_pair_gap_reuses_coverage_known_at_the_common_depth(monkeypatch):
    """A run's judged@k at its own k, when it is the common depth, is not computed again;
    the warning is the same as computed from scratch (by hand: judged@2 of a is 1/2, of b
    (top 2 of X, Y, G) is 0/2, a gap of 0.5)."""
    from ragaudit.data.saved_run import SavedRun
    from ragaudit.diagnose import unjudged

    def run(name, docs):
        row = {
            "id": "q1",
            "gold_docs": ["G"],
            "retrieved": [
                {"chunk_id": d + "0", "doc_id": d, "rank": i + 1} for i, d in enumerate(docs)
            ],
        }
        return SavedRun.from_dict({"name": name, "config": {"k": len(docs)}, "rows": [row]})

    a, b = run("a", ["G", "X"]), run("b", ["X", "Y", "G"])
    fresh = unjudged.pair_judged_gap(a, b)
    assert fresh is not None and "differs by 0.500 between a (0.500) and b (0.000)" in fresh
    known = unjudged.run_judged(a), unjudged.run_judged(b)  # a at k=2 (the depth), b at k=3
    depths = []
    real = unjudged.run_judged
    monkeypatch.setattr(
        unjudged, "run_judged", lambda saved, *args, k=None, **kw: (
            depths.append((saved.name, k)) or real(saved, *args, k=k, **kw))
    )  # fmt: skip
    assert unjudged.pair_judged_gap(a, b, known=known) == fresh
    assert depths == [("b", 2)]  # only b, whose own k (3) is not the common depth
